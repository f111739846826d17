"""Names for groups of documents (topics, themes) from the candidate phrases they write (naming.phrase_counts).

A phrase's score in a group is its documents in the group times the share of all its documents that are in the
group (count x precision, the "count x lift" ranking of author keywords that bench/labels.py checks names against,
without the group's size, which is the same for every phrase of a group), times a small bonus per extra word
(authors write "graph neural networks", not "graph"). A document whose title writes the phrase counts 1 +
TITLE_WEIGHT times, in the count and in the precision: a title names the paper's subject, as the keyphrase
extractors' position features say (KEA's first occurrence, Witten et al. 1999; YAKE's position, Campos et al. 2020).
The name is the best-scoring phrase, replaced by a longer phrase that contains it when that one is written by at
least EXTEND_SHARE of the same documents ("neural" -> "graph neural network"). Names are unique in a call: groups
take their names from the most confident first, and a group whose best phrase is taken takes its next one. A phrase
the corpus abbreviates is written "expansion (SF)".

The subtitle is the group's next SUBTITLE_TERMS phrases that share no word stem with the name or with each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from pipeline.topics.naming.phrase_counts import PhraseCounts, column_sums, presence_sums
from pipeline.topics.naming.phrase_tokens import modifier_word, phrase_key

# Set by reading the names of ICLR 2024 and 2025 beside their author keywords (bench/labels.py), not tuned to it.
WORD_BONUS = 0.35
# Raised from 2 (`python -m bench.labels --title-weights 0,0.5,1,2,4`, docs/decisions/names.md) to 6 when blind
# readers' FIT followed how many of the titles they saw write the name (correlation 0.44; docs/decisions/
# theme-measures.md, section 6): at 6, four of ICLR 2025's 56 topics change name, each to a phrase titles write.
TITLE_WEIGHT = 6.0
EXTEND_SHARE = 0.5
# A phrase nearly always written inside one longer phrase is a fragment of it (see _fragment).
FRAGMENT_SHARE = 0.9
CANDIDATES = 40
SUBTITLE_TERMS = 3
# A name fits two lines of the map's label (issue 20: ~22 characters a line).
MAX_NAME_CHARACTERS = 44
# A phrase must be written by at least this share of a group's documents to name it (and by two documents).
MIN_COVERAGE = 0.03
# A group whose name covers less than PAIR_BELOW of its documents is named by two phrases when the second adds at least
# PAIR_GAIN of them (paired_name); a name has at most MAX_NAME_WORDS words (issue 38: 1-4).
PAIR_BELOW = 0.5
PAIR_GAIN = 0.12
PAIR_CANDIDATES = 12
# B's score is at least this share of the group's best: a phrase the group barely characterises adds noise, not sense.
PAIR_SCORE_SHARE = 0.35
PAIR_TITLE_SHARE = 0.1
MAX_NAME_WORDS = 4
# A short form that at least this share of the corpus writes is the field's own word ("LLMs" 21%, "RLHF" 1.3%,
# "GNNs" 2.1% of ICLR 2025) and stands alone in a name before one few write ("TSF" 0.08%, "DMs" 0.3%, "CBMs"
# 0.15%), which readers marked down as unexplained (docs/decisions/theme-measures.md, sections 6 and 8).
KNOWN_SHORT_SHARE = 0.008
# Nouns that say where or how, not what: a lone modifier is not headed by them ("Black-box" over black-box LLM
# auditing read FIT 4, "Black-box settings" 2; docs/decisions/theme-measures.md, section 21). Phrase keys (singular).
VAGUE_HEADS = frozenset("setting scenario method approach manner way case regime fashion framework technique".split())


@dataclass(frozen=True)
class Name:
    """A group's name and the terms shown beside it."""

    name: str
    subtitle: list[str]


def same_stem(first: str, second: str) -> bool:
    """Two words share a stem: equal after folding case and a plural, or a common prefix of at least five letters,
    or one is a prefix (4+ letters) of the other ("fair"/"fairness", "equivariant"/"equivariance")."""
    a, b = phrase_key(first), phrase_key(second)
    if a == b:
        return True
    shorter = min(len(a), len(b))
    common = 0
    while common < shorter and a[common] == b[common]:
        common += 1
    return common >= 5 or (common == shorter and shorter >= 4)


