"""The readers' blind test of names: packets of names and titles for readers, and the score of their verdicts.

    python -m bench.name_packets write --cache ATLAS [--cache ATLAS ...] --level topics|themes|subtopics|candidates
        --out FOLDER [--previous ATLAS ...] [--changed] [--siblings] [--parents] [--stock] [--keybert] [--items N]
        [--seed S] [--force]
    python -m bench.name_packets score --key FOLDER/key.json --verdicts VERDICTS.csv

``write`` makes a packet for one level (topics, themes or subtopics; or ``candidates``, the candidate new topics
that ``add`` found, candidates.parquet) of one or more atlases: each **item** is a name and TITLES_PER_ITEM titles
drawn at random (seeded) from the papers of the topic, theme, subtopic or candidate it names (all of them when it has
fewer). The names come from several namers:

- ``ours``: the atlas's own name (topics.parquet ``label`` for topics, ``theme_label`` for themes, subtopics.parquet
  ``label`` for subtopics);
- ``previous`` (``--previous ATLAS``): the names of an atlas of the previous release (built by an earlier commit),
  each over its own groups (the same topics when the clustering did not change; its own themes);
- ``stock`` (``--stock``): stock BERTopic's default name for the same papers: its c-TF-IDF with its default
  ``CountVectorizer()``, the first four words, as BERTopic's ``Name`` shows them (bench.labels.peer_names, fitted on
  the atlas's own assignment: per topic for topics, per theme for themes);
- ``keybert`` (``--keybert``): BERTopic's best practice (KeyBERTInspired + MMR, bench.labels.peer_names; embeds
  with the packaged MiniLM through the embedding cache: minutes the first time).

Every topic (theme) of each atlas is named once per namer, or ``--items N`` of them per atlas drawn at random, or with
``--changed`` only those whose name differs from the previous release's (one ``--previous`` per ``--cache``, the
same papers built twice); each item draws its own titles. The items of every namer are shuffled together and
numbered 1, 2, ... The folder gets:

- ``packet.md``: the reader's instructions and the items, nothing that says which namer named what;
- ``verdicts.csv``: the answer form, ``item,fit,form``, one line per item with the marks left blank;
- ``key.json``: per item number its namer, level, atlas and topic/theme id (and the name): never shown to readers.

With ``--siblings`` (topics and subtopics) each item also lists the names its namer gives the other topics of the
same theme (the other subtopics of the same topic), as a table of contents shows them side by side: a name that says
what the group's papers share but also claims what a neighbour holds ("Model compression" beside "Quantization") can
then be marked down (SIBLING_NOTE). With ``--parents`` (topics and subtopics) each item also says which section it
sits in: the atlas's own name of its theme (of a subtopic: of its topic), the same for every namer, as the page's
table of contents and the map's hover show it; the reader judges the name as read within it (PARENT_NOTE).

Give the reader ``packet.md`` and ``verdicts.csv`` only. The reader marks each item FIT 1-5 (does the name say what
most of these papers share?) and FORM 1-5 (a short readable noun phrase a conference would print as a session name:
not a keyword list, not cut, no repeated word).

``score`` reads the key and a filled verdicts file and prints per level and namer the number of items, the mean FIT
and FORM with 95% t intervals (per atlas too when the packet holds several), and the paired difference of ``ours``
and each other namer over the topics (themes) both named. It refuses, in one line, a verdicts file with a missing,
extra or repeated item, or a mark that is not a whole number from 1 to 5.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

KIND = "topic-atlas-name-packet"
VERSION = 1
TITLES_PER_ITEM = 8
LEVELS = ("topics", "themes", "subtopics", "candidates")
SYSTEMS = ("ours", "previous", "stock", "keybert")
# bench.labels.peer_names's namers, by our system ids.
PEER_NAMES = {"stock": "stock BERTopic", "keybert": "KeyBERTInspired + MMR"}
MARKS = ("fit", "form")
# What key.json says of each item ("siblings" and "within" only in a packet written with --siblings, --parents).
KEY_FIELDS = ("item", "system", "level", "cache", "id", "name", "papers", "siblings", "within")
OUTLIER = -1

INSTRUCTIONS = """\
# Names for groups of papers: a blind reading

