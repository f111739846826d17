"""Compare two cache folders file by file: are they the same atlas?

``python bench/compare_caches.py BEFORE AFTER`` prints one line per file: "identical", or what differs (rows,
columns, the first differing column and how many cells differ; for arrays the largest absolute difference). The
manifest is compared without what a build cannot repeat (its date, timings, peak memory, versions, paths). Exit
code 0 when every compared file is identical, 1 otherwise. Used to check that a change of code layout changed no
result (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from pipeline.runtime.parquet import read_frame

# Manifest keys that record the run rather than the result.
RUN_KEYS = {
    "created",
    "created_at",
    "timings_s",
    "cpu_s",
    "peak_rss_mb",
    "versions",
    "input_path",
    "cache_dir",
    "layout_cache",
    "embedding_cache",
    "build_seconds",
    "python",
}


def compare_tables(before: Path, after: Path) -> str:
    """ "identical" or a one-line description of how two Parquet files differ."""
    left, right = read_frame(before), read_frame(after)
    if list(left.columns) != list(right.columns):
        return (
            f"columns differ: only before {sorted(set(left.columns) - set(right.columns))}, "
            f"only after {sorted(set(right.columns) - set(left.columns))}"
        )
    if len(left) != len(right):
        return f"rows differ: {len(left)} vs {len(right)}"
    for column in left.columns:
        a = left[column].map(lambda v: tuple(v) if isinstance(v, (list, np.ndarray)) else v)
        b = right[column].map(lambda v: tuple(v) if isinstance(v, (list, np.ndarray)) else v)
        same = (a == b) | (a.isna() & b.isna())
        if not same.all():
            return f"column {column!r}: {int((~same).sum())} of {len(a)} cells differ"
    return "identical"


def compare_arrays(before: Path, after: Path) -> str:
    """ "identical" or the shapes / largest absolute difference of two .npy files."""
    left, right = np.load(before), np.load(after)
    if left.shape != right.shape:
        return f"shapes differ: {left.shape} vs {right.shape}"
    if np.array_equal(left, right):
        return "identical"
    return f"values differ: max |difference| {np.max(np.abs(left.astype(float) - right.astype(float))):.3g}"


# Manifest entries that hold a run's seconds inside a result (the fit check's own timing).
RUN_SUBKEYS = {"fit_check": "seconds"}


def compare_json(before: Path, after: Path, ignore: set[str]) -> str:
    """ "identical" or the top-level keys whose values differ, ``ignore`` and RUN_SUBKEYS left out."""
    left, right = json.loads(before.read_text()), json.loads(after.read_text())
    if isinstance(left, dict) and isinstance(right, dict):
        for key, subkey in RUN_SUBKEYS.items():
            for side in (left, right):
                if isinstance(side.get(key), dict):
                    side[key] = {name: value for name, value in side[key].items() if name != subkey}
        keys = sorted((set(left) | set(right)) - ignore)
        differing = [key for key in keys if left.get(key) != right.get(key)]
        return "identical" if not differing else f"keys differ: {differing}"
    return "identical" if left == right else "differs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    files = sorted(
        {p.relative_to(args.before) for p in args.before.rglob("*") if p.is_file()}
        | {p.relative_to(args.after) for p in args.after.rglob("*") if p.is_file()}
    )
    all_same = True
    for name in files:
        a, b = args.before / name, args.after / name
        if not a.exists() or not b.exists():
            verdict = "only in " + ("after" if b.exists() else "before")
        elif name.suffix == ".parquet":
            verdict = compare_tables(a, b)
        elif name.suffix == ".npy":
            verdict = compare_arrays(a, b)
        elif name.name == "manifest.json":
            verdict = compare_json(a, b, RUN_KEYS)
        else:
            verdict = "identical" if a.read_bytes() == b.read_bytes() else "bytes differ"
        all_same &= verdict == "identical"
        print(f"{str(name):45s} {verdict}")
    print("SAME ATLAS" if all_same else "DIFFERENT")
    return 0 if all_same else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without the interpreter's teardown: pyarrow's parquet thread pools, torn down at exit, now and then abort
    # the process ("terminate called without an active exception", SIGABRT; apache/arrow#34314), which once turned
    # a printed verdict into exit code -6.
    os._exit(code)
