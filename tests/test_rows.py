"""ldr.data.rows: statistics from chunked rows (ndarray, Dask array, iterator) equal the in-memory
ones, the solvers reach the same optimum, and Dask input is never materialized silently.

The references are written out here with NumPy on rows shifted by their first row (an exact
shift for data of mean 1e6 and std 1: x − x_0 is a difference of nearby floats), so they do
not share code with ldr.data.rows.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ldr
import ldr.estimators
from ldr.data.rows import moments
from ldr.data.statistics import Moments, chunk_moments, merge_all
from ldr.manifolds import sin_largest_angle
from ldr.objectives import (
    LDA,
    MAF,
    PCA,
    PPCA,
    SFA,
    FactorAnalysis,
    OrthogonalCCA,
    TraditionalCCA,
)

da = pytest.importorskip("dask.array")

N, D = 60, 5
CHUNKINGS = [1, 7, (13, 2, 40, 5)]  # one row per chunk; 7s with a ragged last; uneven


def _relerr(A, B) -> float:
    return float(np.linalg.norm(np.asarray(A) - np.asarray(B)) / np.linalg.norm(B))


def _series(mean):
    """A smooth time series (autocorrelated), per-feature std about 1, offset by the mean."""
    rng = np.random.default_rng(3)
    t = np.arange(N)[:, None]
    X = np.sin(t * rng.uniform(0.05, 0.6, D) + rng.uniform(0, 6, D)) * rng.uniform(1, 2, D)
    X = X + 0.3 * rng.standard_normal((N, D))
    return X + mean


@pytest.fixture(params=[0.0, 1e6], ids=["mean0", "mean1e6"])
def series(request):
    return _series(request.param)


@pytest.fixture
def labels():
    return np.random.default_rng(4).integers(0, 3, N)


def _chunks(X, chunks, y=None):
    """An iterator of row chunks with the given chunking."""
    sizes = ([chunks] * (len(X) // chunks) + ([len(X) % chunks] if len(X) % chunks else [])
             if isinstance(chunks, int) else list(chunks))
    start = 0
    for s in sizes:
        yield X[start:start + s] if y is None else (X[start:start + s], y[start:start + s])
        start += s


def _dask(X, chunks):
    return da.from_array(X, chunks=(chunks if isinstance(chunks, int) else tuple(chunks), -1))


# --- independent references -----------------------------------------------------------------
def _ref_cov(X, ddof=0):
    Z = X - X[0]
    Z = Z - Z.mean(axis=0)
    return Z.T @ Z / (len(X) - ddof)


def _ref_lagged(X, lag):
    Z = X - X[0]
    Z = Z - Z.mean(axis=0)
    C = Z[:-lag].T @ Z[lag:] / (len(X) - lag)
    return 0.5 * (C + C.T)


def _ref_diff(X):
    Z = np.diff(X - X[0], axis=0)
    return Z.T @ Z / (len(X) - 1)


def _ref_lda(X, y):
    Z = X - X[0]
    classes = np.unique(y)
    means = np.array([Z[y == c].mean(axis=0) for c in classes])
    within = Z - means[np.searchsorted(classes, y)]
    counts = np.array([np.sum(y == c) for c in classes])
    between = (means - Z.mean(axis=0)) * np.sqrt(counts / len(X))[:, None]
    return within.T @ within / len(X), between.T @ between


# --- statistics ------------------------------------------------------------------------------
@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("kind", ["dask", "iterator"])
def test_moments_equal_in_memory(series, labels, chunks, kind):
    """Covariance, class scatters, lagged and difference products of chunked rows equal the
    in-memory ones to 1e-12 relative, for any chunking and for mean 1e6, std 1."""
    X, y = series, labels
    for lag in (1, 3, 9):  # a lag longer than a chunk crosses several boundaries
        if kind == "dask":
            st = moments(_dask(X, chunks), da.from_array(y, chunks=11), lag=lag, diff=True)
        else:
            st = moments(_chunks(X, chunks, y), lag=lag, diff=True)
        assert st.n == N
        assert np.max(np.abs(st.mean - X.mean(axis=0))) <= 1e-15 * np.max(np.abs(X)) + 1e-15
        assert _relerr(st.covariance(), _ref_cov(X)) < 1e-12
        assert _relerr(st.lagged_covariance(), _ref_lagged(X, lag)) < 1e-12
        Sw, Sb, _ = st.class_scatter()
        rSw, rSb = _ref_lda(X, y)
        assert _relerr(Sw, rSw) < 1e-12 and _relerr(Sb, rSb) < 1e-12
        if lag == 1:
            assert _relerr(st.diff_moment(), _ref_diff(X)) < 1e-12


def test_merge_of_large_mean_keeps_digits():
    """Mean 1e6, std 1, n = 4000 in 1-row chunks: the naive one-pass formula Σxxᵀ/n − μμᵀ
    loses everything, the merged moments keep 12 digits."""
    rng = np.random.default_rng(0)
    X = 1e6 + rng.standard_normal((4000, 3))
    st = merge_all(chunk_moments(X[i:i + 1]) for i in range(len(X)))
    assert _relerr(st.covariance(), _ref_cov(X)) < 1e-12
    naive = X.T @ X / len(X) - np.outer(X.mean(axis=0), X.mean(axis=0))
    assert _relerr(naive, _ref_cov(X)) > 1e-6  # what the merge protects against


# --- objectives: statistics and optima -------------------------------------------------------
def _objectives(X, y, chunks, kind, names=None):
    """(name, in-memory objective, chunked objective, statistics names)."""
    half = D // 2 + 1
    Xa, Xb = X[:, :half], X[:, half:]
    if kind == "dask":
        rows, ys = _dask(X, chunks), da.from_array(y, chunks=9)
        pair = pair2 = (_dask(Xa, chunks), _dask(Xb, chunks))
        lab = (rows, ys)
    else:
        def rows_():
            return _chunks(X, chunks)
        rows = None
        lab = (_chunks(X, chunks, y), None)
        pair = (zip(_chunks(Xa, chunks), _chunks(Xb, chunks)), None)
        pair2 = (zip(_chunks(Xa, chunks), _chunks(Xb, chunks)), None)
    fresh = (lambda: rows) if kind == "dask" else rows_
    makers = {
        "PCA": (lambda: PCA(X, 2), lambda: PCA(fresh(), 2), ["C"]),
        "LDA": (lambda: LDA(X, y, 2), lambda: LDA(*lab, 2), ["Sw", "Sb"]),
        "MAF": (lambda: MAF(X, 2, lag=2), lambda: MAF(fresh(), 2, lag=2),
                ["Sigma", "Sigma_lag"]),
        "SFA": (lambda: SFA(X, 2), lambda: SFA(fresh(), 2), ["Sigma", "Cdot"]),
        "OrthogonalCCA": (lambda: OrthogonalCCA(Xa, Xb, 2), lambda: OrthogonalCCA(*pair, 2),
                          ["Sa", "Sb", "Sab"]),
        "TraditionalCCA": (lambda: TraditionalCCA(Xa, Xb, 2),
                           lambda: TraditionalCCA(*pair2, 2), ["Sa", "Sb", "Sab", "K"]),
        "PPCA": (lambda: PPCA(X, 2), lambda: PPCA(fresh(), 2), ["S"]),
        "FactorAnalysis": (lambda: FactorAnalysis(X, 2), lambda: FactorAnalysis(fresh(), 2),
                           ["S"]),
    }
    return [(name, ref(), obj(), stats) for name, (ref, obj, stats) in makers.items()
            if names is None or name in names]


def _sin(M, N_):
    if isinstance(M, tuple):
        return max(sin_largest_angle(np.asarray(a), np.asarray(b)) for a, b in zip(M, N_))
    return sin_largest_angle(np.asarray(M), np.asarray(N_))


@pytest.mark.parametrize("chunks", CHUNKINGS)
@pytest.mark.parametrize("kind", ["dask", "iterator"])
def test_objectives_from_chunks_match_in_memory(series, labels, chunks, kind):
    """Every second-order objective built from chunked rows has the in-memory statistics
    (1e-12 relative) and its solver reaches the same optimum (sin θ ≤ 1e-10)."""
    for name, ref, obj, stats in _objectives(series, labels, chunks, kind):
        for s in stats:
            assert _relerr(getattr(obj, s), getattr(ref, s)) < 1e-12, (name, s)
        assert _relerr(np.hstack([np.ravel(m) for m in _means(obj)]),
                       np.hstack([np.ravel(m) for m in _means(ref)])) < 1e-14
        if name in ("PPCA", "FactorAnalysis"):
            continue  # R^{d×r} models: their statistics are all they read from X
        a = ldr.solve(ref, "trust-region", start="heuristic", tol=1e-11, xtol=0, max_iter=200)
        b = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-11, xtol=0, max_iter=200)
        assert _sin(a.M, b.M) <= 1e-10, name


def _means(obj):
    return (obj.mean_a_, obj.mean_b_) if hasattr(obj, "mean_a_") else (obj.mean_,)


def test_statistics_against_independent_reference(series, labels):
    """The in-memory path itself (one chunk) is exact for mean 1e6: checked against NumPy on
    the exactly shifted rows."""
    X, y = series, labels
    assert _relerr(PCA(X, 2).C, _ref_cov(X, ddof=1)) < 1e-12
    lda = LDA(X, y, 2)
    rSw, rSb = _ref_lda(X, y)
    assert _relerr(lda.Sw, rSw) < 1e-12 and _relerr(lda.Sb, rSb) < 1e-12
    # MAF divides the lagged sum by n (its autocorrelations lie in [-1, 1]), not n - lag
    ref = _ref_lagged(X, 2) * (len(X) - 2) / len(X)
    assert _relerr(MAF(X, 2, lag=2).Sigma_lag, ref) < 1e-12


# --- a Dask cluster --------------------------------------------------------------------------
def test_under_local_cluster(labels):
    """The same statistics and optima under a dask.distributed LocalCluster with 2 workers
    (the chunk tasks are seen running on the cluster)."""
    distributed = pytest.importorskip("distributed")
    y = labels
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, \
            distributed.get_task_stream(client) as stream:
        for mean, chunks, names in ((1e6, 1, ("MAF",)), (1e6, (13, 2, 40, 5), None)):
            X = _series(mean)
            for name, ref, obj, stats in _objectives(X, y, chunks, "dask", names):
                for s in stats:
                    assert _relerr(getattr(obj, s), getattr(ref, s)) < 1e-12, (name, s)
                if name in ("PPCA", "FactorAnalysis"):
                    continue
                a = ldr.solve(ref, "trust-region", start="heuristic", tol=1e-11, xtol=0)
                b = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-11, xtol=0)
                assert _sin(a.M, b.M) <= 1e-10, name
        est = ldr.estimators.OrthogonalLDA(2).fit(_dask(X, 7), da.from_array(y, chunks=7))
        Z = est.transform(_dask(X, 7))
        assert isinstance(Z, da.Array)
        ref = ldr.estimators.OrthogonalLDA(2).fit(X, y)
        np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=1e-8, atol=1e-8)
    ran = {t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in stream.data}
    assert any(str(k).startswith("chunk_moments") for k in ran)
    assert len({t["worker"] for t in stream.data}) == 2


# --- estimators ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["PCA", "OrthogonalLDA", "MAF", "SFA", "PPCA"])
def test_estimator_fit_transform_dask(name):
    rng = np.random.default_rng(1)
    X = ldr.datasets.make_maf(80, 5, seed=2) * [1, 2, 3, 4, 5] + 100.0
    y = rng.integers(0, 3, len(X))
    est = getattr(ldr.estimators, name)(n_components=2)
    Xd = da.from_array(X, chunks=(9, -1))
    sup = name == "OrthogonalLDA"
    lazy = est.fit(Xd, da.from_array(y, chunks=20) if sup else None)
    ref = getattr(ldr.estimators, name)(n_components=2).fit(X, y if sup else None)
    np.testing.assert_allclose(lazy.components_, ref.components_, rtol=1e-8, atol=1e-9)
    assert lazy.n_features_in_ == 5
    Z = lazy.transform(Xd)
    assert isinstance(Z, da.Array) and Z.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=1e-8, atol=1e-8)


def test_estimator_dask_dataframe_and_two_view():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).standard_normal((50, 4)) * [4.0, 3.0, 2.0, 1.0]
    ddf = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=3)
    ref = ldr.estimators.PCA(2).fit(X)
    for data in (ddf.to_dask_array(lengths=True), ddf):  # a Dask DataFrame, converted lazily
        est = ldr.estimators.PCA(2).fit(data)
        np.testing.assert_allclose(est.components_, ref.components_, atol=1e-10)
    Xa, Xb = ldr.datasets.make_cca(90, 4, seed=0)
    for cls in (ldr.estimators.OrthogonalCCA, ldr.estimators.CCA):
        lazy = cls(2).fit(da.from_array(Xa, chunks=(10, -1)), da.from_array(Xb, chunks=25))
        ref = cls(2).fit(Xa, Xb)
        ya, yb = lazy.transform(da.from_array(Xa, chunks=(10, -1)),
                                da.from_array(Xb, chunks=(10, -1)))
        ra, rb = ref.transform(Xa, Xb)
        np.testing.assert_allclose(ya.compute(), ra, atol=1e-8)
        np.testing.assert_allclose(yb.compute(), rb, atol=1e-8)


def _poisoned(n=1000, d=6):
    """A Dask array whose computation fails loudly: any silent materialization is caught."""
    def boom(block):
        raise RuntimeError("materialized")
    return da.zeros((n, d), chunks=(100, d)).map_blocks(boom, dtype=float)


@pytest.mark.parametrize("name,params,pairwise", [
    ("MDS", {"landmarks": None}, True), ("LPP", {"radius": 1.0}, False),
    ("NPE", {"radius": 1.0}, False),
    ("KernelSDR", {"rows": None}, True), ("SupervisedHSIC", {"approximation": None}, False),
    ("UnsupervisedHSIC", {"spectral": "exact"}, False),
    ("WassersteinDA", {"batch_size": None}, True)])
def test_in_memory_estimators_refuse_dask(name, params, pairwise):
    """Every pairwise computation that needs the rows in memory refuses a Dask array before
    reading it (MDS and KernelSDR read one from its chunks with sampled rows, their
    defaults: ``test_mds.py``, ``test_ksdr.py``; LPP and NPE with a k-nearest-neighbour
    graph, theirs: ``test_graph_chunks.py``; the HSIC estimators with Nyström features,
    theirs: ``test_hsic_chunks.py``)."""
    est = getattr(ldr.estimators, name)(**params)
    y = np.arange(1000) % 2
    with pytest.raises(ValueError, match=r"X: .*in memory.*n = 1000, d = 6") as info:
        est.fit(_poisoned(), y)
    assert "46.9 KiB" not in str(info.value)  # bytes stated in MiB/GiB units
    assert "MiB" in str(info.value) and ("n×n" in str(info.value)) == pairwise


def test_in_memory_objectives_refuse_dask():
    from ldr.objectives import MDS

    with pytest.raises(ValueError, match=r"X: this method needs its data in memory.*"
                                         r"n = 1000, d = 6"):
        MDS(_poisoned(), 2)


def test_validation_is_lazy_and_clear(series):
    X = series.copy()
    X[37, 2] = np.nan
    with pytest.raises(ValueError, match=r"X: Input contains NaN or infinity \(rows 35\.\.41\)"):
        PCA(_dask(X, 7), 2)
    with pytest.raises(ValueError, match=r"X: Input contains NaN or infinity \(rows 35\.\.41\)"):
        PCA(_chunks(X, 7), 2)
    with pytest.raises(ValueError, match="y: has 59 labels but X has 60 samples"):
        LDA(_dask(series, 7), da.from_array(np.arange(59) % 2), 1)
    with pytest.raises(ValueError, match="y: at least two classes"):
        LDA(_dask(series, 7), da.zeros(60, chunks=7), 1)
    with pytest.raises(ValueError, match="X: Found array with 1 sample"):
        PCA(_dask(series[:1], 1), 2)
    with pytest.raises(ValueError, match="lag: the time lag must satisfy"):
        MAF(_dask(series, 7), 2, lag=59)
    with pytest.raises(ValueError, match="X: no rows"):
        PCA(iter([]), 2)


def test_memmap_read_in_chunks(tmp_path, series):
    path = tmp_path / "x.npy"
    np.save(path, series)
    mm = np.load(path, mmap_mode="r")
    st = moments(mm, lag=1, diff=True, chunk_bytes=8 * D * 7)  # 7 rows per chunk
    assert _relerr(st.covariance(), _ref_cov(series)) < 1e-12
    assert _relerr(st.diff_moment(), _ref_diff(series)) < 1e-12
    assert isinstance(PCA(st, 2), PCA) and isinstance(st, Moments)
    est, ref = ldr.estimators.SFA(2).fit(mm), ldr.estimators.SFA(2).fit(series)
    np.testing.assert_allclose(est.components_, ref.components_, rtol=1e-9, atol=1e-12)
    assert est.n_features_in_ == D


def test_import_ldr_does_not_import_dask():
    code = ("import sys, ldr, ldr.objectives, ldr.estimators, ldr.cli, ldr.data.rows; "
            "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]")
    subprocess.run([sys.executable, "-P", "-c", code], check=True)


def test_projected_moments_are_the_moments_of_the_projected_rows():
    """Moments.project(U): every statistic (class, lagged, difference) of the rows Uᵀx,
    without a pass over the rows."""
    rng = np.random.default_rng(2)
    X = 1e3 + rng.standard_normal((120, 6))
    y = np.arange(120) % 3
    U = np.linalg.qr(rng.standard_normal((6, 4)))[0]
    a = moments(X, y, lag=2, diff=True).project(U)
    b = moments(X @ U, y, lag=2, diff=True)
    for name in ("scatter", "within", "lagged", "diff"):
        assert _relerr(getattr(a, name), getattr(b, name)) < 1e-10
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-13)
    for sa, sb in zip(a.class_scatter(), b.class_scatter()):
        assert _relerr(sa, sb) < 1e-10
    with pytest.raises(ValueError, match=r"^U: expected a basis of shape \(6, k\)"):
        moments(X).project(U.T)
