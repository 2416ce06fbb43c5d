"""POT parity for Wasserstein discriminant analysis: POT's WDA tests (test/test_dr.py:
test_wda, test_wda_low_reg, test_wda_normalized) ported to ``WassersteinDA`` with a start
matrix passed (POT's ``P0``) — the facts they assert, on the data they use — plus POT's own
cost function as the reference for ``normalize``, and ``ldr.solve(..., orthonormalize=True)``."""

import types
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning

import ldr
from ldr.estimators import WassersteinDA
from ldr.manifolds import orthonormalize, sin_largest_angle
from ldr.objectives import WDA, OrthogonalCCA


def gaussrot(n: int, rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """POT's ``make_data_classif("gaussrot", n, nz=0.5, theta=0)``: labels 1 then 2 (n/2
    each), class 1 ~ N((−1, 1), 0.5 I), class 2 ~ N((1, −1), 0.5 I), drawn in that order."""
    y = np.floor(np.arange(n) * 2.0 / n) + 1
    x = np.zeros((n, 2))
    for label, mean in ((1, [-1.0, 1.0]), (2, [1.0, -1.0])):
        k = int(np.sum(y == label))
        x[y == label] = rng.randn(k, 2) * np.sqrt(0.5) + mean
    return x, y


def pot_data():
    """POT's test data: 100 samples of gaussrot plus 8 standard normal noise features, and
    test_wda_normalized's P0 (10×2 normal, each column divided by its sum), from
    RandomState(0) in POT's order."""
    rng = np.random.RandomState(0)
    xs, ys = gaussrot(100, rng)
    xs = np.hstack((xs, rng.randn(100, 8)))
    P0 = rng.randn(10, 2)
    P0 /= P0.sum(0, keepdims=True)
    return xs, ys, P0


# the discriminative direction of gaussrot: the class means differ along (1, −1, 0, ..., 0)
W_TRUE = np.r_[1.0, -1.0, np.zeros(8)] / np.sqrt(2.0)


def test_the_data_are_pots():
    ot = pytest.importorskip("ot")
    x, y = gaussrot(100, np.random.RandomState(0))
    xp, yp = ot.datasets.make_data_classif("gaussrot", 100, random_state=np.random.RandomState(0))
    np.testing.assert_array_equal(x, xp)
    np.testing.assert_array_equal(y, yp)


def check_pot_assertions(est, xs, p=2):
    """POT's assertions — ``projwda(xs)`` runs and ``np.sum(Pwda**2, 0) == 1`` — and the
    stronger facts behind them: orthonormal columns, the projection is (X − mean) P."""
    P = est.M_
    np.testing.assert_allclose(np.sum(P**2, 0), np.ones(p))
    np.testing.assert_allclose(P.T @ P, np.eye(p), atol=1e-10)
    Z = est.transform(xs)
    assert Z.shape == (len(xs), p) and np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z, (xs - xs.mean(axis=0)) @ P, atol=1e-10)


def start_ratio(est, xs, ys, P0):
    """The trace ratio at the orthonormalized start, under the fitted problem's reg."""
    obj = WDA(xs, ys, P0.shape[1], reg=est.reg_,
              normalize_at=P0 if est.normalize else None)
    return obj.ratio(orthonormalize(P0))


def test_wda():
    """POT's test_wda (p = 2, reg = 1, default Sinkhorn), with a random orthonormal P0."""
    xs, ys, _ = pot_data()
    P0 = orthonormalize(np.random.default_rng(1).standard_normal((10, 2)))
    est = WassersteinDA(2, start=P0).fit(xs, ys)
    check_pot_assertions(est, xs)
    assert est.result_.converged
    assert est.ratio_ > start_ratio(est, xs, ys, P0)
    # the subspace holds the classes' discriminative direction (POT's own answer: 0.957)
    assert np.linalg.norm(est.M_.T @ W_TRUE) > 0.95


def test_wda_low_reg():
    """POT's test_wda_low_reg (reg = 0.01, where POT needs ``sinkhorn_method=
    "sinkhorn_log"``: ldr switches to the log domain by itself)."""
    xs, ys, P0 = pot_data()
    est = WassersteinDA(2, reg=0.01, start=P0).fit(xs, ys)
    check_pot_assertions(est, xs)
    assert est.result_.converged and np.isfinite(est.ratio_)
    assert est.ratio_ > start_ratio(est, xs, ys, P0)
    assert set(est.pair_reg_.values()) == {0.01}


