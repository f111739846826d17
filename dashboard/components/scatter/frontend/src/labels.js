// Which of the map's labels show and where: pure functions over plain objects (no DOM), used by index.js on every
// frame the camera changes. A label here is {name, level, size, anchor: [x, y] in data space, w, h (CSS px),
// covered}; level 0 is a theme, 1 a topic, 2 a subtopic.

// "zoom" mode: the shallowest level sent shows at the fitted view; the next level takes over from 1.8x the fitted
// scale and the one after from 4x. Chosen by looking at ICLR 2025 (19 themes, 56 topics, 138 subtopics) at 900 to
// 1920 px: at 1.8x a theme's topics are far enough apart for most of their names, at 4x a topic's subtopics are.
export const LEVEL_ZOOMS = [1, 1.8, 4];
// A deeper level's labels may fill the room left by the current level from this factor below its threshold (topics
// from 1.29x, subtopics from 2.86x): never at the fitted view, where the shallowest level alone reads best.
export const EARLY = 1.4;
const PAD = 3; // clear space kept round each label, so two labels never touch
const FILLER_PAD = 12; // round a deeper level's label shown before its zoom
const GAP = 6; // between a label moved off its anchor and the anchor
const MARGIN = 2; // between a label and the plot's edge

// The levels present, shallowest first, and which of them shows at `zoom` (camera scale over the fitted scale):
// {primary, early (or null), fallback (or null)}.
export function levelPlan(levels, zoom) {
  const present = [...new Set(levels)].sort((a, b) => a - b);
  if (!present.length) return { primary: null, early: null, fallback: null };
  let step = 0;
  while (step + 1 < present.length && step + 1 < LEVEL_ZOOMS.length && zoom >= LEVEL_ZOOMS[step + 1]) step += 1;
  const next = step + 1 < present.length && step + 1 < LEVEL_ZOOMS.length ? step + 1 : null;
  return {
    primary: present[step],
    early: next !== null && zoom >= LEVEL_ZOOMS[next] / EARLY ? present[next] : null,
    fallback: step > 0 ? present[step - 1] : null,
  };
}

// Marks each label that the next level's labels replace (label.covered): a theme always (every theme holds topics);
// a topic when some subtopic label belongs to it. The labels carry no parent link, so `topicOf(label)` names the
// topic a label's anchor lies in (index.js: the topic of most of the papers nearest the anchor; a subtopic's anchor is
// the median of its papers, inside its topic). Without it (null) a topic counts as covered when a subtopic is sent.
export function markCovered(labels, topicOf) {
  const levels = new Set(labels.map((label) => label.level));
  const topicsWithSubtopics = new Set(labels.filter((label) => label.level === 2).map(topicOf));
  for (const label of labels) {
    if (label.level === 0) label.covered = levels.has(1);
    else if (label.level === 1) label.covered = levels.has(2) && topicsWithSubtopics.has(topicOf(label));
    else label.covered = false;
  }
}

// The labels to try, in the order they claim room, each with the clear space it keeps round it: in "fixed" mode every
// label as sent (largest first); in "zoom" mode the primary level's, then the shallower labels their children do not
// cover, then the deeper level's when it may come early, with a wider berth (FILLER_PAD: they fill gaps, and
// packed between the primary labels they made those hard to read); each group largest first.
export function labelOrder(labels, mode, zoom) {
  if (mode !== "zoom") return labels.map((label) => ({ label, pad: PAD }));
  const plan = levelPlan(
    labels.map((label) => label.level),
    zoom,
  );
  const largestFirst = (group) => group.sort((a, b) => (b.size || 0) - (a.size || 0) || a.order - b.order);
  const primary = largestFirst(labels.filter((label) => label.level === plan.primary));
  const fallback = largestFirst(labels.filter((label) => label.level === plan.fallback && !label.covered));
  const early = largestFirst(labels.filter((label) => label.level === plan.early));
  return [
    ...[...primary, ...fallback].map((label) => ({ label, pad: PAD })),
    ...early.map((label) => ({ label, pad: FILLER_PAD })),
  ];
}

const overlaps = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

// Where a label of size w x h may go round its anchor (sx, sy), best first: centred on it, then above, below, right,
// left, then the four corners.
function offsets(sx, sy, w, h) {
  return [
    [sx - w / 2, sy - h / 2],
    [sx - w / 2, sy - h - GAP],
    [sx - w / 2, sy + GAP],
    [sx + GAP + 2, sy - h / 2],
    [sx - w - GAP - 2, sy - h / 2],
    [sx + GAP, sy - h - GAP],
    [sx - w - GAP, sy - h - GAP],
    [sx + GAP, sy + GAP],
    [sx - w - GAP, sy + GAP],
  ];
}

// Places the `ordered` labels ([{label, pad}], labelOrder) in a plot of width x height: a label whose anchor is out
// of view is hidden; else it takes the first offset that lies inside the plot and keeps `pad` pixels clear of the
// labels placed before it, else it is hidden until the user zooms in (hovering a point still names it). Returns
// Map(label -> [x, y]) of the labels shown (their top-left corner).
export function placeLabels(ordered, toScreen, width, height) {
  const taken = []; // the boxes of the labels placed, each grown by PAD
  const shown = new Map();
  for (const { label, pad } of ordered) {
    const [sx, sy] = toScreen(label.anchor[0], label.anchor[1]);
    if (!(sx >= 0 && sx <= width && sy >= 0 && sy <= height) || !label.w) continue;
    const grow = pad - PAD; // the placed boxes carry PAD already
    for (const [x, y] of offsets(sx, sy, label.w, label.h)) {
      const inside = x >= MARGIN && y >= MARGIN && x + label.w <= width - MARGIN && y + label.h <= height - MARGIN;
      const box = { x: x - PAD, y: y - PAD, w: label.w + 2 * PAD, h: label.h + 2 * PAD };
      const berth = { x: box.x - grow, y: box.y - grow, w: box.w + 2 * grow, h: box.h + 2 * grow };
      if (inside && !taken.some((other) => overlaps(berth, other))) {
        taken.push(box);
        shown.set(label, [Math.round(x), Math.round(y)]);
        break;
      }
    }
  }
  return shown;
}
