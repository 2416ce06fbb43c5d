"""NCA's hot loop without its overhead: the shortcuts change no iterate.

The small tables' fits are mostly fixed cost per iteration, so the L-BFGS step writes its
two-loop recursion out on a NumPy factor, keeps a Euclidean factor's memory pairs
untransported, measures the step without ``np.linalg.norm``'s dispatch, and the softmax skips
the empty products at the ends of the class blocks.  Each shortcut must do the same
arithmetic as the general path: a fit with all of them switched back must agree to the last
bit (point, iterations, reason and every cost of the trace) — not to a tolerance, since a
rounding difference would change the path of a run that ends on NCA's relative-progress
stop.
"""

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

import ldr.estimators as est
import ldr.objectives.pairwise as pairwise
from ldr.data import arrays
from ldr.manifolds import Euclidean
from ldr.solvers import LBFGS


def _reference_split_products(K, R_same, R_other, blocks):
    """The two-part sums of every block, the empty products at the ends included (the code
    before the shortcut)."""
    same = np.empty((K.shape[0], R_same.shape[1]))
    other = np.empty((K.shape[0], R_other.shape[1]))
    for b in blocks:
        same[b] = K[b, b] @ R_same[b]
        other[b] = K[b, :b.start] @ R_other[:b.start] + K[b, b.stop:] @ R_other[b.stop:]
    return same, other


def _general_paths(monkeypatch):
    """Every shortcut switched back to the general code."""
    monkeypatch.setattr(LBFGS, "written_out", False)
    monkeypatch.setattr(Euclidean, "transport_is_identity", False)
    monkeypatch.setattr(arrays, "frobenius", np.linalg.norm)
    monkeypatch.setattr(pairwise, "_split_products", _reference_split_products)


def _statsmodels(name, label):
    data = pytest.importorskip(f"statsmodels.datasets.{name}").load_pandas().data.dropna()
    return data.drop(columns=[label]).to_numpy(float), data[label].to_numpy()


TABLES = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "spector": lambda: _statsmodels("spector", "GRADE"),
    "ccard": lambda: _statsmodels("ccard", "OWNRENT"),
}


@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("solver", [None, "lbfgs"])
def test_nca_fit_is_the_same_to_the_last_bit_without_the_shortcuts(table, solver, monkeypatch):
    X, y = TABLES[table]()
    X = StandardScaler().fit_transform(X)
    fast = est.NCA(2, solver=solver).fit(X, y)
    with monkeypatch.context() as m:
        _general_paths(m)
        general = est.NCA(2, solver=solver).fit(X, y)
    assert fast.n_iter_ == general.n_iter_ > 2
    np.testing.assert_array_equal(fast.components_, general.components_)
    assert fast.result_.reason == general.result_.reason
    assert fast.result_.converged == general.result_.converged
    for key in ("cost", "grad_norm", "change"):
        np.testing.assert_array_equal([row[key] for row in fast.result_.trace],
                                      [row[key] for row in general.result_.trace])


def test_lbfgs_written_out_recursion_equals_the_geometry_one():
    rng = np.random.default_rng(0)
    geom, solver = Euclidean(7, 3), LBFGS()
    pairs = [solver._pair(geom, rng.standard_normal((7, 3)), rng.standard_normal((7, 3)))
             for _ in range(6)]
    pairs = [(s, s + 0.1 * y, rho, yy) for s, y, rho, yy in pairs]  # mostly positive curvature
    pairs = [solver._pair(geom, s, y) for s, y, _, _ in pairs]
    assert sum(rho > 0 for _, _, rho, _ in pairs) >= 3
    g = rng.standard_normal((7, 3))
    eta, used = solver._direction(geom, g, pairs)
    general = LBFGS()
    general.written_out = False
    eta_general, used_general = general._direction(geom, g, pairs)
    assert used == used_general
    np.testing.assert_array_equal(eta, eta_general)


@pytest.mark.parametrize("sizes", [(5, 9, 4), (12,), (3, 3)])
def test_split_products_without_the_empty_ends_equals_the_two_part_sums(sizes):
    rng = np.random.default_rng(1)
    n = sum(sizes)
    ends = np.cumsum(sizes)
    blocks = [slice(int(e - s), int(e)) for s, e in zip(sizes, ends)]
    K = rng.random((n, n))
    R1, R2 = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    for got, want in zip(pairwise._split_products(K, R1, R2, blocks),
                         _reference_split_products(K, R1, R2, blocks)):
        np.testing.assert_array_equal(got, want)


def test_step_change_equals_numpys_norm():
    rng = np.random.default_rng(2)
    part = Euclidean(6, 2)
    for dtype in (np.float64, np.float32):
        M, N = (rng.standard_normal((6, 2)).astype(dtype) for _ in range(2))
        size = max(np.linalg.norm(M), np.linalg.norm(N), 1e-300)
        assert part.change(M, N) == float(np.linalg.norm(N - M) / size)
