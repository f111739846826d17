"""Which candidate phrases (pipeline.topics.naming.phrase_tokens) each document of a corpus writes: PhraseCounts.

A phrase is counted once per document under its key (pipeline.topics.naming.phrase_tokens.phrase_key: "Graph
Neural Networks" = "graph neural network"). Abbreviations defined in the corpus ("mixture of experts (MoE)",
pipeline.topics.naming.abbreviations) are counted under their expansion's key, so a topic that writes "MoE" and one
that writes the expansion count the same phrase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from pipeline.topics.naming.abbreviations import abbreviation_definitions, short_form_shares
from pipeline.topics.naming.phrase_index import PhraseIndex, counting_dtype
from pipeline.topics.naming.phrase_tokens import written_form

# A phrase must be written in at least this many documents of the corpus to be a candidate at all.
MIN_DOCUMENT_FREQUENCY = 3
# The presence matrices' data type: an entry is 1, and a sum of them over a million documents is still a whole number
# in float32 (exact to 2**24); float64 took 0.9 GB more at a million documents (docs/benchmarks.md). Sums are turned
# to float64 (:func:`presence_sums`) before anything that is not a whole number is computed from them.
PRESENCE_DTYPE = np.float32


@dataclass
class PhraseCounts:
    """Which candidate phrases each document writes.

    Attributes
    ----------
    matrix : CSR, n_documents x n_phrases, PRESENCE_DTYPE 1 where the document writes the phrase (or its abbreviation).
    keys : n_phrases phrase keys (:func:`phrase_key`), column order.
    written : {key: how the corpus most often writes it} (an expansion that has an abbreviation: "expansion (SF)").
    abbreviations : {expansion key: short form as written} for the phrases the corpus abbreviates.
    in_title : CSR of the same shape, 1 where the document's title writes it; None when no titles were given.
    short_share : {expansion key: share of the corpus's documents writing its short form} (short_form_shares); a
        part of a corpus (a topic's rows) keeps its corpus's shares.
    """

    matrix: sp.csr_matrix
    keys: list[str]
    written: dict[str, str]
    abbreviations: dict[str, str]
    in_title: sp.csr_matrix | None = None
    short_share: dict[str, float] = field(default_factory=dict)

    @property
    def document_frequency(self) -> np.ndarray:
        """int64, n_phrases: documents writing each phrase."""
        return np.asarray(self.matrix.sum(axis=0)).ravel().astype(np.int64)


def count_phrases(texts: Sequence[str], titles: Sequence[str] | None = None) -> PhraseCounts:
    """:class:`PhraseCounts` of ``texts`` (titles and abstracts, original case), phrases written in at least
    MIN_DOCUMENT_FREQUENCY documents. ``titles`` (one per text, or None): which of those phrases each title writes
    (``in_title``). About 3 CPU s per 10,000 titles and abstracts on one core (time.process_time on a 2-core VM
    whose speed varied by a third: 12-17 s for the 49,805 texts of caches/all-venues, 3-4 s for the 11,660 of
    caches/default; bench/labels.py times it).

    Raises ValueError when ``titles`` is not one per text, or when one text has more than sys.maxunicode distinct
    words (each word is coded as one character, pipeline.topics.naming.phrase_index)."""
    if titles is not None and len(titles) != len(texts):
        raise ValueError(f"count_phrases: {len(titles)} titles for {len(texts)} texts")
    definitions = abbreviation_definitions(texts)
    index = PhraseIndex()
    text_runs = index.document_runs(texts)
    title_runs = index.document_runs(str(title) for title in titles) if titles is not None else None
    index.finish({short: long_key for short, (long_key, _, _) in definitions.items()})
    chosen, sizes = index.last_writings(*text_runs)
    del text_runs  # what follows reads the writings chosen; at a million papers the runs were 0.3 GB
    chosen_keys = index.writing_keys[chosen]
    frequency = np.bincount(chosen_keys, minlength=index.key_count)  # documents writing each key
    frequent = np.flatnonzero(frequency >= MIN_DOCUMENT_FREQUENCY)
    by_key = sorted(zip(index.keys(frequent), frequent.tolist()))
    kept, kept_numbers = [key for key, _ in by_key], [number for _, number in by_key]
    column_of = np.full(index.key_count, -1, dtype=counting_dtype(len(kept)))  # key number -> column, -1 if not kept
    column_of[kept_numbers] = np.arange(len(kept))
    del by_key, kept_numbers
    matrix = _presence(column_of[chosen_keys], sizes, len(kept))
    del chosen_keys, sizes, frequency, frequent
    in_title = None
    if title_runs is not None:
        title_chosen, title_sizes = index.last_writings(*title_runs)
        in_title = _presence(column_of[index.writing_keys[title_chosen]], title_sizes, len(kept))
        del title_runs, title_chosen, title_sizes
    kept_keys = set(kept)
    abbreviations = {long_key: short for _, (long_key, _, short) in definitions.items() if long_key in kept_keys}
    expansions: dict[str, str] = {}
    for long_key, expansion, _ in definitions.values():
        expansions.setdefault(long_key, expansion)
    usual = _usual_writings(index, chosen, column_of)
    del chosen, column_of
    index.forget_lookups()  # the writings' surfaces are all that is read from here on
    surfaces = dict(zip(usual, index.surfaces(np.array(list(usual.values()), dtype=np.int64))))
    del index, usual
    written = {
        key: written_form(surfaces[column]) if column in surfaces else expansions[key]
        for column, key in enumerate(kept)
    }
    del surfaces
    return PhraseCounts(matrix, kept, written, abbreviations, in_title, short_form_shares(abbreviations, texts))


def _usual_writings(index: PhraseIndex, chosen: np.ndarray, column_of: np.ndarray) -> dict[int, int]:
    """{column: number of the writing most documents write the column's key with}, over the key's own writings (an
    abbreviation is not its expansion's writing), a tie going to the writing that a document chose first; a column
    none of whose own writings is chosen is left out. ``chosen``, ``column_of``: as in count_phrases."""
    documents = np.bincount(chosen, minlength=len(index.writing_keys))
    first = np.full(len(index.writing_keys), len(chosen), dtype=counting_dtype(len(chosen)))
    np.minimum.at(first, chosen, np.arange(len(chosen), dtype=counting_dtype(len(chosen))))
    columns = column_of[index.writing_keys]
    candidates = np.flatnonzero((documents > 0) & index.own_keys & (columns >= 0))
    ranked = candidates[np.lexsort((first[candidates], -documents[candidates], columns[candidates]))]
    leads = np.ones(len(ranked), dtype=bool)
    leads[1:] = columns[ranked[1:]] != columns[ranked[:-1]]
    return dict(zip(columns[ranked[leads]].tolist(), ranked[leads].tolist()))


def _presence(columns: np.ndarray, sizes: np.ndarray, n_columns: int) -> sp.csr_matrix:
    """CSR, len(sizes) x n_columns, 1.0 where a document writes a column's key, indices sorted. ``columns``: the
    documents' keys' columns (integers, -1 for a key without one), ``sizes[i]`` of them for document i, one after
    another."""
    inside = columns >= 0
    inside_before = np.zeros(
        len(columns) + 1, dtype=counting_dtype(len(columns))
    )  # entry -> entries with a column before
    np.cumsum(inside, out=inside_before[1:])
    indptr = inside_before[np.concatenate([[0], np.cumsum(sizes)])]
    matrix = sp.csr_matrix(
        (np.ones(int(indptr[-1]), dtype=PRESENCE_DTYPE), columns[inside], indptr), shape=(len(sizes), n_columns)
    )
    matrix.sort_indices()
    return matrix


def presence_sums(left: sp.spmatrix, right: sp.spmatrix) -> sp.csr_matrix:
    """``left @ right`` as float64 CSR, where one side is a presence matrix (PRESENCE_DTYPE) and the other any sparse
    matrix of whole numbers (a group indicator, a field's phrases). The product is made in PRESENCE_DTYPE, so the
    corpus-sized side is not copied to float64 (scipy casts both sides to their common type); its sums are whole
    numbers below 2**24, exact in float32, and equal to float64's."""
    product = left.astype(PRESENCE_DTYPE, copy=False) @ right.astype(PRESENCE_DTYPE, copy=False)
    return product.tocsr().astype(np.float64)


def column_sums(matrix: sp.spmatrix) -> np.ndarray:
    """float64 (n_columns,): the sums of a presence matrix's columns (whole numbers, exact: :func:`presence_sums`)."""
    return np.asarray(matrix.sum(axis=0)).ravel().astype(np.float64)
