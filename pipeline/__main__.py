"""Command line: ``python -m pipeline {build,evaluate,place,add,rename,fetch} --help``.

Each subcommand lives in its own module, which offers ``register(subparsers)``; the handler it sets
with ``set_defaults(handler=...)`` returns the process exit code. Modules are imported only when their
command runs, so ``--help`` and the build stay quick.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from pipeline.errors import AtlasError

# subcommand -> module that registers it
COMMAND_MODULES = {
    "build": "pipeline.build",
    "evaluate": "pipeline.evaluate",
    "place": "pipeline.place",
    "add": "pipeline.add",
    "rename": "pipeline.rename",
    "fetch": "pipeline.fetch",
}


def make_parser(argv: list[str]) -> argparse.ArgumentParser:
    """Build the argument parser; only the module of the chosen subcommand (or all, for top-level help) is imported."""
    parser = argparse.ArgumentParser(
        prog="python -m pipeline",
        description="Topic Atlas offline pipeline: fit BERTopic over a corpus of abstracts and write a cache for the dashboard.",
    )
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((arg for arg in argv if arg in COMMAND_MODULES), None)
    for name, module_name in COMMAND_MODULES.items():
        if chosen is not None and name != chosen:
            subparsers.add_parser(name, help=f"see: python -m pipeline {name} --help")
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; returns the exit code (0 success, 2 input or cache error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    parser = make_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except AtlasError as error:
        if args.debug:
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; no cache was changed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
