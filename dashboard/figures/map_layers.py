"""The topic map for the WebGL component: the points once per cache, the view as small layers. Pure.

The component (:mod:`dashboard.components.scatter`) keeps the points in the browser, so a view change sends only
what changed: one colour index and one emphasis byte per point (base64), the palette, the labels, the highlights,
the selection and the frame, a few kilobytes to tens of kilobytes against the megabytes of a plotly figure.

Coordinates are normalised once per cache (:func:`point_payload`): centred and scaled by the larger half-extent so
both axes keep one scale and every point lies in [-1, 1] (regl-scatterplot's data space). Every position below is
a row of the cache's listing (its documents, then the copies; ``dashboard.state.resources.listing``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dashboard.display import OUTLIER_LABEL
from dashboard.figures.label_layout import wrap_name
from dashboard.figures.subtitles import group_subtitles, point_hovers
from dashboard.figures.topic_map import (
    COLOUR_MODES,
    CONTEXT_COLOUR,
    LEVEL_COLUMNS,
    OTHER_YEARS,
    UNKNOWN,
    Highlights,
    MapState,
    colour_groups,
    colours_subtopics,
    drilled_subtopic_groups,
    label_groups,
    label_levels,
    level_keys,
    point_labels,
)
from pipeline.ingest.readable import readable_title

THEME_LINE_CHARS = 22
TOPIC_LINE_CHARS = 24
# A filtered or drilled view frames the matches' 2nd to 98th percentiles padded by FRAME_PAD of that span: the 8th to
# 92nd with 15% left about one match in eight outside the view, clipped at the map's edge (issue 40, item 7).
FRAME_QUANTILES = (0.02, 0.98)
FRAME_PAD = 0.1
# The opacity of context points (emphasis 0: outside the filters, or another year than the highlighted one), with
# topic_map.CONTEXT_COLOUR: visible but recessive (0.3 was all but invisible on white).
CONTEXT_OPACITY = 0.7
EMPHASISED = ("Oral",)  # decision colouring draws these larger and opaque, so the orals stand out


@dataclass(frozen=True)
class Normalisation:
    """data -> [-1, 1]: ``(value - centre) / half``, the same for both axes."""

    centre_x: float
    centre_y: float
    half: float

    def apply(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) in the component's space, float32."""
        return (
            ((np.asarray(x, dtype=float) - self.centre_x) / self.half).astype(np.float32),
            ((np.asarray(y, dtype=float) - self.centre_y) / self.half).astype(np.float32),
        )


def normalisation(listing: pd.DataFrame) -> Normalisation:
    """The cache's :class:`Normalisation` from its x and y columns (a unit one for no rows)."""
    if listing.empty:
        return Normalisation(0.0, 0.0, 1.0)
    x, y = listing["x"].to_numpy(dtype=float), listing["y"].to_numpy(dtype=float)
    half = max(float(np.ptp(x)), float(np.ptp(y)), 1e-9) / 2
    return Normalisation(float((x.max() + x.min()) / 2), float((y.max() + y.min()) / 2), half * 1.02)


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


TITLE_CHARS = 200
TITLE_SEPARATOR = "\x1f"  # between the titles of the points' block (the unit separator; none in a readable title)


def readable_titles(titles: Sequence[object]) -> list[str]:
    """Each title as pipeline.ingest.readable.readable_title shows it ("" for a missing one), cut at TITLE_CHARS
    characters (a plain title costs no reading there)."""
    shown = []
    for title in titles:
        text = title if isinstance(title, str) else "" if title is None or title != title else str(title)
        shown.append((readable_title(text) or "")[:TITLE_CHARS])
    return shown


def _point_parts(
    listing: pd.DataFrame, topics: pd.DataFrame | None, titles: bool = True
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray | None, list[str]]:
    """(x, y float32 in the component's space, readable titles ([] unless ``titles``), topic_of uint16 or None,
    topic_texts)."""
    x, y = normalisation(listing).apply(listing["x"], listing["y"])
    shown: list[str] = []
    if titles:
        shown = readable_titles(listing["title"].to_numpy(dtype=object)) if "title" in listing else [""] * len(x)
    if topics is None:
        return x, y, shown, None, []
    topic_of, texts = point_hovers(listing, topics)
    return x, y, shown, np.asarray(topic_of, dtype=np.uint16), texts


