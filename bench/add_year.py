"""A new year arrives: ICLR 2026 added to an atlas of ICLR 2024-2025 without a refit, against a full refit.

    python -m bench.add_year                      # build 2024-2025, add 2026 to a copy, refit 2024-2026 into a copy
    python -m bench.add_year --steps add          # only the add again (the builds' folders and times are kept)
    python -m bench.add_year --reuse              # the folders of an earlier run, their recorded times; tables only
    python -m bench.add_year --rules              # also: candidate topics under other misfit rules
    python -m bench.add_year --base B.toml --new N.toml --all A.toml   # other collection files (a small smoke run)

Three child processes of the command line, each timed (wall, CPU, peak RSS from os.wait4):

1. ``topic-atlas build --collections data/collections/iclr-2024-2025.toml`` into WORK/base (19,0xx papers);
2. a copy of it, then ``topic-atlas add --collections data/collections/iclr-2026.toml`` (17,106 records);
3. another copy, then ``topic-atlas build --collections data/collections/iclr-2024-2026.toml`` into it: the refit,
   aligned to the 2024-2025 atlas (pipeline.topics.align), so its topic ids are the base's where topics match.

Builds share the layout store beside ``--embedding-cache`` (pipeline.store.layouts), so a second run is warm; the
table says how many of a build's stored stages were reused. Then, for the ICLR 2026 papers (matched across the two
atlases by id): how many the add placed into topics, how many fit no topic, the candidate new topics (size, name);
the agreement of the add's topics with the refit's (ARI and AMI, scikit-learn; and the share with the same topic
id); and per candidate its best-matching refit topic (the refit topic holding most of its papers: precision = that
share, Jaccard against that topic's 2026 papers) and whether that topic is *new*: not matched to a 2024-2025 topic
(lineage status "new"; "split" or "merged" count as matched), or *new in 2026* (issue 22's "what is new in 2026"):
mostly 2026 papers (at least MOSTLY_2026 of them) or its share of 2026's papers at least twice its share of
2025's. Recall: the new refit topics that some candidate found (its best match, with precision at least
FOUND_PRECISION), of all new ones and of those new in 2026.

``--base``, ``--new`` and ``--all`` name other collection files for the three runs (default the three above); the
tables need the new collection named "ICLR 2026" and the previous one "ICLR 2025" (the test suite's smoke run gives
them small slices of the same conferences).

``--rules`` recomputes the candidates (pipeline.topics.candidates.group_flagged on the stored vectors, no names)
under other rules for which added papers to group (bench/add_year_rules.py) and prints the same figures per rule.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.build import run_child
from pipeline.cache import OUTLIER_TOPIC, TopicCache, read_cache
from pipeline.runtime.paths import PROJECT_ROOT

BASE = PROJECT_ROOT / "data" / "collections" / "iclr-2024-2025.toml"
NEW = PROJECT_ROOT / "data" / "collections" / "iclr-2026.toml"
ALL = PROJECT_ROOT / "data" / "collections" / "iclr-2024-2026.toml"
NEW_NAME, PREVIOUS_NAME = "ICLR 2026", "ICLR 2025"
MOSTLY_2026 = 2 / 3
SHARE_RATIO = 2.0
FOUND_PRECISION = 0.5


def child(command: list[str], log: Path) -> dict[str, Any]:
    """One command-line run (run_child of bench/build.py): wall, cpu, rss_mb."""
    return run_child([sys.executable, "-m", "topic_atlas", *command], dict(os.environ), log)


STEPS = ("build", "add", "refit")
RUN_NAMES = {"build": "build 2024-2025", "add": "add 2026", "refit": "refit 2024-2026"}


def run_steps(
    work: Path, store: Path, steps: tuple[str, ...] = STEPS, files: tuple[Path, Path, Path] = (BASE, NEW, ALL)
) -> dict[str, dict[str, Any]]:
    """The runs of the module docstring named in ``steps``, into WORK/base, WORK/added, WORK/refit (a step not run
    keeps its folder and record: the add and the refit need WORK/base), from the collection files ``files`` (base,
    new, all). Each run's usage, date, load average and commit go to WORK/runs.json, which is returned."""
    base, new, every = files
    work.mkdir(parents=True, exist_ok=True)
    path = work / "runs.json"
    runs: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    store_args = ["--embedding-cache", str(store)]
    commands = {
        "build": (["build", "--collections", str(base), "--cache", str(work / "base"), *store_args], "base"),
        "add": (["add", "--cache", str(work / "added"), "--collections", str(new)], "added"),
        "refit": (["build", "--collections", str(every), "--cache", str(work / "refit"), *store_args], "refit"),
    }
    for step in STEPS:
        if step not in steps:
            continue
        command, folder = commands[step]
        shutil.rmtree(work / folder, ignore_errors=True)
        if step != "build":
            shutil.copytree(work / "base", work / folder)
        print(f"{RUN_NAMES[step]} ...", flush=True)
        usage = child(command, work / f"{folder}.log")
        runs[RUN_NAMES[step]] = {
            **usage,
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "load": [round(value, 1) for value in os.getloadavg()],
            "commit": commit(),
        }
        path.write_text(json.dumps(runs, indent=2), encoding="utf-8")
    return runs