def stems_overlap(first: str, second: str) -> bool:
    """Some word of one phrase shares a stem with some word of the other."""
    return any(same_stem(a, b) for a in _words(first) for b in _words(second))


def has_repeated_stem(phrase: str) -> bool:
    """Two words of ``phrase`` share a stem ("fairness fair", "modality modal"); "of"-like words are ignored."""
    words = _words(phrase)
    return any(same_stem(words[i], words[j]) for i in range(len(words)) for j in range(i + 1, len(words)))


def _words(phrase: str) -> list[str]:
    return [
        word
        for word in re.split(r"[\s\-()]+", phrase)
        if (len(word) > 2 or (len(word) == 2 and word.isupper())) and word.lower() not in {"of", "and"}
    ]


def group_matrix(groups: Sequence[int], members: Sequence[int]) -> tuple[sp.csr_matrix, list[int]]:
    """(indicator CSR, n_groups x n_documents, the group ids in row order) for ``members`` (group per document);
    documents of group -1 (outliers) are left out."""
    ids = sorted({int(group) for group in groups} - {-1})
    row = {group: index for index, group in enumerate(ids)}
    pairs = [(row[int(group)], document) for document, group in enumerate(members) if int(group) in row]
    data = np.ones(len(pairs))
    rows = np.asarray([pair[0] for pair in pairs], dtype=np.int64)
    columns = np.asarray([pair[1] for pair in pairs], dtype=np.int64)
    return sp.csr_matrix((data, (rows, columns)), shape=(len(ids), len(members))), ids


def ranked_phrases(
    counts: PhraseCounts,
    members: Sequence[int],
    parts: Sequence[int] | None = None,
    title_weight: float = TITLE_WEIGHT,
    part_share: float = MIN_COVERAGE,
    min_coverage: float = MIN_COVERAGE,
    precision_power: float = 1.0,
) -> dict[int, list[tuple[str, float, int]]]:
    """{group: [(phrase key, score, documents in the group), ...]} best first, CANDIDATES per group, for
    ``members`` (group id per document, -1 left out); scores as the module docstring says (``title_weight``: the
    extra weight of a title's mention; ignored when ``counts`` has no titles). ``parts`` (a sub-group per
    document, e.g. the topic of a theme's document): each score is multiplied by the share of the group's parts
    that write the phrase in at least ``part_share`` of their documents. A phrase written by fewer than
    ``min_coverage`` of a group's documents (or by one) is never its candidate. ``precision_power``: the power the
    precision above chance is raised to (below 1, a phrase more of the group writes counts for more)."""
    indicator, ids = group_matrix(members, members)
    # Groups x phrases stay sparse and each group's row is made dense alone (at 285,717 papers the dense arrays took
    # 0.9-1.1 GB). A mention counts 1 and a title's 1 + title_weight: every sum is a whole number (or a multiple of
    # title_weight), so the order of the sums changes no score.
    in_group = presence_sums(indicator, counts.matrix)  # n_groups x n_phrases
    frequency = column_sums(counts.matrix)
    mentions = in_group
    if counts.in_title is not None and title_weight:
        mentions = (in_group + title_weight * presence_sums(indicator, counts.in_title)).tocsr()
        frequency = frequency + title_weight * column_sums(counts.in_title)
    frequency = np.maximum(frequency, 1)
    spread = _spread(counts, members, parts, ids, part_share) if parts is not None else None
    sizes = np.asarray(indicator.sum(axis=1)).ravel()
    bonus = 1.0 + WORD_BONUS * (np.minimum(_key_words(counts), 3) - 1)
    ranked: dict[int, list[tuple[str, float, int]]] = {}
    for index, group in enumerate(ids):
        documents = in_group[index].toarray().ravel()
        weight = mentions[index].toarray().ravel()
        precision = above_chance(weight / frequency, sizes[index] / max(len(members), 1))
        score = (
            weight
            * precision**precision_power
            * bonus
            * (spread[index].toarray().ravel() if spread is not None else 1.0)
        )
        score[(documents < 2) | (documents < min_coverage * sizes[index])] = 0.0
        best = np.argsort(-score, kind="stable")[: CANDIDATES * 3]
        ranked[group] = [(counts.keys[j], float(score[j]), int(documents[j])) for j in best if score[j] > 0]
    return ranked