def point_payload(listing: pd.DataFrame, topics: pd.DataFrame | None = None) -> dict[str, Any]:
    """What the browser keeps per cache: {x, y: base64 float32 (n), titles: [str] (n, plain text)}, and with
    ``topics`` the hover's second line: {topic_of: base64 uint16 (n) index into topic_texts, topic_texts: [str]
    (each topic's "name — subtitle"; subtitles.point_hovers)}. The page sends it as one binary block
    (:func:`point_block`)."""
    x, y, titles, topic_of, texts = _point_parts(listing, topics)
    payload: dict[str, Any] = {"x": _b64(x), "y": _b64(y), "titles": titles}
    if topic_of is not None:
        payload |= {"topic_of": _b64(topic_of), "topic_texts": texts}
    return payload


def point_block(listing: pd.DataFrame, topics: pd.DataFrame | None = None, titles: bool = True) -> bytes:
    """:func:`point_payload`'s points as one binary block, the component's ``points`` argument (Streamlit sends
    bytes as they are: no JSON list of 150,000 titles to write, send and parse, no base64). Little-endian:
    uint32 header length, the header (UTF-8 JSON {n, topic_texts, topic_of: bool, titles: bytes of the titles, -1
    without them}), zero bytes to a multiple of 4, x and y (float32, n each), topic_of (uint16, n, when the header
    says so), zero bytes to a multiple of 4, the titles (:func:`title_block`) unless ``titles`` is False (the page
    sends them after the map's first draw: 11.5 of the 12.6 MB at 154,761 papers). :func:`read_point_block` reads
    it."""
    x, y, _, topic_of, texts = _point_parts(listing, topics, titles=False)
    joined = title_block(listing) if titles else b""
    header = json.dumps(
        {"n": len(x), "topic_texts": texts, "topic_of": topic_of is not None, "titles": len(joined) if titles else -1},
        ensure_ascii=False,
    ).encode("utf-8")
    parts = [np.uint32(len(header)).tobytes(), header, _pad(4 + len(header))]
    parts += [x.astype("<f4").tobytes(), y.astype("<f4").tobytes()]
    if topic_of is not None:
        parts += [topic_of.astype("<u2").tobytes(), _pad(2 * len(topic_of))]
    parts.append(joined)
    return b"".join(parts)


def title_block(listing: pd.DataFrame) -> bytes:
    """The points' readable titles (:func:`point_payload`'s), UTF-8, joined by TITLE_SEPARATOR: the component's
    ``titles`` argument, or the end of a :func:`point_block`."""
    titles = readable_titles(listing["title"].to_numpy(dtype=object)) if "title" in listing else [""] * len(listing)
    return TITLE_SEPARATOR.join(title.replace(TITLE_SEPARATOR, " ") for title in titles).encode("utf-8")


def read_titles(block: bytes, n: int) -> list[str]:
    """:func:`title_block` read back (``n`` titles)."""
    return block.decode("utf-8").split(TITLE_SEPARATOR) if n else []


def _pad(length: int) -> bytes:
    return b"\0" * (-length % 4)


def read_point_block(block: bytes) -> dict[str, Any]:
    """:func:`point_block` read back: {x, y (float32), titles [str] (None when left out), topic_of (uint16 or None),
    topic_texts}."""
    size = int(np.frombuffer(block[:4], "<u4")[0])
    header = json.loads(block[4 : 4 + size].decode("utf-8"))
    n, at = int(header["n"]), 4 + size + (-(4 + size) % 4)
    x = np.frombuffer(block, "<f4", n, at)
    y = np.frombuffer(block, "<f4", n, at + 4 * n)
    at += 8 * n
    topic_of = None
    if header["topic_of"]:
        topic_of = np.frombuffer(block, "<u2", n, at)
        at += 2 * n + (-(2 * n) % 4)
    titles = read_titles(block[at : at + int(header["titles"])], n) if header["titles"] >= 0 else None
    return {"x": x, "y": y, "titles": titles, "topic_of": topic_of, "topic_texts": header["topic_texts"]}


