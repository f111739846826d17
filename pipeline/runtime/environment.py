"""Diagnose a broken numba / llvmlite / UMAP install in one line.

umap-learn and pynndescent compile their kernels with numba, which needs the one llvmlite release it was built
against (numba declares it: ``llvmlite<0.51,>=0.50.0dev0`` for numba 0.68) and a numpy inside its supported range.
When pip leaves a mismatched pair behind, ``from umap import UMAP`` fails deep inside numba's import with a
46-line ``SystemError``/``ImportError`` that names neither package. This module reads the installed versions and
each package's declared requirements from ``importlib.metadata`` (which reads the ``.dist-info`` files and imports
nothing), so it works exactly when importing does not.
"""

from __future__ import annotations

import traceback
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from pipeline.runtime.errors import BrokenEnvironmentError

# Distribution name -> top-level module; the packages UMAP's import chain loads, in import order.
NUMBA_STACK: dict[str, str] = {
    "umap-learn": "umap",
    "pynndescent": "pynndescent",
    "numba": "numba",
    "llvmlite": "llvmlite",
    "numpy": "numpy",
}
REINSTALL_HINT = "reinstall matching versions: .venv/bin/python -m pip install --force-reinstall -r requirements.txt"


def installed_version(package: str) -> str | None:
    """The installed version of a distribution (from its metadata, without importing it), or None."""
    try:
        return distribution(package).version
    except PackageNotFoundError:
        return None


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def requirement_mismatches(packages: tuple[str, ...] = tuple(NUMBA_STACK)) -> list[str]:
    """Requirements among ``packages`` that the installed versions break, as sentences.

    For each installed package, each ``Requires-Dist`` entry naming another of ``packages`` (extras left out) is
    checked against that package's installed version: e.g. "numba 0.68.1 needs llvmlite>=0.50.0dev0,<0.51 but
    llvmlite 0.43.0 is installed", or "... but llvmlite is not installed". Returns [] when all agree (or when the
    ``packaging`` library, which parses the specifiers, is missing).
    """
    try:
        from packaging.requirements import InvalidRequirement, Requirement
        from packaging.version import InvalidVersion, Version
    except ModuleNotFoundError:
        return []
    wanted = {_normalise(package) for package in packages}
    versions = {_normalise(package): installed_version(package) for package in packages}
    problems: list[str] = []
    for package in packages:
        own = versions[_normalise(package)]
        if own is None:
            continue
        for line in distribution(package).requires or []:
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            name = _normalise(requirement.name)
            if name not in wanted or (
                requirement.marker is not None and not requirement.marker.evaluate({"extra": ""})
            ):
                continue
            found = versions.get(name)
            if found is None:
                problems.append(
                    f"{package} {own} needs {requirement.name}{requirement.specifier} "
                    f"but {requirement.name} is not installed"
                )
                continue
            try:
                ok = requirement.specifier.contains(Version(found), prereleases=True)
            except InvalidVersion:
                continue
            if not ok:
                problems.append(
                    f"{package} {own} needs {requirement.name}{requirement.specifier} "
                    f"but {requirement.name} {found} is installed"
                )
    return problems


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions it was raised from or during, outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _stack_module(path: str) -> str | None:
    """The NUMBA_STACK module a source file belongs to (``.../site-packages/numba/core/x.py`` -> "numba"), or None."""
    parts = Path(path).parts
    for module in NUMBA_STACK.values():
        if module in parts[:-1] and module != "numpy":
            return module
    return None


def is_numba_stack_failure(error: BaseException) -> bool:
    """True when ``error`` (or one it was raised from) came out of importing umap, pynndescent, numba or llvmlite.

    That is: an ImportError naming one of those modules, or an exception raised while a module of one of them was
    being imported (a traceback frame running module-level code, ``<module>``, of a file of that package; Python
    hides the import machinery's own frames).
    """
    for link in _chain(error):
        if isinstance(link, ImportError) and (link.name or "").split(".")[0] in set(NUMBA_STACK.values()) - {"numpy"}:
            return True
        frames = traceback.extract_tb(link.__traceback__)
        if any(frame.name == "<module>" and _stack_module(frame.filename) for frame in frames):
            return True
    return False


def numba_stack_report(error: BaseException | None = None) -> str:
    """One line: the stack's installed versions, the mismatches found, the error (if given) and what to do."""
    versions = ", ".join(f"{package} {installed_version(package) or 'not installed'}" for package in NUMBA_STACK)
    problems = requirement_mismatches()
    cause = f" ({type(error).__name__}: {' '.join(str(error).split())[:200]})" if error is not None else ""
    mismatch = (
        f"; mismatch: {'; '.join(problems)}"
        if problems
        else "; their declared requirements agree, so one of them is damaged"
    )
    return (
        f"UMAP cannot be imported: its numba stack is broken{cause}. "
        f"Installed: {versions}{mismatch}. To fix it, {REINSTALL_HINT}"
    )


def broken_stack_error(error: BaseException) -> BrokenEnvironmentError | None:
    """A BrokenEnvironmentError with :func:`numba_stack_report` when ``error`` is a numba-stack import failure, else
    None."""
    if not is_numba_stack_failure(error):
        return None
    return BrokenEnvironmentError(numba_stack_report(error))
