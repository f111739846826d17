"""What an edit of an atlas recomputes for the topics it changed, without a refit (pipeline.operations.edit).

The papers keep their vectors, map positions and neighbours; only the descriptions of the topics whose papers
changed are made again, by the build's own rules:

- c-TF-IDF (:func:`class_tfidf`): BERTopic's ``ClassTfidfTransformer`` formula (term counts summed per topic, rows
  L1-normalised, square-rooted with ``reduce_frequent_words``, times the IDF ``log(1 + A / f)`` or its BM25 form,
  A the mean words per topic, f a term's count over all topics), on the saved model's vocabulary
  (``model/ctfidf_config.json``, pipeline.adapters.bertopic_model.saved_vocabulary) and the build's tokens
  (pipeline.text.vocabulary.vectorizer_for_vocabulary). Written out here rather than through BERTopic so that the page
  can run an edit without importing BERTopic or the fitting code (the import-linter contract of pyproject.toml).
- terms (:func:`topic_terms`): the build's exclusive, co-occurring terms (pipeline.text.vocabulary
  .select_coherent_terms over sentence presence, as pipeline.topics.model.CoherentTerms does); plain c-TF-IDF for
  the outliers and for atlases built with another representation.
- names (:func:`topic_names`): the build's phrase namer (pipeline.topics.naming.names.choose_names) over the
  changed topics only, unique among the other topics' labels; the term label (pipeline.topics.labels) as fallback.
- representatives, label positions, the hierarchy (:func:`hierarchy_rows`: Ward linkage of the topics' c-TF-IDF
  cosine distances, as BERTopic's ``hierarchical_topics``), the changed topics' subtopics (pipeline.topics.subtopics)
  and their rows of the topics per decision class (:func:`per_class_rows`, BERTopic's ``global_tuning``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from pipeline import cache
from pipeline.cache import HIERARCHY_COLUMNS, OUTLIER_TOPIC, TopicCache
from pipeline.runtime.errors import TargetError

PER_CLASS_TERMS = 5  # terms per (topic, class) row, as the build's topics_per_class table holds
HIERARCHY_NAME_TERMS = 5  # a merged node's name: its first c-TF-IDF terms joined by "_", as BERTopic names it


@dataclass
class EditCorpus:
    """The atlas's papers as the topic descriptions read them.

    Attributes
    ----------
    texts : the model texts (n; pipeline.quality.evaluation.cache_texts), in documents.parquet order.
    titles : each paper's title, "" where missing (n).
    counts : CSR int64, n x terms: each paper's counts of the saved vocabulary's terms.
    terms : the vocabulary (terms), column order.
    vectorizer : the pipeline.text.vocabulary.FixedVocabularyVectorizer that counted them.
    params : the manifest's build parameters.
    """

    texts: list[str]
    titles: list[str]
    counts: sp.csr_matrix
    terms: np.ndarray
    vectorizer: Any
    params: dict[str, Any]
    _phrases: Any = field(default=None, repr=False)
    _presence: Any = field(default=None, repr=False)

    def phrases(self) -> Any:
        """The papers' candidate phrases (pipeline.topics.naming.phrase_counts.count_phrases: about 3 CPU s per 10,000
        papers), counted once and kept in the build's layout store (pipeline.topics.naming.stored) for the next
        edit of the same papers."""
        if self._phrases is None:
            from pipeline.store.layouts import LayoutStore
            from pipeline.topics.naming.phrase_counts import count_phrases
            from pipeline.topics.naming.stored import counts_from_arrays, counts_to_arrays, phrase_counts_key

            arrays = LayoutStore(layouts_folder()).cached(
                phrase_counts_key(self.texts, self.titles),
                lambda: counts_to_arrays(count_phrases(self.texts, self.titles)),
            )
            self._phrases = counts_from_arrays(arrays)
        return self._phrases

    def presence(self) -> sp.csc_matrix:
        """Binary sentences x terms (CSC) of every paper's sentences: what the coherent terms' co-occurrence reads."""
        if self._presence is None:
            found = self.vectorizer.sentence_presence_of(self.texts)
            if found is None:
                from pipeline.text.words import split_sentences

                sentences = [part for text in self.texts for part in split_sentences(text)]
                found = (self.vectorizer.transform(sentences) > 0).astype(np.float32)
            self._presence = sp.csc_matrix(found)
        return self._presence


def layouts_folder() -> Path:
    """The build's layout store (pipeline.store.layouts): ``layouts/`` beside the embedding cache
    ($ATLAS_EMBEDDING_CACHE, else .cache/embeddings.sqlite; pipeline.runtime.settings)."""
    from pipeline.runtime.settings import settings

    return settings().embedding_cache.parent / "layouts"


_MEMO: OrderedDict[str, EditCorpus] = OrderedDict()  # corpus_key -> EditCorpus: the page's server edits again
_MEMO_LOCK = threading.Lock()
MEMO_SIZE = 2


def corpus_key(atlas: TopicCache) -> str:
    """SHA-256 (hex) over what an :class:`EditCorpus` is made of: the papers' ids, titles and abstracts in order,
    the saved vocabulary (``model/ctfidf_config.json``) and the build parameters."""
    digest = hashlib.sha256()
    for column in ("doc_id", "title", "abstract"):
        values = atlas.documents[column].fillna("").astype(str)
        digest.update("\x1e".join(values).encode("utf-8", "surrogatepass"))
    config = atlas.path / cache.MODEL_DIR / "ctfidf_config.json"
    digest.update(config.read_bytes() if config.is_file() else b"")
    digest.update(json.dumps(atlas.manifest.get("params"), sort_keys=True, default=str).encode())
    return digest.hexdigest()


def edit_corpus(atlas: TopicCache) -> EditCorpus:
    """The :class:`EditCorpus` of an atlas: model texts from its titles and abstracts, counted with the saved
    model's vocabulary; kept in this process for the next edit of the same papers (MEMO_SIZE corpora). Raises
    TargetError (one line) when ``model/ctfidf_config.json`` is missing or holds no vocabulary."""
    key = corpus_key(atlas)
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    corpus = made_corpus(atlas)
    with _MEMO_LOCK:
        _MEMO[key] = corpus
        while len(_MEMO) > MEMO_SIZE:
            _MEMO.popitem(last=False)
    return corpus


def made_corpus(atlas: TopicCache) -> EditCorpus:
    """:func:`edit_corpus` without the memo."""
    from pipeline.adapters.bertopic_model import saved_vocabulary
    from pipeline.quality.evaluation import cache_texts
    from pipeline.text.vocabulary import vectorizer_for_vocabulary

    try:
        saved = saved_vocabulary(atlas.path / cache.MODEL_DIR)
    except (OSError, ValueError, KeyError) as error:
        raise TargetError(
            f"{atlas.path}: cannot read the saved topic model's vocabulary ({error}); rebuild the atlas to edit it"
        ) from error
    texts = cache_texts(atlas.documents)
    titles = atlas.documents["title"].fillna("").astype(str).tolist()
    vectorizer = vectorizer_for_vocabulary(texts, saved.terms, saved.stop_words, saved.ngram_max)
    counts = sp.csr_matrix(vectorizer.transform(texts), dtype=np.int64)
    return EditCorpus(
        texts, titles, counts, np.asarray(saved.terms, dtype=object), vectorizer, dict(atlas.manifest["params"])
    )


def indicator(topics: np.ndarray, ids: Sequence[int]) -> sp.csr_matrix:
    """CSR len(ids) x n: 1 where paper j is in topic ids[i]."""
    row_of = {int(topic): row for row, topic in enumerate(ids)}
    rows = np.asarray([row_of.get(int(topic), -1) for topic in topics], dtype=np.int64)
    keep = np.flatnonzero(rows >= 0)
    data = np.ones(len(keep))
    return sp.csr_matrix((data, (rows[keep], keep)), shape=(len(ids), len(topics)))


def idf_of(topic_counts: sp.csr_matrix, bm25: bool) -> np.ndarray:
    """BERTopic's ClassTfidfTransformer.fit: per term, log(1 + A / f) (BM25: log(1 + (A - f + 0.5) / (f + 0.5))), A
    the mean words per row of ``topic_counts`` (rows x terms) as an int, f the term's count over the rows (a term
    no row counts gets f = 1, where BERTopic would divide by zero)."""
    frequency = np.maximum(np.asarray(topic_counts.sum(axis=0)).ravel().astype(np.float64), 1.0)
    average = float(int(np.asarray(topic_counts.sum(axis=1)).ravel().mean())) if topic_counts.shape[0] else 0.0
    if bm25:
        return np.log(1.0 + (average - frequency + 0.5) / (frequency + 0.5))
    return np.log(average / frequency + 1.0)


def class_tfidf(counts: sp.csr_matrix, idf: np.ndarray, reduce_frequent: bool) -> sp.csr_matrix:
    """BERTopic's ClassTfidfTransformer.transform: rows of ``counts`` (rows x terms) L1-normalised, square-rooted
    when ``reduce_frequent``, times ``idf`` per term. Float64 CSR of the same shape."""
    matrix = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    totals = np.asarray(matrix.sum(axis=1)).ravel()
    matrix = sp.csr_matrix(sp.diags(1.0 / np.where(totals > 0, totals, 1.0), dtype=np.float64) @ matrix)
    if reduce_frequent:
        matrix.data = np.sqrt(matrix.data)
    return sp.csr_matrix(matrix @ sp.diags(idf, dtype=np.float64))


@dataclass
class TopicWeights:
    """The c-TF-IDF of every topic of an assignment: ``ids`` (sorted, -1 first when present), ``weights`` (CSR,
    len(ids) x terms), ``counts`` (their summed term counts, CSR) and ``idf`` (terms)."""

    ids: list[int]
    weights: sp.csr_matrix
    counts: sp.csr_matrix
    idf: np.ndarray
    reduce_frequent: bool = True


def topic_weights(corpus: EditCorpus, topics: np.ndarray) -> TopicWeights:
    """:class:`TopicWeights` of the papers' ``topics`` (n int, -1 outliers) with the build's settings."""
    ids = sorted({int(topic) for topic in topics})
    counts = sp.csr_matrix(indicator(topics, ids) @ corpus.counts)
    idf = idf_of(counts, bool(corpus.params.get("bm25_weighting", False)))
    reduce = bool(corpus.params.get("reduce_frequent_words", True))
    weights = class_tfidf(counts, idf, reduce)
    weights.sum_duplicates()
    return TopicWeights(ids, weights, counts, idf, reduce)


def plain_terms(weights: sp.csr_matrix, row: int, terms: np.ndarray, n_terms: int) -> list[list[Any]]:
    """The ``n_terms`` heaviest terms of ``row`` as [term, weight] pairs (weight > 0), heaviest first."""
    from pipeline.text.vocabulary import ranked_terms

    columns, values = ranked_terms(weights, row)
    return [[str(terms[column]), float(value)] for column, value in zip(columns[:n_terms], values[:n_terms])]


def topic_terms(corpus: EditCorpus, found: TopicWeights, wanted: Collection[int]) -> dict[int, list[list[Any]]]:
    """{topic: [[term, c-TF-IDF weight], ...]} for the topics ``wanted`` (ids of ``found``), as the build chooses
    them (module docstring). Empty terms are left out."""
    from pipeline.text.vocabulary import select_coherent_terms, term_owners

    params = corpus.params
    n_terms = int(params.get("top_n_words", 25))
    coherent = params.get("representation", "coherent") == "coherent"
    real_rows = [row for row, topic in enumerate(found.ids) if topic != OUTLIER_TOPIC]
    exclusive = bool(params.get("exclusive_terms", True))
    owner = term_owners(found.weights, real_rows) if coherent and exclusive and len(real_rows) > 1 else None
    result: dict[int, list[list[Any]]] = {}
    for row, topic in enumerate(found.ids):
        if topic not in wanted:
            continue
        if topic == OUTLIER_TOPIC or not coherent:
            result[topic] = plain_terms(found.weights, row, corpus.terms, n_terms)
            continue
        chosen = select_coherent_terms(
            found.weights,
            corpus.presence(),
            row,
            real_rows,
            n_terms,
            int(params.get("n_candidate_terms", 40)),
            float(params.get("coherence_weight", 3.0)),
            exclusive=exclusive,
            owner=owner,
        )
        pairs = [[str(corpus.terms[column]), float(found.weights[row, column])] for column in chosen]
        result[topic] = pairs or plain_terms(found.weights, row, corpus.terms, n_terms)
    return {topic: [pair for pair in pairs if str(pair[0]).strip()] for topic, pairs in result.items()}


def topic_names(
    corpus: EditCorpus,
    topics: np.ndarray,
    wanted: Collection[int],
    terms: Mapping[int, list[list[Any]]],
    other_labels: Sequence[str],
) -> dict[int, tuple[str, str]]:
    """{topic: (name, subtitle)} for the topics ``wanted`` of the papers' ``topics`` (n): the build's phrase names
    (pipeline.topics.naming.names.choose_names, each phrase scored against the whole atlas), never one of
    ``other_labels`` (the unchanged topics' labels); the term label of ``terms`` where no phrase fits."""
    from pipeline.topics.labels import make_labels
    from pipeline.topics.naming.assign import SUBTITLE_SEPARATOR
    from pipeline.topics.naming.names import choose_names

    members = np.where(np.isin(topics, list(wanted)), topics, OUTLIER_TOPIC).astype(np.int64)
    rows = {topic: np.flatnonzero(members == topic) for topic in wanted}
    fallback = make_labels(
        {topic: [term for term, _ in terms.get(topic, [])] for topic in wanted},
        documents={topic: [corpus.texts[row] for row in found] for topic, found in rows.items()},
    )
    taken = [label for label in other_labels if label not in fallback.values()]
    names = choose_names(corpus.phrases(), members.tolist(), taken=taken, fallback=fallback)
    return {
        topic: (names[topic].name, SUBTITLE_SEPARATOR.join(names[topic].subtitle))
        if topic in names
        else (fallback.get(topic, f"Topic {topic}"), "")
        for topic in wanted
    }


def representatives(
    embeddings: np.ndarray, topics: np.ndarray, doc_ids: Sequence[str], topic: int, k: int
) -> list[str]:
    """The ids of the ``k`` papers of ``topic`` most cosine-similar to its mean vector, best first (the build's
    pipeline.topics.model.representative_documents for one topic). ``embeddings``: n x dim, unit rows."""
    members = np.flatnonzero(topics == topic)
    centroid = embeddings[members].mean(axis=0)
    scores = embeddings[members] @ (centroid / (np.linalg.norm(centroid) or 1.0))
    return [str(doc_ids[row]) for row in members[np.argsort(-scores, kind="stable")[:k]]]


def hierarchy_rows(found: TopicWeights, terms: np.ndarray, labels: Mapping[int, str], first_node: int) -> pd.DataFrame:
    """The topic merge tree (HIERARCHY_COLUMNS) of the real topics of ``found``: Ward linkage (optimal ordering) of
    their c-TF-IDF rows' cosine distances, as BERTopic's ``hierarchical_topics`` makes it; leaves are topic ids named
    by ``labels``, merged node i is ``first_node + i`` (above every topic id the atlas used), named by the first
    HIERARCHY_NAME_TERMS c-TF-IDF terms of its topics' summed counts. Empty (with its columns) below two topics."""
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    real = [row for row, topic in enumerate(found.ids) if topic != OUTLIER_TOPIC]
    if len(real) < 2:
        return pd.DataFrame(columns=HIERARCHY_COLUMNS)
    weights = found.weights[real]
    norms = np.sqrt(np.asarray(weights.multiply(weights).sum(axis=1)).ravel())
    unit = sp.diags(1.0 / np.where(norms > 0, norms, 1.0), dtype=np.float64) @ weights
    distance = np.clip(1.0 - (unit @ unit.T).toarray(), 0.0, None)
    distance = (distance + distance.T) / 2.0
    np.fill_diagonal(distance, 0.0)
    merges = linkage(squareform(distance, checks=False), "ward", optimal_ordering=True)
    leaf_ids = [found.ids[row] for row in real]
    nodes: list[tuple[int, str, list[int], Any]] = [
        (topic, labels.get(topic, f"Topic {topic}"), [topic], found.counts[row]) for topic, row in zip(leaf_ids, real)
    ]
    rows = []
    for index, (left, right, height, _) in enumerate(merges):
        first, second = nodes[int(left)], nodes[int(right)]
        summed = sp.csr_matrix(first[3] + second[3])
        name = "_".join(
            term
            for term, _ in plain_terms(
                class_tfidf(summed, found.idf, found.reduce_frequent), 0, terms, HIERARCHY_NAME_TERMS
            )
        )
        members = sorted(first[2] + second[2])
        nodes.append((first_node + index, name or f"node {first_node + index}", members, summed))
        rows.append(
            (first_node + index, nodes[-1][1], first[0], first[1], second[0], second[1], float(height), members)
        )
    tree = pd.DataFrame(rows, columns=HIERARCHY_COLUMNS)
    return tree.iloc[::-1][HIERARCHY_COLUMNS].reset_index(drop=True)  # the root first, as BERTopic lists it


def per_class_rows(
    corpus: EditCorpus, found: TopicWeights, topics: np.ndarray, classes: Sequence[Any], wanted: Collection[int]
) -> pd.DataFrame:
    """Rows of topics_per_class.parquet (topic, class, frequency, terms) for the topics ``wanted``: per class present
    among a topic's papers, their count and the first PER_CLASS_TERMS terms of the mean of the topic's c-TF-IDF and
    its c-TF-IDF within the class (BERTopic's ``topics_per_class(global_tuning=True)``)."""
    reduce = bool(corpus.params.get("reduce_frequent_words", True))
    labels = pd.Series(list(classes), dtype=object)
    rows = []
    for row, topic in enumerate(found.ids):
        if topic not in wanted:
            continue
        for value in sorted({str(value) for value in labels[topics == topic].dropna() if str(value)}):
            members = np.flatnonzero((topics == topic) & (labels.astype(str).to_numpy() == value))
            within = class_tfidf(sp.csr_matrix(corpus.counts[members].sum(axis=0)), found.idf, reduce)
            tuned = sp.csr_matrix((found.weights[row] + within) / 2.0)
            picked = plain_terms(tuned, 0, corpus.terms, PER_CLASS_TERMS)
            rows.append((int(topic), value, len(members), [term for term, _ in picked]))
    return pd.DataFrame(rows, columns=["topic", "class", "frequency", "terms"])


def changed_subtopics(
    corpus: EditCorpus,
    topics: np.ndarray,
    embeddings: np.ndarray,
    points: np.ndarray,
    wanted: Collection[int],
    labels: Mapping[int, str],
    first_id: int,
) -> tuple[np.ndarray, pd.DataFrame]:
    """(subtopic per paper, n int64, -1 for papers outside the ``wanted`` topics or in one without subtopics; their
    rows of subtopics.parquet) for the ``wanted`` topics cut and named again by the build's rule
    (pipeline.topics.subtopics), their ids numbered from ``first_id`` (unique in the atlas)."""
    from pipeline.topics.subtopics import cut_subtopics, name_subtopics, subtopic_table

    masked = np.where(np.isin(topics, list(wanted)), topics, OUTLIER_TOPIC).astype(np.int64)
    parts = cut_subtopics(masked, embeddings, points, int(corpus.params.get("random_state", 42)))
    if not (parts >= 0).any():
        return parts, pd.DataFrame(columns=cache.SUBTOPIC_COLUMNS)
    parts = np.where(parts >= 0, parts + first_id, -1).astype(np.int64)
    names = name_subtopics(corpus.phrases(), masked, parts, labels)
    return parts, subtopic_table(parts, masked, points, names)
