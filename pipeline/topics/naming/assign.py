"""The build's names: a name and a subtitle per topic, a name per theme, from the corpus's candidate phrases.

Topics are named first (pipeline.topics.naming.names over the topic of each document). A theme most of whose papers
belong to one field of pipeline/resources/fields.csv takes the field's name (pipeline.topics.naming.fields); else a
theme of one topic keeps its topic's name, and a theme of several topics is named from the phrases of all its
documents, each phrase's score times the share of the theme's topics that write it in at least MIN_COVERAGE of
their documents (what the topics share, not the largest topic's name), and never with a topic's name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from pipeline.schema import OUTLIER_TOPIC
from pipeline.topics.naming.fields import (
    MIN_FIELD_LIFT,
    Field,
    field_names,
    field_presence,
    field_scores,
    group_coverage,
    load_fields,
    load_subfields,
    with_areas,
)
from pipeline.topics.naming.names import (
    MAX_NAME_CHARACTERS,
    MAX_NAME_WORDS,
    PAIR_BELOW,
    SUBTITLE_TERMS,
    TITLE_WEIGHT,
    Name,
    choose_names,
    common_phrases,
    has_repeated_stem,
    known_short,
    name_phrases,
    stems_overlap,
    with_key_tables,
)
from pipeline.topics.naming.phrase_counts import PhraseCounts, count_phrases
from pipeline.topics.naming.phrase_tokens import phrase_key

SUBTITLE_SEPARATOR = ", "
# A weak topic name gives way to a field that holds this share of the topic's papers ... (with_topic_field_names)
TOPIC_FIELD_COVERAGE = 0.6
# ... when the topic holds this share of the field's papers in the corpus.
TOPIC_FIELD_PRECISION = 0.25
# A topic name that this share fewer of its papers write than a field or subfield holds is narrower than the topic
# (readers: "Bayesian optimization" over Bayesian methods, "Model inversion attacks" over privacy attacks, "LoRA" over
# parameter-efficient fine-tuning; docs/decisions/theme-measures.md, sections 13 and 14): it gives way to the field
# or subfield holding TOPIC_FIELD_COVERAGE of its papers and NARROW_FIELD_LIFT times its corpus share, even where
# the topic is not the field's home (with_topic_field_names).
NARROW_NAME_MARGIN = 0.2
NARROW_FIELD_LIFT = 3.0
# ... unless a larger topic has this share of its papers in the field: the field is that topic's subject (and its
# theme's name), not the narrow one's ("Privacy and federated learning" stays with "Federated learning (FL)"'s theme
# rather than naming the model inversion attacks beside it).
SUBJECT_OF_LARGER = 0.8
# A name that is one of the field's own phrases and that this share of its papers write stays: it names the kind of
# the field the topic is ("Federated learning (FL)", not "Privacy and federated learning"; "Retrieval-augmented
# generation (RAG)", not "Retrieval and recommendation").
MEMBER_NAME_COVERAGE = 0.3
# A plain name, one bare word ("Transformer", "Concept") or one this share of the corpus writes, mostly outside the
# topic ("Neural networks (NN)", "Clustering and algorithm"), says less than any field: it gives way to one that
# holds BARE_NAME_MARGIN more of its papers, one of whose phrases it may be ("Transformers and sequence models";
# plain_name).
GENERIC_NAME_SHARE = 0.1
BARE_NAME_MARGIN = 0.1
# A name most of its papers write still gives way to a subfield it is one of the phrases of that holds this share more
# of them: the topic is the subfield, the name one technique of it ("Low-rank adaptation (LoRA)" over
# parameter-efficient fine-tuning).
MEMBER_SUBFIELD_MARGIN = 0.15
# A theme's topic writes a phrase when a tenth of its papers do (names.ranked_phrases' part_share).
THEME_PART_SHARE = 0.1
# A one-word phrase written by more than this share of the corpus's documents never names a theme (common_phrases):
# a reader's verdict on "Learning", "Image", "Time".
COMMON_WORD_SHARE = 0.08


def name_topics(
    texts: Sequence[str],
    topics: np.ndarray,
    fallback: Mapping[int, str],
    titles: Sequence[str] | None = None,
    counts: PhraseCounts | None = None,
    boilerplate: Collection[str] = (),
) -> tuple[dict[int, Name], PhraseCounts]:
    """({topic: Name} for every topic of ``topics`` but -1, the phrase counts they came from).

    ``texts``: each document's title and abstract (original case); ``topics``: int, one per text; ``titles``: each
    document's title alone, or None (a title's phrases weigh more: pipeline.topics.naming.names). A topic without
    a candidate phrase keeps ``fallback[topic]`` (the term label of pipeline.topics.labels). ``counts``:
    count_phrases(texts, titles) when already made (the build's, pipeline.topics.naming.stored), else counted here.
    ``boilerplate``: words the build learned to be the corpus's boilerplate (vocabulary.boilerplate_terms); a phrase
    made of them only never names a topic ("Things" when every title is "A Study of Things", issue 40 item 9).
    Raises ValueError when ``titles`` is not one per text."""
    if counts is None:
        counts = count_phrases(texts, titles)
    elif counts.matrix.shape[0] != len(texts):
        raise ValueError(f"name_topics: phrase counts of {counts.matrix.shape[0]} documents for {len(texts)} texts")
    learned = {phrase_key(word) for word in boilerplate}
    names = choose_names(
        counts,
        [int(topic) for topic in topics],
        fallback=fallback,
        avoid=(lambda _, key, __: all(word in learned for word in key.split())) if learned else None,
    )
    return with_topic_field_names(names, counts, topics), counts


def with_topic_field_names(names: Mapping[int, Name], counts: PhraseCounts, topics: np.ndarray) -> dict[int, Name]:
    """``names`` with each weak topic name (a plain name, or one fewer than PAIR_BELOW of its papers write) that
    a field of pipeline/resources/fields.csv or a subfield of subfields.csv describes better replaced by its name:

    - the **home** rule (fields only): the field holds at least TOPIC_FIELD_COVERAGE of the topic's papers
      (MIN_FIELD_LIFT times its corpus share) and the topic holds at least TOPIC_FIELD_PRECISION of the field's
      papers (the field's home, not one of its many topics): "Brain" -> "Neuroscience", "Bandit" -> "Bandits and
      online learning"; a subfield of that field holding TOPIC_FIELD_COVERAGE of the papers and NARROW_FIELD_LIFT
      times its corpus share goes first ("Human preferences and RLHF" -> "Preference alignment", not "Alignment
      and safety");
    - the **narrow** rule: a field or subfield holding TOPIC_FIELD_COVERAGE of the topic's papers, NARROW_FIELD_LIFT
      times its corpus share, and NARROW_NAME_MARGIN more of them than the name's phrases (for a paired name, its
      larger half: widest_half; BARE_NAME_MARGIN for a plain name: plain_name), subfields first (before the home
      rule too), then the field of which the topic holds the largest share: "Bayesian optimization (BO)" over
      Bayesian methods -> "Bayesian methods", "Distribution shift" over domain adaptation -> "Domain adaptation",
      "Transformer" -> "Transformers and sequence models"; never a field a larger topic has SUBJECT_OF_LARGER of its
      papers in, one whose name begins another topic's name, a subfield one of whose phrases begins another topic's
      name ("Model compression" beside "Quantization": _renamed_by_fields), nor, for a name not plain that
      MEMBER_NAME_COVERAGE of the papers write, not paired, a field (not a subfield) the name is one of the phrases of
      ("Federated learning (FL)" stays; the field's home, by the first rule, takes it: "Time series forecasting
      (TSF)" -> "Time series").

    The old name leads the subtitle (field_subtitle). Each field names one topic at most, never one another topic
    is named. ``topics``: a topic id per document of ``counts``. Raises ValueError when a fields file is malformed
    (fields.load_fields)."""
    fields = load_fields()
    subfields = load_subfields(fields=fields)
    sub = np.arange(len(fields) + len(subfields)) >= len(fields)
    position = {found.name.casefold(): index for index, found in enumerate(fields)}
    parent = np.array([-1] * len(fields) + [position[found.area.casefold()] for found in subfields], dtype=np.int64)
    fields = [*fields, *subfields]
    labels = np.asarray(topics, dtype=np.int64)
    coverage, base = group_coverage(field_presence(counts, fields), labels)
    sizes = {topic: int((labels == topic).sum()) for topic in coverage}
    generic = generic_phrases(counts)
    home: list[tuple[float, int, int]] = []  # (-score, topic, field index)
    narrow: list[tuple[int, float, int, int]] = []  # (0 for a subfield, -precision, topic, field index)
    for topic, shares in coverage.items():
        name = names.get(topic)
        if name is None:
            continue
        rows = np.flatnonzero(labels == topic)
        written = name_coverage(counts, name.name, rows)
        plain = plain_name(name.name, generic, round(written * len(rows)))
        weak = weakly_named(name.name, written, plain)
        precision = shares * len(rows) / np.maximum(base * len(labels), 1.0)
        held = (shares >= TOPIC_FIELD_COVERAGE) & ~named_alike(fields, name.name)
        allowed = held & (shares >= MIN_FIELD_LIFT * base) & (precision >= TOPIC_FIELD_PRECISION) & ~sub & weak
        scores = field_scores(shares, base)
        home.extend((-float(scores[index]), topic, int(index)) for index in np.flatnonzero(allowed))
        wider = held & (shares >= NARROW_FIELD_LIFT * base) & ~larger_subject(coverage, sizes, topic)
        wider &= _narrower_than(counts, fields, sub, name.name, rows, shares, written, plain, weak)
        # a subfield of the field the home rule gives the topic, holding as many of its papers, is more specific
        wider |= held & (shares >= NARROW_FIELD_LIFT * base) & (parent >= 0) & allowed[np.maximum(parent, 0)]
        narrow.extend(
            (int(not sub[index]), -float(precision[index]), topic, int(index)) for index in np.flatnonzero(wider)
        )
    begun = {first_phrase_key(name.name) for name in names.values()} - {""}
    ordered = sorted(narrow)  # subfields (first element 0) before fields
    by_subfield = [(pair, True) for pair in ordered if pair[0] == 0]
    chosen = [*by_subfield, *[(pair, False) for pair in sorted(home)], *[(pair, True) for pair in ordered if pair[0]]]
    return _renamed_by_fields(names, fields, chosen, begun, sub)


def _narrower_than(
    counts: PhraseCounts,
    fields: Sequence[Field],
    sub: np.ndarray,
    name: str,
    rows: np.ndarray,
    shares: np.ndarray,
    written: float,
    plain: bool,
    weak: bool,
) -> np.ndarray:
    """Per field and subfield of ``fields`` (bool; ``sub`` marks the subfields): whether the topic of the documents
    ``rows``, named ``name`` (which ``written`` of them write; ``plain``, ``weak``: plain_name, weakly_named), has a
    name narrower than what the field's ``shares`` of its papers say (the narrow rule of with_topic_field_names):
    for a weak name, a field holding NARROW_NAME_MARGIN more of the papers than the name (a pair's larger half,
    widest_half; BARE_NAME_MARGIN for a plain name), not one the name is a phrase of when MEMBER_NAME_COVERAGE
    write it (a subfield may be); for a name that is not weak, only a subfield the name is a phrase of, holding
    MEMBER_SUBFIELD_MARGIN more ("Low-rank adaptation (LoRA)" -> "Parameter-efficient fine-tuning")."""
    if not weak:
        return sub & member_of(fields, name) & (shares >= written + MEMBER_SUBFIELD_MARGIN)
    margin = BARE_NAME_MARGIN if plain else NARROW_NAME_MARGIN
    wider = shares >= (widest_half(counts, name, rows) if name_halves(name) else written) + margin
    if not plain and not name_halves(name) and written >= MEMBER_NAME_COVERAGE:  # one subject, not two
        wider &= ~(member_of(fields, name) & ~sub)  # a subfield is narrow enough to name a member's topic
    return wider


def widest_half(counts: PhraseCounts, name: str, rows: np.ndarray) -> float:
    """The share of the documents ``rows`` that write ``name`` (name_coverage), or for a paired name ("Neural
    collapse (NC) and gradient descent") the larger share of its two halves: a pair names two parts, and a field is
    measured against the larger of them, not their union."""
    halves = name_halves(name)
    if not halves:
        return name_coverage(counts, name, rows)
    return max(name_coverage(counts, half, rows) for half in halves)


def name_halves(name: str) -> list[str]:
    """The two phrases of a paired name ("Bandit and regret" -> ["Bandit", "regret"]), else []."""
    halves = name.split(" and ")
    return halves if len(halves) == 2 else []


def first_phrase_key(name: str) -> str:
    """The phrase key of ``name``'s first phrase (names.name_phrases), "" when it has none."""
    phrases = name_phrases(name)
    return phrase_key(phrases[0]) if phrases else ""


def member_of(fields: Sequence[Field], name: str) -> np.ndarray:
    """Per field (bool): whether the first phrase of ``name`` is one of the field's phrases ("Federated learning
    (FL)" of "Privacy and federated learning"): the name is one kind of what the field names."""
    key = first_phrase_key(name)
    return np.array([key in found.keys for found in fields], dtype=bool)


def named_alike(fields: Sequence[Field], name: str) -> np.ndarray:
    """Per field (bool): whether the field's name is the first phrase of ``name`` ("Large language models" of "Large
    language models (LLMs)"): taking it would only drop the abbreviation."""
    key = first_phrase_key(name)
    return np.array([phrase_key(found.name) == key for found in fields], dtype=bool)


def larger_subject(coverage: Mapping[int, np.ndarray], sizes: Mapping[int, int], topic: int) -> np.ndarray:
    """Per field (bool): whether a topic with more papers than ``topic`` has SUBJECT_OF_LARGER of them in it.
    ``coverage``: per topic, each field's share of its papers (fields.group_coverage); ``sizes``: papers per topic."""
    found = np.zeros(len(coverage[topic]), dtype=bool)
    for other, shares in coverage.items():
        if other != topic and sizes[other] > sizes[topic]:
            found |= shares >= SUBJECT_OF_LARGER
    return found


def _renamed_by_fields(
    names: Mapping[int, Name],
    fields: Sequence[Field],
    chosen: Sequence[tuple[tuple[float | int, ...], bool]],
    begun: set[str],
    sub: np.ndarray,
) -> dict[int, Name]:
    """``names`` with the pairs of ``chosen`` (tuples ending in topic, field index) applied in order, each flagged
    True when it came from a narrow name: a topic renamed once, a field naming one topic and never a name a topic
    has; a narrow name never takes a field whose name begins another topic's name (``begun``: their first phrases'
    keys), which would make twins ("Vision-language models" beside "Vision-language models (VLMs) and zero-shot");
    and no topic takes a subfield (``sub``: per field index) one of whose phrases begins another topic's name, nor
    then the subfield's field: a narrow session whose other members have topics of their own would claim them
    ("Model compression" over pruning papers beside "Quantization" and "Knowledge distillation (KD)"), and its field
    all the more ("Efficient deep learning"; docs/decisions/theme-measures.md, section 16)."""
    used = {name.name.casefold() for name in names.values()}
    renamed = dict(names)
    held_back: dict[int, set[str]] = {}  # topic -> the fields of the subfields it may not take
    for pair, narrow in chosen:
        topic, index = int(pair[-2]), int(pair[-1])
        field_name = fields[index].name
        if renamed[topic] is not names[topic] or field_name.casefold() in used:
            continue
        if narrow and phrase_key(field_name) in begun:
            continue
        if sub[index] and (begun - {first_phrase_key(names[topic].name)}) & set(fields[index].keys):
            held_back.setdefault(topic, set()).add(fields[index].area)
            continue
        if not sub[index] and field_name in held_back.get(topic, set()):
            continue
        renamed[topic] = Name(field_name, field_subtitle(field_name, names[topic]))
        used.add(field_name.casefold())
    return renamed


def field_subtitle(field_name: str, old: Name) -> list[str]:
    """The subtitle of a topic renamed ``field_name``: its old name's phrases, then its old subtitle, each sharing no
    word stem with the field's name or an earlier term, at most SUBTITLE_TERMS ("Neuroscience": "Brain, fMRI, ...")."""
    terms: list[str] = []
    for term in [*name_phrases(old.name), *old.subtitle]:
        if not any(stems_overlap(term, other) for other in [*name_phrases(field_name), *terms]):
            terms.append(term)
    return terms[:SUBTITLE_TERMS]


def bare_word(name: str) -> bool:
    """Whether ``name`` is one word ("Brain", "Transformer"; an abbreviation in brackets not counted), not a
    hyphenated compound ("Text-to-image" says more than one word)."""
    words = name.split(" (")[0].split()
    return len(words) == 1 and "-" not in words[0]


def generic_phrases(counts: PhraseCounts) -> dict[str, int]:
    """{phrase key: documents writing it} for the phrases at least GENERIC_NAME_SHARE of the corpus's documents
    write (PhraseCounts.document_frequency)."""
    frequency = counts.document_frequency
    floor = GENERIC_NAME_SHARE * max(counts.matrix.shape[0], 1)
    return {counts.keys[column]: int(frequency[column]) for column in np.flatnonzero(frequency >= floor)}


def plain_name(name: str, generic: Mapping[str, int], writers: int) -> bool:
    """Whether ``name`` says little of its topic: one bare word (bare_word), or a name one of whose phrases is
    ``generic`` (generic_phrases: written by GENERIC_NAME_SHARE of the corpus) and mostly written outside the topic,
    whose ``writers`` (its documents writing the name) are under half of the phrase's: "Neural networks (NN)",
    "Clustering and algorithm", "Labels and features"; not "Graph neural networks" over a corpus most of whose
    graph papers the topic holds."""
    if bare_word(name):
        return True
    return any(writers < generic[key] / 2 for key in map(phrase_key, name_phrases(name)) if key in generic)


def weak_name(counts: PhraseCounts, name: str, rows: np.ndarray, generic: Mapping[str, int] | None = None) -> bool:
    """Whether ``name`` is plain (plain_name over ``generic``; bare only when None), two phrases ("Neural collapse (NC)
    and gradient descent": the namer pairs phrases when its best covers under PAIR_BELOW of the papers,
    names.paired_name) or fewer than PAIR_BELOW of the documents ``rows`` write it."""
    written = name_coverage(counts, name, rows)
    return weakly_named(name, written, plain_name(name, generic or {}, round(written * len(rows))))


def weakly_named(name: str, written: float, plain: bool) -> bool:
    """weak_name's rule for a name ``written`` by that share of its documents, ``plain`` or not (plain_name)."""
    return plain or bool(name_halves(name)) or written < PAIR_BELOW


def name_themes(
    counts: PhraseCounts, topics: np.ndarray, frame: pd.DataFrame, title_weight: float = TITLE_WEIGHT
) -> pd.DataFrame:
    """``frame`` (a topics table with topic, label, theme, theme_label) with each theme's ``theme_label`` replaced
    by its phrase name (see the module docstring). ``topics``: the topic of each document counted in ``counts``;
    ``title_weight``: pipeline.topics.naming.names.ranked_phrases."""
    theme_of = {int(topic): int(theme) for topic, theme in zip(frame["topic"], frame["theme"])}
    label_of = {int(topic): str(label) for topic, label in zip(frame["topic"], frame["label"])}
    members: dict[int, list[int]] = {}
    for topic, theme in theme_of.items():
        if theme != OUTLIER_TOPIC:
            members.setdefault(theme, []).append(topic)
    single = {theme: label_of[found[0]] for theme, found in members.items() if len(found) == 1}
    themes = [theme_of.get(int(topic), OUTLIER_TOPIC) for topic in topics]
    wanted = [theme if theme not in single else OUTLIER_TOPIC for theme in themes]
    fallback = dict(zip(frame["theme"].astype(int), frame["theme_label"].astype(str)))
    member_phrase = one_members_phrase(
        {theme: [label_of[topic] for topic in found] for theme, found in members.items()}
    )
    common = common_phrases(counts, COMMON_WORD_SHARE)
    names = choose_names(
        # a theme's name is written out: "Language models", not "... (LMs)"; the tables made on counts carried over
        with_key_tables(replace(counts, abbreviations={}), counts),
        wanted,
        taken=list(label_of.values()),
        fallback=fallback,
        parts=[int(topic) for topic in topics],
        title_weight=title_weight,
        avoid=lambda theme, key, coverage: key in common or member_phrase(theme, key, coverage),
        part_share=THEME_PART_SHARE,
    )
    sizes = dict(zip(frame["topic"].astype(int), frame["size"].astype(int)))
    by_field = theme_field_names(counts, themes, narrow=single)
    labels = {**{theme: name.name for theme, name in names.items()}, **single, **by_field}
    for theme, found in members.items():
        if theme in single or theme in by_field:
            continue
        rows = np.flatnonzero(np.asarray(themes) == theme)
        if name_coverage(counts, labels.get(theme, ""), rows) < PAIR_BELOW:  # no phrase the topics share
            largest = sorted(found, key=lambda topic: -sizes.get(topic, 0))
            labels[theme] = members_name(counts, [label_of[topic] for topic in largest]) or labels.get(theme, "")
    return frame.assign(
        theme_label=[labels.get(int(theme), label) for theme, label in zip(frame["theme"], frame["theme_label"])]
    )


def theme_field_names(counts: PhraseCounts, themes: Sequence[int], narrow: Collection[int] = ()) -> dict[int, str]:
    """{theme: field name} for the themes (one id per document counted in ``counts``; -1 none) that a field of
    pipeline/resources/fields.csv names, or an area of its fields (pipeline.topics.naming.fields.field_names,
    with_areas): the session name of what the theme's topics are kinds of ("Generative models" over diffusion,
    text-to-image and super-resolution; "AI for science" over PDEs, proteins and brains). ``narrow``: the themes
    of one topic, which a field may name but an area not."""
    fields = with_areas(load_fields())
    coverage, base = group_coverage(field_presence(counts, fields), themes)
    return field_names(coverage, base, fields, narrow=narrow)


def name_coverage(counts: PhraseCounts, name: str, rows: np.ndarray) -> float:
    """The share of the documents ``rows`` that write one of the phrases of ``name`` (name_phrases; 0 for a phrase
    the counts do not hold)."""
    columns = [counts.keys.index(key) for key in map(phrase_key, name_phrases(name)) if key in counts.keys]
    if not columns or not len(rows):
        return 0.0
    return float((counts.matrix[rows][:, columns].sum(axis=1) > 0).mean())


def members_name(counts: PhraseCounts, labels: Sequence[str]) -> str | None:
    """The name of a theme whose topics share no phrase: its two largest topics' subjects ("Diffusion models and
    time series forecasting", from "Diffusion models (DMs)" and "Time series forecasting (TSF) and ..."), each the
    first phrase of the topic's name as the corpus writes it, an abbreviation in place of a phrase when the pair
    would pass MAX_NAME_WORDS words (one the corpus knows first, names.known_short; any other rather than a bare
    word: "Forecasting" over diffusion and forecasting); a session that holds two subjects is printed so. Two
    subjects of two words each and one head noun share it, written once: "Continual and multimodal learning", not
    "CL and multimodal learning" (not "Large language and diffusion models": a longer subject is one compound).
    None when no form fits."""
    subjects = [name_phrases(label)[0] for label in labels[:2] if name_phrases(label)]
    if len(subjects) < 2 or phrase_key(subjects[0]) == phrase_key(subjects[1]):
        return None
    keys = [phrase_key(subject) for subject in subjects]
    written = [counts.written.get(key, subject) for key, subject in zip(keys, subjects)]
    known = [known_short(key, counts) or written[i] for i, key in enumerate(keys)]
    shorts = [counts.abbreviations.get(key) or written[i] for i, key in enumerate(keys)]
    forms = [(written[0], written[1]), (written[0], known[1]), (known[0], written[1]), tuple(known)]
    words = [phrase.split() for phrase in written]
    if [len(each) for each in words] == [2, 2] and words[0][-1].casefold() == words[1][-1].casefold():
        forms.insert(1, (words[0][0], written[1]))  # one head noun, once: "Continual and multimodal learning"
    abbreviated = [(written[0], shorts[1]), (shorts[0], written[1])]  # the longer phrase abbreviated first
    if len(written[0].split()) > len(written[1].split()):
        abbreviated.reverse()
    forms += [*abbreviated, tuple(shorts)]  # better than one bare word
    for first, second in forms:
        text = f"{first[:1].upper() + first[1:]} and {second}"
        fits = len(first.split()) + len(second.split()) <= MAX_NAME_WORDS and len(text) <= MAX_NAME_CHARACTERS
        if fits and not has_repeated_stem(f"{first} {second}"):  # not "Video generation and video"
            return text
    return None


def one_members_phrase(labels: Mapping[int, Sequence[str]]) -> Callable[[int, str, float], bool]:
    """avoid(theme, key, coverage) for :func:`pipeline.topics.naming.names.choose_names`: True when the phrase
    ``key`` covers less than PAIR_BELOW of the theme's papers and is one of its topics' names or a part of one
    ("Low-rank" of "Low-rank adaptation" beside "Quantization" and "Pruning"; "In-context" of "In-context
    learning"; "series forecasting" of "time series forecasting"): it names a member, not what the members share. A
    last word of a member's name (not the whole name) is its head noun, the kind of thing the member is ("Attacks" of
    "Backdoor attacks", "Optimization" of "Bayesian optimization"), and may name the theme; so may a member's
    phrase that most of the theme's papers write ("Large language models" over RAG, agents and reasoning).
    ``labels``: {theme: its topics' names}."""
    keys = {
        theme: [phrase_key(part) for name in names for part in name_phrases(name)] for theme, names in labels.items()
    }

    def avoid(theme: int, key: str, coverage: float) -> bool:
        if coverage >= PAIR_BELOW:
            return False
        head = " " not in key  # one word ending a member's name: its head noun
        return any(
            f" {key} " in f" {part} " and not (head and part.endswith(" " + key)) for part in keys.get(theme, [])
        )

    return avoid


def with_llm_names(url: str, frame: pd.DataFrame, corpus: Any, topics: np.ndarray, notes: list[str]) -> pd.DataFrame:
    """``frame`` with a column ``llm_label``: the name the model at ``url`` gives each real topic (empty where it
    gave none; pipeline.topics.naming.llm), told the topic's name, subtitle, terms and first eight titles.
    ``corpus``: the build's prepared input (its ``documents`` have ``title``); its note is appended to ``notes``."""
    from pipeline.topics.naming.llm import TopicBrief, llm_names

    titles = corpus.documents["title"].fillna("").astype(str).tolist()
    briefs = {}
    for row in frame.itertuples(index=False):
        if int(row.topic) == OUTLIER_TOPIC:
            continue
        members = np.flatnonzero(topics == int(row.topic))[:8]
        terms = [str(term) for term, _ in list(row.top_terms)]
        briefs[int(row.topic)] = TopicBrief(str(row.label), str(row.subtitle), terms, [titles[i] for i in members])
    names, found = llm_names(url, briefs)
    notes.extend(found)
    return frame.assign(llm_label=[names.get(int(topic), "") for topic in frame["topic"]])
