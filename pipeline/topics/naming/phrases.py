"""Candidate names: the noun-phrase-like n-grams of titles and abstracts, counted per document.

No part-of-speech tagger ships its model inside a well-kept wheel in this project's environment (spaCy and NLTK
download theirs), so phrases are found as RAKE does (Rose et al. 2010, "Automatic keyword extraction from
individual documents"): a text is cut at punctuation, at stop words and at the generic words of research prose
("propose", "novel", "results", ...), and every run of the remaining words gives its n-grams of 1-4 words. One "of"
may stand inside a phrase ("mixture of experts"); a phrase never ends with an adjective or adverb ending ("-ly",
"-ive", "-ous", "-al", ...) nor is a single number. Markup never becomes a candidate: LaTeX commands and
environments (``\\begin{abstract}``), inline maths, HTML tags, Markdown marks and URLs cut the text like punctuation.

A phrase is counted once per document under its key: lower case, each word without a plural "s", hyphens and
spaces alike ("Graph Neural Networks" = "graph neural network"). Abbreviations defined in the corpus ("mixture of
experts (MoE)", Schwartz & Hearst 2003, "A simple algorithm for identifying abbreviation definitions in biomedical
text") are counted under their expansion's key, so a topic that writes "MoE" and one that writes the expansion
count the same phrase.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, count, groupby
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

MAX_WORDS = 4
# A phrase must be written in at least this many documents of the corpus to be a candidate at all.
MIN_DOCUMENT_FREQUENCY = 3
# An abbreviation definition must be seen this many times before its short form counts as its expansion.
MIN_DEFINITIONS = 2

_MARKUP = re.compile(
    r"\\[A-Za-z]+\*?(?:\{[^{}]*\})*"  # \begin{abstract}, \textbf{, \cite{x}
    r"|\$[^$]*\$"  # inline maths
    r"|</?[A-Za-z][^<>]*>"  # HTML tags
    r"|https?://\S+|www\.\S+"  # URLs
    r"|[*_`#~|\[\]{}\\^=<>]"  # Markdown marks and what is left of markup
)
_BREAK = re.compile(r"[.,;:!?()\"/+&%@]|\s'|'\s|--|\s-\s")
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*")
_ABBREVIATION = re.compile(r"\(([A-Za-z][A-Za-z0-9\-]{1,9})\)")

FUNCTION_WORDS = frozenset(
    """a an and are as at be been being of but by can could do does for from had has have how if in into is it its
    may might must not on onto or our over per should so such than that the their them then there these they this
    those through thus to toward towards under upon us via vs was we were what when where whether which while who
    whose why will with within without would yet also both each either every few many more most much only other
    same some very all any no nor own too here one two three first second i ii iii e g eg ie et al etc
    between among across against beyond during after before about above below around along""".split()
)
# Words of research prose that say nothing of a subject: they cut phrases like stop words.
GENERIC_WORDS = frozenset(
    """propose proposes proposed proposing present presents presented introduce introduces introduced show shows
    shown showing demonstrate demonstrates demonstrated achieve achieves achieved achieving novel new existing
    recent recently prior previous state art sota paper work works study studies approach approaches method methods
    technique techniques framework frameworks result results outperform outperforms outperforming performance
    performances significantly significant experiments experiment experimental extensive empirical empirically
    evaluate evaluated evaluation based using use used uses leverage leverages leveraging enable enables enabling
    improve improves improved improving improvement improvements however furthermore moreover additionally
    specifically particular particularly various different several key important crucial effective effectively
    efficient efficiently simple strong better best superior well able ability problem problems task tasks
    challenge challenges challenging issue issues address addresses addressing limited limitations lack remain
    remains code available github com https http abstract introduction conclusion keywords theorem lemma proof
    provide provides providing obtain obtains often usually typically generally widely commonly including include
    includes given make makes making way ways allow allows aim aims goal yields yield lead leads find finds found
    develop develops developed design designed conduct conducted consider considers considered called termed named
    publicly furthermore benchmark benchmarks""".split()
)
_BREAKERS = FUNCTION_WORDS | GENERIC_WORDS
# A phrase's last word is its head noun: these endings are adjectives, adverbs and participles ("neural", "robustly").
_NOT_HEAD = re.compile(r"(?:ly|ed|ive|ous|ful|able|ible|al|ic|ian|ar|less)$")
_ADJECTIVES = frozenset(
    """private equivariant invariant robust multimodal diverse sparse deep large small high low long short complex
    accurate fair safe hard open free wide discrete continuous linear nonlinear fast slow real visual unseen
    pretrained pre-trained fine-grained high-dimensional low-dimensional large-scale small-scale""".split()
)
_HEAD_NOUNS = frozenset(
    """retrieval signal signals interval intervals potential proposal removal arrival material materials animal
    animals trial trials manual individual individuals principal rival survival metric metrics logic music topic
    topics graphic graphics seed seeds need needs speed embed bed grid weed feed feeds objective objectives
    alternative alternatives narrative narratives primitive primitives collective derivative derivatives ic
    radar grammar scalar scalars polar bar car cars solar""".split()
)


def fold(word: str) -> str:
    """A word's key: lower case without a plural "s" ("Networks" -> "network", "class" and "loss" kept)."""
    word = word.lower()
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_KEY_SEPARATORS = re.compile(r"[\s\-]+")


