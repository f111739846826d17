"""A real package: the wheel built from this tree holds the files the code reads (package data), and an install of it
outside the checkout finds them there, not in the checkout.

The wheel is built from a copy of the package folders (so the build writes nothing into the checkout) and installed,
without its dependencies, into a fresh virtual environment whose ``.pth`` file lends it this interpreter's
site-packages (the dependencies: bertopic, streamlit, ...). The install's interpreter runs from a temporary folder,
with no PYTHONPATH, so the checkout is not importable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from pipeline.runtime.parquet import read_frame
from tests.conftest import ICLR2025, needs_shared

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "pipeline", "dashboard", "topic_atlas", "data", ".streamlit")
PACKAGE_DATA = {
    "pipeline/resources/iclr_primary_areas.csv": ROOT / "data" / "collections" / "iclr_primary_areas.csv",
    "pipeline/resources/iclr2025_seed_abstracts.txt": ROOT / "data" / "sample" / "iclr2025_seed_abstracts.txt",
    "dashboard/streamlit_config.toml": ROOT / ".streamlit" / "config.toml",
    "dashboard/components/scatter/build/bundle.js": ROOT
    / "dashboard"
    / "components"
    / "scatter"
    / "build"
    / "bundle.js",
}
pytestmark = pytest.mark.slow  # builds a wheel and a virtual environment (about 15 s)

PROBE = """
import json, topic_atlas, pipeline
from pipeline.runtime import paths
from pipeline.quality.coverage import CROSSWALK_PATH, load_crosswalk
from pipeline.operations.build import default_input
from topic_atlas.serving import page_script, streamlit_options
print(json.dumps({
    "modules": [pipeline.__file__, topic_atlas.__file__],
    "in_checkout": paths.IN_CHECKOUT,
    "project_root": str(paths.PROJECT_ROOT),
    "crosswalk": [str(CROSSWALK_PATH), len(load_crosswalk())],
    "sample": str(default_input()),
    "page": [str(page_script()), page_script().is_file()],
    "options": streamlit_options(),
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this tree, built without build isolation (offline) from a copy of its package folders."""
    source = tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "frontend", "node_modules")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out)]
    built = subprocess.run(command + [str(source)], capture_output=True, text=True, timeout=300, cwd=out)
    assert built.returncode == 0, built.stderr[-3000:]
    return next(out.glob("topic_atlas-*.whl"))


def test_the_wheel_holds_the_files_the_code_reads(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for inside, original in PACKAGE_DATA.items():
            assert inside in names, f"{inside} is not in {wheel.name}"
            assert archive.read(inside) == original.read_bytes(), f"{inside} differs from {original}"
        assert "topic_atlas/serving.py" in names and "dashboard/app.py" in names
        assert not any(name.startswith(("tests/", "bench/", "data/")) for name in names)
        assert "topic-atlas = topic_atlas.cli:main" in archive.read(
            next(name for name in names if name.endswith("entry_points.txt"))
        ).decode("utf-8")


def installed_environment(wheel: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh virtual environment ``tmp_path/venv`` with ``wheel`` installed (its dependencies lent by this
    interpreter's site-packages): its python and an environment without PYTHONPATH."""
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(environment)
    python = environment / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    clean = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "-q", str(wheel)], capture_output=True, text=True, env=clean
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return python, clean


def test_an_install_outside_the_checkout_finds_its_package_data(wheel: Path, tmp_path: Path):
    python, clean = installed_environment(wheel, tmp_path)
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    probe = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, cwd=work, env=clean, timeout=300)
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    assert all(Path(module).is_relative_to(site) for module in found["modules"]), found["modules"]
    assert not found["in_checkout"] and found["project_root"] == str(work)  # caches/ and .cache/ go here
    assert Path(found["crosswalk"][0]).is_relative_to(site) and found["crosswalk"][1] > 0
    assert Path(found["sample"]).is_relative_to(site)
    assert Path(found["page"][0]).is_relative_to(site) and found["page"][1]
    assert ["--client.showErrorDetails", "none"] == found["options"][
        found["options"].index("--client.showErrorDetails") :
    ][:2]
    command = subprocess.run(
        [python.parent / "topic-atlas", "--help"], capture_output=True, text=True, cwd=work, env=clean
    )
    assert command.returncode == 0 and "build" in command.stdout, command.stderr[-2000:]
    assert "share" in command.stdout  # the command line's own command, beside the pipeline's (topic_atlas.cli)
    assert not (site / ".cache").exists() and not (site / "caches").exists()  # nothing written beside the modules
    assert {path.name for path in work.iterdir()} <= {".cache"}  # the command's log, in the folder it ran in


USE = """
import json, sys
import pandas as pd
import topic_atlas as ta
from streamlit.testing.v1 import AppTest
from topic_atlas.serving import page_script

papers = pd.read_csv(sys.argv[1])
ta.Atlas.fit(papers, "scratch").save("from-api")
atlas = ta.Atlas.load("from-api")
import os
os.environ["ATLAS_CACHE"] = str(atlas.folder)
page = AppTest.from_file(str(page_script()), default_timeout=120).run()
print(json.dumps({
    "module": ta.__file__,
    "papers": len(atlas.documents),
    "topics": int((atlas.topics["topic"] >= 0).sum()),
    "errors": [item.value for item in page.exception] + [item.value for item in page.error],
    "captions": [item.value for item in page.caption][:3],
}))
"""


def test_an_install_builds_fits_and_serves_outside_the_checkout(wheel: Path, tmp_path: Path):
    """Issue 39's "Done when": in a fresh environment outside the checkout, ``topic-atlas build`` and
    ``ta.Atlas.fit(...).save(...)`` work on 300 real abstracts, and the page serves the saved folder (AppTest of the
    installed page script)."""
    needs_shared(ICLR2025)
    python, clean = installed_environment(wheel, tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    papers = read_frame(ICLR2025, columns=["openreview_id", "title", "abstract"]).sample(300, random_state=5)
    papers.to_csv(work / "papers.csv", index=False)
    built = subprocess.run(
        [python.parent / "topic-atlas", "build", "--input", "papers.csv", "--cache", "from-cli"],
        capture_output=True,
        text=True,
        cwd=work,
        env=clean,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert (work / "from-cli" / "manifest.json").is_file()
    used = subprocess.run(
        [python, "-c", USE, "papers.csv"], capture_output=True, text=True, cwd=work, env=clean, timeout=600
    )
    assert used.returncode == 0, used.stderr[-3000:]
    found = json.loads(used.stdout.strip().splitlines()[-1])
    assert Path(found["module"]).is_relative_to(tmp_path / "venv")
    assert found["papers"] >= 290 and found["topics"] >= 2  # a placeholder or a copy among them is set apart
    assert found["errors"] == []
    assert any(f"{found['papers']} papers" in caption for caption in found["captions"]), found["captions"]
