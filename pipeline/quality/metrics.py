"""``topic-atlas evaluate``: how good are the topics and how faithful is the map?

Every metric is a small function on plain arrays, so the build (in memory), this command (on a cache folder)
and ``bench/quality.py`` (on peer models) score the same way. What each one measures and where it comes from:

- ``npmi``: NPMI coherence of each topic's top 10 terms (Bouma 2009; Röder et al. 2015, "Exploring the space
  of topic coherence measures"), computed as gensim's ``CoherenceModel(coherence="c_npmi")`` computes it, with its
  default sliding window of 10 tokens (pipeline.quality.npmi: the same figures from sparse matrix products), averaged
  over topics (outlier topic -1 excluded). The reference corpus is the corpus's own model texts tokenised by
  scikit-learn's default ``CountVectorizer()`` analyzer, stop words kept: every configuration is scored on the same
  tokens, and a stop word in a top list is scored like any other word (it co-occurs with everything, so it drags the
  topic towards 0). Terms the reference tokens lack, such as multi-word terms, are skipped; a topic left with fewer than
  2 scorable terms is skipped and counted. Range [-1, 1]; higher means the terms of a topic occur together more than
  chance.
- ``topic_diversity``: the share of unique terms among all topics' top 25 terms (Dieng, Ruiz & Blei 2020,
  "Topic modeling in embedding spaces"; used in the BERTopic paper, Grootendorst 2022). Range (0, 1]; 1 means no
  two topics share a top term.
- ``outlier_fraction``, ``n_topics``, ``largest_topic_share``: share of documents in topic -1, number of topics
  other than -1, and the largest topic's share of all documents.
- ``trustworthiness_2d``: Venna & Kaski (2001) trustworthiness of the 2D map at k=10, as
  ``sklearn.manifold.trustworthiness(embeddings, map, n_neighbors=10, metric="cosine")`` computes it (cosine in the
  embedding space, Euclidean on the map), evaluated in row blocks so that memory stays O(block x n). Range
  [0, 1]; it penalises map neighbours that are far apart in the embedding space.
- ``knn_recall_2d``: mean over documents of |N_k(embedding) ∩ N_k(map)| / k with k=10, the cosine neighbours in
  the embedding space against the Euclidean neighbours on the map (the "neighbourhood preservation" or kNN
  recall of Lee & Verleysen 2009; Kobak & Berens 2019). 1 means the map keeps every neighbourhood.
- With a categorical reference column (``decision`` for ICLR): ``nmi_reference`` and ``ari_reference``, the
  normalised mutual information and adjusted Rand index of the topics (outliers as one more group) against the
  reference (scikit-learn); ``knn_accuracy_embedding`` and ``knn_accuracy_2d``, the accuracy of a k=10 nearest-
  neighbour classifier of the reference under 10-fold stratified cross-validation on the embeddings (cosine) and
  on the map (Euclidean), next to ``reference_majority_share``, the accuracy of always guessing the commonest value.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import pandas as pd

from pipeline.quality.npmi import (
    REFERENCE_TOKEN,
    EncodedDocuments,
    cached_reference_documents,
    encode_documents,
    topic_npmi,
)
from pipeline.represent.encoders import normalise_rows
from pipeline.schema import OUTLIER_TOPIC
from pipeline.store.layouts import NULL_STORE, StageStore

if TYPE_CHECKING:  # evaluate_cache's argument: the metrics need no cache reading code
    from pipeline.cache import TopicCache

log = logging.getLogger(__name__)

NPMI_TOP_N = 10
DIVERSITY_TOP_N = 25
NEIGHBOURS = 10
CV_FOLDS = 10
# Above this many documents the map and kNN metrics are computed on a seeded random sample of this many documents
# (kNN recall: sampled rows against every document; kNN accuracy: cross-validated within the sample; trustworthiness:
# TRUSTWORTHINESS_SAMPLE rows), so evaluation stays linear in n. The whole conference (11,672) is evaluated in full.
EVALUATION_SAMPLE = 20_000
# Above EVALUATION_SAMPLE documents trustworthiness ranks a seeded sample of this many rows against every document:
# its cost is rows x n x dim, and on the six collections (49,805) the sample's standard error is 0.0005 at 10,000
# rows against 0.0003 at 20,000 (bench/trust_sample.py).
TRUSTWORTHINESS_SAMPLE = 10_000
METRICS_FILE = "metrics.json"
# scikit-learn's StratifiedKFold warns when a class has fewer members than folds; the kNN accuracies keep such classes.
LEAST_POPULATED_CLASS = ".*least populated class.*"
REFERENCE_COLUMNS = ("decision",)  # the flat nmi_reference, knn_accuracy_* ... keys
# Every categorical column the topics and the map are compared with, in metrics["references"][column].
AGREEMENT_COLUMNS = ("primary_area", "decision")

# Scalar metrics in the order the table prints them: (key, short description).
TABLE_ROWS = (
    ("n_documents", "documents"),
    ("n_topics", "topics (without -1)"),
    ("outlier_fraction", "share of documents in topic -1"),
    ("largest_topic_share", "largest topic's share of documents"),
    ("npmi", "NPMI of top 10 terms, mean over topics"),
    ("npmi_topics_skipped", "topics with < 2 scorable terms"),
    ("npmi_terms_scored_mean", "scorable terms per topic (of 10)"),
    ("topic_diversity", "unique share of top 25 terms"),
    ("trustworthiness_2d", "trustworthiness of the 2D map, k=10"),
    ("knn_recall_2d", "10-NN overlap, map vs embedding"),
    ("nmi_reference", "NMI of topics vs reference"),
    ("ari_reference", "ARI of topics vs reference"),
    ("knn_accuracy_embedding", "10-NN accuracy of reference, embedding"),
    ("knn_accuracy_2d", "10-NN accuracy of reference, map"),
    ("reference_majority_share", "accuracy of guessing the commonest value"),
    ("references.primary_area.knn_accuracy_embedding", "10-NN accuracy of primary area, embedding"),
    ("references.primary_area.knn_accuracy_2d", "10-NN accuracy of primary area, map"),
    ("references.primary_area.ami", "AMI of topics vs primary area"),
    ("references.primary_area.majority_share", "commonest primary area's share"),
)


# ---------------------------------------------------------------------------------------------- topic terms


def reference_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Tokenise texts as scikit-learn's default ``CountVectorizer()`` analyzer does (lower case, runs of 2+ word
    characters, stop words kept), with its token pattern applied directly. Returns one token list per text; the
    reference corpus for :func:`npmi_coherence` (which also takes it encoded: pipeline.quality.npmi
    ``reference_documents``)."""
    return [REFERENCE_TOKEN.findall((text or "").lower()) for text in texts]


