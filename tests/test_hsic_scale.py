"""HSIC at scale: blocked sums vs one block vs a dense reference, memory budget, Dask tiles,
random-feature and Nyström approximations."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_wine, make_classification
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

import ldr
from ldr import kernels as K
from ldr.estimators import SupervisedHSIC
from ldr.kernels.tiles import BLOCK_BUFFERS, DEFAULT_MEMORY_BUDGET, choose_block_size
from ldr.manifolds import sin_largest_angle
from ldr.objectives.hsic import HSIC, ApproximateHSIC, label_gamma


def _data(n=240, d=7, c=4, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    X = rng.standard_normal((n, d)) + 0.8 * np.eye(c, d)[y]
    return X, y


def _dense_reference(X, Gamma, kernel, W, V):
    """cost, ∇, Φ, Hessian·V from the n×n formulas of the ISM papers, written plainly."""
    Z, Y = X @ W, X @ V
    cost, grad, Phi, hvp = 0.0, 0.0, 0.0, 0.0
    for w, k in kernel.terms():
        if k.kind == "difference":
            D = Z[:, None, :] - Z[None, :, :]
            b = (D**2).sum(-1)
            db = 2.0 * np.einsum("ijk,ijk->ij", D, Y[:, None, :] - Y[None, :, :])
        else:
            b = Z @ Z.T
            db = Z @ Y.T + Y @ Z.T
        Psi = w * Gamma * k.df(b)
        dPsi = w * Gamma * k.d2f(b) * db
        cost -= w * np.sum(Gamma * k.f(b))
        if k.kind == "difference":
            L = np.diag(Psi.sum(1)) - Psi
            dL = np.diag(dPsi.sum(1)) - dPsi
            Phi = Phi - 2.0 * X.T @ L @ X
            grad = grad - 4.0 * X.T @ L @ Z
            hvp = hvp - 4.0 * X.T @ (dL @ Z + L @ Y)
        else:
            Phi = Phi - X.T @ Psi @ X
            grad = grad - 2.0 * X.T @ Psi @ Z
            hvp = hvp - 2.0 * X.T @ (dPsi @ Z + Psi @ Y)
    return cost, grad, Phi, hvp


def _rel(a, b):
    return np.abs(np.asarray(a) - b).max() / np.abs(b).max()


GAMMAS = ["labels", "factor", "dense"]
KERNELS = [K.Gaussian(2.0), K.Polynomial(2), K.Multiquadric(1.5), K.Squared(),
           0.7 * K.Gaussian(1.5) + 0.2 * K.Linear()]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: repr(k)[:24])
@pytest.mark.parametrize("gamma", GAMMAS)
def test_blocked_one_block_and_dense_reference_agree(kernel, gamma):
    X, y = _data()
    n = len(y)
    rng = np.random.default_rng(1)
    if gamma == "labels":
        G = label_gamma(y, n)[1]
    elif gamma == "factor":
        G = (rng.standard_normal((n, 3)), np.array([1.0, -0.4, 0.3]) / n**2)
    else:
        F = rng.standard_normal((n, 3))
        G = F @ F.T / n**2
    Gd = G if gamma == "dense" else (G[0] * G[1]) @ G[0].T
    W = np.linalg.qr(rng.standard_normal((X.shape[1], 3)))[0]
    V = rng.standard_normal(W.shape)
    ref = _dense_reference(X, Gd, kernel, W, V)
    one = HSIC(X, G, 3, kernel=kernel, block_size=n)
    blocked = HSIC(X, G, 3, kernel=kernel, block_size=17, memory_budget=1)  # no HVP cache
    assert one.block_size == n and blocked.block_size == 17
    if gamma == "labels":  # class labels take the sorted, class-tiled path
        assert blocked.tiles.groups is not None
    for obj in (one, blocked):
        assert obj.cost(W) == pytest.approx(ref[0], rel=1e-10)
        assert _rel(obj.egrad(W), ref[1]) < 1e-10
        assert _rel(obj.phi(W), ref[2]) < 1e-10
        assert _rel(obj.ehvp(W, V), ref[3]) < 1e-9
        assert _rel(2.0 * obj.phi(W) @ W, ref[1]) < 1e-10
    assert _rel(blocked.phi0(), one.phi0()) < 1e-12
    assert "hess" not in blocked._cache and "hess" in one._cache


def test_phi0_is_phi_at_the_taylor_point():
    # f′(β) → f′(0): for the squared kernel f′ ≡ 1, so Φ₀ = Φ at any W
    X, y = _data(120)
    obj = HSIC.supervised(X, y, 2, kernel="squared", block_size=10)
    W = np.linalg.qr(np.random.default_rng(0).standard_normal((X.shape[1], 2)))[0]
    assert _rel(obj.phi0(), obj.phi(W)) < 1e-10


def test_default_block_size_follows_the_memory_budget():
    for n in (10, 1000, 32000, 10**6):
        b = choose_block_size(n)
        assert 1 <= b <= n
        assert BLOCK_BUFFERS * 8 * n * b <= DEFAULT_MEMORY_BUDGET or b == 1
    assert choose_block_size(10**5, memory_budget=8 * 10**5 * BLOCK_BUFFERS * 3) == 3
    X, y = _data(300)
    obj = HSIC.supervised(X, y, 2, memory_budget=8 * 300 * BLOCK_BUFFERS * 5)
    assert obj.block_size == 5
    with pytest.raises(ValueError, match="memory_budget"):
        HSIC.supervised(X, y, 2, memory_budget=0)
    with pytest.raises(ValueError, match="backend"):
        HSIC.supervised(X, y, 2, backend="spark")


def test_check_passes_on_the_blocked_objective():
    X, y = _data(90)
    obj = HSIC.supervised(X, y, 2, block_size=16)
    assert ldr.check(obj).ok


def test_importing_ldr_does_not_import_dask():
    code = "import ldr, ldr.objectives.hsic, ldr.estimators, sys; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_dask_tiles_on_a_local_cluster_equal_the_loop():
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    X, y = _data(400, d=6)
    W = np.linalg.qr(np.random.default_rng(2).standard_normal((6, 2)))[0]
    loop = HSIC.supervised(X, y, 2, block_size=23)
    # what a process-based cluster ships to its workers (the benchmark runs one)
    shipped = pickle.loads(pickle.dumps(loop.tiles))
    assert _rel(shipped.sums(W, True)[1], loop.tiles.sums(W, True)[1]) == 0.0
    # no client: Dask's in-process threaded scheduler
    local = HSIC.supervised(X, y, 2, block_size=23, backend="dask")
    assert _rel(local.phi(W), loop.phi(W)) < 1e-12
    # in-process workers keep the test to about a second (process workers take ~8 s to start)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        obj = HSIC.supervised(X, y, 2, block_size=23, backend="dask")
        assert _rel(obj.phi(W), loop.phi(W)) < 1e-12
        assert obj.cost(W + 0.0) == pytest.approx(loop.cost(W), rel=1e-12)
        W2 = np.linalg.qr(W + 0.1)[0]            # a second Φ reuses the scattered data
        handle = obj._dask_handle
        assert _rel(obj.phi(W2), loop.phi(W2)) < 1e-12
        assert obj._dask_handle is handle
        assert _rel(obj.egrad(np.linalg.qr(W - 0.1)[0]), loop.egrad(np.linalg.qr(W - 0.1)[0])
                    ) < 1e-12


# -- approximations ------------------------------------------------------------------------
def _approx_setup(n=600):
    X, y = _data(n, d=8, c=3)
    Xs = (X - X.mean(0)) / X.std(0)
    exact = HSIC.supervised(Xs, y, 2)
    W = exact.heuristic()
    return Xs, y, exact, W


def test_nystroem_with_all_landmarks_is_the_exact_kernel():
    Xs, y, exact, W = _approx_setup(300)
    G = label_gamma(y, len(y))[1]
    ny = ApproximateHSIC(Xs, G, 2, kernel=exact.kernel, approximation="nystroem",
                         n_features=300)
    assert _rel(ny.phi(W), exact.phi(W)) < 1e-4
    assert ny.cost(W) == pytest.approx(exact.cost(W), rel=1e-4)
    # a general low-rank Γ factor (not class labels) takes the other path
    F = np.random.default_rng(0).standard_normal((300, 3))
    s = np.array([1.0, -0.5, 0.2]) / 300**2
    ex2 = HSIC(Xs, (F, s), 2, kernel=exact.kernel)
    ny2 = ApproximateHSIC(Xs, (F, s), 2, kernel=exact.kernel, approximation="nystroem",
                          n_features=300)
    assert ny2.groups is None
    assert _rel(ny2.phi(W), ex2.phi(W)) < 1e-4


def test_random_features_converge_and_are_seeded():
    Xs, y, exact, W = _approx_setup()
    G = label_gamma(y, len(y))[1]

    def err(m, seed=0):
        a = ApproximateHSIC(Xs, G, 2, kernel=exact.kernel, approximation="rff",
                            n_features=m, random_state=seed)
        return _rel(a.phi(W), exact.phi(W)), a.phi(W)

    e_small = np.mean([err(32, s)[0] for s in range(4)])
    e_big = np.mean([err(2048, s)[0] for s in range(4)])
    assert e_big < e_small / 3              # O(1/√m): 8× expected for 64× more features
    np.testing.assert_array_equal(err(64, 5)[1], err(64, 5)[1])
    assert not np.array_equal(err(64, 5)[1], err(64, 6)[1])
    # a function of span(W): invariant to W → WR
    a = ApproximateHSIC(Xs, G, 2, kernel=exact.kernel, approximation="rff", n_features=64)
    R = np.linalg.qr(np.random.default_rng(3).standard_normal((2, 2)))[0]
    assert _rel(a.phi(W @ R), a.phi(W)) < 1e-10


@pytest.mark.parametrize("approximation", ["rff", "nystroem"])
def test_ism_on_an_approximation_reaches_the_exact_optimum(approximation):
    Xs, y, exact, _ = _approx_setup()
    best = ldr.solve(exact, "ism", tol=1e-10, tol_scale=1.0)
    approx = ApproximateHSIC(Xs, label_gamma(y, len(y))[1], 2, kernel=exact.kernel,
                             approximation=approximation, n_features=256)
    res = ldr.solve(approx, "ism", tol=1e-10, tol_scale=1.0)  # absolute, as written
    assert best.converged and res.converged
    gap = (exact.cost(res.M) - best.cost) / abs(best.cost)
    assert -1e-12 < gap < 1e-3
    assert ldr.manifolds.sin_largest_angle(res.M, best.M) < 0.2


def test_approximation_arguments_are_checked():
    Xs, y, exact, _ = _approx_setup(100)
    G = label_gamma(y, 100)[1]
    with pytest.raises(ValueError, match="approximation"):
        ApproximateHSIC(Xs, G, 2, approximation="fourier")
    with pytest.raises(ValueError, match="n_features"):
        ApproximateHSIC(Xs, G, 2, approximation="rff", n_features=0)
    with pytest.raises(ValueError, match="kernel"):
        ApproximateHSIC(Xs, G, 2, kernel="polynomial", approximation="rff")
    with pytest.raises(ValueError, match="Gamma"):
        ApproximateHSIC(Xs, (G[0] * G[1]) @ G[0].T, 2, approximation="rff")
    approx = ApproximateHSIC(Xs, G, 2, approximation="rff")
    with pytest.raises(ValueError, match="ism"):
        approx.ehvp(approx.heuristic(), approx.heuristic())
    with pytest.raises(ValueError, match="approximation"):
        SupervisedHSIC(approximation="exact").fit(Xs, y)


def test_estimator_with_an_approximation_is_seeded_and_accurate():
    X, y = load_wine(return_X_y=True)
    a = SupervisedHSIC(n_components=4, approximation="nystroem", n_kernel_features=64,
                       random_state=1).fit(X, y)
    b = SupervisedHSIC(n_components=4, approximation="nystroem", n_kernel_features=64,
                       random_state=1).fit(X, y)
    exact = SupervisedHSIC(n_components=4).fit(X, y)
    np.testing.assert_array_equal(a.M_, b.M_)
    assert isinstance(a.result_.M, np.ndarray) and a.M_.shape == (13, 4)
    assert ldr.manifolds.sin_largest_angle(a.M_, exact.M_) < 0.1
    pipe = make_pipeline(SupervisedHSIC(n_components=4, approximation="rff", n_kernel_features=256),
                         SVC())
    cv = StratifiedKFold(10, shuffle=True, random_state=0)
    assert cross_val_score(pipe, X, y, cv=cv).mean() >= 0.93



@pytest.mark.parametrize("approximation", [None, "nystroem"])
def test_the_estimator_keeps_one_standardized_copy_of_x(approximation, monkeypatch):
    """``copy=False``: the objective keeps the estimator's standardized array itself (at 10⁶
    rows each n×d copy is 400 MB), ``copy=True`` (the default) its own; the objective's X is
    the standardized data either way, and the fit is the same."""
    X, y = load_wine(return_X_y=True)
    Gamma = label_gamma(y, X.shape[0])[1]
    cls = HSIC if approximation is None else ApproximateHSIC
    kw = {} if approximation is None else {"approximation": approximation, "n_features": 64}
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    assert cls(Xs, Gamma, 2, copy=False, **kw).X is Xs
    own = cls(Xs, Gamma, 2, **kw).X
    assert not np.shares_memory(own, Xs)
    if approximation is None:   # supervised(): one copy of the caller's X, not two
        assert not np.shares_memory(HSIC.supervised(Xs, y, 2).X, Xs)
    np.testing.assert_array_equal(own, Xs)
    seen = []
    real = SupervisedHSIC._hsic

    def spy(self, data, Gamma, q):
        obj = real(self, data, Gamma, q)
        seen.append((obj.X is data.X, data.X.copy()))
        return obj

    monkeypatch.setattr(SupervisedHSIC, "_hsic", spy)
    model = SupervisedHSIC(4, approximation=approximation,
                           **({} if approximation is None else {"n_kernel_features": 64})
                           ).fit(X, y)
    assert seen and all(same for same, _ in seen)
    np.testing.assert_allclose(seen[0][1], Xs, rtol=1e-14, atol=1e-14)
    with monkeypatch.context() as m:
        m.setattr(SupervisedHSIC, "_hsic", real)
        m.setattr(cls, "__init__", _with_copy(cls.__init__))
        again = SupervisedHSIC(4, approximation=approximation,
                               **({} if approximation is None else {"n_kernel_features": 64})
                               ).fit(X, y)
    np.testing.assert_array_equal(model.M_, again.M_)


def _with_copy(init):
    """``init`` with copy=True forced (the objective's own copy, as before copy=False)."""
    def wrapped(self, *args, **kwargs):
        kwargs["copy"] = True
        return init(self, *args, **kwargs)
    return wrapped

# -- the new defaults leave the estimators' answers (and so SVM accuracy) unchanged ---------
@pytest.mark.parametrize("load", [load_wine, load_breast_cancer, load_digits])
def test_default_blocks_give_the_one_block_answer(load):
    X, y = load(return_X_y=True)
    X = X[:, X.std(axis=0) > 0]
    q = {13: 4, 30: 2}.get(X.shape[1], 9)
    small = 60  # forces many blocks where the default is one block (wine, cancer)
    sizes = (None, len(y)) if choose_block_size(len(y)) < len(y) else (None, len(y), small)
    # a tight tol: both runs end within rounding of the optimum (ISM → trust region)
    answers = [SupervisedHSIC(n_components=q, block_size=b, tol=1e-12).fit(X, y) for b in sizes]
    for est in answers[1:]:  # (iteration counts may differ by one: rounding in the last step)
        assert est.result_.converged and answers[0].result_.converged
        assert ldr.manifolds.sin_largest_angle(est.M_, answers[0].M_) < 1e-8
        assert est.result_.cost == pytest.approx(answers[0].result_.cost, rel=1e-10)
    if load is load_wine:  # the SVM's 10-fold accuracy is then the same
        cv = StratifiedKFold(10, shuffle=True, random_state=0)
        acc = [cross_val_score(make_pipeline(SupervisedHSIC(n_components=q, block_size=b),
                                             SVC()), X, y, cv=cv) for b in (None, small)]
        np.testing.assert_array_equal(acc[0], acc[1])


def test_auto_approximation_is_exact_up_to_the_switch_and_nystroem_beyond(monkeypatch):
    """approximation="auto": the exact kernel up to EXACT_MAX_SAMPLES rows, the Nyström route
    (the same fit as approximation="nystroem") past it, exact where no approximation applies;
    the Nyström answer near the exact one."""
    from ldr.estimators import UnsupervisedHSIC
    from ldr.kernels import features

    limit = features.EXACT_MAX_SAMPLES
    assert features.resolve_approximation("auto", limit, True) is None
    assert features.resolve_approximation("auto", limit + 1, True) == "nystroem"
    assert features.resolve_approximation("auto", 10 * limit, False) is None
    assert features.resolve_approximation("rff", 10, True) == "rff"
    assert features.resolve_approximation(None, 10 * limit, True) is None
    X, y = make_classification(n_samples=400, n_features=6, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=3)
    below = SupervisedHSIC(2).fit(X, y)
    assert isinstance(below.objective_, HSIC) and below.approximation_ is None
    monkeypatch.setattr(features, "EXACT_MAX_SAMPLES", 100)
    auto = SupervisedHSIC(2).fit(X, y)
    by_hand = SupervisedHSIC(2, approximation="nystroem").fit(X, y)
    assert isinstance(auto.objective_, ApproximateHSIC) and "Nyström" in auto.approximation_
    np.testing.assert_allclose(auto.M_, by_hand.M_)
    assert sin_largest_angle(auto.M_, below.M_) < 0.05
    polynomial = SupervisedHSIC(2, kernel="polynomial").fit(X, y)   # no approximation of it
    assert isinstance(polynomial.objective_, HSIC) and polynomial.approximation_ is None
    clusters = UnsupervisedHSIC(2, n_clusters=3, max_outer=2).fit(X)
    assert isinstance(clusters.objective_, ApproximateHSIC) and clusters.approximation_
