"""The per-document stages on Dask (pipeline.partitions, issue 42): a real LocalCluster of 2 worker processes gives
the same results as the single-process path on the first 4,000 records of the whole ICLR 2025 conference: the
row-local cleaning, the representation, the landmarks' search, the placing and voting of the other documents and
the topics' term counts. The scheduler strings and row partitions are checked without a cluster."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.geometry.landmarks import Landmarks, membership_weights, place_rest, search_landmarks, vote_rest
from pipeline.partitions.cluster import connect, parse_scheduler, partition_bounds, workers_peak_rss_mb
from pipeline.partitions.search import RestSearch
from tests.conftest import ICLR2025, needs_shared

RECORDS = 4_000
PARTITION_ROWS = 700  # several partitions per worker, the last one shorter
LANDMARKS = 1_500
K = 15


def test_row_partitions_cover_every_row_once_in_order():
    assert partition_bounds(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert partition_bounds(8, 4) == [(0, 4), (4, 8)]
    assert partition_bounds(0, 4) == []
    with pytest.raises(ValueError, match="partition_rows"):
        partition_bounds(10, 0)


def test_a_scheduler_is_a_local_cluster_or_an_address():
    assert parse_scheduler("local:2") == ("local", 2)
    assert parse_scheduler(" tcp://10.0.0.5:8786 ") == ("address", "tcp://10.0.0.5:8786")
    for bad in ("", "local:0", "local:x", "10.0.0.5:8786", "tcp://"):
        with pytest.raises(ValueError, match="bad scheduler"):
            parse_scheduler(bad)


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 worker processes, one thread each, for the module."""
    with connect("local:2") as each:
        yield each


@pytest.fixture(scope="module")
def raw():
    """The first RECORDS records of the whole conference, as read by the build."""
    from pipeline.ingest.corpus import load_corpus

    needs_shared(ICLR2025)
    corpus = load_corpus(ICLR2025)
    return dataclasses.replace(corpus, records=corpus.records.iloc[:RECORDS].reset_index(drop=True))


@pytest.fixture(scope="module")
def prepared(raw):
    from pipeline.ingest.clean import prepare_documents

    return prepare_documents(raw)


@pytest.fixture(scope="module")
def represented(prepared):
    """The documents' texts, their fitted tfidf-svd representation and its vectors (the single-process path)."""
    from pipeline.represent.representation import LEXICAL, LexicalParams, Representation, fit_lexical

    texts = prepared.documents["text"].tolist()
    model, _ = fit_lexical(texts, LexicalParams())
    representation = Representation(LEXICAL, model, {LEXICAL: model.components.shape[0]})
    return texts, representation, representation.transform(texts)


@pytest.mark.slow
def test_cleaning_rows_on_two_workers_gives_the_documents_of_the_single_process_clean(client, raw, prepared):
    from pipeline.partitions.clean import clean_rows_partitioned, kept_rows

    rows = clean_rows_partitioned(client, raw.records, raw.text_column, PARTITION_ROWS)
    assert len(rows) == len(raw.records)
    kept = kept_rows(rows)
    documents = prepared.documents
    assert raw.records["doc_id"].iloc[kept].tolist() == documents["doc_id"].tolist()
    assert rows["text"].iloc[kept].tolist() == documents["text"].tolist()
    assert rows["language"].iloc[kept].tolist() == documents["language"].tolist()
    for reason, ids in prepared.dropped_ids.items():
        if reason != "duplicate":
            assert raw.records["doc_id"][rows["reason"] == reason].tolist() == ids
    copies = len(raw.records) - len(kept) - int(rows["reason"].notna().sum())
    assert copies == len(prepared.dropped_ids.get("duplicate", []))