@dataclass
class Coherence:
    """NPMI coherence of a set of topics.

    Attributes
    ----------
    mean : mean NPMI over the scored topics, NaN when none could be scored.
    per_topic : {topic: NPMI} for the scored topics.
    skipped : topics with fewer than 2 terms present in the reference tokens.
    terms_scored_mean : mean number of terms scored per scored topic (at most ``top_n``).
    """

    mean: float
    per_topic: dict[int, float] = field(default_factory=dict)
    skipped: list[int] = field(default_factory=list)
    terms_scored_mean: float = float("nan")


def _real_topics(topic_terms: Mapping[int, Sequence[str]]) -> dict[int, list[str]]:
    return {
        int(topic): [str(term) for term in terms] for topic, terms in topic_terms.items() if int(topic) != OUTLIER_TOPIC
    }


def npmi_coherence(
    topic_terms: Mapping[int, Sequence[str]], tokens: list[list[str]] | EncodedDocuments, top_n: int = NPMI_TOP_N
) -> Coherence:
    """NPMI coherence (gensim ``c_npmi``, sliding window 10) of each topic's first ``top_n`` terms.

    Parameters
    ----------
    topic_terms : {topic: terms, best first}; topic -1 is ignored.
    tokens : the reference corpus, from :func:`reference_tokens`, or encoded (pipeline.quality.npmi
        ``reference_documents``, ``cached_reference_documents``).
    top_n : how many leading terms of each topic are scored.

    Terms absent from ``tokens`` (multi-word terms, words the reference tokeniser splits) are skipped; a topic
    with fewer than 2 terms left is skipped and listed in ``Coherence.skipped``. Source: Röder, Both & Hinneburg
    (2015); the figures are gensim's (pipeline.quality.npmi computes them without its per-window Python loop).
    """
    encoded = tokens if isinstance(tokens, EncodedDocuments) else encode_documents(tokens)
    vocabulary = set(encoded.words.tolist())
    scorable: dict[int, list[str]] = {}
    skipped: list[int] = []
    for topic, terms in sorted(_real_topics(topic_terms).items()):
        present = [term for term in dict.fromkeys(terms[:top_n]) if term in vocabulary]
        if len(present) >= 2:
            scorable[topic] = present
        else:
            skipped.append(topic)
    if not scorable:
        return Coherence(float("nan"), {}, skipped)
    per_topic = topic_npmi(scorable, encoded)
    terms_scored = float(np.mean([len(terms) for terms in scorable.values()]))
    return Coherence(float(np.mean(list(per_topic.values()))), per_topic, skipped, terms_scored)


