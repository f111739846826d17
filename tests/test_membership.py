"""Topics must cohere and outliers join a topic only above its floor (issue 13, item 7): pipeline.topics.membership."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.config import BuildConfig
from tests.conftest import CASES, needs_shared

REEF = [
    "Diel pH swings on shallow reef flats pre-condition corals to ocean acidification.",
    "Coral calcification on reef flats declines as aragonite saturation falls with acidification.",
    "Reef flat corals exposed to variable pH calcify faster under ocean acidification.",
    "Aragonite saturation and coral calcification were measured across twelve reef flats.",
    "Crustose coralline algae on reef flats are more sensitive to ocean acidification than corals.",
    "Seawater carbonate chemistry on reef flats drives coral calcification and acidification stress.",
]
GRAPHS = [
    "Graph neural networks pass messages along edges to classify nodes in citation graphs.",
    "Attention over graph edges makes graph neural networks robust to noisy node features.",
    "Over-smoothing limits the depth of graph neural networks for node classification.",
    "Message passing graph neural networks scale to large graphs with sampled edges.",
    "Residual connections let deep graph neural networks classify nodes without over-smoothing.",
    "Link prediction with graph neural networks on molecular graphs and citation graphs.",
]
CLINICAL = "A randomised trial of early mobilisation after hip fracture surgery reduced delirium in elderly inpatients."
REEF_OUTLIER = (
    "Night-time pH on reef flats falls below levels that slow coral calcification during acidification events."
)


def fit(encoder, texts: list[str], clusters: list[int]):
    from pipeline.adapters.bertopic_import import import_bertopic_lean
    from pipeline.represent.embedding_store import embed_texts
    from pipeline.topics.model import fit_topic_model

    import_bertopic_lean()
    embeddings = embed_texts(texts, store_path=None, encoder=encoder, progress=False).embeddings
    config = BuildConfig(max_outlier_fraction=0.0, learn_stop_words=False).resolved_for(len(texts))
    return fit_topic_model(texts, embeddings, np.asarray(clusters), config)


def test_an_unrelated_outlier_is_not_filed_under_the_nearest_topic(encoder):
    """Outlier reduction moves a reef-flat outlier into the reef topic, but leaves a clinical abstract an outlier."""
    texts = REEF + GRAPHS + [CLINICAL, REEF_OUTLIER]
    result = fit(encoder, texts, [0] * 6 + [1] * 6 + [-1, -1])
    assert result.topics[-1] == result.topics[0] != -1  # the reef outlier joins the reef topic
    assert result.topics[-2] == -1  # the clinical one stays an outlier, however near its nearest topic is
    assert result.n_reassigned == 1


def test_clusters_of_unrelated_papers_are_not_topics(encoder):
    """Two 'clusters' of papers that share no words are dissolved into outliers; the coherent one stays."""
    unrelated = [
        "Iron-gall inks corrode medieval parchment through acid hydrolysis.",
        "Volcanic ash plumes are retrieved from satellite infrared radiances.",
        "Honeybees navigate by polarised skylight on overcast days.",
        "Sovereign bond spreads widen after surprise rating downgrades.",
        "Permafrost lakes emit methane when thaw deepens each summer.",
        "Roman marine concrete gains strength from seawater mineral growth.",
    ]
    texts = REEF + unrelated
    result = fit(encoder, texts, [0] * 6 + [1, 1, 1, 2, 2, 2])
    assert set(result.topics[6:].tolist()) == {-1}
    assert len(set(result.topics[:6].tolist())) == 1 and result.topics[0] != -1
    note = next(note for note in result.notes if "share almost no words" in note)
    assert "2 candidate topics were not kept" in note and "6 papers" in note


def test_24_unrelated_abstracts_give_no_topics_with_default_settings(build_cache):
    """Case 02 with the product's defaults: before, 6 'topics' of unrelated papers; now none, said plainly."""
    path = CASES / "02-all-outliers" / "abstracts.jsonl"
    needs_shared(path)
    from pipeline import cache

    topic_cache = cache.read_cache(build_cache(path, "unrelated-defaults"))
    assert set(topic_cache.documents["topic"]) == {-1}
    assert topic_cache.manifest["n_topics"] == 0
    notes = " ".join(topic_cache.manifest["notes"])
    assert "No topics found: the papers are on unrelated subjects" in notes


def test_shared_term_share_and_floor_are_relative_to_the_topic():
    import scipy.sparse as sp

    from pipeline.topics.membership import dissolve, incoherent_topics, leave_one_out_similarities

    presence = sp.csr_matrix(np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]))
    vocabulary = {"reef": 0, "coral": 1, "ink": 2, "ash": 3}
    topics = np.array([0, 0, 1, 1])
    assert incoherent_topics(topics, {0: ["reef", "coral"], 1: ["ink", "ash"]}, presence, vocabulary) == {1: 0.0}
    assert dissolve(np.array([0, 1, 1, 2, -1]), [1]).tolist() == [0, -1, -1, 1, -1]
    unit = np.eye(3, dtype=np.float32)[[0, 0, 1]]
    assert leave_one_out_similarities(unit, np.array([0, 1, 2])) == pytest.approx([1 / np.sqrt(2), 1 / np.sqrt(2), 0.0])
