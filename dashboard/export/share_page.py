"""One file to share an atlas (issue 41): the map, search, filters, the papers and a lasso list in one HTML file.

``topic-atlas share --cache C --out atlas.html`` (and ``--folder OUT``; :mod:`topic_atlas.commands.share`),
``Atlas.share`` and the page's Downloads tab write what :func:`share_html` makes: the template and script of
:mod:`dashboard.components.share` (regl-scatterplot with the map component's label rules, all inlined, nothing
fetched) and the atlas's data as deflate-compressed binary blocks, base64 in
``<script type="application/octet-stream">`` elements that the browser inflates with its own
``DecompressionStream``:

- ``points``: x, y (float32, n, the map component's [-1, 1] space), the colour index (uint8, n: the theme colours
  of the dashboard's map), a link flag (uint8, n) and one uint16 code per paper for each field (theme, topic,
  subtopic, decision, primary area, collection, venue, year: those the cache has; 65535 = none). First, so the map
  draws before the text is inflated.
- ``titles``: the doc_ids then the titles, NUL-separated UTF-8 (2n strings).
- ``texts``: the abstracts then the authors, NUL-separated UTF-8 (2n strings).

A small JSON header (``atlas-meta``) holds the palette, legend, labels by level, frame, the fields' value names and
where each array lies in its block. The folder variant (``--folder``: ``index.html`` and ``data/*.bin``, for static
hosting: a browser fetches the blocks over http, not from disk) writes each block as its raw compressed bytes.

The colours, labels and frame are the dashboard's own (:func:`dashboard.figures.map_layers.view_layers` over the
whole map, coloured by theme, labels "by zoom"), which is why this writer lives in the dashboard and not in the
pipeline (issue 39: the pipeline imports neither ``dashboard`` nor ``topic_atlas``). They are imported when a share
is written, so that ``topic-atlas --help``, which imports every command's module, loads no plotting library.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.cache import TopicCache, publish_folder, read_cache, staging_folder
from pipeline.ingest.readable import readable_text, readable_title
from pipeline.runtime.errors import AtlasError, TargetError, refuse_inside

MISSING = 65535  # a field code for "no value"
FIELDS = (  # (column, heading, shown as a filter)
    ("theme", "Theme", True),
    ("topic", "Topic", True),
    ("subtopic", "Subtopic", False),
    ("decision", "Decision", True),
    ("primary_area", "Primary area", True),
    ("collection", "Collection", True),
    ("venue", "Venue", True),
    ("year", "Year", True),
)
DATA_FOLDER = "data"
MARKER = '<meta name="generator" content="topic-atlas share">'  # in every share page, so --folder may replace one
SEPARATOR = "\0"
PLACEHOLDER = re.compile(r"<!--ATLAS-([A-Z]+)-->")  # the template's slots
NEAREST = 15  # papers that vote for the topic a label's anchor lies in


@dataclass(frozen=True)
class ShareResult:
    """What a share wrote: ``path`` (the HTML file, or the folder), ``papers``, ``bytes`` (in all)."""

    path: Path
    papers: int
    bytes: int


@dataclass(frozen=True)
class SharePayload:
    """The header (JSON-ready) and the blocks ({name: deflate-compressed bytes}) of one atlas's share page."""

    meta: dict[str, Any]
    blocks: dict[str, bytes]


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data, 6)  # level 9: 0.3% smaller, 20% slower (ICLR 2025 abstracts)


def _joined(strings: list[str]) -> bytes:
    return SEPARATOR.join(text.replace(SEPARATOR, " ") for text in strings).encode("utf-8")


def _codes(values: pd.Series, order: list[Any]) -> np.ndarray:
    """uint16 (n): each value's position in ``order``, MISSING where it is null or absent."""
    position = {value: index for index, value in enumerate(order)}
    return values.map(position).fillna(MISSING).to_numpy(dtype=np.uint16)


