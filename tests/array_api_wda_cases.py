"""scikit-learn's array API convention for ldr's WassersteinDA and WDAClustering (run by
tests/test_array_api.py in a fresh interpreter with ``SCIPY_ARRAY_API=1``, which
scikit-learn's dispatch requires before SciPy is imported; collected alone, it skips).

Under ``array_api_dispatch=True`` a PyTorch (CPU) or array-api-strict input is fitted in its
namespace — the WDA objective's rows, plans and pencils, SCF, the continuation start and a
trust-region polish there — and gives ``M_``, ``components_``, ``mean_`` and ``transform``
there, equal to the NumPy fit's: the subspace within 1e-8, ``ratio_`` to 1e-10, the same
iteration count, and (scikit-learn's sign rule on ``M_``) the same matrices to 1e-8.  A spy on
PyTorch's conversions shows no data-sized array reaching the host during the fit.  Without
the setting, a tensor in gives NumPy out, as before.  WDAClustering's rounds run there too
(its k-means the array API one, :mod:`ldr.estimators.kmeans`): the same partition as
NumPy's (scikit-learn's KMeans) up to the labels' names and the same subspace to 1e-6.
"""

import os

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":
    pytest.skip("needs SCIPY_ARRAY_API=1 before SciPy is imported (tests/test_array_api.py "
                "runs this file so)", allow_module_level=True)

import sklearn  # noqa: E402
from _array_namespaces import (  # noqa: E402
    HAS_TORCH,
    NAMESPACES,
    array_api_check_combinations,
    host_copies,
    labels_in,
    same_space,
)
from _array_namespaces import as_namespace as _as  # noqa: E402

import ldr  # noqa: E402
from ldr.data import arrays  # noqa: E402
from ldr.estimators import WassersteinDA  # noqa: E402
from ldr.manifolds import sin_largest_angle  # noqa: E402

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")

#: the default (continuation start, SCF); every named start with random ones; the chain
#: SCF → trust region; mini-batch plans; POT's normalize with an array start
OPTIONS = {"default": {}, "best": {"start": "best", "n_starts": 2},
           "trust-region": {"solver": "trust-region"}, "mini-batch": {"batch_size": 15},
           "normalize": {"normalize": True, "start": "P0"}}


@pytest.fixture(scope="module")
def data():
    X, y = ldr.datasets.make_wda(120, seed=3, noise_dims=6)
    return X, y


def _host(a):
    return np.asarray(arrays.to_host(a), dtype=float)


def _params(options, d):
    P0 = np.random.default_rng(1).standard_normal((d, 2))
    return {k: (P0 if v == "P0" else v) for k, v in options.items()}


def _assert_same_fit(est, ref, Xa, Z, Z_ref):
    """``est`` (fitted on Xa under dispatch) against the NumPy fit ``ref``."""
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-8
    assert est.ratio_ == pytest.approx(ref.ratio_, rel=1e-10)
    assert est.n_iter_ == ref.n_iter_ and est.result_.converged
    for attr in ("M_", "components_", "mean_"):
        same_space(getattr(est, attr), Xa)
        np.testing.assert_allclose(_host(getattr(est, attr)), getattr(ref, attr), atol=1e-8)
    same_space(Z, Xa)
    np.testing.assert_allclose(_host(Z), Z_ref, atol=1e-8 * np.max(np.abs(Z_ref)))
    np.testing.assert_array_equal(_host(est.classes_), ref.classes_)


#: every option on PyTorch; array-api-strict (10× slower: no BLAS-backed batching) on two
CASES = [pytest.param("torch", options, marks=NAMESPACES[1].marks, id=f"torch-{key}")
         for key, options in OPTIONS.items()] + [
    pytest.param("array_api_strict", OPTIONS[key], marks=NAMESPACES[0].marks,
                 id=f"strict-{key}") for key in ("default", "normalize")]


@pytest.mark.parametrize(("name", "options"), CASES)
def test_the_fit_in_the_inputs_namespace_equals_numpys(data, name, options):
    X, y = data
    params = _params(options, X.shape[1])
    ref = WassersteinDA(2, **params).fit(X, y)
    Xa = _as(name, X)
    with sklearn.config_context(array_api_dispatch=True):
        est = WassersteinDA(2, **params).fit(Xa, labels_in(name, y))
        Z = est.transform(Xa)
    # the fit ran there: the driver's record holds the namespace's point
    assert arrays.foreign(est.result_.M) is arrays.foreign(Xa)
    _assert_same_fit(est, ref, Xa, Z, ref.transform(X))
    if "batch_size" in options:  # the full-data check ran on the device as well
        assert est.full_data_["full_ratio"] == pytest.approx(ref.full_data_["full_ratio"],
                                                             rel=1e-10)
    assert sklearn.base.clone(est).__sklearn_tags__().array_api_support


