"""Importing bertopic without the heavy modules a build never uses: an adapter over Python's import system.

bertopic imports sentence-transformers, transformers, plotly, torch and PIL at import time (about 8 s with torch);
a build passes its own embeddings and saves with safetensors, so it needs none of them.
"""

from __future__ import annotations

import logging
import sys

log = logging.getLogger(__name__)

# Modules bertopic imports when it is imported but a build never uses: its multimodal backend and text-generation
# representations (sentence-transformers, transformers: ~8 s with torch), its plotting (plotly), and the torch and
# image (PIL) checks of its save code. See import_bertopic_lean.
BERTOPIC_UNUSED_IMPORTS = ("sentence_transformers", "transformers", "plotly", "torch", "PIL")


def import_bertopic_lean() -> list[str]:
    """Import bertopic without the modules in BERTOPIC_UNUSED_IMPORTS that are not imported yet. Idempotent.

    bertopic imports each of them inside ``try: ... except ModuleNotFoundError`` (or checks ``find_spec`` for
    plotly) and falls back to a placeholder that raises only when that feature is used; a build uses none of them
    (embeddings are passed in; the model is saved with safetensors). They are hidden from the import system
    (``sys.modules[name] = None``) only while bertopic itself is imported, then unhidden, so later code may import
    them as usual. scikit-learn and scipy are imported first because scipy looks torch up in ``sys.modules`` at import.
    If anything goes wrong the hiding is undone and bertopic is imported normally.
    Returns the names that were hidden (empty when bertopic was already imported).
    """
    if "bertopic" in sys.modules:
        return []
    hidden = [name for name in BERTOPIC_UNUSED_IMPORTS if name not in sys.modules]
    import scipy.stats  # noqa: F401
    import sklearn.base  # noqa: F401

    try:
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]
        import bertopic  # noqa: F401
    except Exception as error:  # pragma: no cover - another bertopic version
        log.debug("lean bertopic import failed (%s); importing it normally", error)
        for name in [name for name in sys.modules if name == "bertopic" or name.startswith("bertopic.")]:
            del sys.modules[name]
        hidden_now = [name for name in hidden if sys.modules.get(name, 0) is None]
        for name in hidden_now:
            del sys.modules[name]
        import bertopic  # noqa: F401

        return []
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return hidden


