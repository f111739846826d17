"""The atlas's domain constants: the outlier topic, the cache folder's files, each table's columns, the reasons a
paper is an outlier, the manifest's required keys. Standard library only, and nothing but names: the compute modules
(pipeline.topics, pipeline.journeys, pipeline.text, ...) and the cache format (pipeline.cache) both import it, so a
stage that needs the outlier topic or a column's name does not import (nor hash, pipeline.store.keys) the cache's
reading and writing code.

The files, columns, types and manifest keys are described in docs/cache-format.md; update it with this module.
"""

from __future__ import annotations

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
DROPPED_FILE = "dropped.parquet"  # optional: the records the build could not model (placeholders, empty abstracts)
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
# The records cleaning dropped (pipeline.ingest.clean.dropped_table): their id, title and abstract as given, why
# (a key of the manifest's ``dropped_ids``) and, for one of several records holding the same dropped text, the id
# of the first of them ("" otherwise); their other input columns follow. No topic, position or embedding.
DROPPED_COLUMNS = ["doc_id", "title", "abstract", "reason", "copy_of"]
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
# The keys read_manifest requires: the required keys of pipeline.cache.manifest.Manifest, the manifest's type, and
# timings_s (which a writer adds last); tests/test_manifest_type.py keeps the two together.
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
        DROPPED_FILE,
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


# The saved model's c-TF-IDF vocabulary, which ``add`` reads as JSON (pipeline.adapters.bertopic_model.CTFIDF_CONFIG).
MODEL_VOCABULARY_FILE = "ctfidf_config.json"
