"""Do names cover what they name? Per topic (theme), the share of its papers that write its name.

    python -m bench.name_coverage --cache /tmp/atlas-iclr2025 [--cache /tmp/atlas-iclr2024 ...]
        [--level topics|themes|both] [--titles 3] [--terms 6] [--lowest 10] [--no-stock]

A topic's name should say what most of its papers share, a theme's what its topics share (issue 38). Per group (a
topic of ``topics.parquet``, or a theme; the outlier topic -1 is never a group) the command prints one row:

- the **name** (``label``; ``theme_label`` for a theme) and the group's **papers**;
- **coverage**: the share of the group's papers whose title or abstract writes the name. A paper writes a name when
  it writes the name's phrase (its first phrase, the text before ", ", bench.labels.first_phrase) or its
  parenthesised abbreviation ("Graph neural networks (GNNs)": both), or any abbreviation the corpus defines for the
  phrase ("GNN" too), or a close variant of these: a writing with the same
  pipeline.topics.naming.phrase_tokens.phrase_key (case, a plural "s", hyphens folded). It is read off the corpus's
  own phrase counts (pipeline.topics.naming.phrase_counts.count_phrases over the build's texts: the phrase's column,
  where the abbreviations the corpus defines are counted as their expansion) and its abbreviation table
  (``abbreviation_definitions``), and completed by the key as whole words of the text's folded words
  (:func:`folded_text`), which finds what the counts leave out: a stop word (stock BERTopic's "the"), an adjective
  ("visual"), a phrase inside a hyphenated word ("graph neural network-based"), one written in fewer than 3 papers.
  The ``match`` column says ``phrase`` when the name's phrase is a column of the counts (always, for the build's own
  names), ``text`` when the counts never counted it;
- **precision**: the share of the atlas's papers writing the name (outliers included) that are in the group, and
  **lift**: coverage over the share of all the atlas's papers that write it (1 = no more in the group than anywhere);
- the group's top c-TF-IDF terms (``top_terms`` of a topic; for a theme, its topics' terms merged, each term's
  weight summed over its topics weighted by their sizes: :func:`theme_terms`) and ``--titles`` representative
  titles (a topic's ``representative_doc_ids``; a theme's, its largest topics' first representative papers in
  turn; the group's first papers where the cache has none);
- the **stock** yardstick: stock BERTopic's name for the same papers (bench.labels.peer_names: its default
  c-TF-IDF, fitted on the atlas's own assignment, per theme for themes) judged by its FIRST term alone, with the
  same coverage, precision and lift. ``--no-stock`` leaves it out (no BERTopic fit).

Then, per atlas and level, a summary for ours and stock's first term: groups, median and mean coverage, the share of
groups whose name covers at least half of their papers, median precision and median lift; and the ``--lowest``
groups by coverage (name, coverage, terms).

The texts are the build's own (pipeline.ingest.clean: ``join_title_abstract(model_text(title),
model_text(abstract))`` of the cache's documents, which hold the input's title and abstract as written), so the counts
are the ones the build named the topics from. The functions are pure (arrays and frames in, numbers out) but for
:func:`main` and the printing.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.labels import first_phrase
from pipeline.topics.naming.phrase_counts import PhraseCounts
from pipeline.topics.naming.phrase_tokens import phrase_key

OUTLIER = -1
LEVELS = ("topics", "themes")
HALF = 0.5
# A word of a text as the phrase counter reads one: letters and digits, joined by single hyphens or apostrophes.
_WORD = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*")


# ---------------------------------------------------------------------------------------------------- texts


def build_texts(documents: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(texts, titles), n each: the build's model texts of the cache's ``documents`` (title, abstract as written:
    pipeline.ingest.clean ``join_title_abstract(model_text(title), model_text(abstract))``) and their titles as the
    build hands them to count_phrases ("" where none)."""
    from pipeline.ingest.clean import join_title_abstract, model_text

    titles = documents["title"].fillna("").astype(str).tolist()
    abstracts = documents["abstract"].tolist() if "abstract" in documents else [None] * len(titles)
    texts = [join_title_abstract(model_text(title), model_text(abstract)) for title, abstract in zip(titles, abstracts)]
    return texts, titles


