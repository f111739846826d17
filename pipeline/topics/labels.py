"""Short, readable, unique topic labels from a topic's ranked terms.

A label is up to three terms joined by ", ", in rank order, skipping a term whose words are all inside a
term already chosen, replacing a chosen term by a longer one that contains it ("diffusion" then
"diffusion models" gives "diffusion models"), and skipping a term that shares only some words with one
already chosen ("time series" then "series forecasting" keeps "time series" and looks further). A topic without
terms gets "Topic N (no keywords)"; the outlier topic is "Outliers". Labels are made unique by adding the next
unused term, then the topic number.

c-TF-IDF terms are tokens of a lower-cased text with stop words removed before n-grams are formed, so a term
can be a fragment ("large language" of "large language models", "context learning" of "in-context learning"),
a pair of words that never stand together ("reasoning large", from "reasoning in large ...") or an acronym
written in lower case ("llms"). When the topic's documents are given, :func:`readable_term` puts each term
back into the words the papers use: it finds the term where its words stand side by side in those documents,
extends it by a neighbouring word that accompanies most of its occurrences (up to MAX_LABEL_WORDS words),
writes it as the papers most often do ("in-context learning", "LLMs", "fMRI") and drops a term the papers never
write. The topic's terms (and so NPMI and diversity) are unchanged; only labels use these forms.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping

from pipeline.text.words import CJK_FUNCTION_CHARACTERS

OUTLIER_LABEL = "Outliers"


# Phrase completion (readable_term): a neighbouring word joins a term when it accompanies at least
# EXTEND_SHARE of the term's occurrences, seen at least MIN_OCCURRENCES times; labels' terms have at most
# MAX_LABEL_WORDS words (a hyphenated compound is one word). Set by hand, then checked by reading every label of
# the two ICLR corpora (bench/quality.py prints them); not tuned against a metric.
EXTEND_SHARE = 0.6
MIN_OCCURRENCES = 3
MAX_LABEL_WORDS = 3
# Only a topic's first terms are candidates for its label (each is searched in all of the topic's documents).
LABEL_CANDIDATES = 10
# Words that never extend a term on their own (a hyphen-joined one may: "in-context"); also never a label term.
_FUNCTION_WORDS = frozenset(
    (
        "a an and are as at be by for from has have in into is it its "
        "of on or our that the their this to via vs we with"
    ).split()
)
DOCUMENT_JOIN = " | "
_WORD = r"[^\W_]+"
_LEFT = re.compile(rf"({_WORD})(\s+|\s*-\s*)$")
_RIGHT = re.compile(rf"^(\s+|\s*-\s*)({_WORD})")
_SEPARATOR = re.compile(r"\s*-\s*|\s+")


def _words(term: str) -> set[str]:
    """The term's words, lower-cased, split at spaces and hyphens, with a plural "s" dropped ("agent" = "agents")."""
    return {
        word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
        for word in re.split(r"[\s\-]+", term.lower())
        if word
    }


def _pattern(words: list[str]) -> re.Pattern[str]:
    """Case-insensitive regex for ``words`` side by side, separated by spaces or a hyphen, as whole words."""
    return re.compile(
        r"(?<![^\W_])" + r"(?:\s+|\s*-\s*)".join(re.escape(word) for word in words) + r"(?![^\W_])", re.IGNORECASE
    )


_WORD_CHARACTER = re.compile(r"[^\W_]")


def _occurrences(words: list[str], text: str, lowered: str) -> Iterator[tuple[int, int]]:
    """(start, end) in ``text`` of each occurrence of ``words`` as :func:`_pattern` finds them (non-overlapping, left
    to right). ``lowered`` is ``text.lower()``: when it has the same length, the words are searched in it without
    IGNORECASE and the left word boundary is checked by hand, which lets the regex engine skip ahead to the first
    word (15-20 times faster on a topic's joined abstracts); otherwise :func:`_pattern` searches ``text``."""
    if len(lowered) != len(text):
        yield from (match.span() for match in _pattern(words).finditer(text))
        return
    pattern = re.compile(r"(?:\s+|\s*-\s*)".join(re.escape(word.lower()) for word in words) + r"(?![^\W_])")
    position = 0
    while (match := pattern.search(lowered, position)) is not None:
        start = match.start()
        if start and _WORD_CHARACTER.match(lowered, start - 1):
            position = start + 1  # inside a longer word: look again from the next character
            continue
        yield match.span()
        position = max(match.end(), start + 1)


def _display_form(surfaces: list[str]) -> str:
    """How the papers write a phrase: its most common separators, and per word the most common spelling if that
    has a capital after its first letter ("LLMs", "fMRI", "EEG", "3D"), else lower case."""
    split = [_SEPARATOR.split(surface) for surface in surfaces]
    gaps = [_SEPARATOR.findall(surface) for surface in surfaces]
    words = []
    for position in range(len(split[0])):
        spelling = Counter(parts[position] for parts in split).most_common(1)[0][0]
        words.append(spelling if any(character.isupper() for character in spelling[1:]) else spelling.lower())
    separators = [
        "-" if Counter("-" in gap[position] for gap in gaps).most_common(1)[0][0] else " "
        for position in range(len(words) - 1)
    ]
    return words[0] + "".join(separator + word for separator, word in zip(separators, words[1:]))


