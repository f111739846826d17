"""What every adapter shares: the installed version of a library against the versions it was checked with, and
warnings that are logged once per process.

An adapter checks the internals it relies on one by one, each time before it uses them; the version range only
says where those checks and the contract tests (tests/test_adapters.py) were last run. Outside it the adapter
still works when its checks pass, and says so once in the build log, so that a version bump is re-tested.
"""

from __future__ import annotations

import logging
import re
import threading
from importlib.metadata import PackageNotFoundError, version

_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def warn_once(log: logging.Logger, key: str, message: str, *args: object) -> bool:
    """``log.warning(message, *args)`` the first time ``key`` is seen in this process; later calls log nothing.

    Returns True when the warning was logged now.
    """
    with _WARNED_LOCK:
        if key in _WARNED:
            return False
        _WARNED.add(key)
    log.warning(message, *args)
    return True


def version_tuple(text: str) -> tuple[int, ...]:
    """The leading numeric release parts of a version string: "0.5.12" -> (0, 5, 12), "1.10.0rc1" -> (1, 10, 0).

    Parts after the first one that does not start with a digit are ignored ("2.0.dev3" -> (2, 0)).
    """
    parts: list[int] = []
    for part in text.split("."):
        match = re.match(r"\d+", part)
        if not match:
            break
        parts.append(int(match.group()))
        if match.end() < len(part):  # "0rc1": the release part ends here
            break
    return tuple(parts)


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (a package name as pip knows it, e.g. "umap-learn"), else None."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def check_version(log: logging.Logger, distribution: str, low: str, high: str, adapter: str) -> bool:
    """True when ``low <= installed version < high``. Otherwise (or when the distribution is not installed) log once
    that ``adapter`` was not checked against the installed version, and return False.

    ``low`` and ``high`` are release versions ("0.5.12", "0.6"); pre-release suffixes of the installed version are
    ignored, so 0.6.0rc1 counts as 0.6.0.
    """
    installed = installed_version(distribution)
    if installed is not None and version_tuple(low) <= version_tuple(installed) < version_tuple(high):
        return True
    warn_once(
        log,
        f"version:{adapter}:{distribution}",
        "%s relies on internals of %s and was checked with versions >=%s,<%s, not %s: it checks each internal before "
        "use and warns if one is missing; run tests/test_adapters.py and widen the range in %s",
        adapter,
        distribution,
        low,
        high,
        installed or "none installed",
        adapter,
    )
    return False
