"""The ``topic-atlas`` command (the console script of ``pyproject.toml``; also ``python -m topic_atlas``).

The pipeline's commands (:data:`pipeline.commands.main.COMMAND_MODULES`: build, evaluate, place, add, rename, fetch,
edit) and ``share`` (:mod:`topic_atlas.share_command`), which writes the dashboard's map as one HTML file. The
pipeline imports neither the dashboard nor this package (issue 39; an import-linter contract in ``pyproject.toml``),
so the one command line that needs both is put together here, in the layer above them, and run by the pipeline's
:func:`pipeline.commands.main.main`: the same parsing, one-line errors and exit codes for every command.

Importing this module loads no numerical library (``topic_atlas/__init__.py`` imports the API lazily), so the
command line still sets the BLAS thread variables before numpy is loaded (pipeline.runtime.threads).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from pipeline.commands.main import COMMAND_MODULES as PIPELINE_COMMANDS
from pipeline.commands.main import main as run_command

SHARE_MODULE = "topic_atlas.share_command"


def with_share(commands: Mapping[str, str]) -> dict[str, str]:
    """``commands`` ({subcommand: module}) with ``share`` added just before ``edit`` (the order ``--help`` has
    always listed them in), or last when there is no ``edit``."""
    ordered: dict[str, str] = {}
    for name, module in commands.items():
        if name == "edit":
            ordered["share"] = SHARE_MODULE
        ordered[name] = module
    ordered.setdefault("share", SHARE_MODULE)
    return ordered


COMMAND_MODULES = with_share(PIPELINE_COMMANDS)


def main(argv: list[str] | None = None) -> int:
    """Run one ``topic-atlas`` subcommand (``argv``, default ``sys.argv[1:]``); returns the exit code (0 success,
    2 any failure, 130 interrupted), as :func:`pipeline.commands.main.main`."""
    return run_command(list(sys.argv[1:] if argv is None else argv), COMMAND_MODULES)
