"""Every parameter of a build, with its default and the reason for it.

A :class:`BuildConfig` is recorded whole in the cache manifest (``params``), so a cache says how it was made.
Parameters that depend on the corpus size are resolved by :meth:`BuildConfig.resolved_for`, which returns a
copy with concrete values and a list of what it adapted (tiny corpora must never reach UMAP's ``k >= N``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

# The smallest corpus for which UMAP + HDBSCAN are run; below it all documents form one topic.
MIN_DOCUMENTS_TO_CLUSTER = 8


@dataclass(frozen=True)
class BuildConfig:
    """Parameters of one build. ``None`` means "choose from the corpus size" (see resolved_for)."""

    # Embedding: all-MiniLM-L6-v2 is BERTopic's default model (BERTopic docs, "Embedding Models").
    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_batch_size: int = 32

    # UMAP to a clustering space: BERTopic's defaults (n_neighbors=15, n_components=5, min_dist=0.0, cosine).
    umap_n_neighbors: int = 15
    umap_n_components: int = 5
    umap_min_dist: float = 0.0
    # UMAP to 2D for the map: min_dist 0.1 (UMAP's own default) spreads points so they can be hovered.
    map_min_dist: float = 0.1
    random_state: int = 42

    # HDBSCAN. min_cluster_size None = scaled with n (see resolved_for); min_samples None = HDBSCAN's default.
    min_cluster_size: int | None = None
    min_samples: int | None = None
    cluster_selection_method: str = "eom"

    # c-TF-IDF vocabulary: uni- and bigrams, English and academic stop words.
    ngram_max: int = 2
    min_df: int | None = None
    max_df: float = 0.5
    top_n_words: int = 10

    # Outlier reduction: documents whose embedding is at least this cosine-similar to a topic are
    # reassigned to it (BERTopic reduce_outliers, strategy="embeddings"); the rest stay in -1.
    reduce_outliers: bool = True
    outlier_threshold: float = 0.0

    # Representative documents per topic and nearest neighbours per document.
    n_representative: int = 5
    n_neighbors_similar: int = 10

    # Upper bound on the number of topics at the top level of the map (merged by BERTopic reduce_topics).
    max_topics: int | None = 60

    adaptations: tuple[str, ...] = field(default=(), compare=False)

    def resolved_for(self, n_documents: int) -> "BuildConfig":
        """Return a copy with size-dependent values chosen for ``n_documents`` documents.

        - ``min_cluster_size``: max(3, round(sqrt(n) / 2)) capped at n // 2 (about 15 for 951 docs,
          54 for 11,672), so the number of topics grows slowly with the corpus.
        - ``min_df``: 2 from 50 documents on, else 1 (a term seen once cannot describe a topic of many).
        - UMAP ``n_neighbors`` <= n - 1 and ``n_components`` <= n - 2 (UMAP's spectral layout needs k < N).
        Every change to a value the user set is listed in ``adaptations``.
        """
        notes: list[str] = list(self.adaptations)
        changes: dict[str, Any] = {}
        if self.min_cluster_size is None:
            changes["min_cluster_size"] = max(3, min(round(math.sqrt(n_documents) / 2), max(2, n_documents // 2)))
        elif self.min_cluster_size > n_documents:
            changes["min_cluster_size"] = max(2, n_documents // 2)
            notes.append(f"min_cluster_size {self.min_cluster_size} -> {changes['min_cluster_size']} (only {n_documents} documents)")
        if self.min_df is None:
            changes["min_df"] = 2 if n_documents >= 50 else 1
        if self.umap_n_neighbors > n_documents - 1:
            changes["umap_n_neighbors"] = max(2, n_documents - 1)
            notes.append(f"UMAP n_neighbors {self.umap_n_neighbors} -> {changes['umap_n_neighbors']} (only {n_documents} documents)")
        if self.umap_n_components > n_documents - 2:
            changes["umap_n_components"] = max(2, n_documents - 2)
            notes.append(f"UMAP n_components {self.umap_n_components} -> {changes['umap_n_components']} (only {n_documents} documents)")
        return replace(self, **changes, adaptations=tuple(notes))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for the manifest."""
        values = asdict(self)
        values["adaptations"] = list(self.adaptations)
        return values
