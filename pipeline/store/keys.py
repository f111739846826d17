"""The one rule by which a stored stage's key is made, and the fingerprints of what a stage reads.

A stored stage (the cleaned corpus, the tokens, the lexical fit, the neighbour lists, both UMAP layouts, the NeRV
refinement, the map metrics, the c-TF-IDF counts) is a pure function of four things, and its key is the SHA-256 of
all four, so that any change that can change its output is a new key and the stage is computed again:

- **inputs**: what it reads, each named by a fingerprint of the data (:func:`fingerprint` of an array,
  :func:`texts_fingerprint` of texts, a file's SHA-256) or by the :class:`StageKey` of the stored stage that made
  it. Chaining keys this way makes a change upstream a new key for every stage after it: the lexical fit's key
  holds the tokens' key, so a new tokeniser refits it, which gives new embeddings, whose fingerprint is in the
  neighbours' and the UMAP fits' keys, and so on.
- **params**: the settings it is called with (JSON: numbers, strings, lists, dicts; anything else by ``str``).
- **libraries**: the distributions whose code it calls (``"umap-learn"``, ``"scikit-learn"``), by installed version;
  the Python version is always part of the key.
- **code**: the project's own modules it runs (``"pipeline.geometry.umap_layout"``), taken transitively over
  their ``pipeline.*`` imports (static, by :mod:`ast`, imports inside functions included), each hashed as its
  syntax tree with docstrings left out: a change of code is a new key, a change of docstrings, comments or
  formatting is not (:func:`code_hash`). No version constant is bumped by hand and no file name is listed.

The key of a stage is made where the stage is computed, by :func:`stage_key`; a store
(pipeline.store.layouts) only files its output under ``key.digest``.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import platform
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

PACKAGE = "pipeline"
# The folder of the package whose code is hashed: the one this module was imported from (a copy of the package
# on PYTHONPATH hashes the copy's files).
PACKAGE_FOLDER = Path(__file__).resolve().parent.parent


def fingerprint(embeddings: np.ndarray) -> str:
    """SHA-256 hex of an array's shape, dtype and bytes (about 0.2 s for 50,000 x 384 float32): names an
    embedding matrix, a map (n x 2) or any other array a stage reads. Non-contiguous arrays are copied first."""
    matrix = np.ascontiguousarray(embeddings)
    digest = hashlib.sha256(f"{matrix.shape}|{matrix.dtype}|".encode())
    digest.update(matrix.reshape(-1).view(np.uint8).data)  # the bytes without a copy (also for an empty array)
    return digest.hexdigest()


def texts_fingerprint(texts: Iterable[str], header: str = "") -> str:
    """SHA-256 hex of ``header`` then every text in order, each ended by a NUL byte (so ["ab", "c"] and ["a", "bc"]
    differ): names a corpus's texts (the input of its tokens and of its lexical fit) or a vocabulary."""
    digest = hashlib.sha256(header.encode("utf-8"))
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def library_version(distribution: str) -> str:
    """The installed version of ``distribution`` (``"umap-learn"``), or ``"not installed"``."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


class StageKey:
    """The key of one stored stage's output: what went in (see the module docstring) and its SHA-256.

    Made by :func:`stage_key`. The digest, and with it the code hash and the library versions, is computed on first
    use only, so a build without a store (pipeline.store.layouts.NullStore) never hashes code.

    Attributes
    ----------
    stage : the stage's name (``"map_2d"``), also the name under which a store records its hit or miss.
    inputs : name -> fingerprint (str) or the StageKey of the stored stage that made the input.
    params : the stage's settings (JSON-able).
    libraries : distribution names whose versions go into the key, sorted.
    code : the project modules the stage runs (before the transitive closure), sorted.
    """

    def __init__(
        self,
        stage: str,
        inputs: Mapping[str, str | StageKey],
        params: Mapping[str, Any],
        libraries: Iterable[str],
        code: Iterable[str],
    ):
        self.stage = stage
        self.inputs = dict(inputs)
        self.params = dict(params)
        self.libraries = tuple(sorted(set(libraries)))
        self.code = tuple(sorted(set(code)))

    def description(self) -> dict[str, Any]:
        """What the digest is the SHA-256 of (canonical JSON of this dict): the stage, its inputs (upstream keys by
        their digest), its params, ``{distribution: version}`` with ``python``, and the code's hash and modules."""
        return {
            "stage": self.stage,
            "inputs": {
                name: value.digest if isinstance(value, StageKey) else value for name, value in self.inputs.items()
            },
            "params": self.params,
            "libraries": {"python": platform.python_version()}
            | {name: library_version(name) for name in self.libraries},
            "code": {"modules": list(self.code), "sha256": code_hash(self.code)},
        }

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 hex of :meth:`description` as canonical JSON (sorted keys; values JSON cannot hold by ``str``)."""
        text = json.dumps(self.description(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def __str__(self) -> str:
        return self.digest

    def __repr__(self) -> str:
        return f"StageKey({self.stage!r}, inputs={sorted(self.inputs)}, code={list(self.code)})"


def stage_key(
    stage: str,
    *,
    inputs: Mapping[str, str | StageKey] | None = None,
    params: Mapping[str, Any] | None = None,
    libraries: Iterable[str] = (),
    code: Iterable[str] = (),
) -> StageKey:
    """The key of stage ``stage``'s output (see the module docstring for why each part is there).

    Parameters
    ----------
    stage : the stage's name; two stages never share a key, even with equal inputs.
    inputs : what the stage reads: name -> a fingerprint (:func:`fingerprint`, :func:`texts_fingerprint`, a file's
        SHA-256) or the upstream stage's StageKey.
    params : the settings that change its output.
    libraries : the distributions it calls (their installed versions are taken).
    code : the ``pipeline.*`` modules it runs; those they import are added (:func:`module_closure`).

    Returns a StageKey; ``key.digest`` (SHA-256 hex) is what a store files the output under. Raises ValueError,
    when the digest is first computed, for a module of ``code`` (or one imported by it) with no source file, so a
    renamed module is an error, not a key that silently hashes nothing.
    """
    return StageKey(stage, inputs or {}, params or {}, libraries, code)


def module_file(module: str) -> Path:
    """The source file of project module ``module`` (``pipeline.a.b`` -> pipeline/a/b.py or pipeline/a/b/__init__.py)
    under PACKAGE_FOLDER. Raises ValueError when it is not a project module or has no source file."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        raise ValueError(f"{module!r} is not a module of the {PACKAGE} package")
    base = PACKAGE_FOLDER.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise ValueError(f"no source file for module {module!r} under {PACKAGE_FOLDER} (renamed or removed?)")


