"""Importing bertopic without the heavy modules a build never uses: an adapter over Python's import system and
bertopic's optional imports.

bertopic imports sentence-transformers, transformers, plotly, torch and PIL at import time (about 8 s with torch);
a build passes its own embeddings and saves with safetensors, so it needs none of them.

What this relies on (bertopic 0.17.4, the pinned version; :data:`CHECKED_VERSIONS`): bertopic imports each module
of :data:`BERTOPIC_UNUSED_IMPORTS` inside ``try: ... except ImportError`` (or checks ``importlib.util.find_spec``
for plotly) and falls back to a placeholder that raises only when that feature is used. When bertopic's import
fails with them hidden (a version that needs one of them), :func:`import_bertopic_lean` warns once in the build
log and imports bertopic normally: slower, the same results.

Hiding a module (``sys.modules[name] = None``) hides it from every thread. So :func:`import_bertopic_lean` hides
nothing while another (non-daemon) Python thread runs, which might import one of them in the meantime: it imports
bertopic normally instead, with a warning. The build calls it before it starts its map thread.
"""

from __future__ import annotations

import logging
import sys
import threading

from pipeline.adapters.checks import check_version, warn_once

log = logging.getLogger(__name__)

# bertopic versions this adapter was checked with (low inclusive, high exclusive).
CHECKED_VERSIONS = ("0.17.4", "0.18")

# Modules bertopic imports when it is imported but a build never uses: its multimodal backend and text-generation
# representations (sentence-transformers, transformers: ~8 s with torch), its plotting (plotly), and the torch and
# image (PIL) checks of its save code. See import_bertopic_lean.
BERTOPIC_UNUSED_IMPORTS = ("sentence_transformers", "transformers", "plotly", "torch", "PIL")


def other_threads() -> list[str]:
    """Names of the live non-daemon Python threads other than the calling one (daemon threads, such as tqdm's
    monitor, only refresh progress bars and are not counted)."""
    current = threading.current_thread()
    return [thread.name for thread in threading.enumerate() if thread is not current and not thread.daemon]


def import_bertopic_lean() -> list[str]:
    """Import bertopic without the modules in BERTOPIC_UNUSED_IMPORTS that are not imported yet. Idempotent.

    They are hidden from the import system (``sys.modules[name] = None``) only while bertopic itself is imported,
    then unhidden, so later code may import them as usual. scikit-learn and scipy are imported first because scipy
    looks torch up in ``sys.modules`` at import. Call it before starting threads: while another non-daemon thread
    runs, nothing is hidden (see the module docstring). If bertopic's import fails with the modules hidden, the
    hiding is undone, a warning is logged once, and bertopic is imported normally.

    Returns the names that were hidden (empty when bertopic was already imported, or was imported normally).
    """
    if "bertopic" in sys.modules:
        return []
    check_version(log, "bertopic", *CHECKED_VERSIONS, __name__)
    running = other_threads()
    if running:
        warn_once(
            log,
            "threads",
            "importing bertopic with all its optional modules (about 8 s more): threads %s are running and might "
            "import one of %s while they were hidden; import it before starting threads",
            ", ".join(running),
            ", ".join(BERTOPIC_UNUSED_IMPORTS),
        )
        import bertopic  # noqa: F401

        return []
    hidden = [name for name in BERTOPIC_UNUSED_IMPORTS if name not in sys.modules]
    import scipy.stats  # noqa: F401
    import sklearn.base  # noqa: F401

    try:
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]
        import bertopic  # noqa: F401
    except Exception as error:  # another bertopic version, which needs one of them
        warn_once(
            log,
            "lean-import",
            "bertopic cannot be imported without %s (%s: %s); importing it normally (about 8 s more)",
            ", ".join(hidden),
            type(error).__name__,
            error,
        )
        for name in [name for name in sys.modules if name == "bertopic" or name.startswith("bertopic.")]:
            del sys.modules[name]
        hidden_now = [name for name in hidden if name in sys.modules and sys.modules[name] is None]
        for name in hidden_now:
            del sys.modules[name]
        import bertopic  # noqa: F401

        return []
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return hidden
