"""An atlas as a BERTopic model (``Atlas.to_bertopic``): the model the build or ``from_bertopic`` saved in
``model/``, loaded with the atlas's own representation as its embedder, and after an edit or an add given the
atlas's current topics and documents.

An edit (pipeline.operations.edit: merge, split, delete, move, rename) changes the atlas's topics without a refit,
and an add (pipeline.operations.add) its documents and topic sizes, so the saved model still describes the topics
and documents as they were. When the atlas has an edit that no undo has undone, or an add, or other document or
topic counts than the saved model's (:func:`differs_from_saved`), the loaded model's topic tables are written from the
atlas's current tables (pipeline.adapters.bertopic_export.write_topic_tables); an atlas as built gets its saved
model untouched:

- ids: bertopic numbers its topics -1 (outliers), 0, 1, ... without gaps, and an edit leaves gaps (a merged topic's
  id is gone, a split's parts get new ids), so the model's topic i is the atlas's i-th topic in the order of its ids
  (:func:`model_topic_numbers`; -1 stays -1);
- each document's topic, the sizes, the terms (``top_terms``, so BERTopic's ``Name`` is "<i>_" and the first four
  joined by "_") and the custom labels (the atlas's ``label``, ``get_topic_info``'s ``CustomName``);
- the topic embeddings: the atlas's topic centroids (pipeline.geometry.centroids) in its stored vectors, which
  ``transform`` compares the embedded texts with;
- the c-TF-IDF rows: the model's own c-TF-IDF of each topic's summed term counts over the saved vocabulary (the
  counts an edit reads, pipeline.operations.edit_describe.edit_corpus), for ``approximate_distribution`` and the
  ``visualize_*`` figures.

The model's embedder (:class:`AtlasTextEmbedding`) holds the atlas folder, so the model saves with
``serialization="pickle"`` as with ``"safetensors"``; a pickled model read back embeds by reading the folder again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.cache import MODEL_DIR, OUTLIER_TOPIC, TopicCache

if TYPE_CHECKING:
    from pipeline.represent.representation import Representation


def has_live_edits(atlas: TopicCache) -> bool:
    """True when the atlas's edit log (``edits.jsonl``) holds an edit that no undo has undone."""
    from pipeline.operations.edit_log import last_undoable, read_log
    from pipeline.runtime.errors import InputError

    try:
        last_undoable(read_log(atlas.path))
    except InputError:
        return False
    return True


def model_topic_numbers(topic_ids: Sequence[int]) -> dict[int, int]:
    """{atlas topic id: the model's topic number}: the atlas's topics other than -1 numbered 0, 1, ... in the order
    of their ids, -1 (the outliers) kept as -1."""
    real = sorted({int(topic) for topic in topic_ids} - {OUTLIER_TOPIC})
    return {OUTLIER_TOPIC: OUTLIER_TOPIC, **{topic: number for number, topic in enumerate(real)}}


def current_tables(atlas: TopicCache) -> Any:
    """The atlas's current topics as a pipeline.adapters.bertopic_export.TopicTables (module docstring), numbered
    by :func:`model_topic_numbers`. Raises TargetError (one line) when ``model/ctfidf_config.json`` is missing or
    holds no vocabulary."""
    from pipeline.adapters.bertopic_export import TopicTables
    from pipeline.geometry.centroids import topic_centroids
    from pipeline.operations.edit_describe import edit_corpus, indicator

    documents = atlas.documents["topic"].to_numpy(dtype=np.int64)
    ids = sorted({int(topic) for topic in documents})  # -1 first when there are outliers
    number = model_topic_numbers(ids)
    rows = atlas.topics.set_index("topic")
    written = {topic: list(rows.at[topic, "top_terms"]) if topic in rows.index else [] for topic in ids}
    # a topic without terms gets bertopic's own filler term, ("", 1e-05): get_topic_info cannot show an empty list
    terms = {number[topic]: [(str(term), float(weight)) for term, weight in written[topic]] for topic in ids}
    terms = {topic: pairs or [("", 1e-05)] for topic, pairs in terms.items()}
    labels = {number[topic]: str(rows.at[topic, "label"]) for topic in ids if topic in rows.index}
    counts = indicator(documents, ids) @ edit_corpus(atlas).counts
    return TopicTables(
        topics=np.asarray([number[int(topic)] for topic in documents], dtype=np.int64),
        terms=terms,
        labels=labels,
        embeddings=topic_centroids(atlas.embeddings(), documents, ids).astype(np.float32),
        counts=counts,
    )


def differs_from_saved(atlas: TopicCache, topic_model: Any) -> bool:
    """True when the atlas's topics or documents are no longer those of its saved model (``topic_model``, as
    loaded): an edit no undo has undone (:func:`has_live_edits`), an add (the manifest's ``add_history``), another
    number of documents than the model's ``topics_``, or other topic sizes than its ``topic_sizes_`` (compared
    sorted: the atlas's ids need not be the model's, ``manifest["model_topic_ids"]``)."""
    if has_live_edits(atlas) or atlas.manifest.get("add_history"):
        return True
    fitted = getattr(topic_model, "topics_", None)
    if fitted is None or len(fitted) != len(atlas.documents):
        return True
    sizes = sorted(int(size) for size in atlas.documents["topic"].value_counts())
    return sizes != sorted(int(size) for size in (getattr(topic_model, "topic_sizes_", None) or {}).values())


class AtlasTextEmbedding:
    """Texts -> the atlas's vectors (pipeline.operations.place.embed_queries with its representation): float32,
    n x dim, unit rows; the embedding function of the model :func:`atlas_model` gives.

    It holds the atlas folder (``folder``) and pickles as that alone, so the model saves with pickle: unpickled, it
    reads the atlas and its representation again from ``folder`` when first called (pipeline.cache.read_cache:
    CacheError when the folder is gone or damaged; query_representation's errors for its representation).
    """

    def __init__(self, atlas: TopicCache, representation: Representation | None = None) -> None:
        self.folder = Path(atlas.path)
        self._atlas: TopicCache | None = atlas
        self._representation = representation

    def __call__(self, texts: list[str]) -> np.ndarray:
        from pipeline.cache import read_cache
        from pipeline.operations.place import embed_queries, query_representation

        if self._atlas is None:
            self._atlas = read_cache(self.folder)
        if self._representation is None:
            self._representation = query_representation(self._atlas)
        return embed_queries(texts, self._atlas, representation=self._representation)

    def __getstate__(self) -> dict[str, Any]:
        return {"folder": self.folder, "_atlas": None, "_representation": None}


def atlas_model(atlas: TopicCache) -> Any:
    """The atlas as a ``bertopic.BERTopic`` model: ``model/`` loaded with the atlas's representation as its embedder
    (pipeline.adapters.bertopic_export.load_saved_model, :class:`AtlasTextEmbedding`), its topic tables rewritten
    from the atlas's current ones when they differ from the saved model's (:func:`differs_from_saved`: an edit, an
    add; module docstring). Raises FileNotFoundError when the folder holds no saved model, TargetError when a changed
    atlas's saved vocabulary cannot be read."""
    from pipeline.adapters.bertopic_export import load_saved_model, write_topic_tables
    from pipeline.operations.place import query_representation

    embed = AtlasTextEmbedding(atlas, query_representation(atlas))
    topic_model = load_saved_model(atlas.path / MODEL_DIR, embed)
    if differs_from_saved(atlas, topic_model):
        write_topic_tables(topic_model, current_tables(atlas))
    return topic_model
