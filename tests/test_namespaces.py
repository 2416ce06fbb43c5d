"""The solve in the namespace of the data (issue 24, item 4): NumPy, array-api-strict and
PyTorch on the CPU.

PCA and orthogonal LDA built from an array-api-strict or PyTorch array keep their statistics
in that namespace, and :func:`ldr.solve` iterates there (:mod:`ldr.data.arrays`): ``Result.M``
comes back in it.  Float64 answers equal NumPy's: the cost to 1e-10 relative and, for the
second-order and spectral solvers (trust region, ISM), the subspace to 1e-10 (largest
principal-angle sine).  The first-order solvers (gradient, conjugate gradient, L-BFGS) follow
the rounding of the sums, which differs from NumPy's BLAS in the last bits, along a different
path to the same optimum: their subspace agrees to what the gradient tolerance implies
(1e-6 at gtol = 1e-10 on wine's ill-conditioned LDA for gradient descent and conjugate
gradients; 1e-9 for L-BFGS, whose last steps are Newton-like).  Float32 PyTorch data give float32
iterates within 1e-5 (subspace) and 1e-6 (relative cost) of the float64 answer: the data
rounded to float32 move the optimum by about their rounding, amplified by the conditioning.

GPU-only tests carry the ``gpu`` marker and skip without CUDA.
"""

import numpy as np
import pytest
from _array_namespaces import HAS_TORCH, NAMESPACES
from _array_namespaces import as_namespace as _as

import ldr
from ldr.data import arrays
from ldr.manifolds import sin_largest_angle

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

SOLVERS = [None, "trust-region", "ism", "lbfgs", "gradient", "conjugate-gradient"]
#: subspace agreement with NumPy's answer, per solver (module docstring)
SUBSPACE_TOL = {"gradient": 1e-6, "conjugate-gradient": 1e-6, "lbfgs": 1e-9}
#: line-search solvers that stall at rounding level near a relative gradient of 1e-8: they
#: run at their default tolerance (:mod:`ldr.core.stopping`)
FIRST_ORDER = ("gradient", "conjugate-gradient")


@pytest.fixture(scope="module")
def wine():
    return ldr.datasets.load("wine")


def _objectives(X, y, Xa, ya):
    return [(ldr.objectives.PCA(X, 3), ldr.objectives.PCA(Xa, 3)),
            (ldr.objectives.LDA(X, y, 2), ldr.objectives.LDA(Xa, ya, 2))]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("name", NAMESPACES)
def test_float64_answers_in_the_namespace_equal_numpys(wine, name, solver):
    X, y = wine
    Xa = _as(name, X)
    for ref_obj, obj in _objectives(X, y, Xa, _as(name, y) if name == "torch" else y):
        assert arrays.foreign(obj.A if hasattr(obj, "A") else obj.C) is not None
        tol = None if solver in FIRST_ORDER else 1e-10  # theirs stall near 1e-8: the default
        ref = ldr.solve(ref_obj, solver, tol=tol)
        res = ldr.solve(obj, solver, tol=tol)
        assert arrays.foreign(res.M) is arrays.foreign(Xa)        # the input's namespace
        assert arrays.device(res.M) == arrays.device(Xa)
        assert res.converged and ref.converged, res.reason
        assert res.cost == pytest.approx(ref.cost, rel=1e-10)
        M = np.asarray(arrays.to_host(res.M))
        assert sin_largest_angle(M, ref.M) <= SUBSPACE_TOL.get(solver, 1e-10)


@pytest.mark.parametrize("name", NAMESPACES)
def test_the_certificate_of_a_namespace_run_is_numpys(wine, name):
    X, y = wine
    ref = ldr.solve(ldr.objectives.LDA(X, y, 2), certify=True)
    res = ldr.solve(ldr.objectives.LDA(_as(name, X), y, 2), certify=True)
    assert res.certificate.is_local_min and res.certificate.global_optimum
    assert res.certificate.hess_min == pytest.approx(ref.certificate.hess_min, rel=1e-8)
    assert res.certificate.hess_max == pytest.approx(ref.certificate.hess_max, rel=1e-8)