def phrase_key(phrase: str) -> str:
    """The key two writings of one phrase share: :func:`fold` of each word, hyphens as spaces."""
    return " ".join(fold(part) for part in _KEY_SEPARATORS.split(phrase) if part)


# A text holding none of these has no markup (``in`` finds a character or word in C, faster than a regex search).
_MARKUP_MARKS = ("\\", "$", "<", ">", "*", "_", "`", "#", "~", "|", "[", "]", "{", "}", "^", "=", "http", "www.")


def clean_markup(text: str) -> str:
    """``text`` with LaTeX, HTML, Markdown and URLs replaced by a phrase break (" . ")."""
    return _MARKUP.sub(" . ", text) if any(mark in text for mark in _MARKUP_MARKS) else text


# A word ([A-Za-z0-9]+ joined by single hyphens or apostrophes) or a punctuation mark; possessive quantifiers (never
# backtracked into, which a word never needs) make the search about a fifth faster.
_PIECE = re.compile(r"[A-Za-z0-9]++(?:[-'][A-Za-z0-9]++)*+|[.,;:!?()\"/+&%@]|\s'|'\s|--|\s-\s")


class _Token(NamedTuple):
    """What the n-gram rules need to know of one written word (memoised per spelling)."""

    key: str  # phrase_key of the word
    breaks: bool  # cuts a run (stop word, generic word, number, punctuation)
    is_of: bool
    head: bool  # may end a phrase
    single: bool  # may be a phrase on its own (three characters or more)


_TOKENS: dict[str, _Token] = {}
_LETTER = re.compile(r"[A-Za-z]")


def _token(piece: str) -> _Token:
    """The memoised :class:`_Token` of ``piece`` (a word or a punctuation mark of ``_PIECE``)."""
    found = _TOKENS.get(piece)
    if found is None:
        lowered = piece.lower()
        word = piece[0].isalnum()
        letter = _LETTER.search(piece) is not None
        last = lowered.rpartition("-")[2]
        found = _Token(
            key=" ".join([fold(part) for part in piece.split("-") if part]) if word else "",  # phrase_key(piece)
            breaks=not word or not letter or (lowered != "of" and lowered in _BREAKERS),
            is_of=lowered == "of",
            head=lowered != "of"
            and lowered not in _ADJECTIVES
            and (not _NOT_HEAD.search(last) or last in _HEAD_NOUNS or piece.isupper()),
            single=len(piece) >= 3 and lowered != "of",
        )
        if len(_TOKENS) < 2_000_000:
            _TOKENS[piece] = found
    return found


def _breaks(piece: str) -> bool:
    """``piece`` cuts a run (:class:`_Token` ``breaks``)."""
    return _token(piece).breaks


def runs(text: str) -> list[list[str]]:
    """The runs of candidate words of ``text``: cut at markup, punctuation and the breaking words ("of" kept)."""
    return [list(run) for cut, run in groupby(_PIECE.findall(clean_markup(text)), _breaks) if not cut]


# The bits of a word's n-gram rule code (:func:`_rule_code`); a piece that cuts runs has none.
_WORD, _OF, _HEAD, _SINGLE = 8, 4, 2, 1


def _rule_code(token: _Token) -> int:
    """What the n-gram rules need of a word that does not cut runs, as bits: _WORD, _OF ("of"), _HEAD (may end a
    phrase), _SINGLE (may be a phrase on its own)."""
    return _WORD + _OF * token.is_of + _HEAD * token.head + _SINGLE * token.single


