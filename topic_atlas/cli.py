"""The ``topic-atlas`` command (the console script of ``pyproject.toml``; also ``python -m topic_atlas``):
``topic-atlas {build,evaluate,place,add,rename,fetch,share,edit} --help``.

Each subcommand lives in its own module of :mod:`topic_atlas.commands`, which offers ``register(subparsers)``; the
handler it sets with ``set_defaults(handler=...)`` makes one call of the Python API (:class:`topic_atlas.Atlas`) and
returns the process exit code. Modules are imported only when their command runs, so ``--help`` and the build stay
quick. The command line sits in the API's layer, above the pipeline and the dashboard (issue 39: ``share`` writes
the dashboard's map; nothing under ``pipeline/`` imports ``dashboard`` or ``topic_atlas``).

Importing this module loads no numerical library (``topic_atlas/__init__.py`` imports the API lazily), so
:func:`main` sets the BLAS thread variables before numpy is loaded (pipeline.runtime.threads).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from pipeline.runtime.errors import AtlasError, TargetError

# subcommand -> module that registers it, in the order --help lists them
COMMAND_MODULES = {
    "build": "topic_atlas.commands.build",
    "evaluate": "topic_atlas.commands.evaluate",
    "place": "topic_atlas.commands.place",
    "add": "topic_atlas.commands.add",
    "rename": "topic_atlas.commands.rename",
    "fetch": "topic_atlas.commands.fetch",
    "share": "topic_atlas.commands.share",
    "edit": "topic_atlas.commands.edit",
}


def make_parser(argv: list[str], commands: Mapping[str, str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    """Build the argument parser of ``commands`` ({subcommand: module}); only the module of the chosen subcommand
    (or all, for top-level help) is imported."""
    parser = argparse.ArgumentParser(
        prog="topic-atlas",
        description=(
            "Topic Atlas offline pipeline: fit BERTopic over a corpus of abstracts and write a cache for the dashboard."
        ),
    )
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((arg for arg in argv if arg in commands), None)
    for name, module_name in commands.items():
        if chosen is not None and name != chosen:
            subparsers.add_parser(name, help=f"see: topic-atlas {name} --help")
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        module.register(subparsers)
        accept_debug(subparsers.choices[name])
    return parser


def accept_debug(parser: argparse.ArgumentParser) -> None:
    """Let ``--debug`` come after a subcommand too (``topic-atlas place ... --debug``, as the crash line advises),
    on ``parser`` and every parser nested under it (``edit merge``). Its default is SUPPRESS, so a subparser never
    overwrites the ``--debug`` given before the subcommand."""
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show full tracebacks on errors"
    )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for nested in dict.fromkeys(action.choices.values()):
                accept_debug(nested)


def check_cache_argument(args: argparse.Namespace) -> None:
    """Refuse a ``--cache`` that is a file for a command that reads an atlas (every one but ``build``, which says
    itself what it would replace). Raises TargetError."""
    cache = getattr(args, "cache", None)
    if args.command != "build" and isinstance(cache, Path) and cache.is_file():
        raise TargetError(f"{cache} is a file, not an atlas folder: give --cache the folder `topic-atlas build` wrote")


def run_guarded(action: Callable[[], int | None], command: str, argv: list[str], debug: bool = False) -> int:
    """Run ``action`` and turn every failure into one line on stderr and an exit code; never raises (unless ``debug``).

    - AtlasError (bad input, a cache path, an atlas folder that is missing, partial or of another version
      (pipeline.cache.CacheError), a broken environment): its message, exit code 2.
    - An import failure of UMAP's numba stack: the installed versions and their mismatch
      (:func:`pipeline.runtime.environment.numba_stack_report`), exit code 2, traceback in a log file.
    - Any other exception: the stage it was raised in, the error, and the path of a log file holding the traceback
      (:mod:`pipeline.runtime.crashlog`), exit code 2.
    - KeyboardInterrupt: exit code 130, saying whether a cache had already been written (:func:`interrupted_line`).
    """
    from pipeline.cache.publish import published_folders

    written_before = len(published_folders())
    try:
        return int(action() or 0)
    except AtlasError as error:
        if debug:
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(interrupted_line(published_folders()[written_before:]), file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the one place every unexpected failure ends
        if debug:
            raise
        from pipeline.runtime.crashlog import failure_line, write_failure_log
        from pipeline.runtime.environment import broken_stack_error

        log_path = write_failure_log(error, command, argv)
        broken = broken_stack_error(error)
        if broken is not None:
            print(f"error: {broken} (traceback: {log_path})", file=sys.stderr)
        else:
            print(failure_line(error, command, log_path), file=sys.stderr)
        return 2


def interrupted_line(published: list[Path]) -> str:
    """What an interrupted command says: that no cache changed, or which atlas folders it had already written whole
    (``published``: those it made or replaced, pipeline.cache.publish.published_folders; an interrupt can come
    after the swap, while the old copy is removed, or after the write, while the command reports)."""
    written = list(dict.fromkeys(str(folder) for folder in published))
    if not written:
        return "interrupted; no cache was changed"
    return f"interrupted after {', '.join(written)} had been written: it holds the new version, whole"


def main(argv: list[str] | None = None, commands: Mapping[str, str] = COMMAND_MODULES) -> int:
    """Run one ``topic-atlas`` subcommand of ``commands`` ({subcommand: module}) with ``argv`` (default
    ``sys.argv[1:]``); returns the exit code (0 success, 2 any failure, 130 interrupted). See run_guarded."""
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from pipeline.runtime.threads import limit_threads_of_this_process

    limit_threads_of_this_process()  # before numpy loads its BLAS (pipeline.runtime.threads)
    from pipeline.runtime.allocator import keep_freed_memory

    keep_freed_memory()  # a batch process: large temporary arrays reuse freed pages (pipeline.runtime.allocator)
    command = next((arg for arg in argv if arg in commands), "")
    from pipeline.runtime.console import configure_output

    configure_output(command)  # library noise to the log file only (pipeline.runtime.console)
    debug = "--debug" in argv
    parser: argparse.ArgumentParser | None = None

    def parse() -> None:
        nonlocal parser
        parser = make_parser(argv, commands)

    code = run_guarded(parse, command, argv, debug)  # a subcommand's module may fail to import (a broken install)
    if parser is None:
        return code
    args = parser.parse_args(argv)

    def handle() -> int:
        check_cache_argument(args)
        return int(args.handler(args) or 0)

    return run_guarded(handle, args.command, argv, args.debug)
