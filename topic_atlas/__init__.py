"""Topic Atlas as a library: ``import topic_atlas as ta``; ``ta.Atlas.fit(frame)``, ``ta.Atlas.load(folder)``.

See :mod:`topic_atlas.atlas` for the API and docs/architecture.md for the pipeline and the dashboard behind it.

``Atlas``, ``BuildConfig`` and ``fetch_venue`` (an OpenReview venue as a corpus file) are imported when first used
(PEP 562), so importing the package, or its command line :mod:`topic_atlas.cli`, loads no numerical library: the
command line limits the BLAS threads before numpy loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.config import BuildConfig
    from topic_atlas.atlas import Atlas
    from topic_atlas.fetching import fetch_venue

__all__ = ["Atlas", "BuildConfig", "fetch_venue"]


def __getattr__(name: str) -> Any:
    """``Atlas`` (topic_atlas.atlas), ``BuildConfig`` (pipeline.config) and ``fetch_venue`` (topic_atlas.fetching),
    imported on first use."""
    if name == "Atlas":
        from topic_atlas.atlas import Atlas

        return Atlas
    if name == "BuildConfig":
        from pipeline.config import BuildConfig

        return BuildConfig
    if name == "fetch_venue":
        from topic_atlas.fetching import fetch_venue

        return fetch_venue
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with the lazily imported ones, for completion in a notebook."""
    return sorted({*globals(), *__all__})
