"""Abbreviations a corpus defines, "long form (SF)" (Schwartz & Hearst 2003, "A simple algorithm for identifying
abbreviation definitions in biomedical text"), so a topic that writes "MoE" and one that writes "mixture of
experts" count the same phrase (pipeline.topics.naming.phrase_counts); and how often the corpus writes a short form
as an ordinary word or at all.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from pipeline.topics.naming.phrase_tokens import FUNCTION_WORDS, MAX_WORDS, fold, phrase_key, written_form

# An abbreviation definition must be seen this many times before its short form counts as its expansion.
MIN_DEFINITIONS = 2

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*")
_ABBREVIATION = re.compile(r"\(([A-Za-z][A-Za-z0-9\-]{1,9})\)")
# "(LLM-based)", "(GNN-like)": an adjective made of a short form, not a short form; the 290,219-paper atlas named a
# topic "Large language models (LLM-based)" with it.
_ADJECTIVE_SUFFIX = re.compile(r"-[a-z]+$")


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
            if len(letters) < 2 or not short[0].isupper() or _ADJECTIVE_SUFFIX.search(short):
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
        short: (
            long_key,
            written_form(surfaces[long_key].most_common(1)[0][0]),
            surfaces["(" + short].most_common(1)[0][0],
        )
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