def _field(documents: pd.DataFrame, topics: pd.DataFrame, subtopics: pd.DataFrame, column: str) -> tuple[list, list]:
    """(value names, order of keys) of one field: themes and topics largest first with Outliers last, subtopics by
    id, decisions in the page's order, years ascending, other values by count."""
    from pipeline.ingest.decisions import DECISION_ORDER

    values = documents[column]
    if column in ("theme", "topic"):
        label = "theme_label" if column == "theme" else "label"
        names = dict(zip(topics[column].astype(int), topics[label].astype(str)))
        names[-1] = "Outliers"
        counts = values.astype(int).value_counts()
        keys = sorted(counts.index, key=lambda key: (key < 0, -int(counts[key]), key))
        return [names.get(int(key), f"{column} {key}") for key in keys], [int(key) for key in keys]
    if column == "subtopic":
        keys = sorted(int(key) for key in subtopics["subtopic"]) if len(subtopics) else []
        names = dict(zip(subtopics["subtopic"].astype(int), subtopics["label"].astype(str))) if keys else {}
        return [names[key] for key in keys], keys
    present = values.dropna()
    if column == "decision":
        keys = [key for key in DECISION_ORDER if key in set(present)]
        keys += sorted(set(present.astype(str)) - set(keys))
    elif column == "year":
        keys = sorted(int(key) for key in present.unique())
    else:
        keys = list(present.astype(str).value_counts().index)
    return [str(key) for key in keys], keys


def _points_block(arrays: dict[str, np.ndarray]) -> tuple[bytes, list[dict[str, Any]]]:
    """The arrays end to end, each at a multiple of 4 bytes, and where each lies: [{name, type, offset, length}]."""
    parts, layout, offset = [], [], 0
    for name, array in arrays.items():
        raw = np.ascontiguousarray(array).tobytes()
        layout.append({"name": name, "type": array.dtype.name, "offset": offset, "length": int(array.size)})
        padded = raw + b"\0" * (-len(raw) % 4)
        parts.append(padded)
        offset += len(padded)
    return b"".join(parts), layout


def _map_view(atlas: TopicCache) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """(documents with a theme column, topics with themes, the dashboard map's layers of the whole atlas)."""
    from dashboard.figures import map_layers, topic_map

    topics = topic_map.themed_topics(atlas.topics, atlas.hierarchy)
    documents = topic_map.with_themes(atlas.documents, topics).reset_index(drop=True)
    state = topic_map.MapState(colour_by="theme", level="zoom")
    layers = map_layers.view_layers(
        documents, frozenset(documents["doc_id"].astype(str)), topics, state, subtopics=atlas.subtopics
    )
    return documents, topics, layers


def _labels_with_groups(
    labels: list[dict[str, Any]], x: np.ndarray, y: np.ndarray, topic: np.ndarray, theme: np.ndarray
) -> list[dict[str, Any]]:
    """``labels`` (map_layers.label_rows) each with ``topic`` (the topic id of most of the NEAREST papers nearest
    its anchor: the rule of the map component's index.js ``nearestTopic``, which labels.js ``markCovered`` reads to
    tell which topics have subtopic labels) and ``theme`` (the theme id of those papers' topic), so the page shows
    a filtered theme's or topic's labels alone. ``x``, ``y``: float32 (n) in the labels' space; ``topic``,
    ``theme``: int (n)."""
    nearest = min(NEAREST, len(x))
    out = []
    for label in labels:
        if not nearest:
            out.append({**label, "topic": None, "theme": None})
            continue
        distances = (x - label["anchor"][0]) ** 2 + (y - label["anchor"][1]) ** 2
        closest = np.argpartition(distances, nearest - 1)[:nearest]
        values, counts = np.unique(topic[closest], return_counts=True)
        voted = int(values[np.argmax(counts)])
        out.append({**label, "topic": voted, "theme": int(theme[closest][topic[closest] == voted][0])})
    return out


def _topic_themes(topics: pd.DataFrame, keys: dict[str, list]) -> list[int]:
    """Each topic code's theme code (-1: none), so the page's topic filter lists a chosen theme's topics alone;
    ``keys``: {"theme": theme ids, "topic": topic ids} in code order."""
    if "theme" not in keys or "topic" not in keys:
        return []
    theme_of = dict(zip(topics["topic"].astype(int), topics["theme"].astype(int)))
    code_of = {theme: code for code, theme in enumerate(keys["theme"])}
    return [code_of.get(theme_of.get(topic, -1), -1) for topic in keys["topic"]]


def _title_of(atlas: TopicCache) -> str:
    """The page's heading: the corpus as the dashboard names it ("ICLR 2025"), else the cache folder's name."""
    from dashboard.tables.paper_table import corpus_name

    return corpus_name(atlas.manifest) or Path(atlas.path).name


