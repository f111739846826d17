"""pipeline.topics.candidate_space: the space an add looks for candidate new topics in treats old and new papers
alike, on real abstracts (400 ICLR 2025 papers: an "atlas" of the first 200 and 200 "added" ones, of the same
conference, so no part of them is new territory)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.config import BuildConfig
from pipeline.geometry.grown_neighbours import nearest_lists
from pipeline.ingest.clean import join_title_abstract, model_text
from pipeline.represent.representation import Representation, fit_lexical
from pipeline.runtime.parquet import read_frame
from pipeline.topics.candidate_space import candidate_space
from pipeline.topics.candidates import in_new_territory
from tests.conftest import ICLR2025, needs_shared

N_OLD = 200


@pytest.fixture(scope="module")
def texts() -> list[str]:
    needs_shared(ICLR2025)
    papers = read_frame(ICLR2025).head(2 * N_OLD)
    return [join_title_abstract(model_text(t), model_text(a)) for t, a in zip(papers["title"], papers["abstract"])]


def new_share(vectors: np.ndarray) -> float:
    """The mean share of added papers among an added paper's 15 nearest papers of the grown atlas."""
    lists = nearest_lists(vectors[:N_OLD], vectors[N_OLD:], 15)
    return float((lists.new_indices >= N_OLD).mean())


def test_added_papers_of_the_same_conference_are_not_new_territory(texts: list[str]):
    params = BuildConfig().to_dict()
    model, matrix = fit_lexical(texts[:N_OLD], BuildConfig().lexical_params())
    atlas = np.vstack([model.transform(texts[:N_OLD], tfidf=matrix), model.transform(texts[N_OLD:])])
    representation = Representation("tfidf-svd", lexical=model, block_dims={"tfidf-svd": atlas.shape[1]})
    space = candidate_space(representation, texts, atlas, params)
    assert space.shape[0] == len(texts) and np.allclose(np.linalg.norm(space, axis=1), 1.0, atol=1e-5)
    # Projected onto the atlas's SVD, the added papers crowd together; in the candidate space they mix as the
    # base rate (half the grown atlas) says.
    assert new_share(atlas) > 0.65
    assert abs(new_share(space) - 0.5) < 0.1
    lists = nearest_lists(space[:N_OLD], space[N_OLD:], 15)
    assert in_new_territory(lists.new_indices, lists.new_scores, N_OLD).mean() < 0.1


def test_an_encoder_block_keeps_its_vectors_and_a_lexical_one_beside_it_is_fitted_again(texts: list[str]):
    generator = np.random.default_rng(0)
    encoded = generator.normal(size=(len(texts), 8)).astype(np.float32)
    encoded /= np.linalg.norm(encoded, axis=1, keepdims=True)
    alone = Representation("all-MiniLM-L6-v2", block_dims={"all-MiniLM-L6-v2": 8})
    assert candidate_space(alone, texts, encoded, {}) is encoded
    model, matrix = fit_lexical(texts[:N_OLD], BuildConfig().lexical_params())
    lexical = np.vstack([model.transform(texts[:N_OLD], tfidf=matrix), model.transform(texts[N_OLD:])])
    both = Representation(
        "tfidf-svd+all-MiniLM-L6-v2", lexical=model, block_dims={"tfidf-svd": lexical.shape[1], "all-MiniLM-L6-v2": 8}
    )
    joined = np.hstack([lexical, encoded]) / np.sqrt(2)
    space = candidate_space(both, texts, joined, {})
    refitted = candidate_space(Representation("tfidf-svd", lexical=model), texts, lexical, {})
    assert np.allclose(space[:, -8:], encoded / np.sqrt(2), atol=1e-6)
    assert np.allclose(space[:, : refitted.shape[1]], refitted / np.sqrt(2), atol=1e-6)
    with pytest.raises(ValueError, match="texts for"):
        candidate_space(both, texts[:-1], joined, {})


def test_the_added_papers_neighbours_are_a_search_over_every_other_paper():
    from pipeline.geometry.neighbors import top_k
    from pipeline.topics.candidate_space import new_paper_neighbours

    generator = np.random.default_rng(2)
    vectors = generator.normal(size=(90, 6)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[80] = vectors[5]  # a tie: the lower row first
    everything = vectors[60:] @ vectors.T
    everything[np.arange(30), 60 + np.arange(30)] = -np.inf
    expected = top_k(everything, 7)
    for threads in (1, 2):
        indices, similarities = new_paper_neighbours(vectors, 60, 7, block_rows=4, threads=threads)
        assert np.array_equal(indices, expected[0]) and np.allclose(similarities, expected[1])
    assert new_paper_neighbours(vectors[:3], 1, 15)[0].shape == (2, 2)  # k clipped to the other papers
