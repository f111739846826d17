"""The tutorial notebook, docs/tutorial.ipynb: every cell executed in a real Jupyter kernel (nbclient), in a
temporary folder, over 300 real ICLR 2025 abstracts; and the notebook as stored carries no outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ICLR2025, needs_shared

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "tutorial.ipynb"


def test_the_notebook_is_stored_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


@pytest.mark.slow  # a real build of 300 abstracts and a BERTopic fit, in a kernel: about 30 s of CPU
def test_every_cell_of_the_tutorial_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    needs_shared(ICLR2025)
    monkeypatch.setenv("TUTORIAL_CORPUS", str(ICLR2025))  # the kernel inherits this process's environment
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError naming the cell and its traceback

    errors = [output for cell in notebook.cells for output in cell.get("outputs", []) if output.output_type == "error"]
    assert not errors
    assert (tmp_path / "iclr-300" / "documents.parquet").exists() and (tmp_path / "iclr-300-copy").is_dir()
    search = next(cell for cell in notebook.cells if "atlas.search(" in cell.source)
    assert "text/html" in search.outputs[0]["data"]  # the hits shown as a table
