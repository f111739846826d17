"""A few flagged papers grouped among the atlas's own papers (pipeline.topics.candidates.grouped_in_context), as
``add`` groups fewer than CONTEXT_BELOW flagged papers into candidate new topics."""

from __future__ import annotations

import numpy as np

from pipeline.topics.candidates import CONTEXT_MIN, group_flagged

DIMENSIONS = 40


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def atlas_papers(generator: np.random.Generator, count: int = 400) -> np.ndarray:
    """``count`` unit vectors around 8 topic centres (dimensions 10-17), none near the flagged subject (dimension 0)."""
    centres = np.eye(DIMENSIONS)[10:18]
    return unit_rows(centres[np.arange(count) % 8] + 0.15 * generator.normal(size=(count, DIMENSIONS)))


def test_a_subject_that_is_most_of_the_flagged_papers_is_a_candidate_among_the_atlas():
    """20 flagged papers: 14 on one subject the atlas lacks and 6 strays, each near a different atlas topic."""
    generator = np.random.default_rng(0)
    atlas = atlas_papers(generator)
    subject = np.eye(DIMENSIONS)[0] + 0.15 * generator.normal(size=(14, DIMENSIONS))
    strays = np.eye(DIMENSIONS)[10:16] + 0.2 * generator.normal(size=(6, DIMENSIONS))
    flagged = unit_rows(np.vstack([subject, strays]))
    groups = group_flagged(flagged, np.ones(20, dtype=bool), 9, 3, 42, 0.5, context=atlas)
    assert groups.method == f"umap+hdbscan among {CONTEXT_MIN} of the atlas's papers"
    assert set(groups.labels[:14].tolist()) == {0}  # the subject, whole
    assert (groups.labels[14:] == -1).all()  # the strays belong to the atlas's topics, not to a candidate


def test_flagged_papers_that_lie_among_the_atlas_topics_form_no_candidate():
    """20 flagged papers, each near one of the atlas's topics: clusters that hold them are mostly the atlas's."""
    generator = np.random.default_rng(1)
    atlas = atlas_papers(generator)
    flagged = unit_rows(np.eye(DIMENSIONS)[10:18][np.arange(20) % 8] + 0.15 * generator.normal(size=(20, DIMENSIONS)))
    groups = group_flagged(flagged, np.ones(20, dtype=bool), 9, 3, 42, 0.5, context=atlas)
    assert (groups.labels == -1).all()