This packet holds {n_items} items. Each item is a name given to a group of research papers, and {titles} titles \
drawn at random from that group's papers (all of them when the group has fewer). The same group may come back under \
another name: judge every item on its own, and do not look anything up.

Give each item two marks, whole numbers from 1 (poor) to 5 (good):

- **FIT**: does the name say what most of these papers share? 5: it names what most of them have in common. \
3: it fits some of them, or is too broad or too narrow. 1: it names something none of them is about.
- **FORM**: is it a short, readable noun phrase a conference would print as a session name? 5: yes, as it stands. \
Mark it down for a list of keywords, a phrase that is cut off, a word said twice, an unexplained fragment, or more \
words than a session name needs.

Answer in `verdicts.csv`, one line per item, in the form `item,fit,form` (for example `7,4,5`): keep its header \
line and its item numbers, fill in the two marks of every item, and add no other line.
"""


SIBLING_NOTE = """\
Each item also lists the names of the other groups shown beside it in the same section of a table of contents. \
Judge FIT with them in view: a name that says what these papers share but would send a reader looking for a \
neighbour's papers to this group (a name wider than the group, covering a neighbour's subject) fits less.
"""


PARENT_NOTE = """\
Each item also names the section it sits in ("Within"), as a table of contents prints a session under its track. \
Judge FIT of the name as read within that section: does the name, under that heading, say what most of these papers \
share? Judge FORM of the name alone.
"""


class VerdictError(ValueError):
    """A verdicts file that cannot be scored against its key (the message is one line)."""


# ---------------------------------------------------------------------------------------------------- names


def theme_table(topics: pd.DataFrame, hierarchy: pd.DataFrame) -> pd.DataFrame:
    """The atlas's topics table with ``theme`` and ``theme_label`` (computed as the page does for old caches)."""
    from pipeline.topics.themes import assign_themes, has_themes

    return topics if has_themes(topics) else assign_themes(topics, hierarchy)


def group_ids(
    documents: pd.DataFrame, topics: pd.DataFrame, level: str, candidates: pd.DataFrame | None = None
) -> np.ndarray:
    """Each paper's topic (``level`` "topics"), theme ("themes"), subtopic ("subtopics") or candidate
    ("candidates": of ``candidates``, candidates.parquet) id, -1 for the outlier topic (and, for subtopics, for papers
    of topics without subtopics or caches without them; for candidates, papers in none); shape n."""
    topic_of = documents["topic"].astype(int).to_numpy()
    if level == "topics":
        return topic_of
    if level == "candidates":
        member_of = {str(doc_id): int(row.candidate) for row in candidates.itertuples() for doc_id in row.doc_ids}
        return np.array([member_of.get(str(doc_id), OUTLIER) for doc_id in documents["doc_id"]], dtype=np.int64)
    if level == "subtopics":
        if "subtopic" not in documents:
            return np.full(len(documents), OUTLIER, dtype=np.int64)
        return documents["subtopic"].fillna(OUTLIER).astype(int).to_numpy()
    theme_of = {int(topic): int(theme) for topic, theme in zip(topics["topic"], topics["theme"])}
    return np.array([theme_of.get(topic, OUTLIER) if topic != OUTLIER else OUTLIER for topic in topic_of])


def our_names(
    topics: pd.DataFrame,
    level: str,
    subtopics: pd.DataFrame | None = None,
    candidates: pd.DataFrame | None = None,
) -> dict[int, str]:
    """{topic, theme, subtopic or candidate id: the atlas's name}, the outlier topic left out; ``subtopics`` and
    ``candidates``: the cache's tables of them (levels "subtopics" and "candidates")."""
    if level == "candidates":
        return {int(row.candidate): str(row.label) for row in candidates.itertuples()}
    if level == "subtopics":
        if subtopics is None or subtopics.empty:
            return {}
        return {int(part): str(label) for part, label in zip(subtopics["subtopic"], subtopics["label"])}
    real = topics[topics["topic"].astype(int) != OUTLIER]
    if level == "topics":
        return {int(topic): str(label) for topic, label in zip(real["topic"], real["label"])}
    themes = real.drop_duplicates("theme")
    return {int(theme): str(label) for theme, label in zip(themes["theme"], themes["theme_label"])}