def test_wda_normalized():
    """POT's test_wda_normalized (P0 with columns summing to 1, not orthonormal;
    normalize=True)."""
    xs, ys, P0 = pot_data()
    est = WassersteinDA(2, start=P0, normalize=True).fit(xs, ys)
    check_pot_assertions(est, xs)
    assert est.result_.converged
    assert est.ratio_ > start_ratio(est, xs, ys, P0)
    assert np.linalg.norm(est.M_.T @ W_TRUE) > 0.95
    # POT's definition: reg × the mean squared distance between the two classes' samples
    # projected by P0 as given, within-class pairs included
    Xc = xs - xs.mean(axis=0)
    groups = [Xc[ys == c] @ P0 for c in (1, 2)]
    for (a, b), value in est.pair_reg_.items():
        expected = est.reg_ * np.mean(cdist(groups[a], groups[b], "sqeuclidean"))
        assert value == pytest.approx(expected, rel=1e-12)
    assert len({round(v, 6) for v in est.pair_reg_.values()}) == 3  # three distinct scales


def test_array_start_is_orthonormalized_and_used():
    """start=P0 (not orthonormal) starts from the orthonormal basis of its span: with no
    iterations the answer spans P0."""
    xs, ys, P0 = pot_data()
    assert np.abs(P0.T @ P0 - np.eye(2)).max() > 1.0  # far from orthonormal
    with pytest.warns(ConvergenceWarning):
        est = WassersteinDA(2, start=P0, max_iter=0).fit(xs, ys)
    np.testing.assert_allclose(est.M_.T @ est.M_, np.eye(2), atol=1e-12)
    assert sin_largest_angle(orthonormalize(P0), est.M_) < 1e-12
    assert est.ratio_ == pytest.approx(start_ratio(est, xs, ys, P0), rel=1e-12)


def test_bad_starts_and_normalize_are_clear_errors():
    xs, ys, P0 = pot_data()
    warnings.simplefilter("ignore", ConvergenceWarning)
    with pytest.raises(ValueError, match=r"normalize=True .* start=<array of shape \(10, 2\)>"):
        WassersteinDA(2, normalize=True).fit(xs, ys)
    with pytest.raises(ValueError, match="start: expected a finite array of shape"):
        WassersteinDA(2, start=P0[:5]).fit(xs, ys)
    with pytest.raises(ValueError, match="linearly dependent"):
        WassersteinDA(2, start=np.column_stack([P0[:, 0], 2 * P0[:, 0]])).fit(xs, ys)
    assert WassersteinDA(start=P0, max_iter=3).fit(xs, ys).n_components_ == 2  # p from P0
    with pytest.raises(ValueError, match="normalize: expected True or False"):
        WassersteinDA(2, start=P0, normalize="yes").fit(xs, ys)
    with pytest.raises(ValueError, match="no spread"):
        WDA(xs, ys, 2, normalize_at=np.zeros((10, 2)))


@pytest.mark.parametrize("normalize", [False, True])
def test_cost_equals_pots(normalize):
    """ldr's WDA cost is POT's: POT's ``wda`` minimizes L_w/L_b, ldr −L_b/L_w.  POT's cost
    function is taken from inside ``ot.dr.wda`` (a solver that records it) and evaluated at
    random orthonormal P; POT casts the classes to float32, hence rel 1e-6."""
    ot = pytest.importorskip("ot")
    pytest.importorskip("ot.dr")
    xs, ys, P0 = pot_data()

    class Record:
        def run(self, problem, initial_point=None):
            self.cost = problem.cost
            return types.SimpleNamespace(point=initial_point)

    record = Record()
    ot.dr.wda(xs.copy(), ys, 2, reg=1.0, solver=record, P0=P0, normalize=normalize)
    obj = WDA(xs, ys, 2, reg=1.0, normalize_at=P0 if normalize else None)
    rng = np.random.default_rng(0)
    for _ in range(3):
        P = orthonormalize(rng.standard_normal((10, 2)))
        assert -1.0 / obj.cost(P) == pytest.approx(float(record.cost(P)), rel=1e-6)
    if normalize:  # and differs from the unnormalized cost (the option does something)
        plain = WDA(xs, ys, 2, reg=1.0)
        assert abs(plain.cost(P) - obj.cost(P)) > 1e-3 * abs(obj.cost(P))


