"""The corpus's phrase counts (pipeline.topics.naming.phrase_counts.count_phrases) kept in the layout store and, on a
miss, counted in a second process while the build does other work.

The counts depend only on the documents' texts and titles, not on the clustering, so a rebuild with other topic or
clustering parameters reads them from the store (stage "phrases", keyed by both fingerprints and the phrases
module's code). Counting them is the largest single step of naming the topics (about 70 CPU seconds for the 49,805
papers of data/collections/all-venues.toml, docs/benchmarks.md); it needs nothing the build computes after cleaning,
so a cold build starts it in a child process right after the clean stage (:func:`start_phrase_counts`), where it
runs on the second core while the build's vocabulary, embedding and neighbour stages use one. The child writes the
counts to a file and ends, so its memory (8.4 GB at a million documents, docs/benchmarks.md) is free long before the
build reads them in its topics stage; a child that fails (killed, out of memory) is logged and the counts are made in
the build's own process: the same result, later.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from pipeline.runtime.scratch import scratch_folder
from pipeline.store.keys import StageKey, stage_key, texts_fingerprint
from pipeline.store.layouts import Arrays, StageStore
from pipeline.store.text_lines import lines_array, lines_of_array
from pipeline.topics.naming.phrase_counts import PRESENCE_DTYPE, PhraseCounts, count_phrases

log = logging.getLogger(__name__)

# From this many documents a build counts the phrases in a second process: counting takes about 1.4 CPU seconds per
# 1,000 abstracts, starting the process about 1 s (a fresh interpreter importing numpy and scipy).
BACKGROUND_MIN_DOCUMENTS = 5_000
# The columns of the file that hands the texts to the child process.
TEXT_COLUMN, TITLE_COLUMN = "text", "title"


def phrase_counts_key(texts: Sequence[str], titles: Sequence[str] | None) -> StageKey:
    """The key of stage "phrases": the texts' and titles' fingerprints (pipeline.store.keys.texts_fingerprint; no
    titles is its own key), the code of phrase_counts (with the modules it imports) and of this one, numpy and
    scipy."""
    return stage_key(
        "phrases",
        inputs={
            "texts": texts_fingerprint(texts),
            "titles": "none" if titles is None else texts_fingerprint(titles, "titles"),
        },
        libraries=("numpy", "scipy"),
        code=("pipeline.topics.naming.phrase_counts", __name__),
    )


def _presence_arrays(matrix: sp.csr_matrix, prefix: str) -> Arrays:
    """A presence matrix's structure (indptr int64, indices int32); not its data, which is 1 everywhere."""
    return {f"{prefix}_indptr": matrix.indptr.astype(np.int64), f"{prefix}_indices": matrix.indices.astype(np.int32)}


def _presence_of_arrays(arrays: Arrays, prefix: str, shape: tuple[int, int]) -> sp.csr_matrix:
    """The inverse of :func:`_presence_arrays`: a CSR of PRESENCE_DTYPE ones, the stored indices used as they are."""
    indices = arrays[f"{prefix}_indices"]
    data = np.ones(len(indices), dtype=PRESENCE_DTYPE)
    return sp.csr_matrix((data, indices, arrays[f"{prefix}_indptr"]), shape=shape)


def counts_to_arrays(counts: PhraseCounts) -> Arrays:
    """PhraseCounts as arrays for the layout store (no pickle): both matrices' structure (their entries are all 1),
    the shape, the keys and their writings as UTF-8 text a line each (pipeline.store.text_lines; ``written`` must hold
    every key, as count_phrases makes it), the abbreviations and short-form shares as UTF-8 JSON (uint8).

    At a million documents the matrices hold about 118 million entries: stored as float64 data and int64 indices,
    then read into a CSR with int32 copies of the indices, they took 2.3 GB while being read (memray,
    docs/benchmarks.md); the writings as JSON beside the keys, 1.1 GB of Python objects."""
    text = json.dumps({"abbreviations": counts.abbreviations, "short_share": counts.short_share})
    arrays: Arrays = {
        "shape": np.asarray(counts.matrix.shape, dtype=np.int64),
        "keys": lines_array(counts.keys),
        "written": lines_array([counts.written[key] for key in counts.keys]),
        "strings": np.frombuffer(text.encode("utf-8"), dtype=np.uint8),
        **_presence_arrays(counts.matrix, "matrix"),
    }
    if counts.in_title is not None:
        arrays.update(_presence_arrays(counts.in_title, "in_title"))
    return arrays


