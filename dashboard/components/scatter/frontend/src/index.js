// The topic map as a Streamlit component: regl-scatterplot (WebGL) draws the points; labels, highlights, the
// legend and the toolbar are HTML around it. The points arrive once per cache (args.points, kept in the parent
// window under args.cache_key, so a remount after a tab switch does not need them again); every other change
// (colours, emphasis, labels, highlights, selection, frame) is a small message. Events go back to Python as
// {kind: "click" | "double_click" | "lasso" | "need_points" | "shown", ...} with a sequence number.
import createScatterplot from "regl-scatterplot";
import { Streamlit } from "streamlit-component-lib/dist/streamlit.js"; // the Streamlit object alone: no React
import { labelOrder, markCovered, placeLabels } from "./labels.js";

let seq = 0;
const emitted = []; // the kinds of the latest events sent, for the browser tests
const emit = (value) => {
  emitted.push(value.kind);
  if (emitted.length > 20) emitted.shift();
  Streamlit.setComponentValue({ ...value, seq: ++seq });
};

const store = (() => {
  try {
    window.parent.__topicAtlasPoints = window.parent.__topicAtlasPoints || {};
    return window.parent.__topicAtlasPoints;
  } catch (error) {
    return {};
  }
})();

// Base64 to a typed array: the browser's own decoder where it has one, else a plain loop (Uint8Array.from with a
// mapping function took 27 ms of a fresh page's first paint for the whole conference's points).
const decode = (text, Type) => {
  let bytes;
  if (typeof Uint8Array.fromBase64 === "function") bytes = Uint8Array.fromBase64(text);
  else {
    const binary = atob(text);
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  }
  return new Type(bytes.buffer);
};

// The points' binary block (map_layers.point_block): uint32 header length, the JSON header {n, topic_texts,
// topic_of, titles}, padding to 4, x and y (float32), topic_of (uint16) and padding to 4, the titles (UTF-8 joined
// by U+001F). Streamlit hands bytes over as a Uint8Array, possibly a view into a larger buffer: copied once here,
// so the typed arrays are aligned and the message's buffer is not kept.
const TITLE_SEPARATOR = "\u001f";
function readPointBlock(bytes) {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const size = new DataView(buffer).getUint32(0, true);
  const utf8 = new TextDecoder("utf-8");
  const header = JSON.parse(utf8.decode(new Uint8Array(buffer, 4, size)));
  const n = header.n;
  let at = 4 + size + ((4 - ((4 + size) % 4)) % 4);
  const x = new Float32Array(buffer, at, n);
  const y = new Float32Array(buffer, at + 4 * n, n);
  at += 8 * n;
  let topicOf = null;
  if (header.topic_of) {
    topicOf = new Uint16Array(buffer, at, n);
    at += 2 * n + ((4 - ((2 * n) % 4)) % 4);
  }
  const titles = header.titles >= 0 ? readTitles(new Uint8Array(buffer, at, header.titles), n) : [];
  return { x, y, titles, topicOf, topicTexts: header.topic_texts || [] };
}

// The titles' block (map_layers.title_block): UTF-8 joined by U+001F. The page sends it after the first draw.
function readTitles(bytes, n) {
  return n ? new TextDecoder("utf-8").decode(bytes).split(TITLE_SEPARATOR) : [];
}

const root = document.getElementById("root");
root.innerHTML = `
  <div class="toolbar" id="toolbar">
    <button id="zoom-in" title="Zoom in (+)">+</button><button id="zoom-out" title="Zoom out (−)">−</button>
    <button id="fit" title="Show the whole view (0 or double-click)">Fit</button>
    <button id="lasso" title="Lasso: drag round papers to list them (or hold Shift and drag)">Lasso</button>
    <span class="hint" id="hint">Wheel scrolls the page; zoom with + / −, the buttons or Ctrl+wheel; drag pans;
      click a point to read it; double-click fits the view.</span>
  </div>
  <div class="plot" id="plot"><canvas id="canvas"></canvas><canvas id="marks"></canvas><div id="labels"></div>
    <div class="tooltip" id="tooltip"></div><div class="empty" id="empty"></div></div>
  <div class="legend" id="legend"></div>`;