# --- ldr.solve(..., orthonormalize=True) -----------------------------------------------------
@pytest.fixture(scope="module")
def lda():
    X, y = ldr.datasets.load("wine")
    return ldr.objectives.LDA(X, y, r=2)


def test_solve_rejects_a_non_orthonormal_start_naming_the_option(lda):
    M0 = np.random.default_rng(0).standard_normal((13, 2))
    with pytest.raises(ValueError, match=r"not orthonormal.*orthonormalize=True"):
        ldr.solve(lda, "trust-region", start=M0)
    with pytest.raises(ValueError, match="orthonormalize: expected True or False"):
        ldr.solve(lda, "trust-region", start=M0, orthonormalize="yes")


def test_solve_orthonormalize_takes_the_nearest_orthonormal_basis(lda):
    M0 = np.random.default_rng(0).standard_normal((13, 2))
    U, _, Vt = np.linalg.svd(M0, full_matrices=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = ldr.solve(lda, "trust-region", start=M0, orthonormalize=True, max_iter=0)
    np.testing.assert_allclose(start.M, U @ Vt, atol=1e-12)  # polar factor: same span
    assert start.cost == pytest.approx(lda.cost(U @ Vt), rel=1e-12)
    res = ldr.solve(lda, "trust-region", start=M0, orthonormalize=True)
    ref = ldr.solve(lda, "trust-region", start=U @ Vt)
    assert res.converged and sin_largest_angle(res.M, ref.M) < 1e-8
    with pytest.raises(ValueError, match="start: its columns are linearly dependent"):
        ldr.solve(lda, "trust-region", start=np.column_stack([M0[:, 0], M0[:, 0]]),
                  orthonormalize=True)


def test_solve_orthonormalize_on_a_product_manifold():
    Xa, Xb = ldr.datasets.make_cca(200, 5, seed=0)
    obj = OrthogonalCCA(Xa, Xb, 2)
    rng = np.random.default_rng(0)
    M0 = (rng.standard_normal(obj.shape[0]), rng.standard_normal(obj.shape[1]))
    with pytest.raises(ValueError,
                       match=r"start: columns are not orthonormal.*orthonormalize=True"):
        ldr.solve(obj, "trust-region", start=M0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = ldr.solve(obj, "trust-region", start=M0, orthonormalize=True, max_iter=0)
    for m0, m in zip(M0, start.M):
        np.testing.assert_allclose(m.T @ m, np.eye(2), atol=1e-12)
        assert sin_largest_angle(orthonormalize(m0), m) < 1e-12


def test_normalize_scale_keeps_its_precision_far_from_the_mean():
    """Two tight classes (spread 1e-5) whose means lie 1e4 apart along a direction P0 sees:
    the per-pair mean squared distances equal the brute-force ones to 1e-10 relative (the
    expansion ‖y‖² + ‖y′‖² − 2yᵀy′ cancelled to nothing, or below zero, here)."""
    from ldr.objectives import WDA

    rng = np.random.default_rng(0)
    X = np.vstack([rng.standard_normal((30, 3)) * 1e-5 - 1e4,
                   rng.standard_normal((30, 3)) * 1e-5 + 1e4])
    y = np.repeat([0, 1], 30)
    P0 = np.linalg.qr(rng.standard_normal((3, 2)))[0]
    scale = WDA(X, y, 2, normalize_at=P0)._pair_scale
    G = [(X[y == c] - X.mean(axis=0)) @ P0 for c in (0, 1)]
    for a, b in [(0, 0), (0, 1), (1, 1)]:
        brute = np.mean(np.sum((G[a][:, None, :] - G[b][None, :, :]) ** 2, axis=-1))
        assert scale[(a, b)] == pytest.approx(brute, rel=1e-10)
