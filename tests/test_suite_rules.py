"""The suite's own rules, read from its source with ``ast`` (issue 37, tests that pass on any machine):

- every test states an assertion that can fail;
- no fixed pauses: no ``wait_for_timeout``, and ``time.sleep`` only inside a loop that waits for a condition;
- no wall-clock or page-fault asserts (speed and memory live in ``bench/``);
- no silent skips: a missing file of ../shared or a missing program fails in one line (tests/conftest.py), and a
  skip is left only for a platform the code does not support (``skipif`` on ``sys.platform``).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TEST_FILES = sorted(TESTS.glob("test_*.py"))
# pytest's and numpy's/pandas' own checks, besides ``assert`` statements.
CHECK_CALLS = frozenset({"raises", "fail", "warns"})
CLOCKS = frozenset({"monotonic", "perf_counter", "time", "process_time", "monotonic_ns", "perf_counter_ns"})
FAULT_COUNTS = frozenset({"ru_minflt", "ru_majflt"})


def call_name(call: ast.Call) -> str:
    """The called function's own name: ``f`` for ``f(...)`` and ``a.b.f(...)``; "" for anything else."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else ""


def checks_something(function: ast.AST) -> bool:
    """Whether ``function``'s body asserts: an ``assert``, pytest.raises/fail/warns, an ``assert_*`` call (numpy,
    pandas), or a call of a helper named ``check*`` (this suite's helpers that assert)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name in CHECK_CALLS or name.startswith(("assert", "check")):
                return True
    return False


def collected_tests(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    """The module's test functions, also those of its test classes."""
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if isinstance(member, ast.FunctionDef) and member.name.startswith("test"):
                yield member


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def is_clock_call(node: ast.AST) -> bool:
    """``time.monotonic()``, ``time.perf_counter()``, ``time.time()`` and the like."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLOCKS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "time"
    )


def clock_names(function: ast.AST) -> set[str]:
    """Names assigned from a clock reading, or from arithmetic on one, in ``function``."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(is_clock_call(sub) for sub in ast.walk(node.value)):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def timed_asserts(function: ast.AST) -> list[int]:
    """Lines of ``assert`` statements that read a clock or a page-fault count, directly or through a name."""
    names = clock_names(function)
    lines = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Assert):
            continue
        for sub in ast.walk(node.test):
            reads_clock = is_clock_call(sub) or (isinstance(sub, ast.Name) and sub.id in names)
            if reads_clock or (isinstance(sub, ast.Attribute) and sub.attr in FAULT_COUNTS):
                lines.append(node.lineno)
                break
    return lines


def sleeps_outside_loops(tree: ast.Module) -> list[int]:
    """Lines of ``time.sleep`` calls that are not inside a ``while`` or ``for`` loop (a fixed pause)."""
    in_loop: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.While | ast.For):
            in_loop |= {id(sub) for sub in ast.walk(node)}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and call_name(node) == "sleep" and id(node) not in in_loop
    ]


def skips(tree: ast.Module) -> list[int]:
    """Lines that skip tests other than on ``sys.platform``: pytest.skip, importorskip, and skipif on anything else."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name in ("skip", "importorskip"):
            lines.append(node.lineno)
        elif name == "skipif" and "sys.platform" not in ast.unparse(node.args[0] if node.args else node):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda path: path.name)
def test_every_test_asserts_something(path: Path):
    silent = [function.name for function in collected_tests(parsed(path)) if not checks_something(function)]
    assert silent == [], f"{path.name}: tests with no assertion that can fail: {silent}"


@pytest.mark.parametrize("path", [*TEST_FILES, TESTS / "conftest.py", TESTS / "streamlit_server.py"], ids=str)
def test_no_fixed_pauses_and_no_clock_or_fault_asserts(path: Path):
    tree = parsed(path)
    pauses = [
        node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and call_name(node) == "wait_for_timeout"
    ]
    assert pauses == [], f"{path.name}: fixed pauses at lines {pauses}; wait for the condition instead"
    assert sleeps_outside_loops(tree) == [], f"{path.name}: time.sleep outside a loop that waits for a condition"
    timed = [line for function in collected_tests(tree) for line in timed_asserts(function)]
    assert timed == [], f"{path.name}: asserts on a clock or page-fault count at lines {timed}; measure in bench/"


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda path: path.name)
def test_nothing_is_skipped_silently(path: Path):
    assert skips(parsed(path)) == [], (
        f"{path.name}: skips at lines {skips(parsed(path))}; a missing file or program must fail in one line "
        "(tests/conftest.py: needs_shared, needs_program)"
    )


def test_the_rules_catch_what_they_forbid():
    """Each rule flags a small example of what it forbids, and passes its fixed form."""
    silent = parsed_source("def test_a(page):\n    page.wait_for_url('x')\n")
    assert [f.name for f in collected_tests(silent) if not checks_something(f)] == ["test_a"]
    timed = parsed_source(
        "import time\ndef test_b():\n    started = time.monotonic()\n    assert time.monotonic() - started < 5\n"
    )
    assert timed_asserts(next(collected_tests(timed))) == [4]
    faults = parsed_source("def test_c(usage):\n    assert usage.ru_minflt < 100\n")
    assert timed_asserts(next(collected_tests(faults))) == [2]
    paused = parsed_source("import time\ndef f():\n    time.sleep(1)\n    while x():\n        time.sleep(0.01)\n")
    assert sleeps_outside_loops(paused) == [3]
    skipping = parsed_source(
        "import sys, pytest\n@pytest.mark.skipif(sys.platform != 'linux', reason='x')\ndef test_d():\n    pass\n"
        "@pytest.mark.skipif(not HAVE, reason='y')\ndef test_e():\n    pytest.skip('z')\n"
    )
    assert skips(skipping) == [5, 7]


def parsed_source(source: str) -> ast.Module:
    return ast.parse(source)


LEFT_BEHIND_PROBE = """
import os
from pathlib import Path


def test_the_browser_path_left_behind_is_none_or_a_file():
    left = os.environ.get("BROWSER_PATH")
    assert left is None or Path(left).is_file(), left
"""


def test_a_test_that_points_the_export_at_a_fake_browser_leaves_no_path_behind(tmp_path: Path):
    """The test that finds a fake browser on PATH, then a probe in the same process: the probe finds BROWSER_PATH
    unset or naming a file. (It named the deleted fake browser, and the next Chromium tests of that xdist worker
    found no browser: CI's stop 62, two failures that depended on which worker ran what.)"""
    probe = tmp_path / "test_probe.py"
    probe.write_text(LEFT_BEHIND_PROBE, encoding="utf-8")
    environment = {key: value for key, value in os.environ.items() if key != "BROWSER_PATH"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:xdist",
            "tests/test_adapters.py::test_a_browser_on_path_is_found_without_choreographer",
            str(probe),
        ],
        cwd=Path(__file__).resolve().parent.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and "2 passed" in result.stdout, result.stdout[-3000:]