def readable_term(term: str, documents: list[str]) -> str | None:
    """``term`` as the papers write it, completed to the phrase it is part of; None when they never write it.

    ``documents``: the topic's texts in their original case. The term's words are searched side by side
    (spaces or a hyphen between them); a word on its left or right that accompanies at least EXTEND_SHARE of the
    occurrences (and at least MIN_OCCURRENCES of them) is added, repeatedly, while the phrase has at most
    MAX_LABEL_WORDS words; function words join only by a hyphen ("in-context"). Returns None for a term whose
    words never stand together in ``documents`` (unless it has no Latin letter: CJK terms are kept as they are)
    and for a fragment whose phrase would grow beyond MAX_LABEL_WORDS words.
    """
    # One string, documents joined by a mark no phrase or neighbour can span (phrases are joined only by spaces
    # and hyphens): one regex scan per term instead of one per document.
    return readable_in(term, DOCUMENT_JOIN.join(documents))


def readable_in(term: str, text: str, lowered: str | None = None) -> str | None:
    """:func:`readable_term` over the topic's documents already joined by DOCUMENT_JOIN (join them once per topic);
    ``lowered``: ``text.lower()`` when already made (it is made here otherwise)."""
    words = term.split()
    if not words:
        return None
    lowered = text.lower() if lowered is None else lowered
    surfaces: list[str] = []
    while True:
        surfaces = []
        neighbours: dict[str, Counter[str]] = {"right": Counter(), "left": Counter()}
        hyphenated: dict[str, Counter[str]] = {"right": Counter(), "left": Counter()}
        for start, end in _occurrences(words, text, lowered):
            surfaces.append(text[start:end])
            left = _LEFT.search(text[max(0, start - 40) : start])
            right = _RIGHT.search(text[end : end + 40])
            found = []
            if left:
                found.append(("left", left.group(1), left.group(2)))
            if right:
                found.append(("right", right.group(2), right.group(1)))
            for side, word, separator in found:
                neighbours[side][word.lower()] += 1
                hyphenated[side][word.lower()] += "-" in separator
        if not surfaces:
            return _joined_cjk(term) if not re.search(r"[A-Za-z]", term) else None
        if len(surfaces) < MIN_OCCURRENCES or len(words) >= 2 * MAX_LABEL_WORDS:
            break
        extension = None
        for side in ("right", "left"):
            if neighbours[side]:
                word, count = neighbours[side].most_common(1)[0]
                hyphen = 2 * hyphenated[side][word] > count
                if (
                    count >= EXTEND_SHARE * len(surfaces)
                    and (hyphen or word not in _FUNCTION_WORDS)
                    and word not in {w.lower() for w in words}
                ):
                    extension = (side, word, hyphen)
                    break
        if extension is None:
            break
        side, word, hyphen = extension
        if len(_display_form(surfaces).split()) + (0 if hyphen else 1) > MAX_LABEL_WORDS:
            return None  # a fragment of a phrase too long for a label ("series anomaly detection" of "time series ...")
        words = words + [word] if side == "right" else [word] + words
    form = _display_form(surfaces)
    return None if form.lower() in _FUNCTION_WORDS else form


_CJK_CHARACTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_GAP = re.compile(f"(?<=[{_CJK_CHARACTERS}])\\s+(?=[{_CJK_CHARACTERS}])")


def _joined_cjk(term: str) -> str:
    """A CJK n-gram as it is written, without the spaces the tokenisation put between its characters
    ("学 习" -> "学习")."""
    return _CJK_GAP.sub("", term)


def is_function_term(term: str) -> bool:
    """True when a term is made only of English function words or CJK function characters ("た", "の を", "of the")."""
    parts = [part for part in re.split(r"\s+", term.strip()) if part]
    return bool(parts) and all(
        part.lower() in _FUNCTION_WORDS or (len(part) == 1 and part in CJK_FUNCTION_CHARACTERS) for part in parts
    )


def label_key(label: str) -> str:
    """What makes two labels look the same to a reader: case and spacing ignored."""
    return " ".join(str(label).casefold().split())


def label_from_terms(terms: list[str], n_terms: int = 3) -> list[str]:
    """Choose up to ``n_terms`` non-overlapping terms from ``terms`` (ranked, best first)."""
    chosen: list[str] = []
    for term in terms:
        term = term.strip()
        if not term or is_function_term(term) or not re.search(r"[^\W_]", term):
            continue
        words = _words(term)
        if any(words <= _words(existing) for existing in chosen):
            continue
        contained = [existing for existing in chosen if _words(existing) < words]
        if contained:
            if any(words & _words(existing) for existing in chosen if existing not in contained):
                continue
            chosen[chosen.index(contained[0])] = term
            chosen = [existing for existing in chosen if existing not in contained[1:]]
            continue
        if any(words & _words(existing) for existing in chosen):
            continue
        if len(chosen) < n_terms:
            chosen.append(term)
        if len(chosen) >= n_terms:
            break
    return chosen


