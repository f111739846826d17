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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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


def phrase_key(phrase: str) -> str:
    """The key two writings of one phrase share: :func:`fold` of each word, hyphens as spaces."""
    return " ".join(fold(part) for part in re.split(r"[\s\-]+", phrase) if part)


_MARKUP_CHARACTER = re.compile(r"[\\$<>*_`#~|\[\]{}^=]|http|www\.")


def clean_markup(text: str) -> str:
    """``text`` with LaTeX, HTML, Markdown and URLs replaced by a phrase break (" . ")."""
    return _MARKUP.sub(" . ", text) if _MARKUP_CHARACTER.search(text) else text


_PIECE = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*|[.,;:!?()\"/+&%@]|\s'|'\s|--|\s-\s")


@dataclass(frozen=True)
class _Token:
    """What the n-gram rules need to know of one written word (memoised per spelling)."""

    key: str  # phrase_key of the word
    breaks: bool  # cuts a run (stop word, generic word, number, punctuation)
    is_of: bool
    head: bool  # may end a phrase
    single: bool  # may be a phrase on its own (three characters or more)


_TOKENS: dict[str, _Token] = {}


def _token(piece: str) -> _Token:
    """The memoised :class:`_Token` of ``piece`` (a word or a punctuation mark of ``_PIECE``)."""
    found = _TOKENS.get(piece)
    if found is None:
        lowered = piece.lower()
        word = piece[0].isalnum()
        letter = bool(re.search(r"[A-Za-z]", piece))
        last = lowered.split("-")[-1]
        found = _Token(
            key=phrase_key(piece) if word else "",
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


def runs(text: str) -> list[list[str]]:
    """The runs of candidate words of ``text``: cut at markup, punctuation and the breaking words ("of" kept)."""
    found: list[list[str]] = []
    run: list[str] = []
    for piece in _PIECE.findall(clean_markup(text)):
        if _token(piece).breaks:
            if run:
                found.append(run)
            run = []
        else:
            run.append(piece)
    if run:
        found.append(run)
    return found


def _ngrams(run: list[str]) -> list[tuple[str, str]]:
    """(surface, key) of each acceptable n-gram of a run: 1-MAX_WORDS words, neither starting nor ending with "of",
    at most one "of", ending with a noun-like word, a single word of three characters or more."""
    tokens = [_token(piece) for piece in run]
    keys = [token.key for token in tokens]
    found = []
    size = len(run)
    for start in range(size):
        if tokens[start].is_of:
            continue
        if tokens[start].head and tokens[start].single:
            found.append((run[start], keys[start]))
        ofs = 0
        for stop in range(start + 1, min(start + MAX_WORDS, size)):
            last = tokens[stop]
            if last.is_of:
                ofs += 1
                if ofs > 1:
                    break
                continue
            if last.head:
                found.append((" ".join(run[start : stop + 1]), " ".join(keys[start : stop + 1])))
    return found


def candidate_phrases(text: str) -> list[str]:
    """Every acceptable n-gram (1-MAX_WORDS words) of ``text``'s runs, as written, in order (repeats kept)."""
    return [surface for run in runs(text) for surface, _ in _ngrams(run)]


def _initials_match(words: Sequence[str], letters: str) -> bool:
    """The words' initials (hyphenated parts each, function words optional) spell ``letters`` (upper case)."""
    parts = [part for word in words for part in word.split("-") if part]

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


def abbreviation_definitions(texts: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """{short form key: (expansion key, expansion as most often written, short form as most often written)} of the
    definitions "long form (SF)" seen at least MIN_DEFINITIONS times, where the long form's initials spell the short
    form's capitals ("Large Language Models (LLMs)", "mixture-of-experts (MoE)")."""
    seen: Counter[tuple[str, str]] = Counter()
    surfaces: dict[str, Counter[str]] = {}
    for text in texts:
        for match in _ABBREVIATION.finditer(text):
            short = match.group(1)
            letters = "".join(character for character in short if character.isupper() or character.isdigit())
            if len(letters) < 2 or not short[0].isupper():
                continue
            before = _TOKEN.findall(text[max(0, match.start() - 120) : match.start()])
            for size in range(1, min(len(letters) + 2, MAX_WORDS, len(before)) + 1):
                words = before[-size:]
                if _initials_match(words, letters) and words[0].lower() not in FUNCTION_WORDS:
                    long_form = " ".join(words)
                    seen[(fold(short), phrase_key(long_form))] += 1
                    surfaces.setdefault(phrase_key(long_form), Counter())[long_form] += 1
                    surfaces.setdefault("(" + fold(short), Counter())[short] += 1
                    break
    best: dict[str, tuple[str, int]] = {}
    for (short, long_key), count in seen.items():
        if count >= MIN_DEFINITIONS and count > best.get(short, ("", 0))[1]:
            best[short] = (long_key, count)
    return {
        short: (long_key, _written(surfaces[long_key]), surfaces["(" + short].most_common(1)[0][0])
        for short, (long_key, _) in best.items()
    }


def _written(forms: Counter[str]) -> str:
    """The most common writing of a phrase, lower-cased except words with a capital after their first letter."""
    form = forms.most_common(1)[0][0]
    return " ".join(word if any(c.isupper() for c in word[1:]) else word.lower() for word in form.split(" "))


@dataclass
class PhraseCounts:
    """Which candidate phrases each document writes.

    Attributes
    ----------
    matrix : CSR, n_documents x n_phrases, float64 1.0 where the document writes the phrase (or its abbreviation).
    in_title : CSR of the same shape, 1.0 where the document's title writes it; None when no titles were given.
    keys : n_phrases phrase keys (:func:`phrase_key`), column order.
    written : {key: how the corpus most often writes it} (an expansion that has an abbreviation: "expansion (SF)").
    abbreviations : {expansion key: short form as written} for the phrases the corpus abbreviates.
    """

    matrix: sp.csr_matrix
    keys: list[str]
    written: dict[str, str]
    abbreviations: dict[str, str]
    in_title: sp.csr_matrix | None = None

    @property
    def document_frequency(self) -> np.ndarray:
        """int64, n_phrases: documents writing each phrase."""
        return np.asarray(self.matrix.sum(axis=0)).ravel().astype(np.int64)


def count_phrases(texts: Sequence[str], titles: Sequence[str] | None = None) -> PhraseCounts:
    """:class:`PhraseCounts` of ``texts`` (titles and abstracts, original case), phrases written in at least
    MIN_DOCUMENT_FREQUENCY documents. ``titles`` (one per text, or None): which of those phrases each title writes
    (``in_title``). About 2 s per 10,000 abstracts on one core (bench/labels.py times it).

    Raises ValueError when ``titles`` is not one per text."""
    if titles is not None and len(titles) != len(texts):
        raise ValueError(f"count_phrases: {len(titles)} titles for {len(texts)} texts")
    definitions = abbreviation_definitions(texts)
    short_to_long = {short: long_key for short, (long_key, _, _) in definitions.items()}
    per_document: list[set[str]] = []
    surfaces: Counter[tuple[str, str]] = Counter()  # (key, writing): documents writing it so
    for text in texts:
        writings = _writings(text, short_to_long)
        surfaces.update(writings.items())
        per_document.append(set(writings))
    frequency = Counter(key for keys in per_document for key in keys)
    kept = sorted(key for key, count in frequency.items() if count >= MIN_DOCUMENT_FREQUENCY)
    column = {key: index for index, key in enumerate(kept)}
    forms: dict[str, dict[str, int]] = {key: {} for key in kept}  # the writings of the kept phrases only
    for (key, surface), count in surfaces.items():
        of_key = forms.get(key)
        if of_key is not None:
            of_key[surface] = of_key.get(surface, 0) + count
    matrix = _presence(per_document, column)
    in_title = None
    if titles is not None:
        in_title = _presence([set(_writings(str(title), short_to_long)) for title in titles], column)
    abbreviations = {long_key: short for _, (long_key, _, short) in definitions.items() if long_key in column}
    written = {}
    for key in kept:
        own = Counter({form: count for form, count in forms[key].items() if phrase_key(form) == key})
        written[key] = (
            _written(own)
            if own
            else next(expansion for long_key, expansion, _ in definitions.values() if long_key == key)
        )
    return PhraseCounts(matrix, kept, written, abbreviations, in_title)


def _writings(text: str, short_to_long: dict[str, str]) -> dict[str, str]:
    """{phrase key: how ``text`` writes it} of every candidate phrase of ``text``, an abbreviation's key being its
    expansion's (``short_to_long``)."""
    writings: dict[str, str] = {}
    for run in runs(text):
        for surface, key in _ngrams(run):
            writings[short_to_long.get(key, key) if " " not in key else key] = surface
    return writings


def _presence(per_document: Sequence[set[str]], column: dict[str, int]) -> sp.csr_matrix:
    """CSR, len(per_document) x len(column), 1.0 where a document's set holds the column's key."""
    rows: list[int] = []
    columns: list[int] = []
    for row, keys in enumerate(per_document):
        found = [index for index in map(column.get, keys) if index is not None]
        columns.extend(found)
        rows.extend([row] * len(found))
    return sp.csr_matrix(
        (np.ones(len(rows)), (np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64))),
        shape=(len(per_document), len(column)),
    )
