"""HSIC's every built-in kernel in the array namespace of the data (issue 24): the squared,
multiquadric, linear and polynomial kernels and a conic combination (the ISM paper's
Gaussian + polynomial, "G+P") compute the cost, Φ, gradient, Φ₀ and Hessian-vector products
by row blocks in the namespace (:meth:`ldr.kernels.tiles.Tiles.to_namespace`,
:meth:`ldr.kernels.Kernel.derivatives`), equal to NumPy's to 1e-11 for each layout of Γ
(class labels, dense, a low-rank factor), and :func:`ldr.solve` reaches NumPy's answer with
its iterates there.  (The Gaussian alone: ``tests/test_namespaces.py``.)

The oracles are compared at a random point: at ISM's spectral start the squared and linear
kernels' cost is 0 for supervised Γ (Φ is the constant 2XᵀΓX, of rank c − 1 < d − r).  The
solves use a factor Γ of rank 8 > d, so that every kernel's optimum is one subspace (with
labels the squared and multiquadric kernels' start is a degenerate eigenspace of Φ₀).
"""

import numpy as np
import pytest
from _array_namespaces import HAS_TORCH, NAMESPACES
from _array_namespaces import as_namespace as _as

import ldr
from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.kernels import Custom, Gaussian, Linear, Multiquadric, Polynomial, Squared
from ldr.manifolds import sin_largest_angle
from ldr.objectives import HSIC

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

KERNELS = {"squared": Squared, "multiquadric": lambda: Multiquadric(2.0), "linear": Linear,
           "polynomial": lambda: Polynomial(3, 1.0),
           "G+P": lambda: Gaussian() + 0.5 * Polynomial(2)}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    F = np.random.default_rng(1).standard_normal((120, 8))
    return (X - X.mean(0)) / X.std(0), y, F


def _make(gamma, A, data, kernel):
    Xs, y, F = data
    if gamma == "labels":
        return HSIC.supervised(A, y, 2, kernel=kernel, block_size=32)
    if gamma == "dense":
        return HSIC(A, HSIC.supervised(Xs, y, 2).Gamma, 2, kernel=kernel, block_size=32)
    return HSIC(A, (F, np.full(8, 1 / 120)), 2, kernel=kernel, block_size=50)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("gamma", ["labels", "dense", "factor"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_every_built_in_kernels_oracles_in_the_namespace_equal_numpys(data, kernel, gamma,
                                                                       name):
    ref_obj = _make(gamma, data[0], data, KERNELS[kernel]())
    obj = _make(gamma, _as(name, data[0]), data, KERNELS[kernel]())
    rng = np.random.default_rng(2)
    W = np.linalg.qr(rng.standard_normal((6, 2)))[0]
    V = rng.standard_normal(W.shape)
    Wa = _as(name, W)
    scale = np.abs(ref_obj.phi(W)).max()
    assert obj.cost(Wa) == pytest.approx(ref_obj.cost(W), rel=1e-11)
    for a, b in ((obj.phi(Wa), ref_obj.phi(W)), (obj.egrad(Wa), ref_obj.egrad(W)),
                 (obj.phi0(), ref_obj.phi0()), (obj.ehvp(Wa, _as(name, V)), ref_obj.ehvp(W, V))):
        assert arrays.foreign(a) is arrays.foreign(Wa)        # computed there, not on the host
        np.testing.assert_allclose(arrays.to_host(a), b, rtol=1e-11, atol=1e-12 * scale)


def test_the_namespace_hessian_is_the_gradients_derivative(data):
    """The namespace HVP against central differences of the namespace gradient (G+P, labels):
    the formulas, not only their agreement with NumPy's."""
    pytest.importorskip("torch")
    obj = _make("labels", _as("torch", data[0]), data, KERNELS["G+P"]())
    rng = np.random.default_rng(3)
    W, V = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    h = 1e-5
    fd = (arrays.to_host(obj.egrad(_as("torch", W + h * V)))
          - arrays.to_host(obj.egrad(_as("torch", W - h * V)))) / (2 * h)
    hv = arrays.to_host(obj.ehvp(_as("torch", W), _as("torch", V)))
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_a_solve_in_the_namespace_reaches_numpys_answer(data, kernel, name):
    ref = ldr.solve(_make("factor", data[0], data, KERNELS[kernel]()), tol=1e-10)
    Xa = _as(name, data[0])
    res = ldr.solve(_make("factor", Xa, data, KERNELS[kernel]()), tol=1e-10)
    assert ref.converged and res.converged, res.reason
    assert arrays.foreign(res.M) is arrays.foreign(Xa)
    assert arrays.device(res.M) == arrays.device(Xa)
    assert res.cost == pytest.approx(ref.cost, rel=1e-10)
    assert sin_largest_angle(np.asarray(arrays.to_host(res.M)), ref.M) <= 1e-10


@pytest.mark.parametrize("name", NAMESPACES)
def test_a_custom_kernel_refuses_the_namespace_saying_what_works(data, name):
    inverse = Custom(lambda b: 1.0 / (1.0 + b))
    with pytest.raises(ParameterError, match="built-in kernel.*or pass NumPy data") as err:
        _make("labels", _as(name, data[0]), data, inverse + Gaussian())
    assert err.value.param == "kernel"
    _make("labels", data[0], data, inverse + Gaussian())  # NumPy data: as before


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
def test_g_plus_p_iterates_on_the_gpu(data):
    import torch

    ref = ldr.solve(_make("labels", data[0], data, KERNELS["G+P"]()), tol=1e-10)
    Xc = torch.as_tensor(data[0], device="cuda")
    obj = _make("labels", Xc, data, KERNELS["G+P"]())
    assert obj.tiles.X.device.type == "cuda"
    res = ldr.solve(obj, tol=1e-10)
    assert res.M.device.type == "cuda" and res.converged, res.reason
    assert res.cost == pytest.approx(ref.cost, rel=1e-10)
    assert sin_largest_angle(res.M.cpu().numpy(), ref.M) <= 1e-10