def share_payload(atlas: TopicCache) -> SharePayload:
    """The share page's header and compressed blocks for ``atlas`` (every document; the surplus copies of duplicate
    abstracts are not listed). See the module's docstring for the blocks' layout."""
    from dashboard.figures.map_model import normalisation
    from dashboard.tables.paper_table import is_openreview_id, links_enabled

    documents, topics, layers = _map_view(atlas)
    count = len(documents)
    colours = np.frombuffer(base64.b64decode(layers["colours"]), dtype=np.uint8)
    x, y = normalisation(documents).apply(documents["x"], documents["y"])
    links = links_enabled(atlas.manifest, documents)
    link = np.asarray([links and is_openreview_id(str(doc_id)) for doc_id in documents["doc_id"]], dtype=np.uint8)
    arrays: dict[str, np.ndarray] = {"x": x, "y": y, "colour": colours, "link": link}
    fields, keys = [], {}
    for column, heading, filtered in FIELDS:
        if column not in documents.columns or documents[column].isna().all():
            continue
        if column == "subtopic" and not len(atlas.subtopics):
            continue
        names, order = _field(documents, topics, atlas.subtopics, column)
        values = documents[column].astype("Int64") if column in ("theme", "topic", "subtopic", "year") else None
        source = values.astype(object) if values is not None else documents[column].astype(object)
        arrays[f"field_{column}"] = _codes(source.where(source.notna(), None), order)
        if column in ("theme", "topic"):
            keys[column] = order
        fields.append({"name": column, "heading": heading, "values": names, "filter": filtered and len(names) > 1})
    points, layout = _points_block(arrays)
    titles = [readable_title(title) or "" for title in documents["title"].fillna("").astype(str)]
    abstracts = [readable_text(text) or "" for text in documents["abstract"].fillna("").astype(str)]
    authors = documents["authors"].fillna("").astype(str).tolist() if "authors" in documents else [""] * count
    meta = {
        "title": _title_of(atlas),
        "papers": count,
        "topics": int((topics["topic"] >= 0).sum()),
        "created_at": atlas.manifest.get("created_at", ""),
        "link": "https://openreview.net/forum?id={}",
        "fields": fields,
        "layout": layout,
        "missing": MISSING,
        "context_colour": len(layers["palette"]) - 1,
        **{key: layers[key] for key in ("palette", "point_sizes", "opacities", "legend", "legend_title")},
        "labels": _labels_with_groups(
            layers["labels"], x, y, documents["topic"].to_numpy(dtype=np.int64), documents["theme"].to_numpy(np.int64)
        ),
        "keys": keys,  # {field: the ids its value codes stand for} of theme and topic (the labels' groups)
        "topic_theme": _topic_themes(topics, keys),
        "frame": layers["frame"],
    }
    blocks = {
        "points": _deflate(points),
        "titles": _deflate(_joined([str(doc_id) for doc_id in documents["doc_id"]] + titles)),
        "texts": _deflate(_joined(abstracts + authors)),
    }
    return SharePayload(meta, blocks)


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element: every "<" escaped, so no "</script" closes it and no "<!--" changes how
    the browser reads the rest."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _page(payload: SharePayload, inline: bool) -> str:
    """The HTML page: the template with the header, the blocks (inline base64, or ``data/NAME.bin`` addresses) and
    the script inlined. Raises AtlasError when the built script is missing."""
    from dashboard.components import share as share_component

    if not share_component.available():
        raise AtlasError(
            f"the share page's script is missing ({share_component.SCRIPT}); "
            "build it with: cd dashboard/components/share/frontend && npm install && npm run build"
        )
    meta = dict(payload.meta)
    meta["blocks"] = {  # the first block precedes the script; "late" ones follow it and are read once parsed
        name: ({"id": f"atlas-{name}", "late": rank > 0} if inline else {"src": f"{DATA_FOLDER}/{name}.bin"})
        for rank, name in enumerate(payload.blocks)
    }
    blocks = [
        f'<script type="application/octet-stream" id="atlas-{name}">{base64.b64encode(block).decode("ascii")}</script>'
        for name, block in payload.blocks.items()
    ]
    first = [f'<script type="application/json" id="atlas-meta">{_script_json(meta)}</script>', *blocks[:1]]
    later = blocks[1:]
    if not inline:
        first, later = first[:1], []
    script = share_component.SCRIPT.read_text(encoding="utf-8").replace("</script", "<\\/script")
    template = share_component.TEMPLATE.read_text(encoding="utf-8")
    parts = {
        "TITLE": html.escape(str(meta["title"])),
        "GENERATOR": MARKER,
        "DATA": "\n".join(first),
        "SCRIPT": f"<script>{script}</script>",
        "TEXT": "\n".join(later),
    }
    return PLACEHOLDER.sub(lambda found: parts[found.group(1)], template)  # one pass: data never read as a slot


