"""The notebooks execute, and their stored outputs are those of the current code.

The teaching notebooks assert what their figures claim (PCA's improvement is 0, LDA's is never
negative, the solvers reach 1e-8, ...), so a notebook that runs is a notebook whose claims hold.
The outputs stored in each notebook (which the docs render) must be a small-size execution of
its current code cells against the current library: its stamp is checked, and a fresh execution
must print the same numbers within the tolerances of ``notebooks/make_figures.py``.
"""

import importlib.util
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

HERE = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
RERUN = "rerun `python -P notebooks/make_figures.py {}` and commit the notebook"


def _make_figures():
    spec = importlib.util.spec_from_file_location("make_figures", HERE / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_figures = _make_figures()


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_current(path):
    """The stamp names a small-size run of this code against these library modules."""
    nb = nbformat.read(path, as_version=4)
    stamp = nb.metadata.get("ldr")
    rerun = RERUN.format(path.name[:2])
    assert stamp, f"{path.name} has no execution stamp: {rerun}"
    assert stamp["scale"] == "small", f"{path.name} stores a {stamp['scale']}-size run: {rerun}"
    assert stamp["code"] == make_figures.code_hash(nb), (
        f"{path.name}: its code cells changed after its outputs were stored: {rerun}")
    assert stamp["library"] == make_figures.library_hash(stamp["modules"]), (
        f"{path.name}: the library code it uses changed after its outputs were stored: {rerun}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_as_stored(path, monkeypatch, tmp_path):
    """A fresh small-size run has no error, saves its figures and prints the stored numbers."""
    monkeypatch.setenv("LDR_SAVE_FIGURES", str(tmp_path))
    monkeypatch.setenv("LDR_NOTEBOOK_SCALE", "small")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the inline figures are compared too
    stored = nbformat.read(path, as_version=4)
    fresh, modules, _ = make_figures.execute(path, "small")
    errors = [out for cell in fresh.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    if not path.name.startswith("00_"):  # the teaching notebooks feed the README's gallery
        saved = sorted(p.name for p in tmp_path.glob("*.png"))
        assert path.stem + ".png" in saved
        assert all(name.startswith(path.stem) for name in saved)
    assert sorted(modules) == sorted(stored.metadata.get("ldr", {}).get("modules", [])), (
        f"{path.name} now uses other library modules: {RERUN.format(path.name[:2])}")
    drift = make_figures.differences(stored, fresh)
    assert not drift, (f"{path.name}'s stored outputs differ from a fresh run "
                       f"({RERUN.format(path.name[:2])}):\n" + "\n".join(drift[:20]))
