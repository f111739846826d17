"""How ``Atlas.serve`` starts the dashboard: ``streamlit run`` of the page shipped in the ``dashboard`` package, with
the page's Streamlit settings, from a checkout and from an installed package alike.

Streamlit reads ``.streamlit/config.toml`` from the folder it is started in, so a checkout's ``make run`` gets the
project's settings and a notebook elsewhere would not (the page would show tracebacks, keep closed sessions, watch
files). The same file ships as ``dashboard/streamlit_config.toml`` (package data; in the checkout a link to
``.streamlit/config.toml``) and is passed as command-line options, which Streamlit ranks above any config file.
"""

from __future__ import annotations

import sys
import tomllib
from importlib.resources import files
from pathlib import Path
from typing import Any

from pipeline.runtime.paths import package_file

SETTINGS = ("dashboard", "streamlit_config.toml")
# Set by serve itself from its arguments.
SERVE_OPTIONS = frozenset({"server.address", "server.port", "server.headless"})


def page_script() -> Path:
    """The page's script, ``dashboard/app.py``, where the installed (or checked-out) package has it."""
    return Path(str(files("dashboard") / "app.py"))


def _option_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def streamlit_options(path: Path | None = None) -> list[str]:
    """The page's Streamlit settings (``path``, default the shipped ``dashboard/streamlit_config.toml``) as
    ``streamlit run`` options: ``["--client.showErrorDetails", "none", ...]``, leaving out SERVE_OPTIONS. Raises
    FileNotFoundError when the settings file is not installed, tomllib.TOMLDecodeError when it is not TOML."""
    settings = tomllib.loads((path or package_file(*SETTINGS)).read_text(encoding="utf-8"))
    options = []
    for section, values in settings.items():
        for key, value in values.items():
            if f"{section}.{key}" not in SERVE_OPTIONS:
                options += [f"--{section}.{key}", _option_text(value)]
    return options


def dashboard_command(folder: Path, port: int, address: str = "127.0.0.1") -> list[str]:
    """The command that serves the cache ``folder`` at http://``address``:``port`` with this interpreter."""
    command = [sys.executable, "-m", "streamlit", "run", str(page_script()), "--server.address", address]
    command += ["--server.port", str(port), "--server.headless", "true", *streamlit_options()]
    return command + ["--", "--cache", str(folder)]