def folded_text(text: str) -> str:
    """``text``'s words as phrase keys, one space between and around them (" graph neural network for ... "), so a
    key is written when f" {key} " is in it. Punctuation is dropped, hyphenated words split."""
    return f" {phrase_key(' '.join(_WORD.findall(text)))} "


# ---------------------------------------------------------------------------------------------------- names


def name_phrases(name: str) -> list[str]:
    """The phrases ``name`` stands for: its first phrase without a parenthesised abbreviation, and that abbreviation
    ("Graph neural networks (GNNs)" -> ["Graph neural networks", "GNNs"]; "the, of, graph" -> ["the"]); a paired
    name stands for each of its phrases ("Diffusion models (DMs) and flow matching" -> ["Diffusion models", "DMs",
    "flow matching"]): a paper that writes either is described by the name."""
    phrases: list[str] = []
    for part in str(name).split(" and ") if " and " in str(name) and ", " not in str(name) else [name]:
        phrase, short = first_phrase(part)
        phrases += [text.strip() for text in (phrase, short) if text and text.strip()]
    return phrases


def short_forms(counts: PhraseCounts) -> dict[str, str]:
    """{abbreviation's phrase_key: its expansion's key} from ``counts.abbreviations`` (one short form per expansion;
    pipeline.topics.naming.abbreviations.abbreviation_definitions gives them all)."""
    return {phrase_key(short): long_key for long_key, short in counts.abbreviations.items()}


def name_keys(name: str, shorts: Mapping[str, str]) -> list[str]:
    """The phrase keys a paper may write to write ``name``, unique, in order: per phrase of :func:`name_phrases` (the
    name's phrase, its abbreviation), the key of the phrase it abbreviates (``shorts``: {abbreviation key: expansion
    key}, the corpus's abbreviation table) or its own, then every abbreviation of that key, then its own key."""
    keys: list[str] = []
    for phrase in name_phrases(name):
        own = phrase_key(phrase)
        expansion = shorts.get(own, own)
        keys += [expansion, *sorted(short for short, long_key in shorts.items() if long_key == expansion), own]
    return list(dict.fromkeys(key for key in keys if key))


class Writers:
    """Which papers write a name: from one corpus's phrase counts and its texts.

    ``counts``: count_phrases of ``texts`` (n documents); ``shorts``: {abbreviation key: expansion key} of the
    corpus's abbreviation table (pipeline.topics.naming.abbreviations.abbreviation_definitions; by default
    :func:`short_forms` of ``counts``). A paper writes a key when the counts hold it in the key's column (a candidate
    phrase, or an abbreviation the corpus defines, counted as its expansion) or its folded text
    (:func:`folded_text`) holds the key as whole words (a stop word, a phrase inside a longer hyphenated word, a phrase
    written in fewer than 3 papers: what the counts leave out)."""

    def __init__(self, counts: PhraseCounts, texts: Sequence[str], shorts: Mapping[str, str] | None = None) -> None:
        if counts.matrix.shape[0] != len(texts):
            raise ValueError(f"phrase counts of {counts.matrix.shape[0]} documents for {len(texts)} texts")
        self.counts = counts
        self.texts = texts
        self.shorts = dict(short_forms(counts) if shorts is None else shorts)
        self.columns = {key: column for column, key in enumerate(counts.keys)}
        self.csc = counts.matrix.tocsc()

    @cached_property
    def folded(self) -> list[str]:
        """Each text's :func:`folded_text`."""
        return [folded_text(text) for text in self.texts]

    def of_key(self, key: str) -> np.ndarray:
        """bool, n: the papers writing ``key`` (its column of the counts, or whole words of the folded text)."""
        wanted = f" {key} "
        found = np.fromiter((wanted in text for text in self.folded), dtype=bool, count=len(self.folded))
        column = self.columns.get(key)
        if column is not None:
            found[self.csc.indices[self.csc.indptr[column] : self.csc.indptr[column + 1]]] = True
        return found

    def of_name(self, name: str) -> tuple[np.ndarray, str]:
        """(bool n: the papers writing any of ``name``'s keys (:func:`name_keys`), "phrase" when the name's first key
        is a column of the counts, "text" when the counts never counted it, "none" for a name without a word)."""
        keys = name_keys(name, self.shorts)
        found = np.zeros(len(self.texts), dtype=bool)
        for key in keys:
            found |= self.of_key(key)
        how = "none" if not keys else "phrase" if keys[0] in self.columns else "text"
        return found, how


