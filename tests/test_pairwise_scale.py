"""Issue 25 (bounded memory for the pairwise methods), at small n: the sparse, strip-wise,
blocked and Nyström paths against the dense ones they replace, and declared memory against
tracemalloc."""

import tracemalloc

import autograd
import numpy as np
import pytest
import scipy.spatial.distance

import ldr.estimators as est
import ldr.estimators.spectral as spectral_module
import ldr.objectives.mds as mds_module
import ldr.objectives.nca as nca_module
from ldr.estimators.spectral import (
    gaussian_gamma,
    kernel_embedding,
    nystroem_embedding,
    spectral_embedding,
)
from ldr.kernels import Gaussian
from ldr.manifolds import sin_largest_angle
from ldr.objectives import LPP, MDS, NCA, NPE
from ldr.objectives.nca import NCA as NCAObjective


def _blobs(n=240, d=5, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    return rng.standard_normal((n, d)) * [3, 2, 1, 0.5, 0.25][:d] + y[:, None], y


# --- LPP and NPE: the sparse k-NN graph against a dense n×n construction -------------------
def _dense_knn(X, k):
    D = scipy.spatial.distance.squareform(scipy.spatial.distance.pdist(X, "sqeuclidean"))
    np.fill_diagonal(D, np.inf)
    nbrs = np.argsort(D, axis=1, kind="stable")[:, :k]
    A = np.zeros_like(D, dtype=bool)
    A[np.arange(len(X))[:, None], nbrs] = True
    np.fill_diagonal(D, 0.0)
    return D, A, nbrs


def test_lpp_equals_the_dense_heat_kernel_graph():
    X, _ = _blobs()
    D, A, _ = _dense_knn(X, 6)
    A = A | A.T
    tau = float(np.median(D[np.triu(A)]))
    W = np.where(A, np.exp(-D / tau), 0.0)
    deg = W.sum(axis=1)
    Xc = X - deg @ X / deg.sum()
    S_L = Xc.T @ (np.diag(deg) - W) @ Xc
    S_D = Xc.T @ (deg[:, None] * Xc)
    obj = LPP(X, 2, n_neighbors=6)
    assert obj.tau_ == pytest.approx(tau, rel=1e-12)
    np.testing.assert_allclose(obj.W_.toarray(), W, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(obj.S_L, S_L, rtol=1e-10, atol=1e-10 * np.abs(S_L).max())
    np.testing.assert_allclose(obj.S_D, S_D, rtol=1e-10, atol=1e-10 * np.abs(S_D).max())


def test_npe_equals_the_dense_reconstruction_and_scikit_learns_weights():
    from sklearn.manifold._locally_linear import barycenter_kneighbors_graph

    X, _ = _blobs()
    obj = NPE(X, 2, n_neighbors=7)
    W = barycenter_kneighbors_graph(X, 7, reg=1e-3).toarray()
    np.testing.assert_allclose(obj.W_.toarray(), W, rtol=1e-9, atol=1e-12)
    Xc = X - X.mean(axis=0)
    E = (np.eye(len(X)) - W) @ Xc
    np.testing.assert_allclose(obj.S_L, E.T @ E, rtol=1e-9, atol=1e-9 * np.abs(E.T @ E).max())


def test_heat_weights_by_edge_chunks_do_not_depend_on_the_chunk(monkeypatch):
    import ldr.objectives.graph as graph

    X, _ = _blobs()
    whole = LPP(X, 2, n_neighbors=6).W_.toarray()
    monkeypatch.setattr(graph, "EDGE_ENTRIES", 37)
    np.testing.assert_array_equal(LPP(X, 2, n_neighbors=6).W_.toarray(), whole)
    np.testing.assert_allclose(NPE(X, 2, n_neighbors=7).W_.toarray(),
                               NPE(X[:], 2, n_neighbors=7, radius=None).W_.toarray())


# --- NCA: strips against the dense kernel ---------------------------------------------------
@pytest.mark.parametrize("r", [2, 9])
def test_nca_strips_equal_the_dense_path(r):
    rng = np.random.default_rng(1)
    X, y = _blobs(300, 5)
    X = np.hstack([X, rng.standard_normal((300, 5))])
    dense, strips = NCA(X, y, r), NCA(X, y, r, block_size=37)
    assert not dense._strips and strips._strips
    M, V = rng.standard_normal((10, r)), rng.standard_normal((10, r))
    assert strips.cost(M) == pytest.approx(dense.cost(M), rel=1e-13)
    np.testing.assert_allclose(strips.egrad(M), dense.egrad(M), rtol=1e-11,
                               atol=1e-12 * np.abs(dense.egrad(M)).max())
    np.testing.assert_allclose(strips.ehvp(M, V), dense.ehvp(M, V), rtol=1e-10,
                               atol=1e-11 * np.abs(dense.ehvp(M, V)).max())


def test_nca_strips_are_the_default_beyond_dense_max_and_allocate_what_they_declare(
        monkeypatch):
    monkeypatch.setattr(nca_module, "DENSE_MAX", 100)
    rng = np.random.default_rng(2)
    X, y = _blobs(1200, 5)
    M, V = rng.standard_normal((5, 2)), rng.standard_normal((5, 2))
    tracemalloc.start()
    try:
        obj = NCAObjective.__new__(NCAObjective)
        obj.__init__(X, y, 2)
        obj.cost(M), obj.egrad(M), obj.ehvp(M, V)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert obj._strips
    declared = nca_module.strip_memory(1200)
    assert peak <= declared + 4 * X.nbytes, (peak, declared)
    assert declared <= 3 * peak + 2**20, (peak, declared)
    assert 8 * 1200**2 > 3 * peak   # not one n×n float64 array


# --- MDS: blocked δ and landmarks -----------------------------------------------------------
def test_mds_recomputing_delta_per_block_equals_the_stored_delta(monkeypatch):
    X, _ = _blobs(200, 5)
    stored = MDS(X, 2, block_size=23)
    monkeypatch.setattr(mds_module, "STORE_MAX", 50)
    blocked = MDS(X, 2, block_size=23, smoothing=stored.smoothing)
    assert blocked._delta is None and stored._delta is not None
    rng = np.random.default_rng(3)
    M, V = np.linalg.qr(rng.standard_normal((5, 2)))[0], rng.standard_normal((5, 2))
    assert blocked.cost(M) == pytest.approx(stored.cost(M), rel=1e-12)
    assert blocked.stress(M) == pytest.approx(stored.stress(M), rel=1e-12)
    for f in ("egrad", "phi"):
        a, b = getattr(stored, f)(M), getattr(blocked, f)(M)
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-11 * np.abs(a).max())
    np.testing.assert_allclose(blocked.ehvp(M, V), stored.ehvp(M, V), rtol=1e-9,
                               atol=1e-10 * np.abs(stored.ehvp(M, V)).max())


@pytest.mark.parametrize("store", [True, False])
def test_mds_landmark_oracles_are_the_derivatives_of_its_cost(monkeypatch, store):
    if not store:
        monkeypatch.setattr(mds_module, "STORE_MAX", 20)
    X, _ = _blobs(150, 5)
    obj = MDS(X, 2, landmarks=30, block_size=40)
    assert obj.landmarks_.shape == (30,)
    rng = np.random.default_rng(4)
    M, V = np.linalg.qr(rng.standard_normal((5, 2)))[0], rng.standard_normal((5, 2))
    g = autograd.grad(obj.cost)(M)
    np.testing.assert_allclose(obj.egrad(M), g, rtol=1e-10, atol=1e-12 * np.abs(g).max())
    np.testing.assert_allclose(2 * obj.phi(M) @ M, g, rtol=1e-9, atol=1e-10 * np.abs(g).max())
    h = (obj.egrad(M + 1e-6 * V) - obj.egrad(M - 1e-6 * V)) / 2e-6
    np.testing.assert_allclose(obj.ehvp(M, V), h, rtol=1e-5, atol=1e-6 * np.abs(h).max())


@pytest.mark.parametrize("store", [True, False])
def test_mds_sampled_rows_oracles_and_cost(monkeypatch, store):
    """With rows sampled too: the cost is (n/s)(n/m) Σ over the sampled pairs (by distances
    computed here), and the oracles are its derivatives."""
    if not store:
        monkeypatch.setattr(mds_module, "STORE_MAX", 20)
    X, _ = _blobs(150, 5)
    obj = MDS(X, 2, landmarks=30, rows=60, block_size=25)
    assert obj.rows_.shape == (60,) and np.all(np.diff(obj.rows_) > 0)
    assert obj.X.shape == (60, 5) and obj.n_samples == 150
    rng = np.random.default_rng(4)
    M, V = np.linalg.qr(rng.standard_normal((5, 2)))[0], rng.standard_normal((5, 2))
    cdist = scipy.spatial.distance.cdist
    delta = cdist(X[obj.rows_], X[obj.landmarks_])
    projected = cdist(X[obj.rows_] @ M, X[obj.landmarks_] @ M)
    eps = obj.smoothing
    direct = (150 / 60) * (150 / 30) * np.sum((delta - np.sqrt(projected**2 + eps**2) + eps)**2)
    assert obj.cost(M) == pytest.approx(direct, rel=1e-10)
    g = autograd.grad(obj.cost)(M)
    np.testing.assert_allclose(obj.egrad(M), g, rtol=1e-10, atol=1e-12 * np.abs(g).max())
    np.testing.assert_allclose(2 * obj.phi(M) @ M, g, rtol=1e-9, atol=1e-10 * np.abs(g).max())
    h = (obj.egrad(M + 1e-6 * V) - obj.egrad(M - 1e-6 * V)) / 2e-6
    np.testing.assert_allclose(obj.ehvp(M, V), h, rtol=1e-5, atol=1e-6 * np.abs(h).max())
    # every row sampled is the landmark estimate itself; the heuristic is every row's PCA
    every = MDS(X, 2, landmarks=30, rows=150)
    assert every.rows_ is None
    assert every.cost(M) == MDS(X, 2, landmarks=30).cost(M)
    np.testing.assert_allclose(obj.heuristic(), MDS(X, 2).heuristic())


def test_mds_sampled_pairs_estimate_the_exact_cost_without_bias():
    """The mean of the (rows, landmarks) estimate over 300 draws is the exact cost within 3%
    (a scale missing n/s or n/m would be off by a factor 5 or more)."""
    X, _ = _blobs(200, 4, seed=2)
    M = np.linalg.qr(np.random.default_rng(1).standard_normal((4, 2)))[0]
    exact = MDS(X, 2).cost(M)
    smoothing = MDS(X, 2).smoothing
    draws = [MDS(X, 2, landmarks=20, rows=40, smoothing=smoothing, random_state=seed).cost(M)
             for seed in range(300)]
    assert np.mean(draws) == pytest.approx(exact, rel=0.03)
    with pytest.raises(ValueError, match="rows: a row sample needs landmarks"):
        MDS(X, 2, rows=50)
    with pytest.raises(ValueError, match=r"rows: must be None or an integer in \[2, "):
        MDS(X, 2, landmarks=20, rows=201)


def test_mds_with_every_sample_a_landmark_is_the_exact_stress():
    X, _ = _blobs(120, 5)
    exact, all_landmarks = MDS(X, 2), MDS(X, 2, landmarks=120)
    M = exact.heuristic()
    assert all_landmarks.cost(M) == pytest.approx(exact.cost(M), rel=1e-12)
    np.testing.assert_allclose(all_landmarks.egrad(M), exact.egrad(M), rtol=1e-10,
                               atol=1e-12 * np.abs(exact.egrad(M)).max())


def test_mds_landmarks_approximate_the_exact_answer():
    """The stated approximation at n = 600, 100 landmarks: the exact stress-1 at the landmark
    answer within 2% of the exact answer's, and the subspaces close."""
    X, _ = _blobs(600, 5, seed=5)
    exact = est.MDS(2).fit(X)
    approx = est.MDS(2, landmarks=100).fit(X)
    stress_at_approx = exact.objective_.stress(approx.M_)
    assert exact.stress_ <= stress_at_approx <= 1.02 * exact.stress_
    assert sin_largest_angle(exact.M_, approx.M_) < 0.1
    with pytest.raises(ValueError, match="landmarks:"):
        MDS(X, 2, landmarks=1)


# --- the clustering estimators' U-step and the Gaussian Γ ------------------------------------
@pytest.mark.parametrize("center", [False, True])
def test_nystroem_embedding_with_every_row_a_landmark_is_exact(center):
    X, _ = _blobs(200, 3)
    kern = Gaussian(2.0)
    U, dm = spectral_embedding(kern.gram(X, np.eye(3)), 3, center)
    U2, dm2 = nystroem_embedding(kern, X, 3, center, 200, 0)
    np.testing.assert_allclose(dm2, dm, rtol=1e-10)
    assert sin_largest_angle(U, U2) < 1e-8
    U3, _ = nystroem_embedding(kern, X, 3, center, 60, 0)  # the stated approximation
    assert sin_largest_angle(U, U3) < 0.05
    U4, _ = kernel_embedding(kern, X, 3, center, "auto", 60, 0)   # auto: exact at n = 200
    assert sin_largest_angle(U, U4) < 1e-10


@pytest.mark.parametrize("center", [False, True])
def test_nystroem_embedding_keeping_psi_equals_its_three_passes(monkeypatch, center):
    """Ψ = CB kept (it fits the budget: C formed once) and recomputed in each of the three
    passes over the row blocks give the same degrees and embedding (its columns are
    eigenvectors: each up to its sign, which rounding may flip)."""
    monkeypatch.setattr(spectral_module, "BLOCK", 128)              # five row blocks
    X = _blobs(600, 3)[0]
    kern = Gaussian(2.0)
    U, dm = nystroem_embedding(kern, X, 3, center, 60, 0)
    U0, dm0 = nystroem_embedding(kern, X, 3, center, 60, 0, memory_budget=0)
    np.testing.assert_allclose(dm, dm0, rtol=1e-9)
    signs = np.sign(np.sum(U * U0, axis=0))
    np.testing.assert_allclose(U * signs, U0, rtol=1e-7, atol=1e-9)


def test_landmarks_from_a_pool_still_approximate_the_embedding(monkeypatch):
    """Past LANDMARK_POOL·m rows the k-means++ seeding runs on a seeded uniform pool: the
    landmarks are distinct rows of the pool, the same for the same seed, and on rows of
    dimension q = 2 (the U-step's Z = XW) the embedding they give stays near the exact one."""
    X = _blobs(600, 3)[0][:, :2]
    kern = Gaussian(2.0)
    U, _ = spectral_embedding(kern.gram(X, np.eye(2)), 3, False)
    monkeypatch.setattr(spectral_module, "LANDMARK_POOL", 4)          # a pool of 240 rows
    idx = spectral_module.landmarks(X, 60, 0)
    assert len(np.unique(idx)) == len(idx) and np.all(np.diff(idx) > 0)
    assert 0 <= idx[0] and idx[-1] < 600
    np.testing.assert_array_equal(idx, spectral_module.landmarks(X, 60, 0))
    assert not np.array_equal(idx, spectral_module.landmarks(X, 60, 1))
    for seed in range(3):
        assert sin_largest_angle(U, nystroem_embedding(kern, X, 3, False, 60, seed)[0]) < 0.05
    monkeypatch.setattr(spectral_module, "LANDMARK_POOL", 10)         # every row the pool
    U_all, _ = nystroem_embedding(kern, X, 3, False, 60, 0)
    assert sin_largest_angle(U, U_all) < 0.01


def test_gaussian_gamma_factor_equals_the_dense_gamma(monkeypatch):
    rng = np.random.default_rng(6)
    n = 400
    for Y in (rng.standard_normal((n, 1)), rng.exponential(size=(n, 1))):
        Y = (Y - Y.mean()) / Y.std()
        K = Gaussian(1.0).gram(Y, np.eye(1))
        K -= K.mean(axis=0)
        K -= K.mean(axis=1, keepdims=True)
        F, s = gaussian_gamma(Y, 1.0, 128, 0)
        assert F.shape[1] < 40
        np.testing.assert_allclose((F * s) @ F.T, K / n**2, rtol=0,
                                   atol=1e-8 * np.abs(K).max() / n**2)
        with monkeypatch.context() as patch:   # Ψ in blocks of rows (uneven), as past 4096
            patch.setattr(spectral_module, "BLOCK", 97)
            F2, s2 = gaussian_gamma(Y, 1.0, 128, 0)
        np.testing.assert_allclose((F2 * s2) @ F2.T, (F * s) @ F.T, rtol=0,
                                   atol=1e-12 * np.abs(K).max() / n**2)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_clustering_estimators_nystroem_u_step_agrees_with_the_exact_one():
    from sklearn.metrics import adjusted_rand_score

    X, y = _blobs(300, 4, seed=7)
    for cls, args in ((est.UnsupervisedHSIC, (X,)), (est.KDAC, (X, y))):
        exact = cls(2, n_clusters=3, max_outer=3, spectral="exact").fit(*args)
        nys = cls(2, n_clusters=3, max_outer=3, spectral="nystroem",
                  n_kernel_features=300).fit(*args)
        assert adjusted_rand_score(exact.labels_, nys.labels_) > 0.99
        assert sin_largest_angle(exact.M_, nys.M_) < 1e-6
    with pytest.raises(ValueError, match="spectral:"):
        est.UnsupervisedHSIC(2, spectral="dense").fit(X)


def test_mds_beyond_store_max_allocates_no_n_by_n_array(monkeypatch):
    """Blocked stress's oracles allocate blocks only: at n = 1500 with δ not stored the
    traced peak is far below one n×n float64 array (18 MB) and within the declared bound.
    (Building it computes ε from the distances of a 2000-row subsample: 16 MB at any n.)"""
    monkeypatch.setattr(mds_module, "STORE_MAX", 100)
    X, _ = _blobs(1500, 5)
    rng = np.random.default_rng(8)
    M, V = np.linalg.qr(rng.standard_normal((5, 2)))[0], rng.standard_normal((5, 2))
    obj = MDS(X, 2, block_size=20)    # a block's arrays: about 12 of 20 × n × r numbers
    tracemalloc.start()
    try:
        obj.cost(M), obj.egrad(M), obj.ehvp(M, V)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert obj._delta is None
    assert peak <= mds_module._memory(1500) + 2 * X.nbytes
    assert peak < 8 * 1500**2 / 4, peak
