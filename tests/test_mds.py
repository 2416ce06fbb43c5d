"""Linear MDS with Kruskal–Shepard stress (survey Eq. 4): formulas, solvers, bad inputs."""

import autograd
import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import ldr
from ldr.objectives.mds import MDS

SIN = ldr.manifolds.sin_largest_angle


def _data(seed, n=70, d=6):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.linspace(3.0, 0.3, d)


def _point(seed, d, r):
    return ldr.manifolds.orthonormalize(np.random.default_rng(seed).standard_normal((d, r)))


def test_cost_is_eq4_and_blocks_do_not_matter():
    X = _data(0)
    M = _point(1, 6, 2)
    dX, dY = squareform(pdist(X)), squareform(pdist(X @ M))
    exact = np.sum((dX - dY) ** 2)
    full, blocked = MDS(X, 2, smoothing=1e-9), MDS(X, 2, smoothing=1e-9, block_size=7)
    assert full.cost(M) == pytest.approx(exact, rel=1e-9)
    assert blocked.cost(M) == pytest.approx(full.cost(M), rel=1e-13)
    np.testing.assert_allclose(blocked.egrad(M), full.egrad(M), rtol=1e-11)
    assert full.stress(M) == pytest.approx(np.sqrt(exact / np.sum(dX**2)), rel=1e-12)
    # the default ε (1e-6 × median dissimilarity) moves the cost by a relative ~1e-6 at most
    assert MDS(X, 2).cost(M) == pytest.approx(exact, rel=1e-5)


@pytest.mark.parametrize("r,block", [(1, None), (2, 9), (3, 1)])
def test_check_and_autograd_agree_with_closed_forms(r, block):
    obj = MDS(_data(2, n=40), r, block_size=block)
    report = ldr.check(obj, random_state=r)
    assert report.ok, str(report)
    M, V = _point(3, 6, r), np.random.default_rng(4).standard_normal((6, r))
    grad = autograd.grad(obj.cost)
    np.testing.assert_allclose(obj.egrad(M), grad(M), rtol=1e-10, atol=1e-10)
    hvp = autograd.grad(lambda A: np.sum(grad(A) * V))(M)
    np.testing.assert_allclose(obj.ehvp(M, V), hvp, rtol=1e-9, atol=1e-9)


def test_coincident_projections_keep_the_gradient_finite():
    X = _data(5, n=30)
    M = _point(6, 6, 2)
    X[1] = X[0] + (np.eye(6) - M @ M.T) @ np.ones(6)     # x_1 − x_0 ⟂ span(M): same projection
    X[2] = X[0]                                         # and an exact duplicate
    obj = MDS(X, 2)
    assert np.linalg.norm((X[1] - X[0]) @ M) < 1e-12
    G = obj.egrad(M)
    assert np.all(np.isfinite(G)) and np.all(np.isfinite(obj.ehvp(M, M)))
    np.testing.assert_allclose(G, autograd.grad(obj.cost)(M), rtol=1e-9, atol=1e-9)
    res = ldr.solve(obj, "trust-region", start=M)
    assert np.isfinite(res.cost) and res.cost <= obj.cost(M)


def test_solver_stress_never_worse_than_pca_start():
    gains = []
    for seed in range(3):
        X = _data(10 + seed)
        for r in (1, 2):
            obj = MDS(X, r)
            pca = obj.stress(obj.heuristic())
            res = ldr.solve(obj, "trust-region", start="heuristic")
            assert obj.stress(res.M) <= pca * (1 + 1e-12)
            gains.append((pca - obj.stress(res.M)) / pca)
    assert max(gains) > 1e-4                 # PCA (classical scaling) is not the stress optimum


