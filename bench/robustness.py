"""Robustness bench: every bad-input case of ../shared/cases and a set of generated corpora through the real
command line, one line per case, then ``N passed, M failed``.

    .venv/bin/python bench/robustness.py                      # the product's default encoder
    .venv/bin/python bench/robustness.py --embedding-model all-MiniLM-L6-v2-static

Each case runs ``python -m topic_atlas build`` in a subprocess, as a user would, and is checked for what every run
must do (exit code 0 or 2, never a traceback; on 0 a readable cache in which every input record is a document or
counted as dropped; on 2 one ``error:`` line and no cache left behind) and for what its case.md expects.
A case passes when every check holds; the line says which one failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent

from pipeline import cache  # noqa: E402

CASES = ROOT.parent / "shared" / "cases"
SEED = ROOT / "data" / "sample" / "iclr2025_seed_abstracts.txt"


@dataclass
class Run:
    """What one build did: exit code, output, and the cache when one was written."""

    code: int
    stdout: str
    stderr: str
    cache_dir: Path
    seconds: float
    atlas: cache.TopicCache | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def last_error(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


@dataclass
class Case:
    """A corpus file, extra build options, and the checks its case.md asks for."""

    name: str
    path: Path
    checks: list[tuple[str, Callable[[Run], bool]]] = field(default_factory=list)
    options: tuple[str, ...] = ()


def build(path: Path, folder: Path, options: tuple[str, ...], model: str | None) -> Run:
    """``python -m topic_atlas build`` on ``path`` into ``folder/cache``; reads the cache when the build succeeded."""
    target = folder / "cache"
    command = [sys.executable, "-m", "topic_atlas", "build", "--input", str(path), "--cache", str(target), *options]
    if model:
        command += ["--embedding-model", model]
    start = time.perf_counter()
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=900, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    run = Run(result.returncode, result.stdout, result.stderr, target, time.perf_counter() - start)
    if run.code == 0:
        run.atlas = cache.read_cache(target)
    return run


def common_checks(run: Run) -> list[tuple[str, bool]]:
    """What every build must do, whatever its input."""
    checks = [("exit code 0 or 2", run.code in (0, 2)), ("no traceback", "Traceback" not in run.output)]
    if run.code == 0 and run.atlas is not None:
        manifest = run.atlas.manifest
        accounted = manifest["n_documents"] + sum(manifest["dropped"].values())
        checks.append(("every record a document or dropped", accounted == manifest["input_records"]))
        checks.append(("finite map", bool(run.atlas.documents[["x", "y"]].notna().all().all())))
        checks.append(
            (
                "labels non-empty and unique",
                run.atlas.topics["label"].map(lambda label: bool(str(label).strip())).all()
                and run.atlas.topics["label"].is_unique,
            )
        )
    elif run.code == 2:
        checks.append(("one error line", run.last_error.startswith("error: ") and "unexpected" not in run.last_error))
        checks.append(("no cache left", not run.cache_dir.exists()))
    return checks


def documents(run: Run) -> pd.DataFrame:
    return run.atlas.documents if run.atlas is not None else pd.DataFrame(columns=["doc_id", "topic"])


# Builds a later check compares with (case 19: the CSV's cache must equal the JSONL's).
_RUNS: dict[str, Run] = {}
PLACEHOLDERS_19 = {
    "3wde105NL2", "rsCm0f85C7", "xTJW1gVgGK", "XknlDPufux", "6fJhYSYMgz",
    "soE7uW7HMq", "sc5txupZll", "CHwweyjn5z", "VSqArDmjIq", "zGznH3w5tT",
}  # fmt: skip
MARKUP = re.compile(r"\\[a-zA-Z]|\]\(|&[a-z]+;|&#\d+;|</?[a-z]+>|\balign\*|\bbegin\b|^abstract$")


def _remember(name: str, run: Run) -> bool:
    _RUNS[name] = run
    return run.code == 0


def _markup_free(run: Run) -> bool:
    """No LaTeX, Markdown or HTML syntax among the topic terms, labels and theme labels."""
    assert run.atlas is not None
    topics = run.atlas.topics
    words = [str(label) for label in topics["label"]] + [str(label) for label in topics.get("theme_label", [])]
    for terms in topics["top_terms"]:
        words += [str(term["term"] if isinstance(term, dict) else term[0]) for term in terms]
    return not [word for word in words if MARKUP.search(word) or word.casefold() in {"abstract", "align", "emph"}]


def _same_cache(run: Run, name: str) -> bool:
    """The cache of ``run`` equals the remembered build ``name``: documents (but the input row number) and topics."""
    other = _RUNS[name].atlas
    assert run.atlas is not None and other is not None
    for mine, theirs in ((run.atlas.documents, other.documents), (run.atlas.topics, other.topics)):
        pd.testing.assert_frame_equal(
            mine.drop(columns="record", errors="ignore"), theirs.drop(columns="record", errors="ignore")
        )
    return run.atlas.manifest["dropped_ids"] == other.manifest["dropped_ids"]


def shared_cases() -> list[Case]:
    """The cases of ../shared/cases with the checks of their case.md (section 5)."""
    c = CASES
    built = ("exit code 0", lambda run: run.code == 0)
    refused = ("refused (exit code 2)", lambda run: run.code == 2)
    kept_04 = {"p01", "p02", "p04", "p06", "p08", "p10", "p11", "p12"}
    return [
        Case(
            "01 five abstracts",
            c / "01-tiny-corpus" / "abstracts_5.txt",
            [
                built,
                ("5 documents", lambda run: len(documents(run)) == 5),
                (
                    "adapted n_neighbors recorded",
                    lambda run: run.code == 0 and run.atlas.manifest["params"]["umap_n_neighbors"] <= 4,
                ),
            ],
        ),
        Case(
            "01 one abstract",
            c / "01-tiny-corpus" / "abstract_1.txt",
            [("one document or refused", lambda run: run.code == 2 or len(documents(run)) == 1)],
        ),
        Case(
            "02 all outliers (min_topic_size 15)",
            c / "02-all-outliers" / "abstracts.jsonl",
            [
                built,
                ("24 outliers", lambda run: set(documents(run)["topic"]) == {-1} and len(documents(run)) == 24),
                (
                    "says no topics, 24, outliers",
                    lambda run: "No topics found" in run.output and "24" in run.output and "outlier" in run.output,
                ),
            ],
            ("--min-cluster-size", "15"),
        ),
        Case(
            "02 unrelated abstracts (defaults)",
            c / "02-all-outliers" / "abstracts.jsonl",
            [built, ("no or very few topics", lambda run: run.code == 0 and run.atlas.manifest["n_topics"] <= 1)],
        ),
        Case(
            "03 only stop words",
            c / "03-stopword-only-vocabulary" / "all_stopwords.csv",
            [refused, ("names stop words and 6", lambda run: "stop word" in run.last_error and "6" in run.last_error)],
        ),
        Case(
            "03 some stop-word rows",
            c / "03-stopword-only-vocabulary" / "some_stopwords.csv",
            [
                built,
                (
                    "s1-s6 reported",
                    lambda run: sorted(run.atlas.manifest["no_content_word_ids"]) == [f"s{i}" for i in range(1, 7)],
                ),
                (
                    "no id-and-underscore labels",
                    lambda run: not run.atlas.topics["label"].str.match(r"^-?\d+_*$").any(),
                ),
            ],
        ),
        Case(
            "04 empty/NaN rows (CSV)",
            c / "04-empty-nan-rows" / "papers.csv",
            [
                built,
                ("kept ids", lambda run: set(documents(run)["doc_id"]) == kept_04),
                (
                    "dropped listed",
                    lambda run: (
                        {i for ids in run.atlas.manifest["dropped_ids"].values() for i in ids}
                        == {"p03", "p05", "p07", "p09"}
                    ),
                ),
            ],
        ),
        Case(
            "04 empty/NaN rows (JSON)",
            c / "04-empty-nan-rows" / "papers.json",
            [built, ("kept ids", lambda run: set(documents(run)["doc_id"]) == kept_04)],
        ),
        Case(
            "14 multiline CSV",
            c / "14-csv-multiline-bad-quotes" / "good_multiline.csv",
            [built, ("p1-p4", lambda run: sorted(documents(run)["doc_id"]) == ["p1", "p2", "p3", "p4"])],
        ),
        Case(
            "14 unclosed quote",
            c / "14-csv-multiline-bad-quotes" / "bad_quote.csv",
            [
                refused,
                (
                    "line 4, quote, records read of expected",
                    lambda run: (
                        "line 4" in run.last_error
                        and "quote" in run.last_error
                        and "2 records were read" in run.last_error
                        and "5" in run.last_error
                    ),
                ),
            ],
        ),
        Case(
            "15 UTF-8 with BOM",
            c / "15-encoding-bom-cp1252" / "bom_utf8.csv",
            [
                built,
                (
                    "4 documents, no BOM",
                    lambda run: (
                        len(documents(run)) == 4 and not documents(run)["abstract"].str.startswith("\ufeff").any()
                    ),
                ),
            ],
        ),
        Case(
            "15 Windows-1252",
            c / "15-encoding-bom-cp1252" / "cp1252.csv",
            [
                built,
                (
                    "encoding named, no mojibake",
                    lambda run: "windows-1252" in run.output and not documents(run)["abstract"].str.contains("Ã").any(),
                ),
            ],
        ),
        Case(
            "15 Latin-1 text",
            c / "15-encoding-bom-cp1252" / "latin1_abstracts.txt",
            [
                built,
                (
                    "3 documents, no mojibake",
                    lambda run: len(documents(run)) == 3 and not documents(run)["abstract"].str.contains("Ã").any(),
                ),
            ],
        ),
        Case(
            "19 real placeholders and markup (JSONL)",
            c / "19-placeholders-and-latex-from-real-venues" / "papers.jsonl",
            [
                ("exit code 0", lambda run: _remember("19", run)),
                (
                    "10 placeholders dropped and listed",
                    lambda run: (
                        set(run.atlas.manifest["dropped_ids"].get("placeholder, not an abstract", []))
                        == PLACEHOLDERS_19
                        and run.atlas.manifest["dropped"].get("placeholder, not an abstract") == 10
                    ),
                ),
                ("no markup among terms or labels", _markup_free),
            ],
        ),
        Case(
            "19 the same records (CSV)",
            c / "19-placeholders-and-latex-from-real-venues" / "papers.csv",
            [built, ("cache identical to the JSONL's", lambda run: _same_cache(run, "19"))],
        ),
    ]


def seed_paragraphs() -> list[str]:
    return [paragraph.strip() for paragraph in SEED.read_text(encoding="utf-8").split("\n\n")[1:] if paragraph.strip()]


def generated_cases(folder: Path) -> list[Case]:
    """Corpora made here from the bundled seed abstracts: the bad input of issue 13 in its plain form."""
    seed = seed_paragraphs()
    cases: list[Case] = []

    def jsonl(name: str, records: list[dict]) -> Path:
        path = folder / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(record, ensure_ascii=False) for record in records), encoding="utf-8")
        return path

    mixed = [{"id": f"m{i}", "title": f"Paper {i}", "abstract": seed[i % len(seed)]} for i in range(19)]
    mixed += [
        {"id": "copy1", "title": "Renamed", "abstract": seed[0]},
        {"id": "empty1", "title": "x", "abstract": ""},
        {"id": "wd1", "title": "y", "abstract": "We have withdrawn our paper."},
        {
            "id": "zh1",
            "title": "z",
            "abstract": "我们提出了一种新的图神经网络方法用于分子性质预测，并在多个数据集上验证了其有效性。",
        },
        {"id": "long1", "title": "w", "abstract": " ".join(seed * 3)},
    ]
    cases.append(
        Case(
            "generated: 24 mixed rows",
            jsonl("mixed", mixed),
            [
                ("exit code 0", lambda run: run.code == 0),
                ("copy listed", lambda run: run.code == 0 and run.atlas.copies["doc_id"].tolist() == ["copy1"]),
                (
                    "placeholder dropped",
                    lambda run: (
                        run.code == 0
                        and run.atlas.manifest["dropped_ids"].get("placeholder, not an abstract") == ["wd1"]
                    ),
                ),
                ("language counted", lambda run: run.code == 0 and run.atlas.manifest["languages"].get("zh") == 1),
                ("long abstract named", lambda run: "long1" in run.output),
            ],
        )
    )
    cases.append(
        Case(
            "generated: one abstract 8 times",
            jsonl("identical", [{"id": f"i{i}", "title": f"T{i}", "abstract": seed[2]} for i in range(8)]),
            [
                ("refused (exit code 2)", lambda run: run.code == 2),
                ("says same abstract", lambda run: "same abstract" in run.last_error),
            ],
        )
    )
    cases.append(
        Case(
            "generated: only empty rows",
            jsonl("empty", [{"id": f"e{i}", "abstract": value} for i, value in enumerate(["", " ", None, "NaN"])]),
            [
                ("refused (exit code 2)", lambda run: run.code == 2),
                ("no usable abstracts", lambda run: "no usable abstracts" in run.last_error),
            ],
        )
    )
    cases.append(
        Case(
            "generated: 60 rows of one sentence each",
            jsonl(
                "sentences",
                [
                    {"id": f"s{i}", "abstract": sentence}
                    for i, sentence in enumerate(
                        sentence for paragraph in seed for sentence in paragraph.split(". ")[:4] if len(sentence) > 30
                    )
                ][:60],
            ),
            [("exit code 0", lambda run: run.code == 0)],
        )
    )
    figure = folder / "figure.json"
    figure.write_text(
        json.dumps(
            {
                "data": [{"type": "scatter", "x": [1, 2], "y": [2, 1], "name": "Topics"}],
                "layout": {"title": {"text": "map"}},
            }
        ),
        encoding="utf-8",
    )
    cases.append(
        Case(
            "generated: a plotly figure's JSON",
            figure,
            [
                ("refused (exit code 2)", lambda run: run.code == 2),
                ("says plotly figure", lambda run: "plotly figure" in run.last_error),
            ],
        )
    )
    short_first = folder / "short_first.txt"
    short_first.write_text("We study reef flats.\n\n" + "\n\n".join(seed[:6]), encoding="utf-8")
    cases.append(
        Case(
            "generated: short first abstract in a text file",
            short_first,
            [("exit code 0", lambda run: run.code == 0), ("7 documents", lambda run: len(documents(run)) == 7)],
        )
    )
    ids = [{"id": f"doc{i:06d}", "abstract": seed[i]} for i in range(8)]
    cases.append(
        Case(
            "generated: ids that are not OpenReview ids",
            jsonl("ids", ids),
            [
                ("exit code 0", lambda run: run.code == 0),
                ("no OpenReview links", lambda run: run.code == 0 and not _links(run)),
            ],
        )
    )
    return cases


def _links(run: Run) -> bool:
    from dashboard.tables.paper_table import links_enabled

    return links_enabled(run.atlas.manifest, run.atlas.documents)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--embedding-model", default=None, help="encoder for every build (default: the product's default)"
    )
    parser.add_argument("--only", default=None, help="run only the cases whose name contains this text")
    args = parser.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="atlas-robustness-") as scratch:
        cases = (shared_cases() if CASES.is_dir() else []) + generated_cases(Path(scratch))
        cases = [case for case in cases if args.only is None or args.only in case.name]
        for number, case in enumerate(cases):
            folder = Path(scratch) / f"run{number}"
            folder.mkdir()
            run = build(case.path, folder, case.options, args.embedding_model)
            results = common_checks(run)
            for name, check in case.checks:
                try:
                    results.append((name, bool(check(run))))
                except Exception as error:  # a check that cannot even run is a failed check
                    results.append((f"{name} ({type(error).__name__}: {error})", False))
            failures = [name for name, ok in results if not ok]
            passed, failed = passed + (not failures), failed + bool(failures)
            outcome = f"exit {run.code}, {len(documents(run))} documents" + (
                f", {run.atlas.manifest['n_topics']} topics" if run.atlas is not None else f": {run.last_error[:120]}"
            )
            print(
                f"{'PASS' if not failures else 'FAIL'} {case.name} ({run.seconds:.1f} s; {outcome})"
                + (f" failed: {'; '.join(failures)}" if failures else ""),
                flush=True,
            )
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