def peer_system_names(
    documents: pd.DataFrame, groups: np.ndarray, embeddings: np.ndarray, systems: Sequence[str]
) -> dict[str, dict[int, str]]:
    """{system: {group id: name}} of the peer namers in ``systems`` ("stock", "keybert") over the papers' ``groups``
    (n ids, -1 outliers), with bench.labels.peer_names on title + ". " + abstract, as bench.labels names them."""
    wanted = [system for system in systems if system in PEER_NAMES]
    if not wanted:
        return {}
    from bench.labels import peer_names

    texts = (documents["title"].fillna("") + ". " + documents["abstract"].fillna("")).tolist()
    named = peer_names(texts, np.asarray(groups), embeddings, "keybert" in wanted)
    return {system: named[PEER_NAMES[system]] for system in wanted}


# ---------------------------------------------------------------------------------------------------- packets


def one_line(text: object) -> str:
    """``text`` with its whitespace collapsed to single spaces (titles may hold line breaks)."""
    return " ".join(str(text).split())


def draw_titles(titles: Sequence[str], rng: np.random.Generator, count: int = TITLES_PER_ITEM) -> list[str]:
    """``count`` of ``titles`` drawn without replacement (all of them, in a random order, when fewer)."""
    order = rng.permutation(len(titles))[: min(count, len(titles))]
    return [titles[int(index)] for index in order]


def build_items(
    atlases: Sequence[dict[str, Any]],
    systems: Sequence[str],
    level: str,
    items: int | None,
    seed: int,
) -> list[dict[str, Any]]:
    """The packet's items, numbered and shuffled.

    ``atlases``: per atlas {"cache": its path as given, "titles": {group id: [non-empty titles]}, "names": {system:
    {group id: name}}}. Per atlas, every group that has a name of its first system of ``systems`` (``ours``, or
    ``previous`` for a previous release's atlas; or ``items`` of them drawn at random) gets one item per system of
    ``systems`` that the atlas has, each drawing its own titles; then all items are shuffled. Deterministic for a
    ``seed``. An atlas with "parents" ({topic id: theme id}, or {subtopic id: topic id}) gives each item its
    "siblings": its system's names of the other groups of its parent, in id order. Returns [{"item", "system",
    "level", "cache", "id", "name", "papers", "titles"}, and "siblings" where given], by item number.
    """
    rng = np.random.default_rng(seed)
    drawn: list[dict[str, Any]] = []
    for atlas in atlases:
        present = [system for system in systems if system in atlas["names"]]
        ids = sorted(atlas["names"][present[0]]) if present else []
        if items is not None and items < len(ids):
            ids = sorted(int(group) for group in rng.choice(ids, size=items, replace=False))
        for group in ids:
            titles = atlas["titles"].get(group, [])
            for system in present:
                drawn.append(
                    {
                        "system": system,
                        "level": level,
                        "cache": atlas["cache"],
                        "id": int(group),
                        "name": one_line(atlas["names"][system].get(group, "")),
                        "papers": len(titles),
                        "titles": draw_titles(titles, rng),
                    }
                    | sibling_names(atlas, system, group)
                    | parent_name(atlas, group)
                )
    order = rng.permutation(len(drawn))
    return [{"item": number, **drawn[int(index)]} for number, index in enumerate(order, start=1)]


def sibling_names(atlas: dict[str, Any], system: str, group: int) -> dict[str, list[str]]:
    """{"siblings": ``system``'s names of the other groups of ``group``'s parent (the topics of its theme, the
    subtopics of its topic)} when ``atlas`` has "parents", else {} (build_items)."""
    parents = atlas.get("parents")
    if parents is None:
        return {}
    names = atlas["all_names"][system]  # every group's, also where --changed keeps only the renamed ones
    others = [other for other, parent in sorted(parents.items()) if parent == parents.get(group) and other != group]
    return {"siblings": [one_line(names[other]) for other in others if other in names]}


def parent_name(atlas: dict[str, Any], group: int) -> dict[str, str]:
    """{"within": the atlas's own name of ``group``'s parent (its theme's, a subtopic's topic's)} when ``atlas`` has
    "parent_names", else {} (build_items). One name for every namer: the section is the atlas's, not the namer's."""
    names = atlas.get("parent_names")
    if names is None:
        return {}
    return {"within": one_line(names.get(group, ""))}


