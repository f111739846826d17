"""The cache folder: the one contract between the pipeline and the dashboard.

The pipeline writes a cache with :func:`write_tables` inside :func:`staged_cache` (the one staged write of build, add
and rename: a staging folder beside the target, swapped in atomically on success, removed on failure); the dashboard
reads it with :func:`read_cache`, which refuses a missing, partial, corrupt,
foreign or other-version cache with a :class:`CacheError`. Nothing in a cache is pickled, and this module imports
only the standard library, numpy and pandas, so the dashboard can use it without BERTopic, torch or UMAP.

The files, columns, types and manifest keys are described in docs/cache-format.md; update it with this module.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.runtime.settings import settings

SCHEMA_VERSION = 1
CACHE_KIND = "topic-atlas-cache"

MANIFEST_FILE = "manifest.json"
DOCUMENTS_FILE = "documents.parquet"
TOPICS_FILE = "topics.parquet"
HIERARCHY_FILE = "hierarchy.parquet"
EMBEDDINGS_FILE = "embeddings.npy"
TOPICS_PER_CLASS_FILE = "topics_per_class.parquet"  # optional: only for corpora with a decision column
LINEAGE_FILE = "lineage.parquet"  # optional: only when the atlas was aligned to a previous one or had papers added
COPIES_FILE = "copies.parquet"  # optional: only for corpora with duplicate abstracts
JOURNEYS_FILE = "journeys.parquet"  # optional: atlases of several collections with papers found in two of them
CANDIDATES_FILE = "candidates.parquet"  # optional: candidate new topics found by `add` (pipeline.topics.candidates)
SUBTOPICS_FILE = "subtopics.parquet"  # optional: the third level, parts of the large topics (pipeline.topics.subtopics)
MODEL_DIR = "model"
REPRESENTATION_DIR = "representation"  # how texts become vectors: pipeline.represent.representation (JSON + .npy)

OUTLIER_TOPIC = -1

# Required columns; optional metadata columns (keywords, decision, authors, ...) may follow.
DOCUMENT_COLUMNS = ["doc_id", "title", "abstract", "topic", "probability", "x", "y"]
# Optional: why a document is in the outlier topic ("" for one in a topic; the reasons are pipeline.topics.misfits's),
# and the similarity to its nearest topic centroid that the build's fit check found. Caches built before lack them.
OUTLIER_REASON_COLUMN = "outlier_reason"
FIT_SIMILARITY_COLUMN = "fit_similarity"
# Optional: the paper's subtopic (int64, -1 = none: an outlier, or a topic too small to have subtopics).
SUBTOPIC_COLUMN = "subtopic"
FITS_NO_TOPIC = "fits no topic"  # the build's fit check moved it out of its topic
NO_DENSE_CLUSTER = "no dense cluster"  # HDBSCAN left it out of every cluster; outlier reduction found it no topic
CLUSTER_DISSOLVED = "cluster dissolved"  # its cluster's papers shared no words (pipeline.topics.membership)
ADDED_AMONG_OUTLIERS = "added among outliers"  # placed by add where its nearest papers are outliers
TOPIC_COLUMNS = ["topic", "label", "size", "top_terms", "representative_doc_ids", "x", "y"]
# A copy is an input record whose abstract another document already has (pipeline.ingest.clean): not modelled again, but
# listed with its own id, title and metadata at the kept document (copy_of)'s topic and position.
COPY_COLUMNS = ["doc_id", "copy_of", "title", "abstract", "topic", "topic_label", "probability", "x", "y"]
HIERARCHY_COLUMNS = [
    "parent_id",
    "parent_name",
    "child_left_id",
    "child_left_name",
    "child_right_id",
    "child_right_name",
    "distance",
    "topics",
]
# The same work in two collections (pipeline.journeys.links): the earlier appearance, the later one, their collections,
# the cosine similarity of their vectors, whether the titles are the same, how the pair was found.
JOURNEY_COLUMNS = ["doc_id", "other_id", "collection", "other_collection", "similarity", "same_title", "found_by"]
# Candidate new topics (pipeline.topics.candidates): papers an add placed that fit no topic, grouped. Per candidate
# its id, the add that found it (1-based in manifest["add_history"]), name, subtitle, size, terms ([phrase, score]
# pairs), its papers (most typical first), the most typical few, the nearest existing topic and that similarity, and
# its median map position.
CANDIDATE_COLUMNS = [
    "candidate",
    "batch",
    "label",
    "subtitle",
    "size",
    "top_terms",
    "doc_ids",
    "representative_doc_ids",
    "nearest_topic",
    "nearest_similarity",
    "x",
    "y",
]
# Subtopics (pipeline.topics.subtopics): per subtopic its id (unique in the atlas), its topic, name, subtitle (list of
# phrases), papers and the median map position of its papers.
SUBTOPIC_COLUMNS = ["subtopic", "topic", "label", "subtitle", "size", "x", "y"]
# Per paper of this atlas or of the previous one: its topic id before and after (nullable Int64: <NA> = not in that
# atlas). Both ids are in the same id space (pipeline.topics.align keeps matched topics' ids).
LINEAGE_COLUMNS = ["doc_id", "title", "previous_topic", "topic"]
# Columns that hold topic ids, per table: a renumbering (pipeline.topics.align) must map every one of them. The
# hierarchy's leaf and node ids are renumbered apart (pipeline.topics.align.renumber_hierarchy). Theme ids are not topic
# ids.
TOPIC_ID_COLUMNS = {
    DOCUMENTS_FILE: ["topic"],
    TOPICS_FILE: ["topic"],
    TOPICS_PER_CLASS_FILE: ["topic"],
    LINEAGE_FILE: ["previous_topic", "topic"],
}
MANIFEST_KEYS = [
    "kind",
    "schema_version",
    "created_at",
    "input_path",
    "input_sha256",
    "n_documents",
    "n_topics",
    "outlier_fraction",
    "params",
    "versions",
    "timings_s",
]

REBUILD_HINT = "topic-atlas build --input PATH --cache {cache}"


class CacheError(Exception):
    """A cache folder is missing, partial, corrupt, foreign or of another schema version.

    The message says what is wrong and, through ``rebuild_command``, how to rebuild.
    """

    def __init__(self, cache_dir: Path | str, problem: str):
        self.cache_dir = Path(cache_dir)
        self.problem = problem
        self.rebuild_command = REBUILD_HINT.format(cache=self.cache_dir)
        super().__init__(f"{self.cache_dir}: {problem}. Rebuild it with: {self.rebuild_command}")


@dataclass
class TopicCache:
    """Everything the dashboard reads from one cache folder.

    Attributes
    ----------
    path : folder the cache was read from.
    manifest : the parsed ``manifest.json``.
    documents : one row per document; columns DOCUMENT_COLUMNS plus optional metadata.
    topics : one row per topic; columns TOPIC_COLUMNS (``top_terms`` is a list of ``[term, weight]`` pairs).
    hierarchy : BERTopic's topic merge tree; columns HIERARCHY_COLUMNS (empty with fewer than 2 topics).
    topics_per_class : per (topic, decision class) its document count and c-TF-IDF terms; empty when absent.
    lineage : per paper its topic in the previous atlas and in this one (LINEAGE_COLUMNS); empty when absent.
    copies : surplus copies of documents (COPY_COLUMNS plus their metadata); empty when the corpus had none.
    journeys : papers found again in another collection (JOURNEY_COLUMNS); empty (with its columns) when absent.
    candidates : candidate new topics of the adds since the build (CANDIDATE_COLUMNS; ``top_terms`` [term, score]
        lists, ``doc_ids`` and ``representative_doc_ids`` lists); empty (with its columns) when absent.
    subtopics : the large topics' parts (SUBTOPIC_COLUMNS, ``subtitle`` a list of str); the documents' ``subtopic``
        column says each paper's. Empty (with its columns) for caches built before subtopics.
    """

    path: Path
    manifest: dict[str, Any]
    documents: pd.DataFrame
    topics: pd.DataFrame
    hierarchy: pd.DataFrame = field(default_factory=pd.DataFrame)
    topics_per_class: pd.DataFrame = field(default_factory=pd.DataFrame)
    lineage: pd.DataFrame = field(default_factory=pd.DataFrame)
    copies: pd.DataFrame = field(default_factory=pd.DataFrame)
    journeys: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=JOURNEY_COLUMNS))
    candidates: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=CANDIDATE_COLUMNS))
    subtopics: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SUBTOPIC_COLUMNS))
    identity: tuple[int, int, int] | None = None  # the manifest's identity when the tables were read

    def embeddings(self) -> np.ndarray:
        """Load the document embeddings, float32, n_documents x dim, rows aligned with ``documents``.

        Raises CacheError when the file is missing or its row count does not match, and CacheReplaced when a writer
        published another version of the cache since the tables were read (the file may be the other version's).
        """
        path = self.path / EMBEDDINGS_FILE
        try:
            matrix = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            self._check_not_replaced()
            raise CacheError(self.path, f"cannot read {EMBEDDINGS_FILE} ({error})") from error
        self._check_not_replaced()
        if matrix.shape[0] != len(self.documents):
            raise CacheError(
                self.path, f"{EMBEDDINGS_FILE} has {matrix.shape[0]} rows, documents have {len(self.documents)}"
            )
        return matrix

    def _check_not_replaced(self) -> None:
        if self.identity is not None and manifest_identity(self.path) != self.identity:
            raise CacheReplaced(
                self.path,
                "was replaced by a newer version while it was read (a build, add or rename published one); "
                "reload the page to read the new version",
            )


class CacheReplaced(CacheError):
    """The cache folder was published anew after its tables were read: what is read now belongs to another version."""

    def __init__(self, cache_dir: Path | str, problem: str):
        super().__init__(cache_dir, problem)
        self.args = (f"{self.cache_dir}: {problem}",)  # the message without the rebuild hint: nothing to rebuild


def is_cache_dir(path: Path | str) -> bool:
    """True when ``path`` holds a full manifest written by this project: a JSON object of our ``kind``, this
    ``schema_version`` and every key of MANIFEST_KEYS (what :func:`write_tables` writes). A manifest that only says
    ``"kind": "topic-atlas-cache"`` does not make a folder a cache (red team, issue 40, finding 15)."""
    manifest_path = Path(path) / MANIFEST_FILE
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and manifest.get("kind") == CACHE_KIND
        and manifest.get("schema_version") == SCHEMA_VERSION
        and all(key in manifest for key in MANIFEST_KEYS)
    )


# What a cache folder may hold: the files every writer writes (write_tables, the model, the representation) and
# metrics.json (``topic-atlas evaluate``); docs/cache-format.md lists them. Inside model/ and representation/, the
# files BERTopic's safetensors save and pipeline.represent.representation write. Anything else is a user's.
METRICS_FILE = "metrics.json"
EDITS_FILE = "edits.jsonl"  # the edit log of pipeline.operations.edit_log
EDITS_DIR = "edits"  # the files edits replaced, kept for undo: <edit id>-<cache file name>
CACHE_FILES = frozenset(
    {
        MANIFEST_FILE,
        DOCUMENTS_FILE,
        TOPICS_FILE,
        HIERARCHY_FILE,
        EMBEDDINGS_FILE,
        TOPICS_PER_CLASS_FILE,
        LINEAGE_FILE,
        COPIES_FILE,
        JOURNEYS_FILE,
        CANDIDATES_FILE,
        SUBTOPICS_FILE,
        METRICS_FILE,
        EDITS_FILE,
    }
)
CACHE_FOLDERS = {
    MODEL_DIR: frozenset(
        {"config.json", "topics.json", "topic_embeddings.safetensors", "ctfidf.safetensors", "ctfidf_config.json"}
    ),
    REPRESENTATION_DIR: frozenset(
        {"representation.json", "lexical_vocabulary.json", "lexical_idf.npy", "lexical_components.npy"}
    ),
}


def unknown_entries(path: Path | str) -> list[str]:
    """The entries of the folder ``path`` that no cache writer makes (relative paths, sorted; a folder with a
    trailing "/"): a user's files, which replacing the folder would delete. Symbolic links count as unknown."""
    folder = Path(path)
    unknown = []
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            unknown.append(entry.name)
        elif entry.is_dir() and entry.name == EDITS_DIR:
            for inner in sorted(entry.iterdir()):
                name = inner.name.partition("-")[2]
                if inner.is_symlink() or not inner.is_file() or not inner.name.partition("-")[0].isdigit():
                    unknown.append(f"{entry.name}/{inner.name}" + ("/" if inner.is_dir() else ""))
                elif name not in CACHE_FILES:
                    unknown.append(f"{entry.name}/{inner.name}")
        elif entry.is_dir() and entry.name in CACHE_FOLDERS:
            allowed = CACHE_FOLDERS[entry.name]
            for inner in sorted(entry.iterdir()):
                if inner.is_symlink() or not inner.is_file() or inner.name not in allowed:
                    unknown.append(f"{entry.name}/{inner.name}" + ("/" if inner.is_dir() else ""))
        elif entry.is_dir() or entry.name not in CACHE_FILES:
            unknown.append(entry.name + ("/" if entry.is_dir() else ""))
    return unknown


def read_manifest(cache_dir: Path | str) -> dict[str, Any]:
    """Read and check ``manifest.json``.

    Raises CacheError when the folder or manifest is missing, the JSON is corrupt, the folder is not a
    Topic Atlas cache, or its ``schema_version`` differs from SCHEMA_VERSION.
    """
    cache_dir = Path(cache_dir)
    if not cache_dir.is_dir():
        raise CacheError(cache_dir, "no cache folder here")
    manifest_path = cache_dir / MANIFEST_FILE
    if not manifest_path.is_file():
        raise CacheError(cache_dir, f"{MANIFEST_FILE} is missing (not a cache, or a partial one)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise CacheError(cache_dir, f"{MANIFEST_FILE} is corrupt ({error})") from error
    if not isinstance(manifest, dict) or manifest.get("kind") != CACHE_KIND:
        raise CacheError(cache_dir, f"{MANIFEST_FILE} was not written by Topic Atlas")
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise CacheError(cache_dir, f"cache schema version {version} is not the supported version {SCHEMA_VERSION}")
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        raise CacheError(cache_dir, f"{MANIFEST_FILE} lacks {', '.join(missing)}")
    for key, (kinds, what) in MANIFEST_TYPES.items():
        value = manifest[key]
        negative = isinstance(value, int) and value < 0 and what.startswith("a count")
        if not isinstance(value, kinds) or isinstance(value, bool) or negative:
            raise CacheError(cache_dir, f"{MANIFEST_FILE}'s {key} is {_shown_value(value)}, not {what}")
    return manifest


# The types of the manifest's required values the page and the commands compute with: a tampered manifest
# ("n_topics": "abc") gave a redacted exception deep in the page instead of the cache-error page (issue 40, item 16).
MANIFEST_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "n_documents": (int, "a count (a whole number of 0 or more)"),
    "n_topics": (int, "a count (a whole number of 0 or more)"),
    "outlier_fraction": ((int, float), "a number"),
    "params": (dict, "an object"),
    "versions": (dict, "an object"),
    "timings_s": (dict, "an object"),
}
# The columns whose type the page computes with, per table: "integer" (topic ids, sizes) or "number" (positions).
COLUMN_TYPES: dict[str, dict[str, str]] = {
    DOCUMENTS_FILE: {"topic": "integer", "x": "number", "y": "number"},
    TOPICS_FILE: {"topic": "integer", "size": "integer", "x": "number", "y": "number"},
    COPIES_FILE: {"topic": "integer", "x": "number", "y": "number"},
    SUBTOPICS_FILE: {"subtopic": "integer", "topic": "integer", "size": "integer", "x": "number", "y": "number"},
}


def _shown_value(value: Any) -> str:
    """A manifest value in a message: its JSON, cut to 40 characters."""
    shown = json.dumps(value, default=str)
    return shown if len(shown) <= 40 else shown[:39] + "…"


def _check_column_types(cache_dir: Path, name: str, table: pd.DataFrame) -> None:
    """Raise CacheError naming the table and column whose values are not of COLUMN_TYPES' type (a string ``topic``
    column, say). An empty table passes (its columns may have no type)."""
    if table.empty:
        return
    for column, kind in COLUMN_TYPES.get(name, {}).items():
        if column not in table.columns:
            continue
        dtype = table[column].dtype
        is_number = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        if not is_number or (kind == "integer" and not pd.api.types.is_integer_dtype(dtype)):
            raise CacheError(cache_dir, f"{name}'s column {column} holds {dtype} values, not {kind}s")


_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _check_embeddings_header(cache_dir: Path, n_documents: int) -> None:
    """Check ``embeddings.npy``'s header (dtype and shape, without reading the matrix): floating point, two
    dimensions, one row per document. Raises CacheError otherwise (an object array, a tampered file); a cache without
    the file passes (the search says it is missing when it needs it)."""
    path = cache_dir / EMBEDDINGS_FILE
    if not path.is_file():
        return
    try:
        with path.open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version not in _HEADER_READERS:  # a later format: np.load (allow_pickle=False) checks it when read
                return
            shape, _, dtype = _HEADER_READERS[version](handle)
    except (OSError, ValueError, SyntaxError) as error:
        raise CacheError(cache_dir, f"{EMBEDDINGS_FILE} is corrupt ({error})") from error
    if dtype.kind != "f" or len(shape) != 2 or shape[0] != n_documents:
        raise CacheError(
            cache_dir,
            f"{EMBEDDINGS_FILE} holds a {dtype} array of shape {shape}, not {n_documents} rows of floating-point "
            "numbers",
        )


def _read_table(cache_dir: Path, name: str, required: list[str]) -> pd.DataFrame:
    path = cache_dir / name
    if not path.is_file():
        raise CacheError(cache_dir, f"{name} is missing")
    try:
        table = pd.read_parquet(path)
    except Exception as error:  # pyarrow raises several types for damaged files
        raise CacheError(cache_dir, f"{name} is corrupt ({type(error).__name__}: {error})") from error
    missing = [column for column in required if column not in table.columns]
    if missing:
        raise CacheError(cache_dir, f"{name} lacks columns {', '.join(missing)}")
    _check_column_types(cache_dir, name, table)
    return table


def read_cache(cache_dir: Path | str) -> TopicCache:
    """Read a cache folder written by :func:`write_tables` (inside :func:`staged_cache`).

    Returns a TopicCache whose ``documents`` and ``topics`` tables have at least DOCUMENT_COLUMNS and
    TOPIC_COLUMNS, and whose ``top_terms`` and ``representative_doc_ids`` cells are Python lists.

    A writer may swap the folder while it is read (pipeline.cache.publish_folder): when the manifest's identity
    (:func:`manifest_identity`) changed during the read, the read starts again (for up to REREAD_S seconds), so the
    tables returned always come from one version of the cache.

    Raises CacheError (with the rebuild command) for a missing, partial, corrupt, foreign or other-version cache.
    """
    cache_dir = Path(cache_dir)
    deadline = time.monotonic() + REREAD_S
    while True:
        before = manifest_identity(cache_dir)
        try:
            atlas = _read_cache_once(cache_dir)
        except CacheError:
            if manifest_identity(cache_dir) == before or time.monotonic() > deadline:
                raise
            continue  # replaced while it was read: read the new one
        if manifest_identity(cache_dir) == before or time.monotonic() > deadline:
            atlas.identity = before
            return atlas


REREAD_S = 10.0  # how long read_cache keeps re-reading a cache that writers replace under it


def manifest_identity(cache_dir: Path | str) -> tuple[int, int, int] | None:
    """(inode, size, mtime in ns) of the cache's manifest, or None when absent: every write (build, add, rename)
    publishes a new manifest file, so a replaced cache has a new identity even within one clock tick."""
    try:
        status = (Path(cache_dir) / MANIFEST_FILE).stat()
    except OSError:
        return None
    return status.st_ino, status.st_size, status.st_mtime_ns


def _read_cache_once(cache_dir: Path) -> TopicCache:
    manifest = read_manifest(cache_dir)
    documents = _read_table(cache_dir, DOCUMENTS_FILE, DOCUMENT_COLUMNS)
    topics = _read_table(cache_dir, TOPICS_FILE, TOPIC_COLUMNS)
    hierarchy_path = cache_dir / HIERARCHY_FILE
    hierarchy = (
        _read_table(cache_dir, HIERARCHY_FILE, HIERARCHY_COLUMNS)
        if hierarchy_path.exists()
        else pd.DataFrame(columns=HIERARCHY_COLUMNS)
    )
    per_class_path = cache_dir / TOPICS_PER_CLASS_FILE
    topics_per_class = (
        _read_table(cache_dir, TOPICS_PER_CLASS_FILE, ["topic", "class"]) if per_class_path.exists() else pd.DataFrame()
    )
    lineage_path = cache_dir / LINEAGE_FILE
    lineage = (
        _read_table(cache_dir, LINEAGE_FILE, LINEAGE_COLUMNS)
        if lineage_path.exists()
        else pd.DataFrame(columns=LINEAGE_COLUMNS)
    )
    copies = (
        _read_table(cache_dir, COPIES_FILE, COPY_COLUMNS)
        if (cache_dir / COPIES_FILE).exists()
        else pd.DataFrame(columns=COPY_COLUMNS)
    )
    journeys = (
        _read_table(cache_dir, JOURNEYS_FILE, JOURNEY_COLUMNS)
        if (cache_dir / JOURNEYS_FILE).exists()
        else pd.DataFrame(columns=JOURNEY_COLUMNS)
    )
    candidates = (
        _read_candidates(cache_dir)
        if (cache_dir / CANDIDATES_FILE).exists()
        else pd.DataFrame(columns=CANDIDATE_COLUMNS)
    )
    subtopics = (
        _read_table(cache_dir, SUBTOPICS_FILE, SUBTOPIC_COLUMNS)
        if (cache_dir / SUBTOPICS_FILE).exists()
        else pd.DataFrame(columns=SUBTOPIC_COLUMNS)
    )
    if len(subtopics):
        subtopics["subtitle"] = subtopics["subtitle"].map(lambda terms: [str(term) for term in terms])
    if len(documents) != manifest["n_documents"]:
        raise CacheError(
            cache_dir, f"{DOCUMENTS_FILE} has {len(documents)} rows but the manifest says {manifest['n_documents']}"
        )
    _check_embeddings_header(cache_dir, len(documents))
    topics = topics.copy()
    labels = display_labels(topics)
    topics["label"] = [labels[int(topic)] for topic in topics["topic"]]
    if "topic_label" in documents.columns:
        documents["topic_label"] = [labels.get(int(topic), f"Topic {int(topic)}") for topic in documents["topic"]]
    topics["top_terms"] = topics["top_terms"].map(
        lambda pairs: [[str(pair["term"]), float(pair["weight"])] for pair in pairs]
    )
    topics["representative_doc_ids"] = topics["representative_doc_ids"].map(list)
    if len(copies):
        copies["topic_label"] = [labels.get(int(topic), f"Topic {int(topic)}") for topic in copies["topic"]]
    return TopicCache(
        path=cache_dir,
        manifest=manifest,
        documents=documents,
        topics=topics,
        hierarchy=hierarchy,
        topics_per_class=topics_per_class,
        lineage=lineage,
        copies=copies,
        journeys=journeys,
        candidates=candidates,
        subtopics=subtopics,
    )


def _read_candidates(cache_dir: Path) -> pd.DataFrame:
    """candidates.parquet with its list cells as Python lists (``top_terms`` as [term, score] pairs)."""
    table = _read_table(cache_dir, CANDIDATES_FILE, CANDIDATE_COLUMNS)
    table["top_terms"] = table["top_terms"].map(
        lambda pairs: [[str(pair["term"]), float(pair["weight"])] for pair in pairs]
    )
    for column in ("doc_ids", "representative_doc_ids"):
        table[column] = table[column].map(lambda ids: [str(doc_id) for doc_id in ids])
    return table


def _term_structs(pairs_per_row: Any) -> list[list[dict[str, Any]]]:
    """[term, weight] pairs as Parquet structs (a Parquet list holds one type); read back as pairs."""
    return [[{"term": str(term), "weight": float(weight)} for term, weight in pairs] for pairs in pairs_per_row]


OUTLIER_LABEL = "Outliers"


def _is_blank_label(label: Any) -> bool:
    if label is None or (isinstance(label, float) and label != label):
        return True
    text = " ".join(str(label).split())
    return not text or text.lower() in ("nan", "none", "null") or not any(character.isalnum() for character in text)


def display_labels(topics: pd.DataFrame) -> dict[int, str]:
    """{topic id: label as every view shows it}: non-empty, whitespace collapsed, unique ignoring case and spacing.

    The outlier topic -1 is "Outliers"; an empty, missing, 'nan' or punctuation-only label becomes "Topic N"; a
    label that another topic (of lower id) already shows gets " (topic N)". ``topics`` needs columns topic, label.
    :func:`read_cache` applies it to the topics and documents it returns, so the picker, the map, the hover, the
    tables and the CSV all show the same text.
    """
    labels: dict[int, str] = {}
    seen: set[str] = {OUTLIER_LABEL.casefold()}
    for topic, label in sorted(zip(topics["topic"].astype(int), topics["label"]), key=lambda pair: pair[0]):
        if topic == OUTLIER_TOPIC:
            labels[topic] = OUTLIER_LABEL
            continue
        text = f"Topic {topic}" if _is_blank_label(label) else " ".join(str(label).split())
        if text.casefold() in seen:
            text = f"{text} (topic {topic})"
        seen.add(text.casefold())
        labels[topic] = text
    return labels


def _swap_folders(source: Path, target: Path) -> None:
    """Atomically exchange two existing folders (Linux ``renameat2(RENAME_EXCHANGE)``); OSError where unsupported."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        raise OSError("renameat2 is not available")
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(source), at_fdcwd, os.fsencode(target), rename_exchange) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def publish_folder(staging: Path, target: Path) -> None:
    """Move a fully written ``staging`` folder to ``target``, replacing any previous one atomically.

    On Linux the swap is one ``renameat2`` call, so ``target`` always holds either the old or the new
    cache. Elsewhere the old folder is renamed aside first (a window of two renames).
    """
    if not target.exists():
        os.replace(staging, target)
        return
    try:
        _swap_folders(staging, target)
        shutil.rmtree(staging)  # staging now holds the old cache
    except OSError:
        retired = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, retired)
        os.replace(staging, target)
        shutil.rmtree(retired, ignore_errors=True)


def staging_folder(target: Path) -> Path:
    """Create an empty temporary folder beside ``target`` (same file system, so the final rename is atomic)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))


