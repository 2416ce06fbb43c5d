"""The ISM kernel family: closed forms against autograd, Φ contract for every kernel."""

import autograd.numpy as anp
import numpy as np
import pytest

import ldr
from ldr import kernels as K
from ldr.objectives import HSIC


@pytest.fixture
def wine_gamma():
    X, y = ldr.datasets.load("wine")
    idx = np.random.default_rng(0).choice(len(y), 70, replace=False)
    X, y = X[idx], y[idx]
    Y = np.eye(3)[y]
    F = Y - Y.mean(axis=0)
    return X, F @ F.T


BUILTIN = [K.Gaussian(), K.Gaussian(sigma=2.0), K.Polynomial(3, 1.0), K.Polynomial(2, 0.5),
           K.Linear(), K.Squared(), K.Multiquadric(1.5)]


@pytest.mark.filterwarnings("ignore:Output seems independent of input")
@pytest.mark.parametrize("kernel", BUILTIN, ids=repr)
def test_closed_form_derivatives_match_autograd(kernel):
    kernel.fit(np.random.default_rng(0).standard_normal((20, 3)))
    b = np.linspace(0.01, 3.0, 7)
    auto = K.Custom(kernel.f, kind=kernel.kind)
    np.testing.assert_allclose(kernel.df(b), auto.df(b), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel.d2f(b), auto.d2f(b), rtol=1e-12, atol=1e-14)


KERNELS = BUILTIN + [
    K.Custom(lambda b: 1.0 / (1.0 + b), kind="difference"),          # inverse quadratic
    K.Custom(lambda b: anp.tanh(0.1 * b + 1.0), kind="product"),     # sigmoid-like
    0.5 * K.Gaussian(2.0) + 2.0 * K.Polynomial(2),                   # conic combination
    K.Linear() + 0.3 * K.Squared(),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_check_passes_for_every_kernel(kernel, wine_gamma):
    X, G = wine_gamma
    report = ldr.check(HSIC(X, G, 3, kernel=kernel), random_state=1)
    assert report.ok, str(report)
    assert report["phi"].ok and report["invariance"].ok


def test_gaussian_phi_matches_the_papers_formula(wine_gamma):
    X, G = wine_gamma
    obj = HSIC(X, G, 2, kernel=K.Gaussian(1.7))
    W = obj.heuristic()
    Kw = obj.gram(W)
    P = G * Kw
    L = np.diag(P.sum(axis=1)) - P
    np.testing.assert_allclose(obj.phi(W), X.T @ L @ X / 1.7**2, rtol=1e-10, atol=1e-12)
    # cost is −tr(Γ K)
    assert obj.cost(W) == pytest.approx(-np.trace(G @ Kw), rel=1e-12)


def test_phi0_is_phi_at_the_taylor_point(wine_gamma):
    X, G = wine_gamma
    for kernel in [K.Gaussian(3.0), K.Polynomial(2, 1.0), K.Multiquadric(2.0)]:
        obj = HSIC(X, G, 2, kernel=kernel)
        # β → 0 as W shrinks: Φ(εW) → Φ₀ (f′(β) → f′(0))
        W = obj.heuristic()
        Phi_small = HSIC(X * 1e-5, G, 2, kernel=kernel).phi(W)
        Phi0_small = HSIC(X * 1e-5, G, 2, kernel=kernel).phi0()
        np.testing.assert_allclose(Phi_small, Phi0_small, rtol=1e-6, atol=1e-20)
        L = np.diag(G.sum(axis=1)) - G
        f0 = float(kernel.df(np.zeros(1))[0])
        expected = -f0 * X.T @ G @ X if kernel.kind == "product" else -2 * f0 * X.T @ L @ X
        np.testing.assert_allclose(obj.phi0(), expected, rtol=1e-10, atol=1e-12)


def test_gaussian_sigma_defaults_to_median_distance():
    X = np.random.default_rng(0).standard_normal((30, 4))
    k = K.Gaussian().fit(X)
    d = np.linalg.norm(X[:, None] - X[None], axis=-1)[np.triu_indices(30, 1)]
    assert k.sigma == pytest.approx(np.median(d))
    k2 = K.Gaussian(0.5).fit(X)
    assert k2.sigma == 0.5


def test_bad_kernels():
    with pytest.raises(ValueError, match="sigma"):
        K.Gaussian(sigma=0.0)
    with pytest.raises(ValueError, match="sigma"):
        K.Gaussian(sigma=-1.0)
    with pytest.raises(ValueError, match="kind"):
        K.Custom(lambda b: b, kind="other")
    with pytest.raises(ValueError, match=">= 0"):
        -1.0 * K.Gaussian(1.0) + K.Linear()
    with pytest.raises(ValueError, match="kernel"):
        K.make_kernel("laplacian")


def test_gaussian_cross_is_the_gaussian_kernel_between_two_row_sets():
    """exp(−‖a_i − b_j‖²/2σ²) by one product in place, against scipy's distances and the
    kernel's own f(β), including rows far apart (underflow to 0, never above 1)."""
    from scipy.spatial.distance import cdist

    from ldr.kernels.family import beta
    from ldr.kernels.features import gaussian_cross

    rng = np.random.default_rng(0)
    A = rng.standard_normal((70, 3))
    B = np.vstack([rng.standard_normal((20, 3)), [[40.0, 0.0, 0.0]]])
    g = K.Gaussian(sigma=0.8)
    got = gaussian_cross(A, B, g.s2)
    np.testing.assert_allclose(got, np.exp(-cdist(A, B, "sqeuclidean") / g.s2), atol=1e-14)
    np.testing.assert_allclose(got, g.f(beta(g.kind, B, A)), atol=1e-14)
    assert got.max() <= 1.0 and got[:, -1].max() == 0.0


def test_equal_rows_are_grouped_in_numpys_order():
    """The groups of equal rows from value codes are np.unique(axis=0)'s, numbered in the
    same (lexicographic) order, for class columns centered, scaled and with a value that
    first appears past the rows the codes are read from; None past the cap."""
    from ldr.kernels.groups import code_groups, value_codes
    from ldr.kernels.tiles import class_groups

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 3000)
    y[2500:] = 4                                    # a class the first rows do not hold
    F = np.eye(5)[y] - np.eye(5)[y].mean(axis=0)
    F = np.column_stack([F * rng.standard_normal(5), rng.integers(0, 2, 3000)])
    uniq, inv = np.unique(F, axis=0, return_inverse=True)
    gid, first = code_groups([value_codes(F[:, j], 64) for j in range(F.shape[1])], 3000, 64)
    np.testing.assert_array_equal(gid, inv.reshape(-1))
    np.testing.assert_array_equal(F[first], uniq)
    assert code_groups([value_codes(F[:, j], 64) for j in range(F.shape[1])], 3000, 5) is None
    assert value_codes(rng.standard_normal(3000), 64) is None
    s = rng.standard_normal(F.shape[1])
    order, bounds, sorted_gid, G = class_groups(F, s)
    np.testing.assert_array_equal(sorted_gid, inv.reshape(-1)[order])
    np.testing.assert_allclose(G, (uniq * s) @ uniq.T)
    assert np.all(np.diff(sorted_gid) >= 0) and bounds[-1] == 3000