def _ngram_slices(rules: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, lengths), int64 and int8: the acceptable n-grams of runs of words whose :func:`_rule_code` are
    ``rules`` (int8, 0 between two runs), in order of start, then length: 1-MAX_WORDS words of one run, neither
    starting nor ending with "of", at most one "of", ending with a noun-like word, a single word of three characters
    or more."""
    size = len(rules)
    padded = np.concatenate([rules, np.zeros(MAX_WORDS - 1, dtype=rules.dtype)])
    word, of, head = (padded & _WORD) != 0, (padded & _OF) != 0, (padded & _HEAD) != 0
    fits = np.empty((size, MAX_WORDS), dtype=bool)  # [start, length - 1]
    fits[:, 0] = head[:size] & ((rules & _SINGLE) != 0)
    inside = word[:size] & ~of[:size]  # the words so far are of one run and the first is not "of"
    ofs = np.zeros(size, dtype=np.int8)  # "of"s among the words so far but the first
    for length in range(2, MAX_WORDS + 1):
        last = slice(length - 1, length - 1 + size)
        fits[:, length - 1] = inside & head[last] & (ofs <= 1)
        inside &= word[last]
        ofs += of[last]
    starts = np.flatnonzero(fits)
    lengths = np.remainder(starts, MAX_WORDS, out=np.empty(len(starts), dtype=np.int8), casting="unsafe")
    lengths += 1
    starts //= MAX_WORDS
    return starts, lengths


def _ngrams(run: Sequence[str]) -> list[tuple[str, str]]:
    """(surface, key) of each acceptable n-gram of a run (:func:`_ngram_slices`), in order."""
    keys = [_token(piece).key for piece in run]
    starts, lengths = _ngram_slices(np.array([_rule_code(_token(piece)) for piece in run], dtype=np.int8))
    return [
        (" ".join(run[start : start + length]), " ".join(keys[start : start + length]))
        for start, length in zip(starts.tolist(), lengths.tolist())
    ]


def candidate_phrases(text: str) -> list[str]:
    """Every acceptable n-gram (1-MAX_WORDS words) of ``text``'s runs, as written, in order (repeats kept)."""
    return [surface for run in runs(text) for surface, _ in _ngrams(run)]


def _initials_match(words: Sequence[str], letters: str) -> bool:
    """The words' initials (hyphenated parts each, function words optional) spell ``letters`` (upper case)."""
    parts = [part for word in words for part in word.split("-") if part]
    if len(parts) < len(letters):  # each letter needs a part of its own
        return False

    def match(index: int, position: int) -> bool:
        if position == len(letters):
            return index == len(parts)
        if index == len(parts):
            return False
        part = parts[index]
        if part.lower() in FUNCTION_WORDS and match(index + 1, position):
            return True
        return part[0].upper() == letters[position] and match(index + 1, position + 1)

    return match(0, 0)


# A word as ordinary_words counts it: letters and digits, no hyphen (so "node-level" is not "node").
_PLAIN_WORD = re.compile(r"[A-Za-z0-9]+")
# Deleting these from a short form (letters, digits and hyphens) leaves its capitals and digits.
_NOT_CAPITALS = str.maketrans("", "", "abcdefghijklmnopqrstuvwxyz-")


