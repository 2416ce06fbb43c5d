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
from sklearn.exceptions import ConvergenceWarning

from ldr.core.deprecation import user_stacklevel
from ldr.core.errors import ParameterError
from ldr.estimators.base import AffineMap, FitData, LinearDR, check_int_components
from ldr.objectives.ica import UndercompleteICA as UndercompleteICAObjective

__all__ = ["UndercompleteICA"]

#: refits with changed priors at most (prior="auto"); more means a source is near-Gaussian
MAX_PRIOR_ROUNDS = 10


class UndercompleteICA(LinearDR):
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
        :mod:`ldr.objectives.ica`; Lee, Girolami and Sejnowski 1999).
    solver : str, Solver or list of them, default "trust-region"
        Any solver :func:`ldr.solve` accepts.
    start : "heuristic", "random", None or array, default "heuristic"
        "heuristic": FOBI's eigenvectors (deterministic); "random": a point seeded by
        ``random_state``; or a k×r array in whitened coordinates.
    tol, max_iter, solver_params, verbose : see :class:`~ldr.estimators.LinearDR`
        The gradient tolerance, the iteration budget and the other options of
        :func:`ldr.solve`.
    random_state : int, RandomState or None, default 0
        Seeds a random start (the only randomness).

    float32 X gives float32 fitted arrays and outputs; the fit itself runs in float64.

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
    map_, n_components_, cost_, n_iter_, result_, objective_, n_features_in_ : as in
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

    _objective_class = UndercompleteICAObjective
    _defines_inverse = True

    def __init__(self, n_components=None, *, prior="auto", solver="trust-region",
                 start="heuristic", tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0):
        self.n_components = n_components
        self.prior = prior
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state

    def _requires_y(self) -> bool:
        return False

    def _n_components(self, data: FitData):
        """r as given, or None: k, the rank of the covariance (the objective's default)."""
        if self.n_components is None:
            return None
        return check_int_components(self.n_components, data.n_features, "n_features")

    def _objective(self, data: FitData, r):
        # the rows at their own precision (float32 exactly): the objective reads the rank
        # at it, and float32's rounding is not a direction
        rows = data.X if data.dtype == np.float64 else data.X.astype(data.dtype)
        try:
            return UndercompleteICAObjective(rows, r, prior=self.prior)
        except ParameterError as exc:
            raise (exc.renamed("n_components") if exc.param == "r" else exc) from None

    def _fit_point(self, data: FitData, r) -> tuple:
        """With ``prior="auto"``, refits from where the last fit ended while a source prefers
        the other prior (the class docstring)."""
        obj = self._objective(data, r)
        auto = isinstance(self.prior, str) and self.prior == "auto"
        start = self._start(obj, data)
        rounds = 0
        if auto and (isinstance(start, str) and start == "heuristic"
                     or np.shape(start) == obj.shape):
            # the start's own preferences first, so that a column keeps its direction
            at = obj.heuristic() if isinstance(start, str) else np.asarray(start, dtype=float)
            obj, start, rounds = self._switch(obj, at, rounds)
        res = self._run(obj, start)
        while auto:
            switched, start, rounds = self._switch(obj, res.M, rounds)
            if switched is obj:
                break
            if rounds > MAX_PRIOR_ROUNDS:
                warnings.warn(f"{type(self).__name__}: prior='auto' did not settle after "
                              f"{MAX_PRIOR_ROUNDS} refits (a source's switching statistic "
                              "keeps changing sign; it is near a Gaussian): kept the last fit; "
                              "pass the priors explicitly", ConvergenceWarning,
                              stacklevel=user_stacklevel())
                break
            obj = switched
            res = self._run(obj, start)
        self.n_prior_rounds_ = rounds
        return obj, res

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

    def _finish(self, data: FitData, obj, result):
        M = np.asarray(result.M, dtype=float)
        self.n_components_ = obj.shape[1]
        self.priors_ = obj.priors
        self.components_ = obj.unmixing(M)
        self.mixing_ = np.linalg.pinv(self.components_)
        self.whitening_ = obj.whitening_.T.copy()
        self.log_likelihood_ = obj.log_likelihood(M, cost=result.cost)
        obj.release()
        return M

    def _components(self, data: FitData, obj, M):
        return self.components_

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        """The sources ``(X − mean_) @ components_.T``; back, ``S @ mixing_.T + mean_``."""
        return AffineMap(np.asarray(obj.mean_), self.components_.T, self.mixing_.T)