def two_lines(name: str, width: int) -> list[str]:
    """``name`` on one line of at most ``width`` characters or two balanced lines, never cut
    (:func:`dashboard.figures.label_layout.wrap_name`)."""
    return wrap_name(name, width)


def frame_of(positions: np.ndarray, x: np.ndarray, y: np.ndarray, tight: bool) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) in the component's space around the points at ``positions``: all of them, or with
    ``tight`` their FRAME_QUANTILES (2nd to 98th percentiles) padded by FRAME_PAD (10%) of that span (a theme's
    stray papers, spread over the map, would otherwise keep the whole map in view; they stay drawn, a zoom-out
    away), else padded by 4%. The map adds a margin of its own in pixels (index.js, FIT_MARGIN_PX)."""
    if not positions.size:
        return -1.0, -1.0, 1.0, 1.0
    px, py = x[positions].astype(float), y[positions].astype(float)
    if tight and positions.size >= 50:
        (x0, x1), (y0, y1) = np.quantile(px, FRAME_QUANTILES), np.quantile(py, FRAME_QUANTILES)
        pad = FRAME_PAD * max(x1 - x0, y1 - y0, 0.05)
        return float(x0 - pad), float(y0 - pad), float(x1 + pad), float(y1 + pad)
    else:
        x0, x1, y0, y1 = px.min(), px.max(), py.min(), py.max()
    span = max(x1 - x0, y1 - y0, 0.05)
    pad_x, pad_y = (max(x1 - x0, span * 0.2)) * 0.04 + 0.01, (max(y1 - y0, span * 0.2)) * 0.04 + 0.01
    return float(x0 - pad_x), float(y0 - pad_y), float(x1 + pad_x), float(y1 + pad_y)


def _sizes(n_points: int) -> tuple[list[float], list[float]]:
    """([context, matching, emphasised] point sizes in pixels, their opacities) for a map of ``n_points``. Above
    60,000 points the points shrink (2 px, 1.6 px above 150,000) so that a map of 154,761-290,000 papers keeps its
    density and its colours' borders readable instead of one overdrawn blob (issue 42)."""
    if n_points <= 2_000:
        base = 5.0
    elif n_points <= 15_000:
        base = 3.5
    elif n_points <= 60_000:
        base = 2.5
    else:
        base = 2.0 if n_points <= 150_000 else 1.6
    return [max(1.2 if n_points > 60_000 else 1.5, base * 0.6), base, base * 2], [CONTEXT_OPACITY, 0.8, 1.0]


def positions_of(doc_ids: np.ndarray, wanted: Sequence[str]) -> dict[str, int]:
    """{doc_id: position in ``doc_ids``} of the ``wanted`` ids found there (the last position of a repeated id): a
    view's few highlights and its selection; no dict of every point when there are none (3.5 ms at 11,660)."""
    if not len(wanted):
        return {}
    found = np.flatnonzero(pd.Series(doc_ids).isin({str(doc_id) for doc_id in wanted}).to_numpy())
    return {str(doc_ids[position]): int(position) for position in found}


