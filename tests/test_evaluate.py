"""Quality metrics on tiny inputs with known answers, the quality levers of the topic model, the evaluate stage and
command, and robustness of the topics to the order of the input rows."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.manifold import trustworthiness as sklearn_trustworthiness
from sklearn.metrics import adjusted_rand_score

from pipeline import cache
from pipeline.quality.agreement import reference_agreement
from pipeline.quality.evaluation import evaluate_cache, evaluate_topics
from pipeline.quality.map_metrics import (
    EVALUATION_SAMPLE,
    TRUSTWORTHINESS_SAMPLE,
    map_metrics,
    penalty_block_rows,
    trustworthiness_sample,
)
from pipeline.quality.metric_table import format_table
from pipeline.quality.neighbour_metrics import (
    PenaltyBlocks,
    drop_self,
    knn_accuracy,
    knn_recall,
    map_neighbours,
    trustworthiness,
    trustworthiness_penalties,
)
from pipeline.quality.topic_metrics import npmi_coherence, reference_tokens, topic_diversity, topic_shares
from pipeline.runtime.parquet import read_frame
from pipeline.runtime.tasks import run_tasks

# ------------------------------------------------------------------------------------------------ topic terms


def test_topic_diversity_is_the_share_of_unique_terms():
    assert topic_diversity({0: ["a", "b"], 1: ["a", "c"]}) == pytest.approx(3 / 4)
    assert topic_diversity({0: ["a", "b"], 1: ["c", "d"], -1: ["a", "b"]}) == 1.0  # the outlier topic is ignored
    assert topic_diversity({0: list("abcdefghij"), 1: list("abcdefghij")}, top_n=5) == 0.5
    assert math.isnan(topic_diversity({-1: ["a"]}))


def test_reference_tokens_keep_stop_words_and_split_hyphens():
    assert reference_tokens(["The fine-tuning of a model, again."]) == [
        ["the", "fine", "tuning", "of", "model", "again"]
    ]


def test_npmi_is_high_for_terms_that_always_cooccur_and_low_for_terms_that_never_do():
    tokens = reference_tokens(["apple banana"] * 5 + ["cherry date"] * 5)
    coherence = npmi_coherence({0: ["apple", "banana"], 1: ["apple", "cherry"]}, tokens)
    assert coherence.per_topic[0] == pytest.approx(1.0, abs=1e-6)
    assert coherence.per_topic[1] < -0.9
    assert coherence.mean == pytest.approx((coherence.per_topic[0] + coherence.per_topic[1]) / 2)
    assert coherence.skipped == [] and coherence.terms_scored_mean == 2.0


def test_npmi_skips_terms_the_reference_lacks_and_topics_left_with_one_term():
    tokens = reference_tokens(["apple banana cherry"] * 4 + ["date elder"] * 4)
    coherence = npmi_coherence(
        {0: ["apple pie", "apple", "banana"], 1: ["date", "fig tree"], -1: ["apple", "banana"]}, tokens
    )
    assert list(coherence.per_topic) == [0]  # "apple pie" skipped, topic 0 scored on 2 terms
    assert coherence.skipped == [1]
    assert coherence.terms_scored_mean == 2.0
    assert math.isnan(npmi_coherence({0: ["fig"]}, tokens).mean)


def test_topic_shares():
    shares = topic_shares([-1, 0, 0, 0, 1, -1, 2, 2, 0, 1])
    assert shares == {"n_topics": 3, "outlier_fraction": 0.2, "largest_topic_share": 0.4}
    assert topic_shares([-1, -1]) == {"n_topics": 0, "outlier_fraction": 1.0, "largest_topic_share": 0.0}


# ------------------------------------------------------------------------------------------------ the 2D map


def circle(n: int) -> np.ndarray:
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([np.cos(angles), np.sin(angles)])


def test_a_map_identical_to_the_embedding_is_perfectly_faithful():
    points = circle(60)
    assert knn_recall(points, points, k=10) == 1.0
    assert trustworthiness(points, points, k=10) == pytest.approx(1.0)


def test_a_random_map_keeps_few_neighbours():
    rng = np.random.default_rng(0)
    embeddings, coordinates = rng.normal(size=(200, 16)), rng.normal(size=(200, 2))
    assert knn_recall(embeddings, coordinates, k=10) < 0.15
    assert trustworthiness(embeddings, coordinates, k=10) < 0.7


def test_trustworthiness_equals_scikit_learn():
    rng = np.random.default_rng(1)
    embeddings = rng.normal(size=(150, 12))
    coordinates = embeddings[:, :2] + 0.3 * rng.normal(size=(150, 2))
    expected = sklearn_trustworthiness(embeddings, coordinates, n_neighbors=10, metric="cosine")
    assert trustworthiness(embeddings, coordinates, k=10, block_rows=37) == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ValueError):
        trustworthiness(embeddings[:15], coordinates[:15], k=10)
    rows = np.array([3, 40, 41, 99, 149])
    map_knn = map_neighbours(coordinates, 10)
    # One row a block on both sides: a row's distances are then the same matrix product whichever rows are asked for
    # (a product of another shape may round a near-tie the other way on another CPU's BLAS kernel).
    penalties = trustworthiness_penalties(embeddings, map_knn, rows=rows, block_rows=1)
    every = trustworthiness_penalties(embeddings, map_knn, block_rows=1)
    assert penalties.tolist() == every[rows].tolist() and (every > 0).all()
    scale = 2.0 / (10 * (2.0 * 150 - 31.0))
    assert trustworthiness(embeddings, coordinates, 10, rows=rows) == pytest.approx(1 - penalties.mean() * scale)


def test_threads_sharing_the_penalty_blocks_count_each_row_once():
    """Four threads running the 3-row blocks of one PenaltyBlocks give the single thread's penalties, row for row."""
    rng = np.random.default_rng(2)
    embeddings = rng.normal(size=(400, 24))
    map_knn = map_neighbours(embeddings[:, :2] + 0.5 * rng.normal(size=(400, 2)), 10)
    rows = np.sort(rng.choice(400, size=101, replace=False))
    # the same blocks in one thread: blocks of another size may round a near-tie the other way on another CPU
    alone = trustworthiness_penalties(embeddings, map_knn, rows=rows, block_rows=3)
    shared = PenaltyBlocks(embeddings, map_knn, rows=rows, block_rows=3)
    assert len(shared.tasks()) == 34 and run_tasks(shared.tasks(), 4) == [None] * 34
    assert shared.penalties.tolist() == alone.tolist() and alone.sum() > 0