def counts_from_arrays(arrays: Arrays) -> PhraseCounts:
    """The PhraseCounts :func:`counts_to_arrays` stored; ``written`` shares its keys' str objects with ``keys``."""
    rows, columns = (int(value) for value in arrays["shape"])
    strings = json.loads(arrays["strings"].tobytes().decode("utf-8"))
    keys = lines_of_array(arrays["keys"]).tolist() if columns else []
    written = lines_of_array(arrays["written"]).tolist() if columns else []
    return PhraseCounts(
        _presence_of_arrays(arrays, "matrix", (rows, columns)),
        keys,
        dict(zip(keys, written)),
        dict(strings["abbreviations"]),
        _presence_of_arrays(arrays, "in_title", (rows, columns)) if "in_title_indptr" in arrays else None,
        {key: float(share) for key, share in strings.get("short_share", {}).items()},
    )


def _count_in_child(texts_path: str, with_titles: bool, sender: Any, target: str) -> None:
    """What the child process runs: count_phrases with one thread per library pool, over the texts (and titles) of
    the file ``texts_path`` (pipeline.runtime.streamed_texts, read a batch at a time on each pass, never held whole),
    its arrays written to ``target`` (an .npz file, numpy without pickle); sends ("file", target) or ("error",
    message) through ``sender``, or nothing when the build is gone (ended, or killed for memory: the 1M build of
    docs/benchmarks.md left this process printing a BrokenPipeError's traceback). The child ends once it has sent:
    what the build reads later is on disk, not held by a process waiting for its pipe to be read."""
    from pipeline.runtime.streamed_texts import StreamedTexts
    from pipeline.runtime.threads import limit_threads

    limit_threads()
    try:
        texts = StreamedTexts(texts_path, TEXT_COLUMN)
        titles = StreamedTexts(texts_path, TITLE_COLUMN) if with_titles else None
        np.savez(target, **counts_to_arrays(count_phrases(texts, titles)))  # type: ignore[arg-type]
        message: tuple[str, Any] = ("file", target)
    except Exception as error:  # reported to the parent, which counts again and says so
        message = ("error", f"{type(error).__name__}: {error}")
    try:
        sender.send(message)
    except (BrokenPipeError, ConnectionResetError):  # no reader left: nobody to tell
        pass
    finally:
        sender.close()


class PhraseCountsJob:
    """The corpus's phrase counts (count_phrases(texts, titles)), asked for later with :meth:`result`: from the store
    when it holds them (hit or miss in ``store.hits["phrases"]``), else from a child process started at once (a
    ``spawn`` process: nothing of this process's threads or locks is copied; it reads the texts from a file of a
    temporary folder, a batch at a time, and writes the counts into it) when ``background``, else counted when asked
    for. :meth:`stop` ends a child still running (a build that failed before naming) and removes the folder."""

    def __init__(
        self, texts: Sequence[str], titles: Sequence[str] | None, store: StageStore, background: bool = True
    ) -> None:
        self.key = phrase_counts_key(texts, titles)
        self.texts, self.titles = list(texts), None if titles is None else list(titles)
        self.store = store
        self.process: Any = None
        self.receiver: Any = None
        self.folder: Path | None = None
        if background and not store.contains(self.key):
            from pipeline.runtime.streamed_texts import write_texts

            context = multiprocessing.get_context("spawn")
            self.receiver, sender = context.Pipe(duplex=False)
            self.folder = scratch_folder("atlas-phrases-")
            texts_path = self.folder / "texts.parquet"
            columns = {TEXT_COLUMN: self.texts} | ({} if self.titles is None else {TITLE_COLUMN: self.titles})
            write_texts(texts_path, columns)
            arguments = (str(texts_path), self.titles is not None, sender, str(self.folder / "counts.npz"))
            self.process = context.Process(target=_count_in_child, args=arguments, name="atlas-phrases", daemon=True)
            self.process.start()
            sender.close()  # the child holds the other end: its exit ends the pipe (EOFError here)

    def _compute(self) -> Arrays:
        if self.receiver is not None:
            try:
                kind, value = self.receiver.recv()
                if kind == "file":
                    with np.load(value, allow_pickle=False) as stored:
                        return {name: stored[name] for name in stored.files}
                log.warning("counting the phrases in a second process failed (%s); counting them here", value)
            except (EOFError, OSError, ValueError) as error:  # the child died (killed, out of memory), a torn file
                log.warning("the process counting the phrases ended early (%r); counting them here", error)
        return counts_to_arrays(count_phrases(self.texts, self.titles))

    def result(self) -> PhraseCounts:
        """The counts; waits for the child process when it still runs. Raises ValueError when titles are not one
        per text."""
        try:
            return counts_from_arrays(self.store.cached(self.key, self._compute))
        finally:
            self.stop()

    def stop(self) -> None:
        """End the child process if it still runs and remove its folder; nothing when there is none."""
        if self.process is not None:
            if self.process.is_alive():
                self.process.terminate()
            self.process.join()
            self.receiver.close()
            self.process = self.receiver = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