def abbreviation_definitions(texts: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """{short form key: (expansion key, expansion as most often written, short form as most often written)} of the
    definitions "long form (SF)" seen at least MIN_DEFINITIONS times, where the long form's initials spell the short
    form's capitals ("Large Language Models (LLMs)", "mixture-of-experts (MoE)")."""
    seen: Counter[tuple[str, str]] = Counter()
    surfaces: defaultdict[str, Counter[str]] = defaultdict(Counter)
    # (last words before "(SF)", capitals of SF) -> (long form, its key) or None; definitions repeat across texts
    long_forms: dict[tuple[tuple[str, ...], str], tuple[str, str] | None] = {}
    for text in texts:
        for match in _ABBREVIATION.finditer(text):
            short = match.group(1)
            letters = short.translate(_NOT_CAPITALS)
            if len(letters) < 2 or not short[0].isupper():
                continue
            before = _TOKEN.findall(text[max(0, match.start() - 120) : match.start()])
            context = (tuple(before[-min(len(letters) + 2, MAX_WORDS) :]), letters)
            if context not in long_forms:
                long_forms[context] = _long_form(context[0], letters)
            found = long_forms[context]
            if found is not None:
                long_form, long_key = found
                short_key = fold(short)
                seen[(short_key, long_key)] += 1
                surfaces[long_key][long_form] += 1
                surfaces["(" + short_key][short] += 1
    best: dict[str, tuple[str, int]] = {}
    for (short, long_key), times in seen.items():
        if times >= MIN_DEFINITIONS and times > best.get(short, ("", 0))[1]:
            best[short] = (long_key, times)
    shown = {short: surfaces["(" + short].most_common(1)[0][0] for short in best}
    for short in ordinary_words(shown, texts):
        del best[short]
    return {
        short: (long_key, _written(surfaces[long_key].most_common(1)[0][0]), surfaces["(" + short].most_common(1)[0][0])
        for short, (long_key, _) in best.items()
    }


def ordinary_words(shorts: dict[str, str], texts: Sequence[str]) -> set[str]:
    """The short forms (keys of ``shorts``: {short form key: the short form as written}) that the texts write more
    often as an ordinary lower-case word than as the short form: "nodes" of a graph against "NODEs" (neural
    ordinary differential equations), "map" against "MAP" (maximum a posteriori). Their short form must not stand
    for their expansion: every paper on graph nodes would write "neural ordinary differential equations" (a theme
    of ICLR 2025 was so named). Case-sensitive whole words, a plural "s" allowed, counted in one pass over the
    texts."""
    lower = {short: short for short in shorts if short.isalpha() and short.islower()}
    written = {short: shorts[short][:-1] if shorts[short].endswith("s") else shorts[short] for short in lower}
    written = {short: form for short, form in written.items() if form != form.lower()}
    if not written:
        return set()
    forms = {form + plural for short in written for form in (lower[short], written[short]) for plural in ("", "s")}
    # text by text, keeping only the forms asked about: no copy of the corpus joined, no counter of its every word
    words = Counter(word for text in texts for word in _PLAIN_WORD.findall(text) if word in forms)

    def times(form: str) -> int:
        return words[form] + words[form + "s"]

    return {short for short in written if times(lower[short]) > times(written[short])}


def short_form_shares(shorts: Mapping[str, str], texts: Sequence[str]) -> dict[str, float]:
    """{expansion key: the share of ``texts`` that write its short form} for ``shorts`` ({expansion key: short form as
    written}), case-sensitive whole words, a plural "s" allowed, counted once per text in one pass. A short form many
    texts write ("LLMs": a fifth of ICLR 2025's abstracts) is the field's word and may stand alone in a name; one few
    write ("TSF": 9 of 11,660) is a name's unexplained fragment (readers' FORM, docs/decisions/theme-measures.md)."""
    forms: dict[str, list[str]] = {}
    for key, short in shorts.items():
        stem = short[:-1] if short.endswith("s") and len(short) > 2 else short
        for form in (stem, stem + "s"):
            forms.setdefault(form, []).append(key)
    documents: Counter[str] = Counter()
    for text in texts:
        found = {key for word in set(_PLAIN_WORD.findall(text)) if word in forms for key in forms[word]}
        documents.update(found)
    return {key: documents[key] / max(len(texts), 1) for key in shorts}


def _long_form(before: Sequence[str], letters: str) -> tuple[str, str] | None:
    """(long form, its :func:`phrase_key`): the fewest last words of ``before`` whose initials spell ``letters`` and
    that do not start with a function word; None when there are none."""
    for size in range(1, len(before) + 1):
        words = before[-size:]
        if words[0].lower() not in FUNCTION_WORDS and _initials_match(words, letters):
            long_form = " ".join(words)
            return long_form, phrase_key(long_form)
    return None


def _written(form: str) -> str:
    """How ``form`` is shown as a phrase's writing: lower-cased except words with a capital after their first letter."""
    return " ".join(word if any(map(str.isupper, word[1:])) else word.lower() for word in form.split(" "))


@dataclass
class PhraseCounts:
    """Which candidate phrases each document writes.

    Attributes
    ----------
    matrix : CSR, n_documents x n_phrases, float64 1.0 where the document writes the phrase (or its abbreviation).
    keys : n_phrases phrase keys (:func:`phrase_key`), column order.
    written : {key: how the corpus most often writes it} (an expansion that has an abbreviation: "expansion (SF)").
    abbreviations : {expansion key: short form as written} for the phrases the corpus abbreviates.
    in_title : CSR of the same shape, 1.0 where the document's title writes it; None when no titles were given.
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
    words (each word is coded as one character, :class:`_Epoch`)."""
    if titles is not None and len(titles) != len(texts):
        raise ValueError(f"count_phrases: {len(titles)} titles for {len(texts)} texts")
    definitions = abbreviation_definitions(texts)
    index = _PhraseIndex()
    text_runs = index.document_runs(texts)
    title_runs = index.document_runs([str(title) for title in titles]) if titles is not None else None
    index.finish({short: long_key for short, (long_key, _, _) in definitions.items()})
    chosen, sizes = index.last_writings(*text_runs)
    chosen_keys = index.writing_keys[chosen]
    frequency = np.bincount(chosen_keys, minlength=index.key_count)  # documents writing each key
    frequent = np.flatnonzero(frequency >= MIN_DOCUMENT_FREQUENCY)
    by_key = sorted(zip(index.keys(frequent), frequent.tolist()))
    kept, kept_numbers = [key for key, _ in by_key], [number for _, number in by_key]
    column_of = np.full(index.key_count, -1, dtype=_counting(len(kept)))  # key number -> column, -1 if not kept
    column_of[kept_numbers] = np.arange(len(kept))
    matrix = _presence(column_of[chosen_keys], sizes, len(kept))
    in_title = None
    if title_runs is not None:
        title_chosen, title_sizes = index.last_writings(*title_runs)
        in_title = _presence(column_of[index.writing_keys[title_chosen]], title_sizes, len(kept))
    kept_keys = set(kept)
    abbreviations = {long_key: short for _, (long_key, _, short) in definitions.items() if long_key in kept_keys}
    expansions: dict[str, str] = {}
    for long_key, expansion, _ in definitions.values():
        expansions.setdefault(long_key, expansion)
    usual = _usual_writings(index, chosen, column_of)
    surfaces = dict(zip(usual, index.surfaces(np.array(list(usual.values()), dtype=np.int64))))
    written = {
        key: _written(surfaces[column]) if column in surfaces else expansions[key] for column, key in enumerate(kept)
    }
    return PhraseCounts(matrix, kept, written, abbreviations, in_title, short_form_shares(abbreviations, texts))


def _counting(bound: int) -> type[np.signedinteger[Any]]:
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
# Runs of texts whose n-grams _PhraseIndex.last_writings sorts at a time (a few MB of arrays).
_CHUNK_RUNS = 200_000


class _Epoch:
    """One-character codes for the words met since the epoch began, and the distinct runs (strings of codes) met,
    numbered by :class:`_PhraseIndex`'s counter."""

    def __init__(self, part_numbers: _Numbering) -> None:
        self.part_numbers = part_numbers  # a word of a phrase key -> its number (one numbering for all epochs)
        self.words = [_RUN_BREAK]  # code point -> word
        self.rules = [0]  # code point -> its word's _rule_code
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
        token = _token(piece)
        if token.breaks:
            return _RUN_BREAK
        code = len(self.words)
        self.words.append(piece)
        self.rules.append(_rule_code(token))
        self.part_firsts.append(len(self.parts))
        self.parts.extend(map(self.part_numbers.__getitem__, token.key.split(" ")))
        self.part_counts.append(len(self.parts) - self.part_firsts[-1])
        return chr(code)

    def _token_codes(self, token: str) -> str:
        """The codes of the pieces of ``token`` (text between whitespace), with the breaks that the whitespace around
        it makes: a "'" beginning or ending it, a lone "-" (the ``\\s'``, ``'\\s`` and ``\\s-\\s`` of _PIECE)."""
        if token.isascii() and token.isalnum():  # one word, the most common token
            return self.piece_codes[token]
        codes = "".join(map(self.piece_codes.__getitem__, _PIECE.findall(token)))
        if token[0] == "'":
            codes = _RUN_BREAK + codes
        if token[-1] == "'" or token == "-":
            codes += _RUN_BREAK
        return codes


class _EndedEpoch(NamedTuple):
    """What :class:`_PhraseIndex` keeps of an epoch: where its new writings are in its runs joined, and the words of
    their keys (of :func:`_key_words`)."""

    first: int  # number of its first new writing
    epoch: _Epoch
    starts: np.ndarray  # per new writing: where it starts in epoch.joined
    stops: np.ndarray  # ... and stops
    key_words: np.ndarray  # numbers of words of phrase keys
    key_starts: np.ndarray  # per new writing: where its key's words start in key_words
    key_lengths: np.ndarray  # ... how many there are


class _PhraseIndex:
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

    def document_runs(self, texts: Sequence[str]) -> tuple[array, array]:
        """(runs, counts), int64 arrays: the numbers of each text's runs in order, one text after another; runs per
        text."""
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
        starts, lengths = _ngram_slices(np.array(epoch.rules, dtype=np.int8)[codes])
        starts = starts.astype(_counting(len(codes)))
        numbers, firsts = _number_sequences(codes, starts, lengths, len(epoch.words))
        first_starts, first_stops = starts[firsts], starts[firsts] + lengths[firsts]
        first = self.writing_count
        writing_of = np.arange(first, first + len(firsts), dtype=_counting(first + len(firsts)))  # one to one
        if self.epochs:
            writing_of, new = self._match_surfaces(epoch, first_starts, first_stops)
            first_starts, first_stops = first_starts[new], first_stops[new]
        self.writing_count += len(first_starts)
        key_words = _key_words(epoch, codes, first_starts, first_stops)
        self.epochs.append(_EndedEpoch(first, epoch, first_starts, first_stops, *key_words))
        self.run_numbers.append(np.fromiter(epoch.runs.values(), dtype=np.int64, count=len(epoch.runs)))
        self.run_sizes.append(np.bincount(np.cumsum(codes == 0, dtype=np.int32)[starts], minlength=len(epoch.runs)))
        self.run_writings.append(writing_of[numbers])
        self.epoch = _Epoch(self.part_numbers)

    def _match_surfaces(self, epoch: _Epoch, starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(writing numbers, new) of the distinct n-grams of an epoch after the first (``starts``, ``stops`` in its
        joined): the number of an earlier writing of the same surface, else the next new number."""
        if self.surface_numbers is None:
            earlier = np.arange(self.writing_count)
            self.surface_numbers = dict(zip(self.surfaces(earlier), earlier.tolist()))
        numbers = np.empty(len(starts), dtype=_counting(self.writing_count + len(starts)))
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
        index_type = _counting(int(sizes.sum()))
        self.run_first = np.zeros(next(self.run_counter), dtype=index_type)  # run number -> where its n-grams begin
        self.run_first[numbers] = np.cumsum(sizes) - sizes
        self.run_size = np.zeros(len(self.run_first), dtype=index_type)  # run number -> how many n-grams it has
        self.run_size[numbers] = sizes
        self.run_ngram_writings = np.concatenate(self.run_writings)  # the writings of the runs' n-grams

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
        numbers, self.key_firsts = _number_sequences(
            self.key_words, self.key_starts, self.key_lengths, len(self.part_numbers)
        )
        self.key_count = len(self.key_firsts)
        own, shorts, longs = np.split(numbers, [self.writing_count, self.writing_count + len(pairs)])
        counted = np.arange(self.key_count, dtype=_counting(self.key_count))
        counted[shorts] = longs
        self.writing_keys = counted[own]
        self.own_keys = self.writing_keys == own
        self.part_list = list(self.part_numbers)

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
        chosen, sizes = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
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
    parts = np.array(epoch.parts, dtype=_counting(len(epoch.part_numbers)))
    part_counts, part_firsts = np.array(epoch.part_counts, dtype=np.int64), np.array(epoch.part_firsts, dtype=np.int64)
    in_place = np.append(parts, 0)[part_firsts][codes]  # 0 at the breaks
    hyphenated = np.zeros(len(codes) + 1, dtype=_counting(len(codes)))  # code index -> hyphenated words before it
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
    numbers = np.empty(len(starts), dtype=_counting(len(starts)))
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
    numbers = np.empty(len(values), dtype=_counting(len(values)))
    numbers[order] = np.cumsum(new) - 1
    return numbers, order[new]


def _usual_writings(index: _PhraseIndex, chosen: np.ndarray, column_of: np.ndarray) -> dict[int, int]:
    """{column: number of the writing most documents write the column's key with}, over the key's own writings (an
    abbreviation is not its expansion's writing), a tie going to the writing that a document chose first; a column
    none of whose own writings is chosen is left out. ``chosen``, ``column_of``: as in count_phrases."""
    documents = np.bincount(chosen, minlength=len(index.writing_keys))
    first = np.full(len(index.writing_keys), len(chosen), dtype=_counting(len(chosen)))
    np.minimum.at(first, chosen, np.arange(len(chosen), dtype=_counting(len(chosen))))
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
    inside_before = np.zeros(len(columns) + 1, dtype=_counting(len(columns)))  # entry -> entries with a column before
    np.cumsum(inside, out=inside_before[1:])
    indptr = inside_before[np.concatenate([[0], np.cumsum(sizes)])]
    matrix = sp.csr_matrix((np.ones(int(indptr[-1])), columns[inside], indptr), shape=(len(sizes), n_columns))
    matrix.sort_indices()
    return matrix
