"""Reading a CSV corpus: seconds of load_corpus against pd.read_csv alone, optionally against another checkout.

    .venv/bin/python -m bench.corpus_read --repeats 5
    .venv/bin/python -m bench.corpus_read --before /path/to/other/checkout   # the same file read by both, interleaved

The CSV is the whole conference (../shared/data/iclr2025/iclr2025_abstracts.parquet written with
``DataFrame.to_csv``: 21.9 MB, 11,672 records), made once in .cache/. Runs are interleaved (before, after,
pd.read_csv alone, repeated), so every reader sees the same machine load; prints each run and the median, and checks
that both checkouts read the same records.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pandas as pd

from pipeline.ingest import corpus
from pipeline.runtime.parquet import read_frame

REPO = Path(__file__).resolve().parent.parent

SOURCE = REPO.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
CSV = REPO / ".cache" / "iclr2025_abstracts.csv"


def corpus_module_of(checkout: Path) -> ModuleType:
    """``pipeline/ingest/corpus.py`` of another checkout, imported under its own name (its imports resolve here)."""
    spec = importlib.util.spec_from_file_location("corpus_before", checkout / "pipeline" / "ingest" / "corpus.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"{checkout}: no pipeline/ingest/corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_before"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--csv", type=Path, default=CSV, help=f"CSV to read (default: {CSV}, made from {SOURCE})")
    parser.add_argument("--before", type=Path, help="another checkout whose load_corpus to time against this one")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not args.csv.is_file():
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        read_frame(SOURCE).to_csv(args.csv, index=False)
    text = args.csv.read_text(encoding="utf-8")
    readers: dict[str, Callable[[], object]] = {}
    before = corpus_module_of(args.before) if args.before else None
    if before is not None:
        readers["before: load_corpus"] = lambda: before.load_corpus(args.csv)
    readers["load_corpus"] = lambda: corpus.load_corpus(args.csv)
    readers["pd.read_csv alone"] = lambda: pd.read_csv(
        io.StringIO(text), dtype=str, keep_default_na=True, na_values=["NaN", "nan"]
    )
    seconds: dict[str, list[float]] = {name: [] for name in readers}
    for _ in range(args.repeats):
        for name, read in readers.items():
            start = time.perf_counter()
            read()
            seconds[name].append(time.perf_counter() - start)
    print(f"{args.csv} ({args.csv.stat().st_size / 1e6:.1f} MB)")
    for name, runs in seconds.items():
        print(f"  {name:20s} " + " ".join(f"{run:.2f}" for run in runs) + f" s (median {statistics.median(runs):.2f})")
    if before is not None:
        same = before.load_corpus(args.csv).records.astype(str).equals(corpus.load_corpus(args.csv).records.astype(str))
        print(f"  same records: {same}")


if __name__ == "__main__":
    main()