@pytest.mark.slow
def test_cleaning_a_titles_only_file_on_two_workers_decides_by_the_title(client, raw, tmp_path):
    from pipeline.ingest.clean import prepare_documents
    from pipeline.ingest.corpus import load_corpus
    from pipeline.partitions.clean import clean_rows_partitioned, kept_rows

    path = tmp_path / "titles.csv"
    titles = raw.records[["doc_id", "title"]].iloc[:600].copy()
    titles.loc[[3, 7], "title"] = ["", "TBD"]  # dropped: empty, a placeholder
    titles.loc[11, "title"] = titles.loc[10, "title"].upper()  # a copy of the row before it
    titles.to_csv(path, index=False)
    titles_only = load_corpus(path)
    assert titles_only.text_column == "title"
    expected = prepare_documents(titles_only)
    rows = clean_rows_partitioned(client, titles_only.records, titles_only.text_column, 250)
    kept = kept_rows(rows)
    assert titles_only.records["doc_id"].iloc[kept].tolist() == expected.documents["doc_id"].tolist()
    assert rows["text"].iloc[kept].tolist() == expected.documents["text"].tolist()
    assert rows["reason"].notna().sum() == 2 and len(kept) == 597


@pytest.mark.slow
def test_the_representation_on_two_workers_equals_the_single_process_transform(client, represented):
    from pipeline.partitions.represent import transform_partitioned

    texts, representation, single = represented
    parted = transform_partitioned(client, representation, texts, PARTITION_ROWS)
    assert parted.dtype == np.float32 and parted.shape == single.shape
    assert np.array_equal(parted, single)


@pytest.fixture(scope="module")
def searched(client, represented):
    """The landmarks searched in one process (search_landmarks) and on the cluster (partitioned_landmarks)."""
    from pipeline.partitions.run import partitioned_landmarks

    embeddings = represented[2]
    return search_landmarks(embeddings, LANDMARKS, K), partitioned_landmarks(
        client, embeddings, LANDMARKS, K, partition_rows=PARTITION_ROWS
    )


@pytest.mark.slow
def test_the_nearest_landmarks_on_two_workers_equal_the_single_process_search(searched):
    single, parted = searched
    landmarks = parted.landmarks
    assert np.array_equal(landmarks.neighbours.indices, single["indices"])
    assert np.array_equal(landmarks.neighbours.similarities, single["similarities"])
    assert np.array_equal(landmarks.rest_indices, single["rest_indices"])
    assert landmarks.rest_indices.shape == (len(single["rest_indices"]), K)
    assert np.array_equal(landmarks.rest_weights, membership_weights(single["rest_similarities"]))


@pytest.mark.slow
def test_the_search_as_the_layout_store_keeps_it_is_the_single_process_dict(client, represented, searched):
    from pipeline.partitions.run import search_landmarks_partitioned

    found = search_landmarks_partitioned(client, represented[2], LANDMARKS, K, 1_200)
    assert set(found) == set(searched[0])
    for name, array in searched[0].items():
        assert found[name].dtype == array.dtype and np.array_equal(found[name], array), name