def topic_diversity(topic_terms: Mapping[int, Sequence[str]], top_n: int = DIVERSITY_TOP_N) -> float:
    """Share of unique terms among all topics' first ``top_n`` terms (Dieng, Ruiz & Blei 2020).

    ``topic_terms`` is {topic: terms, best first}; topic -1 is ignored. Returns a value in (0, 1], or NaN when
    no topic has a term. Topics with fewer than ``top_n`` terms contribute the terms they have.
    """
    lists = [terms[:top_n] for terms in _real_topics(topic_terms).values()]
    total = sum(len(terms) for terms in lists)
    if total == 0:
        return float("nan")
    return len({term for terms in lists for term in terms}) / total


def topic_shares(topics: Sequence[int] | np.ndarray) -> dict[str, float | int]:
    """``n_topics`` (ids other than -1), ``outlier_fraction`` and ``largest_topic_share`` of an assignment.

    ``topics`` is int, n (one topic id per document, -1 = outlier). Shares are of all n documents.
    """
    topics = np.asarray(topics, dtype=np.int64)
    n = max(len(topics), 1)
    real = topics[topics != OUTLIER_TOPIC]
    sizes = np.unique(real, return_counts=True)[1] if len(real) else np.zeros(0, dtype=np.int64)
    return {
        "n_topics": int(len(sizes)),
        "outlier_fraction": float((topics == OUTLIER_TOPIC).sum() / n),
        "largest_topic_share": float(sizes.max() / n) if len(sizes) else 0.0,
    }


# ---------------------------------------------------------------------------------------------- the 2D map


def map_neighbours(coordinates: np.ndarray, k: int) -> np.ndarray:
    """Indices (int64, n x k) of each point's k nearest other points on the map (Euclidean)."""
    from sklearn.neighbors import NearestNeighbors

    return (
        NearestNeighbors(n_neighbors=k).fit(np.asarray(coordinates, dtype=np.float64)).kneighbors(return_distance=False)
    )


def embedding_neighbours(embeddings: np.ndarray, k: int) -> np.ndarray:
    """Indices (int64, n x k) of each row's k most cosine-similar other rows (exact, via
    pipeline.geometry.neighbors)."""
    from pipeline.geometry.neighbors import cosine_knn

    indices, _ = cosine_knn(normalise_rows(embeddings), k + 1)
    return drop_self(indices, k)


def drop_self(indices: np.ndarray, k: int) -> np.ndarray:
    """From neighbour lists that include each row itself (n x m, m > k), the first k other rows (n x k).

    The row usually comes first, but among exact duplicates it may sit anywhere, so it is removed by value.
    """
    indices = np.asarray(indices, dtype=np.int64)
    others = indices != np.arange(len(indices))[:, None]
    # Stable sort puts the kept entries first, in their original order.
    order = np.argsort(~others, axis=1, kind="stable")
    return np.take_along_axis(indices, order, axis=1)[:, :k]


def trustworthiness(
    embeddings: np.ndarray,
    coordinates: np.ndarray,
    k: int = NEIGHBOURS,
    map_knn: np.ndarray | None = None,
    block_rows: int = 512,
    rows: np.ndarray | None = None,
) -> float:
    """Trustworthiness of a low-dimensional map (Venna & Kaski 2001), cosine in the embedding space.

    T(k) = 1 - 2 / (n k (2n - 3k - 1)) * sum_i sum_{j in U_k(i)} (r(i, j) - k), where U_k(i) are the map's k
    nearest neighbours of i (Euclidean) that are not among its k nearest in the embedding space, and r(i, j) is
    the rank of j among i's embedding-space neighbours by cosine distance. Same value as
    ``sklearn.manifold.trustworthiness(embeddings, coordinates, n_neighbors=k, metric="cosine")``, computed in
    blocks of ``block_rows`` rows instead of three n x n arrays (3.3 GB at n = 11,672).

    Parameters
    ----------
    embeddings : float, n x dim.
    coordinates : float, n x 2 (any dimension).
    map_knn : the map's k nearest neighbours (n x k, from :func:`map_neighbours`), if already computed.
    rows : evaluate only these points (int array), each ranked against all n: an unbiased estimate of the same
        figure for large corpora (see TRUSTWORTHINESS_SAMPLE); None = every point.

    Returns a float in [0, 1]. Raises ValueError when k >= n / 2 (as scikit-learn does).
    """
    n = len(embeddings)
    if k >= n / 2:
        raise ValueError(f"k ({k}) must be less than n / 2 ({n / 2})")
    low = map_knn if map_knn is not None else map_neighbours(coordinates, k)
    return penalties_trustworthiness(trustworthiness_penalties(embeddings, low, rows, block_rows), n, k)