const plot = document.getElementById("plot");
const canvas = document.getElementById("canvas");
const marks = document.getElementById("marks");
const labelLayer = document.getElementById("labels");
const tooltip = document.getElementById("tooltip");

let scatterplot = null;
let data = null; // {key, x: Float32Array, y, titles, topicOf: Uint16Array | null, topicTexts}
let view = null; // the latest args without points
let labelNodes = []; // {el, name, level, size, anchor, w, h, covered, at: [x, y] or null when hidden}
let labelMode = "fixed"; // "zoom": the level shown follows the zoom; "fixed": every label sent
let laidOut = null; // what the labels were last laid out for (camera, size, labels): a frame without a change skips it
let drawnView = null; // the camera of the latest frame the scatterplot drew (window.__atlasProject)
let lastFrameKey = null;
let hovered = null; // the point under the mouse (regl-scatterplot's pointOver), else null
let pressedAt = null; // where the latest press on the map was, [clientX, clientY]
let lastClick = null; // the latest click's event: {seq, at (performance.now()), cancelled}
let lastDoubleClick = -Infinity;
let refitTimer = null;
let userMoved = false; // the user zoomed or panned since the view was last fitted: a new size keeps their view
let renders = 0;
let rendersReceived = 0;
let pointDraws = 0;
let framesDrawn = 0; // frames the scatterplot drew (its "draw" events): a pan, a hover, a selection each draw
let lassoing = false;
let lassoInPress = false; // a lasso was drawn during the latest press: its release is no click on a paper (issue 40)
let shown = false; // whether this frame told the page that the map has drawn (the page then sends the papers table)
let width = 0;
let height = 0;

const parentHeight = () => {
  try {
    return window.parent.innerHeight;
  } catch (error) {
    return 900;
  }
};

// As tall as the window allows (the controls above, the legend below), never much taller than wide.
const plotHeight = () => Math.round(Math.max(360, Math.min(820, parentHeight() - 250, plot.clientWidth * 1.05)));

function toScreen(x, y) {
  return project(scatterplot.get("cameraView"), x, y);
}

// A point of the data space ([-1, 1]) in CSS pixels of the plot under camera view matrix m.
function project(m, x, y) {
  const aspect = width / height;
  const vx = (m[0] * x + m[4] * y + m[12]) / aspect;
  const vy = m[1] * x + m[5] * y + m[13];
  return [(width * (vx + 1)) / 2, height * (0.5 - vy / 2)];
}

// The map's tab is hidden (the page keeps the frame while another tab is open): its width is 0.
const hidden = () => plot.clientWidth === 0;

function resize() {
  if (hidden()) return; // keep the size, camera and frame height for when the tab shows again
  const changed = width !== plot.clientWidth || height !== plotHeight();
  width = plot.clientWidth;
  height = plotHeight();
  plot.style.height = `${height}px`;
  marks.width = width * devicePixelRatio;
  marks.height = height * devicePixelRatio;
  marks.style.width = `${width}px`;
  marks.style.height = `${height}px`;
  if (scatterplot) scatterplot.set({ width, height });
  if (scatterplot && changed && data && view && !userMoved) {
    // a new size frames the view again (unless the user has moved it), once the scatterplot has taken the new size
    clearTimeout(refitTimer);
    refitTimer = setTimeout(() => fit(false), 80);
  }
  Streamlit.setFrameHeight(document.body.scrollHeight);
}

