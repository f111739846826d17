"""pipeline.text.tokens: counts made from word ids equal scikit-learn's CountVectorizer on the same texts."""

from __future__ import annotations

import numpy as np
from conftest import PAPERS, needs_shared
from sklearn.feature_extraction.text import CountVectorizer

from pipeline.runtime.parquet import read_frame
from pipeline.text.tokens import ngram_counts, sentence_presence, tokenize, word_counts
from pipeline.text.words import STOP_WORDS, TOKEN_PATTERN, separate_cjk, split_sentences

HOSTILE = [
    "Graph neural networks (GNNs) learn on graphs. GNNs are graph models! 2023 results?",
    "大型语言模型的推理能力。これは日本語の文です。",
    "",
    "the and of",
    "Mixed: 3D-vision, LLM-based agents; x_1 and α-decay. Ünïcödé wörds.",
]


# Edge cases of sentences and tokens: no sentence end, white space only, trailing white space after a sentence end,
# digits and underscores, CJK after a "." without a space, final sigma, a capital that lower-cases to two characters,
# newlines and tabs, superscripts, Arabic-Indic digits, ligatures.
EDGE_TEXTS = [
    " ",
    "\n\t  \n",
    "a. ",
    ". . .",
    "no sentence end",
    "12345 678 90. 2023!",
    "__init__ _x x_ ___ a_b 1_2 _1",
    "中文English混合without空格.Next",
    "end.中文 start. 日本語です",
    "ΑΣ. ΟΔΟΣ! σΣ ΣΑ.Σ",
    "İstanbul DİYARBAKIR.",
    "line one.\nline two!\ttab? \x0bvt.\u00a0nbsp",
    "²³ ٣٤ ١٢abc ﬁnance",
]