# ---------------------------------------------------------------------------------------------------- measures


@dataclass(frozen=True)
class Coverage:
    """How much of a group a name covers and how much of the name is the group's.

    papers: the group's papers; covered: those writing the name; writers: the atlas's papers writing it (outliers
    included); coverage = covered / papers; precision = covered / writers (nan when none writes it); lift = coverage
    / (writers / the atlas's papers) (nan when none writes it)."""

    papers: int
    covered: int
    writers: int
    coverage: float
    precision: float
    lift: float


def coverage_of(writes: np.ndarray, in_group: np.ndarray) -> Coverage:
    """:class:`Coverage` of a name written by the papers ``writes`` (bool, n: every paper of the atlas) over the
    group ``in_group`` (bool, n). Raises ValueError for an empty group or arrays of different lengths."""
    writes, in_group = np.asarray(writes, dtype=bool), np.asarray(in_group, dtype=bool)
    if writes.shape != in_group.shape:
        raise ValueError(f"coverage_of: {writes.shape} writers for {in_group.shape} group flags")
    papers, covered, writers = int(in_group.sum()), int((writes & in_group).sum()), int(writes.sum())
    if papers == 0:
        raise ValueError("coverage_of: an empty group")
    coverage = covered / papers
    precision = covered / writers if writers else float("nan")
    lift = coverage / (writers / len(writes)) if writers else float("nan")
    return Coverage(papers, covered, writers, coverage, precision, lift)


def group_coverage(writers: Writers, names: Mapping[int, str], groups: np.ndarray) -> pd.DataFrame:
    """One row per group of ``names`` ({group id: name}) that has papers in ``groups`` (group id per paper, n; -1
    the outliers, never a group), by id: id, name, how (:meth:`Writers.of_name`) and the :class:`Coverage` fields."""
    rows = []
    groups = np.asarray(groups)
    for group in sorted(names):
        in_group = groups == group
        if group == OUTLIER or not in_group.any():
            continue
        writes, how = writers.of_name(names[group])
        rows.append({"id": int(group), "name": names[group], "how": how, **vars(coverage_of(writes, in_group))})
    columns = ["id", "name", "how", "papers", "covered", "writers", "coverage", "precision", "lift"]
    return pd.DataFrame(rows, columns=columns)


def summarise(frame: pd.DataFrame) -> dict[str, float]:
    """{groups, median, mean (coverage), half (share of groups with coverage >= HALF), precision, lift (medians over
    the groups some paper writes the name of)} of a :func:`group_coverage` frame; nan for an empty one."""
    if frame.empty:
        nan = float("nan")
        return {"groups": 0, "median": nan, "mean": nan, "half": nan, "precision": nan, "lift": nan}
    coverage = frame["coverage"].to_numpy(dtype=float)
    written = frame["writers"].to_numpy() > 0
    return {
        "groups": len(frame),
        "median": float(np.median(coverage)),
        "mean": float(np.mean(coverage)),
        "half": float(np.mean(coverage >= HALF)),
        "precision": float(np.median(frame["precision"].to_numpy(dtype=float)[written])) if written.any() else np.nan,
        "lift": float(np.median(frame["lift"].to_numpy(dtype=float)[written])) if written.any() else np.nan,
    }


# ---------------------------------------------------------------------------------------------------- groups


def topic_terms(topics: pd.DataFrame) -> dict[int, list[str]]:
    """{topic: its c-TF-IDF terms, best first} from a topics table's ``top_terms`` ([term, weight] pairs)."""
    return {
        int(topic): [str(pair[0]) for pair in list(terms)] for topic, terms in zip(topics["topic"], topics["top_terms"])
    }


def theme_terms(topics: pd.DataFrame, theme: int) -> list[str]:
    """A theme's terms: its topics' c-TF-IDF terms, each term's score the sum over its topics of the topic's size x
    the term's weight, best first (ties by term)."""
    scores: dict[str, float] = {}
    mine = topics[(topics["theme"].astype(int) == theme) & (topics["topic"].astype(int) != OUTLIER)]
    for size, terms in zip(mine["size"], mine["top_terms"]):
        for term, weight in list(terms):
            scores[str(term)] = scores.get(str(term), 0.0) + float(size) * float(weight)
    return [term for term, _ in sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))]


