"""scikit-learn's array API convention, followed by every estimator of
:mod:`ldr.estimators` (the tag ``array_api_support`` is True for each).

Under ``sklearn.config_context(array_api_dispatch=True)`` (which scikit-learn allows only with
``SCIPY_ARRAY_API=1`` set before SciPy is imported), an input of another array namespace than
NumPy — a PyTorch tensor, a CuPy or JAX array, an array-api-strict array — gives the fitted
arrays (``components_``, ``M_``, ``mean_``, ``explained_variance_``, ``coef_``, ...; numeric
``classes_`` and the clusterers' ``labels_``) and every output (``transform``,
``inverse_transform``, ``fit_transform``, ``decision_function``, ``predict``,
``predict_proba``, ``fit_predict``) in that namespace and on that device, as scikit-learn's
PCA and LinearDiscriminantAnalysis do; ``transform`` and the linear decision rule are
computed there.  As scikit-learn's, a fitted estimator's ``transform``,
``decision_function`` and ``predict*`` (and UndercompleteICA's ``inverse_transform``) refuse
an input of another namespace or device than the fit's, naming the method
(``check_same_namespace``; PCA's ``inverse_transform`` and ``score_samples`` answer in their
input's namespace instead).  Without
the setting, or for NumPy input, nothing changes.  Scalar scores (``cost_``,
``noise_variance_``, ``ratio_``, ``stress_``) stay Python floats, and ``result_`` and
``objective_`` the driver's NumPy record (WassersteinDA's and SupervisedHSIC's: below).
Where the *fit* runs depends on what it computes:

**In the input's namespace, on its device, from its d×d statistics** (PCA, OrthogonalLDA;
MAF, SFA, PPCA and FactorAnalysis: :mod:`ldr.estimators._moments_namespace`;
:class:`~ldr.estimators.CCA`, :class:`~ldr.estimators.OrthogonalCCA` and
:class:`~ldr.estimators.ReducedRankRegression`).  The one pass over the rows that computes
the data's statistics (:func:`ldr.data.rows.moments`: means, scatter, class sums; MAF's
lagged and SFA's difference products; ReducedRankRegression's thin SVD of X) runs in their
namespace and on their device, and only those d×d statistics come to the host, where the
solver's iterations run on them (d×d work, not n×d); the answers are copied back
(:func:`to_namespace`).  PCA's singular values are one more product with the rows, on the
device.  (An objective built directly on a tensor,
``ldr.objectives.PCA(X_tensor, r)``, iterates on the device too: :mod:`ldr.data.arrays`.)

**Wholly in the input's namespace.**  SupervisedHSIC standardizes the rows on the device and
runs its W-step there, the kernel's block sums included, for built-in kernels
(:mod:`ldr.estimators._hsic_namespace`).  :class:`~ldr.estimators.WassersteinDA` cannot
reduce its data to d×d statistics — its transport plans are between the rows themselves — so
its whole fit runs in the input's namespace and on its device: the WDA objective keeps each
class's rows there (``objectives/_transport_xp.py``), and SCF, its continuation start (the
coarse problem's SCF), the whole-space start and a trust-region polish iterate there.  What
crosses to the host is small: the n class labels (once, at validation, as scikit-learn reads
them), the d×d scatters of the span check and of the FDA start, d×p points (the FDA, random
and array starts go to the device; the answer comes back for the sign rule and the span's
map) and the scalars the stopping rules read.  Its ``result_`` (and ``results_``) hold the
points in the input's namespace.

**On a host copy** (:func:`on_host`, :func:`answer_in`), where the fit's pairwise work is
NumPy and scikit-learn code: :class:`~ldr.estimators.NCA` and
:class:`~ldr.estimators.LargeMarginDML` (the n×n softmax and the target neighbours'
NearestNeighbors), :class:`~ldr.estimators.LPP` and :class:`~ldr.estimators.NPE` (the
neighbour graph), :class:`~ldr.estimators.MDS` (the pairwise distances),
:class:`~ldr.estimators.KernelSDR` (the n×n Gram matrices and their solves), the clustering
HSICs — :class:`~ldr.estimators.UnsupervisedHSIC`,
:class:`~ldr.estimators.SemiSupervisedHSIC`, :class:`~ldr.estimators.KDAC` (the spectral
U-step and k-means) —, :class:`~ldr.estimators.UndercompleteICA`,
:class:`~ldr.estimators.WDAClustering` (k-means between its WDA steps) and the generic
:class:`~ldr.estimators.LinearDR` (a user's objective).  X and y are copied to NumPy once,
the fit is NumPy's own run on that copy (the same numbers as a NumPy fit on those rows), and
every fitted array is then copied to the input's namespace and device (``result_`` and
``objective_`` stay NumPy).
Their ``transform`` is a linear map, ``(X − μ) @ A`` (ICA's ``inverse_transform``
``S @ mixing_ᵀ + mean_``), computed in the input's namespace and on its device in float64,
then rounded to X's dtype (:func:`project_in`, :func:`transform_in`); only the generic
LinearDR, whose objective's ``transform`` may be any function of the rows, computes it on a
host copy and copies the answer back.

An estimator written on :class:`~ldr.estimators.LinearDR` with ``_array_api_support = False``
reads such an input as NumPy, copied to the host by its validation
(``ldr.estimators._output.validate_data``), and answers in NumPy, as without the setting.
"""