def penalties_trustworthiness(penalties: np.ndarray, n: int, k: int) -> float:
    """T(k) of :func:`trustworthiness` from the penalties of the evaluated rows (:func:`trustworthiness_penalties`)
    of an n-point map: 1 - 2 / (m k (2n - 3k - 1)) * sum(penalties), m the evaluated rows (m = n: Venna & Kaski's
    normalisation)."""
    return 1.0 - int(penalties.sum()) * 2.0 / (len(penalties) * k * (2.0 * n - 3.0 * k - 1.0))


def trustworthiness_penalties(
    embeddings: np.ndarray, map_knn: np.ndarray, rows: np.ndarray | None = None, block_rows: int = 512
) -> np.ndarray:
    """Per evaluated point i (``rows``, or every point), sum_{j in U_k(i)} (r(i, j) - k) of :func:`trustworthiness`,
    k being ``map_knn``'s width (the map's k nearest neighbours, n x k, from :func:`map_neighbours`): int64, one per
    row, 0 where the map's k neighbours are the embedding's. Their spread gives a sampled figure's standard error
    (bench/trust_sample.py)."""
    blocks = PenaltyBlocks(embeddings, map_knn, rows, block_rows)
    run_tasks(blocks.tasks(), 1)
    return blocks.penalties


class PenaltyBlocks:
    """The row blocks of :func:`trustworthiness_penalties` as separate tasks (:meth:`tasks`), so that several threads
    can share one trustworthiness (:func:`run_tasks`): each block is one ``block_rows x n`` matrix product (numpy
    releases the GIL in it) and writes only its own rows of ``penalties``, so the counts do not depend on which thread
    ran which block.

    Attributes
    ----------
    penalties : int64, one per evaluated row; complete once every task has run.
    """

    def __init__(
        self, embeddings: np.ndarray, map_knn: np.ndarray, rows: np.ndarray | None = None, block_rows: int = 512
    ) -> None:
        self.unit = normalise_rows(embeddings)
        self.map_knn = map_knn
        self.evaluated = np.arange(len(embeddings)) if rows is None else np.asarray(rows, dtype=np.int64)
        self.penalties = np.zeros(len(self.evaluated), dtype=np.int64)
        self._block_rows = block_rows

    def tasks(self) -> list[Callable[[], None]]:
        """One task per block of rows, in row order; each fills that block's ``penalties``."""
        return [
            partial(self._count, slice(start, start + self._block_rows))
            for start in range(0, len(self.evaluated), self._block_rows)
        ]

    def _count(self, part: slice) -> None:
        block, k = self.evaluated[part], self.map_knn.shape[1]
        distances = 1.0 - self.unit[block] @ self.unit.T
        distances[np.arange(len(block)), block] = np.inf  # a point is not its own neighbour
        chosen = np.take_along_axis(distances, self.map_knn[block], axis=1)
        # rank of j = 1 + how many points are strictly closer to i than j is; one map neighbour at a time, not as
        # one block x k x n comparison array (256 MB per block at n = 49,805)
        ranks = np.empty(chosen.shape, dtype=np.int64)
        for column in range(chosen.shape[1]):
            ranks[:, column] = 1 + np.count_nonzero(distances < chosen[:, column : column + 1], axis=1)
        self.penalties[part] = np.clip(ranks - k, 0, None).sum(axis=1)


def run_tasks(tasks: Sequence[Callable[[], Any]], threads: int) -> list[Any]:
    """Each task's result, in the tasks' order: run in this thread when ``threads`` is 1, else by that many worker
    threads, each taking the next task as it finishes one (so long tasks listed first balance best). Raises what a
    task raised."""
    if threads <= 1:
        return [task() for task in tasks]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="atlas-metrics") as workers:
        return list(workers.map(lambda task: task(), tasks))


def knn_recall(
    embeddings: np.ndarray,
    coordinates: np.ndarray,
    k: int = NEIGHBOURS,
    embedding_knn: np.ndarray | None = None,
    map_knn: np.ndarray | None = None,
) -> float:
    """Mean share of each document's k cosine neighbours in the embedding space that are also among its k
    Euclidean neighbours on the map (neighbourhood preservation; Lee & Verleysen 2009).

    Parameters
    ----------
    embeddings : float, n x dim.
    coordinates : float, n x 2.
    embedding_knn, map_knn : the two n x k neighbour lists (self excluded), if already computed.

    Returns a float in [0, 1] (1 = every neighbourhood kept). Raises ValueError when k >= n.
    """
    n = len(embeddings)
    if k >= n:
        raise ValueError(f"k ({k}) must be less than the number of documents ({n})")
    high = embedding_knn if embedding_knn is not None else embedding_neighbours(embeddings, k)
    low = map_knn if map_knn is not None else map_neighbours(coordinates, k)
    shared = (high[:, :k, None] == low[:, None, :k]).any(axis=2).sum(axis=1)
    return float(shared.mean() / k)


