// The one-file share of an atlas (topic-atlas share, pipeline/operations/share.py): the map drawn by regl-scatterplot
// with the map component's labels by zoom (../../../scatter/frontend/src/labels.js), search over titles and abstracts,
// filters, a click that shows the paper, a lasso that lists papers with a CSV download. Everything is in the page: the
// header (#atlas-meta, JSON) and deflate-compressed blocks, inline base64 (one file) or data/NAME.bin (--folder),
// inflated with the browser's DecompressionStream. The points' block comes first and is drawn before the text is read.
import createScatterplot from "regl-scatterplot";
import { labelOrder, markCovered, placeLabels } from "../../../scatter/frontend/src/labels.js";

const meta = JSON.parse(document.getElementById("atlas-meta").textContent);
const $ = (id) => document.getElementById(id);
const plot = $("plot");
const canvas = $("canvas");
const marks = $("marks");
const labelLayer = $("labels");
const tooltip = $("tooltip");
const content = $("content");
const LIST_ROWS = 300; // papers written in a list; the CSV holds them all
const number = (value) => value.toLocaleString("en-US");

const atlas = {
  n: meta.papers,
  arrays: null, // {x, y, colour, link, field_<name>}: typed arrays of n
  ids: null,
  titles: null,
  abstracts: null,
  authors: null,
  haystack: null, // lower-cased "title \n abstract" per paper, made at the first search
  match: null, // Uint8Array(n): 1 where the paper passes the filters and the search
  matched: 0,
  filters: {}, // field name -> value code
  query: "",
  selection: [], // the lasso's papers (indices), matching ones only
  chosen: null,
};
// For the browser tests and bench/share_speed.py: timings (ms since navigation) and the state.
const probe = (window.__atlasShare = { atlas, firstDrawMs: null, textsMs: null, draws: 0, busy: false, error: null });

let scatterplot = null;
let width = 0;
let height = 0;
let labelNodes = [];
let shownNodes = []; // the labels of the filtered theme or topic (all of them without such a filter)
let fittedFrame = meta.frame; // the frame the view was last fitted to: zoom 1 for the labels' levels
let laidOut = null;
let lassoing = false;
let lassoEndedAt = -Infinity;
const CLICK_AFTER_LASSO_MS = 400;
let spatialIndex = null;

// ---- data: base64 -> bytes -> inflated bytes -> typed arrays / strings

