"""One registry feeds the command line, LinearDR and the docs: every method is reachable from
each, and a new method needs nothing but its own module."""

import importlib
import pkgutil

import autograd.numpy as anp
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import ldr
import ldr.estimators as est
import ldr.objectives
from ldr.cli import commands as cli
from ldr.core.objective import Method, declared_method
from ldr.driver import registry


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X[::3]), y[::3]


def test_every_objective_is_a_method_or_says_why_not():
    for name in ldr.objectives.__all__:
        cls = getattr(ldr.objectives, name)
        assert (declared_method(cls) is not None) != (name in registry.NOT_METHODS), name
    assert set(registry.NOT_METHODS) <= set(ldr.objectives.__all__)


def test_every_objective_module_is_exported():
    """ldr.objectives finds its modules by listing the package: every objective class of a
    public module's ``__all__`` is exported, so a new method is one new file."""
    exported = 0
    for info in pkgutil.iter_modules(ldr.objectives.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"ldr.objectives.{info.name}")
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, ldr.Objective):
                assert getattr(ldr.objectives, name) is value
                exported += 1
            else:  # a helper function of the module stays in its module
                assert name not in ldr.objectives.__all__
    assert exported == len(ldr.objectives.__all__)


def test_names_are_unique_and_lower_case():
    names = registry.names()
    assert names == sorted(set(names)) and all(n == n.lower() for n in names)
    assert set(registry.names(chunked=True)) == {"cca", "fa", "lda", "maf", "pca", "ppca",
                                                 "sfa", "tcca"}


@pytest.mark.parametrize("name", registry.names())
def test_reachable_from_the_command_line(name):
    parser_choices = cli._parser()._subparsers._group_actions[0].choices["compare"]
    method_action = next(a for a in parser_choices._actions if a.dest == "method")
    assert name in method_action.choices
    assert registry.METHODS[name].method.summary in cli._parser().epilog


@pytest.mark.parametrize("name", registry.names())
def test_reachable_from_linear_dr(name, iris):
    """LinearDR(name) and LinearDR(class name) build the method and fit; the answer is the
    objective's own solve from the same start."""
    X, y = iris
    cls = registry.get(name)
    labels = cls.method.labels
    if labels is not None:  # a second view / regression target made of the classes
        Y = np.eye(3)[y]
        y = Y if labels == "onehot" else Y[:, :-1]
    fit = est.LinearDR(name, n_components=1, max_iter=300).fit(X, y)  # HVPs count
    again = est.LinearDR(cls.__name__, n_components=1, max_iter=300).fit(X, y)
    assert fit.cost_ == again.cost_
    assert fit.objective_.method is cls.method


def test_docs_table_lists_every_method():
    text = registry.rst_table()
    for row in registry.table():
        assert f"``{row['method']}``" in text and row["objective"] in text
    import pathlib

    docs = pathlib.Path(__file__).resolve().parents[1] / "docs"
    assert "registry.rst_table()" in (docs / "conf.py").read_text(encoding="utf-8")
    assert ".. include:: methods_table.rst" in (docs / "concepts.rst").read_text(
        encoding="utf-8")


def test_a_new_method_is_reachable_everywhere_without_other_edits(monkeypatch, capsys, iris):
    """A method added as one class with a Method declaration (here registered by hand, as
    ldr.driver.registry does for every class of ldr.objectives) reaches the command line, LinearDR
    and the docs' table."""

    class SparsePCA(ldr.Objective):
        """−tr(MᵀCM) + λ Σ|M|, smoothed."""

        method = Method("spca", "sparse PCA, −tr(MᵀCM) + 0.1 Σ √(M² + 1e-6)")
        manifold = "stiefel"

        def __init__(self, X, r):
            Xc = X - X.mean(axis=0)
            self.C, self.shape = Xc.T @ Xc / len(X), (X.shape[1], r)

        def cost(self, M):
            return -anp.trace(M.T @ self.C @ M) + 0.1 * anp.sum(anp.sqrt(M**2 + 1e-6))

    monkeypatch.setitem(registry.METHODS, "spca", SparsePCA)
    assert cli.main(["compare", "--method", "spca", "--data", "iris", "--starts", "1",
                     "--solvers", "trust-region"]) == 0
    assert "SPCA on iris" in capsys.readouterr().out
    X, _ = iris
    fit = est.LinearDR("spca", n_components=2).fit(X)
    direct = ldr.solve(SparsePCA(X, 2), "trust-region", start="random", random_state=0)
    assert fit.result_.converged and fit.cost_ <= direct.cost + 1e-8 * abs(direct.cost)
    assert "``spca``" in registry.rst_table()