def test_pca_heuristic_is_classical_scaling():
    X = _data(13)
    obj = MDS(X, 2)
    Xc = X - X.mean(axis=0)
    w, V = np.linalg.eigh(Xc.T @ Xc)
    assert SIN(obj.heuristic(), V[:, -2:]) < 1e-10
    # Eq. 3: the projection's scatter Σ_ij ‖y_i − y_j‖² = 2n tr(MᵀXcᵀXcM), maximized by PCA
    Y = Xc @ obj.heuristic()
    assert np.sum(squareform(pdist(Y, "sqeuclidean"))) == pytest.approx(2 * 70 * w[-2:].sum())


def test_data_in_a_subspace_give_zero_stress_and_the_subspace():
    rng = np.random.default_rng(20)
    B = np.linalg.qr(rng.standard_normal((6, 2)))[0]
    X = rng.standard_normal((50, 2)) * [2.0, 1.0] @ B.T
    obj = MDS(X, 2)
    for seed in range(3):                   # from random starts, not from PCA
        # a degenerate (quartic) minimum: an absolute gradient tolerance, as the test means
        res = ldr.solve(obj, "trust-region", start="random", random_state=seed, tol=1e-6,
                        tol_scale=1.0)
        assert obj.stress(res.M) < 1e-8
        assert SIN(res.M, B) < 1e-3        # stress is quartic in the tilt out of the subspace


def test_precomputed_dissimilarities_and_metrics():
    X = _data(21, n=40)
    M = _point(22, 6, 2)
    a, b = MDS(X, 2), MDS(X, 2, dissimilarity=squareform(pdist(X)))
    assert a.cost(M) == pytest.approx(b.cost(M), rel=1e-12)
    city = MDS(X, 2, metric="cityblock")
    np.testing.assert_allclose(city.delta, squareform(pdist(X, "cityblock")), rtol=1e-12)
    assert ldr.check(city).ok
    Z = a.transform(X, M)
    np.testing.assert_allclose(Z, (X - X.mean(axis=0)) @ M, atol=1e-12)


def test_bad_inputs_raise():
    X = _data(23, n=20)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X: .*NaN"):
        MDS(bad, 2)
    with pytest.raises(ValueError, match="r: .*r < d"):
        MDS(X, 6)
    D = squareform(pdist(X))
    with pytest.raises(ValueError, match="dissimilarity: must be n×n"):
        MDS(X, 2, dissimilarity=D[:5, :5])
    with pytest.raises(ValueError, match="dissimilarity: must be symmetric"):
        MDS(X, 2, dissimilarity=D + np.triu(np.ones_like(D)))
    with pytest.raises(ValueError, match="dissimilarity: must be non-negative"):
        MDS(X, 2, dissimilarity=-D)
    with pytest.raises(ValueError, match="diagonal"):
        MDS(X, 2, dissimilarity=D + 1.0)
    with pytest.raises(ValueError, match="smoothing:"):
        MDS(X, 2, smoothing=0.0)
    with pytest.raises(ValueError, match="metric:"):
        MDS(X, 2, metric="no-such-metric")
    with pytest.raises(ValueError, match="block_size:"):
        MDS(X, 2, block_size=0)
    with pytest.raises(ValueError, match="all dissimilarities are 0"):
        MDS(np.ones((5, 3)), 1)


def test_mds_at_1e_minus_91_equals_the_unit_scale_fit():
    # soak counterexample: at 1e-91 the trust region's inner products of the gradient (1e-182)
    # underflowed to 0 and its CG divided by zero; it now works in units of the gradient scale
    X = np.array([[1.257302210933933, -1.321048632913019],
                  [6.404226504432821, 1.0490011715303971],
                  [-5.35669373161111, 3.615950549094847]])
    a, b = ldr.estimators.MDS(1).fit(X * 1e-91), ldr.estimators.MDS(1).fit(X)
    assert a.result_.converged and a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(a.M_, b.M_, rtol=1e-12, atol=1e-12)
    assert a.cost_ == pytest.approx(b.cost_ * 1e-182, rel=1e-10)


# --- the estimator's landmarks="auto": exact up to EXACT_MAX_SAMPLES rows, landmarks beyond ----
def _switch_data(seed, n=400):
    return np.random.default_rng(seed).standard_normal((n, 5)) * [4.0, 2.0, 1.0, 0.5, 0.3]