# ---------------------------------------------------------------------------------------------- a reference


def reference_agreement(topics: Sequence[int] | np.ndarray, reference: Sequence[Any]) -> dict[str, float]:
    """NMI, AMI and ARI (scikit-learn) of the topic assignment against a categorical reference.

    Documents whose reference is missing are left out; outliers (-1) count as one more group. Returns
    ``{"nmi_reference", "ami_reference", "ari_reference"}``; all NaN with fewer than 2 usable documents. AMI is
    NMI corrected for chance (Vinh, Epps & Bailey 2010), which matters when the number of topics differs.
    """
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score, normalized_mutual_info_score

    topics = np.asarray(topics)
    labels = pd.Series(list(reference), dtype=object)
    usable = labels.notna().to_numpy()
    if usable.sum() < 2:
        return {"nmi_reference": float("nan"), "ami_reference": float("nan"), "ari_reference": float("nan")}
    truth = labels[usable].astype(str).to_numpy()
    return {
        "nmi_reference": float(normalized_mutual_info_score(truth, topics[usable])),
        "ami_reference": float(adjusted_mutual_info_score(truth, topics[usable])),
        "ari_reference": float(adjusted_rand_score(truth, topics[usable])),
    }


def knn_accuracy(
    features: np.ndarray,
    reference: Sequence[Any],
    metric: str,
    k: int = NEIGHBOURS,
    folds: int = CV_FOLDS,
    seed: int = 0,
) -> float:
    """Accuracy of a k-nearest-neighbour classifier of ``reference`` from ``features``, by stratified k-fold CV.

    Parameters
    ----------
    features : float, n x d (embeddings with ``metric="cosine"``, map coordinates with ``"euclidean"``).
    reference : n categorical values; missing ones are left out.
    k, folds, seed : neighbours, folds of ``StratifiedKFold(shuffle=True, random_state=seed)``.

    Returns the mean fold accuracy, or NaN when there are fewer than ``folds`` usable documents or only one class.
    Classes rarer than ``folds`` are kept (scikit-learn warns; the warning is silenced).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=LEAST_POPULATED_CLASS)
        return _knn_accuracy(features, reference, metric, k, folds, seed)


def _knn_accuracy(features: np.ndarray, reference: Sequence[Any], metric: str, k: int, folds: int, seed: int) -> float:
    """:func:`knn_accuracy` without silencing scikit-learn's warning about rare classes: for threads, whose caller
    silences it once (``warnings.catch_warnings`` changes the whole process's filters, so threads must not nest it)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    labels = pd.Series(list(reference), dtype=object)
    usable = labels.notna().to_numpy()
    truth = labels[usable].astype(str).to_numpy()
    if len(truth) < max(folds, k + 1) or len(set(truth)) < 2:
        return float("nan")
    classifier = KNeighborsClassifier(n_neighbors=k, metric=metric, algorithm="brute")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = cross_val_score(classifier, np.asarray(features, dtype=np.float32)[usable], truth, cv=splitter)
    return float(np.mean(scores))


def majority_share(reference: Sequence[Any]) -> float:
    """Share of the commonest non-missing value: the accuracy of always guessing it (NaN when none)."""
    labels = pd.Series(list(reference), dtype=object).dropna().astype(str)
    return float(labels.value_counts(normalize=True).iloc[0]) if len(labels) else float("nan")


# ---------------------------------------------------------------------------------------------- everything


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 4)
    return value


def coherence_metrics(
    texts: Sequence[str], topic_terms: Mapping[int, Sequence[str]], store: StageStore = NULL_STORE
) -> dict[str, Any]:
    """The metrics of the topics' terms alone: npmi (mean NPMI of the top terms over ``texts`` as the reference
    corpus, :func:`npmi_coherence`), npmi_topics_skipped, npmi_terms_scored_mean, topic_diversity and npmi_by_topic
    ({topic id as str: NPMI rounded to 4 places}). They need neither the map nor the embeddings. ``store``
    (pipeline.store.layouts) keeps the tokenised reference corpus for a rebuild over the same texts."""
    coherence = npmi_coherence(topic_terms, cached_reference_documents(texts, store))
    return {
        "npmi": coherence.mean,
        "npmi_topics_skipped": len(coherence.skipped),
        "npmi_terms_scored_mean": coherence.terms_scored_mean,
        "topic_diversity": topic_diversity(topic_terms),
        "npmi_by_topic": {str(topic): round(value, 4) for topic, value in coherence.per_topic.items()},
    }