@pytest.mark.slow
def test_workers_read_their_rows_from_a_shared_file_with_the_same_result(client, represented, searched, tmp_path):
    from pipeline.partitions.search import gather_rest, search_rest_partitioned

    path = tmp_path / "embeddings.npy"
    np.save(path, represented[2])
    _, _, _, futures, bounds = search_rest_partitioned(client, represented[2], LANDMARKS, K, 1_000, str(path))
    rest = gather_rest(client, futures, K)
    assert len(bounds) == -(-(len(represented[2]) - LANDMARKS) // 1_000)
    assert np.array_equal(rest.indices, searched[0]["rest_indices"])
    assert np.allclose(rest.similarities, searched[0]["rest_similarities"])


@pytest.fixture(scope="module")
def fitted_sample(represented):
    """What UMAP and HDBSCAN would give the landmarks, made from their vectors: a 2D layout (their first two SVD
    coordinates), labels (the largest of their next six coordinates, the first of them standing for outliers, -1)
    and strengths."""
    sample = represented[2][:LANDMARKS]
    labels = (np.argmax(sample[:, 2:8], axis=1) - 1).astype(np.int64)
    return sample[:, :2].copy(), labels, np.abs(sample[:, 8]).astype(np.float32)


@pytest.mark.slow
def test_placing_and_voting_on_two_workers_equal_the_single_process_rules(client, searched, fitted_sample):
    from pipeline.partitions.run import place_rest_partitioned, vote_rest_partitioned

    single, parted = searched
    layout, labels, strengths = fitted_sample
    landmarks = Landmarks(
        LANDMARKS, parted.landmarks.neighbours, single["rest_indices"], membership_weights(single["rest_similarities"])
    )
    expected = place_rest(landmarks, layout)
    assert np.allclose(place_rest_partitioned(client, parted.parts, layout), expected, rtol=1e-6, atol=1e-7)
    assert np.allclose(place_rest_partitioned(client, landmarks, layout, 900), expected, rtol=1e-6, atol=1e-7)
    expected_labels, expected_strengths = vote_rest(landmarks, labels, strengths)
    for rest in (parted.parts, landmarks):
        voted, voted_strengths = vote_rest_partitioned(client, rest, labels, strengths)
        assert np.array_equal(voted, expected_labels)
        assert np.allclose(voted_strengths, expected_strengths, rtol=1e-6, atol=1e-7)
    assert len(np.unique(expected_labels)) == 6  # five clusters and the outliers all won some documents


@pytest.mark.slow
def test_the_topics_term_counts_summed_over_partitions_equal_one_count(client, represented, searched, fitted_sample):
    import scipy.sparse as sp

    from pipeline.partitions.terms import topic_term_counts_partitioned
    from pipeline.text.tokens import tokenize
    from pipeline.text.vocabulary import make_vectorizer, vectorizer_for_vocabulary
    from pipeline.text.words import STOP_WORDS

    texts = represented[0]
    topics, _ = vote_rest(searched[1].landmarks, *fitted_sample[1:])
    tokens = tokenize(texts)
    vocabulary = make_vectorizer(texts, ngram_max=2, tokens=tokens).vocabulary
    topic_ids = sorted(set(topics.tolist()))
    counts = vectorizer_for_vocabulary(texts, vocabulary, STOP_WORDS, 2, tokens).transform(texts)
    rows = np.searchsorted(topic_ids, topics)
    membership = sp.csr_matrix((np.ones(len(texts), np.int64), (rows, np.arange(len(texts)))))
    parted = topic_term_counts_partitioned(client, texts, topics, topic_ids, vocabulary, STOP_WORDS, 2, PARTITION_ROWS)
    assert parted.counts.shape == (len(topic_ids), len(vocabulary))
    assert (parted.counts != membership @ counts).nnz == 0
    assert np.array_equal(parted.document_frequency, np.bincount(counts.indices, minlength=len(vocabulary)))
    assert parted.counts.sum() == counts.sum() > 0


@pytest.mark.slow
def test_a_scheduler_address_connects_to_a_running_cluster(client, represented):
    from pipeline.partitions.represent import transform_partitioned

    texts, representation, single = represented
    with connect(client.scheduler.address) as remote:  # the module's cluster as a real one is reached: by address
        assert len(remote.scheduler_info()["workers"]) == 2
        assert np.array_equal(transform_partitioned(remote, representation, texts[:500], 200), single[:500])


@pytest.mark.slow
def test_each_worker_reports_its_peak_memory(client):
    peaks = workers_peak_rss_mb(client)
    assert len(peaks) == 2 and all(value > 0 for value in peaks.values())


def test_a_partition_search_result_keeps_its_arrays_apart():
    part = RestSearch(np.zeros((2, 3), np.int64), np.ones((2, 3), np.float32), np.full((2, 3), 1 / 3, np.float32))
    assert part.indices.shape == part.weights.shape == (2, 3)
