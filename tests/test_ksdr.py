"""Kernel sufficient dimension reduction (survey Eq. 15–16): formulas, recovery, bad inputs."""

import autograd
import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import ldr
from ldr.objectives.ksdr import KernelSDR

SIN = ldr.manifolds.sin_largest_angle


def _regression(seed, n=100, d=5, noise=0.1):
    """y = sin(2 xᵀb) + noise: the response depends on X only through span(b)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    b = rng.standard_normal(d)
    b /= np.linalg.norm(b)
    return X, np.sin(2 * X @ b) + noise * rng.standard_normal(n), b[:, None]


def _point(seed, d, r):
    return ldr.manifolds.orthonormalize(np.random.default_rng(seed).standard_normal((d, r)))


def test_cost_is_eq15():
    X, y, _ = _regression(0, n=60)
    obj = KernelSDR(X, y, 2, ridge=1e-3, sigma=1.2)
    M = _point(1, 5, 2)
    n = 60
    H = np.eye(n) - np.ones((n, n)) / n
    Kx = np.exp(-squareform(pdist(X @ M, "sqeuclidean")) / (2 * 1.2**2))
    sy = np.median(pdist(y[:, None]))
    Kz = np.exp(-squareform(pdist(y[:, None], "sqeuclidean")) / (2 * sy**2))
    ref = np.trace(H @ Kz @ H @ np.linalg.inv(H @ Kx @ H + n * 1e-3 * np.eye(n)))
    assert obj.cost(M) == pytest.approx(ref, rel=1e-10)
    value, _ = autograd.value_and_grad(obj.cost)(M)    # the autograd-traceable path
    assert value == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("r,y_kind", [(1, "continuous"), (2, "continuous"), (2, "classes")])
def test_check_and_autograd_agree_with_closed_forms(r, y_kind):
    X, y, b = _regression(2, n=50)
    if y_kind == "classes":
        y = np.where(X @ b[:, 0] > 0, "up", "down")
    obj = KernelSDR(X, y, r)
    assert obj.y_type_ == y_kind
    report = ldr.check(obj, random_state=r)
    assert report.ok, str(report)
    M, V = _point(3, 5, r), np.random.default_rng(4).standard_normal((5, r))
    grad = autograd.grad(obj.cost)
    np.testing.assert_allclose(obj.egrad(M), grad(M), rtol=1e-9, atol=1e-9)
    hvp = autograd.grad(lambda A: np.sum(grad(A) * V))(M)
    np.testing.assert_allclose(obj.ehvp(M, V), hvp, rtol=1e-8, atol=1e-8)


def test_class_labels_use_the_delta_kernel():
    X, _, _ = _regression(5, n=30)
    y = np.array([0, 1, 2] * 10)
    obj = KernelSDR(X, y, 1)
    n = 30
    H = np.eye(n) - np.ones((n, n)) / n
    np.testing.assert_allclose(obj.Kz, H @ (y[:, None] == y[None, :]) @ H, atol=1e-13)


def test_gkdr_heuristic_matches_its_definition():
    X, y, _ = _regression(6, n=40)
    X = X + 3.0                                  # translation does not matter
    obj = KernelSDR(X, y, 1)
    n, s = 40, ldr.kernels.median_distance(X)
    G = np.exp(-squareform(pdist(X, "sqeuclidean")) / (2 * s**2))
    sy = np.median(pdist(y[:, None]))
    Gz = np.exp(-squareform(pdist(y[:, None], "sqeuclidean")) / (2 * sy**2))
    A = np.linalg.inv(G + n * obj.ridge * np.eye(n))
    F = A @ Gz @ A
    ref = np.zeros((5, 5))
    for i in range(n):                           # rows j: ∂k(x_j, x)/∂x at x = x_i
        grad_k = (X - X[i]) * G[i][:, None] / s**2
        ref += grad_k.T @ F @ grad_k / n
    np.testing.assert_allclose(obj.gkdr_matrix(), ref, rtol=1e-10, atol=1e-12)
    w, V = np.linalg.eigh(ref)
    assert SIN(obj.heuristic(), V[:, -1:]) < 1e-8


def test_recovers_the_direction_y_depends_on():
    angles = []
    for seed in range(3):
        X, y, b = _regression(10 + seed)
        obj = KernelSDR(X, y, 1)
        heur = SIN(obj.heuristic(), b)
        res = ldr.solve(obj, "trust-region", start="heuristic")
        assert res.converged and res.cost <= obj.cost(obj.heuristic())
        angles.append((heur, SIN(res.M, b)))
        assert SIN(res.M, b) < 0.1
        # a random start finds it
        rand = ldr.solve(obj, "trust-region", start="random", random_state=seed)
        assert SIN(rand.M, b) < 0.1
    assert np.mean([a for _, a in angles]) < np.mean([h for h, _ in angles])


def test_recovers_a_two_dimensional_subspace():
    rng = np.random.default_rng(20)
    X = rng.standard_normal((100, 5))
    B = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    y = (X @ B[:, 0]) ** 2 + np.sin(X @ B[:, 1]) + 0.1 * rng.standard_normal(100)
    obj = KernelSDR(X, y, 2)
    res = ldr.solve(obj, "trust-region", start="heuristic")
    assert SIN(res.M, B) < 0.15
    np.testing.assert_allclose(obj.transform(X, res.M), (X - X.mean(axis=0)) @ res.M)


def test_bad_inputs_raise():
    X, y, _ = _regression(30, n=20)
    with pytest.raises(ValueError, match="y: expected 20 responses"):
        KernelSDR(X, y[:-1], 1)
    bad = y.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="y: .*NaN"):
        KernelSDR(X, bad, 1)
    badx = X.copy()
    badx[0, 0] = np.inf
    with pytest.raises(ValueError, match="X: .*infinity"):
        KernelSDR(badx, y, 1)
    with pytest.raises(ValueError, match="r: .*r < d"):
        KernelSDR(X, y, 5)
    with pytest.raises(ValueError, match="ridge:"):
        KernelSDR(X, y, 1, ridge=0.0)
    with pytest.raises(ValueError, match="sigma:"):
        KernelSDR(X, y, 1, sigma=-1.0)
    with pytest.raises(ValueError, match="y_type:"):
        KernelSDR(X, y, 1, y_type="ordinal")
    with pytest.raises(ValueError, match="y: at least two classes"):
        KernelSDR(X, np.zeros(20, dtype=int), 1)
    with pytest.raises(ValueError, match="y: the median pairwise distance .* is 0"):
        KernelSDR(X, np.full(20, 0.5), 1)
    with pytest.raises(ValueError, match="y: at least two classes"):  # integer-valued floats
        KernelSDR(X, np.ones(20), 1)
    with pytest.raises(ValueError, match="y: the responses are required"):
        KernelSDR(X, None, 1)


def test_gkdr_start_with_a_feature_at_1e89():
    # soak counterexample: sigma_full⁴ = (1e89)⁴ overflowed in the gKDR matrix (OverflowError)
    X = np.array([[0.1257302210933933, -1.321048632913019e+89],
                  [0.6404226504432821, 1.049001171530397e+89]])
    obj = KernelSDR(X, np.array([0, 1]), 1)
    G = obj.gkdr_matrix()
    assert np.all(np.isfinite(G))
    res = ldr.solve(obj, max_iter=100)
    assert np.isfinite(res.cost) and np.all(np.isfinite(res.M))
    # G(cX) = G(X)/c² (Xᵀ Q X / s⁴ with Q scale-free): the same matrix as at 1e-80 × X
    small = KernelSDR(X * 1e-80, np.array([0, 1]), 1).gkdr_matrix()
    np.testing.assert_allclose(small / np.abs(small).max(), G / np.abs(G).max(), atol=1e-12)


def test_a_constant_feature_at_1e30_is_exactly_centered():
    # soak counterexample: a constant feature of 1e30 centred to 1.4e14 (the rounding of its
    # mean); the heuristic picked that direction and the kernel's distances cancelled
    # (LinAlgError in the Cholesky factorization)
    X = np.array([[1e30, -0.1321048632913019], [1e30, 0.10490011715303971],
                  [1e30, 0.36159505490948474], [1e30, 0.9470809631292422],
                  [1e30, -1.2654214710460525], [1e30, 0.0413259793472436]])
    y = np.array([1, 0, 0, 1, 1, 0])
    obj = KernelSDR(X, y, 1)
    assert np.all(obj.X[:, 0] == 0.0)
    model = ldr.estimators.KernelSDR(1).fit(X, y)
    assert np.all(np.isfinite(model.transform(X)))
    assert ldr.manifolds.sin_largest_angle(model.M_, np.array([[0.0], [1.0]])) < 1e-8


def test_auto_y_type_reads_integer_valued_floats_as_classes():
    """statsmodels stores class codes as floats (anes96's vote: 0.0/1.0): "auto" follows
    scikit-learn's type_of_target, so a binary float y is two classes — as a Gaussian kernel
    on it it had a median distance of 0 and was refused — while real values stay continuous."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    vote = (X[:, 0] > -0.8).astype(float)  # mostly 1: the median distance of y is 0
    fitted = KernelSDR(X, vote, 1)
    assert fitted.y_type_ == "classes"
    np.testing.assert_array_equal(fitted.Kz, KernelSDR(X, vote.astype(int), 1).Kz)
    assert KernelSDR(X, X[:, 0] + 0.1 * X[:, 1], 1).y_type_ == "continuous"
    with pytest.raises(ValueError, match="median pairwise distance"):
        KernelSDR(X, vote, 1, y_type="continuous")


def test_sampled_rows_are_the_estimator_on_the_sample(monkeypatch):
    """rows="auto" fits every row up to AUTO_ROWS and a seeded uniform sample of AUTO_ROWS
    rows beyond: the same answer as the estimator on those rows, near the direction y depends
    on, with mean_ and transform of every row."""
    from ldr.estimators import KernelSDR as Estimator
    from ldr.estimators import ksdr as ksdr_estimator

    X, y, b = _regression(3, n=200)
    full = Estimator(1).fit(X, y)
    assert full.rows_ is None and full.approximation_ is None
    monkeypatch.setattr(ksdr_estimator, "AUTO_ROWS", 90)
    sampled = Estimator(1).fit(X, y)
    rows = sampled.rows_
    assert rows.shape == (90,) and np.all(np.diff(rows) > 0) and rows[-1] < 200
    assert "90 of the 200 rows" in sampled.approximation_
    np.testing.assert_array_equal(rows, Estimator(1).fit(X, y).rows_)       # seeded
    on_sample = Estimator(1, rows=None).fit(X[rows], y[rows])
    assert SIN(sampled.M_, on_sample.M_) < 1e-8
    assert SIN(sampled.M_, b) < 0.1 and SIN(full.M_, b) < 0.1
    np.testing.assert_allclose(sampled.mean_, X.mean(axis=0))
    np.testing.assert_allclose(sampled.transform(X), (X - X.mean(axis=0)) @ sampled.components_.T)
    for bad in (1, 201, 2.5, True, "all"):
        with pytest.raises(ValueError, match="rows"):
            Estimator(1, rows=bad).fit(X, y)


def test_a_dask_array_fits_from_its_chunks_and_a_sample(monkeypatch, gathers):
    """From a Dask array on a LocalCluster: the mean by one pass over the chunks (tasks run on
    the cluster), only the sampled rows gathered, the same answer as the in-memory fit;
    rows=None (every row, n×n matrices) refuses it."""
    distributed = pytest.importorskip("distributed")
    import dask.array as da

    from ldr.estimators import KernelSDR as Estimator
    from ldr.estimators import ksdr as ksdr_estimator

    X, y, b = _regression(4, n=1200)
    monkeypatch.setattr(ksdr_estimator, "AUTO_ROWS", 150)
    gathered = gathers(ksdr_estimator)
    ref = Estimator(1).fit(X, y)
    gathered.clear()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, \
            distributed.get_task_stream(client) as stream:
        lazy = Estimator(1).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
        Z = lazy.transform(da.from_array(X, chunks=100))
        assert isinstance(Z, da.Array)
        np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=1e-8, atol=1e-10)
    ran = {t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in stream.data}
    assert any(str(k).startswith("chunk_moments") for k in ran)
    assert gathered == [("X", 150), ("y", 150)]
    np.testing.assert_array_equal(lazy.rows_, ref.rows_)
    np.testing.assert_allclose(lazy.mean_, X.mean(axis=0))
    assert SIN(lazy.M_, ref.M_) < 1e-8 and SIN(lazy.M_, b) < 0.1
    with pytest.raises(ValueError, match="Dask"):
        Estimator(1, rows=None).fit(da.from_array(X, chunks=100), y)