def view_layers(
    listing: pd.DataFrame,
    matching_ids: frozenset[str] | set[str] | np.ndarray,
    topics: pd.DataFrame,
    state: MapState,
    areas: Sequence[str] | None = None,
    topic_filter: Sequence[int] = (),
    highlights: Highlights | None = None,
    selected_ids: Sequence[str] | set[str] = (),
    point_groups: tuple[np.ndarray, dict[str, str]] | None = None,
    legend_subtitles: dict[str, str] | None = None,
    subtopics: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The component's arguments for one view, without the points.

    ``point_groups``: topic_map.colour_groups of ``listing`` in this colour mode when the caller keeps it (it depends on
    the listing and the mode alone; 20-30 ms at 11,660 papers), else computed here; it is not modified.
    ``legend_subtitles``: subtitles.group_subtitles of ``topics`` in this colour mode when the caller keeps it (it
    depends on the topics and the mode alone; 27 ms at 57 topics in 19 themes), else computed here.

    ``listing``: every point (doc_id, x, y, topic, theme, subtopic, title, decision, primary_area as present), in
    the order the browser keeps them. ``matching_ids``: the doc_ids that pass the filters and the drilled theme or
    topic (or, as a bool array over ``listing``, which of its rows do: no set of 150,000 ids to make and look up);
    topic; the rest are drawn small and grey beneath as context. ``subtopics``: the cache's subtopics
    (TopicCache.subtopics; None or empty: two levels); a drilled topic's papers are coloured by them when the map is
    coloured by theme or topic (topic_map.colours_subtopics). Labels go only where the matches are
    (:func:`view_labels`).
    Returns {colours, emphasis (base64 uint8, n), palette, point_sizes, opacities, legend [{name, colour, count,
    subtitle}] largest first, legend_title, labels [{name, lines, font_px, anchor, colour, level, size}] by level,
    each level largest first, label_mode ("zoom": the component shows the shallowest level sent at the fitted view
    and deeper ones as the user zooms in; "fixed": every label sent), highlights {chosen, similar, search}
    (positions), selected (positions), frame (x0, y0, x1, y1), frame_key, empty_message}.
    """
    doc_ids = listing["doc_id"].astype(str).to_numpy()
    # A hash lookup per point: np.isin sorts object arrays, 0.3-0.9 s for 11,660 doc_ids on every filter change
    # (bench/load.py found it), pandas' isin takes 2 ms.
    if isinstance(matching_ids, np.ndarray):
        matches = matching_ids.astype(bool, copy=False)
    elif len(matching_ids) < len(doc_ids):
        matches = pd.Series(doc_ids).isin(set(matching_ids)).to_numpy()
    else:
        matches = np.ones(len(doc_ids), bool)
    names, legend = (
        point_groups
        if point_groups is not None
        else colour_groups(listing, topics, state.colour_by, areas, state.highlight)
    )
    if subtopics is not None and colours_subtopics(state, subtopics):  # as the publication figure draws it
        names, legend = drilled_subtopic_groups(listing, matches, (names, legend), state, subtopics)
    order = list(legend)
    index_of = {name: position for position, name in enumerate(order)}
    colours = pd.Series(names, dtype=object).map(index_of).to_numpy(dtype=np.uint8)  # a hash lookup per point
    colours[~matches] = len(order)
    palette = [legend[name] for name in order] + [CONTEXT_COLOUR]
    emphasis = np.where(matches & (names != OTHER_YEARS), 1, 0).astype(np.uint8)  # other years: small, as context
    if state.colour_by == "decision":
        emphasis[matches & np.isin(names, EMPHASISED)] = 2
    counts = pd.Series(names[matches]).value_counts()
    present = sorted(
        (name for name in order if name in counts.index),
        key=lambda name: (name in (OUTLIER_LABEL, UNKNOWN, OTHER_YEARS), -int(counts[name])),
    )  # largest first, the grey group last
    subtitles = group_subtitles(topics, state.colour_by) if legend_subtitles is None else legend_subtitles
    legend_rows = [
        {"name": name, "colour": legend[name], "count": int(counts[name]), "subtitle": subtitles.get(name, "")}
        for name in present
    ]
    norm = normalisation(listing)
    x, y = norm.apply(listing["x"], listing["y"])
    labels = view_labels(listing, matches, x, y, topics, state, subtopics, topics_filtered=bool(topic_filter))
    marks = (highlights or Highlights()).kinds()
    position_of = positions_of(doc_ids, [*marks["similar"], *marks["search"], *marks["chosen"], *selected_ids])
    sizes, opacities = _sizes(len(listing))
    filtered = not bool(matches.all())
    return {
        "colours": _b64(colours),
        "emphasis": _b64(emphasis),
        "palette": palette,
        "point_sizes": sizes,
        "opacities": opacities,
        "legend": legend_rows,
        "legend_title": COLOUR_MODES[state.colour_by] + ":",
        "labels": labels,
        "label_mode": "zoom" if state.level == "zoom" else "fixed",
        "highlights": {
            "similar": [position_of[d] for d in marks["similar"] if d in position_of],
            "search": [position_of[d] for d in marks["search"] if d in position_of],
            "chosen": next((position_of[d] for d in marks["chosen"] if d in position_of), None),
        },
        "selected": sorted(position_of[d] for d in selected_ids if d in position_of),
        "frame": list(frame_of(np.flatnonzero(matches), x, y, tight=filtered)),
        "frame_key": f"{state.theme}|{state.topic}|{int(matches.sum())}|{hash(tuple(doc_ids[matches][:50]))}",
        "empty_message": "" if matches.any() else "No papers match the filters",
    }


def view_labels(
    listing: pd.DataFrame,
    matches: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    topics: pd.DataFrame,
    state: MapState,
    subtopics: pd.DataFrame | None = None,
    topics_filtered: bool = False,
) -> list[dict[str, Any]]:
    """The labels of one view: [{name, lines, font_px, anchor (in the component's space), colour, level (0 theme,
    1 topic, 2 subtopic), size (its matching papers), topic (a topic's id, a subtopic's topic; None for a theme)}],
    shallowest level first, each level largest first.

    ``matches``: bool (n) over ``listing``; ``x``, ``y``: the listing's positions in the component's space (n).
    The levels are topic_map.label_levels': by zoom, every level from the first one (themes on the whole map,
    topics in a drilled theme or when ``topics_filtered``, subtopics in a drilled topic that has them) down to
    subtopics when the cache has them; a fixed level alone otherwise. Each label names its papers among the
    matches and points at their densest cell (topic_map.label_groups)."""
    columns = [LEVEL_COLUMNS[level] for level in label_levels(state, subtopics, topics_filtered)]
    # The columns the labels need, with the coordinates already in the component's space (so label_groups' anchors
    # are the ones sent), not a copy of every column of the matches: 40 ms less per view at 11,660 papers.
    slim = pd.DataFrame({name: level_keys(listing, name) for name in dict.fromkeys(("theme", "topic", *columns))})
    slim["x"], slim["y"] = x.astype(float), y.astype(float)
    labels = []
    for column in columns:
        labelled = slim[matches & (point_labels(slim, topics, state, subtopics, column) != "")]
        groups = label_groups(labelled, topics, state, subtopics=subtopics, column=column)
        width = THEME_LINE_CHARS if column == "theme" else TOPIC_LINE_CHARS
        parents = parent_topics(column, groups.keys, subtopics)
        for name, font, anchor, colour, size, parent in zip(
            groups.names, groups.font_px, groups.anchors, groups.colours, groups.sizes, parents
        ):
            labels.append(
                {
                    "name": name,
                    "lines": two_lines(name, width),
                    "font_px": font,
                    "anchor": list(anchor),
                    "colour": colour,
                    "level": LEVEL_COLUMNS.index(column),
                    "size": size,
                    "topic": parent,
                }
            )
    return labels


def parent_topics(column: str, keys: list[int], subtopics: pd.DataFrame | None) -> list[int | None]:
    """The topic id of each label of ``column`` (keys: its ids): a topic's own, a subtopic's topic, None for a
    theme. The map hides a topic's label when a subtopic label of the same topic replaces it when zoomed in; told the
    topic, it no longer guesses it from the papers round the label's anchor (a subtopic's anchor can lie among
    another topic's papers, whose label then went missing)."""
    if column == "topic":
        return [int(key) for key in keys]
    if column == "subtopic" and subtopics is not None and not subtopics.empty:
        parent = dict(zip(subtopics["subtopic"].astype(int), subtopics["topic"].astype(int)))
        return [parent.get(int(key)) for key in keys]
    return [None] * len(keys)
