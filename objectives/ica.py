"""Undercomplete independent component analysis (survey §3.2.1, Eq. 21; Table 1, UICA row).

The data are whitened first (the survey's "implementation detail"): with the biased sample
covariance ``C = Q diag(w) Qᵀ``, ``K = Q_k diag(w_k)^{-1/2}`` over the k non-null eigenvalues
(all of them for data of full rank), ``z = (x − mean) K`` has identity covariance.  On the
whitened rows z_i, with the columns m_k of an unconstrained M ∈ R^{k×r} ("euclidean"), the cost
is the negative of the survey's Eq. 21 (its Table 1 row),

    f(M) = −½ log|MᵀM| − (1/n) Σ_i Σ_k log p_k(m_kᵀ z_i)                     (Eq. 21)

with normalized source priors p_k ("experts"):

* ``"supergaussian"``: p(y) = 1/(π cosh y) (the hyperbolic secant density, scipy's
  ``hypsecant``; log p = −log cosh y − log π, the "log-cosh" prior of infomax and FastICA);
* ``"subgaussian"``: p(y) = ½[N(y; 1, 1) + N(y; −1, 1)], the Gaussian mixture at ±1 that
  extended infomax (Lee, Girolami & Sejnowski 1999) uses for sub-Gaussian sources;
  log p = log cosh y − y²/2 − ½ − ½ log 2π.

**Choosing the priors from the data** (``prior="auto"``).  One prior for every source loses
the sources of the other kind (a super-Gaussian prior is not a stable fixed point for a
sub-Gaussian source, and conversely: Lee et al. 1999).  "auto" gives each source its own
prior: at construction, the sign of the FOBI kurtosis of the r directions of
largest absolute kurtosis (the start's directions, below); then
:meth:`UndercompleteICA.preferred_priors` evaluates extended infomax's switching statistic
on each source y = Z m,

    k = E[sech² y] E[y²] − E[y tanh y]      (> 0: super-Gaussian, < 0: sub-Gaussian),

the condition under which each of the two densities is a stable fixed point for a source
(Lee et al. 1999).  The estimator (:class:`ldr.estimators.UndercompleteICA`)
evaluates it at the start — before a column can drift away from its source under the wrong
prior — and after each solve, and refits with the priors preferred until they no longer
change.  The kurtosis can mislead where the statistic does not: a bimodal source with a few
outliers has a large excess kurtosis yet needs the sub-Gaussian prior.

**What the formula is**: for r = k it is the exact
negative mean log-likelihood of square ICA, z = M^{-T}s.  For r < k, complete M with an
orthonormal basis M⊥ of span(M)^⊥ and give those k − r components standard normal priors;
``|det[M, M⊥]| = |MᵀM|^{1/2}``, and on whitened data the Gaussian components' mean log-density is
the constant −(k − r)(1 + log 2π)/2 whatever M is, so

    f(M) = −(1/n) Σ_i log p(z_i | r sources with priors p_k, k − r Gaussian components)
           − (k − r)(1 + log 2π)/2.

The survey's cost is the likelihood of "r non-Gaussian sources plus Gaussian noise in the
remaining (whitened) directions" — it needs no PCA step and is why whitening comes first.
A Gaussian direction scores the Gaussian cross-entropy, a source matching its prior scores
less, so minimizing picks the non-Gaussian directions whatever their variance; reducing by
PCA first keeps the r largest-variance directions instead, which may be the noise.

With Y = Z M, g_k = log p_k, K_M = (MᵀM)⁻¹:

* gradient  ∇f(M) = −M K_M − (1/n) Zᵀ g′(Y)
* Hessian   D∇f(M)[V] = −V K_M + M K_M (VᵀM + MᵀV) K_M − (1/n) Zᵀ (g″(Y) ⊙ (Z V))

with g′ = −tanh y, g″ = tanh² y − 1 (super-Gaussian) and g′ = tanh y − y, g″ = −tanh² y
(sub-Gaussian).

**Start** (``heuristic``): FOBI (Cardoso 1989), the eigenvectors of the fourth-moment matrix
``(1/n) Σ ‖z_i‖² z_i z_iᵀ − (k + 2) I``: on whitened data from the model it equals
``Σ_j κ_j a_j a_jᵀ`` (κ_j the excess kurtosis of component j, a_j its whitened direction;
Gaussian components have κ = 0), so the eigenvectors of its largest eigenvalues point at
super-Gaussian sources and those of its smallest at sub-Gaussian ones.  Deterministic, and
exact when the kurtoses differ; the likelihood then refines it.

**Preconditioner** (:meth:`UndercompleteICA.preconditioner_at`): the trust region's inner CG
is preconditioned with Picard's approximation of the Hessian (Ablin, Cardoso & Gramfort
2018), extended to r < k (Eq. P1 there).

Default solver: ``"trust-region"``: the cost has a hand-written Hessian, and from the FOBI
start the gradient, conjugate-gradient and trust-region solvers reach the same cost; the
trust region, second order and preconditioned, in the fewest iterations and the least time
(the measurements are on the documentation's ICA benchmark page).

References
----------
Cardoso (1989), Source separation using higher order moments, ICASSP.  Lee, Girolami &
Sejnowski (1999), Independent component analysis using an extended infomax algorithm for
mixed subgaussian and supergaussian sources, Neural Computation 11(2).  Ablin, Cardoso &
Gramfort (2018), Faster independent component analysis by preconditioning with Hessian
approximations, IEEE Trans. Signal Processing 66(15).
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
import scipy.linalg
import scipy.optimize

from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective
from ldr.data import arrays
from ldr.data.validation import check_data
from ldr.objectives.ica_priors import (
    HALF_LOG_2PI_E,
    LOG_PI,
    best_scales,
    check_priors,
    prior_derivatives,
    switching_statistic,
)

__all__ = ["UndercompleteICA", "amari_distance", "source_correlations"]

#: the most entries (r·k²) of the per-column Hessian blocks that ``ehvp_at`` forms (32 MiB)
_HVP_BLOCK_ENTRIES = 2**22


class UndercompleteICA(Objective):
    """Undercomplete ICA: minimize −½ log|MᵀM| − (1/n) Σ_i Σ_k log p_k(m_kᵀz_i) (Eq. 21).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Data as rows (centered and whitened on a copy; ``X`` is not modified).
    r : int or None
        Number of sources, 1 ≤ r ≤ k, the rank of the covariance (r = k = n_features is
        square ICA); None: k.
    prior : {"supergaussian", "subgaussian", "auto"} or sequence of r of them
        The source prior(s) (module docstring): one for every source, or one per column of
        M; "auto": one per source, by the sign of the FOBI kurtosis of the start's r
        directions (module docstring; the estimator re-evaluates them after each solve).

    Attributes
    ----------
    mean_ : (n_features,) sample mean
    whitening_ : (n_features, k) the whitening map K: ``z = (x − ``mean_``) @ whitening_``
    Z : (n_samples, k) the whitened training rows
    priors : tuple of the r prior names

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X, S, A = ldr.datasets.make_uica(2000, 6, 2, seed=0)
    >>> obj = ldr.objectives.UndercompleteICA(X, 2)
    >>> res = ldr.solve(obj)
    >>> W = obj.unmixing(res.M)            # (r, d): sources ≈ (X − mean) @ W.T
    >>> bool(amari_distance(W, A) < 0.05)
    True

    Default solver: ``"trust-region"`` (module docstring).
    """

    method = Method("uica", "undercomplete ICA, whitened likelihood with log-cosh priors on "
                    "R^{d×r}")

    manifold = "euclidean"
    default_solver = "trust-region"

    def __init__(self, X, r: int | None, prior="supergaussian"):
        dtype = getattr(X, "dtype", None)  # the rank is read at the data's own precision:
        floating = dtype is not None and np.issubdtype(dtype, np.floating)  # float32's
        eps = np.finfo(dtype if floating else float).eps  # rounding is not a direction
        X = check_data(X, "X", min_samples=2)
        n, d = X.shape
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        # whiten from the correlation, not the covariance, so that a feature's units cannot
        # push a real direction below the rank threshold: columns constant to rounding are
        # dropped, the others scaled to unit variance, and the rank read off the singular
        # values of the scaled data (no squared condition number); the scaling is folded
        # back into the whitening map, which is defined up to a rotation anyway
        sd = Xc.std(axis=0)
        varies = sd > 16 * eps * np.max(np.abs(X), axis=0, initial=0.0)
        _, sv, Vt = scipy.linalg.svd(Xc[:, varies] / (sd[varies] * np.sqrt(n)),
                                     full_matrices=False)
        keep = sv > max(n, d) * eps * (sv[0] if sv.size else 0.0)
        k = int(keep.sum())
        r = k if r is None else r
        if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 1 <= r <= k:
            raise ParameterError("r",
                f"the number of sources must be an integer with 1 <= r <= {k} (the rank "
                f"of the covariance of X{'' if k == d else f', below its {d} features'}), "
                f"got {r!r}")
        Q = Vt[keep].T
        Q = Q * np.sign(Q[np.argmax(np.abs(Q), axis=0), np.arange(k)])
        self.whitening_ = np.zeros((d, k))
        self.whitening_[varies] = Q / (sd[varies, None] * sv[keep])
        self.Z = Xc @ self.whitening_
        self.n_samples_ = n
        self.shape = (k, int(r))
        if isinstance(prior, str) and prior == "auto":
            w = self._fobi_eigh()[0]
            top = w[np.argsort(-np.abs(w))[:int(r)]]   # the start's directions' kurtoses
            prior = tuple("subgaussian" if v < 0 else "supergaussian" for v in top)
        self.priors = check_priors(prior, int(r))
        self._sub = np.array([p == "subgaussian" for p in self.priors])

    # --- cost and derivatives -----------------------------------------------------------
    def cost(self, M):
        # Σ_k log p_k over all columns at once: ± log cosh by column, −y²/2 on the
        # sub-Gaussian ones, and the constants (autograd.numpy where M is traced)
        xp = arrays.namespace(M)
        Y = self.Z @ M
        _, logdet = xp.linalg.slogdet(M.T @ M)
        sign = np.where(self._sub, 1.0, -1.0)
        a = xp.abs(Y)
        e = xp.exp(-2.0 * a)
        log_cosh = a + xp.log1p(e) - np.log(2.0)  # ica_priors.log_cosh's arithmetic
        if not arrays.traced(M):  # a value: keep e^{−2|y|}, tanh's ingredient (_at)
            self._point = {"M": M.copy(), "Y": Y, "e": e}
        total = (xp.sum(log_cosh * sign) - 0.5 * xp.sum(Y * Y * self._sub)
                 - self.n_samples_ * np.sum(np.where(self._sub, HALF_LOG_2PI_E, LOG_PI)))
        return -0.5 * logdet - total / self.n_samples_

    def _at(self, M) -> tuple[np.ndarray, np.ndarray]:
        """(Y, tanh Y) with Y = ZM, for the gradient, the Hessian's products and the
        preconditioner at one iterate: from the cost's e = e^{−2|y|} at the same M when
        it was the last point costed (tanh |y| = (1 − e)/(1 + e), to a few ulps of
        np.tanh), else computed, and kept for the next oracle at M."""
        point = getattr(self, "_point", None)
        if point is not None and point["M"].shape == M.shape and np.array_equal(point["M"], M):
            if "t" not in point:
                e = point.pop("e")
                point["t"] = np.copysign((1.0 - e) / (1.0 + e), point["Y"])
            return point["Y"], point["t"]
        Y = self.Z @ M
        self._point = {"M": M.copy(), "Y": Y, "t": np.tanh(Y)}
        return Y, self._point["t"]

    def _g2_at(self, M) -> tuple[np.ndarray, np.ndarray]:
        """(Y, g″(Y)) at M, g″ kept with ``_at``'s point (the Hessian's products and the
        preconditioner at one iterate)."""
        Y, t = self._at(M)
        if "g2" not in self._point:
            self._point["g2"] = prior_derivatives(Y, self._sub, t=t)[1]
        return Y, self._point["g2"]

    def egrad(self, M):
        M = np.asarray(M, float)
        Y, t = self._at(M)
        g1, _ = prior_derivatives(Y, self._sub, second=False, t=t)
        return -np.linalg.solve(M.T @ M, M.T).T - self.Z.T @ g1 / self.n_samples_

    def ehvp(self, M, V):
        return self.ehvp_at(M)(V)

    def ehvp_at(self, M):
        """``V ↦ ehvp(M, V)``: (MᵀM)⁻¹ and g″(ZM) computed once for the many products of one
        inner solve.

        The data term's product, column j of Zᵀ(g″ ⊙ ZV), is A_j v_j with the k×k matrix
        A_j = Zᵀ diag(g″_j) Z: two n×k×r products per call (4nkr flops) directly, r k² once
        the A_j are formed (r n k² flops), which pays once an inner solve has made more than
        k/4 products at one point (near convergence it makes many): after ``k/4`` of them at
        the same point the A_j are formed, where they fit ``_HVP_BLOCK_ENTRIES``; the products
        are the same to rounding."""
        M = np.asarray(M, float)
        Kinv = np.linalg.inv(M.T @ M)
        MK = M @ Kinv
        g2 = self._g2_at(M)[1] / self.n_samples_
        k, r = self.shape
        switch = k // 4 + 1 if r * k * k <= _HVP_BLOCK_ENTRIES else None
        blocks = None
        calls = 0

        def hvp(V):
            nonlocal blocks, calls
            V = np.asarray(V, float)
            logdet = -V @ Kinv + MK @ (V.T @ M + M.T @ V) @ Kinv
            calls += 1
            if blocks is None and switch is not None and calls > switch:
                blocks = self._hessian_blocks(g2)
            if blocks is not None:
                return logdet - np.matmul(blocks, V.T[:, :, None])[:, :, 0].T
            return logdet - self.Z.T @ (g2 * (self.Z @ V))
        return hvp

    def _hessian_blocks(self, g2: np.ndarray) -> np.ndarray:
        """The r blocks A_j = Zᵀ diag(g2_j) Z: one product g2ᵀ [z_a z_b]_{a≤b} with the
        rows' k(k+1)/2 distinct pair products (formed once per objective, where they fit
        ``_HVP_BLOCK_ENTRIES``; :meth:`release` drops them), else one product per column."""
        Z = self.Z
        n, k = Z.shape
        if n * k * (k + 1) // 2 > _HVP_BLOCK_ENTRIES:
            return np.stack([(Z * g2[:, j, None]).T @ Z for j in range(g2.shape[1])])
        a, b = np.triu_indices(k)
        if getattr(self, "_pairs", None) is None:
            self._pairs = Z[:, a] * Z[:, b]
        upper = g2.T @ self._pairs
        blocks = np.empty((g2.shape[1], k, k))
        blocks[:, a, b] = upper
        blocks[:, b, a] = upper
        return blocks

    def release(self) -> None:
        """Drop what the oracles keep between calls (the last point's ZM and tanh, the rows'
        pair products): a fitted estimator holds its objective."""
        self._point = self._pairs = None

    def preconditioner_at(self, M, floor: float = 1e-2):
        """``V ↦ P⁻¹V``, P Picard's approximation of the Hessian (Ablin, Cardoso & Gramfort
        2018) extended to r < k; the trust region preconditions its inner CG with it.

        With V = M E + N F (N an orthonormal basis of span(M)^⊥ in the whitened space) and
        the sources taken independent, h_k = E[−g″(y_k)], s_k = E[y_k²]: the Hessian's
        quadratic form is Σ_{l≠k} ½ h_k s_l E_lk² + E_lk E_kl, Σ_k ½ (E[−g″(y_k) y_k²] + 1)
        E_kk² and, for F, the Schur complement of N's pair in the completed square model
        (a Gaussian component, −g″ = 1, unit variance), Σ ½ (h_k − 1/s_k) ‖F_k‖²  (Eq. P1).
        Each 2×2 pair's smallest eigenvalue is lifted to ``floor`` (Picard's rule), so P is
        positive definite; P⁻¹V = M H̃⁻¹(MᵀV) + (V − M(MᵀM)⁻¹MᵀV) diag(1/c)."""
        M = np.asarray(M, float)
        Y, g2 = self._g2_at(M)                 # g2 = g″(Y) ≤ 0 (both priors), h = −E g″
        k, r = self.shape
        Y2 = Y * Y
        n = self.n_samples_
        h = -(g2.sum(axis=0) / n)
        s = Y2.sum(axis=0) / n
        diag = 1.0 - (g2 * Y2).sum(axis=0) / n
        A = s[:, None] * h[None, :]                            # A_lk = h_k s_l
        low = 0.5 * (A + A.T - np.sqrt((A - A.T) ** 2 + 4.0))
        A = A + np.maximum(floor - low, 0.0)
        det = A * A.T - 1.0
        np.fill_diagonal(det, 1.0)
        if r < k:
            hs = np.column_stack([h, s])
            low = 0.5 * (h + s - np.sqrt((h - s) ** 2 + 4.0))
            hs += np.maximum(floor - low, 0.0)[:, None]
            c = hs[:, 0] - 1.0 / hs[:, 1]
            MtM_inv = np.linalg.inv(M.T @ M)

        on_diag = np.diag_indices(r)

        def solve(V):
            V = np.asarray(V, float)
            G = M.T @ V
            E = (A.T * G - G.T) / det
            E[on_diag] = G[on_diag] / diag
            out = M @ E
            if r < k:
                out += (V - M @ (MtM_inv @ G)) / c
            return out
        return solve

    # --- start and mapping --------------------------------------------------------------
    def fobi_matrix(self) -> np.ndarray:
        """(1/n) Σ ‖z_i‖² z_i z_iᵀ − (k + 2) I (Σ_j κ_j a_j a_jᵀ under the model)."""
        Z = self.Z
        q = np.sum(Z * Z, axis=1)
        k = Z.shape[1]
        return (Z * q[:, None]).T @ Z / Z.shape[0] - (k + 2) * np.eye(k)

    def _fobi_eigh(self) -> tuple[np.ndarray, np.ndarray]:
        """The eigendecomposition of :meth:`fobi_matrix`, computed once (shared by copies
        with other priors)."""
        if getattr(self, "_fobi", None) is None:
            self._fobi = scipy.linalg.eigh(self.fobi_matrix())
        return self._fobi

    def heuristic(self) -> np.ndarray:
        """FOBI's start: eigenvectors of :meth:`fobi_matrix` with the largest eigenvalues for
        the super-Gaussian sources and the smallest for the sub-Gaussian ones (module
        docstring), each column scaled to the best scale of its prior along it."""
        k, r = self.shape
        _, E = self._fobi_eigh()
        n_sub = int(self._sub.sum())
        M = np.empty((k, r))
        M[:, ~self._sub] = E[:, ::-1][:, :r - n_sub]
        M[:, self._sub] = E[:, :n_sub]
        return M * best_scales(self.Z @ M, self._sub)

    def with_priors(self, prior) -> UndercompleteICA:
        """The same whitened data with other priors (no copy of the data)."""
        other = copy.copy(self)
        other._point = None  # its g″ is the priors' own
        other.priors = check_priors(prior, self.shape[1])
        other._sub = np.array([p == "subgaussian" for p in other.priors])
        return other

    def preferred_priors(self, M) -> tuple[str, ...]:
        """The prior each fitted source y = Z m_j prefers: by the sign of
        ``switching_statistic`` (module docstring)."""
        k = switching_statistic(self.Z @ np.asarray(M, float))
        return tuple("subgaussian" if v < 0 else "supergaussian" for v in k)

    def rescaled(self, M, columns=None) -> np.ndarray:
        """M with each column (of ``columns``, a boolean mask; all by default) scaled to the
        best scale of its prior along it, the others as they are (a start for a refit after
        the priors of ``columns`` changed)."""
        M = np.array(M, dtype=float)
        cols = np.ones(M.shape[1], bool) if columns is None else np.asarray(columns, bool)
        U = M[:, cols] / np.linalg.norm(M[:, cols], axis=0)
        M[:, cols] = U * best_scales(self.Z @ U, self._sub[cols])
        return M

    def unmixing(self, M) -> np.ndarray:
        """The r×d unmixing matrix W = (K M)ᵀ: sources = ``(X − mean_) @ W.T``."""
        return (self.whitening_ @ np.asarray(M, float)).T

    def linear_map(self, M):
        """The estimated sources: x ↦ (x − ``mean_``) K M, K the whitening."""
        return self.mean_, self.whitening_ @ M

    def log_likelihood(self, M, cost: float | None = None) -> float:
        """Mean log-likelihood per whitened sample of the completed model (module docstring):
        −cost(M) − (k − r)(1 + log 2π)/2 (``cost``: cost(M), where the caller has it)."""
        k, r = self.shape
        if cost is None:
            cost = self.cost(np.asarray(M, float))
        return -float(cost) - (k - r) * HALF_LOG_2PI_E


def amari_distance(W, A) -> float:
    """Amari distance of an r×d unmixing ``W`` to the true latent mixing ``A`` (d×m, m ≥ r).

    ``A``'s first r columns mix the r sources, its other m − r columns the Gaussian (or any
    unrecovered) components, every latent with unit variance (as ``make_uica`` returns it).
    P = W A (r×m) holds, in row i, the standard deviation each latent contributes to output i;
    a perfect unmixing has one nonzero per row, in a distinct source column.  With
    ``|p|`` entrywise::

        D = ½ [ (1/(r(m−1))) Σ_i (Σ_j |p_ij| / max_j |p_ij| − 1)           (leakage of any
                                                                             latent into row i)
              + (1/(r(r−1))) Σ_{j≤r} (Σ_i |p_ij| / max_i |p_ij| − 1) ]      (source j reaches
                                                                             one output only)

    in [0, 1]; for m = r it is the usual normalized Amari index (Amari, Cichocki & Yang 1996).
    The row term sees leakage of the Gaussian components too, which P restricted to the
    source columns alone would miss; a row made only of Gaussian components gives its
    sources' columns no maximum — that column term counts fully (r − 1).  For r = 1 the
    column term is 0.
    """
    P = np.abs(np.asarray(W, float) @ np.asarray(A, float))
    r, m = P.shape
    if not 1 <= r <= m:
        raise ValueError(f"W, A: need W of shape (r, d) and A of shape (d, m) with r <= m; "
                         f"got P = W A of shape {P.shape}")
    rows = P.max(axis=1)
    row_term = np.sum(np.where(rows > 0, P.sum(axis=1) / np.where(rows > 0, rows, 1) - 1,
                               m - 1)) / (r * max(m - 1, 1))
    if r == 1:
        return float(row_term if m > 1 else 0.0)
    S = P[:, :r]
    cols = S.max(axis=0)
    col_term = np.sum(np.where(cols > 0, S.sum(axis=0) / np.where(cols > 0, cols, 1) - 1,
                               r - 1)) / (r * (r - 1))
    return float(0.5 * (row_term + col_term))


def source_correlations(S_hat, S) -> np.ndarray:
    """``|corr|`` between each true source (columns of ``S``) and the estimate matched to it.

    The matching is the assignment maximizing the total ``|corr|`` (Hungarian algorithm,
    ``scipy.optimize.linear_sum_assignment``), so no estimate is counted for two sources.
    Returns one value per true source, in its order.
    """
    S_hat, S = np.asarray(S_hat, float), np.asarray(S, float)
    r = S.shape[1]
    C = np.abs(np.corrcoef(S.T, S_hat.T)[:r, r:])
    rows, cols = scipy.optimize.linear_sum_assignment(-C)
    out = np.zeros(r)
    out[rows] = C[rows, cols]
    return out
