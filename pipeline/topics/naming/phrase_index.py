"""The n-gram index of one count_phrases call (pipeline.topics.naming.phrase_counts): every text's runs of words
coded as strings of one-character word codes, their candidate n-grams (pipeline.topics.naming.phrase_tokens) found
and numbered in bulk, and for each text the writing it last writes each phrase key with.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable
from itertools import chain, count
from typing import Any, NamedTuple

import numpy as np

from pipeline.topics.naming.phrase_tokens import PIECE, clean_markup, ngram_slices, rule_code, word_token


def counting_dtype(bound: int) -> type[np.signedinteger[Any]]:
    """int32 when it holds 0..``bound``, else int64: the numbers and indices in the big arrays of count_phrases are
    int32 where they can be, fresh memory costing system time."""
    return np.int32 if bound < 2**31 else np.int64


class _Numbering(dict[str, int]):
    """A dict that numbers a missing key: the next number, 0 onwards."""

    def __missing__(self, key: str) -> int:
        number = self[key] = len(self)
        return number


class _Memo(dict[Any, Any]):
    """A dict that computes a missing key's value with ``compute`` and keeps it (for one count_phrases call)."""

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.compute(key)
        return value


# The code of every piece that cuts a run; a word's code is one character from chr(1) on, so an epoch codes at most
# _CODES - 1 words.
_RUN_BREAK = "\0"
_CODES = sys.maxunicode + 1
# Runs of texts whose n-grams PhraseIndex.last_writings sorts at a time (a few MB of arrays).
_CHUNK_RUNS = 200_000


class _Epoch:
    """One-character codes for the words met since the epoch began, and the distinct runs (strings of codes) met,
    numbered by :class:`PhraseIndex`'s counter."""

    def __init__(self, part_numbers: _Numbering) -> None:
        self.part_numbers = part_numbers  # a word of a phrase key -> its number (one numbering for all epochs)
        self.words = [_RUN_BREAK]  # code point -> word
        self.rules = [0]  # code point -> its word's rule_code
        self.parts = array("q")  # the numbers of the words of each code's phrase_key, code after code
        self.part_firsts = array("q", [0])  # code point -> where its key's words begin in parts
        self.part_counts = array("q", [0])  # code point -> how many words its key has
        self.piece_codes = _Memo(self._piece_code)  # word or punctuation mark -> its code
        self.token_codes = _Memo(self._token_codes)  # text between whitespace -> its pieces' codes
        self.runs: dict[str, int] = {}  # run -> its number
        self.joined = ""  # the runs joined by _RUN_BREAK, once the epoch has ended

    def surface(self, codes: str) -> str:
        """The words ``codes`` as written, joined by spaces."""
        return " ".join([self.words[ord(code)] for code in codes])

    def _piece_code(self, piece: str) -> str:
        """The code of a piece met for the first time in this epoch."""
        token = word_token(piece)
        if token.breaks:
            return _RUN_BREAK
        code = len(self.words)
        self.words.append(piece)
        self.rules.append(rule_code(token))
        self.part_firsts.append(len(self.parts))
        self.parts.extend(map(self.part_numbers.__getitem__, token.key.split(" ")))
        self.part_counts.append(len(self.parts) - self.part_firsts[-1])
        return chr(code)

    def _token_codes(self, token: str) -> str:
        """The codes of the pieces of ``token`` (text between whitespace), with the breaks that the whitespace around
        it makes: a "'" beginning or ending it, a lone "-" (the ``\\s'``, ``'\\s`` and ``\\s-\\s`` of PIECE)."""
        if token.isascii() and token.isalnum():  # one word, the most common token
            return self.piece_codes[token]
        codes = "".join(map(self.piece_codes.__getitem__, PIECE.findall(token)))
        if token[0] == "'":
            codes = _RUN_BREAK + codes
        if token[-1] == "'" or token == "-":
            codes += _RUN_BREAK
        return codes


class _EndedEpoch(NamedTuple):
    """What :class:`PhraseIndex` keeps of an epoch: where its new writings are in its runs joined, and the words of
    their keys (of :func:`_key_words`)."""

    first: int  # number of its first new writing
    epoch: _Epoch
    starts: np.ndarray  # per new writing: where it starts in epoch.joined
    stops: np.ndarray  # ... and stops
    key_words: np.ndarray  # numbers of words of phrase keys
    key_starts: np.ndarray  # per new writing: where its key's words start in key_words
    key_lengths: np.ndarray  # ... how many there are


