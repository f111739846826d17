"""The corpus's phrase counts kept in the layout store and counted in a second process
(pipeline.topics.naming.stored), on the real 300-paper slice."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from pipeline.runtime.parquet import read_frame
from pipeline.store.layouts import NullStore, open_store
from pipeline.topics.naming.phrase_counts import PhraseCounts, count_phrases
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