def representative_ids(topics: pd.DataFrame, level: str, group: int) -> list[str]:
    """The papers that stand for a group, most typical first: a topic's ``representative_doc_ids``; a theme's, its
    topics' (largest first) taken in turn, the first of each, then the second of each, ..."""
    if level == "topics":
        found = topics.loc[topics["topic"].astype(int) == group, "representative_doc_ids"]
        return [str(doc) for doc in list(found.iloc[0])] if len(found) else []
    mine = topics[(topics["theme"].astype(int) == group) & (topics["topic"].astype(int) != OUTLIER)]
    lists = [
        [str(doc) for doc in list(ids)] for ids in mine.sort_values("size", ascending=False)["representative_doc_ids"]
    ]
    return [ids[rank] for rank in range(max(map(len, lists), default=0)) for ids in lists if rank < len(ids)]


def group_titles(
    documents: pd.DataFrame, groups: np.ndarray, group: int, wanted: Sequence[str], count: int
) -> list[str]:
    """``count`` titles of the group's papers: those of ``wanted`` (ids) that are in the group, in order, then its
    first papers; whitespace collapsed."""
    in_group = documents[np.asarray(groups) == group]
    title_of = dict(zip(in_group["doc_id"].astype(str), in_group["title"].fillna("").astype(str)))
    chosen = [doc for doc in wanted if doc in title_of][:count]
    chosen += [doc for doc in title_of if doc not in chosen][: count - len(chosen)]
    return [" ".join(title_of[doc].split()) for doc in chosen]


def first_term(name: str) -> str:
    """A stock BERTopic name's first term ("the, of, graph, and" -> "the")."""
    return str(name).split(", ")[0].strip()


# ---------------------------------------------------------------------------------------------------- printing


def _figure(value: float, digits: int = 2) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def print_groups(
    level: str,
    ours: pd.DataFrame,
    stock: pd.DataFrame | None,
    terms: Mapping[int, list[str]],
    titles: Mapping[int, list[str]],
) -> None:
    """The per-group table: one line per group, then its terms, stock's first term and its titles."""
    singular = level[:-1]
    print(f"\n{singular:>6} {'papers':>6} {'cover':>5} {'prec':>5} {'lift':>6} {'match':>6}  name")
    stock_rows = {} if stock is None else {int(row.id): row for row in stock.itertuples(index=False)}
    for row in ours.itertuples(index=False):
        print(
            f"{row.id:>6} {row.papers:>6,} {_figure(row.coverage)} {_figure(row.precision):>5} "
            f"{_figure(row.lift, 1):>6} {row.how:>6}  {row.name}"
        )
        print(f"{'':>14}terms: {', '.join(terms.get(row.id, []))}")
        if row.id in stock_rows:
            peer = stock_rows[row.id]
            print(
                f"{'':>14}stock first term {peer.name!r}: coverage {_figure(peer.coverage)}, precision "
                f"{_figure(peer.precision)}, lift {_figure(peer.lift, 1)} ({peer.how})"
            )
        for title in titles.get(row.id, []):
            print(f"{'':>14}- {title}")


def print_summary(summaries: Sequence[tuple[str, str, str, dict[str, float]]]) -> None:
    """The summary table: per (cache, level, namer) its :func:`summarise` figures."""
    print(
        f"\n{'summary':<40} {'level':<7} {'namer':<18} {'groups':>6} {'median':>7} {'mean':>6} {'>=0.5':>6}"
        f" {'prec':>6} {'lift':>6}"
    )
    for cache, level, namer, figures in summaries:
        print(
            f"{cache:<40} {level:<7} {namer:<18} {figures['groups']:>6} {_figure(figures['median']):>7} "
            f"{_figure(figures['mean']):>6} {_figure(figures['half']):>6} {_figure(figures['precision']):>6} "
            f"{_figure(figures['lift'], 1):>6}"
        )


