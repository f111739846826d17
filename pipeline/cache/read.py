"""Reading and checking a cache folder: :func:`read_cache` (a :class:`TopicCache`), :func:`read_manifest`, and the
checks that refuse a missing, partial, corrupt, foreign, tampered or other-version cache with a :class:`CacheError`
(:func:`check_target`, :func:`check_no_links`, :func:`check_model_vocabulary`). Imports only the standard library,
numpy and pandas, so the dashboard can use it without BERTopic, torch or UMAP.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from pipeline.cache.labels import display_labels
from pipeline.cache.manifest import Manifest
from pipeline.runtime.errors import AtlasError
from pipeline.runtime.parquet import read_frame
from pipeline.schema import (
    CACHE_FILES,
    CACHE_FOLDERS,
    CACHE_KIND,
    CANDIDATE_COLUMNS,
    CANDIDATES_FILE,
    COPIES_FILE,
    COPY_COLUMNS,
    DOCUMENT_COLUMNS,
    DOCUMENTS_FILE,
    DROPPED_COLUMNS,
    DROPPED_FILE,
    EDITS_DIR,
    EMBEDDINGS_FILE,
    HIERARCHY_COLUMNS,
    HIERARCHY_FILE,
    JOURNEY_COLUMNS,
    JOURNEYS_FILE,
    LINEAGE_COLUMNS,
    LINEAGE_FILE,
    MANIFEST_FILE,
    MANIFEST_KEYS,
    MODEL_DIR,
    MODEL_VOCABULARY_FILE,
    SCHEMA_VERSION,
    SUBTOPIC_COLUMNS,
    SUBTOPICS_FILE,
    TOPIC_COLUMNS,
    TOPICS_FILE,
    TOPICS_PER_CLASS_FILE,
)

REBUILD_HINT = "topic-atlas build --input PATH --cache {cache}"


class CacheError(AtlasError):
    """A cache folder is missing, partial, corrupt, foreign or of another schema version: an AtlasError, so the
    command line says it in one line (topic_atlas.cli.run_guarded) as it says a bad input.

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
    manifest : the parsed ``manifest.json`` (pipeline.cache.manifest.Manifest).
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
    dropped : the records the build could not model (DROPPED_COLUMNS plus their other input columns: no topic, no
        position); empty (with its columns) when none were dropped or the cache was built before ``dropped.parquet``.
    """

    path: Path
    manifest: Manifest
    documents: pd.DataFrame
    topics: pd.DataFrame
    hierarchy: pd.DataFrame = field(default_factory=pd.DataFrame)
    topics_per_class: pd.DataFrame = field(default_factory=pd.DataFrame)
    lineage: pd.DataFrame = field(default_factory=pd.DataFrame)
    copies: pd.DataFrame = field(default_factory=pd.DataFrame)
    journeys: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=JOURNEY_COLUMNS))
    candidates: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=CANDIDATE_COLUMNS))
    subtopics: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SUBTOPIC_COLUMNS))
    dropped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DROPPED_COLUMNS))
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


def read_manifest(cache_dir: Path | str) -> Manifest:
    """Read and check ``manifest.json``: a :class:`~pipeline.cache.manifest.Manifest` whose MANIFEST_KEYS are present
    and whose MANIFEST_TYPES values have their types (the other keys are not checked).

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
    return cast(Manifest, manifest)  # its kind, version, required keys and their types checked above


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
        table = read_frame(path)
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
    dropped = _read_dropped(cache_dir) if (cache_dir / DROPPED_FILE).exists() else pd.DataFrame(columns=DROPPED_COLUMNS)
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
        dropped=dropped,
    )


def _read_dropped(cache_dir: Path) -> pd.DataFrame:
    """dropped.parquet with ``doc_id``, ``reason`` and ``copy_of`` as text ("" for a missing value) and ``title``
    and ``abstract`` as given (None where missing). Raises CacheError when it is corrupt or lacks a column."""
    table = _read_table(cache_dir, DROPPED_FILE, DROPPED_COLUMNS)
    for column in ("doc_id", "reason", "copy_of"):
        table[column] = [str(value) if isinstance(value, str) or not pd.isna(value) else "" for value in table[column]]
    return table


def _read_candidates(cache_dir: Path) -> pd.DataFrame:
    """candidates.parquet with its list cells as Python lists (``top_terms`` as [term, score] pairs)."""
    table = _read_table(cache_dir, CANDIDATES_FILE, CANDIDATE_COLUMNS)
    table["top_terms"] = table["top_terms"].map(
        lambda pairs: [[str(pair["term"]), float(pair["weight"])] for pair in pairs]
    )
    for column in ("doc_ids", "representative_doc_ids"):
        table[column] = table[column].map(lambda ids: [str(doc_id) for doc_id in ids])
    return table


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
