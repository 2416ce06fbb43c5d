"""Orthogonal LDA (the quotient of traces), with scikit-learn's LDA API: a transformer and a
classifier."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.special
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import moments
from ldr.data.validation import (
    check_labels,
    check_nonsingular,
    oas_shrinkage,
    shrink,
    span_basis,
    validate_data,
)
from ldr.estimators.base import (
    AffineMap,
    FitData,
    LinearDR,
    WeightedFit,
    check_int_components,
    closed_form_result,
    same_space,
    sign_rule,
)
from ldr.estimators.gaussian import check_priors, gaussian_linear_rule
from ldr.objectives.lda import LDA

__all__ = ["OrthogonalLDA"]


class OrthogonalLDA(ClassifierMixin, WeightedFit, LinearDR):
    """Orthogonal LDA: maximize the quotient of traces tr(MᵀS_bM)/tr(MᵀS_wM) (survey Eq. 6),
    and classify in the projected space — scikit-learn's LDA API (transformer and classifier).

    The classical answer (eigenvectors of S_w⁻¹S_b) solves the trace of quotient, not this
    cost.  The default run is :func:`ldr.solve`'s for a quotient of traces — ISM's spectral
    iteration from the eigenvectors of Φ₀, then the trust region, which certifies the point
    (the global test of a quotient of traces), so ``ratio_`` is never below the heuristic's.
    The basis is then rotated within the subspace to the eigenvectors of MᵀS_bM (most
    between-class scatter first) with scikit-learn's sign rule.  With r = n_features (one
    feature, or n_features < n_classes) the subspace is the whole space: no solver runs.

    **The classifier** is the shared-covariance Gaussian model in the projected space: with
    ``z = Mᵀ(x − mean_)``, class means ``m_k = Mᵀ(μ_k − mean_)``, the pooled within-class
    covariance Σ = MᵀS_wM (S_w = (1/n) Σ_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ, shrunk by
    ``shrinkage_`` as in the fit — the normalization of scikit-learn's ``solver="svd"``) and
    priors π_k (class frequencies unless ``priors`` is given), the posterior is

        p(k | x) ∝ π_k N(z; m_k, Σ),   log-odds δ_k(x) = zᵀΣ⁻¹m_k − ½ m_kᵀΣ⁻¹m_k + log π_k,

    linear in x: ``decision_function(X) == X @ coef_.T + intercept_``.  It equals the
    full-space Gaussian model of :class:`sklearn.discriminant_analysis.LinearDiscriminantAnalysis`
    for every x exactly when span(M) ⊇ span{S_w⁻¹(μ_k − μ̄)}: for two classes with r = 1
    (the trace-ratio optimum is then S_w⁻¹(μ₁ − μ₀)) and for r = n_features.  With three or
    more classes the trace-ratio subspace generally differs from the eigen-LDA subspace
    (that is the point of orthogonal LDA), and predictions agree only mostly.

    **Singular S_w** (a constant or collinear column, or fewer samples than features): the
    ratio is 0/0 or unbounded there, and the objective (:class:`ldr.objectives.LDA`) refuses
    it.  With the default ``shrinkage=None`` the estimator

    1. works in the span of the data, the non-null eigenvectors U of the total scatter
       S_t = S_w + S_b (``subspace_``): a direction with zero total scatter carries no
       information, and the ratio on the coordinates Uᵀx is the same function of the
       projected data (scikit-learn's SVD solver also works in the span of the data);
    2. if S_w is still singular on the span (along some directions every class is a single
       point), shrinks S_w there with the Oracle Approximating Shrinkage coefficient
       (``shrinkage_``; Chen et al. 2010), whose supremum would otherwise lie along those
       directions (null-space LDA), a subspace that separates the training classes
       perfectly and generalizes poorly.

    ``shrinkage=0.0`` does step 1 and refuses at step 2; a number > 0 or ``"auto"`` shrinks
    S_w in the full space (then it is never singular and no span is taken).

    **transform and whiten.**  ``components_`` are orthonormal (the fitted point).  With
    ``whiten=True`` (the default) ``transform`` returns ``(X − mean_) @ components_.T @
    whitening_``: the r×r map (Eq. W below) makes the within-class covariance of the
    training projections the identity and the between-class one diagonal, as scikit-learn's
    LDA ``transform`` does, so that distances in the output are those of the classifier's
    Gaussian model.  ``whiten=False`` returns the orthonormal projection.  With Σ = MᵀS_wM
    and Q the eigenvectors of Σ^(-1/2) MᵀS_bM Σ^(-1/2), largest eigenvalue first,

        T = Σ^(-1/2) Q,   Tᵀ(MᵀS_wM)T = I,   Tᵀ(MᵀS_bM)T diagonal,      (W)

    each column's sign making the largest entry of M T positive.

    Parameters
    ----------
    n_components : int or None, default None
        r, 1 <= r <= min(n_classes − 1, n_features); None takes that maximum (as
        scikit-learn's LDA).  When the data span only k < n_features dimensions, r <= k.
    shrinkage : None, "auto" or float in [0, 1], default None
        Shrinkage of S_w towards tr(S_w)/d · I, S_w ← (1 − s) S_w + s tr(S_w)/d I, which the
        classifier uses too.  None: none where S_w is non-singular, else the span of the data
        and, if needed, OAS there ("Singular S_w" above); "auto": the OAS coefficient always,
        in the full space (scikit-learn's ``shrinkage="auto"``, with OAS for Ledoit–Wolf); a
        number: that coefficient (0: none, refusing classes that collapse to points).
    priors : array of shape (n_classes,), optional
        Class priors of the classifier (non-negative, summing to 1); default the class
        frequencies.  The subspace itself is fitted with the class frequencies.
    whiten : bool, default True
        ``transform`` multiplies the orthonormal projection by ``whitening_``; False: the
        orthonormal projection itself.
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR` (``objective_`` is None when r = n_features)
    ratio_ : float
        The trace ratio at ``M_`` on the training data (with the ``shrinkage_``).
    whitening_ : (n_components, n_components)
        T of Eq. W for W = ``components_.T`` (S_w shrunk by ``shrinkage_``).
    shrinkage_ : float
        The shrinkage coefficient used.
    subspace_ : (n_features, k) or None
        The span of the data when S_w is singular and ``shrinkage`` is None or 0: the
        objective was fitted on the coordinates ``X @ subspace_``; None otherwise.
    explained_variance_ratio_ : (n_components,)
        The share of the between-class scatter tr(S_b) kept by each component,
        m_jᵀS_bm_j / tr(S_b), decreasing (scikit-learn's LDA normalizes generalized
        eigenvalues instead: orthogonal LDA's components are orthonormal in the original
        metric, so the share of S_b they keep is the natural measure).
    classes_ : (n_classes,) the class labels
    priors_ : (n_classes,) the class priors used
    means_ : (n_classes, n_features) the class means
    coef_, intercept_ : (n_classes, n_features), (n_classes,)
        The linear decision rule (one row for two classes: class 1 against class 0, as in
        scikit-learn).

    References
    ----------
    H. Wang, S. Yan, D. Xu, X. Tang and T. Huang, "Trace ratio vs. ratio trace for
    dimensionality reduction", CVPR 2007.  Y. Chen, A. Wiesel, Y. C. Eldar and A. O. Hero,
    "Shrinkage algorithms for MMSE covariance estimation", IEEE TSP 58, 2010.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> pipe = make_pipeline(StandardScaler(), OrthogonalLDA())
    >>> bool(cross_val_score(pipe, X, y, cv=3).mean() > 0.95)
    True
    >>> pipe.fit(X, y)[-1].n_components_
    2
    """

    _objective_class = LDA
    _computes_in_namespace = True

    def __init__(self, n_components=None, *, shrinkage=None, priors=None, whiten=True,
                 solver=None, start=None, tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False, reg="deprecated"):
        self.n_components = n_components
        self.shrinkage = shrinkage
        self.priors = priors
        self.whiten = whiten
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.reg = reg

    def _requires_y(self) -> bool:
        return True

    def _validate_with_y(self, X, y, dtypes) -> tuple:
        X, y = validate_data(self, X, y, dtype=dtypes, ensure_min_samples=2)
        y = arrays.to_host(y)
        check_classification_targets(y)
        check_labels(y, X.shape[0], "y")
        return X, y

    # --- the pipeline's hooks (ldr.estimators.base) -------------------------------------
    def _prepare(self, data: FitData) -> None:
        """The class statistics, ``shrinkage_`` and, where S_w is singular, the span of the
        data to fit in (``subspace_``; the class docstring's "Singular S_w"); ``data.X``
        becomes the statistics the objective reads."""
        if not isinstance(self.whiten, (bool, np.bool_)):
            raise ParameterError("whiten", f"expected True or False, got {self.whiten!r}")
        level = self._shrinkage_param()
        if data.stats is None:
            data.stats = self._batch_moments(data)
        stats = data.stats
        Sw, Sb, _ = stats.class_scatter()
        dof = stats.n - len(stats.labels)  # the within-class scatter's degrees of freedom
        if dof <= 0:
            raise ParameterError("y", f"the number of samples ({stats.n:g}) must be more than "
                                 f"the number of classes ({len(stats.labels)}): with one "
                                 "sample per class there is no within-class scatter to "
                                 "discriminate against (no shrinkage changes that)")
        self.subspace_ = None
        self.shrinkage_ = (oas_shrinkage(Sw, dof) if level == "auto"
                           else 0.0 if level is None else float(level))
        data.X = stats
        if self.shrinkage_ > 0 or span_basis(Sw) is None:
            return
        U = span_basis(Sw + Sb, "X")  # S_t: directions without any variance are dropped
        if U is not None:
            data.X = stats.project(U)
            data.basis = U
            data.mean = np.asarray(stats.mean)
            self.subspace_ = U
            Sw = data.X.class_scatter()[0]
        if span_basis(Sw) is None:
            return
        if level is None:  # classes collapse to points along some directions: shrink
            self.shrinkage_ = oas_shrinkage(Sw, dof)
            return
        k = Sw.shape[0]
        raise ParameterError("X", f"the within-class scatter S_w is singular on the span of "
                             f"the data (rank {int(np.linalg.matrix_rank(Sw))} < {k}, with "
                             f"n_samples - n_classes = {dof}): along some directions every "
                             "class is a single point and the LDA ratio is unbounded. Pass "
                             "shrinkage=None (the default: Oracle Approximating Shrinkage "
                             "there) or shrinkage='auto', or reduce the dimension first (PCA)")

    def _batch_moments(self, data: FitData):
        return moments(data.X, data.y, name="X", validated=True,
                       weights=data.weights).on_host()

    def _shrinkage_param(self):
        """``shrinkage`` (or the deprecated ``reg``): None, "auto" or a number in [0, 1]."""
        level, name = self._renamed("shrinkage", "reg")
        if level is None or (isinstance(level, str) and level == "auto"):
            return level
        if isinstance(level, bool) or not isinstance(level, numbers.Real) \
                or not 0 <= level <= 1:
            raise ParameterError(name, f"must be None, 'auto' or a number in [0, 1], got "
                                       f"{level!r}")
        return float(level)

    def _n_components(self, data: FitData) -> int:
        classes = data.stats.labels
        k = data.n_features
        c = len(classes)
        if c < 2:
            raise ParameterError("y", f"at least two classes are needed, got {c} "
                                      f"({classes.tolist()!r})")
        upper = min(c - 1, k)
        bound = ("min(n_classes - 1, n_features)" if data.basis is None
                 else f"min(n_classes - 1, rank of X) (X spans {k} of its "
                      f"{data.stats.d} dimensions)")
        q = self.n_components
        if q is None:
            return upper
        if isinstance(q, numbers.Integral) and not isinstance(q, bool) and c - 1 < q:
            raise ParameterError("n_components", f"LDA's between-class scatter has rank at "
                                 f"most n_classes - 1 = {c - 1}, so n_components must be <= "
                                 f"{bound} = {upper}; got {q}")
        return check_int_components(q, upper, bound)

    def _objective(self, data: FitData, r: int):
        return LDA(data.X, None, r, shrinkage=self.shrinkage_) if r < data.n_features else None

    def _closed_form(self, data: FitData, r: int):
        Sw, Sb, _ = data.X.class_scatter()
        Sw = shrink(Sw, self.shrinkage_)
        check_nonsingular(Sw, "X", "within-class scatter S_w", "the LDA ratio is unbounded",
                          data.stats.n)
        M = np.eye(data.n_features)
        return closed_form_result(M, -np.trace(Sb) / np.trace(Sw),
                                  "every basis has the same trace ratio")

    def _finish(self, data: FitData, obj, result):
        """Rotate to the eigenvectors of MᵀS_bM within the span (sign rule, on the original
        features), then fit the classifier and the scores (in the coordinates of the fit;
        ``coef_`` mapped back to the original features)."""
        stats = data.stats
        U = data.basis
        M = np.asarray(arrays.to_host(result.M), dtype=float)
        if obj is not None:
            Sw = obj.Sw
            Sb = obj.Sb
            means = obj.means_
        else:
            Sw, Sb, means = data.X.class_scatter()
            Sw = shrink(Sw, self.shrinkage_)
        classes = stats.labels
        c = len(classes)
        priors = (stats.class_counts / stats.n if self.priors is None
                  else check_priors(self.priors, c))
        w, V = np.linalg.eigh(M.T @ Sb @ M)
        M = M @ V[:, ::-1]
        M = sign_rule(M) if U is None else U.T @ sign_rule(U @ M)
        coef, intercept = gaussian_linear_rule(M, priors @ means, means, Sw, priors)
        self.whitening_ = whitening(M, Sw, Sb, U)
        if U is not None:
            coef = coef @ U.T
        if c == 2:
            coef = coef[1:] - coef[:1]
            intercept = intercept[1:] - intercept[:1]
        tb = float(np.trace(Sb))
        self.mean_ = np.asarray(stats.mean)
        self.ratio_ = float(np.sum(M * (Sb @ M)) / np.sum(M * (Sw @ M)))
        self.explained_variance_ratio_ = (np.maximum(w[::-1], 0.0) / tb if tb > 0
                                          else np.zeros(M.shape[1]))
        self.classes_ = classes
        self.priors_ = np.asarray(priors, dtype=float)
        self.means_ = np.asarray(stats.class_scatter()[2], dtype=float)
        self.coef_ = coef
        self.intercept_ = intercept
        return M

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        A = M if data.basis is None else data.basis @ M
        if self.whiten:
            A = A @ self.whitening_
        return AffineMap(np.asarray(data.stats.mean), A)

    # --- the classifier -----------------------------------------------------------------
    def decision_function(self, X):
        """``δ_k(x) = X @ coef_.T + intercept_``, the log-posterior up to a per-sample constant;
        for two classes the log-odds of class 1 against class 0, shape (n_samples,)."""
        return self._decision(X, "decision_function")

    def _decision(self, X, method: str):
        X = self._check_rows(X, method)  # NumPy's type promotion, as scikit-learn's LDA
        if arrays.foreign(X) is None:
            D = X @ self.coef_.T + self.intercept_
        else:
            D = X @ same_space(self.coef_, X).T + same_space(self.intercept_, X)
        return D[:, 0] if self.classes_.shape[0] == 2 else D

    def predict(self, X):
        """The class of largest posterior (``decision_function``'s argmax, or its sign)."""
        D = self._decision(X, "predict")
        xp = arrays.namespace(D)
        idx = xp.astype(D > 0, xp.int64) if D.ndim == 1 else xp.argmax(D, axis=1)
        if arrays.foreign(self.classes_) is None:  # NumPy labels (numbers or not)
            return np.asarray(self.classes_)[np.asarray(arrays.to_host(idx))]
        return xp.take(self.classes_, idx)

    def predict_proba(self, X):
        """Posterior probabilities p(k | x) of the Gaussian model, (n_samples, n_classes)."""
        return self._proba(X, "predict_proba")

    def _proba(self, X, method: str):
        D = self._decision(X, method)
        xp = arrays.namespace(D)
        if xp is np:
            if D.ndim == 1:
                p = scipy.special.expit(D)
                return np.column_stack([1 - p, p])
            return scipy.special.softmax(D, axis=1)
        if D.ndim == 1:
            p = 1.0 / (1.0 + xp.exp(-D))
            return xp.stack([1 - p, p], axis=1)
        E = xp.exp(D - xp.max(D, axis=1, keepdims=True))
        return E / xp.sum(E, axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """log p(k | x), a zero probability mapped to log of the smallest normal (as
        scikit-learn)."""
        P = self._proba(X, "predict_log_proba")
        xp = arrays.namespace(P)
        return xp.log(xp.where(P == 0.0, xp.finfo(P.dtype).smallest_normal, P))

    def trace_ratio(self, X, y) -> float:
        """The trace ratio tr(S_b)/tr(S_w) of the orthonormal projection ``(X − mean_) @
        components_.T`` with labels ``y`` (no shrinkage): how well the learned subspace
        separates these classes.  (``score`` is the accuracy, as for every classifier.)"""
        X = self._check_rows(X, "trace_ratio")
        Xh = np.asarray(arrays.to_host(X), dtype=float)
        Z = (Xh - np.asarray(arrays.to_host(self.mean_), dtype=float)) @ \
            np.asarray(arrays.to_host(self.components_), dtype=float).T
        _, codes = check_labels(arrays.to_host(y), Z.shape[0], "y")
        means = np.zeros((codes.max() + 1, Z.shape[1]))
        np.add.at(means, codes, Z)
        means /= np.bincount(codes)[:, None]
        within = np.sum((Z - means[codes]) ** 2)
        between = np.sum((means[codes] - Z.mean(axis=0)) ** 2)
        return float(between / within) if within > 0 else float("inf")


def whitening(M, Sw, Sb, U) -> np.ndarray:
    """The r×r map T of ``whiten`` (OrthogonalLDA's Eq. W), Σ = MᵀS_wM: T = Σ^(-1/2) Q with Q
    the eigenvectors of Σ^(-1/2) MᵀS_bM Σ^(-1/2), largest first; each column's sign makes the
    largest entry of the feature-space column M T (U M T when fitted on the span U)
    positive."""
    w, V = np.linalg.eigh(M.T @ Sw @ M)
    w = np.maximum(w, np.finfo(float).eps * max(float(w[-1]), np.finfo(float).tiny))
    inv_sqrt = (V / np.sqrt(w)) @ V.T
    _, Q = np.linalg.eigh(inv_sqrt @ (M.T @ Sb @ M) @ inv_sqrt)
    T = inv_sqrt @ Q[:, ::-1]
    A = M @ T if U is None else U @ (M @ T)
    signs = np.sign(A[np.argmax(np.abs(A), axis=0), np.arange(A.shape[1])])
    return T * np.where(signs == 0, 1.0, signs)
