"""The tfidf-svd block on real abstracts: the SVD fitted on the first ``fit_rows`` documents only when there are more,
the vocabulary and IDF still over every document, and every document projected, in blocks, as one product would."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from pipeline.represent import representation
from pipeline.represent.representation import LexicalParams, fit_lexical
from pipeline.runtime.parquet import read_frame
from pipeline.runtime.threads import single_threaded
from tests.conftest import ICLR2025, needs_shared

ABSTRACTS = 1_200
FIT_ROWS = 500


@pytest.fixture(scope="module")
def texts() -> list[str]:
    needs_shared(ICLR2025)
    frame = read_frame(ICLR2025, columns=["title", "abstract"]).head(ABSTRACTS)
    return (frame["title"] + ". " + frame["abstract"]).tolist()


def test_the_svd_is_fitted_on_the_first_rows_and_projects_every_document(texts):
    """fit_rows below the corpus: the components are those of a fit on the first FIT_ROWS documents' TF-IDF rows
    (the vocabulary and IDF of all of them), and every document gets a unit vector; the whole corpus's fit differs."""
    from sklearn.decomposition import TruncatedSVD

    params = replace(LexicalParams(), fit_rows=FIT_ROWS)
    sampled, matrix = fit_lexical(texts, params)
    whole, whole_matrix = fit_lexical(texts, LexicalParams())
    assert sampled.vocabulary == whole.vocabulary and np.array_equal(sampled.idf, whole.idf)
    assert (matrix != whole_matrix).nnz == 0
    resolved = params.resolved_for(len(texts))
    expected = TruncatedSVD(resolved.dims, algorithm="randomized", n_iter=params.n_iter, random_state=params.seed)
    with single_threaded():  # as fit_lexical runs it: the same floats
        expected.fit(matrix[:FIT_ROWS])
    assert np.array_equal(sampled.components, expected.components_.astype(representation.COMPONENT_DTYPE))
    assert not np.array_equal(sampled.components, whole.components)
    vectors = sampled.transform(texts, tfidf=matrix)
    assert vectors.shape == (len(texts), resolved.dims)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_projection_in_blocks_equals_one_product(texts, monkeypatch: pytest.MonkeyPatch):
    """LexicalModel.transform projects PROJECTION_ROWS rows at a time; with blocks of 7 rows (the last one short)
    the vectors equal the one product of the whole TF-IDF matrix, normalised, and a text without a known word stays
    zero."""
    model, matrix = fit_lexical(texts[:300], LexicalParams())
    whole = np.asarray(matrix.astype(np.float32) @ model.components.astype(np.float32).T)
    norms = np.linalg.norm(whole, axis=1, keepdims=True)
    expected = whole / np.where(norms == 0, 1, norms)
    monkeypatch.setattr(representation, "PROJECTION_ROWS", 7)
    with_empty = sp.vstack([matrix, sp.csr_matrix((1, matrix.shape[1]), dtype=np.float32)]).tocsr()
    vectors = model.transform([], tfidf=with_empty)
    assert np.allclose(vectors[:-1], expected, atol=1e-6) and not vectors[-1].any()
