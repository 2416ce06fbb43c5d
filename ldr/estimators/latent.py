"""Latent-variable Gaussian models by maximum likelihood: probabilistic PCA and factor
analysis, with scikit-learn's covariance API (``get_covariance``, ``get_precision``,
``score_samples``, ``score``) and factor analysis's orthomax rotations."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
from sklearn.utils.validation import check_is_fitted

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import moments
from ldr.estimators.base import AffineMap, FitData, LinearDR, WeightedFit
from ldr.objectives.latent import PPCA as PPCAObjective
from ldr.objectives.latent import FactorAnalysis as FactorAnalysisObjective

__all__ = ["FactorAnalysis", "PPCA", "orthomax"]

#: the rotations of ``FactorAnalysis(rotation=...)``: the γ of the orthomax criterion
ORTHOMAX_GAMMA = {"varimax": 1.0, "quartimax": 0.0}


def orthomax_criterion(loadings, gamma: float) -> float:
    """The orthomax criterion Q_γ(Λ) = Σ_j [Σ_i λ_ij⁴ − (γ/p)(Σ_i λ_ij²)²] of the p×k
    loadings Λ (:func:`orthomax`)."""
    squares = np.asarray(loadings, dtype=float) ** 2
    p = squares.shape[0]
    return float(np.sum(squares**2) - gamma / p * np.sum(np.sum(squares, axis=0) ** 2))


def orthomax(loadings, gamma: float = 1.0, *, tol: float = 1e-9, max_iter: int = 1000):
    """The orthogonal rotation of the loadings that maximizes the orthomax criterion.

    With Λ the p×k loadings (one row per feature, one column per factor) and B = ΛR for an
    orthogonal k×k R, the orthomax family (Harman 1976, the orthomax criteria; Jennrich
    2001) maximizes ::

        Q_γ(B) = Σ_j [ Σ_i b_ij⁴ − (γ/p) (Σ_i b_ij²)² ],

    which makes each column's squared loadings spread out (a few large, the rest near zero):
    γ = 1 is the raw varimax criterion of Kaiser (1958) (p·Q₁ is Σ_j of p Σ_i b_ij⁴ −
    (Σ_i b_ij²)², the variance of the squared loadings of each factor, without Kaiser's row
    normalization, as scikit-learn's FactorAnalysis), γ = 0 quartimax.  The gradient of
    f(R) = Q_γ(ΛR) is ∂f/∂R = 4 Λᵀ G with ::

        G = B ⊙ B ⊙ B − (γ/p) B diag(Σ_i b_ij²),

    and each step moves R to the orthogonal matrix nearest the gradient, R ← U Vᵀ with
    U Σ Vᵀ = Λᵀ G (the singular-value step of Jennrich's 2001 gradient projection algorithm:
    it maximizes the linearization tr(Rᵀ Λᵀ G) over the orthogonal matrices), from R = I.  A
    step that would lower Q_γ (beyond rounding) is not taken and ends the iteration, which
    otherwise stops when a step moves R by at most ``tol`` (Frobenius norm).

    Parameters
    ----------
    loadings : (p, k) array
        Λ, finite.
    gamma : float >= 0, default 1.0
        γ: 1 varimax, 0 quartimax (k/2 equamax).
    tol : float > 0, default 1e-9
        Stop when a step moves R by at most ``tol``, ‖R_new − R‖_F ≤ tol.
    max_iter : int >= 1, default 1000
        The most steps.

    Returns
    -------
    rotated : (p, k) array
        ΛR.
    rotation : (k, k) array
        R, orthogonal (I where the first step would lower the criterion).

    References
    ----------
    H. F. Kaiser (1958), "The varimax criterion for analytic rotation in factor analysis",
    Psychometrika 23, 187–200; H. H. Harman (1976), *Modern Factor Analysis*, 3rd ed.,
    University of Chicago Press; R. I. Jennrich (2001), "A simple general procedure for
    orthogonal rotation", Psychometrika 66, 289–306.

    Examples
    --------
    Loadings of simple structure (each feature on one factor), turned by 0.3 rad, are turned
    back:

    >>> import numpy as np
    >>> simple = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
    >>> turn = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    >>> rotated, R = orthomax(simple @ turn)
    >>> bool(np.allclose(R.T @ R, np.eye(2))), np.abs(rotated).round(6).tolist()
    (True, [[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
    """
    A = np.asarray(loadings, dtype=float)
    if A.ndim != 2 or not np.all(np.isfinite(A)):
        raise ParameterError("loadings", f"expected a finite 2-D array (p features × k "
                             f"factors), got shape {A.shape}")
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not gamma >= 0:
        raise ParameterError("gamma", f"must be a number >= 0 (1 varimax, 0 quartimax), got "
                             f"{gamma!r}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol > 0:
        raise ParameterError("tol", f"must be a positive number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) \
            or max_iter < 1:
        raise ParameterError("max_iter", f"must be an integer >= 1, got {max_iter!r}")
    p, k = A.shape
    R = np.eye(k)
    B = A
    value = orthomax_criterion(B, gamma)
    for _ in range(max_iter):
        G = B**3 - (gamma / p) * B * np.sum(B**2, axis=0)
        U, _, Vt = np.linalg.svd(A.T @ G)
        R_new = U @ Vt
        B_new = A @ R_new
        new = orthomax_criterion(B_new, gamma)
        if new < value - 64 * np.finfo(float).eps * abs(value):
            break  # a step that would lower Q_γ (beyond rounding) is not taken
        step = float(np.linalg.norm(R_new - R))
        R = R_new
        B = B_new
        value = new
        if step <= tol:
            break
    return B, R


class LatentGaussian(WeightedFit, LinearDR):
    """What PPCA and FA share: the model is fitted on the rows' covariance (one pass, in
    their namespace or over the chunks of a Dask array or memmap); loadings W with orthogonal
    columns of decreasing norm; a posterior-mean ``transform``; the Gaussian model
    N(μ, WWᵀ + Ψ) (Ψ = σ²I for PPCA) with scikit-learn's covariance API: ``get_covariance``,
    ``get_precision`` (Woodbury), ``score_samples`` and ``score``."""

    _computes_in_namespace = True

    def _prepare(self, data: FitData) -> None:
        if data.stats is None:
            data.stats = self._batch_moments(data)
        data.X = data.stats

    def _batch_moments(self, data: FitData):
        return moments(data.X, name="X", validated=True, weights=data.weights).on_host()

    def _finish(self, data: FitData, obj, result):
        # the likelihood is invariant to W → WR: keep the basis with orthogonal columns of
        # decreasing norm (W's right singular vectors), largest entry of each positive
        M = result.M
        W = np.asarray(M[0] if isinstance(M, tuple) else M, dtype=float)
        _, _, Vt = np.linalg.svd(W, full_matrices=False)
        W = W @ Vt.T
        rows = np.argmax(np.abs(W), axis=0)
        signs = np.sign(W[rows, np.arange(W.shape[1])])
        W = W * np.where(signs == 0, 1.0, signs)
        M = (W, *M[1:]) if isinstance(M, tuple) else W
        self.noise_variance_ = obj.unpack(M)[1]
        self.log_likelihood_ = obj.log_likelihood(M)
        return M

    def _components(self, data: FitData, obj, M):
        W = obj.unpack(M)[0]
        return (W if data.basis is None else data.basis @ W).T

    # --- the Gaussian model N(mean_, WWᵀ + Ψ) -------------------------------------------
    def _host(self, name: str) -> np.ndarray:
        return np.asarray(arrays.to_host(getattr(self, name)), dtype=float)

    def _noise(self) -> np.ndarray:
        """ψ, the diagonal of Ψ (σ² on every feature for PPCA), on the host."""
        psi = np.asarray(arrays.to_host(self.noise_variance_), dtype=float)
        return np.broadcast_to(psi, (self.components_.shape[1],)).copy()

    def _like_components(self, value):
        """A NumPy result in the namespace, device and dtype of ``components_``."""
        return arrays.like(np.asarray(value), self.components_) \
            if arrays.foreign(self.components_) is not None \
            else np.asarray(value).astype(self.components_.dtype, copy=False)

    def _woodbury(self):
        """``(V, ψ, c)``: the components V = Wᵀ (r×d), ψ, and the lower Cholesky factor c of
        K⁻¹ = I + V Ψ⁻¹ Vᵀ (r×r), on the host."""
        V = self._host("components_")
        psi = self._noise()
        if not np.all(psi > 0):
            raise ValueError("the fitted noise variances are not all positive: the model's "
                             "covariance is singular and has no density")
        Kinv = V / psi @ V.T
        Kinv.flat[:: len(Kinv) + 1] += 1.0
        return V, psi, scipy.linalg.cholesky(Kinv, lower=True)

    def get_covariance(self):
        """The model's covariance of the data, WWᵀ + Ψ = ``components_ᵀ components_ +
        diag(noise_variance_)`` (scikit-learn's ``FactorAnalysis.get_covariance``; Ψ = σ²I
        for PPCA), in the namespace, device and dtype of ``components_``.  A rotation
        (``FactorAnalysis(rotation=...)``) leaves it unchanged: (WR)(WR)ᵀ = WWᵀ."""
        check_is_fitted(self, "components_")
        V = self._host("components_")
        C = V.T @ V
        C.flat[:: len(C) + 1] += self._noise()
        return self._like_components(C)

    #: Woodbury's Ψ⁻¹ − … cancels about log10(max_j C_jj/ψ_j) digits: beyond this ratio (a
    #: Heywood case, ψ_j → 0) ``get_precision`` and ``score_samples`` factor C itself
    woodbury_ratio = 1e4

    def _heywood(self, V, psi) -> bool:
        """Whether some feature is almost wholly explained by the factors, C_jj/ψ_j =
        1 + Σ_k w_jk²/ψ_j > ``woodbury_ratio``."""
        return bool(np.max(np.sum(V**2, axis=0) / psi) > self.woodbury_ratio)

    @staticmethod
    def _covariance_factor(V, psi):
        """The lower Cholesky factor of C = VᵀV + diag(ψ)."""
        C = V.T @ V
        C.flat[:: len(C) + 1] += psi
        return scipy.linalg.cholesky(C, lower=True)

    def get_precision(self):
        """The inverse of :meth:`get_covariance` by the matrix inversion lemma (Woodbury), ::

            (WWᵀ + Ψ)⁻¹ = Ψ⁻¹ − Ψ⁻¹W (I + WᵀΨ⁻¹W)⁻¹ WᵀΨ⁻¹,

        an r×r factorization instead of a d×d inverse (scikit-learn's
        ``FactorAnalysis.get_precision``).  The subtraction cancels about
        log10(max_j C_jj/ψ_j) digits of the diagonal; where that ratio exceeds
        ``woodbury_ratio`` (a Heywood case: a feature almost wholly explained by the factors,
        ψ_j → 0) the precision is C⁻¹ from C's Cholesky factor, accurate to C's condition
        number."""
        check_is_fitted(self, "components_")
        V, psi, c = self._woodbury()
        if self._heywood(V, psi):
            F = self._covariance_factor(V, psi)
            P = scipy.linalg.cho_solve((F, True), np.eye(len(F)))
            return self._like_components(0.5 * (P + P.T))
        L = V / psi  # Wᵀ Ψ⁻¹ (r×d)
        T = scipy.linalg.solve_triangular(c, L, lower=True)
        P = -(T.T @ T)
        P.flat[:: len(P) + 1] += 1.0 / psi
        return self._like_components(0.5 * (P + P.T))

    def score_samples(self, X):
        """Log-likelihood of each row of X under the fitted Gaussian
        ``N(mean_, get_covariance())``, ::

            log p(x) = −½ [d log 2π + log|C| + (x − μ)ᵀ C⁻¹ (x − μ)],   C = WWᵀ + Ψ,

        with the determinant lemma log|C| = Σ_j log ψ_j + log|I + WᵀΨ⁻¹W| and Woodbury's
        C⁻¹ (:meth:`get_precision`), in O(n d r) (in a Heywood case, from C's Cholesky factor,
        as :meth:`get_precision`).  Computed on the host in float64; in X's namespace under
        ``array_api_dispatch``."""
        X = self._check_rows(X, "score_samples")
        out = self._log_density(np.asarray(arrays.to_host(X), dtype=float))
        return out if arrays.foreign(X) is None else arrays.like(out, X)

    def _log_density(self, X):
        V, psi, c = self._woodbury()
        centered = X - self._host("mean_")
        if self._heywood(V, psi):
            F = self._covariance_factor(V, psi)
            T = scipy.linalg.solve_triangular(F, centered.T, lower=True)
            quadratic = np.sum(T**2, axis=0)
            logdet = 2.0 * np.sum(np.log(np.diag(F)))
        else:
            root = np.sqrt(psi)
            E = centered / root  # Ψ^{-1/2}(x − μ)
            T = scipy.linalg.solve_triangular(c, (V / root) @ E.T, lower=True)
            quadratic = np.sum(E**2, axis=1) - np.sum(T**2, axis=0)
            logdet = np.sum(np.log(psi)) + 2.0 * np.sum(np.log(np.diag(c)))
        return -0.5 * (X.shape[1] * np.log(2 * np.pi) + logdet + quadratic)

    def result_model(self):
        """The fitted point in the objective's coordinates (NumPy)."""
        M = self.M_
        return tuple(arrays.to_host(m) for m in M) if isinstance(M, tuple) \
            else arrays.to_host(M)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the rows of X (scikit-learn's PCA/FactorAnalysis
        ``score``): the mean of :meth:`score_samples`."""
        return float(np.mean(arrays.to_host(self.score_samples(X))))


class PPCA(LatentGaussian):
    """Probabilistic PCA by maximum likelihood, x ~ N(μ, WWᵀ + σ²I) (survey Eq. 22).

    The closed form (Tipping & Bishop) is the default start and already optimal, so the run
    certifies it.  With S = U Λ Uᵀ the covariance (eigenvalues λ_1 ≥ … ≥ λ_d), the maximum has
    W = U_r (Λ_r − σ²I)^{1/2} R (any orthogonal R; the fitted W has orthogonal columns of
    decreasing norm, R = I) and σ² = mean(λ_{r+1}, …, λ_d).  ``transform`` is chosen by
    ``transform_algorithm`` (the name of scikit-learn's ``SparseCoder``/``DictionaryLearning``
    parameter that picks what ``transform`` computes):

    * ``"projection"`` (default): the orthogonal projection onto the principal subspace, ::

          z = U_rᵀ (x − μ),                                                   (1)

      with U_r = W (WᵀW)^{-1/2} (W's columns scaled to unit norm): scikit-learn's
      ``PCA(n_components).transform``, whose model is this one (its ``score`` is PPCA's
      likelihood), with the same signs (largest entry of each column positive);
    * ``"posterior_mean"``: the posterior mean of the latent variable, ::

          E[z | x] = (WᵀW + σ²I)⁻¹ Wᵀ (x − μ) = diag(√(λ_i − σ²) / λ_i) U_rᵀ (x − μ),   (2)

      which shrinks each principal coordinate by √(λ_i − σ²)/λ_i ≈ λ_i^{-1/2}: it nearly
      whitens them, as scikit-learn's ``FactorAnalysis.transform`` does for its model.

    (1) is the default because it is what a user of scikit-learn's PCA, whose model this
    is, gets from ``transform``; (2) weighs the noise-level components nearly as much as the
    leading ones.  A column of W that is zero (a fixed ``noise_variance`` ≥ λ_i) maps to
    zero under both.

    ``get_covariance`` is the model's covariance WWᵀ + σ²I = ``components_ᵀ components_ +
    noise_variance_ · I`` (scikit-learn's ``PCA.get_covariance`` of this model, whichever
    ``transform_algorithm``), ``get_precision`` its inverse σ⁻²I − σ⁻⁴W(I + WᵀW/σ²)⁻¹Wᵀ by the
    matrix inversion lemma, ``score_samples`` the rows' log-likelihoods under
    N(``mean_``, WWᵀ + σ²I) and ``score`` their mean.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: the largest q that leaves a noise variance to
        estimate — n_features − 1, or k − 1 on data of numerical rank k < n_features
        (:meth:`ldr.objectives.PPCA.max_rank`).
    noise_variance : float > 0, optional
        A fixed σ²; estimated when None (default).
    transform_algorithm : {"projection", "posterior_mean"}, default "projection"
        What ``transform`` returns: the projection (1) or the posterior mean (2).
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : the point: W, or (W, [[log σ²]]) when σ² is estimated
    components_ : (n_components, n_features)
        The loadings Wᵀ (not orthonormal; columns of W orthogonal, by decreasing norm).
    noise_variance_ : float
        σ².
    log_likelihood_ : float
        Mean log-likelihood per training sample (−cost_).
    map_, n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import PCA as SkPCA
    >>> X = np.random.default_rng(0).standard_normal((200, 5)) * [5.0, 4.0, 1.0, 1.0, 1.0]
    >>> est = PPCA(n_components=2).fit(X)
    >>> bool(abs(est.score(X) - SkPCA(2).fit(X).score(X)) < 1e-3)
    True
    """

    _objective_class = PPCAObjective
    _objective_args = ("noise_variance",)
    #: the values of ``transform_algorithm``
    transform_algorithms = ("projection", "posterior_mean")

    def __init__(self, n_components=None, *, noise_variance=None,
                 transform_algorithm="projection", solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, verbose=0, random_state=0, warm_start=False):
        self.n_components = n_components
        self.noise_variance = noise_variance
        self.transform_algorithm = transform_algorithm
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start

    def _prepare(self, data: FitData) -> None:
        if self.transform_algorithm not in self.transform_algorithms:
            raise ParameterError("transform_algorithm", "must be 'projection' (scikit-learn "
                                 "PCA's transform, U_rᵀ(x − μ)) or 'posterior_mean' (E[z | x]);"
                                 f" got {self.transform_algorithm!r}")
        super()._prepare(data)

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        mean, A = obj.linear_map(M)  # the posterior mean's map, Eq. (2)
        if self.transform_algorithm == "projection":
            W = obj.unpack(M)[0]
            norms = np.linalg.norm(W, axis=0)
            # Eq. (1): W's columns are orthogonal (``_finish``), so W / ‖w_i‖ is U_r; a zero
            # column (σ² ≥ λ_i with a fixed noise variance) maps to zero, as in Eq. (2)
            A = W / np.where(norms > 0, norms, np.inf)
        return AffineMap(np.asarray(mean, dtype=float), np.asarray(A, dtype=float))


class FactorAnalysis(LatentGaussian):
    """Factor analysis by maximum likelihood, x ~ N(μ, WWᵀ + Ψ), Ψ diagonal (survey Eq. 23).

    Starts at PPCA's closed form (ψ_j = σ²), which FA contains, so the answer is never less
    likely; ``transform`` is the posterior mean E[z | x] = (I + WᵀΨ⁻¹W)⁻¹WᵀΨ⁻¹(x − μ)
    (scikit-learn's ``FactorAnalysis.transform``).  ``get_covariance``, ``get_precision``,
    ``score_samples`` and ``score`` are the Gaussian model N(μ, WWᵀ + Ψ), as scikit-learn's.

    **Rotation.**  The likelihood is invariant to W → WR for any orthogonal R: the fit
    identifies the span of the loadings, and the estimator keeps W with orthogonal columns of
    decreasing norm.  ``rotation="varimax"`` or ``"quartimax"`` (scikit-learn's parameter)
    then rotates the fitted loadings, over all features, to the maximum of the orthomax
    criterion ::

        Q_γ(WR) = Σ_j [ Σ_i (WR)_ij⁴ − (γ/d) (Σ_i (WR)_ij²)² ],   γ = 1 varimax, 0 quartimax,

    (Kaiser's raw varimax, without row normalization, as scikit-learn; the iteration is
    ``orthomax`` of this module), columns ordered by decreasing sum of squared loadings, the
    largest entry of each positive.  ``components_`` is then (WR)ᵀ and ``transform`` the
    posterior mean of the rotated factors, Rᵀ E[z | x] — scikit-learn's transform of the
    rotated components — while ``get_covariance`` (WR)(WR)ᵀ + Ψ = WWᵀ + Ψ,
    ``noise_variance_``, ``log_likelihood_`` and ``score`` do not change.

    **Constant features** (a pixel that is always 0, a dummy constant in a cross-validation
    fold): their maximum-likelihood noise variance is 0 and the likelihood unbounded, so the
    objective (:class:`ldr.objectives.FactorAnalysis`) refuses them.  The estimator fits the
    model on the other features and gives each constant feature a zero loading and the noise
    variance ``noise_floor`` (1e-12, scikit-learn's floor on ψ, which its FactorAnalysis
    reaches there): the model's covariance is block diagonal, so this is the maximum of the
    likelihood with ψ floored, and ``log_likelihood_`` and ``score`` include the constant
    features' terms, as scikit-learn's do.  ``constant_features_`` lists them.

    **The default rank** is n_features − 1 (scikit-learn's is n_features).  At r =
    n_features the model WWᵀ + Ψ can equal any covariance: the likelihood's maximum, the
    full-covariance Gaussian's −½(d log 2π + log det S + d), is attained by every Ψ with
    0 < Ψ and S − Ψ positive semi-definite, so the factors and ``transform`` would be
    wherever a solver stops; the objective refuses r = d.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components < n_features; None: n_features − 1, the natural maximum (ldr's model
        needs q < n_features).  With k constant features: n_features − k − 1 and at most
        that.
    rotation : {None, "varimax", "quartimax"}, default None
        The orthomax rotation of the fitted loadings (the class docstring, **Rotation**);
        None keeps W with orthogonal columns.
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_ : the point (W, log ψ), W rotated where ``rotation`` is set
    components_ : (n_components, n_features)
        The loadings Wᵀ, as scikit-learn's FactorAnalysis (columns of W orthogonal without
        ``rotation``; rotated by it).
    noise_variance_ : (n_features,)
        ψ, the per-feature noise variances (``noise_floor`` for a constant feature).
    log_likelihood_ : float
        Mean log-likelihood per training sample (−cost_ without constant features).
    constant_features_ : (k,) int array
        The indices of the constant features (empty when there are none).  With k > 0,
        ``M_``, ``objective_``, ``result_`` and ``cost_`` are the model of the other features.
    map_, n_components_, cost_, n_iter_, result_, objective_, mean_ : see :class:`LinearDR`

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 6)) * 2
    >>> X += rng.standard_normal((300, 6)) * [0.5, 1.0, 1.5, 0.5, 1.0, 2.0]
    >>> est = FactorAnalysis(n_components=2).fit(X)
    >>> bool(est.log_likelihood_ > PPCA(n_components=2).fit(X).log_likelihood_)
    True
    >>> rotated = FactorAnalysis(n_components=2, rotation="varimax").fit(X)
    >>> bool(np.allclose(rotated.get_covariance(), est.get_covariance()))
    True

    References
    ----------
    H. F. Kaiser (1958), "The varimax criterion for analytic rotation in factor analysis",
    Psychometrika 23, 187–200; R. I. Jennrich (2001), "A simple general procedure for
    orthogonal rotation", Psychometrika 66, 289–306; J. P. Cunningham, Z. Ghahramani (2015),
    "Linear dimensionality reduction: survey, insights, and generalizations", JMLR 16,
    2859–2900, Eq. 23.
    """

    _objective_class = FactorAnalysisObjective
    #: the noise variance of a constant feature: scikit-learn's floor on ψ (its ``SMALL``)
    noise_floor = 1e-12

    def __init__(self, n_components=None, *, rotation=None, solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, verbose=0, random_state=0, warm_start=False):
        self.n_components = n_components
        self.rotation = rotation
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start

    def _prepare(self, data: FitData) -> None:
        """The covariance of the features that vary; constant features are set aside (the
        class docstring) — found from each column's range where the rows are in memory (a
        chunked read leaves them to the objective's own check, which names them)."""
        if self.rotation is not None and (not isinstance(self.rotation, str)
                                          or self.rotation not in ORTHOMAX_GAMMA):
            raise ParameterError("rotation", "must be None, 'varimax' or 'quartimax' (the "
                                 f"orthomax rotation of the loadings), got {self.rotation!r}")
        self.constant_features_ = np.zeros(0, dtype=np.intp)
        rows = None if data.lazy else data.X
        super()._prepare(data)
        if rows is None:
            return
        xp = arrays.namespace(rows)
        spread = np.asarray(arrays.to_host(xp.max(rows, axis=0) - xp.min(rows, axis=0)))
        scale = np.asarray(arrays.to_host(xp.max(xp.abs(rows), axis=0)))
        const = np.flatnonzero(spread <= 4 * np.finfo(float).eps * scale)
        d = spread.shape[0]
        if const.size == 0:
            return
        if d - const.size < 2:
            raise ParameterError("X", f"{const.size} of its {d} features are constant "
                                 f"({const.tolist()}): factor analysis needs at least two "
                                 "features that vary")
        stats = data.stats
        kept = np.setdiff1d(np.arange(d), const)
        self.constant_features_ = const
        data.derived["constant"] = (const, stats.mean[const], np.diag(stats.covariance())[const])
        data.basis = np.eye(d)[:, kept]
        data.mean = np.asarray(stats.mean)
        data.X = stats.project(data.basis)  # the statistics of the other features, exactly

    def _n_components(self, data: FitData) -> int:
        const = self.constant_features_
        if const.size == 0:
            return super()._n_components(data)
        k = data.n_features
        q = k - 1 if self.n_components is None else self.n_components
        if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or not 1 <= q < k:
            raise ParameterError("n_components", f"must be an integer with 1 <= n_components "
                                 f"< {k}: {const.size} features are constant "
                                 f"({const.tolist()}) and the model is fitted on the other "
                                 f"{k}; got {self.n_components!r}")
        return int(q)

    def _finish(self, data: FitData, obj, result):
        M = self._rotated(data, obj, super()._finish(data, obj, result))
        if "constant" not in data.derived:
            return M
        # back to all features: ψ at the floor, the constants' likelihood terms added
        const, _, var_c = data.derived["constant"]
        psi = np.full(self.n_features_in_, self.noise_floor)
        psi[np.setdiff1d(np.arange(self.n_features_in_), const)] = self.noise_variance_
        self.noise_variance_ = psi
        self.log_likelihood_ = float(self.log_likelihood_ + np.sum(
            -0.5 * (np.log(2 * np.pi * self.noise_floor) + var_c / self.noise_floor)))
        return M

    def _rotated(self, data: FitData, obj, M):
        """The point with its loadings rotated by ``rotation`` (the class docstring): R from
        the orthomax criterion of the loadings over all features (a constant feature's row is
        zero), columns by decreasing sum of squares, the largest entry of each positive."""
        if self.rotation is None or M[0].shape[1] < 2:
            return M
        W = obj.unpack(M)[0]
        loadings = W if data.basis is None else data.basis @ W
        rotated, R = orthomax(loadings, ORTHOMAX_GAMMA[self.rotation])
        order = np.argsort(-np.sum(rotated**2, axis=0), kind="stable")
        R = R[:, order]
        rotated = rotated[:, order]
        rows = np.argmax(np.abs(rotated), axis=0)
        signs = np.sign(rotated[rows, np.arange(rotated.shape[1])])
        R = R * np.where(signs == 0, 1.0, signs)
        # W → WR in the objective's units too (they scale W's rows, R acts on its columns)
        return (M[0] @ R, *M[1:])
