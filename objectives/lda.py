"""Orthogonal linear discriminant analysis: the quotient of traces (survey Eq. 5–6).

Rows of X are samples, y their classes, μ_c the class means and μ the global mean:

    S_w = (1/n) Σ_i (x_i − μ_{c_i})(x_i − μ_{c_i})ᵀ,    S_b = (1/n) Σ_c n_c (μ_c − μ)(μ_c − μ)ᵀ,

    minimize  −tr(MᵀS_bM) / tr(MᵀS_wM)  over orthonormal d×r M.

Gradient, Hessian-vector product and the Φ-oracle Φ(M) = −(S_b − ρ(M)S_w)/tr(MᵀS_wM) are those
of :class:`~ldr.objectives.quotient.QuotientOfTraces`; ``pencil()`` is (S_b, S_w) and
``heuristic()`` the orthonormalized top-r eigenvectors of S_w⁻¹S_b — optimal for the
trace-of-quotient, not for this cost (survey §3.1.3).
"""

from __future__ import annotations

import numpy as np

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method
from ldr.data import arrays
from ldr.data.rows import is_chunked, moments
from ldr.data.validation import (
    check_labels,
    check_nonsingular,
    check_rank,
    is_lazy,
    shrink,
)
from ldr.objectives.quotient import QuotientOfTraces

__all__ = ["LDA"]


def scatter_matrices(X: np.ndarray, codes: np.ndarray, n_classes: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S_w, S_b, class_means)`` of Eq. 5, each divided by n (classes ``0..n_classes-1``,
    each present), from :func:`ldr.data.rows.moments`."""
    Sw, Sb, means = moments(X, np.asarray(codes), name="X").class_scatter()
    return Sw, Sb, means


class LDA(QuotientOfTraces):
    """Orthogonal LDA: maximize tr(MᵀS_bM)/tr(MᵀS_wM) over orthonormal M (cost is the negative).

    Parameters
    ----------
    X : array (n_samples, n_features), Dask array, iterator of chunks, or Moments
        Rows; only S_w, S_b and the means are kept, computed in one pass by
        :func:`ldr.data.rows.moments` (class sums from per-chunk one-hot products).  An iterator
        yields ``(X_chunk, y_chunk)`` pairs (then ``y`` is None).
    y : array or Dask array (n_samples,) of class labels (at least two classes)
    r : int
        Subspace dimension, 1 ≤ r < min(n_features, n_classes).  S_b has rank at most
        n_classes − 1, so larger r adds directions with no between-class signal and leaves the
        heuristic undefined; that is an error.
    shrinkage : float in [0, 1]
        s in the shrinkage of the within-class scatter, S_w ← (1 − s) S_w + s · tr(S_w)/d · I.
        A singular S_w (fewer samples than features, constant or collinear features) makes
        the ratio unbounded and raises an error that asks for ``shrinkage > 0``.
    manifold : {"grassmann", "stiefel"}

    Attributes
    ----------
    classes_, mean_, means_ (class means), Sw, Sb

    Examples
    --------
    >>> import ldr
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> obj = ldr.objectives.LDA(X, y, 2)
    >>> res = ldr.solve(obj, "trust-region", start="heuristic")
    >>> bool(obj.ratio(res.M) >= obj.ratio(obj.heuristic()))
    True

    Default solver: ``["ism", "trust-region"]``, as for every quotient of traces.
    """

    method = Method("lda", "orthogonal LDA, −tr(MᵀS_bM)/tr(MᵀS_wM)", supervised=True,
                    options={"reg": "shrinkage"}, chunks={})


    def __init__(self, X, y, r: int, shrinkage: float = 0.0, manifold: str = "grassmann", *,
                 reg="deprecated"):
        shrinkage = renamed_value(type(self).__name__, "reg", "shrinkage", reg, shrinkage)
        if y is None and not is_chunked(X):
            check_labels(y, 0, "y")
        stats = moments(X, y, name="X")
        if stats.labels is None:
            raise ParameterError("y", "class labels are required, got None")
        classes = stats.labels
        d = stats.d
        c = len(stats.labels)
        r = check_rank(r, d)
        if r >= c:
            raise ParameterError("r",
                f"LDA's between-class scatter has rank at most n_classes - 1 = {c - 1}, so "
                f"r must be < n_classes = {c}; got r={r}"
            )
        Sw, Sb, means = stats.class_scatter()
        Sw = shrink(Sw, shrinkage)
        check_nonsingular(arrays.to_host(Sw), "X", "within-class scatter S_w",  # d×d, host
                          "the LDA ratio is unbounded", stats.n)
        self.classes_ = classes
        self.mean_ = stats.mean
        self.means_ = means
        self.n_samples_ = stats.n
        super().__init__(Sb, Sw, r, manifold)
        self.Sb, self.Sw = self.A, self.B

    @staticmethod
    def max_rank(X, y) -> int:
        """The largest r accepted on (X, y), min(n_features, n_classes) − 1: the natural
        maximum that the estimators' ``n_components=None`` takes (labels of a Dask array are
        counted by ``dask.array.unique``, without materializing y)."""
        if y is None:
            return int(X.shape[1]) - 1
        if is_lazy(y):
            import dask.array as da

            n_classes = len(da.unique(y).compute())
        else:
            n_classes = len(np.unique(np.asarray(y)))
        return max(1, min(int(X.shape[1]), n_classes) - 1)

    def linear_map(self, M):
        """x ↦ (x − ``mean_``) M."""
        return self.mean_, M