def evaluate_topics(
    texts: Sequence[str],
    topics: Sequence[int] | np.ndarray,
    topic_terms: Mapping[int, Sequence[str]],
    embeddings: np.ndarray | None = None,
    coordinates: np.ndarray | None = None,
    reference: Sequence[Any] | None = None,
    reference_name: str | None = None,
    k: int = NEIGHBOURS,
    knn_indices: np.ndarray | None = None,
    map_figures: Mapping[str, float | None] | None = None,
    references: Mapping[str, Sequence[Any]] | None = None,
    coherence_figures: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """All metrics of one topic model over one corpus, as a JSON-ready dict (see the module docstring).

    Parameters
    ----------
    texts : the n model texts (reference corpus for NPMI).
    topics : int, n; topic per document, -1 = outlier.
    topic_terms : {topic: terms, best first}.
    embeddings : float, n x dim, or None to skip the map and embedding metrics.
    coordinates : float, n x 2 map positions, or None to skip the map metrics.
    reference : n categorical values (e.g. decisions), or None to skip the reference metrics.
    reference_name : the reference column's name, recorded as ``reference_column``.
    k : neighbours for the map and kNN metrics.
    knn_indices : int, n x m (m > k), each row's cosine neighbours in the embedding space, itself included (the
        build's :func:`pipeline.geometry.neighbors.cosine_knn` output), to save computing them again.
    map_figures : the output of :func:`map_metrics` when already known (the build caches it), else computed here.
    references : {column: n categorical values} (from :func:`agreement_references`): each gets a block
        ``metrics["references"][column]`` with nmi, ami, ari, knn_accuracy_embedding, knn_accuracy_2d,
        majority_share and n_classes (the flat keys above describe ``reference`` alone, for older readers).
    coherence_figures : the output of :func:`coherence_metrics` for these texts and terms when already known (the
        build measures it while the map is still being drawn), else computed here.

    Metrics that cannot be computed (too few documents, no map) are None. NaN never appears (JSON has none).
    """
    topics = np.asarray(topics, dtype=np.int64)
    n = len(topics)
    if len(texts) != n:
        raise ValueError(f"{len(texts)} texts for {n} topic assignments")
    metrics: dict[str, Any] = {
        "n_documents": n,
        "k": k,
        "map_metrics_sample": min(n, EVALUATION_SAMPLE),
        "trustworthiness_sample": n if n <= EVALUATION_SAMPLE else TRUSTWORTHINESS_SAMPLE,
        **topic_shares(topics),
    }
    metrics.update(coherence_figures if coherence_figures is not None else coherence_metrics(texts, topic_terms))
    references = {name: values for name, values in (references or {}).items() if has_reference(values)}
    if map_figures is None:
        map_figures = map_metrics(embeddings, coordinates, reference, k, knn_indices, references)
    metrics["trustworthiness_2d"] = map_figures.get("trustworthiness_2d")
    metrics["knn_recall_2d"] = map_figures.get("knn_recall_2d")
    if has_reference(reference):
        metrics["reference_column"] = reference_name
        metrics.update(
            {key: value for key, value in reference_agreement(topics, reference).items() if key != "ami_reference"}
        )
        metrics["knn_accuracy_embedding"] = map_figures.get("knn_accuracy_embedding")
        metrics["knn_accuracy_2d"] = map_figures.get("knn_accuracy_2d")
        metrics["reference_majority_share"] = majority_share(reference)
    metrics = {key: _rounded(value) for key, value in metrics.items()}
    if references:
        metrics["references"] = {
            name: reference_block(topics, values, name, map_figures) for name, values in references.items()
        }
    return metrics


def reference_block(
    topics: np.ndarray, values: Sequence[Any], name: str, map_figures: Mapping[str, float | None]
) -> dict[str, Any]:
    """One column's agreement figures (see evaluate_topics' ``references``), rounded, None where not computable."""
    agreement = reference_agreement(topics, values)
    block = {
        "nmi": agreement["nmi_reference"],
        "ami": agreement["ami_reference"],
        "ari": agreement["ari_reference"],
        "knn_accuracy_embedding": map_figures.get(f"{name}:knn_accuracy_embedding"),
        "knn_accuracy_2d": map_figures.get(f"{name}:knn_accuracy_2d"),
        "majority_share": majority_share(values),
        "n_classes": int(pd.Series(list(values), dtype=object).dropna().nunique()),
    }
    return {key: _rounded(value) for key, value in block.items()}


def agreement_references(documents: pd.DataFrame) -> dict[str, list[Any]]:
    """{column: values} for the AGREEMENT_COLUMNS the documents have with at least 2 distinct values."""
    return {
        column: documents[column].tolist()
        for column in AGREEMENT_COLUMNS
        if column in documents.columns and documents[column].dropna().nunique() >= 2
    }


def has_reference(reference: Sequence[Any] | None) -> TypeGuard[Sequence[Any]]:
    """True when a reference column has at least two distinct non-missing values."""
    return reference is not None and pd.Series(list(reference), dtype=object).dropna().nunique() >= 2


def map_metrics(
    embeddings: np.ndarray | None,
    coordinates: np.ndarray | None,
    reference: Sequence[Any] | None = None,
    k: int = NEIGHBOURS,
    knn_indices: np.ndarray | None = None,
    references: Mapping[str, Sequence[Any]] | None = None,
    threads: int = 1,
) -> dict[str, float | None]:
    """The metrics that depend only on the embeddings, the map and the reference columns, not on the topics:
    trustworthiness_2d, knn_recall_2d, knn_accuracy_embedding, knn_accuracy_2d (of ``reference``), and for each of
    ``references`` ``"<column>:knn_accuracy_embedding"`` and ``"<column>:knn_accuracy_2d"`` (None where they cannot
    be computed).

    They are most of the evaluation's time (about 5 s of 8 on 11,672 titles), so the build caches them with the
    layouts: a rebuild that changes only clustering or topic parameters reuses them. ``threads`` > 1 runs the kNN
    accuracies and the trustworthiness's row blocks (:class:`PenaltyBlocks`), nearly all of the time, in that many
    threads (:func:`run_tasks`): the same figures, sooner when a core is free (the build's map thread passes 2: the
    main thread waits for it at the end). Raises ValueError when ``threads`` < 1.
    """
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    n = 0 if embeddings is None else len(embeddings)
    figures: dict[str, float | None] = {"trustworthiness_2d": None, "knn_recall_2d": None}
    sample = evaluation_sample(n)
    chosen = np.arange(n) if sample is None else sample
    blocks = None
    if embeddings is not None and coordinates is not None and k < n / 2:
        map_knn = map_neighbours(coordinates, k)
        blocks = PenaltyBlocks(embeddings, map_knn, None if sample is None else trustworthiness_sample(n))
        if knn_indices is not None and knn_indices.shape[1] > k:
            embedding_knn = drop_self(knn_indices, k)
        else:
            embedding_knn = embedding_neighbours(embeddings, k)
        figures["knn_recall_2d"] = knn_recall(
            embeddings[chosen], coordinates[chosen], k, embedding_knn=embedding_knn[chosen], map_knn=map_knn[chosen]
        )
    columns = {"": reference, **(references or {})}  # "": the flat knn_accuracy_* keys of ``reference``
    accuracy_keys, accuracy_tasks = reference_accuracy_tasks(embeddings, coordinates, columns, chosen, k)
    with warnings.catch_warnings():  # here, not in the threads (see _knn_accuracy)
        warnings.filterwarnings("ignore", message=LEAST_POPULATED_CLASS)
        results = run_tasks([*accuracy_tasks, *(blocks.tasks() if blocks is not None else [])], threads)
    figures |= {key: None if index is None else results[index] for key, index in accuracy_keys.items()}
    if blocks is not None:
        figures["trustworthiness_2d"] = penalties_trustworthiness(blocks.penalties, n, k)
    return figures


def reference_accuracy_tasks(
    embeddings: np.ndarray | None,
    coordinates: np.ndarray | None,
    columns: Mapping[str, Sequence[Any] | None],
    chosen: np.ndarray,
    k: int = NEIGHBOURS,
) -> tuple[dict[str, int | None], list[Callable[[], float]]]:
    """The kNN accuracies of :func:`map_metrics` as tasks for :func:`run_tasks`: ({figure key: index of its task, or
    None for a figure that cannot be computed}, the tasks).

    ``columns``: name -> values (n); the name "" gives the keys knn_accuracy_embedding and knn_accuracy_2d, any other
    ``"<name>:knn_accuracy_embedding"`` and ``"<name>:knn_accuracy_2d"``. Each is cross-validated over the rows
    ``chosen``, on the unit embeddings and on the map (Euclidean). A column without two distinct values gets no
    ``<name>:`` keys (and "" None figures); a column with the values of one listed before shares its tasks. The tasks
    call the unsilenced _knn_accuracy: run them under a warnings filter for LEAST_POPULATED_CLASS.
    """
    # Euclidean on unit rows ranks neighbours as cosine does (|a - b|^2 = 2 - 2 cos) and takes scikit-learn's
    # matrix-product path: the same accuracy (0.3743 on the titles) in 1.6 s instead of 3.0.
    spaces = {
        "embedding": None if embeddings is None else normalise_rows(embeddings[chosen]),
        "2d": None if coordinates is None else np.asarray(coordinates)[chosen],
    }
    keys: dict[str, int | None] = {}
    tasks: list[Callable[[], float]] = []
    seen: dict[tuple[str, ...], dict[str, int | None]] = {}
    for name, values in columns.items():
        prefix = f"{name}:" if name else ""
        if not has_reference(values):
            if not name:
                keys |= {"knn_accuracy_embedding": None, "knn_accuracy_2d": None}
            continue
        signature = tuple("" if value is None else str(value) for value in values)
        if signature not in seen:
            picked = [values[i] for i in chosen.tolist()]
            seen[signature] = {}
            for space, features in spaces.items():
                seen[signature][space] = None if features is None else len(tasks)
                if features is not None:
                    tasks.append(partial(_knn_accuracy, features, picked, "euclidean", k, CV_FOLDS, 0))
        keys |= {f"{prefix}knn_accuracy_{space}": index for space, index in seen[signature].items()}
    return keys, tasks


def trustworthiness_sample(n: int) -> np.ndarray | None:
    """The rows :func:`map_metrics` ranks for trustworthiness: None (all) up to EVALUATION_SAMPLE documents, else a
    seeded sample of TRUSTWORTHINESS_SAMPLE (:func:`evaluation_sample`)."""
    return None if n <= EVALUATION_SAMPLE else evaluation_sample(n, TRUSTWORTHINESS_SAMPLE)


def evaluation_sample(n: int, size: int = EVALUATION_SAMPLE, seed: int = 0) -> np.ndarray | None:
    """Sorted row numbers of a seeded random sample of ``size`` documents when ``n`` exceeds it, else None (all)."""
    if n <= size:
        return None
    return np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))


