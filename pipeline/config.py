"""Every parameter of a build, with its default and the reason for it.

A :class:`BuildConfig` is recorded whole in the cache manifest (``params``), so a cache says how it was made.
Parameters that depend on the corpus size are resolved by :meth:`BuildConfig.resolved_for`, which returns a
copy with concrete values and a list of what it adapted (tiny corpora must never reach UMAP's ``k >= N``).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from pipeline.runtime.errors import AtlasError
from pipeline.runtime.settings import settings

# Above this many documents, fitted whole (not a large corpus's fit sample), both UMAP fits run fewer SGD epochs than
# UMAP's 200, which are most of such a build's CPU: the clustering space CLUSTER_SPACE_EPOCHS, the map MAP_EPOCHS. On
# the six collections (49,805 papers) the topics moved less than another seed moves them, the map's trustworthiness
# fell 0.0014 and its kNN recall 3%, and the two fits took 23.5 CPU s less, about 12% of the build
# (bench/build_epochs.py, docs/decisions/map-umap-settings.md).
FEWER_EPOCHS_ABOVE = 20_000
CLUSTER_SPACE_EPOCHS = 100
MAP_EPOCHS = 150


def use_landmarks(n_documents: int, fit_sample_size: int) -> bool:
    """Whether a build of ``n_documents`` fits on a sample (pipeline.geometry.landmarks): ``fit_sample_size`` > 0
    and fewer than the documents."""
    return 0 < fit_sample_size < n_documents


def default_seed() -> int:
    """The seed a build uses unless it is given one: ``ATLAS_SEED`` when set to an integer, else 42
    (pipeline.runtime.settings.DEFAULT_SEED).

    Raises AtlasError (a one-line message) when ``ATLAS_SEED`` is set but is not an integer. The test suite sets it
    to run every build under another seed (tests/conftest.py, ``make test-sweep``)."""
    current = settings()  # pipeline.runtime.settings
    if current.seed is None:
        raise AtlasError(f"ATLAS_SEED must be an integer seed, got {current.seed_text!r}: unset it or give a number")
    return current.seed


@dataclass(frozen=True)
class BuildConfig:
    """Parameters of one build. ``None`` means "choose from the corpus size" (see resolved_for)."""

    # Representation (pipeline.represent.representation): "tfidf-svd" = TF-IDF -> truncated SVD fitted on the corpus, an
    # encoder name of pipeline.represent.encoder_registry (all-MiniLM-L6-v2, ...-static, ...-static-pca, ...-onnx-int8,
    # ...-seq128), or blocks joined by "+". Chosen from bench/representations.py on the whole conference
    # (docs/decisions/representation.md): tfidf-svd finds same-area papers as well as the MiniLM transformer and finds a
    # paper from its title within a few points of it, at a small fraction of its cost.
    embedding_model: str = "tfidf-svd"
    # One text per forward pass for a transformer block: a vector then depends on its text alone. In batches of 32
    # it also depends, in its last bits (1e-7), on its batch-mates, so a corpus embedded on a fresh machine and one
    # whose cache was filled in other batches got different vectors, and 300 abstracts at UMAP seed 7 gave 12
    # topics against 2. Cost: 160 abstracts in 7.2-7.6 s against 6.8 s.
    embedding_batch_size: int = 1
    # The tfidf-svd block (pipeline.represent.representation.LexicalParams): single words in at least 2 documents and at
    # most half of them, 512 SVD dimensions, 2 power iterations. bench/representations.py
    # (docs/decisions/representation.md): 256 dimensions find same-area papers about as well but a paper from its title
    # clearly less often; word pairs add nothing for five times the cost.
    lexical_dims: int = 512
    # ... scaled down for small corpora: one dimension per 20 documents, at least 32
    # (pipeline.represent.representation.LexicalParams).
    lexical_documents_per_dim: int = 20
    lexical_ngram_max: int = 1
    lexical_min_df: int = 2
    lexical_max_df: float = 0.5
    lexical_n_iter: int = 2
    # The SVD is fitted on at most this many documents, the first of the canonical order (a hash-random sample, as the
    # landmarks are), and projects the rest: above it the randomized SVD's n x 522 float32 blocks, several alive at
    # once, were the largest part of the 1M build's embed stage (docs/benchmarks.md). Every atlas up to 300,000
    # documents (the 290k literature included) is fitted whole as before; docs/decisions/representation.md.
    lexical_fit_rows: int = 300_000

    # UMAP to a clustering space: BERTopic's defaults (n_neighbors=15, n_components=5, min_dist=0.0, cosine).
    umap_n_neighbors: int = 15
    umap_n_components: int = 5
    umap_min_dist: float = 0.0
    # SGD epochs of the clustering space's fit and of the map's. None: chosen by resolved_for, UMAP's own (500 up to
    # 10,000 documents, 200 above) up to FEWER_EPOCHS_ABOVE fitted documents, then CLUSTER_SPACE_EPOCHS and MAP_EPOCHS.
    umap_n_epochs: int | None = None
    map_n_epochs: int | None = None
    # UMAP to 2D for the map. negative_sample_rate 15 (UMAP's default is 5) and min_dist 0.0 raised the map's
    # trustworthiness (k=10) from 0.91 to 0.94 (951 abstracts) and 0.96 (titles) with MiniLM
    # (pipeline.quality.neighbour_metrics).
    map_min_dist: float = 0.0
    map_negative_sample_rate: int = 15
    # Then NeRV refines the UMAP map for precision (pipeline.geometry.refine): trustworthiness 0.936 -> 0.954 on the 951
    # abstracts (two seeds: 0.934 -> 0.952), kNN recall 0.41 -> 0.42. Dense O(n^2), so only up to
    # map_refine_max_documents (about 3 s at 951 documents, 15 s at 2,000; 0 = never). Above it UMAP's map stands
    # alone (0.959 on the 11,671 titles). recall_weight is NeRV's lambda, alpha the map kernel's tail.
    map_refine_max_documents: int = 2000
    map_refine_perplexity: float = 45.0
    map_refine_recall_weight: float = 0.3
    map_refine_alpha: float = 2.0
    map_refine_steps: int = 400
    # A large corpus (pipeline.geometry.landmarks): above this many documents both UMAP fits and HDBSCAN run on a
    # sample of this many (the landmarks; HDBSCAN's min_cluster_size is then resolved for the sample's size) and the
    # other documents are placed from their nearest landmarks. 0 = never. bench/sample_fit.py and
    # docs/decisions/sample-fit.md: the figures behind the default.
    fit_sample_size: int = 50_000
    # ... and the map of every document is then UMAP started from the landmarks' map with the others placed, for
    # this many epochs (a full fit runs 200 above 10,000 documents). On the 285,717 papers of the three anthologies
    # with 50,000 landmarks: trustworthiness 0.957 after 60 epochs, 0.961 after 80, 0.965 after 100 (kNN recall
    # 0.062, 0.069, 0.072); 80 spares a fifth of the map's longest stage, which ends the build's longest chain.
    fit_sample_map_epochs: int = 80
    # A Dask scheduler for the per-document work of such a build (pipeline.partitions; docs/scale.md): "local:N" (a
    # local cluster of N worker processes) or "tcp://host:8786"; None: one process. The same results either way.
    dask_scheduler: str | None = field(default=None, compare=False)
    random_state: int = field(default_factory=default_seed)  # ATLAS_SEED, else 42
    # Themes (the map's top level): "fields" = topics grouped by the field of pipeline/resources/fields.csv their
    # papers belong to (pipeline.topics.field_themes), "map" = Ward cut of the topics' centroids and map positions
    # (pipeline.topics.themes). docs/decisions/theme-measures.md section 10: the table behind the default.
    theme_grouping: str = "fields"

    # HDBSCAN. min_cluster_size None = scaled with n; min_samples None = about a third of it (see resolved_for).
    min_cluster_size: int | None = None
    min_samples: int | None = None
    cluster_selection_method: str = "eom"
    # No cluster may hold more than this share of the documents (HDBSCAN max_cluster_size; 0 = no cap). HDBSCAN's
    # "eom" selection can keep one cluster of most of the corpus: 300 ICLR abstracts with UMAP seed 7 gave 2 topics,
    # one of 85% of the papers, when their embeddings were computed in a different batch (float noise); capped at
    # half, the same points give 12 topics, the largest 15%. The 951 abstracts (8 seeds) and the titles never come
    # near the cap, so it changes nothing there.
    max_cluster_share: float = 0.5

    # c-TF-IDF vocabulary: uni- and bigrams, English stop words plus boilerplate learned from the corpus: words in at
    # least boilerplate_min_share of the documents that no cluster uses more than boilerplate_max_lift times as often
    # (pipeline.text.vocabulary.boilerplate_terms: "propose", "novel", "demonstrate", "method"... on the 951 abstracts,
    # nothing on the titles). It replaced a hand list of 150 words at equal NPMI; a looser lift of 2.0 removed
    # 105 words and lowered NPMI from 0.095 to 0.067 (bench/quality.py), so only the clearest boilerplate goes.
    ngram_max: int = 2
    min_df: int | None = None
    max_df: float = 0.5
    learn_stop_words: bool = True
    boilerplate_min_share: float = 0.05
    boilerplate_max_lift: float = 1.5
    # Terms kept per topic: 25, the length topic diversity is defined on (Dieng et al. 2020); labels use the first.
    top_n_words: int = 25

    # c-TF-IDF weighting (BERTopic ClassTfidfTransformer). BM25 idf made no difference in bench/quality.py.
    bm25_weighting: bool = False
    reduce_frequent_words: bool = True
    # Topic terms: "coherent" = each term kept by the one topic it weighs most in, the leading ones chosen to occur
    # in the same papers (pipeline.text.vocabulary.select_coherent_terms; the best NPMI and diversity in
    # bench/quality.py), "c-tf-idf" = BERTopic's plain ranking, "keybert" / "keybert+mmr" = BERTopic's
    # KeyBERTInspired (+ MaximalMarginalRelevance), which need the encoder loaded.
    representation: str = "coherent"
    n_candidate_terms: int = 40
    coherence_weight: float = 3.0
    exclusive_terms: bool = True

    # Outlier reduction (pipeline.topics.model.reassign_outliers): HDBSCAN outliers move to the topic whose centroid
    # they are most cosine-similar to, most similar first, if at least outlier_threshold similar, until at most
    # max_outlier_fraction of the documents remain outliers (the least topical papers stay in -1).
    reduce_outliers: bool = True
    outlier_threshold: float = 0.0
    max_outlier_fraction: float = 0.05
    # The fit check after outlier reduction (pipeline.topics.misfits): a paper whose similarity to its nearest topic
    # centroid is below fit_share of the median of the topics' papers' own (leave-one-out) similarities fits no topic
    # and moves to -1 (0 turns it off). 0.5, chosen on ICLR 2025 with 24 unrelated abstracts mixed in: the most
    # unrelated papers out for the fewest real ones (docs/decisions/fit-check.md).
    fit_share: float = 0.5

    # Representative documents per topic and nearest neighbours per document.
    n_representative: int = 5
    n_neighbors_similar: int = 10

    # A paper's journey across the collections of an atlas (pipeline.journeys.links): two papers of different
    # collections, each among the other's nearest neighbours, are the same work from this cosine similarity of their
    # vectors on (exact normalised titles link them too). Chosen on a hand-checked sample of pairs
    # (bench/journeys.py, docs/decisions/journeys.md).
    journey_similarity: float = 0.8
    # ... but only with vectors of at least this many dimensions: the threshold was measured on tfidf-svd's 512 (whole
    # conferences); at 32 (a 190-paper atlas) different papers of one topic reach 0.93-0.98. Below it, titles only.
    journey_min_dims: int = 512

    # Upper bound on the number of topics at the top level of the map (merged by BERTopic reduce_topics).
    max_topics: int | None = 60

    # An OpenAI-compatible chat-completions endpoint (e.g. http://127.0.0.1:8080/v1) that names each topic beside its
    # computed name (topics table column llm_label, pipeline/topics/naming/llm.py). None: off, the default, since the
    # product runs offline and names are computed from the corpus (pipeline/topics/naming).
    namer_url: str | None = None

    adaptations: tuple[str, ...] = field(default=(), compare=False)
    # The corpus's name for people (the page's header, a publication figure's title), e.g. "ICLR 2025"; None: derived
    # from the input file's name (corpus_display_name). Not a fitting parameter: it changes no stage's result.
    corpus_name: str | None = field(default=None, compare=False)

    def resolved_for(self, n_documents: int) -> BuildConfig:
        """Return a copy with size-dependent values chosen for ``n_documents`` documents.

        - ``min_cluster_size``: max(3, round(sqrt(n) / 2)) capped at n // 2 (about 15 for 951 docs,
          54 for 11,672), so the number of topics grows slowly with the corpus; n is the documents HDBSCAN
          clusters, at most ``fit_sample_size`` when that is set (pipeline.geometry.landmarks).
        - ``min_samples``: max(1, round(min_cluster_size / 3)) (5 for 951 docs, 18 for 11,672). With HDBSCAN's
          default (= min_cluster_size) the 951 abstracts, embedded by the MiniLM transformer, collapsed into one
          topic of 80-85% for 3 of 6 UMAP seeds (half of it: 1 of 6; a third: none, with either encoder). NPMI
          prefers the default's fewer, larger topics (0.149 against 0.095 on the static embeddings), but not at
          that risk.
        - ``min_df``: 2 from 50 documents on, else 1 (a term seen once cannot describe a topic of many).
        - UMAP ``n_neighbors`` <= n - 1 and ``n_components`` <= n - 2 (UMAP's spectral layout needs k < N).
        - ``umap_n_epochs`` and ``map_n_epochs``: CLUSTER_SPACE_EPOCHS and MAP_EPOCHS above FEWER_EPOCHS_ABOVE
          documents fitted whole; else None (UMAP's own), a fit sample's included (measured apart:
          docs/decisions/sample-fit.md).
        Every change to a value the user set is listed in ``adaptations``.
        """
        notes: list[str] = list(self.adaptations)
        changes: dict[str, Any] = {}
        min_cluster_size = self.min_cluster_size
        clustered = min(n_documents, self.fit_sample_size) if self.fit_sample_size > 0 else n_documents
        if min_cluster_size is None:
            min_cluster_size = max(3, min(round(math.sqrt(clustered) / 2), max(2, clustered // 2)))
            changes["min_cluster_size"] = min_cluster_size
        elif min_cluster_size > n_documents:
            min_cluster_size = max(2, n_documents // 2)
            changes["min_cluster_size"] = min_cluster_size
            notes.append(
                f"min_cluster_size {self.min_cluster_size} -> "
                f"{changes['min_cluster_size']} (only {n_documents} documents)"
            )
        if self.min_samples is None:
            changes["min_samples"] = max(1, round(min_cluster_size / 3))
        # both fits' SGD: most of such a build's CPU; landmarks (a fit sample) keep UMAP's own
        if FEWER_EPOCHS_ABOVE < n_documents and not use_landmarks(n_documents, self.fit_sample_size):
            if self.umap_n_epochs is None:
                changes["umap_n_epochs"] = CLUSTER_SPACE_EPOCHS
            if self.map_n_epochs is None:
                changes["map_n_epochs"] = MAP_EPOCHS
        if self.min_df is None:
            changes["min_df"] = 2 if n_documents >= 50 else 1
        if self.umap_n_neighbors > n_documents - 1:
            changes["umap_n_neighbors"] = max(2, n_documents - 1)
            notes.append(
                f"UMAP n_neighbors {self.umap_n_neighbors} -> "
                f"{changes['umap_n_neighbors']} (only {n_documents} documents)"
            )
        if self.umap_n_components > n_documents - 2:
            changes["umap_n_components"] = max(2, n_documents - 2)
            notes.append(
                f"UMAP n_components {self.umap_n_components} -> "
                f"{changes['umap_n_components']} (only {n_documents} documents)"
            )
        return replace(self, **changes, adaptations=tuple(notes))

    def lexical_params(self) -> Any:
        """The tfidf-svd block's settings (pipeline.represent.representation.LexicalParams), seeded with
        random_state."""
        from pipeline.represent.representation import LexicalParams

        return LexicalParams(
            dims=self.lexical_dims,
            documents_per_dim=self.lexical_documents_per_dim,
            ngram_max=self.lexical_ngram_max,
            min_df=self.lexical_min_df,
            max_df=self.lexical_max_df,
            n_iter=self.lexical_n_iter,
            fit_rows=self.lexical_fit_rows,
            seed=self.random_state,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for the manifest."""
        values = asdict(self)
        values["adaptations"] = list(self.adaptations)
        return values


# File-name words that say what a corpus file holds, not which corpus it is ("iclr2025_abstracts" is ICLR 2025).
GENERIC_NAME_WORDS = frozenset({"abstracts", "abstract", "papers", "paper", "submissions", "corpus", "data", "all"})
MAX_ACRONYM_CHARS = 6


def _name_words(candidate: str) -> list[str]:
    """The words of a file or folder name: runs of letters or digits, generic words (GENERIC_NAME_WORDS) dropped."""
    return [word for word in re.findall(r"[A-Za-z]+|[0-9]+", candidate) if word.lower() not in GENERIC_NAME_WORDS]


def corpus_display_name(input_path: str) -> str:
    """A readable corpus name from its file path, for caches built without ``--name``: the file's stem split into
    words at "_", "-", "." and letter/digit boundaries, generic words dropped (GENERIC_NAME_WORDS); a first word of at
    most 6 letters followed by a number is a venue's acronym and upper-cased, else it is capitalised; the other words
    stay as written. "…/iclr2025_abstracts.parquet" -> "ICLR 2025"; "…/iclr2025/papers.parquet" (a generic stem) ->
    the folder's words, "ICLR 2025"; "acl-2024-long.csv" -> "ACL 2024 long"; "my_refs.bib" -> "My refs";
    "refs.csv.gz" -> "Refs". Never empty: falls back to "corpus"."""
    parts = [part for part in re.split(r"[\\/]", str(input_path).strip()) if part]
    stem = re.sub(r"(\.[A-Za-z0-9]+)(\.gz)?$", "", parts[-1]) if parts else ""  # "x.csv.gz": both suffixes
    for candidate in (stem, parts[-2] if len(parts) > 1 else ""):
        words = _name_words(candidate)
        if not words:
            continue
        acronym = len(words) > 1 and words[0].isalpha() and len(words[0]) <= MAX_ACRONYM_CHARS and words[1].isdigit()
        first = words[0].upper() if acronym else words[0][:1].upper() + words[0][1:]
        return " ".join([first, *words[1:]])
    return "corpus"
