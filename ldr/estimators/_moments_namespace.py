"""scikit-learn's array API convention for the estimators whose objective reads only one-pass
second-order statistics of the rows: MAF and SFA (covariance and lag-δ or difference
products), PPCA and FactorAnalysis (covariance).

Under ``sklearn.config_context(array_api_dispatch=True)`` a PyTorch, CuPy or array-api-strict
X is validated in its namespace, the one pass over the rows (:func:`ldr.data.rows.moments`,
which calls :func:`ldr.data.statistics.namespace_moments` for such rows: means, scatter and,
as the hook ``_moment_options`` asks, the lagged or difference products) runs there, on X's
device, and only those d×d statistics (and the first and last δ rows) come to the host,
where the objective is built on them and the solver iterates; the fitted arrays are copied
back (:mod:`ldr.estimators._namespace`).  FactorAnalysis finds its constant features there
too (each column's range: d numbers).  ``transform`` is linear, ``(X − μ) @ A`` with a d×r
matrix A (the hook ``_linear_map``: ``M_``, SFA's filters, the latent models' posterior
map), and is computed in X's namespace, in float64, then rounded to X's dtype, as the NumPy
path computes it.  Without the setting, or for NumPy input, nothing changes.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ldr.data.rows import moments
from ldr.estimators._fitdata import FitData
from ldr.estimators._namespace import namespace_of, project_in
from ldr.estimators._output import validate_data

__all__ = ["SecondOrderNamespace"]


class SecondOrderNamespace(TransformerMixin):
    """The fit's statistics and ``transform`` in the rows' array namespace (module
    docstring); listed before :class:`~ldr.estimators.LinearDR` in the bases.  A
    TransformerMixin itself, so that ``set_output`` wraps this ``transform``."""

    _array_api_support = True
    #: LinearDR.fit hands such rows to ``_prepare`` as they are (not converted to NumPy)
    _rows_in_namespace = True

    def _moment_options(self) -> dict:
        """Hook: the options of :func:`ldr.data.rows.moments` the objective needs
        (``{"lag": δ}`` for MAF, ``{"lag": 1, "diff": True}`` for SFA)."""
        return {}

    def _check_rows(self, X, xp) -> None:
        """Hook: checks on the validated float64 rows in their namespace, before the pass
        (FactorAnalysis finds its constant features there); d-sized results only."""

    def _linear_map(self) -> tuple[np.ndarray, np.ndarray]:
        """Hook: ``(μ, A)`` (NumPy, float64) with ``transform(X) == (X − μ) @ A``."""
        raise NotImplementedError

    def _prepare(self, X, y) -> FitData:
        space = namespace_of(X)
        if space is None:
            return super()._prepare(X, y)
        xp = space[0]
        X = validate_data(self, X, dtype=[xp.float64, xp.float32], ensure_min_samples=2)
        dtype = np.float32 if X.dtype == xp.float32 else np.float64
        X64 = X if X.dtype == xp.float64 else xp.astype(X, xp.float64)  # as NumPy's path
        self._check_rows(X64, xp)
        options = self._moment_options()
        stats = moments(X64, name="X", min_samples=3 if options else 2, **options).on_host()
        return FitData(stats, None, dtype, False, stats)

    def transform(self, X):
        """The projection of X onto the learned subspace (:class:`~ldr.estimators.LinearDR`'s
        ``transform``); computed in X's namespace, on its device, for such an input under
        ``array_api_dispatch`` (module docstring)."""
        check_is_fitted(self, "M_")
        space = namespace_of(X, fitted=self)
        if space is None:
            return super().transform(X)
        mean, A = self._linear_map()
        return project_in(self, X, *space, mean, A)
