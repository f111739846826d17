"""Where the project's folders and files are, in a checkout and in an installed package.

- **In a checkout** (the package installed editable by ``make setup``, or run from the source tree): the project
  root is the checkout, two folders above this file; ``caches/`` and ``.cache/`` (the embedding store, the layout
  store, encoders, logs) are in it, as before.
- **Installed** (``pip install .`` or the wheel: the modules live in site-packages): nothing is ever written beside
  the modules. The project root is the folder the process started in, like a checkout's root: ``caches/default``
  (the page's default atlas) and ``.cache/`` are made there when used. Each ``.cache`` file has an environment
  variable that moves it elsewhere (``ATLAS_EMBEDDING_CACHE``, ``ATLAS_MODEL_CACHE``, ``ATLAS_LOG_DIR``; see the
  modules that use them), and numba's compiled kernels go where ``NUMBA_CACHE_DIR`` says (the Makefile sets
  ``.cache/numba``; unset, numba's own default).

The files the code reads ship inside the packages as package data (pyproject.toml, ``[tool.setuptools.package-data]``)
and are found with :mod:`importlib.resources` (:func:`package_file`), in a checkout and installed alike:
``pipeline/resources/`` holds the primary-area crosswalk and the bundled sample corpus (in the checkout, links to
``data/collections/iclr_primary_areas.csv`` and ``data/sample/iclr2025_seed_abstracts.txt``, which stay where the
docs and the Makefile name them), ``dashboard/`` the page's Streamlit settings and its components' built bundles.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the packages: the checkout, or site-packages


def is_checkout(folder: Path) -> bool:
    """True when ``folder`` is this project's source tree: it holds this project's pyproject.toml."""
    try:
        text = (folder / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    return 'name = "topic-atlas"' in text


IN_CHECKOUT = is_checkout(PACKAGE_ROOT)
PROJECT_ROOT = PACKAGE_ROOT if IN_CHECKOUT else Path.cwd()
CACHE_FOLDER = PROJECT_ROOT / ".cache"

CROSSWALK = ("pipeline.resources", "iclr_primary_areas.csv")
SAMPLE_CORPUS = ("pipeline.resources", "iclr2025_seed_abstracts.txt")


def package_file(package: str, name: str) -> Path:
    """The file ``name`` shipped in ``package`` (package data), as a path on disk. Raises FileNotFoundError naming
    the package when the installation lacks it (a wheel built without its package data)."""
    with as_file(files(package) / name) as path:
        if not path.is_file():
            raise FileNotFoundError(f"{name} is missing from the installed package {package}: reinstall topic-atlas")
        return Path(path)