def readable_terms(terms: list[str], documents: list[str]) -> list[str]:
    """:func:`readable_term` of each term, in order, without the dropped ones and repeats; ``terms`` itself when
    none is readable (so a topic always keeps some words)."""
    readable: list[str] = []
    for term in terms:
        form = readable_term(term, documents)
        if form and form.lower() not in {existing.lower() for existing in readable}:
            readable.append(form)
    return readable or terms


def label_terms(terms: list[str], text: str | None, n_terms: int = 3) -> tuple[list[str], Callable[[], list[str]]]:
    """(the terms of a topic's label, a function giving every term it may add to stay unique), from its ranked
    ``terms`` and its documents joined by DOCUMENT_JOIN (None: use the terms as they are).

    The same terms as :func:`label_from_terms` of :func:`readable_terms` of the first LABEL_CANDIDATES terms, but each
    readable form is searched only when it is needed: :func:`label_from_terms` stops at the ``n_terms``-th term it
    takes, so the later candidates matter only for a label that another topic already has (about half of the
    searches on the whole conference).
    """
    if text is None or not terms:
        forms = [_joined_cjk(term) for term in terms]
        return label_from_terms(forms, n_terms), lambda: forms
    candidates = terms[:LABEL_CANDIDATES]
    readable: list[str] = []
    searched = 0
    lowered = text.lower()

    def search_up_to(stop: int) -> None:
        nonlocal searched
        while searched < stop:
            form = readable_in(candidates[searched], text, lowered)
            searched += 1
            if form and form.lower() not in {existing.lower() for existing in readable}:
                readable.append(form)

    chosen: list[str] = []
    while searched < len(candidates) and len(chosen) < n_terms:
        search_up_to(searched + 1)
        chosen = label_from_terms([_joined_cjk(term) for term in readable], n_terms)
    if not readable:  # not one candidate is written in the papers: the terms as they are (readable_terms' rule)
        forms = [_joined_cjk(term) for term in candidates]
        return label_from_terms(forms, n_terms), lambda: forms

    def every_term() -> list[str]:
        search_up_to(len(candidates))
        return [_joined_cjk(term) for term in readable]

    return chosen, every_term


def make_labels(
    topic_terms: dict[int, list[str]], n_terms: int = 3, documents: dict[int, list[str]] | None = None
) -> dict[int, str]:
    """Labels for every topic id in ``topic_terms`` ({topic: ranked terms}); unique across topics.

    ``documents`` ({topic: its documents' texts, original case}), when given, turns terms into the phrases the
    papers write (:func:`readable_terms`, searched as :func:`label_terms` needs them). Topic -1 is always
    OUTLIER_LABEL. Never returns an empty label, one made only of a number and underscores, or one of function words
    or CJK particles only; no two labels differ only in case or spacing (:func:`label_key`).
    """
    labels: dict[int, str] = {}
    used: set[str] = set()
    for topic in sorted(topic_terms):
        if topic == -1:
            labels[topic] = OUTLIER_LABEL
            used.add(label_key(OUTLIER_LABEL))
            continue
        terms = [term for term in topic_terms[topic] if term and term.strip() and not is_function_term(term)]
        text = DOCUMENT_JOIN.join(documents.get(topic, [])) if documents is not None else None
        chosen, every_term = label_terms(terms, text, n_terms)
        label = ", ".join(chosen) if chosen else f"Topic {topic} (no keywords)"
        if label_key(label) in used:
            extra = [
                term
                for term in every_term()
                if term not in chosen and not any(_words(term) <= _words(c) for c in chosen)
            ]
            while label_key(label) in used and extra:
                label = f"{label}, {extra.pop(0)}"
        if label_key(label) in used:
            label = f"{label} (topic {topic})"
        labels[topic] = label
        used.add(label_key(label))
    return labels


class DeferredLabels(Mapping[int, str]):
    """:func:`make_labels` of ``topic_terms`` and ``documents()``, made on the first look-up of a topic other than -1
    (whose label is always OUTLIER_LABEL). A topic's term label is only the fallback of a topic that no phrase names
    (pipeline.topics.naming), and making the labels searches every topic's papers for its terms' readable forms (25 s
    at 285,717 papers): a build whose topics all have names never makes them. Iterates over the topics in order."""

    def __init__(
        self, topic_terms: dict[int, list[str]], documents: Callable[[], dict[int, list[str]]], n_terms: int = 3
    ) -> None:
        self._terms, self._documents, self._n_terms = topic_terms, documents, n_terms
        self._labels: dict[int, str] | None = None

    def __getitem__(self, topic: int) -> str:
        if topic == -1 and topic in self._terms:
            return OUTLIER_LABEL
        if self._labels is None:
            self._labels = make_labels(self._terms, self._n_terms, self._documents())
        return self._labels[topic]

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._terms))

    def __len__(self) -> int:
        return len(self._terms)

    @property
    def made(self) -> bool:
        """Whether the labels were made (a topic other than -1 was looked up)."""
        return self._labels is not None