def commit() -> str:
    """The checkout's short commit, with "+dirty" when its tracked files differ from it."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=PROJECT_ROOT).returncode != 0
    return head.stdout.strip() + ("+dirty" if dirty else "")


def usage_table(runs: dict[str, dict[str, Any]], work: Path) -> pd.DataFrame:
    """Per run: wall and CPU seconds, peak RSS, for builds how many stored stages the layout store gave back, and
    when, at which commit and load average (1, 5, 15 min) it ran."""
    rows = []
    folders = {name: folder for name, folder in zip(RUN_NAMES.values(), ("base", "added", "refit"))}
    for name in RUN_NAMES.values():
        if name not in runs:
            continue
        usage = runs[name]
        manifest = read_cache(work / folders[name]).manifest
        hits = manifest.get("layout_cache", {}).get("hits", {}) if name != "add 2026" else {}
        rows.append(
            {
                "run": name,
                "papers after": manifest["n_documents"],
                "wall s": round(usage["wall"], 1),
                "CPU s": round(usage["cpu"], 1),
                "peak RSS MiB": round(usage["rss_mb"]),
                "stored stages reused": f"{sum(bool(hit) for hit in hits.values())} of {len(hits)}" if hits else "",
                "when": usage.get("date", ""),
                "commit": usage.get("commit", ""),
                "load": "/".join(str(value) for value in usage.get("load", [])),
            }
        )
    return pd.DataFrame(rows)


def bare_id(doc_id: str) -> str:
    """An id without the collection prefix a build or an add gives an id found in two collections."""
    return doc_id.split(":", 1)[1] if doc_id.startswith("iclr2026:") else doc_id


def matched_topics(added: TopicCache, refit: TopicCache) -> pd.DataFrame:
    """The ICLR 2026 papers of both atlases, matched by id: doc_id, add_topic, refit_topic."""
    ours = added.documents[added.documents["collection"] == NEW_NAME]
    theirs = refit.documents[refit.documents["collection"] == NEW_NAME]
    left = pd.DataFrame({"doc_id": ours["doc_id"].map(bare_id), "add_topic": ours["topic"].astype(int)})
    right = pd.DataFrame({"doc_id": theirs["doc_id"].map(bare_id), "refit_topic": theirs["topic"].astype(int)})
    return left.merge(right, on="doc_id", how="inner")


def new_refit_topics(refit: TopicCache) -> pd.DataFrame:
    """Per refit topic (outliers excluded): its label, size, lineage status, share of 2026 papers, the ratio of its
    share of 2026's papers to its share of 2025's, and whether it is new (module docstring)."""
    documents = refit.documents
    status = {int(entry["topic"]): entry["status"] for entry in refit.manifest.get("lineage", {}).get("topics", [])}
    counts = pd.crosstab(documents["topic"], documents["collection"])
    totals = documents["collection"].value_counts()
    table = refit.topics[refit.topics["topic"] != OUTLIER_TOPIC][["topic", "label", "size"]].copy()
    table["status"] = table["topic"].map(status).fillna("?")
    of = counts.reindex(table["topic"]).fillna(0)
    table["share_2026"] = (of[NEW_NAME] / of.sum(axis=1)).round(3).to_numpy()
    share_new = of[NEW_NAME] / totals[NEW_NAME]
    share_old = of[PREVIOUS_NAME] / totals[PREVIOUS_NAME]
    table["ratio_2026_2025"] = (share_new / share_old.replace(0, np.nan)).round(2).to_numpy()
    table["new in 2026"] = (table["share_2026"] >= MOSTLY_2026) | (
        table["ratio_2026_2025"].fillna(np.inf) >= SHARE_RATIO
    )
    table["new"] = (table["status"] == "new") | table["new in 2026"]
    return table.reset_index(drop=True)


def candidate_matches(groups: dict[int, list[str]], matched: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """Per candidate (``groups``: {candidate: its papers' bare ids}): size, best refit topic, precision, Jaccard
    against that topic's 2026 papers, and whether that topic is new (``topics``: :func:`new_refit_topics`)."""
    refit_of = matched.set_index("doc_id")["refit_topic"]
    members_of = matched.groupby("refit_topic")["doc_id"].apply(set)
    new = topics.set_index("topic")["new"]
    labels = topics.set_index("topic")["label"]
    rows = []
    for candidate, ids in groups.items():
        found = refit_of.reindex(ids).dropna().astype(int)
        counts = found.value_counts()
        best = int(counts.index[0]) if len(counts) else OUTLIER_TOPIC
        overlap = int(counts.iloc[0]) if len(counts) else 0
        union = len(set(ids) | members_of.get(best, set()))
        rows.append(
            {
                "candidate": candidate,
                "size": len(ids),
                "best refit topic": f"{best} {labels.get(best, 'Outliers')}"[:48],
                "precision": round(overlap / max(len(ids), 1), 2),
                "jaccard": round(overlap / max(union, 1), 2),
                "refit topic new": bool(new.get(best, False)),
            }
        )
    return pd.DataFrame(rows)


def recall(matches: pd.DataFrame, topics: pd.DataFrame, column: str = "new") -> tuple[int, int]:
    """(new refit topics some candidate found, new refit topics): found = a candidate's best match with precision at
    least FOUND_PRECISION; new by ``column`` of ``topics`` ("new", or "new in 2026": issue 22's definition)."""
    new_ids = set(topics.loc[topics[column], "topic"].astype(int))
    if matches.empty:
        return 0, len(new_ids)
    found = {
        int(str(best).split(" ")[0])
        for best, precision in zip(matches["best refit topic"], matches["precision"])
        if precision >= FOUND_PRECISION
    }
    return len(found & new_ids), len(new_ids)


def agreement(matched: pd.DataFrame) -> dict[str, float]:
    """ARI and AMI of the add's topics against the refit's over the matched 2026 papers, and the share with the same
    topic id (the refit is aligned to the base, so a kept topic has the same id)."""
    from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

    return {
        "ARI": round(float(adjusted_rand_score(matched["refit_topic"], matched["add_topic"])), 3),
        "AMI": round(float(adjusted_mutual_info_score(matched["refit_topic"], matched["add_topic"])), 3),
        "same topic id": round(float((matched["refit_topic"] == matched["add_topic"]).mean()), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=PROJECT_ROOT / ".cache" / "bench-add-year")
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=Path(os.environ.get("ATLAS_EMBEDDING_CACHE", PROJECT_ROOT / ".cache" / "embeddings.sqlite")),
    )
    parser.add_argument(
        "--steps",
        default=",".join(STEPS),
        help="runs to do (build, add, refit; default all); the others keep their folders and recorded times",
    )
    parser.add_argument("--reuse", action="store_true", help="run nothing: the tables from WORK's atlases")
    parser.add_argument("--rules", action="store_true", help="also compare rules for the candidates' papers")
    parser.add_argument("--base", type=Path, default=BASE, help="collection file of the base atlas (ICLR 2024-2025)")
    parser.add_argument("--new", type=Path, default=NEW, help="collection file of the year added (ICLR 2026)")
    parser.add_argument("--all", type=Path, default=ALL, help="collection file of the refit (ICLR 2024-2026)")
    args = parser.parse_args(argv)
    steps = () if args.reuse else tuple(step.strip() for step in args.steps.split(",") if step.strip())
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown steps {unknown}; choose from {', '.join(STEPS)}")
    runs = run_steps(args.work, args.embedding_cache, steps, (args.base, args.new, args.all))
    pd.set_option("display.width", 250, "display.max_columns", 20, "display.max_colwidth", 60)
    print(usage_table(runs, args.work).to_string(index=False))
    report(args.work, args.rules)
    return 0


def report(work: Path, rules: bool) -> None:
    """The tables of the module docstring, from WORK/added and WORK/refit."""
    added, refit = read_cache(work / "added"), read_cache(work / "refit")
    entry = added.manifest["add_history"][-1]
    matched = matched_topics(added, refit)
    topics = new_refit_topics(refit)
    candidates = added.candidates
    rule = entry["candidates"]
    print(
        f"\nICLR 2026: {entry['n_added']} papers added; {entry['n_in_topics']} placed into topics, "
        f"{entry['n_added'] - entry['n_in_topics']} among outliers; {entry['n_misfits']} fit no topic "
        f"(threshold {entry['fit_threshold']}), {rule.get('n_new_territory', '?')} in new territory; "
        f"{len(candidates)} candidate topics holding {rule['n_papers']} papers (min size {rule['min_size']}); "
        f"refit due: {entry['refit_due']}"
    )
    for reason in entry["refit_reasons"]:
        print(f"  - {reason}")
    print(f"matched 2026 papers: {len(matched)}; agreement with the refit: {agreement(matched)}")
    status_new = int((topics["status"] == "new").sum())
    print(
        f"refit topics: {len(topics)}, new {int(topics['new'].sum())} (status new {status_new}"
        f", mostly 2026 {int((topics['share_2026'] >= MOSTLY_2026).sum())}, 2026 share >= {SHARE_RATIO:g}x 2025's "
        f"{int((topics['ratio_2026_2025'] >= SHARE_RATIO).sum())})"
    )
    print(topics[topics["new"]].to_string(index=False))
    groups = {int(row.candidate): [bare_id(doc_id) for doc_id in row.doc_ids] for row in candidates.itertuples()}
    matches = candidate_matches(groups, matched, topics)
    if len(matches):
        matches.insert(1, "name", candidates["label"].str.slice(0, 40).to_numpy())
        matches.insert(3, "nearest topic sim", candidates["nearest_similarity"].round(2).to_numpy())
    print(matches.to_string(index=False))
    found, total = recall(matches, topics)
    found_2026, total_2026 = recall(matches, topics, "new in 2026")
    print(
        f"recall: {found} of {total} new refit topics found by a candidate (precision >= {FOUND_PRECISION}); "
        f"{found_2026} of the {total_2026} new in 2026 (mostly 2026 papers, or share doubled)"
    )
    if rules:
        from bench.add_year_rules import rules_table

        print(rules_table(added, matched, topics).to_string(index=False))


if __name__ == "__main__":
    raise SystemExit(main())