def sklearn_counts(
    texts: list[str], extra: list[str], ngram_max: int, min_df: int = 1, max_df: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    vectorizer = CountVectorizer(
        preprocessor=separate_cjk,
        token_pattern=TOKEN_PATTERN,
        stop_words=sorted(set(STOP_WORDS) | set(extra)),
        ngram_range=(1, ngram_max),
        min_df=min_df,
        max_df=max_df,
    )
    matrix = vectorizer.fit_transform(texts)
    return vectorizer.get_feature_names_out(), matrix.toarray()


def corpus_texts() -> list[str]:
    needs_shared(PAPERS)
    return read_frame(PAPERS)["abstract"].head(300).tolist() + HOSTILE


def test_word_and_pair_counts_equal_scikit_learn():
    texts = corpus_texts()
    corpus = tokenize(texts)
    names, expected = sklearn_counts(texts, [], 1)
    counts = word_counts(corpus)
    assert counts.words.tolist() == names.tolist() and np.array_equal(counts.matrix.toarray(), expected)
    for extra in ([], ["model", "graph", "learning"]):
        names, expected = sklearn_counts(texts, extra, 2)
        terms, matrix = ngram_counts(corpus, extra)
        assert terms.tolist() == names.tolist()
        pruned_names, pruned_expected = sklearn_counts(texts, extra, 2, min_df=2, max_df=0.5)
        pruned_terms, pruned = ngram_counts(corpus, extra, 2, 0.5)
        assert pruned_terms.tolist() == pruned_names.tolist() and np.array_equal(pruned.toarray(), pruned_expected)
        assert terms.tolist() == names.tolist()
        assert np.array_equal(matrix.toarray(), expected)
        # In blocks of documents (1: a document a block): the same terms, document frequencies and rows.
        for block_tokens in (1, 50, 1_000):
            blocked_terms, blocked = ngram_counts(corpus, extra, 2, 0.5, block_tokens=block_tokens)
            assert blocked_terms.tolist() == pruned_names.tolist()
            assert np.array_equal(blocked.toarray(), pruned_expected)
            assert blocked.dtype == np.int64 and blocked.has_canonical_format


def test_sentence_presence_equals_scikit_learn_per_sentence():
    texts = corpus_texts()[:60] + HOSTILE
    extra = ["model"]
    names, _ = sklearn_counts(texts, extra, 2)
    vocabulary = names.tolist()[::3]
    vectorizer = CountVectorizer(
        vocabulary=vocabulary,
        preprocessor=separate_cjk,
        token_pattern=TOKEN_PATTERN,
        stop_words=sorted(set(STOP_WORDS) | set(extra)),
        ngram_range=(1, 2),
    )
    sentences = [sentence for text in texts for sentence in split_sentences(text)]
    expected = (vectorizer.transform(sentences) > 0).astype(np.float32).toarray()
    whole = sentence_presence(tokenize(texts), vocabulary, extra)
    assert np.array_equal(whole.toarray(), expected) and whole.has_sorted_indices
    for block_tokens in (1, 50, 1_000):  # in blocks of sentences (1: a sentence a block): the same rows
        blocked = sentence_presence(tokenize(texts), vocabulary, extra, block_tokens=block_tokens)
        assert blocked.format == "csc" and blocked.dtype == bool and blocked.has_sorted_indices
        assert np.array_equal(blocked.toarray(), expected)


def test_terms_of_words_sharing_a_prefix_are_ordered_and_counted_as_scikit_learn():
    """Term names sort by text, not by word ids: "graph x" comes between "graph" and "graph2", "graphs"."""
    texts = [
        "graph graphs graph-based graph neural. graphs x graph x.",
        "graph-based graph x graph2 graph. graph graphs",
        "Graphs of graph neural nets: graph graph x; 图表",
    ] + HOSTILE
    for extra in ([], ["neural"]):
        names, expected = sklearn_counts(texts, extra, 2)
        terms, matrix = ngram_counts(tokenize(texts), extra)
        assert terms.tolist() == names.tolist() and np.array_equal(matrix.toarray(), expected)
        assert matrix.has_canonical_format
    vectorizer = CountVectorizer(
        vocabulary=names.tolist()[::-1],
        preprocessor=separate_cjk,
        token_pattern=TOKEN_PATTERN,
        stop_words=sorted(set(STOP_WORDS) | {"neural"}),
        ngram_range=(1, 2),
    )
    sentences = [sentence for text in texts for sentence in split_sentences(text)]
    expected_presence = (vectorizer.transform(sentences) > 0).astype(np.float32).toarray()
    presence = sentence_presence(tokenize(texts), names.tolist()[::-1], ["neural"])
    assert np.array_equal(presence.toarray(), expected_presence) and presence.has_canonical_format


def test_the_remembering_vectorizer_counts_as_scikit_learn_in_any_mix_and_order():
    """FixedVocabularyVectorizer.transform: remembered documents, joins of them (as BERTopic joins a topic's papers)
    and unseen texts, interleaved, give CountVectorizer's counts row for row."""
    from pipeline.text.vocabulary import make_vectorizer

    texts = corpus_texts()[:80]
    ours = make_vectorizer(texts, min_df=2, max_df=0.5, tokens=tokenize(texts))
    reference = CountVectorizer(
        vocabulary=ours.vocabulary,
        preprocessor=separate_cjk,
        token_pattern=TOKEN_PATTERN,
        stop_words=ours.stop_words,
        ngram_range=(1, 2),
    )
    documents = [
        texts[5],
        " ".join(texts[10:14]),
        "graph neural networks for unseen text",
        texts[0],
        HOSTILE[0],
        " ".join([texts[3], texts[1]]),
        texts[5],
    ]
    for batch in (documents, texts[20:40], [texts[7]], []):
        assert np.array_equal(ours.transform(batch).toarray(), reference.transform(batch).toarray())


def test_edge_texts_tokenise_as_scikit_learn_sentence_by_sentence():
    texts = HOSTILE + EDGE_TEXTS
    corpus = tokenize(texts)
    names, expected = sklearn_counts(texts, [], 1)
    counts = word_counts(corpus)
    assert counts.words.tolist() == names.tolist() and np.array_equal(counts.matrix.toarray(), expected)
    sentences = [split_sentences(text) for text in texts]
    assert corpus.sentence_documents.tolist() == [d for d, parts in enumerate(sentences) for _ in parts]
    analyzer = CountVectorizer(
        preprocessor=separate_cjk, token_pattern=TOKEN_PATTERN, stop_words=STOP_WORDS
    ).build_analyzer()
    starts = corpus.sentence_starts.tolist()
    found = [corpus.words[corpus.ids[a:b]].tolist() for a, b in zip(starts[:-1], starts[1:])]
    assert found == [analyzer(sentence) for parts in sentences for sentence in parts]


def test_the_sentence_presence_of_every_text_in_order_is_the_kept_matrix_and_a_part_is_its_rows():
    """FixedVocabularyVectorizer.sentence_presence_of: the whole corpus in order gives the kept matrix itself (no copy:
    420 MB at 285,717 documents), which equals sentence_presence; any other list of texts gives those texts' rows."""
    from pipeline.text.vocabulary import make_vectorizer

    texts = corpus_texts()[:60]
    tokens = tokenize(texts)
    vectorizer = make_vectorizer(texts, min_df=2, max_df=0.5, tokens=tokens)
    whole = vectorizer.sentence_presence_of(texts)
    expected = sentence_presence(tokens, list(vectorizer.vocabulary), [])
    assert whole is vectorizer.sentence_presence_of(texts)
    assert whole.format == "csc" and whole.dtype == bool  # as its readers take it, and a quarter of float32's size
    assert np.array_equal(whole.toarray(), expected.toarray())
    starts = np.searchsorted(tokens.sentence_documents, np.arange(len(texts) + 1))
    part = vectorizer.sentence_presence_of([texts[3], texts[1]])
    rows = np.r_[starts[3] : starts[4], starts[1] : starts[2]]
    assert part is not whole and np.array_equal(part.toarray(), expected[rows].toarray())


def test_bertopic_is_given_keys_only_for_the_remembered_texts_in_order_and_none_could_be_taken_for_one():
    """FixedVocabularyVectorizer.bertopic_documents: one key per remembered text, counted as that text; the texts
    themselves for any other list (a part, another order) and for a corpus where a text begins as a key does."""
    from pipeline.text.vocabulary import DOCUMENT_KEY_MARK, make_vectorizer

    texts = corpus_texts()[:40]
    vectorizer = make_vectorizer(texts, min_df=2, max_df=0.5, tokens=tokenize(texts))
    keys = vectorizer.bertopic_documents(texts)
    assert len(keys) == len(texts) and all(key.startswith(DOCUMENT_KEY_MARK) for key in keys)
    assert (vectorizer.transform(keys) != vectorizer.transform(texts)).nnz == 0
    joined = vectorizer.transform([" ".join(keys[:5]), " ".join(texts[:5])])
    assert (joined[0] != joined[1]).nnz == 0 and joined[0].sum() > 0
    assert vectorizer.bertopic_documents(texts[:10]) == texts[:10]
    assert vectorizer.bertopic_documents(texts[::-1]) == texts[::-1]
    odd = [DOCUMENT_KEY_MARK + "3", *texts[1:]]
    other = make_vectorizer(odd, min_df=2, max_df=0.5, tokens=tokenize(odd))
    assert other.bertopic_documents(odd) == odd


def test_a_vectorizer_that_forgot_its_corpus_counts_the_same_and_keeps_nothing_of_it():
    """FixedVocabularyVectorizer.forget (the build calls it once the topics are made): the remembered rows, tokens and
    sentence presence are let go, transforms still give CountVectorizer's counts, the texts are given to BERTopic as
    they are, and the vocabulary and its terms stay."""
    import gc
    import weakref

    from pipeline.text.vocabulary import forget_corpus, make_vectorizer

    texts = corpus_texts()[:60]
    tokens = tokenize(texts)
    vectorizer = make_vectorizer(texts, min_df=2, max_df=0.5, tokens=tokens)
    assert vectorizer.sentence_presence_of(texts) is not None
    before = vectorizer.transform(texts[:30] + [" ".join(texts[30:35])]).toarray()
    terms = vectorizer.get_feature_names_out().tolist()
    tokens_kept = weakref.ref(tokens)
    del tokens
    forget_corpus(vectorizer)
    forget_corpus(CountVectorizer())  # another vectorizer: nothing to forget, no error
    gc.collect()
    assert tokens_kept() is None
    assert vectorizer.sentence_presence_of(texts) is None
    assert vectorizer.bertopic_documents(texts) == texts
    assert np.array_equal(vectorizer.transform(texts[:30] + [" ".join(texts[30:35])]).toarray(), before)
    assert vectorizer.get_feature_names_out().tolist() == terms


def test_the_stored_sentence_presence_reads_back_as_the_bool_csc_it_was(tmp_path):
    """A rebuild reads the sentence presence from the layout store (pipeline.store.layouts) as the same bool CSC,
    with no conversion: the first build computes and stores it, the second finds it."""
    from pipeline.store.layouts import LayoutStore
    from pipeline.text.vocabulary import make_vectorizer

    texts = corpus_texts()[:60]
    found = []
    for _ in range(2):
        store = LayoutStore(tmp_path / "layouts")
        vectorizer = make_vectorizer(texts, min_df=2, max_df=0.5, tokens=tokenize(texts), store=store)
        found.append(vectorizer.sentence_presence_of(texts))
        assert store.hits["sentences"] is (len(found) == 2)
    computed, stored = found
    assert stored.format == "csc" and stored.dtype == bool and stored.has_sorted_indices
    assert stored.shape == computed.shape and (stored != computed).nnz == 0


def test_the_stored_word_pair_counts_read_back_as_the_terms_and_counts_they_were(tmp_path):
    """A rebuild reads the vocabulary's terms and counts from the layout store as the first build made them: the terms
    (CJK and accented ones too) as str objects, in order, and the same int64 counts."""
    from pipeline.store.layouts import LayoutStore
    from pipeline.text.vocabulary import stored_ngram_counts

    texts = corpus_texts()[:60] + HOSTILE + EDGE_TEXTS
    expected_terms, expected_counts = ngram_counts(tokenize(texts), ["model"], 1, 1.0)
    assert expected_terms.dtype == object and {"语 言", "ﬁnance"} <= set(expected_terms.tolist())
    for stored in (False, True):
        store = LayoutStore(tmp_path / "layouts")
        terms, counts = stored_ngram_counts(tokenize(texts), ["model"], 1, 1.0, store)
        assert store.hits["ngrams"] is stored
        assert terms.dtype == object and terms.tolist() == expected_terms.tolist()
        assert counts.dtype == np.int64 and (counts != expected_counts).nnz == 0