function ensurePlot() {
  if (scatterplot) return;
  width = plot.clientWidth;
  height = plotHeight();
  plot.style.height = `${height}px`;
  scatterplot = createScatterplot({
    canvas,
    width,
    height,
    pointSize: [2, 3.5, 7],
    opacity: [0.35, 0.85, 1],
    sizeBy: "valueB",
    opacityBy: "valueB",
    colorBy: "valueA",
    lassoColor: "#333333",
    deselectOnDblClick: false,
    deselectOnEscape: false,
    pointOutlineWidth: 2,
    pointColorActive: "#111111",
    backgroundColor: "#FFFFFF",
  });
  // "drawing" is published in the animation frame that drew the points, before the browser paints it ("view" and
  // "draw" come a task later): labels and marks laid out here move with the points, never a frame behind them.
  scatterplot.subscribe("drawing", () => {
    drawnView = Array.from(scatterplot.get("cameraView"));
    layoutOverlay();
  });
  scatterplot.subscribe("draw", () => {
    framesDrawn += 1;
  });
  scatterplot.subscribe("lassoStart", () => {
    lassoing = true;
    lassoInPress = true;
  });
  scatterplot.subscribe("select", ({ points }) => {
    if (lassoing) {
      lassoing = false;
      emit({ kind: "lasso", indices: Array.from(points) });
    } else if (points.length === 1) {
      // A click the capture below left to the scatterplot (no point was hovered, e.g. a touch): the same as there.
      openPaper(points[0]);
      // The scatterplot keeps the clicked point selected and sends no "select" for a click on a selected point:
      // give it back the page's selection, so that clicking the same point again opens it again.
      setTimeout(showSelection, 0);
    }
  });
  scatterplot.subscribe("pointOver", (index) => {
    hovered = index;
    const [sx, sy] = toScreen(data.x[index], data.y[index]);
    tooltip.textContent = data.titles[index] || "";
    const group = data.topicOf ? data.topicTexts[data.topicOf[index]] : "";
    if (group) {
      const line = document.createElement("div");
      line.className = "tooltip-topic";
      line.textContent = group; // the topic's name and subtitle
      tooltip.appendChild(line);
    }
    tooltip.style.display = "block";
    tooltip.style.left = `${Math.min(sx + 10, width - 320)}px`;
    tooltip.style.top = `${Math.max(sy - 30, 0)}px`;
  });
  scatterplot.subscribe("pointOut", () => {
    hovered = null;
    tooltip.style.display = "none";
  });
  // A click on a hovered point opens its paper at once and stops there: the scatterplot would select the point and
  // draw every point twice (select, then the page's selection given back), 70-80 ms each with software WebGL. A
  // click that moved (a pan), one with Shift (lasso) or in lasso mode, and one on no point go on to the scatterplot.
  canvas.addEventListener(
    "mousedown",
    (event) => {
      pressedAt = [event.clientX, event.clientY];
      lassoInPress = false;
      if (event.detail >= 2) cancelClick();
    },
    { capture: true },
  );
  canvas.addEventListener(
    "mousemove",
    (event) => {
      const dragged = event.buttons === 1 && pressedAt && Math.hypot(event.clientX - pressedAt[0], event.clientY - pressedAt[1]) > 3;
      if (dragged && !event.shiftKey && scatterplot.get("mouseMode") !== "lasso") userMoved = true; // a pan
    },
    { capture: true },
  );
  canvas.addEventListener(
    "click",
    (event) => {
      const moved = pressedAt && Math.hypot(event.clientX - pressedAt[0], event.clientY - pressedAt[1]) > 3;
      // A lasso closed where it started ends in a "click" near the press: the scatterplot would select the point
      // under the pointer, replacing the lasso's selection and opening that paper. The lasso's release is no click.
      if (lassoInPress) {
        lassoInPress = false;
        event.stopPropagation();
        return;
      }
      const lasso = event.shiftKey || scatterplot.get("mouseMode") === "lasso";
      if (hovered === null || moved || lasso) return;
      event.stopPropagation();
      if (event.detail < 2) openPaper(hovered);
    },
    { capture: true },
  );
  canvas.addEventListener("dblclick", () => {
    cancelClick();
    fit(true);
  });
  // For the browser tests: the camera, a point's position on screen (CSS pixels in the plot), the render state and the
  // latest render's arguments.
  window.__atlas = {
    cameraView: () => Array.from(scatterplot.get("cameraView")),
    screen: (index) => toScreen(data.x[index], data.y[index]),
    toScreen: (x, y) => toScreen(x, y), // a place of the data space, as labels' anchors are given
    count: () => data.x.length,
    state: () => ({
      pointsDrawn: scatterplot.get("isPointsDrawn"),
      rendersReceived,
      renders,
      pointDraws,
      framesDrawn,
      lastDoubleClick,
      lastClick,
      emitted: [...emitted],
    }),
    args: () => view,
  };
  window.__atlasLabels = shownLabels;
  window.__atlasProject = (index) => project(drawnView, data.x[index], data.y[index]);
}

