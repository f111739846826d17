"""Placeholder bench: how many abstracts each placeholder rule drops in real conference files, and which.

    .venv/bin/python -m bench.placeholders                 # ICLR 2024, 2025 and 2026 of ../shared/data
    .venv/bin/python -m bench.placeholders FILE [FILE ...]

For every file: records read, then per rule of :func:`pipeline.ingest.clean.placeholder_rule` the count and every
dropped abstract (id and its first 80 characters) so that a person can read them, and the fewest words of a kept
abstract (the margin above MIN_ABSTRACT_WORDS).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from pipeline.ingest.clean import _WORD, _is_empty, model_text, placeholder_rule
from pipeline.ingest.corpus import load_corpus

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEFAULT = [DATA / f"iclr{year}" / f"iclr{year}_abstracts.parquet" for year in (2024, 2025, 2026)]


def report(path: Path) -> None:
    """Print the rule counts and the dropped abstracts of one corpus file."""
    records = load_corpus(path).records
    counts: Counter[str] = Counter()
    dropped: list[tuple[str, str, str]] = []
    fewest: tuple[int, str] = (10**9, "")
    for doc_id, abstract in records[["doc_id", "abstract"]].itertuples(index=False):
        if _is_empty(abstract):
            counts["empty"] += 1
            continue
        cleaned = model_text(str(abstract))
        rule = placeholder_rule(cleaned)
        if rule is None:
            fewest = min(fewest, (len(_WORD.findall(cleaned)), doc_id))
            continue
        counts[rule] += 1
        dropped.append((rule, doc_id, cleaned[:80]))
    print(f"{path.name}: {len(records):,} records, {sum(counts.values()) - counts['empty']} placeholders")
    for rule, count in sorted(counts.items()):
        print(f"  {rule:<28} {count:>5}")
    for rule, doc_id, text in sorted(dropped):
        print(f"    [{rule}] {doc_id}: {text!r}")
    print(f"  fewest words in a kept abstract: {fewest[0]} ({fewest[1]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    for path in parser.parse_args().files:
        report(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