def packet_text(items: Sequence[dict[str, Any]]) -> str:
    """``packet.md``: the instructions, then per item its number, name, the names beside it (items with
    "siblings") and titles (one ``- `` line each)."""
    parts = [INSTRUCTIONS.format(n_items=len(items), titles=TITLES_PER_ITEM)]
    if any("siblings" in item for item in items):
        parts.append(SIBLING_NOTE)
    if any("within" in item for item in items):
        parts.append(PARENT_NOTE)
    for item in items:
        name = item["name"] or "(no name)"
        lines = [f"## Item {item['item']}", "", f"**Name:** {name}", ""]
        if "within" in item:
            lines += [f"**Within:** {item['within'] or '(no name)'}", ""]
        if "siblings" in item:
            lines += [f"**Beside it:** {'; '.join(item['siblings']) or '(nothing: alone in its section)'}", ""]
        lines += [f"- {title}" for title in item["titles"]]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def key_document(items: Sequence[dict[str, Any]], caches: Sequence[dict[str, Any]], seed: int, level: str) -> dict:
    """``key.json``: what each item number is (system, level, cache, id, name, papers), and how the packet was made."""
    return {
        "kind": KIND,
        "version": VERSION,
        "level": level,
        "seed": seed,
        "titles_per_item": TITLES_PER_ITEM,
        "caches": list(caches),
        "items": [{key: item[key] for key in KEY_FIELDS if key in item} for item in items],
    }


def verdicts_form(items: Sequence[dict[str, Any]]) -> str:
    """``verdicts.csv`` as the reader gets it: the header and one line per item with empty marks."""
    return "item,fit,form\n" + "".join(f"{item['item']},,\n" for item in items)