def test_map_metrics_in_two_threads_equal_those_in_one(slice_cache: Path):
    """The build measures its map with two threads (MAP_METRICS_THREADS): every figure as one thread gives it."""
    topic_cache = cache.read_cache(slice_cache)
    documents = topic_cache.documents
    arguments = (topic_cache.embeddings(), documents[["x", "y"]].to_numpy(), documents["decision"].tolist())
    references = {"decision": arguments[2], "title": documents["title"].str.len().gt(80).tolist(), "none": None}
    one = map_metrics(*arguments, references=references)
    two = map_metrics(*arguments, references=references, threads=2)
    assert two == one and one["trustworthiness_2d"] > 0.5 and None not in one.values()
    assert list(one) == [
        "trustworthiness_2d",
        "knn_recall_2d",
        "knn_accuracy_embedding",
        "knn_accuracy_2d",
        "decision:knn_accuracy_embedding",
        "decision:knn_accuracy_2d",
        "title:knn_accuracy_embedding",
        "title:knn_accuracy_2d",
    ]
    # each column's figure is its own labels' accuracy (two columns' figures may happen to be equal)
    titles_on_map = knn_accuracy(arguments[1], references["title"], metric="euclidean")
    assert one["decision:knn_accuracy_2d"] == one["knn_accuracy_2d"] and one["title:knn_accuracy_2d"] == titles_on_map
    assert map_metrics(None, arguments[1], None, references=references)["knn_accuracy_embedding"] is None
    with pytest.raises(ValueError, match="threads"):
        map_metrics(*arguments, threads=0)