def above_chance(precision: np.ndarray, base: float) -> np.ndarray:
    """How far ``precision`` (a phrase's share of mentions in the group, per phrase) stands above ``base`` (the
    group's share of the documents: what a phrase written everywhere alike gets), rescaled to [0, 1]:
    (p - b) / (1 - b), 0 below chance (the kappa-like correction of Cohen 1960 for agreement by chance). A topic is a
    few percent of a corpus, so its names barely change; a subtopic is a third of its topic, so a phrase written all
    over the topic ("large language models" in every part of "Jailbreak attacks") no longer names its largest part."""
    if base >= 1.0:
        return np.ones_like(precision)
    return np.clip((precision - base) / (1.0 - base), 0.0, 1.0)


def _spread(
    counts: PhraseCounts, members: Sequence[int], parts: Sequence[int], ids: list[int], part_share: float = MIN_COVERAGE
) -> sp.csr_matrix:
    """Sparse n_groups x n_phrases (CSR float64): the share of each group's parts whose documents write the phrase in
    at least ``part_share`` of them (and at least twice)."""
    part_indicator, part_ids = group_matrix(parts, parts)
    in_part = presence_sums(part_indicator, counts.matrix)
    sizes = np.asarray(part_indicator.sum(axis=1)).ravel()
    entry_part = np.repeat(np.arange(len(part_ids)), np.diff(in_part.indptr))
    writes = in_part.copy()
    writes.data = (in_part.data >= np.maximum(part_share * sizes, 2)[entry_part]).astype(float)
    writes.eliminate_zeros()
    group_of_part: dict[int, int] = {}
    for member, part in zip(members, parts):
        group_of_part.setdefault(int(part), int(member))
    row = {group: index for index, group in enumerate(ids)}
    owned = [(row[group_of_part[part]], index) for index, part in enumerate(part_ids) if group_of_part.get(part) in row]
    owner = sp.csr_matrix(
        (np.ones(len(owned)), ([pair[0] for pair in owned], [pair[1] for pair in owned])),
        shape=(len(ids), len(part_ids)),
    )
    spread = (owner @ writes).tocsr()  # how many of each group's parts write each phrase
    totals = np.maximum(np.asarray(owner.sum(axis=1)).ravel(), 1)
    spread.data = spread.data / totals[np.repeat(np.arange(len(ids)), np.diff(spread.indptr))]
    return spread


def _extended(key: str, candidates: Sequence[tuple[str, float, int]]) -> str:
    """The longest candidate containing ``key`` (as whole words) written by EXTEND_SHARE of its documents."""
    documents = {phrase: count for phrase, _, count in candidates}
    current = key
    while True:
        longer = [
            phrase
            for phrase in documents
            if len(phrase.split()) > len(current.split())
            and f" {current} " in f" {phrase} "
            and documents[phrase] >= EXTEND_SHARE * documents[current]
        ]
        if not longer:
            return current
        current = max(longer, key=lambda phrase: (documents[phrase], -len(phrase)))


def _fragment(key: str, candidates: Sequence[tuple[str, float, int]]) -> bool:
    """``key`` begins a longer candidate written by FRAGMENT_SHARE of its documents in the group, so it lacks that
    phrase's head noun ("multimodal large language" of "multimodal large language model", "reinforcement" of
    "reinforcement learning"): a fragment, never a name on its own. A phrase that ends a longer one keeps its
    head ("language model" of "large language model") and is not a fragment."""
    documents = {phrase: count for phrase, _, count in candidates}
    return any(
        phrase.startswith(key + " ") and count >= FRAGMENT_SHARE * documents.get(key, 0)
        for phrase, count in documents.items()
    )


def display(key: str, counts: PhraseCounts) -> str:
    """How a name is shown: as the corpus writes it, first letter capital, "expansion (SF)" where it abbreviates
    it (the expansion alone when that would not fit MAX_NAME_CHARACTERS)."""
    written = counts.written.get(key, key)
    short = counts.abbreviations.get(key)
    if short and len(written) + len(short) + 3 <= MAX_NAME_CHARACTERS:
        written = f"{written} ({short})"
    return written[:1].upper() + written[1:]


def _acceptable_name(key: str, counts: PhraseCounts) -> bool:
    return (
        not has_repeated_stem(counts.written.get(key, key))
        and len(display(key, counts)) <= MAX_NAME_CHARACTERS
        and not _cut_off(key, counts)
    )


