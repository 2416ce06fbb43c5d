"""Undercomplete ICA as a scikit-learn transformer (survey §3.2.1, Eq. 21).

:class:`UndercompleteICA` whitens the data (all non-null covariance directions, no PCA
reduction), then maximizes the likelihood of r sources with the chosen priors plus Gaussian
components in the remaining whitened directions (:mod:`ldr.objectives.ica`).  Its fitted
attributes carry :class:`sklearn.decomposition.FastICA`'s names and layouts: ``components_``
is the r×d unmixing (``transform(X) == (X − mean_) @ components_.T``), ``mixing_`` its
pseudo-inverse (d×r), ``whitening_`` the whitening map (k×d, rows).  Unlike FastICA, which
reduces to the r largest-variance directions first, nothing here is discarded before the
likelihood sees it, so weak sources under strong Gaussian noise are recovered.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from ldr.errors import ParameterError
from ldr.estimators._base import (
    FLOAT_DTYPES,
    OutputMixin,
    as_output,
    cast_fitted,
    check_int_components,
    output_dtype,
    project_centered,
    solve_and_warn,
    start_point,
)
from ldr.estimators._namespace import answer_in, namespace_of, on_host, project_in
from ldr.estimators._output import validate_data
from ldr.objectives.ica import UndercompleteICA as UndercompleteICAObjective

#: refits with changed priors at most (prior="auto"); more means a source is near-Gaussian
_MAX_PRIOR_ROUNDS = 10


class UndercompleteICA(OutputMixin, TransformerMixin, BaseEstimator):
    """Undercomplete ICA: r independent sources from d ≥ r mixed features, by maximum
    likelihood on the whitened data (survey Eq. 21; :class:`ldr.objectives.UndercompleteICA`).

    Parameters
    ----------
    n_components : int or None, default None
        r, the number of sources, 1 <= r <= k (k: the rank of the covariance, n_features for
        data of full rank).  None: k (square ICA).
    prior : {"auto", "supergaussian", "subgaussian"} or sequence of them, default "auto"
        The source prior(s): 1/(π cosh y) (log-cosh, super-Gaussian sources such as speech or
        Laplace), or ½[N(1, 1) + N(−1, 1)] (extended infomax's sub-Gaussian prior, e.g.
        uniform sources); a sequence gives one prior per source.  "auto" chooses one per
        source from the data, as extended infomax does: first by the sign of the FOBI
        kurtosis of the start's directions, then by the sign of extended infomax's switching
        statistic E[sech² y]E[y²] − E[y tanh y] of each source, evaluated at the start and
        after each solve; while a source prefers the other prior, the fit goes on from where
        it is with the priors preferred (``priors_``, ``n_prior_rounds_``;
        :mod:`ldr.objectives.ica`).  Measured
        (``benchmarks/bench_uica.py``): with Laplace and uniform sources in one model, "auto"
        recovered every source on 20 of 20 seeds, the super-Gaussian prior alone on none;
        on pure Laplace and pure uniform sources it equals the matching single prior.
    solver : str, Solver or list of them, default "trust-region"
        Any solver :func:`ldr.solve` accepts; the default was chosen by measurement
        (:mod:`ldr.objectives.ica`).
    start : "heuristic", "random", None or array, default "heuristic"
        "heuristic": FOBI's eigenvectors (deterministic); "random": a point seeded by
        ``random_state``; or a k×r array in whitened coordinates.
    tol, max_iter, solver_params : see :class:`~ldr.estimators.LinearDR`
        The gradient tolerance, the iteration budget and the other options of
        :func:`ldr.solve`.
    random_state : int, RandomState or None, default 0
        Seeds a random start (the only randomness).

    float32 X gives float32 fitted arrays and outputs; the fit itself runs in float64
    (:mod:`ldr.estimators._output`).

    Attributes
    ----------
    components_ : (n_components, n_features)
        The unmixing matrix: sources = ``(X − mean_) @ components_.T``.
    mixing_ : (n_features, n_components)
        Its pseudo-inverse: ``inverse_transform(S) = S @ mixing_.T + mean_``.
    whitening_ : (k, n_features)
        ``z = (x − mean_) @ whitening_.T`` has identity covariance (all k non-null directions).
    mean_ : (n_features,)
    M_ : (k, n_components)
        The point in whitened coordinates: ``components_ = (whitening_.T @ M_).T``.
    log_likelihood_ : float
        Mean log-likelihood per whitened training sample of the completed model (sources plus
        Gaussian components; :meth:`ldr.objectives.UndercompleteICA.log_likelihood`).
    priors_ : tuple of str
        The prior of each component (the one given, or the one "auto" settled on).
    n_prior_rounds_ : int
        How many times "auto" changed priors and refitted (0: the first choice held).
    n_components_, cost_, n_iter_, result_, objective_, n_features_in_ : as in
        :class:`ldr.estimators.LinearDR`

    Examples
    --------
    >>> import ldr
    >>> from ldr.objectives.ica import amari_distance
    >>> X, S, A = ldr.datasets.make_uica(2000, 6, 2, seed=0)
    >>> ica = UndercompleteICA(n_components=2).fit(X)
    >>> ica.transform(X).shape, ica.components_.shape, ica.mixing_.shape
    ((2000, 2), (2, 6), (6, 2))
    >>> bool(amari_distance(ica.components_, A) < 0.05)
    True
    """

    def __init__(self, n_components=None, *, prior="auto", solver="trust-region",
                 start="heuristic", tol=1e-8, max_iter=1000, solver_params=None,
                 random_state=0):
        self.n_components, self.prior = n_components, prior
        self.solver, self.start = solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # (fit's docstring)
        return tags

    def fit(self, X, y=None) -> UndercompleteICA:
        """Whiten X and maximize the likelihood of the sources; returns self (y is ignored).
        An array of another namespace under ``array_api_dispatch`` is fitted on a host copy,
        the fitted arrays returned to its namespace (:mod:`ldr.estimators._namespace`)."""
        space, X = on_host(X)
        X = validate_data(self, X, dtype=FLOAT_DTYPES, ensure_min_samples=2)
        dtype = output_dtype(X)  # float32 in, float32 out; computed in float64 (the
        r = self.n_components   # objective reads the rank at X's own precision)
        if r is not None:
            r = check_int_components(r, X.shape[1], "n_features")
        try:
            obj = UndercompleteICAObjective(X, r, prior=self.prior)
        except ParameterError as exc:
            raise (exc.renamed("n_components") if exc.param == "r" else exc) from None
        auto = isinstance(self.prior, str) and self.prior == "auto"
        M0, rounds = start_point(self.start, obj), 0
        if auto and (isinstance(M0, str) and M0 == "heuristic" or np.shape(M0) == obj.shape):
            # the start's own preferences first, so that a column keeps its direction
            start = obj.heuristic() if isinstance(M0, str) else np.asarray(M0, dtype=float)
            obj, M0, rounds = self._switch(obj, start, rounds)
        res = solve_and_warn(self, obj, M0)
        while auto and not res.interrupted:
            switched, M0, rounds = self._switch(obj, res.M, rounds)
            if switched is obj:
                break
            if rounds > _MAX_PRIOR_ROUNDS:
                warnings.warn(f"{type(self).__name__}: prior='auto' did not settle after "
                              f"{_MAX_PRIOR_ROUNDS} refits (a source's switching statistic "
                              "keeps changing sign; it is near a Gaussian): kept the last fit; "
                              "pass the priors explicitly", ConvergenceWarning, stacklevel=2)
                break
            obj = switched
            res = solve_and_warn(self, obj, M0)
        self.priors_, self.n_prior_rounds_ = obj.priors, rounds
        self.objective_, self.result_ = obj, res
        self.M_ = np.asarray(res.M, dtype=float)
        self.components_ = obj.unmixing(self.M_)
        self.mixing_ = np.linalg.pinv(self.components_)
        self.whitening_ = obj.whitening_.T.copy()
        self.mean_ = obj.mean_.copy()
        self.n_components_ = obj.shape[1]
        self.cost_, self.n_iter_ = float(res.cost), res.n_iter
        self.log_likelihood_ = obj.log_likelihood(self.M_, cost=res.cost)
        obj.release()
        cast_fitted(self, dtype)
        return answer_in(self, space)

    @staticmethod
    def _switch(obj, M, rounds: int):
        """``(objective, point, rounds)`` with the priors the sources at ``M`` prefer
        (:meth:`~ldr.objectives.UndercompleteICA.preferred_priors`): the same objective and
        point when they already have them, else the objective with those priors and the
        columns whose prior changed rescaled for it, one more round."""
        wanted = obj.preferred_priors(M)
        if wanted == obj.priors:
            return obj, M, rounds
        changed = [a != b for a, b in zip(wanted, obj.priors)]
        obj = obj.with_priors(wanted)
        return obj, obj.rescaled(M, changed), rounds + 1

    def transform(self, X) -> np.ndarray:
        """The estimated sources ``(X − mean_) @ components_.T`` (in X's namespace, on its
        device, under ``array_api_dispatch``: :mod:`ldr.estimators._namespace`)."""
        check_is_fitted(self, "components_")
        if (space := namespace_of(X, fitted=self)) is not None:
            return project_in(self, X, *space, self.mean_, self.components_.T)
        return project_centered(self, X)

    def inverse_transform(self, X) -> np.ndarray:
        """Sources back to feature space: ``X @ mixing_.T + mean_`` (in X's namespace, as
        :meth:`transform`)."""
        check_is_fitted(self, "components_")
        space = namespace_of(X, fitted=self, method="inverse_transform")
        xp = np if space is None else space[0]
        S = check_array(X, dtype=[xp.float64, xp.float32], input_name="X")
        if S.shape[1] != self.n_components_:
            raise ParameterError(
                "X", f"expected an array of shape (n_samples, {self.n_components_}) "
                             f"of sources, got shape {S.shape}")
        if space is None:
            return as_output(S @ self.mixing_.T + self.mean_, output_dtype(S))
        mixing, mean = (xp.astype(a, xp.float64) for a in (self.mixing_, self.mean_))
        return xp.astype(xp.astype(S, xp.float64) @ mixing.T + mean, S.dtype)