@pytest.mark.parametrize("name", NAMESPACES)
def test_a_singular_within_class_scatter_fits_in_the_span_there_too(data, name):
    X, y = data
    Xs = np.column_stack([X, np.full(len(X), 3.0), X[:, :1] - X[:, 1:2]])  # constant, collinear
    ref = WassersteinDA(2).fit(Xs, y)
    Xa = _as(name, Xs)
    with sklearn.config_context(array_api_dispatch=True):
        est = WassersteinDA(2).fit(Xa, y)
        Z = est.transform(Xa)
    assert ref.subspace_ is not None and est.subspace_.shape == ref.subspace_.shape
    same_space(est.subspace_, Xa)
    _assert_same_fit(est, ref, Xa, Z, ref.transform(Xs))


@needs_torch
def test_float32_tensors_give_float32_answers_within_1e_6(data):
    import torch

    X, y = data
    ref = WassersteinDA(2).fit(X, y)
    X32 = torch.as_tensor(X, dtype=torch.float32)
    with sklearn.config_context(array_api_dispatch=True):
        est = WassersteinDA(2).fit(X32, torch.as_tensor(y))
        Z = est.transform(X32)
    assert est.M_.dtype == est.components_.dtype == Z.dtype == torch.float32
    # computed in float64 on the device from the float32 rows, rounded at the end
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-6
    np.testing.assert_allclose(_host(Z), ref.transform(X), atol=1e-5)


@needs_torch
@pytest.mark.parametrize("options", [{}, {"start": "best", "n_starts": 1, "batch_size": 15}],
                         ids=["default", "best+mini-batch"])
def test_the_fit_moves_no_data_sized_array_to_the_host(data, monkeypatch, options):
    """Every conversion of a tensor to NumPy during ``fit`` and ``transform`` is recorded:
    apart from the n class labels (read once, as scikit-learn does), none may have more
    entries than the d×d pencil or as many rows as the smallest class."""
    import torch

    X, y = data
    d, n_small = X.shape[1], int(np.min(np.bincount(y)))
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    seen = host_copies(monkeypatch, dtypes=True)
    with sklearn.config_context(array_api_dispatch=True):
        est = WassersteinDA(2, **options).fit(Xt, yt)
        Z = est.transform(Xt)
    assert isinstance(Z, torch.Tensor) and est.result_.converged, est.result_.reason
    labels = [s for s in seen if s == ((len(y),), torch.int64)]
    assert len(labels) == 1  # the labels, once
    big = [s for s, dtype in seen if dtype.is_floating_point
           and (int(np.prod(s)) > d * d or max(s, default=0) >= n_small)]
    assert not big, f"data-sized arrays moved to the host: {big}"
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1][0] == tuple(X.shape)


@needs_torch
def test_without_dispatch_a_tensor_gives_numpy_as_before(data):
    import torch

    X, y = data
    ref = WassersteinDA(2).fit(X, y)
    est = WassersteinDA(2).fit(torch.as_tensor(X), torch.as_tensor(y))
    Z = est.transform(torch.as_tensor(X))
    assert isinstance(est.M_, np.ndarray) and isinstance(Z, np.ndarray)
    assert isinstance(est.result_.M, np.ndarray)  # the fit ran on the host, in NumPy
    np.testing.assert_array_equal(est.M_, ref.M_)
    np.testing.assert_array_equal(Z, ref.transform(X))


# --- WDAClustering: its rounds (projection, k-means, scatters, WDA step) in the namespace ------
@pytest.fixture(scope="module")
def blobs():
    """Three separated clusters with noise columns (one partition, found by any seeds)."""
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(300, 5, centers=3, cluster_std=1.5, random_state=0)
    return X


@pytest.mark.parametrize("name", NAMESPACES)
def test_wda_clustering_in_the_inputs_namespace_equals_numpys(blobs, name):
    """The same partition (k-means' seeds differ between scikit-learn's KMeans and the array
    API k-means: the labels up to their names) and the same subspace to 1e-6."""
    from sklearn.metrics import adjusted_rand_score

    from ldr.estimators import WDAClustering

    ref = WDAClustering(2, n_clusters=3).fit(blobs)
    Xa = _as(name, blobs)
    with sklearn.config_context(array_api_dispatch=True):
        est = WDAClustering(2, n_clusters=3).fit(Xa)
        Z = est.transform(Xa)
    for a in (est.M_, est.labels_, est.components_, Z):
        same_space(a, Xa)
    assert est.converged_ and ref.converged_
    assert adjusted_rand_score(_host(est.labels_), ref.labels_) == 1.0
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-6