// The wheel scrolls the page unless Ctrl (or a pinch, which Chromium reports as Ctrl+wheel) is held: stop the
// event before the camera's listener on the canvas sees it, without preventDefault, so the page scrolls.
window.addEventListener(
  "wheel",
  (event) => {
    if (event.ctrlKey) userMoved = true;
    else event.stopPropagation();
  },
  { capture: true },
);

// The camera changes at once, but regl-scatterplot draws a frame only when asked (its frame loop skips frames
// without its "draw" flag; a wheel or drag sets it, a camera call does not, and refresh() only polls the canvas
// size): without redraw() the points stayed where they were until the next pan, and the labels floated. The labels
// follow in the frame that draws the points ("drawing" above).
function zoomBy(factor) {
  userMoved = true;
  scatterplot.get("camera").scale(factor, [0, 0]);
  scatterplot.redraw();
}

// A click opens its paper at once (no wait for a second click). A double-click fits the view: its second press (the
// browser counts presses in `detail`, by the system's double-click time) tells the page to take back what the first
// click opened ({kind: "double_click", cancels: that click's seq}), so the paper the page showed before comes back
// (its drawer may show for a moment in between).
function openPaper(index) {
  const at = performance.now();
  if (at - lastDoubleClick < 500) return; // the scatterplot's "select" for a double-click's first click, come late
  emit({ kind: "click", index });
  lastClick = { seq, at, cancelled: false };
}

function cancelClick() {
  if (lastClick && !lastClick.cancelled) {
    emit({ kind: "double_click", cancels: lastClick.seq });
    lastClick.cancelled = true;
  }
  lastDoubleClick = performance.now();
}

// The margin a fitted view leaves round its frame, in CSS pixels: the largest point's radius and room beside it, so
// that no point of the frame is cut by the map's edge or sits under its border (issue 40, item 7).
const FIT_MARGIN_PX = 24;

// The render's frame widened by the share of the plot the margins take on each side (zoomToArea fills the plot's
// shorter side at least), as [x0, y0, x1, y1]; null without a frame.
function paddedFrame() {
  const f = view && view.frame;
  if (!f) return null;
  const side = Math.max(Math.min(width, height), 4 * FIT_MARGIN_PX);
  const grow = side / (side - 2 * FIT_MARGIN_PX);
  const [cx, cy] = [(f[0] + f[2]) / 2, (f[1] + f[3]) / 2];
  const [w, h] = [(f[2] - f[0]) * grow, (f[3] - f[1]) * grow];
  return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
}

function fit(transition) {
  const f = paddedFrame();
  if (!f) return;
  userMoved = false;
  scatterplot.zoomToArea({ x: f[0], y: f[1], width: f[2] - f[0], height: f[3] - f[1] }, { transition });
}

document.getElementById("zoom-in").onclick = () => zoomBy(1.5);
document.getElementById("zoom-out").onclick = () => zoomBy(1 / 1.5);
document.getElementById("fit").onclick = () => fit(true);
document.getElementById("lasso").onclick = (event) => {
  const on = scatterplot.get("mouseMode") !== "lasso";
  scatterplot.set({ mouseMode: on ? "lasso" : "panZoom" });
  event.target.classList.toggle("on", on);
};
window.addEventListener("keydown", (event) => {
  if (!scatterplot) return;
  if (event.key === "+" || event.key === "=") zoomBy(1.5);
  else if (event.key === "-" || event.key === "_") zoomBy(1 / 1.5);
  else if (event.key === "0") fit(true);
});

// How far the camera is zoomed in from the fitted view of the render's frame: 1 there, 2 when the frame spans twice
// the plot. Read from the camera alone (no state kept at the fit), so a fit's transition, a resize and a zoom by the
// wheel all count. zoomToArea fits the frame's longer side: its height fills the plot at scale 2 / height (in data
// units), its width at 2 * width / (height * frame width) (toScreen divides x by the plot's aspect).
function relativeZoom() {
  const f = paddedFrame();
  if (!f || !width || !height) return 1;
  const fitted = Math.min((2 * width) / (height * Math.max(f[2] - f[0], 1e-9)), 2 / Math.max(f[3] - f[1], 1e-9));
  return scatterplot.get("cameraView")[0] / fitted;
}