from __future__ import annotations

import numpy as np

from ldr.data.arrays import to_host
from ldr.estimators._output import FLOAT_DTYPES, as_output, output_dtype, validate_data

#: fitted attributes that are not arrays computed from the data, never converted
_SKIP = frozenset({"feature_names_in_", "n_features_in_", "result_", "objective_"})


def namespace_of(X, fitted=None, method: str = "transform"):
    """``(xp, device)`` of ``X`` when scikit-learn's ``array_api_dispatch`` is on and ``X`` is
    an array of another namespace than NumPy, else None.  With ``fitted`` (an estimator whose
    ``method`` reads X), first ``check_same_namespace``."""
    if fitted is not None:
        check_same_namespace(fitted, X, method)
    if X is None or isinstance(X, np.ndarray):
        return None
    import sklearn

    if not sklearn.get_config().get("array_api_dispatch", False):
        return None
    try:
        import array_api_compat
    except ImportError:  # scikit-learn's dispatch needs it: without it, there is none
        return None
    if (not array_api_compat.is_array_api_obj(X) or array_api_compat.is_numpy_array(X)
            or array_api_compat.is_dask_array(X)):  # Dask: read lazily, in chunks
        return None
    return array_api_compat.array_namespace(X), array_api_compat.device(X)


def check_same_namespace(estimator, X, method: str) -> None:
    """scikit-learn's rule for a fitted estimator's methods under ``array_api_dispatch``
    (its ``check_same_namespace``): ``X`` must be in the namespace and on the device of the
    fit (of its ``components_``, CCA's ``x_weights_``), else a ValueError naming
    ``Estimator.method()`` and how to get there.  Estimators without the ``array_api_support``
    tag convert such input to NumPy instead (module docstring), and without the setting
    nothing is checked."""
    import sklearn

    if not sklearn.get_config().get("array_api_dispatch", False) \
            or not estimator.__sklearn_tags__().array_api_support:
        return
    import array_api_compat as compat

    def where(a):
        if not compat.is_array_api_obj(a) or compat.is_numpy_array(a):
            return "numpy", None  # NumPy, lists and other array-likes
        return compat.array_namespace(a).__name__, compat.device(a)

    attribute = next((a for a in ("components_", "x_weights_", "coef_", "M_")
                      if getattr(estimator, a, None) is not None), None)
    if attribute is None:  # not fitted: the method's own check_is_fitted says so
        return
    value = getattr(estimator, attribute)  # a tuple on a product manifold (LinearDR's M_)
    fitted, given = where(value[0] if isinstance(value, tuple) else value), where(X)
    if fitted == given or (fitted[0] == given[0] == "numpy"):
        return
    name = type(estimator).__name__
    raise ValueError(
        f"Inputs passed to {name}.{method}() must use the same namespace and the same device "
        f"as those passed to fit(): it was fitted on {fitted[0]} (device {fitted[1]}) and "
        f"given {given[0]} (device {given[1]}). Convert X to the fit's namespace and device "
        f"(e.g. torch.as_tensor(X, device=...)), or refit {name} on X's.")


def to_numpy(X):
    """``X`` (any array API array; anything else is returned as it is) as a NumPy array on
    the host."""
    if X is None or isinstance(X, np.ndarray):
        return X
    try:
        import array_api_compat as compat
    except ImportError:  # then scikit-learn has no array API dispatch either
        return X
    if not compat.is_array_api_obj(X) or compat.is_dask_array(X):  # Dask stays lazy
        return X
    return to_host(X)


