"""The corpus's phrase counts kept in the layout store and counted in a second process
(pipeline.topics.naming.stored), on the real 300-paper slice."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from pipeline.runtime.parquet import read_frame
from pipeline.store.layouts import NullStore, open_store
from pipeline.store.text_lines import lines_array, lines_of_array
from pipeline.topics.naming.names import ranked_phrases
from pipeline.topics.naming.phrase_counts import PhraseCounts, count_phrases, presence_sums
from pipeline.topics.naming.stored import PhraseCountsJob, counts_from_arrays, counts_to_arrays


@pytest.fixture(scope="module")
def slice_texts(papers_slice: Path) -> tuple[list[str], list[str]]:
    papers = read_frame(papers_slice)
    titles = papers["title"].fillna("").astype(str).tolist()
    return [f"{title}. {abstract}" for title, abstract in zip(titles, papers["abstract"].astype(str))], titles


def assert_same_counts(found: PhraseCounts, expected: PhraseCounts) -> None:
    assert found.keys == expected.keys
    assert found.written == expected.written
    assert found.abbreviations == expected.abbreviations
    assert (found.matrix != expected.matrix).nnz == 0 and found.matrix.shape == expected.matrix.shape
    assert expected.in_title is not None and found.in_title is not None
    assert (found.in_title != expected.in_title).nnz == 0


def test_counts_survive_the_store_arrays(slice_texts):
    texts, titles = slice_texts
    counts = count_phrases(texts, titles)
    assert_same_counts(counts_from_arrays(counts_to_arrays(counts)), counts)
    assert all(isinstance(value, np.ndarray) for value in counts_to_arrays(counts).values())  # no pickle needed
    untitled = count_phrases(texts)
    assert counts_from_arrays(counts_to_arrays(untitled)).in_title is None


def test_the_stored_counts_are_read_back_compact(slice_texts):
    """What the store keeps and reads back is small: no data array (every entry is 1), int32 indices, float32 ones,
    and each writing keyed by the very str object of its key (one str per phrase fewer)."""
    texts, titles = slice_texts
    arrays = counts_to_arrays(count_phrases(texts, titles))
    assert "matrix_data" not in arrays and arrays["matrix_indices"].dtype == np.int32
    found = counts_from_arrays(arrays)
    for matrix in (found.matrix, found.in_title):
        assert matrix.dtype == np.float32 and matrix.indices.dtype == np.int32 and set(matrix.data.tolist()) == {1.0}
    assert all(stored is key for stored, key in zip(found.written, found.keys))


def test_names_ranked_from_float32_presence_equal_float64_ones(slice_texts):
    """The presence matrices are float32; every score computed from them equals the one from float64 matrices, so
    the names do not depend on the type."""
    texts, titles = slice_texts
    counts = count_phrases(texts, titles)
    wide = PhraseCounts(
        counts.matrix.astype(np.float64),
        counts.keys,
        counts.written,
        counts.abbreviations,
        counts.in_title.astype(np.float64),
        counts.short_share,
    )
    members = [index % 7 - 1 for index in range(len(texts))]  # six groups and some outliers
    parts = [index % 21 for index in range(len(texts))]
    assert counts.matrix.dtype == np.float32
    assert ranked_phrases(counts, members, parts) == ranked_phrases(wide, members, parts)
    indicator = counts.matrix[:5].T.tocsr()
    product = presence_sums(counts.matrix, indicator)
    assert product.dtype == np.float64
    assert np.array_equal(
        product.toarray(), (counts.matrix.astype(np.float64) @ indicator.astype(np.float64)).toarray()
    )


def test_lists_of_text_survive_the_store_lines():
    items = ["graph neural networks", "大規模 言語モデル", "ﬁne tuning", ""]
    found = lines_of_array(lines_array(items))
    assert found.dtype == object and found.tolist() == items
    assert lines_of_array(lines_array([])).tolist() == []
    with pytest.raises(ValueError, match="line break"):
        lines_array(["two\nlines"])


def test_a_second_process_counts_the_same_and_the_store_keeps_them(slice_texts, tmp_path: Path):
    texts, titles = slice_texts
    expected = count_phrases(texts, titles)
    store = open_store(tmp_path / "layouts")
    job = PhraseCountsJob(texts, titles, store, background=True)
    assert job.process is not None  # counted in a child process
    assert_same_counts(job.result(), expected)
    assert store.hits["phrases"] is False and job.process is None
    again = PhraseCountsJob(texts, titles, store, background=True)
    assert again.process is None  # in the store: no process started
    assert_same_counts(again.result(), expected)
    assert store.hits["phrases"] is True
    other_titles = PhraseCountsJob(texts, [title.upper() for title in titles], store, background=False)
    assert other_titles.key != job.key


def test_the_child_ends_before_its_counts_are_read_and_leaves_no_file(slice_texts):
    """The child writes its counts to a file and ends without waiting for the build to read them (its memory is the
    kernel's again while the build embeds and clusters); the build reads the same counts from the file, which goes
    with its folder."""
    texts, titles = slice_texts
    job = PhraseCountsJob(texts, titles, NullStore(), background=True)
    folder = job.folder
    job.process.join(120)  # nobody has read the pipe: the child ends all the same
    assert job.process.exitcode == 0 and (folder / "counts.npz").is_file()
    assert_same_counts(job.result(), count_phrases(texts, titles))
    assert not folder.exists() and job.folder is None


def test_a_child_that_dies_is_replaced_by_counting_here(slice_texts, caplog: pytest.LogCaptureFixture):
    texts, titles = slice_texts
    job = PhraseCountsJob(texts, titles, NullStore(), background=True)
    job.process.kill()
    with caplog.at_level(logging.WARNING, logger="pipeline.topics.naming.stored"):
        found = job.result()
    assert_same_counts(found, count_phrases(texts, titles))
    assert "counting them here" in caplog.text


def test_stop_ends_a_running_child(slice_texts):
    texts, titles = slice_texts
    job = PhraseCountsJob(texts * 20, titles * 20, NullStore(), background=True)
    process = job.process
    folder = job.folder
    job.stop()
    assert not process.is_alive() and job.process is None and not folder.exists()


def test_a_child_whose_build_is_gone_ends_quietly(slice_texts, capsys: pytest.CaptureFixture, tmp_path: Path):
    """The phrase counts' child sends to a pipe nobody reads any more (its build ended or was killed): it ends without
    an error or a traceback."""
    import multiprocessing

    from pipeline.topics.naming.stored import _count_in_child

    receiver, sender = multiprocessing.Pipe(duplex=False)
    receiver.close()
    _count_in_child(slice_texts[0][:30], None, sender, str(tmp_path / "counts.npz"))
    assert "Traceback" not in capsys.readouterr().err


def test_counts_do_not_depend_on_how_many_epochs_the_index_needed(slice_texts, monkeypatch: pytest.MonkeyPatch):
    """The phrase index codes each word as one character and begins a new epoch when the codes run out (a million
    documents need several). An ended epoch lets go of its runs and memos; the counts made over many small epochs
    equal those made in one."""
    from pipeline.topics.naming import phrase_index

    texts, titles = slice_texts
    expected = count_phrases(texts, titles)
    monkeypatch.setattr(phrase_index, "_CODES", 1_500)  # a few hundred distinct words an epoch
    epochs = []
    monkeypatch.setattr(
        phrase_index.PhraseIndex,
        "_end_epoch",
        lambda index, ended=phrase_index.PhraseIndex._end_epoch: (epochs.append(1), ended(index))[1],
    )
    found = count_phrases(texts, titles)
    assert len(epochs) >= 5
    assert_same_counts(found, expected)
    assert found.short_share == expected.short_share
