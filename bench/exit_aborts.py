"""How often a process that read a cache's Parquet tables aborts at exit, by the way it read them.

    python -m bench.exit_aborts --cache /tmp/atlas [--runs 200] [--parallel 4]

Starts ``--runs`` fresh Python processes per reader, ``--parallel`` at a time (a busy machine is where Arrow's
late threads meet the interpreter's finalization), each reading the cache's documents and topics tables and
exiting. Prints, per reader, how many exited 0 and how many ended otherwise, with their exit codes. The readers:
``pandas.read_parquet`` (Python file objects handed to Arrow) and the project's ``read_frame``
(pipeline/runtime/parquet.py: Arrow opens the path).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

READERS = {
    "pandas.read_parquet": "import sys, pandas as pd\nfor name in sys.argv[1:]: pd.read_parquet(name)",
    "read_frame": (
        "import sys\nfrom pipeline.runtime.parquet import read_frame\nfor name in sys.argv[1:]: read_frame(name)"
    ),
}


def exit_codes(program: str, files: list[Path], runs: int, parallel: int) -> Counter[int]:
    """The exit codes of ``runs`` processes running ``program`` over ``files``, ``parallel`` at a time."""

    def one(_: int) -> int:
        return subprocess.run(
            [sys.executable, "-c", program, *map(str, files)], capture_output=True, check=False
        ).returncode

    with ThreadPoolExecutor(parallel) as pool:
        return Counter(pool.map(one, range(runs)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="a cache folder (documents.parquet, topics.parquet)")
    parser.add_argument("--runs", type=int, default=200, help="processes per reader")
    parser.add_argument("--parallel", type=int, default=4, help="processes at a time")
    args = parser.parse_args()
    files = [args.cache / "documents.parquet", args.cache / "topics.parquet"]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        sys.exit(f"bench.exit_aborts: no {', '.join(missing)}")
    print(f"{args.runs} processes per reader, {args.parallel} at a time, each reading {args.cache}'s two tables")
    print(f"{'reader':<22} {'exited 0':>9} {'otherwise':>10}  exit codes")
    for reader, program in READERS.items():
        codes = exit_codes(program, files, args.runs, args.parallel)
        others = {code: count for code, count in codes.items() if code != 0}
        shown = ", ".join(f"{code}: {count}" for code, count in sorted(others.items())) or "-"
        print(f"{reader:<22} {codes[0]:>9} {sum(others.values()):>10}  {shown}")


if __name__ == "__main__":
    main()