def from_numpy(value, xp, device):
    """A NumPy array of numbers as an array of ``xp`` on ``device`` (other values as they
    are; a tuple element-wise)."""
    if isinstance(value, tuple):
        return tuple(from_numpy(v, xp, device) for v in value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return xp.asarray(np.ascontiguousarray(value), device=device)
    return value


def to_namespace(estimator, xp, device) -> None:
    """Convert the fitted NumPy arrays of ``estimator`` (public names ending in ``_``) to
    ``xp`` on ``device`` (module docstring)."""
    for name, value in list(vars(estimator).items()):
        if name.startswith("_") or not name.endswith("_") or name in _SKIP:
            continue
        converted = from_numpy(value, xp, device)
        if converted is not value:
            setattr(estimator, name, converted)


def fitted_numpy(estimator, name: str):
    """A fitted attribute as NumPy (the host copy of one converted by :func:`to_namespace`)."""
    return to_numpy(getattr(estimator, name))


def matching(estimator, name: str, xp, device):
    """A fitted attribute in ``xp`` on ``device`` (converted when it is in another namespace:
    an estimator without the array API tag, fitted on NumPy, projecting a PyTorch input)."""
    return moved(getattr(estimator, name), xp, device)


def moved(value, xp, device):
    """An array (NumPy or of any namespace) in ``xp`` on ``device``: as it is when it is
    there already, else copied through the host."""
    import array_api_compat

    if array_api_compat.is_array_api_obj(value) and not isinstance(value, np.ndarray):
        if array_api_compat.array_namespace(value) is xp and \
                array_api_compat.device(value) == device:
            return value
    return xp.asarray(np.ascontiguousarray(to_numpy(value)), device=device)


def project_in(estimator, X, xp, device, shift=None, A=None, scale=None):
    """``transform`` for X of namespace ``xp`` on ``device``: ``((X − shift) / scale) @ A``,
    computed there in float64 and returned in X's float dtype.  The fitted arrays (NumPy or
    of ``xp``) are moved there when they are elsewhere; by default ``shift`` is ``mean_``,
    ``A`` is ``components_.T`` and the result is finished by the estimator's
    ``_scale(Z, xp, device)`` hook (PCA's whitening) — the projection estimators'
    ``transform``; SupervisedHSIC (its ``mean_``, ``scale_``, ``M_``) and the second-order
    estimators (their linear map) pass their own."""
    X = validate_data(estimator, X, reset=False, dtype=[xp.float64, xp.float32])

    def put(a):
        return xp.astype(moved(a, xp, device), xp.float64, copy=False)

    own = shift is None and A is None
    shift = estimator.mean_ if shift is None else shift
    A = put(estimator.components_).T if A is None else put(A)
    Z = (X if X.dtype == xp.float64 else xp.astype(X, xp.float64)) - put(shift)
    Z = (Z if scale is None else Z / put(scale)) @ A
    return xp.astype(estimator._scale(Z, xp, device) if own else Z, X.dtype)


def on_host(X, *others) -> tuple:
    """``(space, X, *others)`` for a fit that runs on the host (module docstring): ``space``
    is X's ``(xp, device)`` under ``array_api_dispatch`` (:func:`namespace_of`), and then X
    and the other arrays (y) are copied to NumPy; else None, and the arrays as they are.  The
    fit ends with :func:`answer_in`."""
    space = namespace_of(X)
    if space is None:
        return (None, X, *others)
    return (space, to_numpy(X), *map(to_numpy, others))


def answer_in(estimator, space):
    """``estimator``, its fitted arrays converted to ``space``, X's ``(xp, device)`` from
    :func:`on_host` (:func:`to_namespace`), when it is not None."""
    if space is not None:
        to_namespace(estimator, *space)
    return estimator


def host_copy(value):
    """:func:`to_numpy`, element-wise for a tuple (a point on a product manifold)."""
    return tuple(map(to_numpy, value)) if isinstance(value, tuple) else to_numpy(value)


def transform_in(estimator, X, xp, device):
    """:class:`~ldr.estimators.LinearDR`'s ``transform`` for X of namespace ``xp`` on
    ``device``: ``(X − μ) @ A`` computed there (:func:`project_in`) where the estimator
    states its map (the hook ``_linear_map() -> (μ, A)``: the graph embeddings, MDS, kernel
    SDR, the metric learners); else the objective's own ``transform`` (a user's objective:
    any function of the rows) on a host copy, its answer copied to X's device."""
    linear = getattr(estimator, "_linear_map", None)
    if linear is not None:
        return project_in(estimator, X, xp, device, *linear())
    X = validate_data(estimator, to_numpy(X), reset=False, dtype=FLOAT_DTYPES)
    Z = estimator.objective_.transform(X, host_copy(estimator.M_))
    return from_numpy(as_output(Z, output_dtype(X)), xp, device)
