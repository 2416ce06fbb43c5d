"""scikit-learn's array API convention for :class:`~ldr.estimators.SupervisedHSIC`.

Under ``sklearn.config_context(array_api_dispatch=True)`` an input of another array namespace
than NumPy (a PyTorch tensor, a CuPy or array-api-strict array; :mod:`ldr.estimators._namespace`)
gives ``M_``, ``components_``, ``mean_``, ``scale_`` and numeric ``classes_`` in that namespace
and on that device, and ``transform`` computes ``((X − mean_) / scale_) @ M_`` there.

The fit takes one host copy of the rows for what it computes once — the magnitude check, the
standardization's mean and scale (as NumPy's fit does, so the answers agree to rounding), the
Gaussian's σ (the median pairwise distance), Γ from y and its class order — and standardizes
the rows on the device; the W-step then runs there: :class:`ldr.objectives.HSIC` built on the
device rows computes its block sums, Φ₀ and Hessian-vector products in their namespace for
every built-in kernel and conic combination of them (:meth:`ldr.kernels.Kernel.derivatives`),
and :func:`ldr.solve` iterates there.  What has no namespace code runs the W-step in NumPy on
the host copy and converts only the answers: a :class:`~ldr.kernels.Custom` kernel (autograd's
f), ``approximation="rff"``/``"nystroem"`` and ``backend="dask"``.  Every ``y_kernel`` works
in either case (Γ is built from y on the host and moved to the device with the rows).
``result_`` is the W-step's record as it ran (its ``M`` on the device, or NumPy).

Its answer is a subspace found from eigenvectors (ISM's Φ₀ and steps), whose signs NumPy's
and another library's ``eigh`` may choose differently: ``M_`` spans NumPy's subspace (to
the solver's tolerance), its columns possibly flipped.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ldr.data.arrays import like, to_host
from ldr.estimators._namespace import namespace_of, project_in, to_namespace, to_numpy
from ldr.estimators._output import cast_fitted, validate_data
from ldr.kernels.family import in_namespace

__all__ = ["NamespaceOutput", "fit_in", "namespace_of", "to_numpy"]


class NamespaceOutput:
    """The array API tag and ``transform`` in the input's namespace (before the estimator's
    base class in the bases, so that its ``transform`` runs first and defers to the base's for
    any other input); SupervisedHSIC's ``fit`` calls :func:`fit_in` itself, the clustering
    HSICs' fit on a host copy (:func:`ldr.estimators._namespace.on_host`)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True
        return tags

    def transform(self, X):
        """``((X − mean_) / scale_) @ M_``; under ``array_api_dispatch`` an array of another
        namespace gives its namespace and device
        (``ldr.estimators._namespace.project_in``)."""
        space = namespace_of(X, fitted=self)
        if space is not None:
            check_is_fitted(self, "M_")
            return project_in(self, X, *space, self.mean_, self.M_, self.scale_)
        return super().transform(X)


def fit_in(estimator, X, y, xp, device):
    """``estimator.fit(X, y)`` for ``X`` of namespace ``xp`` on ``device`` (module
    docstring); returns the estimator."""
    X = validate_data(estimator, X, dtype=[xp.float64, xp.float32], ensure_min_samples=2)
    dtype = np.float32 if X.dtype == xp.float32 else np.float64
    X64 = X if X.dtype == xp.float64 else xp.astype(X, xp.float64)
    host = np.asarray(to_host(X64), dtype=np.float64)   # once: checks, scale, σ, Γ
    estimator._check_params(host)
    Xs_host = estimator._scale(host, fit=True)
    Gamma = estimator._gamma(to_numpy(y), host.shape[0])
    estimator.kernel_ = estimator._kernel(Xs_host)
    on_device = (estimator.approximation is None and estimator.backend == "numpy"
                 and in_namespace(estimator.kernel_))
    if on_device:  # the same elementwise operations as NumPy's, on the device
        Xs = (X64 - like(estimator.mean_, X64)) / like(estimator.scale_, X64)
    estimator._fit_w(Xs if on_device else Xs_host, Gamma)
    estimator.M_ = np.asarray(to_host(estimator.M_), dtype=np.float64)
    estimator.components_ = estimator.M_.T
    cast_fitted(estimator, dtype)
    to_namespace(estimator, xp, device)
    return estimator

