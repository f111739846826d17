"""pipeline.quality.npmi against gensim's own c_npmi on real abstracts: the same figures, without the per-window
loop."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from conftest import PAPERS, needs_shared

from pipeline.quality.npmi import window_counts
from pipeline.quality.topic_metrics import npmi_coherence, reference_tokens
from pipeline.runtime.parquet import read_frame


def gensim_npmi(topics: dict[int, list[str]], tokens: list[list[str]]) -> list[float]:
    """gensim's CoherenceModel(coherence="c_npmi") per topic: the reference implementation."""
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    logging.getLogger("gensim").setLevel(logging.WARNING)
    model = CoherenceModel(
        topics=list(topics.values()),
        texts=tokens,
        dictionary=Dictionary(tokens),
        coherence="c_npmi",
        topn=10,
        processes=1,
    )
    return [float(value) for value in model.get_coherence_per_topic()]


def test_window_counts_follow_gensims_sliding_rule():
    # W = 3: "a" at 0 and 2 (less than W apart: gensim drops it when the first copy leaves) and at 5.
    tokens = [["a", "x", "a", "x", "x", "a", "x", "x"], ["a", "b"], []]
    counts, pairs, n_windows = window_counts(tokens, ["a", "b"], window=3)
    assert n_windows == 6 + 1 + 1  # 8 - 3 + 1 windows, one for the short document, one for the empty one
    assert counts.tolist() == [4 + 1, 1]  # windows 0, 3, 4, 5 of the first document; the short one
    assert pairs[0, 1] == 1


def test_window_counts_in_blocks_of_documents_are_the_counts_of_the_whole():
    needs_shared(PAPERS)
    from pipeline.quality.npmi import reference_documents
    from pipeline.text.tokens import unit_blocks

    texts = read_frame(PAPERS)["abstract"].head(300).tolist() + ["", "model"]
    encoded = reference_documents(texts)
    words = ["model", "learning", "graph", "the", "absentword"]
    whole = window_counts(encoded, words, block_tokens=len(encoded.ids) + 1)
    assert len(unit_blocks(encoded.starts, 1_000)) > 10
    for block_tokens in (1, 7, 1_000, 20_000):  # 1: a document a block
        counts, pairs, n_windows = window_counts(encoded, words, block_tokens=block_tokens)
        assert n_windows == whole[2] and counts.tolist() == whole[0].tolist()
        assert (pairs != whole[1]).nnz == 0 and pairs.dtype == np.int64


def test_npmi_equals_gensim_on_real_abstracts():
    needs_shared(PAPERS)
    texts = read_frame(PAPERS)["abstract"].head(200).tolist()
    tokens = reference_tokens(texts)
    rng = np.random.default_rng(0)
    vocabulary = sorted({token for document in tokens for token in document})
    common = pd.Series([token for document in tokens for token in document]).value_counts().index[:300].tolist()
    topics = {
        topic: list(rng.choice(common if topic % 2 else vocabulary, size=10, replace=False)) for topic in range(12)
    }
    ours = npmi_coherence(topics, tokens)
    assert list(ours.per_topic.values()) == pytest.approx(gensim_npmi(topics, tokens), abs=1e-9)


def test_the_stored_reference_corpus_gives_the_figures_of_the_token_lists(tmp_path):
    needs_shared(PAPERS)
    from pipeline.quality.npmi import cached_reference_documents
    from pipeline.store.layouts import LayoutStore

    texts = read_frame(PAPERS)["abstract"].head(300).tolist() + [""]
    tokens = reference_tokens(texts)
    store = LayoutStore(tmp_path / "layouts")
    first = cached_reference_documents(texts, store)
    assert store.hits["reference_tokens"] is False
    stored = cached_reference_documents(texts, store)
    assert store.hits["reference_tokens"] is True
    for encoded in (first, stored):
        assert [encoded.words[encoded.ids[a:b]].tolist() for a, b in zip(encoded.starts[:-1], encoded.starts[1:])] == (
            tokens
        )
    topics = {0: ["model", "language", "large", "the"], 1: ["graph", "neural", "node", "absentword"], 2: ["learning"]}
    from_lists, from_store = npmi_coherence(topics, tokens), npmi_coherence(topics, stored)
    assert from_store.per_topic == from_lists.per_topic and from_store.skipped == from_lists.skipped == [2]
    words = ["model", "graph", "model", "absentword"]
    for expected, found in zip(window_counts(tokens, words), window_counts(stored, words)):
        assert (expected != found).nnz == 0 if hasattr(expected, "nnz") else np.array_equal(expected, found)
