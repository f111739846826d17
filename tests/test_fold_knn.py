"""The cross-validated kNN accuracy from ranked neighbours (pipeline.quality.fold_knn) against scikit-learn's
classifier fitted fold by fold, on the embeddings and map of a real 300-paper build."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from pipeline import cache
from pipeline.quality.fold_knn import CANDIDATE_FACTOR, FoldVotes, fold_knn_accuracy, fold_labels, majority
from pipeline.quality.neighbour_metrics import PenaltyBlocks, knn_accuracy, map_neighbours
from pipeline.represent.unit_rows import normalise_rows


def sklearn_accuracy(features: np.ndarray, labels: list, metric: str, k: int = 10, folds: int = 10) -> float:
    """The figure as scikit-learn computes it: one classifier per fold over the present labels."""
    present = np.array([label is not None for label in labels])
    truth = np.array([str(label) for label in labels], dtype=object)[present]
    classifier = KNeighborsClassifier(n_neighbors=k, metric=metric, algorithm="brute")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.mean(cross_val_score(classifier, np.asarray(features)[present], truth, cv=splitter)))


@pytest.fixture(scope="module")
def slice_space(slice_cache: Path) -> tuple[np.ndarray, np.ndarray, list]:
    """(embeddings n x dim, map n x 2, decisions with every seventh missing and two papers of a rare class)."""
    topic_cache = cache.read_cache(slice_cache)
    decisions: list = topic_cache.documents["decision"].astype(str).tolist()
    decisions = [None if row % 7 == 3 else value for row, value in enumerate(decisions)]
    decisions[0] = decisions[1] = "A rare decision"
    return topic_cache.embeddings(), topic_cache.documents[["x", "y"]].to_numpy(), decisions


def one_prediction(labels: list) -> float:
    """The most one prediction moves a fold-averaged accuracy of ``labels``: the two rankings may break a near-tie at
    the k-th neighbour differently on another CPU (equal on the machines tried), and a wrong fold or vote moves it by
    many predictions."""
    present = sum(label is not None for label in labels)
    return 1.0 / present + 1e-9


def test_the_figure_is_scikit_learns_in_the_embedding_space_and_on_the_map(slice_space):
    embeddings, coordinates, decisions = slice_space
    in_space = knn_accuracy(embeddings, decisions, "cosine")
    expected = sklearn_accuracy(normalise_rows(embeddings), decisions, "euclidean")
    assert in_space == pytest.approx(expected, abs=one_prediction(decisions))
    on_map = knn_accuracy(coordinates, decisions, "euclidean")
    assert on_map == pytest.approx(sklearn_accuracy(coordinates, decisions, "euclidean"), abs=one_prediction(decisions))
    assert 0.0 < in_space < 1.0 and 0.0 < on_map < 1.0


def test_rows_whose_candidates_hold_too_few_other_folds_are_ranked_again(slice_space):
    """With nine values in ten missing, a row's 4k nearest candidates hold fewer than k labelled rows of other folds,
    so most rows take the second ranking; the figure is still scikit-learn's."""
    embeddings, coordinates, decisions = slice_space
    sparse = [value if row % 10 == 0 else None for row, value in enumerate(decisions)]
    sparse[:3] = ["A", "B", "A"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn: a class rarer than the folds
        column = fold_labels(sparse, 3, 0, 3)
    assert column is not None
    unit = normalise_rows(embeddings)
    nearest = np.argsort(-(unit @ unit.T), axis=1)[:, 1 : CANDIDATE_FACTOR * 3 + 1]
    labelled = (column.folds[nearest] >= 0).sum(axis=1)
    assert (labelled < 3).mean() > 0.5
    for features, metric in ((embeddings, "cosine"), (coordinates, "euclidean")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = fold_knn_accuracy(features, sparse, metric, k=3, folds=3, seed=0)
        space = normalise_rows(features) if metric == "cosine" else features
        expected = sklearn_accuracy(space, sparse, "euclidean", k=3, folds=3)
        assert ours == pytest.approx(expected, abs=one_prediction(sparse))


def test_too_few_labels_or_one_class_give_no_figure_and_other_metrics_are_refused(slice_space):
    embeddings, _, _ = slice_space
    assert fold_labels(["a", "b"] * 5, folds=10, seed=0, k=10) is None
    assert fold_labels(["a"] * 40, folds=10, seed=0, k=10) is None
    assert np.isnan(fold_knn_accuracy(embeddings[:8], ["a", "b"] * 4, "cosine", 10, 10, 0))
    with pytest.raises(ValueError, match="metric"):
        fold_knn_accuracy(embeddings, ["a", "b"] * (len(embeddings) // 2), "manhattan", 10, 10, 0)


def test_a_tie_goes_to_the_first_label_in_sorted_order():
    assert majority(np.array([[2, 1, 2, 1], [0, 2, 2, 1], [3, 3, 3, 0]]), 4).tolist() == [1, 2, 3]


def test_penalty_blocks_share_their_distances_only_when_every_row_is_evaluated(slice_space):
    embeddings, coordinates, decisions = slice_space
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn: a class rarer than the folds
        column = fold_labels(decisions, 10, 0, 10)
    assert column is not None
    with pytest.raises(ValueError, match="every row"):
        PenaltyBlocks(embeddings, map_neighbours(coordinates, 10), rows=np.arange(5), votes=FoldVotes([column], 10))
