"""Topic Atlas as a library: ``import topic_atlas as ta``; ``ta.Atlas.fit(frame)``, ``ta.Atlas.load(folder)``.

See :mod:`topic_atlas.atlas` for the API and docs/architecture.md for the pipeline and the dashboard behind it.
"""

from pipeline.config import BuildConfig
from topic_atlas.atlas import Atlas

__all__ = ["Atlas", "BuildConfig"]
