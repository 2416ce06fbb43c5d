"""LPP and NPE (survey Eq. 17–20): graph weights, formulas, forms, solvers, bad inputs."""

import importlib.util

import numpy as np
import pytest
import scipy.linalg
from scipy.spatial.distance import pdist, squareform

import ldr
from ldr.objectives.graph import LPP, NPE, neighbor_edges

SIN = ldr.manifolds.sin_largest_angle


def _data(seed, n=90, d=6):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.linspace(3.0, 0.3, d) + 5.0  # off-center on purpose


def _knn_adjacency(X, k):
    D2 = squareform(pdist(X, "sqeuclidean"))
    np.fill_diagonal(D2, np.inf)
    A = np.zeros_like(D2)
    nearest = np.argsort(D2, axis=1)[:, :k]
    A[np.repeat(np.arange(len(X)), k), nearest.ravel()] = 1.0
    np.fill_diagonal(D2, 0.0)
    return A, D2


def test_lpp_heat_weights_match_a_direct_computation():
    X = _data(0)
    obj = LPP(X, 2, n_neighbors=5)
    A, D2 = _knn_adjacency(X, 5)
    A = np.maximum(A, A.T)                      # i ~ j when either is a neighbour of the other
    tau = np.median(D2[A > 0])
    W = A * np.exp(-D2 / tau)
    assert obj.tau_ == pytest.approx(tau, rel=1e-14)
    np.testing.assert_allclose(obj.W_.toarray(), W, rtol=1e-13, atol=0)
    # S_L = XᵀLX, and Eq. 17: Σ_ij W_ij ‖Mᵀx_i − Mᵀx_j‖² = 2 tr(MᵀS_LM)
    deg = W.sum(axis=1)
    np.testing.assert_allclose(obj.S_L, X.T @ (np.diag(deg) - W) @ X, rtol=1e-9, atol=1e-9)
    M = ldr.manifolds.orthonormalize(np.random.default_rng(1).standard_normal((6, 2)))
    eq17 = np.sum(W * squareform(pdist(X @ M, "sqeuclidean")))
    assert eq17 == pytest.approx(2 * np.trace(M.T @ obj.S_L @ M), rel=1e-10)
    mu = deg @ X / deg.sum()
    np.testing.assert_allclose(obj.S_D, (X - mu).T @ np.diag(deg) @ (X - mu), rtol=1e-10)
    assert obj.ratio(M) == pytest.approx(obj.cost(M), rel=1e-14)
    assert 0 <= obj.ratio(M) <= 2


def test_radius_graph_and_binary_weights_match_a_direct_computation():
    X = _data(1, n=60)
    D = squareform(pdist(X))
    eps = 1.01 * np.max(np.min(D + np.diag(np.full(60, np.inf)), axis=1))  # nobody isolated
    obj = LPP(X, 2, radius=eps, weight="binary")
    A = (D < eps).astype(float)
    np.fill_diagonal(A, 0.0)
    np.testing.assert_array_equal(obj.W_.toarray(), A)


