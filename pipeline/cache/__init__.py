"""The cache folder: the one contract between the pipeline and the dashboard.

The pipeline writes a cache with :func:`write_tables` inside :func:`staged_cache` (the one staged write of build, add
and rename: a staging folder beside the target, swapped in atomically on success, removed on failure); the dashboard
reads it with :func:`read_cache`, which refuses a missing, partial, corrupt, foreign or other-version cache with a
:class:`CacheError`. Nothing in a cache is pickled, and this package imports only the standard library, numpy and
pandas (filelock when a writer locks), so the dashboard can use it without BERTopic, torch or UMAP.

One module per job, their public names re-exported here (``from pipeline.cache import read_cache, TopicCache``):

- pipeline.schema: the files, columns and domain constants (``OUTLIER_TOPIC``, ``DOCUMENT_COLUMNS``, ...), shared
  with the compute modules;
- :mod:`pipeline.cache.manifest`: :class:`Manifest`, the manifest's type, and the TypedDicts of its nested objects;
- :mod:`pipeline.cache.read`: :func:`read_cache`, :class:`TopicCache`, :func:`read_manifest` and the checks
  (:class:`CacheError`, :func:`check_target`, :func:`check_no_links`, :func:`check_model_vocabulary`);
- :mod:`pipeline.cache.labels`: :func:`display_labels`, the labels every view shows;
- :mod:`pipeline.cache.write`: :func:`write_tables` and :func:`carry_over`;
- :mod:`pipeline.cache.publish`: :func:`staged_cache`, :func:`publish_folder` (the atomic swap), leftovers;
- :mod:`pipeline.cache.lock`: :func:`writer_lock` and :class:`CacheBusyError`.

The files, columns, types and manifest keys are described in docs/cache-format.md; update it with these modules.
"""

from __future__ import annotations

from pipeline.cache.labels import (
    OUTLIER_LABEL,
    display_labels,
)
from pipeline.cache.lock import (
    CacheBusyError,
    lock_path,
    lock_wait_s,
    writer_lock,
)
from pipeline.cache.manifest import Manifest
from pipeline.cache.publish import (
    publish_folder,
    remove_leftovers,
    staged_cache,
    staging_folder,
)
from pipeline.cache.read import (
    COLUMN_TYPES,
    MANIFEST_TYPES,
    REBUILD_HINT,
    REREAD_S,
    CacheError,
    CacheReplaced,
    TopicCache,
    check_model_vocabulary,
    check_no_links,
    check_target,
    is_cache_dir,
    links_inside,
    manifest_identity,
    read_cache,
    read_manifest,
    unknown_entries,
)
from pipeline.cache.write import (
    carry_over,
    write_tables,
)
from pipeline.schema import (
    ADDED_AMONG_OUTLIERS,
    CACHE_FILES,
    CACHE_FOLDERS,
    CACHE_KIND,
    CANDIDATE_COLUMNS,
    CANDIDATES_FILE,
    CLUSTER_DISSOLVED,
    COPIES_FILE,
    COPY_COLUMNS,
    DOCUMENT_COLUMNS,
    DOCUMENTS_FILE,
    DROPPED_COLUMNS,
    DROPPED_FILE,
    EDITS_DIR,
    EDITS_FILE,
    EMBEDDINGS_FILE,
    FIT_SIMILARITY_COLUMN,
    FITS_NO_TOPIC,
    HIERARCHY_COLUMNS,
    HIERARCHY_FILE,
    JOURNEY_COLUMNS,
    JOURNEYS_FILE,
    LINEAGE_COLUMNS,
    LINEAGE_FILE,
    MANIFEST_FILE,
    MANIFEST_KEYS,
    METRICS_FILE,
    MODEL_DIR,
    MODEL_VOCABULARY_FILE,
    NO_DENSE_CLUSTER,
    OUTLIER_REASON_COLUMN,
    OUTLIER_TOPIC,
    REPRESENTATION_DIR,
    SCHEMA_VERSION,
    SUBTOPIC_COLUMN,
    SUBTOPIC_COLUMNS,
    SUBTOPICS_FILE,
    TOPIC_COLUMNS,
    TOPIC_ID_COLUMNS,
    TOPICS_FILE,
    TOPICS_PER_CLASS_FILE,
)


def __getattr__(name: str) -> float:
    """``LOCK_WAIT_S``, the name callers used before :func:`lock_wait_s`: read when asked, not at import."""
    if name == "LOCK_WAIT_S":
        return lock_wait_s()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ADDED_AMONG_OUTLIERS",
    "CACHE_FILES",
    "CACHE_FOLDERS",
    "CACHE_KIND",
    "CANDIDATES_FILE",
    "CANDIDATE_COLUMNS",
    "CLUSTER_DISSOLVED",
    "COLUMN_TYPES",
    "COPIES_FILE",
    "COPY_COLUMNS",
    "CacheBusyError",
    "CacheError",
    "CacheReplaced",
    "DOCUMENTS_FILE",
    "DOCUMENT_COLUMNS",
    "DROPPED_COLUMNS",
    "DROPPED_FILE",
    "EDITS_DIR",
    "EDITS_FILE",
    "EMBEDDINGS_FILE",
    "FITS_NO_TOPIC",
    "FIT_SIMILARITY_COLUMN",
    "HIERARCHY_COLUMNS",
    "HIERARCHY_FILE",
    "JOURNEYS_FILE",
    "JOURNEY_COLUMNS",
    "LINEAGE_COLUMNS",
    "LINEAGE_FILE",
    "MANIFEST_FILE",
    "MANIFEST_KEYS",
    "MANIFEST_TYPES",
    "METRICS_FILE",
    "MODEL_DIR",
    "MODEL_VOCABULARY_FILE",
    "Manifest",
    "NO_DENSE_CLUSTER",
    "OUTLIER_LABEL",
    "OUTLIER_REASON_COLUMN",
    "OUTLIER_TOPIC",
    "REBUILD_HINT",
    "REPRESENTATION_DIR",
    "REREAD_S",
    "SCHEMA_VERSION",
    "SUBTOPICS_FILE",
    "SUBTOPIC_COLUMN",
    "SUBTOPIC_COLUMNS",
    "TOPICS_FILE",
    "TOPICS_PER_CLASS_FILE",
    "TOPIC_COLUMNS",
    "TOPIC_ID_COLUMNS",
    "TopicCache",
    "carry_over",
    "check_model_vocabulary",
    "check_no_links",
    "check_target",
    "display_labels",
    "is_cache_dir",
    "links_inside",
    "lock_path",
    "lock_wait_s",
    "manifest_identity",
    "publish_folder",
    "read_cache",
    "read_manifest",
    "remove_leftovers",
    "staged_cache",
    "staging_folder",
    "unknown_entries",
    "write_tables",
    "writer_lock",
]