// Shows the labels that placeLabels (labels.js) chose, moving only those whose place changed: the camera moves every
// frame of a pan, and rewriting hundreds of styles each frame would make the browser restyle them all.
function showLabels() {
  const ordered = labelOrder(labelNodes, labelMode, relativeZoom());
  const shown = placeLabels(ordered, toScreen, width, height);
  for (const node of labelNodes) {
    const at = shown.get(node) || null;
    if (at && (!node.at || node.at[0] !== at[0] || node.at[1] !== at[1])) {
      node.el.style.transform = `translate(${at[0]}px, ${at[1]}px)`;
    }
    if (!at !== !node.at) node.el.style.display = at ? "block" : "none";
    node.at = at;
  }
}

// For the browser tests: the labels shown ({name, level, rect} in the frame's CSS pixels, as getBoundingClientRect
// gives them; anchor: where the label's group lies), the zoom over the fitted view, the camera's scale, the label
// mode, the names of the labels that deeper ones replace, the toolbar's, the legend's and the plot's rects.
function shownLabels() {
  const plotBox = plot.getBoundingClientRect();
  const rectOf = (box) => ({ x: box.x, y: box.y, width: box.width, height: box.height });
  return {
    zoom: relativeZoom(),
    cameraScale: scatterplot.get("cameraView")[0],
    mode: labelMode,
    covered: labelNodes.filter((node) => node.covered).map((node) => ({ name: node.name, level: node.level })),
    labels: labelNodes
      .filter((node) => node.at)
      .map((node) => {
        const [sx, sy] = toScreen(node.anchor[0], node.anchor[1]);
        return {
          name: node.name,
          level: node.level,
          rect: { x: plotBox.x + node.at[0], y: plotBox.y + node.at[1], width: node.w, height: node.h },
          anchor: [plotBox.x + sx, plotBox.y + sy],
        };
      }),
    toolbar: rectOf(document.getElementById("toolbar").getBoundingClientRect()),
    legend: rectOf(document.getElementById("legend").getBoundingClientRect()),
    plot: rectOf(plotBox),
  };
}

function drawMarks() {
  const context = marks.getContext("2d");
  context.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
  context.clearRect(0, 0, width, height);
  const marksOf = (view && view.highlights) || {};
  const ring = (index, radius, colour, lineWidth) => {
    const [sx, sy] = toScreen(data.x[index], data.y[index]);
    context.beginPath();
    context.arc(sx, sy, radius, 0, 2 * Math.PI);
    context.strokeStyle = colour;
    context.lineWidth = lineWidth;
    context.stroke();
  };
  for (const index of marksOf.similar || []) ring(index, 6, "#111111", 1.5);
  for (const index of marksOf.search || []) ring(index, 5, "#111111", 2);
  if (marksOf.chosen !== undefined && marksOf.chosen !== null) {
    ring(marksOf.chosen, 8, "#FFFFFF", 4);
    ring(marksOf.chosen, 8, "#D62728", 2.5);
  }
}

// The papers the page has selected (a lasso), as the scatterplot's selection; events are not sent for it.
function showSelection() {
  const selected = (view && view.selected) || [];
  if (selected.length) scatterplot.select(selected, { preventEvent: true });
  else scatterplot.deselect({ preventEvent: true });
}

// Labels and marks for the camera now. A frame drawn for a hover or a selection leaves the camera, the size and the
// labels as they were: then nothing is laid out again.
function layoutOverlay(force = false) {
  if (!scatterplot || !data) return;
  const key = [...scatterplot.get("cameraView"), width, height];
  const same = laidOut && laidOut.nodes === labelNodes && laidOut.view === view;
  if (!force && same && key.every((value, i) => value === laidOut.key[i])) return;
  laidOut = { key, nodes: labelNodes, view };
  showLabels();
  drawMarks();
}

// The topic a label's anchor lies in: the topic (an index of data.topicTexts) of most of the NEAREST papers nearest
// it; null without the points' topics. markCovered (labels.js) reads it to tell which topics have subtopic labels.
// Kept per anchor: a render for a click or a highlight sends the same labels again (a pass over every point each).
const NEAREST = 15;
const anchorTopics = new Map();