@contextmanager
def staged_cache(target: Path) -> Iterator[Path]:
    """Write a new version of the cache folder ``target`` in one atomic step: the one way build, add and rename write.

    Yields an empty staging folder beside ``target`` (:func:`staging_folder`, named ``.<target>.building-*``) for
    the block to fill (:func:`write_tables`, the model, :func:`carry_over`). When the block ends normally the
    staging folder replaces ``target`` (:func:`publish_folder`: one ``renameat2`` exchange on Linux), so readers
    see the old cache or the new one, never a mix. When the block or the publishing raises (any exception,
    KeyboardInterrupt included) the staging folder is removed, ``target`` is left as it was, and the exception
    propagates unchanged.

    Usage::

        with staged_cache(cache_dir) as staging:
            write_tables(staging, manifest, documents, topics, hierarchy, embeddings)
    """
    with writer_lock(target):
        remove_leftovers(target)
        staging = staging_folder(target)
        try:
            yield staging
            publish_folder(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


class CacheBusyError(Exception):
    """Another writer (a process, or another thread of this one) holds the writer lock of a cache folder for longer
    than the wait allowed."""


def lock_wait_s() -> float:
    """Seconds a writer waits for another one's lock by default: $ATLAS_LOCK_WAIT_S, else 30
    (pipeline.runtime.settings), read when asked."""
    return settings().lock_wait_s


def __getattr__(name: str) -> float:
    """``LOCK_WAIT_S``, the name callers used before :func:`lock_wait_s`: read when asked, not at import."""
    if name == "LOCK_WAIT_S":
        return lock_wait_s()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def lock_path(target: Path) -> Path:
    """The writer lock file of cache folder ``target``: ``.<name>.lock`` beside it (the folder itself is swapped)."""
    target = Path(target).expanduser().resolve()
    return target.parent / f".{target.name}.lock"


def _note_holder(fd: int) -> None:
    """Write who holds the lock into the lock file (``pid N (command)``), for a waiting writer's message."""
    os.ftruncate(fd, 0)
    os.write(fd, f"pid {os.getpid()} ({' '.join(sys.argv[:3])})".encode(errors="replace"))


def _busy(path: Path, waited_s: float) -> CacheBusyError:
    """The error for a writer that waited ``waited_s`` seconds for the lock file ``path``, naming its holder."""
    try:
        holder = path.read_text(encoding="utf-8").strip() or "another process"
    except OSError:
        holder = "another process"
    return CacheBusyError(
        f"{path.parent / path.name[1:-5]} is being written by {holder}; waited "
        f"{waited_s:g} s for it to finish. Try again when that command has ended"
    )


@contextmanager
def writer_lock(target: Path | str, wait_s: float | None = None) -> Iterator[None]:
    """Hold the one writer lock of cache folder ``target`` (an exclusive ``flock`` on :func:`lock_path`).

    Waits up to ``wait_s`` seconds (default :func:`lock_wait_s`: 30, or $ATLAS_LOCK_WAIT_S) for another writer, a
    process or another thread of this one, to finish, then raises CacheBusyError naming the holder's pid and command.
    Re-entrant within one thread, so ``add`` and ``rename`` hold it from their read to their :func:`staged_cache`
    (filelock's ``FileLock``: an ``flock`` on the file). The kernel releases the lock
    when its holder dies (SIGKILL included), so a killed writer never leaves a stale lock; the file is removed on
    release. Readers take no lock: they see whole caches only (:func:`publish_folder`).
    """
    from filelock import FileLock, Timeout

    path = lock_path(Path(target))
    path.parent.mkdir(parents=True, exist_ok=True)
    # One FileLock per path in the process (is_singleton), its nesting counted per thread (thread_local): a nested
    # call in the holding thread passes, another thread waits as another process does.
    lock = FileLock(path, is_singleton=True, on_acquired=_note_holder)
    wait = lock_wait_s() if wait_s is None else wait_s
    try:
        lock.acquire(timeout=max(wait, 0.0), poll_interval=0.1)
    except Timeout:
        raise _busy(path, wait) from None
    try:
        yield
    finally:
        if lock.lock_counter == 1:  # the outermost hold: remove the file while holding it (a waiter that opened
            path.unlink(missing_ok=True)  # it sees it unlinked and locks a new one), then release
        lock.release()


def remove_leftovers(target: Path) -> list[str]:
    """Remove the staging and retired folders (``.<name>.building-*``, ``.<name>.old-*``) that a writer killed with
    SIGKILL or a power cut left beside ``target``; call only while holding :func:`writer_lock`. Returns their names."""
    target = Path(target)
    if not target.parent.is_dir():
        return []
    removed = []
    for entry in target.parent.iterdir():
        if entry.is_dir() and entry.name.startswith((f".{target.name}.building-", f".{target.name}.old-")):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return sorted(removed)


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_tables(
    folder: Path,
    manifest: dict[str, Any],
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    hierarchy: pd.DataFrame,
    embeddings: np.ndarray,
    topics_per_class: pd.DataFrame | None = None,
    lineage: pd.DataFrame | None = None,
    copies: pd.DataFrame | None = None,
    journeys: pd.DataFrame | None = None,
    candidates: pd.DataFrame | None = None,
    subtopics: pd.DataFrame | None = None,
) -> None:
    """Write the cache files into ``folder`` (normally the staging folder of :func:`staged_cache`).

    ``topics_per_class``, ``lineage`` (LINEAGE_COLUMNS), ``copies`` (COPY_COLUMNS first), ``journeys``
    (JOURNEY_COLUMNS), ``candidates`` (CANDIDATE_COLUMNS) and ``subtopics`` (SUBTOPIC_COLUMNS) are written only when
    given and not empty.

    ``manifest`` must hold MANIFEST_KEYS except ``kind`` and ``schema_version``, which are set here.
    ``embeddings`` is float32, n_documents x dim. The manifest is written last, so a folder without one is partial.

    Raises ValueError when a table lacks a required column or the row counts disagree.
    """
    for name, table, required in (
        (DOCUMENTS_FILE, documents, DOCUMENT_COLUMNS),
        (TOPICS_FILE, topics, TOPIC_COLUMNS),
        (HIERARCHY_FILE, hierarchy, HIERARCHY_COLUMNS),
    ):
        missing = [column for column in required if column not in table.columns]
        if missing:
            raise ValueError(f"{name} lacks columns {missing}")
    if embeddings.shape[0] != len(documents):
        raise ValueError(f"{embeddings.shape[0]} embeddings for {len(documents)} documents")
    documents.to_parquet(folder / DOCUMENTS_FILE, index=False)
    # Parquet lists hold one type: [term, weight] pairs are stored as structs and turned back into pairs on read.
    topics = topics.assign(top_terms=_term_structs(topics["top_terms"]))
    topics.to_parquet(folder / TOPICS_FILE, index=False)
    hierarchy.to_parquet(folder / HIERARCHY_FILE, index=False)
    if topics_per_class is not None and not topics_per_class.empty:
        topics_per_class.to_parquet(folder / TOPICS_PER_CLASS_FILE, index=False)
    if lineage is not None and not lineage.empty:
        lineage[LINEAGE_COLUMNS].astype({"previous_topic": "Int64", "topic": "Int64"}).to_parquet(
            folder / LINEAGE_FILE, index=False
        )
    if copies is not None and not copies.empty:
        missing = [column for column in COPY_COLUMNS if column not in copies.columns]
        if missing:
            raise ValueError(f"{COPIES_FILE} lacks columns {missing}")
        copies.to_parquet(folder / COPIES_FILE, index=False)
    if journeys is not None and not journeys.empty:
        missing = [column for column in JOURNEY_COLUMNS if column not in journeys.columns]
        if missing:
            raise ValueError(f"{JOURNEYS_FILE} lacks columns {missing}")
        journeys.to_parquet(folder / JOURNEYS_FILE, index=False)
    if candidates is not None and not candidates.empty:
        missing = [column for column in CANDIDATE_COLUMNS if column not in candidates.columns]
        if missing:
            raise ValueError(f"{CANDIDATES_FILE} lacks columns {missing}")
        candidates.assign(top_terms=_term_structs(candidates["top_terms"])).to_parquet(
            folder / CANDIDATES_FILE, index=False
        )
    if subtopics is not None and not subtopics.empty:
        missing = [column for column in SUBTOPIC_COLUMNS if column not in subtopics.columns]
        if missing:
            raise ValueError(f"{SUBTOPICS_FILE} lacks columns {missing}")
        subtopics[SUBTOPIC_COLUMNS].to_parquet(folder / SUBTOPICS_FILE, index=False)
    np.save(folder / EMBEDDINGS_FILE, embeddings.astype(np.float32), allow_pickle=False)
    full_manifest = {"kind": CACHE_KIND, "schema_version": SCHEMA_VERSION, **manifest}
    missing_keys = [key for key in MANIFEST_KEYS if key not in full_manifest]
    if missing_keys:
        raise ValueError(f"manifest lacks {missing_keys}")
    (folder / MANIFEST_FILE).write_text(json.dumps(full_manifest, indent=2, default=_json_default), encoding="utf-8")


# The saved model's c-TF-IDF vocabulary, which ``add`` reads as JSON (pipeline.adapters.bertopic_model.CTFIDF_CONFIG).
MODEL_VOCABULARY_FILE = "ctfidf_config.json"


def links_inside(cache_dir: Path | str) -> list[str]:
    """The paths (relative to ``cache_dir``) of the symbolic links inside a cache folder, at any depth, found without
    following one; the folder itself may be a link."""
    root = Path(cache_dir).resolve()
    found = []
    for folder, subfolders, files in os.walk(root, followlinks=False):
        for name in [*subfolders, *files]:
            if (Path(folder) / name).is_symlink():
                found.append(str((Path(folder) / name).relative_to(root)))
    return sorted(found)


def check_no_links(cache_dir: Path | str) -> None:
    """Raise CacheError when the cache folder holds a symbolic link: ``rename`` and ``add`` read the cache and copy
    what they do not rewrite (:func:`carry_over`), and a link would read, or copy into the new atlas, a file from
    anywhere the user can read (issue 40, item 16). A cache writer never makes links."""
    links = links_inside(cache_dir)
    if links:
        shown = ", ".join(links[:3]) + (f" and {len(links) - 3} more" if len(links) > 3 else "")
        raise CacheError(cache_dir, f"it holds symbolic links ({shown}), which a cache never has; remove them")


def check_model_vocabulary(cache_dir: Path | str) -> None:
    """Raise CacheError unless ``model/ctfidf_config.json`` is the JSON BERTopic saves (an object whose
    ``vectorizer_model`` holds a ``vocab`` object and a ``params`` object). ``add`` reads its vocabulary from it; when
    it was malformed the adapter fell back to ``BERTopic.load`` of the cache's model folder, which can reach
    ``torch.load`` of files a cache's author chose (issue 40, item 16): checked before anything is loaded."""
    path = Path(cache_dir) / MODEL_DIR / MODEL_VOCABULARY_FILE
    where = f"{MODEL_DIR}/{MODEL_VOCABULARY_FILE}"
    if path.is_symlink() or not path.is_file():
        raise CacheError(cache_dir, f"{where} is missing")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise CacheError(cache_dir, f"{where} is not readable JSON ({error})") from error
    vectorizer = config.get("vectorizer_model") if isinstance(config, dict) else None
    if not isinstance(vectorizer, dict) or not all(
        isinstance(vectorizer.get(key), dict) for key in ("vocab", "params")
    ):
        raise CacheError(cache_dir, f"{where} is malformed (no vectorizer_model with a vocab and params)")


def carry_over(source: Path, staging: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Copy into ``staging`` every file and folder of the cache ``source`` that ``staging`` does not hold yet
    (the model, files other stages or later versions add), so rewriting some tables loses nothing else;
    names in ``skip`` (files made stale by the rewrite) are left behind.

    Returns the names copied.
    """
    copied = []
    for entry in sorted(Path(source).iterdir()):
        target = staging / entry.name
        if target.exists() or entry.name.startswith(".") or entry.name in skip:
            continue
        if entry.is_dir():
            shutil.copytree(entry, target)
        else:
            shutil.copy2(entry, target)
        copied.append(entry.name)
    return copied


def check_target(target: Path, overwrite_foreign: bool = False) -> None:
    """Refuse to replace a folder that is not a Topic Atlas cache.

    A non-empty folder may be replaced only when it is a cache: a full manifest of ours (:func:`is_cache_dir`) and
    nothing but the files a cache writer makes (:func:`unknown_entries`), so a user's file put into a cache folder,
    or a folder whose manifest merely claims our kind, is never deleted by a build. ``overwrite_foreign`` (the
    build's ``--force``) replaces it anyway.

    Raises FileExistsError, in one line naming the folder (and the unknown files), when ``target`` is a file, or a
    non-empty folder that is not a cache or holds other files (unless ``overwrite_foreign``).
    """
    if target.exists() and not target.is_dir():
        raise FileExistsError(f"{target} is a file, not a cache folder")
    if overwrite_foreign or not target.is_dir() or not any(target.iterdir()):
        return
    if not is_cache_dir(target):
        raise FileExistsError(
            f"{target} exists and is not a Topic Atlas cache (no full {MANIFEST_FILE} of ours); "
            "choose another --cache folder, or pass --force to replace it"
        )
    unknown = unknown_entries(target)
    if unknown:
        shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        raise FileExistsError(
            f"{target} holds files a Topic Atlas cache does not ({shown}), which a build would delete; "
            "move them out, choose another --cache folder, or pass --force to replace it"
        )