class PhraseIndex:
    """The candidate phrases of the texts of one count_phrases call.

    Each word gets a one-character code (:class:`_Epoch`), so a text's runs are ``str.split`` of its words' codes;
    the distinct runs' n-grams are then found and numbered in bulk (:meth:`_end_epoch`), however many texts write
    them. A writing is an n-gram as written; its key is its phrase_key (numbered as a sequence of word numbers, see
    :meth:`finish`) or, for a one-word abbreviation, its expansion's. When the codes run out an epoch ends and a new
    one begins; its n-grams are matched with the earlier epochs' writings by surface.
    """

    def __init__(self) -> None:
        self.run_counter = count()
        self.part_numbers = _Numbering()  # a word of a phrase key -> its number
        self.epoch = _Epoch(self.part_numbers)
        self.epochs: list[_EndedEpoch] = []
        self.writing_count = 0
        self.run_numbers: list[np.ndarray] = []  # per ended epoch: its distinct runs' numbers
        self.run_sizes: list[np.ndarray] = []  # ... how many n-grams each has
        self.run_writings: list[np.ndarray] = []  # ... the writing numbers of their n-grams, run after run
        self.surface_numbers: dict[str, int] | None = None  # surface -> writing number, from a second epoch on

    def document_runs(self, texts: Iterable[str]) -> tuple[array, array]:
        """(runs, counts), int64 arrays: the numbers of each text's runs in order, one text after another; runs per
        text. ``texts`` is read once, in order."""
        runs, counts = array("q"), array("q")
        for text in texts:
            cleaned = clean_markup(text)
            if len(self.epoch.words) + len(cleaned) > _CODES:  # maybe more new words than codes left
                self._end_epoch()
            codes = "".join(map(self.epoch.token_codes.__getitem__, cleaned.split()))
            before = len(runs)
            runs.extend(map(self.epoch.runs.setdefault, filter(None, codes.split(_RUN_BREAK)), self.run_counter))
            counts.append(len(runs) - before)
        return runs, counts

    def _end_epoch(self) -> None:
        """Finds the n-grams of the epoch's runs and numbers their new writings; begins a new epoch."""
        epoch = self.epoch
        epoch.joined = _RUN_BREAK.join(epoch.runs)
        codes = np.frombuffer(epoch.joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        starts, lengths = ngram_slices(np.array(epoch.rules, dtype=np.int8)[codes])
        starts = starts.astype(counting_dtype(len(codes)))
        numbers, firsts = _number_sequences(codes, starts, lengths, len(epoch.words))
        first_starts, first_stops = starts[firsts], starts[firsts] + lengths[firsts]
        first = self.writing_count
        writing_of = np.arange(first, first + len(firsts), dtype=counting_dtype(first + len(firsts)))  # one to one
        if self.epochs:
            writing_of, new = self._match_surfaces(epoch, first_starts, first_stops)
            first_starts, first_stops = first_starts[new], first_stops[new]
        self.writing_count += len(first_starts)
        key_words = _key_words(epoch, codes, first_starts, first_stops)
        self.epochs.append(_EndedEpoch(first, epoch, first_starts, first_stops, *key_words))
        self.run_numbers.append(np.fromiter(epoch.runs.values(), dtype=np.int64, count=len(epoch.runs)))
        self.run_sizes.append(np.bincount(np.cumsum(codes == 0, dtype=np.int32)[starts], minlength=len(epoch.runs)))
        self.run_writings.append(writing_of[numbers])
        # An ended epoch is read only through its words and joined runs: its runs' strings and its memos go (at
        # 285,717 papers the runs alone were 534 MiB, the token codes 203 MiB; docs/benchmarks.md).
        for kept in (epoch.runs, epoch.token_codes, epoch.piece_codes):
            kept.clear()
        self.epoch = _Epoch(self.part_numbers)

    def _match_surfaces(self, epoch: _Epoch, starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(writing numbers, new) of the distinct n-grams of an epoch after the first (``starts``, ``stops`` in its
        joined): the number of an earlier writing of the same surface, else the next new number."""
        if self.surface_numbers is None:
            earlier = np.arange(self.writing_count)
            self.surface_numbers = dict(zip(self.surfaces(earlier), earlier.tolist()))
        numbers = np.empty(len(starts), dtype=counting_dtype(self.writing_count + len(starts)))
        new = np.zeros(len(starts), dtype=bool)
        next_number = self.writing_count
        for index, (start, stop) in enumerate(zip(starts.tolist(), stops.tolist())):
            numbers[index] = self.surface_numbers.setdefault(epoch.surface(epoch.joined[start:stop]), next_number)
            if numbers[index] == next_number:
                new[index] = True
                next_number += 1
        return numbers, new

    def surfaces(self, numbers: np.ndarray) -> list[str]:
        """The writings ``numbers`` as written."""
        found = [""] * len(numbers)
        for ended in self.epochs:
            inside = np.flatnonzero((numbers >= ended.first) & (numbers < ended.first + len(ended.starts)))
            local = numbers[inside] - ended.first
            for place, start, stop in zip(inside.tolist(), ended.starts[local].tolist(), ended.stops[local].tolist()):
                found[place] = ended.epoch.surface(ended.epoch.joined[start:stop])
        return found

    def finish(self, short_to_long: dict[str, str]) -> None:
        """Ends the last epoch; numbers the keys (:meth:`_number_keys`) and sets the lookups of
        :meth:`last_writings`. ``short_to_long``: {abbreviation key: expansion key}."""
        self._end_epoch()
        self._number_keys(short_to_long)
        numbers, sizes = np.concatenate(self.run_numbers), np.concatenate(self.run_sizes)
        index_type = counting_dtype(int(sizes.sum()))
        self.run_first = np.zeros(next(self.run_counter), dtype=index_type)  # run number -> where its n-grams begin
        self.run_first[numbers] = np.cumsum(sizes) - sizes
        self.run_size = np.zeros(len(self.run_first), dtype=index_type)  # run number -> how many n-grams it has
        self.run_size[numbers] = sizes
        self.run_ngram_writings = np.concatenate(self.run_writings)  # the writings of the runs' n-grams
        for parts in (self.run_numbers, self.run_sizes, self.run_writings):  # now in the arrays above
            parts.clear()

    def _number_keys(self, short_to_long: dict[str, str]) -> None:
        """Numbers the keys, in no particular order: sets ``key_count``, ``writing_keys`` and ``own_keys`` (integers and
        booleans, per writing: its key's number, and whether that key is its phrase_key rather than an expansion's).

        A key is numbered as the sequence of its words' numbers (:func:`_number_sequences`), so no key string is made
        but by :meth:`keys`; the keys of the abbreviations, then of their expansions, are numbered after the
        writings', and then each abbreviation's key is counted as its expansion's."""
        pairs = [(short, long_key) for short, long_key in short_to_long.items() if short in self.part_numbers]
        extra = [  # the words of the abbreviations' keys, then of the expansions'
            list(map(self.part_numbers.__getitem__, key.split(" ")))
            for key in [short for short, _ in pairs] + [long_key for _, long_key in pairs]
        ]
        words = [ended.key_words for ended in self.epochs] + [np.fromiter(chain.from_iterable(extra), dtype=np.int64)]
        offsets = np.cumsum([0] + [len(part) for part in words]).tolist()
        extra_lengths = np.array([len(parts) for parts in extra], dtype=np.int64)
        starts = [ended.key_starts + offset for ended, offset in zip(self.epochs, offsets)]
        starts.append(offsets[-2] + np.cumsum(extra_lengths) - extra_lengths)
        lengths = [ended.key_lengths for ended in self.epochs] + [extra_lengths]
        self.key_words, self.key_starts, self.key_lengths = (np.concatenate(part) for part in (words, starts, lengths))
        del words, starts, lengths  # the epochs' own copies go too: the concatenations above are all that is read
        nothing = np.zeros(0, dtype=np.int64)
        self.epochs = [
            ended._replace(key_words=nothing, key_starts=nothing, key_lengths=nothing) for ended in self.epochs
        ]
        numbers, self.key_firsts = _number_sequences(
            self.key_words, self.key_starts, self.key_lengths, len(self.part_numbers)
        )
        self.key_count = len(self.key_firsts)
        own, shorts, longs = np.split(numbers, [self.writing_count, self.writing_count + len(pairs)])
        counted = np.arange(self.key_count, dtype=counting_dtype(self.key_count))
        counted[shorts] = longs
        self.writing_keys = counted[own]
        self.own_keys = self.writing_keys == own
        self.part_list = list(self.part_numbers)

    def forget_lookups(self) -> None:
        """Let go of what :meth:`finish` made for :meth:`keys` and :meth:`last_writings` (the runs' n-grams, the keys'
        words, the writings' keys): :meth:`surfaces` alone works after it. At a million papers these were about a
        gigabyte, held while count_phrases made its dicts of millions of strings (docs/benchmarks.md)."""
        nothing = np.zeros(0, dtype=np.int64)
        self.run_first = self.run_size = self.run_ngram_writings = nothing
        self.key_words = self.key_starts = self.key_lengths = self.key_firsts = nothing
        self.writing_keys, self.own_keys = nothing, np.zeros(0, dtype=bool)
        self.part_list = []
        self.part_numbers.clear()
        self.surface_numbers = None  # surface -> writing number, for matching later epochs

    def keys(self, numbers: np.ndarray) -> list[str]:
        """The keys ``numbers`` (of :meth:`finish`)."""
        firsts = self.key_firsts[numbers]
        starts, lengths = self.key_starts[firsts], self.key_lengths[firsts]
        words = list(map(self.part_list.__getitem__, self.key_words[_ranges(starts, lengths)].tolist()))
        ends = np.cumsum(lengths).tolist()
        return [" ".join(words[start:stop]) for start, stop in zip([0] + ends[:-1], ends)]

    def last_writings(self, runs: array, counts: array) -> tuple[np.ndarray, np.ndarray]:
        """(chosen, sizes), integer arrays, of :meth:`document_runs`' (runs, counts): for each text in turn, for each
        key it writes (in key number order), the number of the writing it last writes that key with; ``sizes[i]`` such
        numbers for text i. Worked out for about _CHUNK_RUNS runs at a time: fresh memory costs much system time."""
        numbers, counts_array = np.frombuffer(runs, dtype=np.int64), np.frombuffer(counts, dtype=np.int64)
        run_ends = np.cumsum(counts_array)  # text -> where its runs end in numbers
        cuts = np.searchsorted(run_ends, np.arange(_CHUNK_RUNS, len(numbers), _CHUNK_RUNS), side="right")
        bounds = np.unique(np.concatenate([[0], cuts, [len(counts_array)]])).tolist()  # texts of each chunk
        # Seeded with empty arrays of the chunks' own types: an int64 seed made the corpus-sized result int64 too (at a
        # million papers 0.5 GB more than the int32 of the writings' numbers).
        chosen = [np.zeros(0, dtype=self.run_ngram_writings.dtype)]
        sizes = [np.zeros(0, dtype=np.int64)]
        for start, stop in zip(bounds[:-1], bounds[1:]):
            first_run = int(run_ends[start - 1]) if start else 0
            chunk = self._chunk_writings(numbers[first_run : run_ends[stop - 1]], counts_array[start:stop])
            chosen.append(chunk[0])
            sizes.append(chunk[1])
        return np.concatenate(chosen), np.concatenate(sizes)

    def _chunk_writings(self, numbers: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """last_writings of the texts whose run numbers are ``numbers``, ``counts[i]`` for text i."""
        lengths = self.run_size[numbers]
        writings = self.run_ngram_writings[_ranges(self.run_first[numbers], lengths)]  # every n-gram, in order
        document_keys = np.repeat(np.repeat(np.arange(len(counts), dtype=np.int64) * self.key_count, counts), lengths)
        document_keys += self.writing_keys[writings]  # text * key_count + key number of each n-gram
        order = np.argsort(document_keys, kind="stable")
        ordered = document_keys[order]
        last = np.empty(len(order), dtype=bool)  # the last n-gram of each (text, key)
        np.not_equal(ordered[1:], ordered[:-1], out=last[:-1])
        last[-1:] = True
        return writings[order[last]], np.bincount(ordered[last] // max(self.key_count, 1), minlength=len(counts))


def _key_words(
    epoch: _Epoch, codes: np.ndarray, starts: np.ndarray, stops: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(words, key_starts, key_lengths), integer arrays: the numbers of the words of the phrase keys of the n-grams
    codes[starts[i] : stops[i]] of an epoch, n-gram i's at words[key_starts[i] : key_starts[i] + key_lengths[i]].
    A word's key is one word but for hyphenated words, so the first len(codes) words are each code's first key word,
    in place, and the keys of the n-grams with a hyphenated word are laid out after them."""
    parts = np.array(epoch.parts, dtype=counting_dtype(len(epoch.part_numbers)))
    part_counts, part_firsts = np.array(epoch.part_counts, dtype=np.int64), np.array(epoch.part_firsts, dtype=np.int64)
    in_place = np.append(parts, 0)[part_firsts][codes]  # 0 at the breaks
    hyphenated = np.zeros(len(codes) + 1, dtype=counting_dtype(len(codes)))  # code index -> hyphenated words before it
    np.cumsum((part_counts > 1)[codes], out=hyphenated[1:])
    split = np.flatnonzero(hyphenated[stops] > hyphenated[starts])  # the n-grams with a hyphenated word
    sizes = stops[split] - starts[split]
    positions = codes[_ranges(starts[split], sizes)]  # their words' codes, one n-gram after another
    counts = part_counts[positions]
    laid_out = parts[_ranges(part_firsts[positions], counts)]
    words_before = np.concatenate([[0], np.cumsum(counts)])  # index in positions -> key words laid out before it
    position_ends = np.cumsum(sizes)
    begins, ends = words_before[position_ends - sizes], words_before[position_ends]
    key_starts, key_lengths = starts.astype(np.int64), stops - starts
    key_starts[split] = len(codes) + begins
    key_lengths[split] = ends - begins
    return np.concatenate([in_place, laid_out]), key_starts, key_lengths


def _ranges(firsts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """int64: the integers of the ranges [firsts[i], firsts[i] + lengths[i]), one range after another."""
    some = lengths > 0
    firsts, lengths = firsts[some], lengths[some]
    found = np.ones(int(lengths.sum()), dtype=np.int64)
    if len(found):
        found[0] = firsts[0]
        found[np.cumsum(lengths[:-1])] = firsts[1:] - firsts[:-1] - lengths[:-1] + 1
        np.cumsum(found, out=found)
    return found


def _number_sequences(
    digits: np.ndarray, starts: np.ndarray, lengths: np.ndarray, base: int
) -> tuple[np.ndarray, np.ndarray]:
    """(numbers, firsts), integer arrays: the sequences digits[starts[i] : starts[i] + lengths[i]] (each digit below
    ``base``) numbered so that equal sequences, and only they, share a number; firsts[k] is the index of a sequence
    numbered k. Each length's sequences are packed into int64 as numbers in ``base``, renumbered before they would
    overflow."""
    numbers = np.empty(len(starts), dtype=counting_dtype(len(starts)))
    firsts = []
    numbered = 0
    for length in np.unique(lengths).tolist():
        which = np.flatnonzero(lengths == length)
        values = digits[starts[which]].astype(np.int64)
        for offset in range(1, length):
            if values.max() >= np.iinfo(np.int64).max // base - 1:
                values = _dense_numbers(values, None)[0].astype(np.int64)
            values *= base
            values += digits[offset:][starts[which]]
        group_numbers, group_firsts = _dense_numbers(values, base if length == 1 else None)
        numbers[which] = group_numbers + numbered
        firsts.append(which[group_firsts])
        numbered += len(group_firsts)
    return numbers, np.concatenate(firsts) if firsts else np.zeros(0, dtype=np.int64)


def _dense_numbers(values: np.ndarray, below: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(numbers, firsts), integer arrays: ``values`` numbered 0.. in increasing order of value, equal values alike;
    firsts[k] is the index of a value numbered k. ``below``: a bound on the values, when small enough for a table (no
    sort)."""
    if below is not None:
        present = np.zeros(below, dtype=bool)
        present[values] = True
        some_index = np.empty(below, dtype=np.int64)
        some_index[values] = np.arange(len(values))
        return (np.cumsum(present) - 1)[values], some_index[present]
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.empty(len(values), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    numbers = np.empty(len(values), dtype=counting_dtype(len(values)))
    numbers[order] = np.cumsum(new) - 1
    return numbers, order[new]
