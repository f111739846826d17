"""The project's own errors: each says what is wrong for a person, not for a debugger."""

from __future__ import annotations


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