def test_auto_landmarks_is_the_exact_fit_up_to_the_switch():
    from ldr.estimators import mds as mds_estimator

    assert ldr.estimators.MDS().landmarks == "auto"
    assert mds_estimator.auto_landmarks(mds_estimator.EXACT_MAX_SAMPLES) is None
    assert mds_estimator.auto_landmarks(mds_estimator.EXACT_MAX_SAMPLES + 1) \
        == mds_estimator.AUTO_LANDMARKS
    X = _switch_data(0, n=120)
    auto, exact = ldr.estimators.MDS(2).fit(X), ldr.estimators.MDS(2, landmarks=None).fit(X)
    assert auto.landmarks_ is None and auto.approximation_ is None
    assert auto.objective_.landmarks_ is None
    np.testing.assert_array_equal(auto.M_, exact.M_)
    assert auto.stress_ == exact.stress_


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auto_landmarks_past_the_switch_approximate_the_exact_fit(monkeypatch, seed):
    """Past EXACT_MAX_SAMPLES (lowered here) "auto" fits AUTO_LANDMARKS landmarks and says so;
    its answer keeps the distances nearly as well as the exact one: the exact stress-1 at it
    within 1% of the exact answer's (measured on seeds 0–5: at most 0.72%), the subspaces
    within sin 0.15 (at most 0.08), and its cost an unbiased estimate of the exact cost
    (n/m scaling: the ratio 0.89–1.20 over those draws; a missing n/m would give m/n)."""
    from ldr.estimators import mds as mds_estimator

    monkeypatch.setattr(mds_estimator, "EXACT_MAX_SAMPLES", 150)
    monkeypatch.setattr(mds_estimator, "AUTO_LANDMARKS", 60)
    X = _switch_data(seed)
    exact = ldr.estimators.MDS(2, landmarks=None).fit(X)
    auto = ldr.estimators.MDS(2, random_state=seed).fit(X)
    assert auto.landmarks_.shape == (60,) and np.all(np.diff(auto.landmarks_) > 0)
    assert 0 <= auto.landmarks_[0] and auto.landmarks_[-1] < len(X)
    assert "60 landmarks of 400 samples" in auto.approximation_
    same = ldr.estimators.MDS(2, landmarks=60, random_state=seed).fit(X)
    np.testing.assert_array_equal(same.landmarks_, auto.landmarks_)
    np.testing.assert_array_equal(same.M_, auto.M_)
    exact_stress = exact.objective_.stress
    assert exact_stress(exact.M_) <= exact_stress(auto.M_) <= 1.01 * exact_stress(exact.M_)
    assert SIN(auto.M_, exact.M_) < 0.15
    ratio = auto.objective_.cost(auto.M_) / exact.objective_.cost(auto.M_)
    assert 0.7 < ratio < 1.4
    # the boundary: n = EXACT_MAX_SAMPLES rows is still exact
    monkeypatch.setattr(mds_estimator, "EXACT_MAX_SAMPLES", len(X))
    assert ldr.estimators.MDS(2).fit(X).landmarks_ is None