def test_trustworthiness_blocks_shrink_only_above_32768_documents_and_give_the_same_figures(
    slice_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    """Above 32,768 documents a trustworthiness block holds fewer than 512 rows (at most 2**24 similarities); the
    figures do not depend on the blocks: a budget of 20 rows gives the 512-row blocks' figures on the slice."""
    import pipeline.quality.map_metrics as map_metrics_module

    assert penalty_block_rows(10) == penalty_block_rows(32_768) == 512 > penalty_block_rows(32_769)
    assert penalty_block_rows(285_717) == 58 and penalty_block_rows(10**9) == 16
    topic_cache = cache.read_cache(slice_cache)
    arguments = (topic_cache.embeddings(), topic_cache.documents[["x", "y"]].to_numpy())
    whole = map_metrics(*arguments, threads=2)
    monkeypatch.setattr(map_metrics_module, "PENALTY_BLOCK_ELEMENTS", 20 * len(arguments[0]))
    assert penalty_block_rows(len(arguments[0])) == 20
    assert map_metrics(*arguments, threads=2) == whole and (whole["trustworthiness_2d"] or 0.0) > 0.5


def test_trustworthiness_ranks_a_seeded_sample_only_above_the_evaluation_sample():
    assert trustworthiness_sample(EVALUATION_SAMPLE) is None
    sample = trustworthiness_sample(EVALUATION_SAMPLE + 1)
    assert len(np.unique(sample)) == TRUSTWORTHINESS_SAMPLE < EVALUATION_SAMPLE
    assert np.array_equal(sample, np.sort(sample)) and sample.max() <= EVALUATION_SAMPLE
    assert np.array_equal(sample, trustworthiness_sample(EVALUATION_SAMPLE + 1))


def test_drop_self_removes_each_row_wherever_it_sits():
    indices = np.array([[0, 3, 2], [2, 1, 0], [0, 1, 2]])
    assert drop_self(indices, 2).tolist() == [[3, 2], [2, 0], [0, 1]]


# ------------------------------------------------------------------------------------------------ a reference


def test_reference_agreement_is_one_for_identical_partitions_and_skips_missing():
    topics = [0, 0, 1, 1, 2, 2]
    perfect = reference_agreement(topics, ["a", "a", "b", "b", "c", "c"])
    assert perfect == {
        "nmi_reference": pytest.approx(1.0),
        "ami_reference": pytest.approx(1.0),
        "ari_reference": pytest.approx(1.0),
    }
    with_missing = reference_agreement(topics + [5], ["a", "a", "b", "b", "c", "c", None])
    assert with_missing["ari_reference"] == pytest.approx(1.0)


def test_knn_accuracy_on_separated_groups_and_too_few_documents():
    rng = np.random.default_rng(2)
    features = np.vstack([rng.normal(0, 0.1, size=(30, 3)) + [5, 0, 0], rng.normal(0, 0.1, size=(30, 3)) + [0, 5, 0]])
    labels = ["Poster"] * 30 + ["Reject"] * 30
    assert knn_accuracy(features, labels, "cosine") == 1.0
    assert math.isnan(knn_accuracy(features[:5], labels[:5], "euclidean"))


def test_evaluate_topics_is_json_ready_and_skips_what_it_cannot_measure():
    texts = [
        "graph neural networks on molecules",
        "graph networks for molecules",
        "coral reefs and ocean acidification",
        "ocean reefs bleach",
    ]
    metrics = evaluate_topics(
        texts,
        [0, 0, 1, 1],
        {0: ["graph", "molecules"], 1: ["reefs", "ocean"]},
        np.eye(4),
        circle(4),
        reference=["a", "b", "a", "b"],
    )
    json.dumps(metrics, allow_nan=False)
    assert metrics["n_topics"] == 2 and metrics["topic_diversity"] == 1.0
    assert metrics["trustworthiness_2d"] is None and metrics["knn_recall_2d"] is None  # k=10 needs more than 20 papers
    assert metrics["knn_accuracy_embedding"] is None  # fewer papers than folds
    with pytest.raises(ValueError):
        evaluate_topics(texts, [0, 0, 1], {0: ["graph"]})


def test_format_table_lists_the_scalar_metrics():
    table = format_table({}, {"ours": {"npmi": 0.1, "n_topics": 3}, "stock": {"npmi": None, "n_topics": 2}})
    assert "npmi" in table and "-" in table.splitlines()[2] and "npmi_by_topic" not in table


# ------------------------------------------------------------------------------------------------ quality levers


def test_coherent_term_selection_is_exclusive_and_prefers_co_occurring_terms():
    from pipeline.text.vocabulary import select_coherent_terms

    # Terms: 0 "graph" (topic 0), 1 "node" (co-occurs with graph), 2 "noise" (weighty, never with graph),
    # 3 "shared" (weighs more in topic 1), 4 "reef" (topic 1).
    weights = np.array([[1.0, 0.5, 0.6, 0.4, 0.0], [0.0, 0.0, 0.0, 0.9, 1.0]])
    presence = sp.csr_matrix(
        np.array([[1, 1, 0, 0, 0], [1, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 1]], dtype=np.float32)
    )
    chosen = select_coherent_terms(
        weights, presence, row=0, rows=[0, 1], n_terms=2, n_candidates=10, coherence_weight=3.0
    )
    assert chosen == [0, 1]  # "node" beats the heavier "noise"; "shared" belongs to topic 1
    plain = select_coherent_terms(
        weights, presence, row=0, rows=[0, 1], n_terms=3, coherence_weight=0.0, exclusive=False
    )
    assert plain == [0, 2, 1]


def test_a_sparse_c_tf_idf_chooses_the_same_terms_and_owners_as_its_dense_copy():
    from pipeline.text.vocabulary import ranked_terms, select_coherent_terms, term_owners

    rng = np.random.default_rng(3)
    # 6 topics x 400 terms, most weights 0, many ties (weights on a grid of 5 values), some all-zero columns
    dense = rng.integers(1, 6, size=(6, 400)) * (rng.random((6, 400)) < 0.15) / 5.0
    sparse = sp.csr_matrix(dense)
    presence = sp.csc_matrix((rng.random((300, 400)) < 0.05).astype(np.float32))
    rows = [1, 2, 3, 4, 5]  # row 0 plays the outlier topic
    dense_owner, sparse_owner = term_owners(dense, rows), term_owners(sparse, rows)
    weighed = dense[rows].max(axis=0) > 0
    assert np.array_equal(dense_owner[weighed], sparse_owner[weighed])
    for row in range(6):
        for a, b in zip(ranked_terms(dense, row), ranked_terms(sparse, row)):
            assert np.array_equal(a, b)
        for exclusive in (True, False):
            assert select_coherent_terms(
                dense, presence, row, rows, 12, 30, 3.0, 5, exclusive
            ) == select_coherent_terms(sparse, presence, row, rows, 12, 30, 3.0, 5, exclusive, sparse_owner)
    # each row's columns in reverse order, as a product of sparse matrices leaves them (BERTopic's c-TF-IDF): the
    # same owners and terms, read as it is (pipeline.text.vocabulary.repeats_a_column tells it from a repeated one)
    from pipeline.text.vocabulary import repeats_a_column

    reversed_rows = [np.arange(sparse.indptr[r + 1] - 1, sparse.indptr[r] - 1, -1) for r in range(6)]
    order = np.concatenate(reversed_rows)
    unsorted = sp.csr_matrix((sparse.data[order], sparse.indices[order], sparse.indptr), shape=sparse.shape)
    assert not unsorted.has_sorted_indices and not repeats_a_column(unsorted)
    assert np.array_equal(term_owners(unsorted, rows)[weighed], sparse_owner[weighed])
    for row in range(6):
        assert select_coherent_terms(unsorted, presence, row, rows, 12, 30, 3.0, 5) == select_coherent_terms(
            sparse, presence, row, rows, 12, 30, 3.0, 5
        )
    twice = sp.csr_matrix(([0.2, 0.4, 0.1], [3, 3, 7], [0, 3]), shape=(1, 10))
    assert repeats_a_column(twice) and not repeats_a_column(sp.csr_matrix(dense))


def test_boilerplate_words_are_common_everywhere_but_topical_words_are_not():
    from pipeline.text.tokens import count_words
    from pipeline.text.vocabulary import boilerplate_terms

    topics = {"graph nodes": 0, "coral reefs": 1, "speech audio": 2}
    texts, groups = [], []
    for words, group in topics.items():
        for i in range(10):
            texts.append(f"we propose {words} study {i}")
            groups.append(group)
    learned = boilerplate_terms(count_words(texts), groups, min_share=0.05, max_lift=2.0)
    assert "propose" in learned and "study" in learned
    assert not {"graph", "coral", "speech"} & set(learned)
    assert boilerplate_terms(count_words(texts), [0] * len(texts)) == []  # one group says nothing about spread


def test_outlier_reassignment_keeps_the_least_similar_papers_as_outliers():
    from pipeline.topics.model import reassign_outliers

    embeddings = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0.9, 0.1], [0.7, 0.7], [0.2, 0.98]], dtype=np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    topics = np.array([0, 0, 1, 1, -1, -1, -1])
    all_moved = reassign_outliers(embeddings, topics, threshold=0.0, max_fraction=0.0)
    assert all_moved.tolist() == [0, 0, 1, 1, 0, 0, 1]  # a tie goes to the first topic
    kept = reassign_outliers(embeddings, topics, threshold=0.0, max_fraction=0.15)
    assert kept.tolist()[:5] == [0, 0, 1, 1, 0] and kept[5] == -1 and kept[6] == 1  # the in-between paper stays
    assert reassign_outliers(embeddings, topics, threshold=0.99, max_fraction=0.0)[5] == -1