def print_lowest(cache: str, level: str, ours: pd.DataFrame, terms: Mapping[int, list[str]], count: int) -> None:
    """The ``count`` groups of lowest coverage (ties by id): name, coverage, papers, first terms."""
    if count <= 0 or ours.empty:
        return
    print(f"\n{cache}: the {min(count, len(ours))} {level} of lowest coverage")
    for row in ours.sort_values(["coverage", "id"]).head(count).itertuples(index=False):
        print(
            f"  {row.id:>4} {_figure(row.coverage)} {row.papers:>6,}  {row.name} | "
            f"{', '.join(terms.get(row.id, [])[:6])}"
        )


# ---------------------------------------------------------------------------------------------------- command


def stock_names(documents: pd.DataFrame, groups: np.ndarray, embeddings: np.ndarray) -> dict[int, str]:
    """{group: stock BERTopic's name} over the papers' ``groups`` (bench.labels.peer_names on title + ". " +
    abstract, as bench.name_packets names them)."""
    from bench.labels import peer_names

    texts = (documents["title"].fillna("") + ". " + documents["abstract"].fillna("")).tolist()
    return peer_names(texts, np.asarray(groups), embeddings, False)["stock BERTopic"]


def measure_cache(
    folder: Path, levels: Sequence[str], n_titles: int, n_terms: int, lowest: int, stock: bool
) -> list[tuple[str, str, str, dict[str, float]]]:
    """Print one cache's per-group tables and lowest groups for ``levels``; return its summary rows."""
    from bench.name_packets import group_ids, our_names, theme_table
    from pipeline.cache import read_cache
    from pipeline.topics.naming.abbreviations import abbreviation_definitions
    from pipeline.topics.naming.phrase_counts import count_phrases

    atlas = read_cache(folder)
    documents = atlas.documents
    topics = theme_table(atlas.topics, atlas.hierarchy)
    started = time.perf_counter()
    texts, titles = build_texts(documents)
    definitions = abbreviation_definitions(texts)
    shorts = {short: long_key for short, (long_key, _, _) in definitions.items()}
    writers = Writers(count_phrases(texts, titles), texts, shorts)
    outliers = int((documents["topic"].astype(int) == OUTLIER).sum())
    print(
        f"\n{folder}: {len(documents):,} papers ({outliers:,} in the outlier topic), "
        f"{int((topics['topic'].astype(int) != OUTLIER).sum())} topics; "
        f"{len(writers.counts.keys):,} phrases counted in {time.perf_counter() - started:.1f} s"
    )
    embeddings = atlas.embeddings() if stock else None
    summaries = []
    for level in levels:
        groups = group_ids(documents, topics, level)
        names = our_names(topics, level)
        ours = group_coverage(writers, names, groups)
        peer = None
        if embeddings is not None:
            firsts = {group: first_term(name) for group, name in stock_names(documents, groups, embeddings).items()}
            peer = group_coverage(writers, {group: firsts[group] for group in names if group in firsts}, groups)
        if level == "topics":
            terms = topic_terms(topics)
        else:
            terms = {group: theme_terms(topics, group) for group in names}
        terms = {group: found[:n_terms] for group, found in terms.items()}
        shown = {
            group: group_titles(documents, groups, group, representative_ids(topics, level, group), n_titles)
            for group in names
        }
        print(f"\n{folder}, {level}: {len(ours)} groups")
        print_groups(level, ours, peer, terms, shown)
        print_lowest(str(folder), level, ours, terms, lowest)
        summaries.append((str(folder), level, "ours", summarise(ours)))
        if peer is not None:
            summaries.append((str(folder), level, "stock first term", summarise(peer)))
    return summaries


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", action="append", required=True, type=Path, help="an atlas (repeat for several)")
    parser.add_argument("--level", choices=[*LEVELS, "both"], default="both")
    parser.add_argument("--titles", type=int, default=3, help="representative titles per group")
    parser.add_argument("--terms", type=int, default=6, help="c-TF-IDF terms per group")
    parser.add_argument("--lowest", type=int, default=10, help="list this many groups of lowest coverage per level")
    parser.add_argument("--no-stock", action="store_true", help="leave out stock BERTopic's first term")
    args = parser.parse_args(argv)
    levels = LEVELS if args.level == "both" else (args.level,)
    summaries: list[tuple[str, str, str, Any]] = []
    for folder in args.cache:
        summaries += measure_cache(folder, levels, args.titles, args.terms, args.lowest, not args.no_stock)
    print_summary(summaries)


if __name__ == "__main__":
    main()
