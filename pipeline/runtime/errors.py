"""The project's own errors: each says what is wrong for a person, not for a debugger.

An error raised inside a build stage carries the stage's name (:func:`mark_stage`, called by
``pipeline.runtime.stages.StageTimer``), so the command line can say where an unexpected failure happened.
"""

from __future__ import annotations

from pathlib import Path

STAGE_ATTRIBUTE = "atlas_stage"


class AtlasError(Exception):
    """Base class of errors the command line reports in one line (exit code 2), without a traceback."""


class InputError(AtlasError):
    """A corpus file cannot be used: the message names the file, the row or line, and the problem."""


class CorpusTooSmallError(InputError):
    """Too few usable documents to model."""


class EmptyVocabularyError(InputError):
    """No words are left to describe topics after stop-word removal."""


class TargetError(AtlasError):
    """The output path cannot be written (not a cache folder, a file, or unsafe)."""


class BrokenEnvironmentError(AtlasError):
    """An installed package cannot be imported or does not match the versions its neighbours need.

    The message names the packages, their installed versions and the mismatch (see :mod:`pipeline.runtime.environment`).
    """


def refuse_inside(target: Path | str, folder: Path | str, command: str) -> Path:
    """``target`` resolved, once it is known to lie outside ``folder`` (an atlas's cache folder, which ``command``,
    e.g. "place" or "share", never modifies: a file written there would make the next build refuse the folder).

    Raises TargetError when ``target`` is inside ``folder``.
    """
    resolved = Path(target).expanduser().resolve()
    if Path(folder).expanduser().resolve() in resolved.parents:
        raise TargetError(f"{resolved} is inside the cache folder, which {command} never modifies; write it elsewhere")
    return resolved


def mark_stage(error: BaseException, stage: str) -> None:
    """Record on ``error`` the build stage it was raised in; the innermost stage wins (set once)."""
    if getattr(error, STAGE_ATTRIBUTE, None) is None:
        try:
            setattr(error, STAGE_ATTRIBUTE, stage)
        except (AttributeError, TypeError):  # an exception type that refuses attributes: nothing to record
            pass


def stage_of(error: BaseException) -> str | None:
    """The build stage ``error`` was raised in (see :func:`mark_stage`), or None."""
    return getattr(error, STAGE_ATTRIBUTE, None)