def test_npe_weights_are_lle_reconstruction_weights():
    X = _data(2, n=60)
    k = 4                                       # k ≤ d: local Gram matrices are invertible
    obj = NPE(X, 2, n_neighbors=k, lle_reg=1e-12)
    W = obj.W_.toarray()
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    A, _ = _knn_adjacency(X, k)
    np.testing.assert_array_equal(W != 0, A > 0)   # row i: the k nearest neighbours of x_i
    for i in range(0, 60, 7):                   # constrained least squares via its KKT system
        nb = np.flatnonzero(A[i])
        N = X[nb].T
        kkt = np.block([[2 * N.T @ N, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
        sol = np.linalg.solve(kkt, np.r_[2 * N.T @ X[i], 1.0])
        np.testing.assert_allclose(W[i, nb], sol[:k], rtol=1e-6, atol=1e-8)
    E = (np.eye(60) - W) @ X
    np.testing.assert_allclose(obj.S_L, E.T @ E, rtol=1e-9, atol=1e-9)


def test_npe_weights_match_scikit_learn_barycenter_graph():
    lle = pytest.importorskip("sklearn.manifold._locally_linear")
    X = _data(3, n=50)
    obj = NPE(X, 2, n_neighbors=8)              # k > d: the regularization matters
    ref = lle.barycenter_kneighbors_graph(X, 8, reg=1e-3).toarray()
    np.testing.assert_allclose(obj.W_.toarray(), ref, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("cls,kw", [(LPP, {"n_neighbors": 6}), (NPE, {"n_neighbors": 8}),
                                    (LPP, {"radius": 5.0, "form": "whitened"}),
                                    (NPE, {"n_neighbors": 5, "form": "whitened"}),
                                    (LPP, {"n_neighbors": 6, "weight": "binary",
                                           "shrinkage": 0.1})])
def test_check_passes(cls, kw):
    obj = cls(_data(4), 2, **kw)
    report = ldr.check(obj, random_state=1)
    assert report.ok, str(report)
    assert report["phi"].ok and report["pencil"].ok


@pytest.mark.parametrize("cls,k", [(LPP, 6), (NPE, 10)])
def test_ratio_form_solvers_never_worse_than_the_heuristic(cls, k):
    gains = []
    for seed in range(4):
        for r in (1, 2, 3):
            obj = cls(_data(10 + seed), r, n_neighbors=k)
            heur = obj.ratio(obj.heuristic())
            for solver in ("trust-region", "ism"):
                res = ldr.solve(obj, solver, start="heuristic")
                assert obj.ratio(res.M) <= heur * (1 + 1e-12)
            tr = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-9)
            gains.append((heur - obj.ratio(tr.M)) / heur)
    assert max(gains) > 1e-4            # the eigenvector recipe is not this cost's optimum
    assert min(gains) >= -1e-12


def test_heuristic_is_the_smallest_generalized_eigenvectors():
    obj = LPP(_data(5), 2, n_neighbors=6)
    w, V = scipy.linalg.eigh(obj.S_L, obj.S_D)
    assert SIN(obj.heuristic(), np.linalg.qr(V[:, :2])[0]) < 1e-8
    one = LPP(_data(5), 1, n_neighbors=6)       # r = 1: the recipe is optimal
    assert one.ratio(one.heuristic()) == pytest.approx(w[0], rel=1e-10)


@pytest.mark.parametrize("cls,k", [(LPP, 6), (NPE, 8)])
def test_whitened_form_is_eq19_and_its_heuristic_is_optimal(cls, k):
    X = _data(6)
    obj = cls(X, 2, n_neighbors=k, form="whitened")
    ratio = cls(X, 2, n_neighbors=k)
    Sm = obj.whitener_
    np.testing.assert_allclose(Sm @ ratio.S_D @ Sm, np.eye(6), atol=1e-9)
    C = Sm @ ratio.S_L @ Sm
    M = obj.heuristic()
    # Eq. 19 (divided by r) and its global minimum: the 2 smallest eigenvalues of C
    assert obj.cost(M) == pytest.approx(np.trace(M.T @ C @ M) / 2, rel=1e-12)
    assert obj.cost(M) == pytest.approx(np.linalg.eigvalsh(C)[:2].sum() / 2, rel=1e-10)
    for seed in range(3):
        res = ldr.solve(obj, "trust-region", start="random", random_state=seed, tol=1e-10)
        assert res.cost >= obj.cost(M) - 1e-12
    # the mapping P = MᵀS_D^{-1/2} spans LPP's generalized eigenvectors and meets Eq. 18
    P = Sm @ M
    _, V = scipy.linalg.eigh(ratio.S_L, ratio.S_D)
    assert SIN(np.linalg.qr(P)[0], np.linalg.qr(V[:, :2])[0]) < 1e-8
    np.testing.assert_allclose(P.T @ ratio.S_D @ P, np.eye(2), atol=1e-9)
    Y = obj.transform(X, M)
    np.testing.assert_allclose(Y, (X - obj.mean_) @ P, atol=1e-10)


def test_centering_makes_the_cost_translation_invariant():
    X = _data(7)
    M = ldr.manifolds.orthonormalize(np.random.default_rng(0).standard_normal((6, 2)))
    for cls in (LPP, NPE):
        a, b = cls(X, 2, n_neighbors=6), cls(X - 100.0, 2, n_neighbors=6)
        assert a.cost(M) == pytest.approx(b.cost(M), rel=1e-8)
        np.testing.assert_allclose(a.transform(X, M), b.transform(X - 100.0, M), atol=1e-8)


def test_bad_inputs_raise():
    X = _data(8, n=30)
    with pytest.raises(ValueError, match="n_neighbors: must be smaller than n_samples = 30"):
        LPP(X, 2, n_neighbors=30)
    with pytest.raises(ValueError, match="n_neighbors: must be a positive integer"):
        NPE(X, 2, n_neighbors=0)
    with pytest.raises(ValueError, match="radius: the ε-ball graph .* has no edge"):
        LPP(X, 2, radius=1e-6)
    far = np.vstack([X, X[:1] + 1e3])
    with pytest.raises(ValueError, match=r"radius: 1 sample\(s\) have no neighbour"):
        NPE(far, 2, radius=np.quantile(pdist(X), 0.5))
    with pytest.raises(ValueError, match="give exactly one"):
        LPP(X, 2, n_neighbors=3, radius=1.0)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="X: .*NaN"):
        LPP(bad, 2)
    with pytest.raises(ValueError, match="r: .*r < d"):
        NPE(X, 6)
    with pytest.raises(ValueError, match="form:"):
        LPP(X, 2, form="trace")
    with pytest.raises(ValueError, match="weight:"):
        LPP(X, 2, weight="gaussian")
    with pytest.raises(ValueError, match="tau:"):
        LPP(X, 2, tau=-1.0)
    wide = np.random.default_rng(0).standard_normal((20, 30))
    with pytest.raises(ValueError, match="singular .* shrinkage > 0"):
        LPP(wide, 2, n_neighbors=4)
    assert ldr.check(LPP(wide, 2, n_neighbors=4, shrinkage=0.1)).ok
    with pytest.raises(ValueError, match="shrinkage:"):
        NPE(X, 2, shrinkage=2.0)


def test_neighbor_graph_is_symmetric_without_self_loops():
    X = _data(9, n=40)
    edges, search = neighbor_edges(X, n_neighbors=3)
    G = edges.sparse()
    assert search.method == "exact" and search.recall is None
    assert (G != G.T).nnz == 0 and G.diagonal().sum() == 0
    assert np.all(np.diff(G.indptr) >= 3)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("make", [lambda X: LPP(X, 2, n_neighbors=6),
                                  lambda X: LPP(X, 2, n_neighbors=6, weight="binary"),
                                  lambda X: NPE(X, 2, n_neighbors=7)],
                         ids=["LPP", "LPP(binary)", "NPE"])
def test_a_tensors_graph_sums_stay_in_pytorch_and_equal_numpys(make):
    """The edges, weights and sums of a tensor's graph are computed in PyTorch (S_L, S_D and
    the mean stay tensors; no sparse W_ is formed) and equal NumPy's."""
    import torch

    X = _data(2, n=150)
    ref = make(X)
    obj = make(torch.as_tensor(X))
    assert obj.W_ is None
    for name in ("S_L", "S_D", "mean_"):
        value = getattr(obj, name)
        assert isinstance(value, torch.Tensor), name
        expected = getattr(ref, name)
        np.testing.assert_allclose(value.numpy(), expected, rtol=1e-10,
                                   atol=1e-12 * np.abs(expected).max())
