"""``import ldr`` and ``ldr --help`` stay light: the heavy dependencies load when used.

pymanopt's package init imports every autodiff backend it finds (PyTorch alone took 3.2 s and
hundreds of MB where installed), scikit-learn's estimator layer imports pandas, scipy.stats
takes up to a second and a half: none of them is needed to import ldr, to solve an objective
or to print the command line's help.  Each check runs in a fresh interpreter.
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("pymanopt", "torch", "jax", "tensorflow", "matplotlib", "dask", "distributed",
         "pandas", "sklearn", "scipy.stats", "tqdm")


def _loaded(code: str) -> list[str]:
    probe = (code + "\nimport json, sys\nprint(json.dumps(sorted(m for m in "
             f"{list(HEAVY)!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_ldr_loads_none_of_the_heavy_dependencies():
    assert _loaded("import ldr") == []


def test_solving_an_objective_loads_no_optional_backend():
    """Data validation uses scikit-learn's check_array (which imports pandas and scipy.stats);
    nothing else heavy."""
    code = ("import numpy as np, ldr\n"
            "from ldr.objectives.pca import PCA\n"
            "X = np.random.default_rng(0).standard_normal((50, 4))\n"
            "assert ldr.solve(PCA(X, 2)).converged")
    assert set(_loaded(code)) <= {"sklearn", "pandas", "scipy.stats"}


def test_the_command_lines_help_loads_none_of_them():
    code = ("from ldr.cli import commands as cli\n"
            "try:\n    cli.main(['compare', '--help'])\nexcept SystemExit:\n    pass")
    assert _loaded(code) == []


@pytest.mark.parametrize("name", ["objectives", "registry", "estimators", "kernels"])
def test_lazy_subpackages_load_on_first_use(name):
    code = f"import ldr, sys\nassert 'ldr.{name}' not in sys.modules\nldr.{name}"
    loaded = _loaded(code)
    # the estimators are scikit-learn estimators; the others need no heavy dependency
    assert set(loaded) <= ({"sklearn", "pandas", "scipy.stats"} if name == "estimators"
                           else set())


def test_a_custom_objective_imports_only_the_backend_it_names():
    """JAX and PyTorch are optional extras: imported by the objective that asks for one, the
    other never; autograd and hand-written ("numpy") objectives import neither."""
    base = ("import numpy as np, ldr, autograd.numpy as anp\n"
            "C = np.diag([3.0, 2.0, 1.0])\n")
    code = base + ("o = ldr.objective(lambda M: -anp.trace(M.T @ C @ M), shape=(3, 1))\n"
                   "n = ldr.objective(lambda M: -np.trace(M.T @ C @ M), shape=(3, 1), "
                   "backend='numpy', egrad=lambda M: -2 * C @ M)\n"
                   "assert ldr.check(o) and ldr.check(n)")
    assert not {"torch", "jax"} & set(_loaded(code))
    for backend, other in (("jax", "torch"), ("torch", "jax")):
        try:
            __import__(backend)
        except ImportError:
            continue
        xp = "jax.numpy" if backend == "jax" else "torch"
        code = base + (f"import {xp} as xp\n"
                       "C = xp.asarray(C) if hasattr(xp, 'asarray') else xp.tensor(C)\n"
                       "o = ldr.objective(lambda M: -xp.trace(M.T @ C @ M), shape=(3, 1), "
                       f"backend={backend!r})\n"
                       "assert round(ldr.solve(o).cost, 8) == -3.0")
        loaded = set(_loaded(code))
        assert backend in loaded and other not in loaded


def test_every_package_is_installed_by_a_non_editable_install():
    """setup.cfg's ``packages`` names every folder with an ``__init__.py`` (a package left
    out is missing from a wheel — ``pip install .`` — while an editable install still finds
    it: ldr.data and ldr.kernels were, once)."""
    import configparser
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    cfg = configparser.ConfigParser()
    cfg.read(root / "setup.cfg")
    listed = {p.strip() for p in cfg["options"]["packages"].replace(",", "\n").split()}
    dirs = {line.split("=")[1].strip(): line.split("=")[0].strip()
            for line in cfg["options"]["package_dir"].strip().splitlines()}
    found = set()
    for folder, package in dirs.items():
        for init in (root / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(root / folder).parts
            if "__pycache__" not in rel:
                found.add(".".join((package, *rel)))
    assert found <= listed, f"add to setup.cfg's packages: {sorted(found - listed)}"