def load_atlas(
    folder: Path,
    level: str,
    systems: Sequence[str],
    own: str = "ours",
    siblings: bool = False,
    parents: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the atlas as :func:`build_items` takes it, its entry in the key) of the cache ``folder``; its own names are
    those of the system ``own`` ("previous" for an atlas of the previous release, which gets no peer names).
    ``siblings`` (topics or subtopics): also its "parents", {topic: theme} or {subtopic: topic}, so that items list
    the groups beside them; ``parents``: its "parent_names", {group id: the atlas's name of its parent}."""
    from pipeline.cache import read_cache

    atlas = read_cache(folder)
    documents = atlas.documents
    topics = theme_table(atlas.topics, atlas.hierarchy)
    groups = group_ids(documents, topics, level, atlas.candidates)
    titles: dict[int, list[str]] = {}
    for group, title in zip(groups, documents["title"]):
        if group != OUTLIER and isinstance(title, str) and title.strip():
            titles.setdefault(int(group), []).append(one_line(title))
    names = {own: our_names(topics, level, atlas.subtopics, atlas.candidates)}
    peers = [system for system in systems if system in PEER_NAMES]
    if peers and own == "ours":
        names |= peer_system_names(documents, groups, atlas.embeddings(), peers)
    entry = {
        "cache": str(folder),
        "input_path": atlas.manifest.get("input_path"),
        "created_at": atlas.manifest.get("created_at"),
        "n_documents": int(len(documents)),
        "groups": len(names[own]),
        "system": own,
    }
    loaded: dict[str, Any] = {"cache": str(folder), "titles": titles, "names": names}
    if siblings:
        loaded["parents"] = parent_groups(topics, level, atlas.subtopics)
        loaded["all_names"] = names
    if parents:
        above = our_names(topics, "themes" if level == "topics" else "topics")
        loaded["parent_names"] = {
            group: above.get(parent, "") for group, parent in parent_groups(topics, level, atlas.subtopics).items()
        }
    return loaded, entry


def parent_groups(topics: pd.DataFrame, level: str, subtopics: pd.DataFrame | None) -> dict[int, int]:
    """{group id: its parent's id}: each topic's theme (``level`` "topics"), each subtopic's topic ("subtopics"; {}
    for a cache without subtopics); the outlier topic left out. Raises ValueError for "themes" (no parent)."""
    if level == "topics":
        real = topics[topics["topic"].astype(int) != OUTLIER]
        return {int(topic): int(theme) for topic, theme in zip(real["topic"], real["theme"])}
    if level == "subtopics":
        if subtopics is None or subtopics.empty:
            return {}
        return {int(part): int(topic) for part, topic in zip(subtopics["subtopic"], subtopics["topic"])}
    raise ValueError(f"level {level!r} has no parent groups")


def only_changed(ours: dict[str, Any], earlier: dict[str, Any]) -> None:
    """Keep, in both atlases (load_atlas's first element; the same papers built twice, so the same group ids), only
    the groups whose "ours" name differs from the "previous" one, for every system: a packet of the renamed items
    side by side (rounds 14 and 19 of docs/decisions/theme-measures.md), where a full packet's noise would hide a
    few changed names (section 8)."""
    own, old = ours["names"]["ours"], earlier["names"]["previous"]
    kept = {group for group, name in own.items() if old.get(group) is not None and old[group] != name}
    for atlas in (ours, earlier):
        atlas["names"] = {
            system: {g: n for g, n in names.items() if g in kept} for system, names in atlas["names"].items()
        }


def write_packet(
    caches: Sequence[Path],
    level: str,
    out: Path,
    systems: Sequence[str] = ("ours",),
    items: int | None = None,
    seed: int = 0,
    force: bool = False,
    previous: Sequence[Path] = (),
    changed: bool = False,
    siblings: bool = False,
    parents: bool = False,
) -> list[dict[str, Any]]:
    """Write ``packet.md``, ``verdicts.csv`` and ``key.json`` into ``out`` (see the module docstring); returns the
    items. ``previous``: atlases of the previous release, whose own names are the system "previous". ``changed``:
    only the groups whose name differs from the previous release's (:func:`only_changed`). ``siblings``: each item
    lists the names of the other topics of its theme (of a subtopic: the other subtopics of its topic); ``parents``:
    each item names its theme (a subtopic its topic). Raises FileExistsError when ``out`` already holds a packet's
    file (a reader's verdicts), unless ``force``; ValueError when ``changed`` is asked without one previous atlas per
    atlas, or ``siblings`` or ``parents`` for themes."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r} is not one of {LEVELS}")
    if siblings and level == "themes":
        raise ValueError("--siblings lists the groups beside a topic or a subtopic; themes have none")
    if parents and level == "themes":
        raise ValueError("--parents names the section of a topic or a subtopic; themes are the top level")
    if (siblings or parents) and level == "candidates":
        raise ValueError("--siblings and --parents are for the atlas's own levels; a candidate stands beside them")
    unknown = [system for system in systems if system not in SYSTEMS]
    if unknown:
        raise ValueError(f"unknown systems {unknown}")
    out = Path(out)
    present = [name for name in ("packet.md", "verdicts.csv", "key.json") if (out / name).exists()]
    if present and not force:
        raise FileExistsError(f"{out} already holds {', '.join(present)}; choose another --out or pass --force")
    loaded = [load_atlas(Path(folder), level, systems, siblings=siblings, parents=parents) for folder in caches]
    loaded += [load_atlas(Path(folder), level, ("previous",), "previous", siblings, parents) for folder in previous]
    if changed:
        if len(previous) != len(caches):
            raise ValueError(f"--changed needs one --previous per --cache ({len(caches)}), got {len(previous)}")
        atlases = [atlas for atlas, _ in loaded]
        for ours, earlier in zip(atlases[: len(caches)], atlases[len(caches) :]):
            only_changed(ours, earlier)
    drawn = build_items([atlas for atlas, _ in loaded], systems, level, items, seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "packet.md").write_text(packet_text(drawn), encoding="utf-8")
    (out / "verdicts.csv").write_text(verdicts_form(drawn), encoding="utf-8")
    key = key_document(drawn, [entry for _, entry in loaded], seed, level)
    (out / "key.json").write_text(json.dumps(key, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return drawn


# ---------------------------------------------------------------------------------------------------- verdicts


def read_key(path: Path) -> dict[str, Any]:
    """A packet's ``key.json``. Raises VerdictError when it is not one."""
    try:
        key = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise VerdictError(f"{path}: cannot read the key ({one_line(error)})") from error
    if not isinstance(key, dict) or key.get("kind") != KIND or not isinstance(key.get("items"), list):
        raise VerdictError(f"{path}: not a key written by bench.name_packets")
    return key


def _mark(value: str, item: int, column: str) -> int:
    text = value.strip()
    if not text.isdigit() or not 1 <= int(text) <= 5:
        shown = f"'{text}'" if text else "empty"
        raise VerdictError(f"item {item}: {column} is {shown}, not a whole number from 1 to 5")
    return int(text)


def read_verdicts(path: Path, key: dict[str, Any]) -> pd.DataFrame:
    """The verdicts of ``path`` (CSV with columns item, fit, form; other columns ignored) joined to ``key``'s items:
    columns item, fit, form, system, level, cache, id, one row per item of the key.

    Raises VerdictError (one line) for a missing column, an item the key lacks, one given twice or missing, or a mark
    that is not a whole number from 1 to 5.
    """
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise VerdictError(f"{path}: cannot read the verdicts ({one_line(error)})") from error
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise VerdictError(f"{path}: no header line (item,fit,form)")
    header = [cell.strip().lower() for cell in rows[0]]
    missing_columns = [column for column in ("item", *MARKS) if column not in header]
    if missing_columns:
        raise VerdictError(f"{path}: the header lacks {', '.join(missing_columns)} (it must be item,fit,form)")
    where = {column: header.index(column) for column in ("item", *MARKS)}
    known = {int(entry["item"]): entry for entry in key["items"]}
    seen: dict[int, dict[str, Any]] = {}
    extra: list[str] = []
    for row in rows[1:]:
        cells = row + [""] * (len(header) - len(row))
        text = cells[where["item"]].strip()
        if not text.isdigit() or int(text) not in known:
            extra.append(text or "(empty)")
            continue
        item = int(text)
        if item in seen:
            raise VerdictError(f"{path}: item {item} is given twice")
        seen[item] = {column: _mark(cells[where[column]], item, column) for column in MARKS}
    if extra:
        raise VerdictError(f"{path}: items the key does not hold: {', '.join(extra[:10])}")
    missing = sorted(set(known) - set(seen))
    if missing:
        shown = ", ".join(str(item) for item in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise VerdictError(f"{path}: {len(missing)} of the key's {len(known)} items have no verdict: {shown}")
    return pd.DataFrame(
        [
            {"item": item, **seen[item], **{k: known[item][k] for k in ("system", "level", "cache", "id")}}
            for item in sorted(seen)
        ]
    )


def mean_interval(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its Student t interval (mean +- t(confidence, n-1) s / sqrt(n)); the
    interval is nan below two values, and the mean itself when they are all equal."""
    from scipy import stats

    data = np.asarray(values, dtype=np.float64)
    if not len(data):
        return float("nan"), float("nan"), float("nan")
    mean = float(data.mean())
    if len(data) < 2:
        return mean, float("nan"), float("nan")
    half = float(stats.t.ppf(0.5 + confidence / 2, len(data) - 1)) * float(data.std(ddof=1)) / math.sqrt(len(data))
    return mean, mean - half, mean + half


def summary(verdicts: pd.DataFrame, by: Sequence[str] = ("level", "system")) -> pd.DataFrame:
    """Per group of ``by``: n, and for fit and form the mean and its 95% t interval (columns fit, fit_low, fit_high,
    form, form_low, form_high)."""
    rows = []
    for values, group in verdicts.groupby(list(by), sort=True):
        row: dict[str, Any] = dict(zip(by, values if isinstance(values, tuple) else (values,)))
        row["n"] = len(group)
        for mark in MARKS:
            row[mark], row[f"{mark}_low"], row[f"{mark}_high"] = mean_interval(group[mark])
        rows.append(row)
    return pd.DataFrame(rows)


def paired(verdicts: pd.DataFrame, other: str, reference: str = "ours") -> pd.DataFrame:
    """Per level, the mean of ``reference`` - ``other`` marks over the groups (cache, level, id) both named, with
    95% t intervals: columns level, n, fit, fit_low, fit_high, form, form_low, form_high."""
    index = ["cache", "level", "id"]
    mine = verdicts[verdicts["system"] == reference].set_index(index)[list(MARKS)]
    theirs = verdicts[verdicts["system"] == other].set_index(index)[list(MARKS)]
    both = mine.join(theirs, lsuffix="_a", rsuffix="_b", how="inner").reset_index()
    for mark in MARKS:
        both[mark] = both[f"{mark}_a"] - both[f"{mark}_b"]
    return summary(both, by=("level",)) if len(both) else pd.DataFrame()


def _interval(row: pd.Series, mark: str) -> str:
    low, high = row[f"{mark}_low"], row[f"{mark}_high"]
    shown = "" if np.isnan(low) else f"[{low:.2f}, {high:.2f}]"
    return f"{row[mark]:>6.2f} {shown:>14}"


def score_table(verdicts: pd.DataFrame) -> str:
    """The printed score: per level and system, per cache too when there are several, and the paired differences."""
    lines = [f"{'level':7} {'system':8} {'n':>4} {'fit':>6} {'95% interval':>14} {'form':>6} {'95% interval':>14}"]
    for _, row in summary(verdicts).iterrows():
        lines.append(
            f"{row['level']:7} {row['system']:8} {row['n']:>4} {_interval(row, 'fit')} {_interval(row, 'form')}"
        )
    if verdicts["cache"].nunique() > 1:
        lines.append("\nper atlas")
        for _, row in summary(verdicts, by=("cache", "level", "system")).iterrows():
            lines.append(
                f"{row['level']:7} {row['system']:8} {row['n']:>4} {_interval(row, 'fit')} {_interval(row, 'form')}"
                f"  {row['cache']}"
            )
    for other in sorted(set(verdicts["system"]) - {"ours"}):
        differences = paired(verdicts, other) if "ours" in set(verdicts["system"]) else pd.DataFrame()
        for _, row in differences.iterrows():
            lines.append(
                f"\npaired, ours - {other}, {row['level']}: n {row['n']}, fit {_interval(row, 'fit').strip()}, "
                f"form {_interval(row, 'form').strip()}"
            )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- command


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write", help="write a packet (packet.md, verdicts.csv, key.json)")
    write.add_argument("--cache", type=Path, action="append", required=True, help="an atlas (repeatable)")
    write.add_argument("--level", choices=LEVELS, required=True)
    write.add_argument("--out", type=Path, required=True, help="the packet's folder")
    write.add_argument(
        "--previous", type=Path, action="append", default=[], help="an atlas of the previous release (repeatable)"
    )
    write.add_argument("--stock", action="store_true", help="also stock BERTopic's names")
    write.add_argument("--keybert", action="store_true", help="also KeyBERTInspired + MMR's names (minutes)")
    write.add_argument("--items", type=int, default=None, help="topics (themes) per atlas, drawn at random")
    write.add_argument("--seed", type=int, default=0)
    write.add_argument("--force", action="store_true", help="replace a packet already in --out")
    write.add_argument(
        "--changed", action="store_true", help="only the groups renamed since --previous (one per --cache, in order)"
    )
    write.add_argument(
        "--siblings",
        action="store_true",
        help="list beside each topic the names of the other topics of its theme (beside a subtopic: of its topic)",
    )
    write.add_argument(
        "--parents",
        action="store_true",
        help="name the section each item sits in: a topic's theme, a subtopic's topic (the atlas's own names)",
    )
    score = commands.add_parser("score", help="score a reader's verdicts against the key")
    score.add_argument("--key", type=Path, required=True)
    score.add_argument("--verdicts", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "write":
        if args.items is not None and args.items < 1:
            parser.exit(2, "error: --items must be at least 1\n")
        systems = ["ours"] + ["previous"] * bool(args.previous) + ["stock"] * args.stock + ["keybert"] * args.keybert
        try:
            drawn = write_packet(
                args.cache,
                args.level,
                args.out,
                systems,
                args.items,
                args.seed,
                args.force,
                args.previous,
                args.changed,
                args.siblings,
                args.parents,
            )
        except (FileExistsError, ValueError) as error:
            parser.exit(2, f"error: {one_line(error)}\n")
        print(
            f"wrote {len(drawn)} items ({', '.join(systems)}; {args.level}) to {args.out}: give the reader "
            f"packet.md and verdicts.csv, keep key.json"
        )
        return
    try:
        key = read_key(args.key)
        verdicts = read_verdicts(args.verdicts, key)
    except VerdictError as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"{args.verdicts}: {len(verdicts)} verdicts, key {args.key} (seed {key.get('seed')})")
    print(score_table(verdicts))


if __name__ == "__main__":
    main()
