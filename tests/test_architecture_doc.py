"""The documents stay true to the tree: docs/architecture.md names every module of pipeline/, dashboard/ and
topic_atlas/, and the README stays short enough to read (at most 150 lines; the rest lives in docs/)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGES = ("pipeline", "dashboard", "topic_atlas")
README_MAX_LINES = 150


def doc_blocks(text: str) -> list[str]:
    """The doc's paragraphs (split at blank lines), a table's rows each a block of its own, each block joined with
    the one before it, so that a list's items see the sentence that introduces them ("`pipeline/operations/` holds
    ...:")."""
    blocks: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = paragraph.splitlines()
        is_table = bool(lines) and all(line.lstrip().startswith("|") for line in lines)
        blocks.extend(lines if is_table else [paragraph])
    return [previous + "\n" + block for previous, block in zip([""] + blocks, blocks)]


def is_named(module: Path, text: str, blocks: list[str]) -> bool:
    """Whether the doc names ``module``: its path (``pipeline/ingest/corpus.py``), its path inside its package
    (``ingest/corpus.py``; a module at a package's top needs its whole path), or its file name in a block that
    names its folder (``dashboard/views/`` ... ``map.py``)."""
    path = module.relative_to(ROOT).as_posix()
    inner = path.partition("/")[2]
    if path in text or ("/" in inner and re.search(r"(?<![\w/])" + re.escape(inner) + r"\b", text)):
        return True
    folder = module.parent.relative_to(ROOT).as_posix()
    folders = {folder + "/", folder.partition("/")[2] + "/"} - {"/"}
    name = re.compile(r"(?<![\w/.])" + re.escape(module.name) + r"\b")
    return any(name.search(block) and any(f"`{each}" in block for each in folders) for block in blocks)


def test_every_module_is_named_in_the_architecture_doc():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    blocks = doc_blocks(text)
    modules = [
        module
        for package in PACKAGES
        for module in sorted((ROOT / package).rglob("*.py"))
        if module.name != "__init__.py" and "node_modules" not in module.parts
    ]
    assert len(modules) > 100  # the walk found the tree
    missing = [module.relative_to(ROOT).as_posix() for module in modules if not is_named(module, text, blocks)]
    assert not missing, f"docs/architecture.md does not name {missing}: add one line each saying its job"


def test_the_rule_finds_a_module_only_where_its_folder_is_named():
    module = ROOT / "dashboard" / "views" / "map.py"
    assert is_named(module, "`dashboard/views/map.py`", [])
    assert is_named(module, "x", doc_blocks("| `dashboard/views/` | `map.py` (the map) |"))
    assert not is_named(module, "x", doc_blocks("| `dashboard/figures/` | `map.py` (the map) |"))
    assert not is_named(module, "x", doc_blocks("`dashboard/views/` holds views.\n\nThen.\n\nAnd `map.py` there."))
    assert not is_named(ROOT / "topic_atlas" / "atlas.py", "`pipeline/atlas.py`", [])


def test_the_readme_stays_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move the detail into docs/ and link it"
    )