function topicAt(label) {
  if (!data || !data.topicOf) return null;
  const key = `${data.key}|${label.anchor[0]}|${label.anchor[1]}`;
  if (!anchorTopics.has(key)) {
    if (anchorTopics.size > 5000) anchorTopics.clear();
    anchorTopics.set(key, nearestTopic(label.anchor[0], label.anchor[1]));
  }
  return anchorTopics.get(key);
}

function nearestTopic(ax, ay) {
  const nearest = []; // [squared distance, point], nearest first
  for (let i = 0; i < data.x.length; i += 1) {
    const d = (data.x[i] - ax) ** 2 + (data.y[i] - ay) ** 2;
    if (nearest.length === NEAREST && d >= nearest[NEAREST - 1][0]) continue;
    if (nearest.length === NEAREST) nearest.pop();
    let at = nearest.length;
    while (at > 0 && nearest[at - 1][0] > d) at -= 1;
    nearest.splice(at, 0, [d, i]);
  }
  const votes = new Map();
  for (const [, i] of nearest) votes.set(data.topicOf[i], (votes.get(data.topicOf[i]) || 0) + 1);
  return [...votes.entries()].reduce((best, entry) => (entry[1] > best[1] ? entry : best), [null, 0])[0];
}

// One element per label sent, measured once here (all appended first, then read, so the browser lays them out once),
// then hidden until showLabels places it on the next camera change or layout.
function renderLabels(labels, mode) {
  labelLayer.innerHTML = "";
  labelMode = mode === "zoom" ? "zoom" : "fixed";
  labelNodes = labels.map((label, order) => {
    const level = Number.isInteger(label.level) ? label.level : 0; // a render without levels: one level, as before
    const el = document.createElement("div");
    el.className = Number.isInteger(label.level) ? `atlas-label level-${Math.min(level, 2)}` : "atlas-label";
    el.style.fontSize = `${label.font_px}px`;
    el.style.borderColor = label.colour;
    for (const line of label.lines) {
      const row = document.createElement("div");
      row.textContent = line;
      el.appendChild(row);
    }
    el.title = label.name;
    labelLayer.appendChild(el);
    const topic = Number.isInteger(label.topic) ? label.topic : null;
    return { el, name: label.name, level, size: Number(label.size) || 0, order, anchor: label.anchor, topic, at: null };
  });
  for (const node of labelNodes) [node.w, node.h] = [node.el.offsetWidth, node.el.offsetHeight];
  for (const node of labelNodes) node.el.style.display = "none";
  // The page names each topic and subtopic label's topic; an older page did not, and the anchor's papers tell it.
  const told = labelNodes.every((node) => node.level === 0 || node.topic !== null);
  markCovered(labelNodes, told ? (node) => node.topic : topicAt);
}

function renderLegend(legend, title) {
  const node = document.getElementById("legend");
  node.innerHTML = "";
  const heading = document.createElement("span");
  heading.className = "legend-title";
  heading.textContent = title;
  node.appendChild(heading);
  for (const entry of legend) {
    const item = document.createElement("span");
    item.className = "legend-item";
    const swatch = document.createElement("i");
    swatch.style.background = entry.colour;
    item.appendChild(swatch);
    item.appendChild(document.createTextNode(`${entry.name} (${entry.count.toLocaleString("en-US")})`));
    if (entry.subtitle) {
      const subtitle = document.createElement("span");
      subtitle.className = "legend-subtitle";
      subtitle.textContent = ` ${entry.subtitle}`;
      item.appendChild(subtitle);
    }
    node.appendChild(item);
  }
}

// What the points' look depends on: a render that changes none of it (labels, highlights, selection, frame) leaves
// the points as drawn, and the browser skips redrawing 11,660 of them (130-400 ms with software WebGL).
const pointStyleOf = (args) =>
  JSON.stringify([args.colours, args.emphasis, args.palette, args.point_sizes, args.opacities]);