def _cut_off(key: str, counts: PhraseCounts) -> bool:
    """``key``, of three words or more, ends in two words that the corpus nearly always continues (at least
    FRAGMENT_SHARE of the documents writing them write one longer phrase that starts with them): "capability of large
    language", whose "large language" is "large language model(s)" in the corpus; a phrase cut before its head noun.
    A phrase of two words is checked within its group's candidates (_fragment): "flow matching" is nearly always
    "flow matching models" in some corpora and still a name."""
    words = key.split()
    return len(words) >= 3 and (" ".join(words[-2:]) in dangling_pairs(counts) or key in continued_phrases(counts))


def dangling_pairs(counts: PhraseCounts) -> set[str]:
    """The two-word phrases of ``counts`` that some three-word phrase starting with them covers to FRAGMENT_SHARE
    of their documents; computed once and kept on ``counts`` (its attribute ``dangling_pairs``)."""
    found: set[str] | None = getattr(counts, "dangling_pairs", None)
    if found is None:
        frequency = dict(zip(counts.keys, counts.document_frequency.tolist()))
        found = set()
        for key, documents in frequency.items():
            words = key.split()
            if len(words) == 3:
                head = f"{words[0]} {words[1]}"
                if head in frequency and documents >= FRAGMENT_SHARE * frequency[head]:
                    found.add(head)
        counts.dangling_pairs = found  # type: ignore[attr-defined]
    return found


def continued_phrases(counts: PhraseCounts) -> set[str]:
    """The three-word phrases of ``counts`` whose documents nearly all (FRAGMENT_SHARE) write some four-word phrase
    beginning with them, though no one of those does: "privacy preserving machine", continued by "... learning" and
    "... unlearning" (round 50: "Privacy-preserving machine", FORM 1). Computed once and kept on ``counts`` (its
    attribute ``continued_phrases``)."""
    found: set[str] | None = getattr(counts, "continued_phrases", None)
    if found is None:
        column_of = _columns(counts)
        frequency = counts.document_frequency
        longer: dict[str, list[int]] = {}
        for key, column in column_of.items():
            words = key.split()
            head = " ".join(words[:3])
            if len(words) == 4 and head in column_of:
                longer.setdefault(head, []).append(column)
        # a head's continuations hold at most the sum of their documents: only heads that sum reaches are counted
        heads = [
            head
            for head, columns in longer.items()
            if frequency[columns].sum() >= FRAGMENT_SHARE * frequency[column_of[head]]
        ]
        wanted = sorted({column for head in heads for column in longer[head]})
        block = counts.matrix[:, wanted].tocsc()
        position = {column: index for index, column in enumerate(wanted)}
        found = set()
        for head in heads:
            columns = [position[column] for column in longer[head]]
            written = int((np.asarray(block[:, columns].sum(axis=1)).ravel() > 0).sum())
            if written >= FRAGMENT_SHARE * frequency[column_of[head]]:
                found.add(head)
        counts.continued_phrases = found  # type: ignore[attr-defined]
    return found