@needs_torch
def test_wda_clustering_moves_no_data_sized_array_to_the_host(blobs, monkeypatch):
    """Every conversion of a tensor to NumPy during ``fit`` and ``transform``: the labels (n
    integers, once a round and for ``labels_``) and nothing of floats with as many entries
    as rows (the k × p centers, d × p subspaces, d × d scatters and a singleton's row do)."""
    import torch

    from ldr.estimators import WDAClustering

    Xt = torch.as_tensor(blobs)
    seen = host_copies(monkeypatch, dtypes=True)
    with sklearn.config_context(array_api_dispatch=True):
        est = WDAClustering(2, n_clusters=3).fit(Xt)
        Z = est.transform(Xt)
    assert isinstance(Z, torch.Tensor) and est.converged_
    n = blobs.shape[0]
    assert any(s == (n,) and not dtype.is_floating_point for s, dtype in seen)  # the labels
    big = [s for s, dtype in seen if dtype.is_floating_point and int(np.prod(s)) >= n]
    assert not big, f"data-sized arrays moved to the host: {big}"
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1][0] == tuple(blobs.shape)


@needs_torch
def test_wda_clustering_without_dispatch_a_tensor_gives_numpy_as_before(blobs):
    import torch

    from ldr.estimators import WDAClustering

    ref = WDAClustering(2, n_clusters=3).fit(blobs)
    est = WDAClustering(2, n_clusters=3).fit(torch.as_tensor(blobs))
    assert isinstance(est.M_, np.ndarray) and isinstance(est.labels_, np.ndarray)
    np.testing.assert_array_equal(est.M_, ref.M_)
    np.testing.assert_array_equal(est.labels_, ref.labels_)


@needs_torch
def test_wda_clustering_float32_tensors_give_float32_answers(blobs):
    import torch
    from sklearn.metrics import adjusted_rand_score

    from ldr.estimators import WDAClustering

    X32 = blobs.astype(np.float32)
    ref = WDAClustering(2, n_clusters=3).fit(X32)
    with sklearn.config_context(array_api_dispatch=True):
        est = WDAClustering(2, n_clusters=3).fit(torch.as_tensor(X32))
        Z = est.transform(torch.as_tensor(X32))
    assert Z.dtype == est.M_.dtype == torch.float32
    assert adjusted_rand_score(est.labels_.numpy(), ref.labels_) == 1.0
    assert sin_largest_angle(est.M_.double().numpy(), ref.M_.astype(float)) <= 1e-5


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
def test_wda_clustering_cuda_tensors_are_fitted_on_the_gpu(blobs):
    import torch

    from ldr.estimators import WDAClustering

    with sklearn.config_context(array_api_dispatch=True):
        est = WDAClustering(2, n_clusters=3).fit(torch.as_tensor(blobs, device="cuda"))
    assert est.M_.is_cuda and est.labels_.is_cuda
    ref = WDAClustering(2, n_clusters=3).fit(blobs)
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-6


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("namespace, device, dtype",
                         list(array_api_check_combinations()))
def test_scikit_learns_array_api_check_wda_clustering(namespace, device, dtype):
    from sklearn.utils.estimator_checks import check_array_api_input

    from ldr.estimators import WDAClustering

    check_array_api_input("WDAClustering", WDAClustering(2), namespace, device_name=device,
                          dtype_name=dtype, check_values=True)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
def test_cuda_tensors_are_fitted_on_the_gpu(data):
    import torch

    X, y = data
    ref = WassersteinDA(2).fit(X, y)
    Xc = torch.as_tensor(X, device="cuda")
    with sklearn.config_context(array_api_dispatch=True):
        est = WassersteinDA(2).fit(Xc, torch.as_tensor(y, device="cuda"))
        Z = est.transform(Xc)
    assert est.result_.M.is_cuda and est.M_.is_cuda and Z.is_cuda
    _assert_same_fit(est, ref, Xc, Z, ref.transform(X))


@pytest.mark.parametrize("namespace, device, dtype",
                         list(array_api_check_combinations()))
def test_scikit_learns_array_api_check(namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input`` (values compared with NumPy's), which
    ``tests/test_estimators.py``'s estimator checks can only skip: it needs
    ``SCIPY_ARRAY_API=1``."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input("WassersteinDA", WassersteinDA(), namespace, device_name=device,
                          dtype_name=dtype, check_values=True)