def share_html(cache_dir: Path | str) -> bytes:
    """The one-file share page of the atlas in ``cache_dir`` (UTF-8 HTML). Raises CacheError for an unreadable
    cache, AtlasError when the page's built script is missing."""
    return _page(share_payload(read_cache(cache_dir)), inline=True).encode("utf-8")


def _checked_target(target: Path, cache_dir: Path | str) -> None:
    """Refuse, before the cache is read, a share ``target`` (file or folder) that cannot be written: one inside the
    atlas's folder ``cache_dir`` (the next build would refuse a folder holding it), or one whose nearest existing
    parent folder is a file or not writable (a missing parent is created when writing). Raises TargetError."""
    refuse_inside(target, cache_dir, "share")
    parent = target.expanduser().absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise TargetError(f"cannot write {target}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TargetError(f"cannot write {target}: the folder {parent} is not writable")


def _refused(target: Path, error: OSError) -> TargetError:
    """The one-line error for a write to ``target`` that the system refused (no such folder, read-only, disk full)."""
    return TargetError(f"cannot write {target}: {error.strerror or error}")


def _write_atomically(target: Path, data: bytes) -> None:
    """``data`` into a temporary file beside ``target``, then renamed over it: a failed write leaves the old file.
    Raises TargetError naming ``target`` when the system refuses the write (an OSError: no such folder, read-only,
    disk full)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise _refused(target, error) from error
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise _refused(target, error) from error
        raise


def write_share(cache_dir: Path | str, out: Path | str) -> ShareResult:
    """Write :func:`share_html` of ``cache_dir`` to the file ``out`` atomically (a temporary file beside it, then a
    rename): a failed write leaves any previous file. Raises TargetError when ``out`` is a folder, lies inside
    ``cache_dir`` or cannot be written (checked before the cache is read, see _checked_target, and for an OSError
    of the write), CacheError, AtlasError as :func:`share_html`."""
    target = Path(out)
    if target.is_dir():
        raise TargetError(f"{target} is a folder; give a file name such as {target / 'atlas.html'} (or use --folder)")
    _checked_target(target, cache_dir)
    payload = share_payload(read_cache(cache_dir))
    html = _page(payload, inline=True).encode("utf-8")
    _write_atomically(target, html)
    return ShareResult(target, int(payload.meta["papers"]), len(html))


def write_share_folder(cache_dir: Path | str, folder: Path | str) -> ShareResult:
    """Write the share page of ``cache_dir`` as a folder for static hosting: ``index.html`` and ``data/NAME.bin``
    (the compressed blocks), staged beside ``folder`` and swapped in (:func:`pipeline.cache.publish_folder`).
    Raises TargetError when ``folder`` is a file, a non-empty folder that is not a share folder, lies inside
    ``cache_dir`` or cannot be written (see _checked_target)."""
    target = Path(folder)
    if target.exists() and not _replaceable(target):
        raise TargetError(
            f"{target} is not empty and not a share folder (no index.html written by topic-atlas share); "
            "choose a new or empty folder"
        )
    _checked_target(target, cache_dir)
    payload = share_payload(read_cache(cache_dir))
    page = _page(payload, inline=False).encode("utf-8")
    try:
        staging = staging_folder(target)
    except OSError as error:
        raise _refused(target, error) from error
    try:
        staging.chmod(0o755)  # mkdtemp makes it private; a web server reads it
        (staging / "index.html").write_bytes(page)
        (staging / DATA_FOLDER).mkdir()
        for name, block in payload.blocks.items():
            (staging / DATA_FOLDER / f"{name}.bin").write_bytes(block)
        publish_folder(staging, target)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise _refused(target, error) from error
        raise
    total = len(page) + sum(len(block) for block in payload.blocks.values())
    return ShareResult(target, int(payload.meta["papers"]), total)


def _replaceable(target: Path) -> bool:
    """Whether ``target`` may be replaced: an empty folder, or one a share wrote (its index.html bears MARKER)."""
    if not target.is_dir():
        return False
    entries = {entry.name for entry in target.iterdir()}
    if not entries:
        return True
    index = target / "index.html"
    return entries <= {"index.html", DATA_FOLDER} and index.is_file() and MARKER in index.read_text("utf-8")[:4000]