async function redraw() {
  const style = pointStyleOf(view);
  if (data.drawnBy === scatterplot && data.drawnStyle === style && scatterplot.get("isPointsDrawn")) return;
  const colours = decode(view.colours, Uint8Array);
  const emphasis = decode(view.emphasis, Uint8Array);
  scatterplot.set({ pointColor: view.palette });
  scatterplot.set({ pointSize: view.point_sizes, opacity: view.opacities });
  // The points never move: after the first draw, reuse its spatial index instead of building it again.
  const options = { zDataType: "categorical", wDataType: "categorical" };
  if (data.spatialIndex && data.drawnBy === scatterplot) options.spatialIndex = data.spatialIndex;
  await scatterplot.draw({ x: data.x, y: data.y, valueA: colours, valueB: emphasis }, options);
  data.spatialIndex = scatterplot.get("spatialIndex");
  data.drawnBy = scatterplot;
  data.drawnStyle = style;
  pointDraws += 1;
}

// A render's points are kept at once; the rest waits for the previous render's draw (regl-scatterplot refuses a
// draw while one is under way: a second render that came during the first's draw was dropped), and of the renders
// that came meanwhile only the latest is drawn. A render with the same arguments as the one drawn last is not drawn
// again: Streamlit sends every fresh page's first render twice (the second once the frame has its width), and
// drawing it again took 170-330 ms of the first paint.
let queuedRender = null;
let rendering = false;
let drawnSignature = null;

const signatureOf = (args) => JSON.stringify({ ...args, points: null, titles: null });

function onRender(args) {
  rendersReceived += 1;
  // The points of one cache key never change (the key holds the cache's identity): kept once, so a render that
  // brings them again (Streamlit's repeated first render) keeps the points as drawn.
  if (args.points && !store[args.cache_key]) {
    store[args.cache_key] = { key: args.cache_key, ...readPointBlock(args.points) };
  }
  if (args.titles && store[args.cache_key]) {
    store[args.cache_key].titles = readTitles(args.titles, store[args.cache_key].x.length);
  }
  // The blocks are read: their buffers need not stay with the render.
  queuedRender = { ...args, points: null, titles: null };
  if (!rendering) drawQueuedRenders();
}

async function drawQueuedRenders() {
  rendering = true;
  // While the tab is hidden the latest render waits (drawing unseen points cost the open tab's main thread).
  while (queuedRender && !hidden()) {
    const args = queuedRender;
    queuedRender = null;
    try {
      const signature = signatureOf(args);
      if (signature === drawnSignature && store[args.cache_key]) continue;
      if (await drawRender(args)) drawnSignature = signature;
    } catch (error) {
      console.error("Topic Atlas map: a render failed", error);
      tellShown(); // the table need not wait for a map that cannot draw
    }
    if (renders) tellShown();
  }
  rendering = false;
}

// Once, after the frame's first draw (or a failed one): the page holds back what waits for the map (the papers
// table below it), so that the browser's work for it does not delay the map's first paint.
function tellShown() {
  if (shown) return;
  shown = true;
  emit({ kind: "shown" });
}

// Draws one render; false when the points are missing (they are asked for again).
async function drawRender(args) {
  data = store[args.cache_key] || null;
  if (!data) {
    emit({ kind: "need_points", cache_key: args.cache_key });
    return false;
  }
  view = args;
  ensurePlot();
  document.getElementById("empty").textContent = args.empty_message || "";
  renderLegend(args.legend, args.legend_title);
  resize();
  // A new frame is set before the points are drawn, so they are drawn once, in place (fitted after the draw, the
  // scatterplot drew every point twice: where they were, then fitted).
  const frameKey = `${args.cache_key}|${args.frame_key}`;
  if (frameKey !== lastFrameKey) {
    lastFrameKey = frameKey;
    fit(false);
  }
  await redraw();
  renderLabels(args.labels, args.label_mode);
  showSelection();
  layoutOverlay(true);
  renders += 1;
  document.body.dataset.drawn = String(renders);
  document.body.dataset.drawnAt = String(Date.now()); // wall-clock ms, for bench/dashboard.py
  return true;
}

new ResizeObserver(() => {
  if (scatterplot) resize();
  if (queuedRender && !rendering && !hidden()) drawQueuedRenders(); // a render that came while the tab was hidden
}).observe(plot);

Streamlit.events.addEventListener(Streamlit.RENDER_EVENT, (event) => onRender(event.detail.args));
Streamlit.setComponentReady();