def choose_names(
    counts: PhraseCounts,
    members: Sequence[int],
    taken: Sequence[str] = (),
    fallback: Mapping[int, str] | None = None,
    parts: Sequence[int] | None = None,
    title_weight: float = TITLE_WEIGHT,
    avoid: Callable[[int, str, float], bool] | None = None,
    part_share: float = MIN_COVERAGE,
    vague: Collection[str] = (),
    min_coverage: float = MIN_COVERAGE,
    precision_power: float = 1.0,
) -> dict[int, Name]:
    """A :class:`Name` per group of ``members`` (group id per document; -1, the outliers, gets none), unique among
    themselves and ``taken`` (names ignoring case). A group without a candidate gets ``fallback[group]`` or
    "Topic N"; a group whose best phrase covers less than PAIR_BELOW of its documents is named by two phrases
    (:func:`paired_name`). ``parts``, ``title_weight``, ``part_share``: see :func:`ranked_phrases`.
    ``avoid(group, key, coverage)``:
    True for a phrase the group must not be named by (coverage: the share of the group's documents that write it).
    ``vague``: phrases that may end a paired name but never begin one nor stand alone ("Sampling", "Noise" for a
    subtopic, where "Inverse problems and sampling" is read well). ``min_coverage``, ``precision_power``: see
    :func:`ranked_phrases`."""
    ranked = ranked_phrases(counts, members, parts, title_weight, part_share, min_coverage, precision_power)
    rows_of = _group_rows(members)
    if avoid is not None:
        ranked = {
            group: [entry for entry in found if not avoid(group, entry[0], entry[2] / max(len(rows_of[group]), 1))]
            for group, found in ranked.items()
        }
    used = {name.casefold() for name in taken}
    used_keys: set[str] = set()
    names: dict[int, Name] = {}
    order = sorted(ranked, key=lambda group: -(ranked[group][0][1] if ranked[group] else 0.0))
    for group in order:
        candidates = ranked[group]
        chosen = _first_free(candidates, counts, used_keys, used, vague, rows_of.get(group))
        if chosen is None:
            label = (fallback or {}).get(group, f"Topic {group}")
            names[group] = Name(label, [])
            used.add(label.casefold())
            continue
        used_keys.add(chosen)
        name = paired_name(chosen, candidates, counts, rows_of[group])
        if name.casefold() in used:
            name = display(chosen, counts)
        used.add(name.casefold())
        names[group] = Name(name, subtitle(name, [key for key, _, _ in candidates], counts))
    return names


def common_phrases(counts: PhraseCounts, word_share: float, phrase_share: float = 1.0) -> set[str]:
    """The phrases too common to name a group: one-word phrases that more than ``word_share`` of all documents write
    ("learning", "image", "graph" in a machine-learning corpus), and longer ones that more than ``phrase_share``
    write ("large language models")."""
    frequency = counts.document_frequency / max(counts.matrix.shape[0], 1)
    return {
        key for key, share in zip(counts.keys, frequency) if share > (word_share if " " not in key else phrase_share)
    }