def cache_texts(documents: pd.DataFrame) -> list[str]:
    """The model texts of a cache's documents: ``join_title_abstract(model_text(title), model_text(abstract))``."""
    from pipeline.ingest.clean import join_title_abstract, model_text

    def text(value: Any) -> str:
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)

    return [
        join_title_abstract(model_text(text(title)), model_text(text(abstract)))
        for title, abstract in zip(documents["title"], documents["abstract"])
    ]


def reference_column(documents: pd.DataFrame) -> str | None:
    """The first of REFERENCE_COLUMNS that the documents have with at least 2 distinct values, else None."""
    for column in REFERENCE_COLUMNS:
        if column in documents.columns and documents[column].dropna().nunique() >= 2:
            return column
    return None


def evaluate_cache(topic_cache: TopicCache) -> dict[str, Any]:
    """All metrics of a :class:`pipeline.cache.TopicCache` (documents, topics, embeddings); see evaluate_topics."""
    documents, topics = topic_cache.documents, topic_cache.topics
    topic_terms = {int(row.topic): [term for term, _ in row.top_terms] for row in topics.itertuples()}
    column = reference_column(documents)
    return evaluate_topics(
        cache_texts(documents),
        documents["topic"].to_numpy(),
        topic_terms,
        embeddings=topic_cache.embeddings(),
        coordinates=documents[["x", "y"]].to_numpy(dtype=np.float64),
        reference=documents[column].tolist() if column else None,
        reference_name=column,
        references=agreement_references(documents),
    )


def format_table(metrics: Mapping[str, Any], columns: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """A plain-text table of the scalar metrics: one column of values, or one per entry of ``columns``
    ({name: metrics}), in which case ``metrics`` is ignored. Missing values print as "-"."""
    columns = dict(columns) if columns else {"value": metrics}
    width = max(len(name) for name in columns) + 2
    lines = [f"{'metric':<28}" + "".join(f"{name:>{max(width, 10)}}" for name in columns) + "   meaning"]
    for key, meaning in TABLE_ROWS:
        values = [lookup(column, key) for column in columns.values()]
        if all(value is None for value in values):
            continue
        cells = "".join(f"{_format_value(value):>{max(width, 10)}}" for value in values)
        lines.append(f"{key.replace('references.primary_area.', 'area_'):<28}{cells}   {meaning}")
    return "\n".join(lines)


def lookup(metrics: Mapping[str, Any], key: str) -> Any:
    """A metric by its key; a dotted key reads nested blocks ("references.primary_area.ami"). None when absent."""
    value: Any = metrics
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _format_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
