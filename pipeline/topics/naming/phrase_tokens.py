"""The tokeniser of candidate names: which noun-phrase-like n-grams of a title or abstract are candidate phrases,
and the key two writings of one phrase share.

No part-of-speech tagger ships its model inside a well-kept wheel in this project's environment (spaCy and NLTK
download theirs), so phrases are found as RAKE does (Rose et al. 2010, "Automatic keyword extraction from
individual documents"): a text is cut at punctuation, at stop words and at the generic words of research prose
("propose", "novel", "results", ...), and every run of the remaining words gives its n-grams of 1-4 words. One "of"
may stand inside a phrase ("mixture of experts"); a phrase never ends with an adjective or adverb ending ("-ly",
"-ive", "-ous", "-al", ...) nor is a single number. Markup never becomes a candidate: LaTeX commands and
environments (``\\begin{abstract}``), inline maths, HTML tags, Markdown marks and URLs cut the text like punctuation.

A phrase's key is lower case, each word without a plural "s", hyphens and spaces alike ("Graph Neural Networks" =
"graph neural network"). The corpus's abbreviations are found by pipeline.topics.naming.abbreviations; the phrases
each document writes are counted by pipeline.topics.naming.phrase_counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby
from typing import NamedTuple

import numpy as np

MAX_WORDS = 4

_MARKUP = re.compile(
    r"\\[A-Za-z]+\*?(?:\{[^{}]*\})*"  # \begin{abstract}, \textbf{, \cite{x}
    r"|\$[^$]*\$"  # inline maths
    r"|</?[A-Za-z][^<>]*>"  # HTML tags
    r"|https?://\S+|www\.\S+"  # URLs
    r"|[*_`#~|\[\]{}\\^=<>]"  # Markdown marks and what is left of markup
)

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
# A hyphenated compound that begins with one of these modifies the noun after it: "multi-agent", "non-convex",
# "two-layer", "cross-domain", "zero-shot", "long-context". It stays a candidate (its group's ranking needs it), but a
# name takes the noun its group writes after it, and a paired name never ends with it
# (pipeline.topics.naming.names.lone_modifier): a reader marked the subtopic name "Two-layer" FORM 1
# (docs/decisions/theme-measures.md, sections 19-20). "self-", "pre-", "post-" and "co-" are left out
# ("self-attention", "pre-training", "co-design" are nouns), and so are "out-" and "X-to-Y" compounds, which the field
# writes as the names of tasks ("out-of-distribution (OOD)", "text-to-speech (TTS)").
_MODIFIER_PREFIXES = frozenset(
    "non multi cross two three four single dual semi zero few one long short high low real open in black white".split()
)
# The last parts of hyphenated compounds that modify a noun: "communication-efficient", "fairness-aware",
# "distribution-free", "privacy-preserving", "zeroth-order", "physics-informed" (round 48: "Privacy-preserving and
# secure").
_MODIFIER_SUFFIXES = frozenset(
    "efficient aware free preserving order based driven agnostic guided specific informed".split()
)
# Adjectives the head rule lets through (no adjective ending), that readers marked down as a lone name ("Noisy";
# "Missing" over imputation papers, FIT 2 and FORM 2 in round 48).
_LONE_ADJECTIVES = frozenset(
    "noisy convex nonconvex smooth efficient trustworthy lightweight missing tight inverse forgotten offline online "
    "forward secure latent".split()
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
PIECE = re.compile(r"[A-Za-z0-9]++(?:[-'][A-Za-z0-9]++)*+|[.,;:!?()\"/+&%@]|\s'|'\s|--|\s-\s")


class WordToken(NamedTuple):
    """What the n-gram rules need to know of one written word (memoised per spelling)."""

    key: str  # phrase_key of the word
    breaks: bool  # cuts a run (stop word, generic word, number, punctuation)
    is_of: bool
    head: bool  # may end a phrase
    single: bool  # may be a phrase on its own (three characters or more)


_TOKENS: dict[str, WordToken] = {}
_LETTER = re.compile(r"[A-Za-z]")


def word_token(piece: str) -> WordToken:
    """The memoised :class:`WordToken` of ``piece`` (a word or a punctuation mark of ``PIECE``)."""
    found = _TOKENS.get(piece)
    if found is None:
        lowered = piece.lower()
        word = piece[0].isalnum()
        letter = _LETTER.search(piece) is not None
        last = lowered.rpartition("-")[2]
        found = WordToken(
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


def modifier_word(word: str) -> bool:
    """``word`` (as written, one word) modifies a noun rather than heads a phrase: a hyphenated compound whose first
    part is one of _MODIFIER_PREFIXES ("multi-agent") or whose last is one of _MODIFIER_SUFFIXES ("memory-efficient"),
    or one of _LONE_ADJECTIVES ("noisy")."""
    lowered = word.lower()
    first, hyphen, _ = lowered.partition("-")
    last = lowered.rpartition("-")[2]
    return (bool(hyphen) and (first in _MODIFIER_PREFIXES or last in _MODIFIER_SUFFIXES)) or lowered in _LONE_ADJECTIVES


def _breaks(piece: str) -> bool:
    """``piece`` cuts a run (:class:`WordToken` ``breaks``)."""
    return word_token(piece).breaks


def runs(text: str) -> list[list[str]]:
    """The runs of candidate words of ``text``: cut at markup, punctuation and the breaking words ("of" kept)."""
    return [list(run) for cut, run in groupby(PIECE.findall(clean_markup(text)), _breaks) if not cut]


# The bits of a word's n-gram rule code (:func:`rule_code`); a piece that cuts runs has none.
_WORD, _OF, _HEAD, _SINGLE = 8, 4, 2, 1


def rule_code(token: WordToken) -> int:
    """What the n-gram rules need of a word that does not cut runs, as bits: _WORD, _OF ("of"), _HEAD (may end a
    phrase), _SINGLE (may be a phrase on its own)."""
    return _WORD + _OF * token.is_of + _HEAD * token.head + _SINGLE * token.single


def ngram_slices(rules: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, lengths), int64 and int8: the acceptable n-grams of runs of words whose :func:`rule_code` are
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
    """(surface, key) of each acceptable n-gram of a run (:func:`ngram_slices`), in order."""
    keys = [word_token(piece).key for piece in run]
    starts, lengths = ngram_slices(np.array([rule_code(word_token(piece)) for piece in run], dtype=np.int8))
    return [
        (" ".join(run[start : start + length]), " ".join(keys[start : start + length]))
        for start, length in zip(starts.tolist(), lengths.tolist())
    ]


def candidate_phrases(text: str) -> list[str]:
    """Every acceptable n-gram (1-MAX_WORDS words) of ``text``'s runs, as written, in order (repeats kept)."""
    return [surface for run in runs(text) for surface, _ in _ngrams(run)]


def written_form(form: str) -> str:
    """How ``form`` is shown as a phrase's writing: lower-cased except words with a capital after their first letter,
    each part of a hyphenated word on its own: "privacy-preserving" of a title's "Privacy-Preserving" (which stood
    mid-name as "Privacy-Preserving federated learning"), "LLM-as-a-judge", "t-SNE"."""
    return " ".join("-".join(map(_written_part, word.split("-"))) for word in form.split(" "))


def _written_part(part: str) -> str:
    """A word (or one part of a hyphenated word) as :func:`written_form` shows it."""
    return part if any(map(str.isupper, part[1:])) else part.lower()