def _group_rows(members: Sequence[int]) -> dict[int, np.ndarray]:
    """{group: its documents' positions} for ``members`` (group per document)."""
    labels = np.asarray(members, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    groups, starts = np.unique(labels[order], return_index=True)
    return {int(group): block for group, block in zip(groups, np.split(order, starts[1:]))}


def _first_free(
    candidates: Sequence[tuple[str, float, int]],
    counts: PhraseCounts,
    used_keys: set[str],
    used: set[str],
    vague: Collection[str] = (),
    rows: np.ndarray | None = None,
) -> str | None:
    """The best candidate (or the longer phrase extending it, :func:`_extended`) that is no other group's name,
    not a fragment, not ``vague`` and of an acceptable form; None when none is. A lone modifier ("Multi-agent") takes
    the noun the group's documents (``rows``) most write after it (:func:`headed`)."""
    for key, _, _ in candidates[:CANDIDATES]:
        extended = _extended(key, candidates)
        if rows is not None and lone_modifier(extended, counts):
            extended = headed(extended, counts, rows)
        for option in (extended, key):
            if option != extended and lone_modifier(option, counts) and not lone_modifier(extended, counts):
                continue  # the modifier alone, when its headed phrase was taken or refused
            if option in vague:
                continue
            if option not in used_keys and _acceptable_name(option, counts) and not _fragment(option, candidates):
                if display(option, counts).casefold() not in used:
                    return option
    return None


def lone_modifier(key: str, counts: PhraseCounts) -> bool:
    """``key`` is written as one word that modifies a noun (phrase_tokens.modifier_word: "Multi-agent", "Noisy"): a
    name takes the noun the group writes after it (:func:`headed`), and a paired name never ends with it."""
    written = counts.written.get(key, key)
    return " " not in written and modifier_word(written)


def headed(key: str, counts: PhraseCounts, rows: np.ndarray) -> str:
    """The phrase that continues the modifier ``key`` with a noun, as the group's documents (``rows``, positions in
    ``counts``) most write it ("multi agent" -> "multi agent system"): among the phrases beginning with ``key`` that
    at least MIN_COVERAGE of them (and two) write, of an acceptable form and not a modifier themselves, the one the
    most write, leaving out a phrase that a longer one covers to FRAGMENT_SHARE ("multi agent reinforcement" of
    "multi agent reinforcement learning") and one whose noun is one of VAGUE_HEADS; the shorter on a tie. ``key``
    itself when none qualifies."""
    columns = [column for phrase, column in _columns(counts).items() if phrase.startswith(key + " ")]
    if not columns or not len(rows):
        return key
    written = np.asarray(counts.matrix[rows][:, columns].sum(axis=0)).ravel()
    found = {
        counts.keys[column]: int(documents)
        for column, documents in zip(columns, written.tolist())
        if documents >= max(2, MIN_COVERAGE * len(rows))
    }
    covered = {
        phrase
        for phrase, documents in found.items()
        if any(other.startswith(phrase + " ") and count >= FRAGMENT_SHARE * documents for other, count in found.items())
    }
    kept = [
        (documents, phrase)
        for phrase, documents in found.items()
        if phrase not in covered
        and phrase.rpartition(" ")[2] not in VAGUE_HEADS
        and _acceptable_name(phrase, counts)
        and not lone_modifier(phrase, counts)
    ]
    return max(kept, key=lambda entry: (entry[0], -len(entry[1])))[1] if kept else key


def _columns(counts: PhraseCounts) -> dict[str, int]:
    """{phrase key: column} of ``counts``, made once and kept on it."""
    found: dict[str, int] | None = getattr(counts, "columns_of", None)
    if found is None:
        found = {phrase: index for index, phrase in enumerate(counts.keys)}
        counts.columns_of = found  # type: ignore[attr-defined]
    return found


def _key_words(counts: PhraseCounts) -> np.ndarray:
    """Words per phrase key of ``counts`` (int64, n_phrases), made once and kept on it."""
    found: np.ndarray | None = getattr(counts, "key_words", None)
    if found is None:
        found = np.asarray([len(key.split()) for key in counts.keys], dtype=np.int64)
        counts.key_words = found  # type: ignore[attr-defined]
    return found


def with_key_tables(part: PhraseCounts, source: PhraseCounts) -> PhraseCounts:
    """``part`` (the counts of some or all of ``source``'s documents, the same keys) given ``source``'s tables, made
    once on ``source``: those that depend on the keys alone ({key: column}, words per key: the 59 topics of the 290k
    atlas remade them for each topic's subtopics, 28 of the subtopics stage's 60 s over 672,484 keys) and the
    phrases cut before their head noun, judged on the whole corpus, not on a topic's few papers
    (:func:`dangling_pairs`, :func:`continued_phrases`)."""
    part.columns_of = _columns(source)  # type: ignore[attr-defined]
    part.key_words = _key_words(source)  # type: ignore[attr-defined]
    part.dangling_pairs = dangling_pairs(source)  # type: ignore[attr-defined]
    part.continued_phrases = continued_phrases(source)  # type: ignore[attr-defined]
    return part


def paired_name(key: str, candidates: Sequence[tuple[str, float, int]], counts: PhraseCounts, rows: np.ndarray) -> str:
    """The name of a group whose documents are ``rows`` and whose chosen phrase is ``key``: ``key`` alone when it
    covers at least PAIR_BELOW of them; else "A and B", B the best-scoring candidate (among the PAIR_CANDIDATES best)
    whose documents that do not write A are at least PAIR_GAIN of the group, that scores at least PAIR_SCORE_SHARE
    of the best score and shares no stem with A, when the pair keeps to MAX_NAME_WORDS words (B's abbreviation in
    place of a long B; A's abbreviation kept when it fits) and MAX_NAME_CHARACTERS. A conference session is named
    so ("Diffusion and flow matching"): one phrase of a topic's many rarely covers half of it
    (docs/decisions/theme-measures.md, section 6)."""
    columns = _columns(counts)
    group = counts.matrix[rows]
    writes = np.asarray(group[:, columns[key]].todense()).ravel() > 0
    if not len(rows) or writes.mean() >= PAIR_BELOW:
        return display(key, counts)
    floor = PAIR_SCORE_SHARE * max((score for _, score, _ in candidates[:1]), default=0.0)
    for other, score, _ in candidates[:PAIR_CANDIDATES]:  # best score first: the most characteristic that adds enough
        if score < floor:
            break
        other = _extended(other, candidates)
        if (
            stems_overlap(other, key)
            or not _acceptable_name(other, counts)
            or _fragment(other, candidates)
            or lone_modifier(other, counts)
        ):
            continue
        gain = float((np.asarray(group[:, columns[other]].todense()).ravel() > 0)[~writes].sum())
        if gain >= PAIR_GAIN * len(rows) and _titled(other, counts, rows, columns):
            return _pair_text(key, other, counts)
    return display(key, counts)


def _titled(key: str, counts: PhraseCounts, rows: np.ndarray, columns: Mapping[str, int]) -> bool:
    """Whether ``key`` may end a paired name: a phrase of several words, or one word that at least PAIR_TITLE_SHARE
    of the group's titles write (readers marked down one-word tails that only abstracts write: "... and labels",
    "... and scene", "... and bound"; a title names what a paper is about). A test that the tail be mostly the
    group's word (30% of its papers) took "... and self-attention" and "... and convergence" away and readers' FIT
    fell (docs/decisions/theme-measures.md, section 8)."""
    if " " in key or counts.in_title is None:
        return True
    in_titles = np.asarray(counts.in_title[rows][:, columns[key]].todense()).ravel() > 0
    return bool(in_titles.mean() >= PAIR_TITLE_SHARE)


def known_short(key: str, counts: PhraseCounts) -> str | None:
    """The short form of ``key`` as written when it may stand alone in a name (KNOWN_SHORT_SHARE of the corpus
    writes it), else None."""
    short = counts.abbreviations.get(key)
    return short if short and counts.short_share.get(key, 0.0) >= KNOWN_SHORT_SHARE else None


def _pair_text(first: str, second: str, counts: PhraseCounts) -> str:
    """ "A and B" as shown: the first of these forms that keeps to MAX_NAME_WORDS words (an abbreviation in
    brackets not counted) and MAX_NAME_CHARACTERS and repeats no word stem: A with its abbreviation and B written
    out, A and B written out, A's abbreviation and B, A and B's abbreviation, both abbreviations, the short forms
    the corpus knows (:func:`known_short`) tried before the others ("NeRF and point cloud" before "Neural radiance
    fields and PC"); A alone when none fits. B keeps the case the corpus writes it in ("English", "transformers")."""
    a_written, b_written = counts.written.get(first, first), counts.written.get(second, second)
    known = (known_short(first, counts), known_short(second, counts))
    any_short = (counts.abbreviations.get(first), counts.abbreviations.get(second))
    forms: list[tuple[str | None, str | None, str | None]] = [
        (display(first, counts), a_written, b_written),
        (a_written, a_written, b_written),
    ]
    for a_short, b_short in (known, any_short):
        forms += [(a_short, a_short, b_written), (a_written, a_written, b_short), (a_short, a_short, b_short)]
    for a_text, a_words, b_text in forms:
        if not a_text or not a_words or not b_text:
            continue
        text = f"{a_text[:1].upper() + a_text[1:]} and {b_text}"
        fits = len(a_words.split()) + len(b_text.split()) <= MAX_NAME_WORDS and len(text) <= MAX_NAME_CHARACTERS
        if fits and not has_repeated_stem(f"{a_words} {b_text}"):  # not "Long-Context LLM inference and LLMs"
            return text
    return display(first, counts)


def name_phrases(name: str) -> list[str]:
    """The phrases a name is made of, written as shown, without abbreviations in brackets: "Diffusion models (DMs)
    and flow matching" -> ["Diffusion models", "flow matching"] (the inverse of :func:`paired_name`)."""
    return [part.strip() for part in re.sub(r"\s*\([^)]*\)", "", name).split(" and ") if part.strip()]


def subtitle(name: str, keys: Sequence[str], counts: PhraseCounts) -> list[str]:
    """Up to SUBTITLE_TERMS of ``keys`` (best first) as written, sharing no stem with ``name`` or each other."""
    terms: list[str] = []
    for key in keys:
        written = counts.written.get(key, key)
        short = counts.abbreviations.get(key)
        shown = short if short and len(short.rstrip("s")) >= 3 else written
        if has_repeated_stem(written) or stems_overlap(written, name) or stems_overlap(shown, name):
            continue  # neither the phrase nor the abbreviation shown for it ("LLMs" beside "LLM inference")
        if short and short.lower() in name.lower():
            continue
        if any(stems_overlap(written, term) or stems_overlap(shown, term) for term in terms):
            continue
        terms.append(shown)
        if len(terms) == SUBTITLE_TERMS:
            break
    return terms