function base64Bytes(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text.trim());
  const binary = atob(text.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// The script runs before the text blocks are parsed (they follow it in the page, so the map draws while the browser
// reads them): a block not parsed yet is read once the document is.
const parsed = new Promise((resolve) => {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", resolve);
  else resolve();
});

async function inflate(name) {
  const spec = meta.blocks[name];
  if (spec.late) await parsed; // an element still being parsed would give part of its text
  const source = spec.src
    ? (await fetch(spec.src)).body
    : new Blob([base64Bytes(document.getElementById(spec.id).textContent)]).stream();
  const inflated = new Response(source.pipeThrough(new DecompressionStream("deflate")));
  return new Uint8Array(await inflated.arrayBuffer());
}

const TYPES = { float32: Float32Array, uint8: Uint8Array, uint16: Uint16Array };

function arraysOf(bytes) {
  const arrays = {};
  for (const { name, type, offset, length } of meta.layout) {
    arrays[name] = new TYPES[type](bytes.buffer, bytes.byteOffset + offset, length);
  }
  return arrays;
}

const stringsOf = (bytes) => new TextDecoder().decode(bytes).split("\0");

// ---- fields: a paper's value of a field (theme, topic, decision, ...), as text

const fields = meta.fields;
const fieldByName = Object.fromEntries(fields.map((field) => [field.name, field]));

function valueOf(field, index) {
  const code = atlas.arrays[`field_${field.name}`][index];
  return code === meta.missing ? "" : field.values[code];
}

// ---- the map: size, camera, labels

function project(m, x, y) {
  const aspect = width / height;
  const vx = (m[0] * x + m[4] * y + m[12]) / aspect;
  const vy = m[1] * x + m[5] * y + m[13];
  return [(width * (vx + 1)) / 2, height * (0.5 - vy / 2)];
}

const toScreen = (x, y) => project(scatterplot.get("cameraView"), x, y);

function relativeZoom() {
  const f = fittedFrame;
  if (!width || !height) return 1;
  const fitted = Math.min((2 * width) / (height * Math.max(f[2] - f[0], 1e-9)), 2 / Math.max(f[3] - f[1], 1e-9));
  return scatterplot.get("cameraView")[0] / fitted;
}

function fitTo(frame, transition) {
  fittedFrame = frame;
  laidOut = null;
  const [x0, y0, x1, y1] = frame;
  scatterplot.zoomToArea({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 }, { transition });
}

function resize() {
  width = plot.clientWidth;
  height = plot.clientHeight;
  marks.width = width * devicePixelRatio;
  marks.height = height * devicePixelRatio;
  marks.style.width = `${width}px`;
  marks.style.height = `${height}px`;
  if (scatterplot) scatterplot.set({ width, height });
  laidOut = null;
}

function makeLabels() {
  labelNodes = meta.labels.map((label, order) => {
    const el = document.createElement("div");
    el.className = `atlas-label level-${Math.min(label.level, 2)}`;
    el.style.fontSize = `${label.font_px}px`;
    el.style.borderColor = label.colour;
    for (const line of label.lines) {
      const row = document.createElement("div");
      row.textContent = line;
      el.appendChild(row);
    }
    el.title = label.name;
    labelLayer.appendChild(el);
    return { el, ...label, order, at: null };
  });
  for (const node of labelNodes) [node.w, node.h] = [node.el.offsetWidth, node.el.offsetHeight];
  for (const node of labelNodes) node.el.style.display = "none";
  chooseLabels();
}

// The labels a theme or topic filter leaves, as the dashboard's drilled map shows them: a theme's topics (then its
// subtopics by zoom), a topic's subtopics (else its own label); every label without such a filter.
function chooseLabels() {
  const idOf = (name) => (name in atlas.filters ? meta.keys[name][atlas.filters[name]] : null);
  const [theme, topic] = [idOf("theme"), idOf("topic")];
  let nodes = labelNodes;
  if (topic !== null) {
    nodes = labelNodes.filter((node) => node.topic === topic && node.level >= 1);
    if (nodes.some((node) => node.level === 2)) nodes = nodes.filter((node) => node.level === 2);
  } else if (theme !== null) nodes = labelNodes.filter((node) => node.theme === theme && node.level >= 1);
  for (const node of labelNodes) {
    if (node.at && !nodes.includes(node)) node.el.style.display = "none";
    if (!nodes.includes(node)) node.at = null;
  }
  markCovered(nodes, (label) => label.topic);
  shownNodes = nodes;
  laidOut = null;
}

function showLabels() {
  const shown = placeLabels(labelOrder(shownNodes, "zoom", relativeZoom()), toScreen, width, height);
  for (const node of shownNodes) {
    const at = shown.get(node) || null;
    if (at && (!node.at || node.at[0] !== at[0] || node.at[1] !== at[1])) {
      node.el.style.transform = `translate(${at[0]}px, ${at[1]}px)`;
    }
    if (!at !== !node.at) node.el.style.display = at ? "block" : "none";
    node.at = at;
  }
}

function drawMarks() {
  const context = marks.getContext("2d");
  context.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
  context.clearRect(0, 0, width, height);
  if (atlas.chosen === null) return;
  const [sx, sy] = toScreen(atlas.arrays.x[atlas.chosen], atlas.arrays.y[atlas.chosen]);
  for (const [colour, lineWidth] of [["#FFFFFF", 4], ["#D62728", 2.5]]) {
    context.beginPath();
    context.arc(sx, sy, 8, 0, 2 * Math.PI);
    context.strokeStyle = colour;
    context.lineWidth = lineWidth;
    context.stroke();
  }
}

function layoutOverlay() {
  const key = [...scatterplot.get("cameraView"), width, height, atlas.chosen].join(",");
  if (laidOut === key) return;
  laidOut = key;
  showLabels();
  drawMarks();
}

// For the browser tests: the labels shown and the screen position of a paper.
window.__atlasShareLabels = () => labelNodes.filter((node) => node.at).map((node) => ({ name: node.name, level: node.level }));
window.__atlasShareScreen = (index) => {
  const box = plot.getBoundingClientRect();
  const [sx, sy] = toScreen(atlas.arrays.x[index], atlas.arrays.y[index]);
  return [box.x + sx, box.y + sy];
};

function createPlot() {
  resize();
  scatterplot = createScatterplot({
    canvas,
    width,
    height,
    pointSize: meta.point_sizes,
    opacity: meta.opacities,
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
  scatterplot.set({ pointColor: meta.palette });
  scatterplot.subscribe("drawing", layoutOverlay);
  scatterplot.subscribe("draw", () => {
    probe.draws += 1;
    if (probe.firstDrawMs === null) {
      probe.firstDrawMs = performance.now();
      document.body.dataset.drawn = "1";
      $("loading").style.display = "none";
    }
  });
  scatterplot.subscribe("lassoStart", () => (lassoing = true));
  scatterplot.subscribe("lassoEnd", () => (lassoEndedAt = performance.now()));
  scatterplot.subscribe("select", ({ points }) => {
    if (lassoing) {
      lassoing = false;
      setSelection(Array.from(points).filter((index) => atlas.match[index]));
    } else if (points.length === 1 && performance.now() - lassoEndedAt < CLICK_AFTER_LASSO_MS) {
      // a lasso that closed where it began: the browser's click after it is no click on a point
      scatterplot.select(atlas.selection, { preventEvent: true });
    } else if (points.length === 1) openPaper(points[0]);
  });
  scatterplot.subscribe("pointOver", hover);
  scatterplot.subscribe("pointOut", () => (tooltip.style.display = "none"));
  new ResizeObserver(() => {
    resize();
    scatterplot.redraw();
  }).observe(plot);
}

function hover(index) {
  const [sx, sy] = toScreen(atlas.arrays.x[index], atlas.arrays.y[index]);
  tooltip.textContent = atlas.titles ? atlas.titles[index] : "";
  const topic = fieldByName.topic ? valueOf(fieldByName.topic, index) : "";
  if (topic) {
    const line = document.createElement("div");
    line.className = "tooltip-topic";
    line.textContent = topic;
    tooltip.appendChild(line);
  }
  tooltip.style.display = "block";
  tooltip.style.left = `${Math.max(0, Math.min(sx + 10, width - 310))}px`;
  tooltip.style.top = `${Math.max(sy - 30, 0)}px`;
}

// ---- what matches: the filters and the search

function terms() {
  return atlas.query.toLowerCase().split(/\s+/).filter(Boolean);
}

function computeMatch() {
  const { n, arrays } = atlas;
  const active = Object.entries(atlas.filters).map(([name, code]) => [arrays[`field_${name}`], code]);
  const words = atlas.haystack ? terms() : [];
  const match = new Uint8Array(n);
  let matched = 0;
  for (let i = 0; i < n; i += 1) {
    let ok = true;
    for (const [codes, code] of active) if (codes[i] !== code) ok = false;
    if (ok && words.length) for (const word of words) if (!atlas.haystack[i].includes(word)) ok = false;
    match[i] = ok ? 1 : 0;
    matched += match[i];
  }
  atlas.match = match;
  atlas.matched = matched;
}

async function redraw() {
  const { n, arrays, match } = atlas;
  const colours = new Uint8Array(n);
  const emphasis = new Uint8Array(n);
  for (let i = 0; i < n; i += 1) {
    colours[i] = match[i] ? arrays.colour[i] : meta.context_colour;
    emphasis[i] = match[i];
  }
  const options = { zDataType: "categorical", wDataType: "categorical" };
  if (spatialIndex) options.spatialIndex = spatialIndex;
  await scatterplot.draw({ x: arrays.x, y: arrays.y, valueA: colours, valueB: emphasis }, options);
  spatialIndex = scatterplot.get("spatialIndex");
  $("count").textContent = `${number(atlas.matched)} of ${number(n)} papers`;
}

// The frame round the matching papers, for a filter on a theme or topic: as the dashboard frames a drilled theme
// (dashboard/figures/map_layers.py frame_of), their 8th to 92nd percentiles padded by 15% of that span from 50
// papers on (a theme's stray papers would keep the whole map in view), else all of them padded by 10%.
function matchFrame() {
  const xs = [];
  const ys = [];
  for (let i = 0; i < atlas.n; i += 1) {
    if (atlas.match[i]) {
      xs.push(atlas.arrays.x[i]);
      ys.push(atlas.arrays.y[i]);
    }
  }
  if (!xs.length) return meta.frame;
  const cut = (values, q) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
  const q = xs.length >= 50 ? 0.08 : 0;
  const [x0, x1, y0, y1] = [cut(xs, q), cut(xs, 1 - q), cut(ys, q), cut(ys, 1 - q)];
  const pad = (q ? 0.15 : 0.1) * Math.max(x1 - x0, y1 - y0, 0.05);
  return [x0 - pad, y0 - pad, x1 + pad, y1 + pad];
}

// A filter, search or clear: the matches, the points' colours, the frame and the panel. probe.busy is true meanwhile
// (the browser tests wait for it before the next action).
async function update(refit) {
  probe.busy = true;
  try {
    computeMatch();
    chooseLabels();
    atlas.selection = atlas.selection.filter((index) => atlas.match[index]);
    await redraw();
    if (refit) fitTo(refit === "match" ? matchFrame() : meta.frame, false);
    renderPanel();
  } finally {
    probe.busy = false;
  }
}

// ---- the panel: filters, then the paper, a list or the legend

function makeFilters() {
  const box = $("filters");
  for (const field of fields.filter((item) => item.filter)) {
    const label = document.createElement("label");
    label.textContent = field.heading;
    const select = document.createElement("select");
    select.id = `filter-${field.name}`;
    select.dataset.field = field.name;
    select.add(new Option(`All`, ""));
    field.values.forEach((value, code) => select.add(new Option(value, String(code))));
    select.onchange = () => {
      if (select.value === "") delete atlas.filters[field.name];
      else atlas.filters[field.name] = Number(select.value);
      if (field.name === "theme") narrowTopics();
      atlas.chosen = null;
      const zoomed = ["theme", "topic"].includes(field.name) && select.value !== "";
      update(zoomed ? "match" : null);
    };
    label.appendChild(select);
    box.appendChild(label);
  }
  const clear = document.createElement("button");
  clear.className = "clear";
  clear.textContent = "Clear filters and search";
  clear.onclick = () => {
    atlas.filters = {};
    atlas.query = "";
    $("search").value = "";
    for (const select of box.querySelectorAll("select")) select.value = "";
    narrowTopics();
    atlas.selection = [];
    atlas.chosen = null;
    scatterplot.deselect({ preventEvent: true });
    update("all");
  };
  box.appendChild(clear);
}

// The topic filter lists the chosen theme's topics alone; a topic of another theme is let go.
function narrowTopics() {
  const select = $("filter-topic");
  if (!select || !meta.topic_theme.length) return;
  const theme = "theme" in atlas.filters ? atlas.filters.theme : null;
  for (const option of select.options) {
    option.hidden = option.value !== "" && theme !== null && meta.topic_theme[Number(option.value)] !== theme;
  }
  if (select.value !== "" && select.selectedOptions[0].hidden) {
    select.value = "";
    delete atlas.filters.topic;
  }
}

const element = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

function linkOf(index) {
  return atlas.arrays.link[index] && atlas.ids ? meta.link.replace("{}", encodeURIComponent(atlas.ids[index])) : null;
}

function openPaper(index) {
  atlas.chosen = index;
  laidOut = null;
  scatterplot.redraw();
  renderPanel();
}

function setSelection(indices) {
  atlas.selection = indices;
  atlas.chosen = null;
  laidOut = null;
  scatterplot.redraw();
  renderPanel();
}

function renderPaper(index) {
  content.replaceChildren();
  const back = element("button", "", "← Back to the list");
  back.onclick = () => {
    atlas.chosen = null;
    laidOut = null;
    scatterplot.redraw();
    renderPanel();
  };
  content.appendChild(back);
  content.appendChild(element("h3", "paper-title", atlas.titles ? atlas.titles[index] : "…"));
  // where it sits (theme › topic › subtopic), then what it is (decision, collection or venue and year, area)
  const values = (names) =>
    names.filter((name) => fieldByName[name]).map((name) => valueOf(fieldByName[name], index)).filter(Boolean);
  const collection = values(["collection"]);
  const about = values(["decision"]).concat(collection.length ? collection : values(["venue", "year"]).join(" "));
  content.appendChild(element("div", "facts place", values(["theme", "topic", "subtopic"]).join(" › ")));
  content.appendChild(element("div", "facts", about.concat(values(["primary_area"])).filter(Boolean).join(" · ")));
  if (atlas.authors && atlas.authors[index]) content.appendChild(element("div", "authors", atlas.authors[index]));
  const link = linkOf(index);
  if (link) {
    const actions = element("div", "row-actions");
    const anchor = element("a", "paper-link", "Open on OpenReview");
    anchor.href = link;
    anchor.target = "_blank";
    anchor.rel = "noopener";
    actions.appendChild(anchor);
    content.appendChild(actions);
  }
  content.appendChild(element("div", "abstract", atlas.abstracts ? atlas.abstracts[index] : "Loading the abstract…"));
}

function renderList(heading, indices) {
  content.replaceChildren();
  content.appendChild(element("h2", "list-heading", heading));
  const actions = element("div", "row-actions");
  const csv = element("button", "csv", "Download CSV");
  csv.onclick = () => downloadCsv(indices);
  actions.appendChild(csv);
  if (atlas.selection.length) {
    const clear = element("button", "", "Clear selection");
    clear.onclick = () => {
      scatterplot.deselect({ preventEvent: true });
      setSelection([]);
    };
    actions.appendChild(clear);
  }
  content.appendChild(actions);
  const list = element("ol", "papers");
  for (const index of indices.slice(0, LIST_ROWS)) {
    const item = element("li", "", atlas.titles ? atlas.titles[index] || "(no title)" : String(index));
    item.onclick = () => openPaper(index);
    list.appendChild(item);
  }
  content.appendChild(list);
  if (indices.length > LIST_ROWS) content.appendChild(element("p", "note", `The first ${LIST_ROWS}; the CSV holds all ${number(indices.length)}.`));
}

function renderLegend() {
  content.replaceChildren();
  content.appendChild(element("h2", "", meta.legend_title.replace(/:$/, "s")));
  content.appendChild(
    element("p", "note", "Click a point to read it, drag to pan, + / − or the wheel to zoom; Lasso (or Shift and drag) lists papers."),
  );
  for (const entry of meta.legend) {
    const item = element("div", "legend-item");
    const swatch = element("i");
    swatch.style.background = entry.colour;
    item.appendChild(swatch);
    const text = element("span", "", `${entry.name} (${number(entry.count)})`);
    if (entry.subtitle) text.appendChild(element("span", "legend-subtitle", ` ${entry.subtitle}`));
    item.appendChild(text);
    const code = fieldByName.theme ? fieldByName.theme.values.indexOf(entry.name) : -1;
    if (code >= 0) {
      item.onclick = () => {
        $("filter-theme").value = String(code);
        $("filter-theme").onchange();
      };
    }
    content.appendChild(item);
  }
}

// The matching papers; with a search, those whose title holds every word first.
function matchingIndices() {
  const indices = [];
  for (let i = 0; i < atlas.n; i += 1) if (atlas.match[i]) indices.push(i);
  const words = atlas.titles ? terms() : [];
  if (!words.length) return indices;
  const inTitle = (i) => words.every((word) => atlas.titles[i].toLowerCase().includes(word));
  const [first, rest] = [indices.filter(inTitle), indices.filter((i) => !inTitle(i))];
  return first.concat(rest);
}

function renderPanel() {
  if (atlas.chosen !== null) renderPaper(atlas.chosen);
  else if (atlas.selection.length) renderList(`${number(atlas.selection.length)} papers selected`, atlas.selection);
  else if (atlas.matched < atlas.n) renderList(`${number(atlas.matched)} papers match`, matchingIndices());
  else renderLegend();
}

// ---- CSV of a list

const CSV_FIELDS = ["theme", "topic", "subtopic", "decision", "primary_area", "collection", "venue", "year"];

// A cell as RFC 4180 writes it; a text a spreadsheet would run as a formula (=, +, -, @) gets a leading quote, as the
// dashboard's CSV does (dashboard/export/download_bytes.py).
function csvCell(value) {
  let text = String(value ?? "");
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function downloadCsv(indices) {
  const names = CSV_FIELDS.filter((name) => fieldByName[name]);
  const rows = [["doc_id", "title", ...names, "authors", "link", "abstract"].join(",")];
  for (const index of indices) {
    const cells = [atlas.ids[index], atlas.titles[index], ...names.map((name) => valueOf(fieldByName[name], index))];
    cells.push(atlas.authors ? atlas.authors[index] : "", linkOf(index) || "", atlas.abstracts[index]);
    rows.push(cells.map(csvCell).join(","));
  }
  const url = URL.createObjectURL(new Blob([`${rows.join("\r\n")}\r\n`], { type: "text/csv;charset=utf-8" }));
  const anchor = element("a");
  anchor.href = url;
  anchor.download = "atlas-papers.csv";
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// ---- the toolbar and the search box

function zoomBy(factor) {
  scatterplot.get("camera").scale(factor, [0, 0]);
  scatterplot.redraw();
}

function wireControls() {
  $("zoom-in").onclick = () => zoomBy(1.5);
  $("zoom-out").onclick = () => zoomBy(1 / 1.5);
  $("fit").onclick = () => fitTo(meta.frame, false);
  $("lasso").onclick = (event) => {
    const on = scatterplot.get("mouseMode") !== "lasso";
    scatterplot.set({ mouseMode: on ? "lasso" : "panZoom" });
    event.target.classList.toggle("on", on);
  };
  window.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
    if (event.key === "+" || event.key === "=") zoomBy(1.5);
    else if (event.key === "-" || event.key === "_") zoomBy(1 / 1.5);
    else if (event.key === "0") fitTo(meta.frame, false);
    else if (event.key === "Escape" && atlas.selection.length) {
      scatterplot.deselect({ preventEvent: true });
      setSelection([]);
    }
  });
  let pending = null;
  $("search").addEventListener("input", (event) => {
    clearTimeout(pending);
    pending = setTimeout(() => {
      atlas.query = event.target.value.trim();
      atlas.chosen = null;
      update(null);
    }, 200);
  });
}

// ---- start: the points first (drawn), then the titles, then the abstracts and authors

async function start() {
  atlas.arrays = arraysOf(await inflate("points"));
  performance.mark("atlas-points");
  makeLabels();
  performance.mark("atlas-labels");
  makeFilters();
  wireControls();
  performance.mark("atlas-filters");
  createPlot();
  performance.mark("atlas-scatterplot");
  fitTo(meta.frame, false);
  computeMatch();
  performance.mark("atlas-plot");
  await redraw();
  renderPanel();
  const titles = stringsOf(await inflate("titles"));
  atlas.ids = titles.slice(0, atlas.n);
  atlas.titles = titles.slice(atlas.n);
  renderPanel();
  const texts = stringsOf(await inflate("texts"));
  atlas.abstracts = texts.slice(0, atlas.n);
  atlas.authors = texts.slice(atlas.n);
  atlas.haystack = atlas.titles.map((title, i) => `${title}\n${atlas.abstracts[i]}`.toLowerCase());
  const search = $("search");
  search.disabled = false;
  search.placeholder = `Search ${number(atlas.n)} titles and abstracts`;
  probe.textsMs = performance.now();
  document.body.dataset.texts = "1";
  renderPanel();
}

start().catch((error) => {
  probe.error = String(error);
  const fromDisk = location.protocol === "file:" && meta.blocks.points.src;
  $("loading").textContent = fromDisk
    ? "This folder's data files cannot be read from disk: serve the folder over http (python -m http.server), or write one file with topic-atlas share --out atlas.html"
    : `This page could not be drawn: ${error.message || error}`;
  $("loading").style.display = "block";
});
