"""The topic map for the WebGL component: the points once per cache, the view as small layers. Pure.

The component (:mod:`dashboard.components.scatter`) keeps the points in the browser, so a view change sends only
what changed: one colour index and one emphasis byte per point (base64), the palette, the labels, the highlights,
the selection and the frame, a few kilobytes to tens of kilobytes against the megabytes of a plotly figure.

Coordinates are normalised once per cache (:func:`point_payload`): centred and scaled by the larger half-extent so
both axes keep one scale and every point lies in [-1, 1] (regl-scatterplot's data space). Every position below is
a row of the cache's listing (its documents, then the copies; ``dashboard.state.resources.listing``).

What a view shows (colours, emphasis, legend, labels, frame) is the view's
:class:`dashboard.figures.map_model.MapModel`, the one every renderer of the map draws from; this module encodes it
for the component (:func:`layers_of`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dashboard.figures.label_layout import wrap_name
from dashboard.figures.map_model import MapModel, map_model, normalisation
from dashboard.figures.subtitles import point_hovers
from dashboard.figures.topic_map import COLOUR_MODES, CONTEXT_COLOUR, LEVEL_COLUMNS, Highlights, MapState
from pipeline.ingest.readable import readable_title

THEME_LINE_CHARS = 22
TOPIC_LINE_CHARS = 24
# The opacity of context points (emphasis 0: outside the filters, or another year than the highlighted one), with
# topic_map.CONTEXT_COLOUR: visible but recessive (0.3 was all but invisible on white).
CONTEXT_OPACITY = 0.7


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
    """The component's arguments for one view, without the points: :func:`dashboard.figures.map_model.map_model`
    of the view (its arguments are that function's; ``topic_filter``: the topics the sidebar filters, which start
    the labels at topics) encoded by :func:`layers_of`."""
    model = map_model(
        listing,
        matching_ids,
        topics,
        state,
        areas,
        topics_filtered=bool(topic_filter),
        subtopics=subtopics,
        point_groups=point_groups,
        legend_subtitles=legend_subtitles,
    )
    return layers_of(model, state, highlights, selected_ids)


def layers_of(
    model: MapModel, state: MapState, highlights: Highlights | None = None, selected_ids: Sequence[str] | set[str] = ()
) -> dict[str, Any]:
    """The component's arguments for the view of ``model`` (``state`` its view state): {colours, emphasis (base64
    uint8, n), palette (the model's, then the context's grey), point_sizes, opacities, legend [{name, colour, count,
    subtitle}] largest first, legend_title, labels (:func:`label_rows`), label_mode ("zoom": the component shows the
    shallowest level sent at the fitted view and deeper ones as the user zooms in; "fixed": every label sent),
    highlights {chosen, similar, search} (positions), selected (positions), frame (x0, y0, x1, y1), frame_key,
    empty_message}. ``highlights`` and ``selected_ids``: doc_ids, drawn on top and kept selected."""
    doc_ids, matches = model.doc_ids, model.matches
    marks = (highlights or Highlights()).kinds()
    position_of = positions_of(doc_ids, [*marks["similar"], *marks["search"], *marks["chosen"], *selected_ids])
    sizes, opacities = _sizes(len(doc_ids))
    return {
        "colours": _b64(model.colour_index()),
        "emphasis": _b64(model.emphasis),
        "palette": [*model.palette.values(), CONTEXT_COLOUR],
        "point_sizes": sizes,
        "opacities": opacities,
        "legend": [
            {"name": entry.name, "colour": entry.colour, "count": entry.count, "subtitle": entry.subtitle}
            for entry in model.legend
        ],
        "legend_title": COLOUR_MODES[state.colour_by] + ":",
        "labels": label_rows(model),
        "label_mode": "zoom" if state.level == "zoom" else "fixed",
        "highlights": {
            "similar": [position_of[d] for d in marks["similar"] if d in position_of],
            "search": [position_of[d] for d in marks["search"] if d in position_of],
            "chosen": next((position_of[d] for d in marks["chosen"] if d in position_of), None),
        },
        "selected": sorted(position_of[d] for d in selected_ids if d in position_of),
        "frame": list(model.frame),
        "frame_key": f"{state.theme}|{state.topic}|{int(matches.sum())}|{hash(tuple(doc_ids[matches][:50]))}",
        "empty_message": "" if matches.any() else "No papers match the filters",
    }


def label_rows(model: MapModel) -> list[dict[str, Any]]:
    """The labels of ``model`` as the component reads them: [{name, lines (:func:`two_lines`), font_px, anchor (in
    the component's space), colour, level (0 theme, 1 topic, 2 subtopic), size (its matching papers), topic (a
    topic's id, a subtopic's topic; None for a theme)}], shallowest level first, each level largest first."""
    labels = []
    for level in model.labels:
        groups = level.groups
        width = THEME_LINE_CHARS if level.column == "theme" else TOPIC_LINE_CHARS
        for name, font, anchor, colour, size, parent in zip(
            groups.names, groups.font_px, groups.anchors, groups.colours, groups.sizes, level.parents
        ):
            labels.append(
                {
                    "name": name,
                    "lines": two_lines(name, width),
                    "font_px": font,
                    "anchor": list(anchor),
                    "colour": colour,
                    "level": LEVEL_COLUMNS.index(level.column),
                    "size": size,
                    "topic": parent,
                }
            )
    return labels
