"""Every notebook in notebooks/ executes without error (small sizes; a few seconds each).

The teaching notebooks assert what their figures claim (PCA's improvement is 0, LDA's is never
negative, the solvers reach 1e-8, ...), so a notebook that runs is a notebook whose claims hold;
each saves its key figure when ``LDR_SAVE_FIGURES`` names a folder.
"""

import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, monkeypatch, tmp_path):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("LDR_SAVE_FIGURES", str(tmp_path))
    monkeypatch.delenv("LDR_NOTEBOOK_SCALE", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [out for cell in nb.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    if not path.name.startswith("00_"):  # the teaching notebooks feed the README's gallery
        assert [p.name for p in tmp_path.glob("*.png")] == [path.stem + ".png"]
    assert os.environ["MPLBACKEND"] == "Agg"