# ------------------------------------------------------------------------------------------------ build and command


def test_build_stores_metrics_and_the_command_reproduces_them(slice_cache: Path, tmp_path: Path, capsys):
    from topic_atlas.cli import main

    manifest = cache.read_manifest(slice_cache)
    metrics = manifest["metrics"]
    assert "evaluate" in manifest["timings_s"]
    for key in (
        "npmi",
        "topic_diversity",
        "outlier_fraction",
        "n_topics",
        "largest_topic_share",
        "trustworthiness_2d",
        "knn_recall_2d",
        "nmi_reference",
        "ari_reference",
        "knn_accuracy_embedding",
        "knn_accuracy_2d",
    ):
        assert metrics[key] is not None, key
    assert metrics["n_topics"] == manifest["n_topics"] and metrics["reference_column"] == "decision"
    copy = tmp_path / "cache"
    shutil.copytree(slice_cache, copy)
    assert main(["evaluate", "--cache", str(copy)]) == 0
    written = json.loads((copy / "metrics.json").read_text())
    for key in ("npmi", "topic_diversity", "trustworthiness_2d", "knn_recall_2d", "ari_reference"):
        assert written[key] == pytest.approx(metrics[key], abs=1e-3), key
    assert written == evaluate_cache(cache.read_cache(copy))
    assert "topic_diversity" in capsys.readouterr().out