def _is_module(module: str) -> bool:
    try:
        module_file(module)
    except ValueError:
        return False
    return True


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    """``tree`` with the docstring of the module and of every class and function removed (in place)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


def _imported_modules(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The project modules ``module``'s syntax tree imports, anywhere in it (inside functions too), with their parent
    packages (whose ``__init__`` runs on import). ``from pipeline.a import b`` gives pipeline.a.b when that is a
    module, else pipeline.a; relative imports are resolved against ``module``."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names = [base]
            names += [f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}")]
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                parts = name.split(".")
                found.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
    return found


@functools.cache
def _module_code(module: str) -> tuple[str, frozenset[str]]:
    """(SHA-256 hex of ``module``'s syntax tree without docstrings, the project modules it imports). Read once per
    process: the code a process runs is the code it imported. Raises ValueError as :func:`module_file`, and
    SyntaxError for a file that does not parse."""
    path = module_file(module)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    imports = _imported_modules(tree, module, path.name == "__init__.py")
    dump = ast.dump(_strip_docstrings(tree), annotate_fields=True, include_attributes=False)
    return hashlib.sha256(dump.encode("utf-8")).hexdigest(), frozenset(imports - {module})


def module_closure(modules: Iterable[str]) -> list[str]:
    """``modules``, their parent packages and every project module they import, directly or not, sorted. Raises
    ValueError as :func:`module_file`."""
    seen: set[str] = set()
    pending = list(modules)
    while pending:
        module = pending.pop()
        if module not in seen:
            seen.add(module)
            parts = module.split(".")
            pending.extend(".".join(parts[:end]) for end in range(1, len(parts)))  # parents run on import too
            pending.extend(_module_code(module)[1])
    return sorted(seen)


@functools.cache
def _closure_hash(modules: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for module in module_closure(modules):
        digest.update(f"{module}\0{_module_code(module)[0]}\0".encode())
    return digest.hexdigest()


def code_hash(modules: Iterable[str]) -> str:
    """SHA-256 hex of the code of ``modules`` and of every project module they import (:func:`module_closure`):
    each module's name and syntax tree without docstrings (``ast.dump`` without line numbers), so comments,
    docstrings and formatting do not count. Dynamic imports (``importlib.import_module``) are not seen. About
    0.1 s for the build's stages the first time in a process, then cached. Raises ValueError as :func:`module_file`."""
    return _closure_hash(tuple(sorted(set(modules))))