def test_auto_rows_past_their_size_sample_the_rows(monkeypatch):
    """With landmarks, rows="auto" sums every row up to AUTO_ROWS and a sample of AUTO_ROWS
    rows beyond, says so, and keeps the distances nearly as well as the exact fit (the exact
    stress-1 at its answer within 2% of the exact answer's on this draw)."""
    from ldr.estimators import mds as mds_estimator

    assert mds_estimator.auto_rows(mds_estimator.AUTO_ROWS) is None
    assert mds_estimator.auto_rows(mds_estimator.AUTO_ROWS + 1) == mds_estimator.AUTO_ROWS
    monkeypatch.setattr(mds_estimator, "EXACT_MAX_SAMPLES", 150)
    monkeypatch.setattr(mds_estimator, "AUTO_LANDMARKS", 60)
    monkeypatch.setattr(mds_estimator, "AUTO_ROWS", 200)
    X = _switch_data(0)
    auto = ldr.estimators.MDS(2).fit(X)
    assert auto.rows_.shape == (200,) and auto.landmarks_.shape == (60,)
    assert "200 sampled rows and 60 landmarks of 400 samples" in auto.approximation_
    assert 'rows="auto" and n_samples > AUTO_ROWS = 200' in auto.approximation_
    every = ldr.estimators.MDS(2, rows=None).fit(X)
    assert every.rows_ is None and "sampled rows" not in every.approximation_
    exact = ldr.estimators.MDS(2, landmarks=None).fit(X)
    assert exact.rows_ is None
    stress = exact.objective_.stress
    assert stress(exact.M_) <= stress(auto.M_) <= 1.02 * stress(exact.M_)
    given = ldr.estimators.MDS(2, landmarks=60, rows=200).fit(X)
    np.testing.assert_array_equal(given.M_, auto.M_)
    assert "landmarks=60; rows=200" in given.approximation_
    with pytest.raises(ValueError, match="rows: a row sample needs landmarks"):
        ldr.estimators.MDS(2, landmarks=None, rows=100).fit(X)
    for bad in ("all", 1, 401, 2.5, True):
        with pytest.raises(ValueError, match=r'rows: must be "auto", None or an integer in'):
            ldr.estimators.MDS(2, landmarks=60, rows=bad).fit(X)


@pytest.mark.parametrize("bad", ["exact", "Auto", 1, 0, -5, 41, 2.5, True, [10]])
def test_landmarks_parameter_is_checked(bad):
    X = _switch_data(3, n=40)
    with pytest.raises(ValueError, match=r'landmarks: must be "auto", None or an integer in '
                                         r"\[2, n_samples = 40\]"):
        ldr.estimators.MDS(2, landmarks=bad).fit(X)
    for good in ("auto", None, 2, 40, np.int64(10)):
        fitted = ldr.estimators.MDS(2, landmarks=good).fit(X)
        expected = None if good in ("auto", None) else int(good)
        assert (fitted.landmarks_ is None if expected is None
                else len(fitted.landmarks_) == expected)


def test_a_dask_array_fits_from_its_chunks_sampled_rows_and_landmarks(gathers):
    """From a Dask array on a LocalCluster, with landmarks and sampled rows: the mean and
    scatter by one pass over the chunks (tasks on the cluster), only the sampled rows and the
    landmarks gathered, the in-memory fit's answer; without a row sample it is refused."""
    distributed = pytest.importorskip("distributed")
    import dask.array as da

    import ldr.objectives.mds as mds_objective
    from ldr.estimators import MDS as Estimator

    X = np.random.default_rng(5).standard_normal((2000, 6)) * [3.0, 2.0, 1.0, 0.5, 0.3, 0.2]
    gathered = gathers(mds_objective)
    ref = Estimator(2, landmarks=80, rows=300).fit(X)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, \
            distributed.get_task_stream(client) as stream:
        lazy = Estimator(2, landmarks=80, rows=300).fit(da.from_array(X, chunks=250))
        Z = lazy.transform(da.from_array(X, chunks=250))
        assert isinstance(Z, da.Array)
        np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=1e-8, atol=1e-10)
    ran = {t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in stream.data}
    assert any(str(k).startswith("chunk_moments") for k in ran)
    assert sorted(k for _, k in gathered) == [80, 300]
    np.testing.assert_array_equal(lazy.rows_, ref.rows_)
    np.testing.assert_array_equal(lazy.landmarks_, ref.landmarks_)
    assert ldr.manifolds.sin_largest_angle(lazy.M_, ref.M_) < 1e-8
    assert lazy.stress_ == pytest.approx(ref.stress_, rel=1e-10)
    with pytest.raises(ValueError, match="Dask"):
        Estimator(2, landmarks=80, rows=None).fit(da.from_array(X, chunks=250))