def test_embedding_knn_accuracy_is_the_cosine_classifiers(slice_cache: Path):
    """map_metrics runs the embedding's kNN classifier as Euclidean on unit rows (faster); it must agree with cosine."""
    topic_cache = cache.read_cache(slice_cache)
    embeddings = topic_cache.embeddings()
    reference = topic_cache.documents["decision"].tolist()
    figures = map_metrics(embeddings, topic_cache.documents[["x", "y"]].to_numpy(), reference)
    assert figures["knn_accuracy_embedding"] == pytest.approx(knn_accuracy(embeddings, reference, "cosine"), abs=1e-9)


def test_evaluate_command_explains_a_missing_cache(tmp_path: Path, capsys):
    from topic_atlas.cli import main

    assert main(["evaluate", "--cache", str(tmp_path / "nothing")]) == 2
    assert "Rebuild it with" in capsys.readouterr().err


def test_row_order_does_not_change_the_topics(build_cache, papers_slice: Path, slice_cache: Path, tmp_path: Path):
    """The same 300 papers in shuffled order give (almost) the same topics, compared paper by paper."""
    shuffled = tmp_path / "papers_300_shuffled.parquet"
    read_frame(papers_slice).sample(frac=1.0, random_state=7).to_parquet(shuffled, index=False)
    first = cache.read_cache(slice_cache).documents.set_index("doc_id")["topic"]
    second = cache.read_cache(build_cache(shuffled, "slice300-shuffled")).documents.set_index("doc_id")["topic"]
    ari = adjusted_rand_score(first.to_numpy(), second.reindex(first.index).to_numpy())
    print(f"ARI between input orders: {ari:.3f}")
    assert ari >= 0.95


def test_above_the_evaluation_sample_the_accuracies_are_those_of_the_sampled_rows(
    slice_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    """Above EVALUATION_SAMPLE documents the kNN accuracies are cross-validated within the seeded sample, in blocks of
    their own (trustworthiness then ranks another, smaller sample): with the sample set to 200 of the slice's papers,
    each figure is that of the 200 sampled rows."""
    import pipeline.quality.map_metrics as map_metrics_module

    monkeypatch.setattr(map_metrics_module, "EVALUATION_SAMPLE", 200)
    monkeypatch.setattr(map_metrics_module, "TRUSTWORTHINESS_SAMPLE", 100)
    topic_cache = cache.read_cache(slice_cache)
    embeddings, coordinates = topic_cache.embeddings(), topic_cache.documents[["x", "y"]].to_numpy()
    decisions = topic_cache.documents["decision"].tolist()
    figures = map_metrics(embeddings, coordinates, decisions, threads=2)
    rows = map_metrics_module.evaluation_sample(len(embeddings), 200)
    assert rows is not None and len(rows) == 200
    picked = [decisions[row] for row in rows]
    assert figures["knn_accuracy_embedding"] == knn_accuracy(embeddings[rows], picked, "cosine")
    assert figures["knn_accuracy_2d"] == knn_accuracy(coordinates[rows], picked, "euclidean")
    assert figures["knn_accuracy_embedding"] != knn_accuracy(embeddings, decisions, "cosine")
