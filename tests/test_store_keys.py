"""The one cache-key rule (pipeline.store.keys) and the stores that file stage outputs by it (pipeline.store.layouts).

The build tests are real builds of 300 real abstracts (the default tfidf-svd representation) with one layout store:
a first build in this process, then rebuilds by the code of an edited copy of the package, run in a subprocess with
PYTHONPATH pointing at the copy, so that the keys see the edit the way they see any change of code: through the hash
of the modules a stage runs. No part of the code under test is mocked.

The stale-key test (the tokeniser changed, every stage after it must be computed again) fails on the code as it was
at e12fd96, which reused the lexical fit, the neighbours, both UMAP fits and the refinement.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.runtime.parquet import read_frame
from tests.conftest import PAPERS, ROOT, needs_shared

N_DOCS = 300
# Every stage the layout store keeps that reads the tokens, directly or through the embeddings.
AFTER_TOKENS = (
    "tokens",
    "lexical",
    "neighbours",
    "umap_cluster_space",
    "map_2d",
    "map_refine",
    "map_metrics",
    "ngrams",
    "sentences",
)
STORED_STAGES = ("prepared", *AFTER_TOKENS)
BUILD_SCRIPT = """
import json, sys
from pipeline.operations.build import run_build
result = run_build(sys.argv[1], sys.argv[2], embedding_store=sys.argv[3])
print("MANIFEST " + json.dumps(result.manifest["layout_cache"]))
"""


def package_copy(folder: Path, path: str, old: str, new: str) -> Path:
    """A copy of this checkout's ``pipeline`` package under ``folder`` with ``old`` replaced by ``new`` (once) in
    ``path`` (relative to the package); returns the folder to put on PYTHONPATH."""
    shutil.copytree(ROOT / "pipeline", folder / "pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    source = folder / "pipeline" / path
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not once in {source}"
    source.write_text(text.replace(old, new), encoding="utf-8")
    return folder


def run_with(package_root: Path, script: str, *args: str, timeout: int = 900) -> str:
    """Run ``script`` in a fresh Python whose ``pipeline`` package is the one under ``package_root``; its stdout."""
    env = dict(os.environ, PYTHONPATH=str(package_root))
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=package_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def rebuild_with(package_root: Path, corpus: Path, cache_dir: Path, store: Path) -> dict:
    """The layout_cache of the manifest of a build of ``corpus`` by the package under ``package_root``."""
    output = run_with(package_root, BUILD_SCRIPT, str(corpus), str(cache_dir), str(store))
    line = next(line for line in output.splitlines() if line.startswith("MANIFEST "))
    return json.loads(line.removeprefix("MANIFEST "))


def lexical_vocabulary(cache_dir: Path) -> list[str]:
    """The tfidf-svd block's vocabulary a cache folder holds (pipeline.represent.representation.LEXICAL_FILES)."""
    return json.loads((cache_dir / "representation" / "lexical_vocabulary.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    needs_shared(PAPERS)
    path = tmp_path_factory.mktemp("keys-corpus") / "papers_300.parquet"
    read_frame(PAPERS).head(N_DOCS).to_parquet(path, index=False)
    return path


@pytest.fixture(scope="module")
def first_build(tmp_path_factory: pytest.TempPathFactory, corpus_file: Path) -> tuple[Path, Path, dict]:
    """A cold build of the 300 abstracts with a fresh store: (store, cache folder, manifest)."""
    from pipeline.operations.build import run_build

    folder = tmp_path_factory.mktemp("keys-first")
    store = folder / "store" / "embeddings.sqlite"
    result = run_build(corpus_file, folder / "cache", embedding_store=store)
    return store, result.cache_dir, result.manifest


def test_a_new_tokeniser_recomputes_every_stage_after_the_tokens(first_build, corpus_file: Path, tmp_path: Path):
    """TOKEN_PATTERN (pipeline.text.words) with ``{3,}`` for ``{2,}``: words of three letters or more. With the same
    store, the rebuild must tokenise again and refit everything made from the tokens (the lexical fit, so the
    embeddings, so the neighbours, both UMAP fits, the refinement, the map metrics, the c-TF-IDF counts); only the
    cleaned corpus, which does not depend on the tokeniser, is reused. The stored vocabulary had two-letter words;
    the rebuilt one has none (at e12fd96 the lexical fit was reused with its 34 two-letter words)."""
    store, first_cache, first_manifest = first_build
    assert not any(first_manifest["layout_cache"]["hits"].values())  # a cold build: nothing reused
    assert any(len(word) == 2 for word in lexical_vocabulary(first_cache))
    package = package_copy(tmp_path / "edited", "text/words.py", "){{2,}}\\b|", "){{3,}}\\b|")
    layout_cache = rebuild_with(package, corpus_file, tmp_path / "cache", store)
    hits = {stage: layout_cache["hits"].get(stage) for stage in STORED_STAGES}
    assert hits == {"prepared": True, **dict.fromkeys(AFTER_TOKENS, False)}
    vocabulary = lexical_vocabulary(tmp_path / "cache")
    assert vocabulary and not [word for word in vocabulary if len(word) < 3]


def test_a_docstring_change_recomputes_nothing(first_build, corpus_file: Path, tmp_path: Path):
    """A copy of the package whose geometry/umap_layout.py differs in docstrings only (the module's and umap_layout's):
    every stage comes from the store, and the documents table is the first build's."""
    store, first_cache, _ = first_build
    package = package_copy(
        tmp_path / "edited",
        "geometry/umap_layout.py",
        '    """Fit UMAP (cosine) on ``embeddings``',
        '    """Fit UMAP (cosine, seeded) on ``embeddings``',
    )
    module = package / "pipeline" / "geometry" / "umap_layout.py"
    module.write_text('"""A reworded module docstring."""\n' + module.read_text(encoding="utf-8").split('"""', 2)[2])
    layout_cache = rebuild_with(package, corpus_file, tmp_path / "cache", store)
    assert {stage: layout_cache["hits"].get(stage) for stage in STORED_STAGES} == dict.fromkeys(STORED_STAGES, True)
    pd.testing.assert_frame_equal(
        read_frame(first_cache / "documents.parquet"), read_frame(tmp_path / "cache" / "documents.parquet")
    )


def test_the_same_description_gives_the_same_key_and_each_part_changes_it():
    from pipeline.store.keys import stage_key

    def key(**changes):
        parts = {
            "inputs": {"embeddings": "e" * 64},
            "params": {"k": 15, "min_dist": 0.0},
            "libraries": ("numpy",),
            "code": ("pipeline.geometry.neighbors",),
        } | changes
        return stage_key("neighbours", **parts).digest

    base = key()
    assert base == key() and len(base) == 64
    variants = {
        "input": key(inputs={"embeddings": "f" * 64}),
        "another input": key(inputs={"embeddings": "e" * 64, "map": "m"}),
        "params": key(params={"k": 16, "min_dist": 0.0}),
        "libraries": key(libraries=("numpy", "scipy")),
        "code": key(code=("pipeline.geometry.neighbors", "pipeline.geometry.refine")),
    }
    assert base not in variants.values() and len(set(variants.values())) == len(variants)
    assert (
        stage_key("map_2d", inputs={"embeddings": "e" * 64}).digest
        != stage_key("umap_cluster_space", inputs={"embeddings": "e" * 64}).digest
    )
    # the order of parameters, libraries and modules does not matter
    assert key(params={"min_dist": 0.0, "k": 15}, libraries=("numpy", "numpy")) == base


def test_a_key_chains_the_keys_of_its_inputs():
    from pipeline.store.keys import stage_key

    def downstream(texts: str):
        tokens = stage_key("tokens", inputs={"texts": texts}, code=("pipeline.text.tokens",))
        return stage_key("lexical", inputs={"word_counts": tokens}, code=("pipeline.represent.representation",))

    assert downstream("a").digest == downstream("a").digest
    assert downstream("a").digest != downstream("b").digest
    description = downstream("a").description()
    assert (
        description["inputs"]["word_counts"]
        == stage_key("tokens", inputs={"texts": "a"}, code=("pipeline.text.tokens",)).digest
    )


def test_a_key_names_library_versions_and_the_code_it_hashed():
    from importlib.metadata import version

    from pipeline.store.keys import module_closure, stage_key

    description = stage_key("map_2d", libraries=("umap-learn", "no-such-distribution")).description()
    assert description["libraries"]["umap-learn"] == version("umap-learn")
    assert description["libraries"]["no-such-distribution"] == "not installed"
    assert "python" in description["libraries"]
    closure = module_closure(["pipeline.geometry.umap_layout"])
    # a module-level import, one inside a function (pipeline.runtime.threads in umap_layout) and parent packages
    assert {"pipeline.adapters.umap_kernels", "pipeline.runtime.threads", "pipeline.geometry"} <= set(closure)
    assert "pipeline.text.words" in module_closure(["pipeline.text.tokens"])


def test_a_module_without_a_source_file_is_an_error_not_an_empty_hash():
    """The fault of the old cleaning key: it listed file names of a layout that had moved and hashed nothing."""
    from pipeline.store.keys import code_hash, stage_key

    with pytest.raises(ValueError, match="pipeline.preparation_cache"):
        code_hash(["pipeline.preparation_cache"])
    with pytest.raises(ValueError, match="not a module of the pipeline package"):
        str(stage_key("tokens", code=("numpy",)))


CODE_KEYS = """
import json
from pipeline.store.keys import code_hash
from pipeline.store.prepared import preparation_key
from pipeline.text.tokens import tokens_key
print(json.dumps({
    "latex": code_hash(["pipeline.ingest.latex"]),
    "prepared": preparation_key("0" * 64, None).digest,
    "tokens": tokens_key(["a text"]).digest,
}))
"""


def code_keys(package_root: Path) -> dict[str, str]:
    return json.loads(run_with(package_root, CODE_KEYS, timeout=120))


def test_code_hashes_see_code_through_imports_and_ignore_docstrings_and_comments(tmp_path: Path):
    """The cleaned corpus's key changes with the code of pipeline.ingest.latex, which cleaning imports (the key of
    e12fd96 hashed no file at all), but not with its docstring or a comment; the tokens' key does not depend on it."""
    original = code_keys(ROOT)
    documented = package_copy(tmp_path / "documented", "ingest/latex.py", "import re\n", "import re  # a comment\n\n\n")
    module = documented / "pipeline" / "ingest" / "latex.py"
    module.write_text('"""Reworded."""\n' + module.read_text(encoding="utf-8").split('"""', 2)[2], encoding="utf-8")
    changed = package_copy(tmp_path / "changed", "ingest/latex.py", "import re\n", "import re\n\n_NEW = 1\n")
    assert code_keys(documented) == original
    changed_keys = code_keys(changed)
    assert changed_keys["latex"] != original["latex"] and changed_keys["prepared"] != original["prepared"]
    assert changed_keys["tokens"] == original["tokens"]


def test_the_layout_store_keeps_what_the_null_store_computes_every_time(tmp_path: Path):
    from pipeline.store.keys import stage_key
    from pipeline.store.layouts import LayoutStore, NullStore, open_store

    calls: list[int] = []

    def compute() -> dict[str, np.ndarray]:
        calls.append(1)
        return {"layout": np.arange(6, dtype=np.float32).reshape(3, 2)}

    key = stage_key(
        "map_2d", inputs={"embeddings": "e"}, params={"n_components": 2}, code=("pipeline.geometry.refine",)
    )
    store = open_store(tmp_path / "layouts")
    assert isinstance(store, LayoutStore)
    first, second = store.cached(key, compute), store.cached(key, compute)
    assert len(calls) == 1 and store.hits == {"map_2d": True}
    assert np.array_equal(first["layout"], second["layout"])
    assert (tmp_path / "layouts" / f"{key.digest}.npz").is_file()
    assert store.manifest_entry() == {"folder": str(tmp_path / "layouts"), "hits": {"map_2d": True}}

    null = open_store(None)
    assert isinstance(null, NullStore)
    null.cached(key, compute)
    null.cached(key, compute)
    assert len(calls) == 3 and null.hits == {} and null.manifest_entry() == {"folder": None, "hits": {}}