@pytest.mark.parametrize("name", NAMESPACES)
def test_a_custom_objective_on_a_start_of_the_namespace(name):
    """A hand-written (backend='numpy') objective whose arrays are captured in a closure: the
    namespace comes from M0, and every solver's iterates stay in it."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((8, 8))
    C = A @ A.T
    Ca = _as(name, C)

    def make(Cm):
        return ldr.objective(lambda M: -arrays.namespace(M).sum(M * (Cm @ M)), shape=(8, 2),
                             manifold="grassmann", backend="numpy",
                             egrad=lambda M: -2.0 * (Cm @ M), ehvp=lambda M, V: -2.0 * (Cm @ V))

    M0 = ldr.manifolds.orthonormalize(rng.standard_normal((8, 2)))
    top = np.sort(np.linalg.eigvalsh(C))[-2:].sum()
    for solver in ("trust-region", "lbfgs"):
        res = ldr.solve(make(Ca), solver, start=_as(name, M0))
        assert arrays.foreign(res.M) is arrays.foreign(Ca)
        assert res.converged and res.cost == pytest.approx(-top, rel=1e-12)


def test_rows_moments_in_the_namespace_equal_numpys(wine):
    pytest.importorskip("torch")
    import torch

    from ldr.data.rows import moments

    X, y = wine
    ref = moments(X, y, lag=2, diff=True)
    out = moments(torch.as_tensor(X), torch.as_tensor(y), lag=2, diff=True)
    assert isinstance(out.scatter, torch.Tensor) and isinstance(out.within, torch.Tensor)
    for a, b in ((out.covariance(1), ref.covariance(1)), (out.lagged_covariance(),
                 ref.lagged_covariance()), (out.diff_moment(), ref.diff_moment()),
                 *zip(out.class_scatter(), ref.class_scatter())):
        np.testing.assert_allclose(arrays.to_host(a), b, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(out.labels, ref.labels)


@pytest.mark.parametrize("name", NAMESPACES)
def test_moments_of_chunks_merge_in_the_namespace_as_numpys_of_the_whole(name):
    """An iterator of chunks of another namespace: each chunk's moments and their merges
    (classes absent from a chunk placed by one-hot products, the lagged pairs across the
    boundaries) stay there and equal the moments of the whole NumPy array."""
    from ldr.data.rows import moments

    rng = np.random.default_rng(0)
    X = 1e3 + rng.standard_normal((400, 4)) * [1.0, 2.0, 0.5, 3.0]
    y = np.repeat([0, 1, 2], [150, 100, 150])  # chunks of one or two classes
    chunks = [(_as(name, X[i:i + 70]), y[i:i + 70]) for i in range(0, 400, 70)]
    out = moments(iter(chunks), lag=2, diff=True)
    ref = moments(X, y, lag=2, diff=True)
    assert arrays.foreign(out.within) is arrays.foreign(_as(name, X))
    for a, b in ((out.covariance(1), ref.covariance(1)), (out.lagged_covariance(),
                 ref.lagged_covariance()), (out.diff_moment(), ref.diff_moment()),
                 *zip(out.class_scatter(), ref.class_scatter())):
        np.testing.assert_allclose(arrays.to_host(a), b, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(out.labels, ref.labels)


def test_rows_moments_in_the_namespace_refuse_bad_input_and_keep_precision(wine):
    """The finiteness check reads the column means, the labels' classes are found on the
    device, and the scatter's rank-one correction keeps a far-off mean exact (1e6 + data)."""
    pytest.importorskip("torch")
    import torch

    from ldr.core.errors import ParameterError
    from ldr.data.rows import moments

    X, y = wine
    Xt = torch.as_tensor(X)
    for bad, value in (((3, 4), float("nan")), ((0, 0), float("inf"))):
        Xb = Xt.clone()
        Xb[bad] = value
        with pytest.raises(ParameterError, match="NaN or infinity"):
            moments(Xb, torch.as_tensor(y))
    with pytest.raises(ParameterError, match="overflow"):
        moments(torch.full((4, 2), 1e308, dtype=torch.float64))
    with pytest.raises(ParameterError, match="at least two classes"):
        moments(Xt, torch.zeros(len(y), dtype=torch.int64))
    with pytest.raises(ParameterError, match="labels but X has"):
        moments(Xt, torch.as_tensor(y[:-1]))
    yf = torch.as_tensor(y, dtype=torch.float64)
    yf[5] = float("nan")
    with pytest.raises(ParameterError, match="labels contain NaN"):
        moments(Xt, yf)
    # columns with |mean| ≤ sd take the uncentred path XᵀX − n·ccᵀ, columns whose mean is
    # far from 0 (mean 50, sd 3) the centred one; both equal NumPy's two-pass moments
    from ldr.data import statistics

    Xs, Xr = X + 0.5, 3 * X + 50  # wine's fixture is standardized
    for data, uncentred in ((Xs, True), (Xr, False)):
        t = torch.as_tensor(data)
        S = statistics._uncentred_scatter(t, torch.mean(t, 0), arrays.namespace(t))
        assert (S is not None) == uncentred
    for data in (Xs, Xr):
        np.testing.assert_allclose(arrays.to_host(moments(torch.as_tensor(data)).covariance(1)),
                                   moments(data).covariance(1), rtol=1e-12, atol=1e-12)
    far = moments(torch.as_tensor(X + 1e6), torch.as_tensor(y))
    ref = moments(X, y)
    np.testing.assert_allclose(arrays.to_host(far.covariance(1)), ref.covariance(1),
                               rtol=1e-8, atol=1e-8 * np.abs(ref.covariance(1)).max())
    np.testing.assert_allclose(arrays.to_host(far.within), ref.within, rtol=1e-8,
                               atol=1e-8 * np.abs(ref.within).max())


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@pytest.mark.parametrize("solver", [None, "trust-region", "ism"])
def test_float32_torch_iterates_in_float32_to_its_precision(wine, solver):
    """float32's documented tolerance: the default gtol √ε-scaled (2.3e-4) gives the cost to
    float32's precision (1e-6 relative) and the subspace to a few √ε₃₂ (5e-4)."""
    import torch

    X, y = wine
    X32 = _as("torch", X, torch.float32)
    for ref_obj, obj in _objectives(X, y, X32, y):
        ref = ldr.solve(ref_obj, solver)
        res = ldr.solve(obj, solver)  # the default gtol for float32: 1e-8·√(ε₃₂/ε₆₄)
        assert res.M.dtype == torch.float32
        assert res.converged, res.reason
        assert res.cost == pytest.approx(ref.cost, rel=1e-6)
        assert sin_largest_angle(res.M.double().numpy(), ref.M) <= 5e-4


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_the_default_tolerance_follows_the_datas_precision():
    """ldr.solve's default tol is √ε-scaled to the iterates' dtype; an estimator's default
    tol (None) is ldr.solve's, a tol the user set or another default (NCA's 1e-6) is kept.
    (A float32 estimator fit under dispatch: tests/array_api_cases.py.)"""
    import torch

    from ldr.core.stopping import default_tol
    from ldr.estimators import NCA, OrthogonalLDA

    assert default_tol(torch.zeros(1, dtype=torch.float64)) == 1e-8 == default_tol(None)
    assert default_tol(torch.zeros(1, dtype=torch.float32)) == pytest.approx(2.317e-4,
                                                                               rel=1e-3)
    assert OrthogonalLDA(2)._solve_options()["tol"] is None
    assert OrthogonalLDA(2, tol=1e-6)._solve_options()["tol"] == 1e-6
    assert NCA(2)._solve_options()["tol"] == 1e-6


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
def test_cuda_tensors_iterate_on_the_gpu(wine):
    import torch

    X, y = wine
    ref = ldr.solve(ldr.objectives.LDA(X, y, 2))
    res = ldr.solve(ldr.objectives.LDA(torch.as_tensor(X, device="cuda"), y, 2), certify=True)
    assert res.M.device.type == "cuda"
    assert res.cost == pytest.approx(ref.cost, rel=1e-10)
    assert sin_largest_angle(res.M.cpu().numpy(), ref.M) <= 1e-10


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("gamma", ["labels", "dense", "factor"])
def test_hsic_block_sums_in_the_namespace_equal_numpys(name, gamma):
    """HSIC's Φ, gradient, cost, Φ₀ and Hessian-vector products by row blocks
    (:meth:`ldr.kernels.tiles.Tiles.to_namespace`) equal NumPy's, and ISM then the trust region
    reach NumPy's answer, the iterates in the namespace."""
    from ldr.objectives import HSIC

    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    Xs = (X - X.mean(0)) / X.std(0)
    F = np.random.default_rng(1).standard_normal((120, 3))

    def make(A):
        if gamma == "labels":
            return HSIC.supervised(A, y, 2, block_size=32)
        if gamma == "dense":
            return HSIC(A, HSIC.supervised(Xs, y, 2).Gamma, 2, block_size=32)
        return HSIC(A, (F, np.ones(3)), 2, block_size=50)

    ref_obj, obj = make(Xs), make(_as(name, Xs))
    W = ref_obj.heuristic()
    Wa, V = _as(name, W), rng.standard_normal(W.shape)
    scale = np.abs(ref_obj.phi(W)).max()
    assert obj.cost(Wa) == pytest.approx(ref_obj.cost(W), rel=1e-12)
    for a, b in ((obj.phi(Wa), ref_obj.phi(W)), (obj.egrad(Wa), ref_obj.egrad(W)),
                 (obj.phi0(), ref_obj.phi0()), (obj.ehvp(Wa, _as(name, V)), ref_obj.ehvp(W, V))):
        assert arrays.foreign(a) is not None
        np.testing.assert_allclose(arrays.to_host(a), b, rtol=1e-11, atol=1e-12 * scale)
    ref, res = ldr.solve(ref_obj, tol=1e-10), ldr.solve(obj, tol=1e-10)
    assert res.converged and arrays.foreign(res.M) is arrays.foreign(Wa)
    assert res.cost == pytest.approx(ref.cost, rel=1e-10)
    assert sin_largest_angle(np.asarray(arrays.to_host(res.M)), ref.M) <= 1e-10
