"""Seeded data generators from the papers, and the bundled datasets the CLI runs on.

Nothing here downloads anything: bundled data come from scikit-learn's package.
"""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError

BUNDLED = ("iris", "wine", "breast_cancer", "digits")


def random_covariance_factor(d: int, mean_scale: float, rng: np.random.Generator) -> np.ndarray:
    """K = Q diag(e) with Q uniformly random (Haar) orthogonal and e_i ~ Exponential(mean).

    The covariance K Kᵀ = Q diag(e²) Qᵀ has uniformly random orientation.  (The survey's MATLAB
    code writes diag(e)·Q, whose covariance diag(e²) is axis-aligned; the text asks for
    random orientation, which is what this draws.)
    """
    e = rng.exponential(mean_scale, size=d)
    if d == 1:
        return e.reshape(1, 1)
    from scipy.stats import special_ortho_group  # scipy.stats costs 0.3-1.6 s to import

    Q = special_ortho_group.rvs(d, random_state=rng)
    return Q * e


def make_lda(d: int, r: int = 2, n_per_class: int = 1000, n_classes: int | None = None,
             eccentricity: float = 5.0, seed=None, mean_std: float | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    """The survey's LDA data (§4.2): ``n_classes`` Gaussian classes in d dimensions.

    Each class has a random mean (normal with standard deviation ``mean_std``, default 5/d as
    in §4.2; the survey's Figure 1 uses 5/2) and a random covariance
    (uniformly random orientation, exponentially distributed scales with mean
    ``eccentricity``).  ``n_classes`` defaults to r + 1, as in the survey's code.

    Returns ``X`` (n_classes·n_per_class, d) and integer labels ``y``.
    """
    rng = np.random.default_rng(seed)
    c = r + 1 if n_classes is None else int(n_classes)
    if c < 2 or d < 1 or n_per_class < 1:
        raise ValueError(f"make_lda: need n_classes >= 2, d >= 1, n_per_class >= 1; got "
                         f"n_classes={c}, d={d}, n_per_class={n_per_class}")
    blocks = []
    for _ in range(c):
        K = random_covariance_factor(d, eccentricity, rng)
        mean = (5.0 / d if mean_std is None else mean_std) * rng.standard_normal(d)
        blocks.append(rng.standard_normal((n_per_class, d)) @ K.T + mean)
    X = np.vstack(blocks)
    y = np.repeat(np.arange(c), n_per_class)
    return X, y


def make_pca(n: int, d: int, eccentricity: float = 2.0, seed=None) -> np.ndarray:
    """The survey's PCA data (§4.2): n normal samples with a random covariance
    (random orientation, exponentially distributed scales with mean ``eccentricity``)."""
    rng = np.random.default_rng(seed)
    K = random_covariance_factor(d, eccentricity, rng)
    return rng.standard_normal((n, d)) @ K.T


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A dataset bundled with scikit-learn, standardized per feature: ``(X, y)``."""
    from sklearn import datasets as _skd  # scikit-learn and pandas: only when data are loaded

    loaders = {"iris": _skd.load_iris, "wine": _skd.load_wine,
               "breast_cancer": _skd.load_breast_cancer, "digits": _skd.load_digits}
    if name not in loaders:
        raise ParameterError("dataset", f"unknown name {name!r}; choose one of {BUNDLED}")
    X, y = loaders[name](return_X_y=True)
    sd = X.std(axis=0)
    keep = sd > 0
    X = (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]
    return X, y


def make_moons4d(n: int = 400, noise_dims: int = 0, noise: float = 0.05, seed=None,
                 intertwined: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """KDAC's four-dimensional moon data (alternative-clustering paper, Fig. 1).

    Dimensions 1–2 hold two parabolas (clustering A), dimensions 3–4 two Gaussian clusters
    (clustering B); the two labelings are drawn independently, so a point's parabola says
    nothing about its Gaussian cluster.  ``noise_dims`` appends uniform noise dimensions on
    [−1, 1] (the paper's MoonN has three).

    ``intertwined=True`` draws the paper's "intertwining parabolas": the cup y = t² and the
    cap y = 1.5 − t² shifted right by 1, whose arms reach into each other as two moons do, so
    no line separates them.  The default (False, as in earlier versions) draws the cap
    y = −t² instead, which the line y = 0 separates.  Either way the curves never come
    closer than 0.5 vertically where they overlap.

    Returns ``X`` (n, 4 + noise_dims), ``labels_parabola`` and ``labels_gaussian``.
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, size=n)
    b = rng.integers(0, 2, size=n)
    t = rng.uniform(-1.0, 1.0, size=n)
    # parabola 0: the cup y = t²; parabola 1: a cap shifted right by 1, y = 1.5 − t²
    # (intertwined: the cup's right arm reaches into the cap) or y = −t² (below y = 0)
    x1 = np.where(a == 0, t, t + 1.0)
    x2 = np.where(a == 0, t**2, (1.5 if intertwined else 0.0) - t**2)
    parab = np.column_stack([x1, x2]) + noise * rng.standard_normal((n, 2))
    centers = np.array([[-1.0, -1.0], [1.0, 1.0]])
    gauss = centers[b] + 0.25 * rng.standard_normal((n, 2))
    parts = [parab, gauss]
    if noise_dims:
        parts.append(rng.uniform(-1.0, 1.0, size=(n, int(noise_dims))))
    return np.column_stack(parts), a, b


def make_gaussian_clusters(n_per_cluster: int = 100, spread: float = 3.0, std: float = 0.5,
                           noise_dims: int = 0, seed=None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Four Gaussian clusters on a 2×2 grid in two dimensions (KDAC's "Gaussian" data).

    The grid admits two alternative 2-clusterings: by the first coordinate
    (``labels_x``) and by the second (``labels_y``).  ``noise_dims`` appends uniform noise.

    Returns ``X`` (4·n_per_cluster, 2 + noise_dims), ``labels_x``, ``labels_y``.
    """
    rng = np.random.default_rng(seed)
    cells = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    idx = np.repeat(np.arange(4), n_per_cluster)
    X = spread * cells[idx] + std * rng.standard_normal((idx.size, 2))
    if noise_dims:
        X = np.column_stack([X, rng.uniform(-spread, spread, size=(idx.size, int(noise_dims)))])
    return X, cells[idx, 0], cells[idx, 1]


def make_rotated_gaussian_clusters(n: int = 1000, spread: float = 3.0, std: float = 0.5,
                                   angle: float = 45.0, seed=None
                                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """KDAC's "Large Gaussian" data (alternative-clustering paper, §4): four Gaussian clusters
    in four dimensions, "rotated by 45 degrees to reside in 3D", the fourth dimension uniform
    noise.

    The four clusters (n/4 samples each, isotropic, standard deviation ``std`` in all three
    dimensions) sit on a 2×2 grid of side ``spread`` in the plane of the first two axes; the
    grid is then rotated by ``angle`` degrees about the first axis, so its plane is spanned by
    e₁ and (0, cos angle, sin angle).  The fourth column is uniform on [−spread, spread].  The
    two alternative 2-clusterings are the grid's columns (``labels_a``, first coordinate) and
    rows (``labels_b``).  The paper's text says 1000 samples (its Appendix L lists 200 for
    the experiment); it gives no scales, so ``spread`` and ``std`` are those of
    :func:`make_gaussian_clusters`.

    Returns ``X`` (n, 4), ``labels_a``, ``labels_b``.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 4 and n % 4 == 0):
        raise ParameterError("n", f"must be a positive multiple of 4 (four equal clusters), "
                                  f"got {n!r}")
    rng = np.random.default_rng(seed)
    cells = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    idx = np.repeat(np.arange(4), n // 4)
    plane = np.column_stack([spread * cells[idx], np.zeros(n)])
    a = np.deg2rad(angle)
    rotation = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(a), -np.sin(a)],
                         [0.0, np.sin(a), np.cos(a)]])
    points = plane @ rotation.T + std * rng.standard_normal((n, 3))
    X = np.column_stack([points, rng.uniform(-spread, spread, size=n)])
    return X, cells[idx, 0], cells[idx, 1]


def make_wda(n: int = 1000, noise: float = 0.2, noise_dims: int = 8, seed=None
             ) -> tuple[np.ndarray, np.ndarray]:
    """The 3-class data of POT's WDA example: classes on concentric circles of radius 1, 2, 3
    (Gaussian noise ``noise`` in those two dimensions) plus ``noise_dims`` standard normal
    noise dimensions.  Returns ``X`` (n, 2 + noise_dims) and labels ``y`` in {0, 1, 2}.
    """
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 2.0 * np.pi, size=n)
    y = np.floor(np.arange(n) * 3.0 / n).astype(int)
    radius = (y + 1.0)[:, None]
    circles = radius * np.column_stack([np.cos(t), np.sin(t)]) + noise * rng.standard_normal((n, 2))
    X = np.column_stack([circles, rng.standard_normal((n, int(noise_dims)))])
    perm = rng.permutation(n)
    return X[perm], y[perm]


def make_maf(n: int, d: int, n_signals: int | None = None, noise: float = 1.0, seed=None
             ) -> np.ndarray:
    """The survey's MAF data (§4.2): smooth random signals, mixed linearly, plus noise.

    Rows are time-ordered samples t = 1, …, n.  Each of ``n_signals`` latent signals is a
    piecewise-cubic interpolant through four knots: the two ends of the domain (t = 0 and
    t = n + 1) and two distinct random interior times, uniform on {1, …, n}, with standard
    normal values.  The remaining d − n_signals latent coordinates are 0.01·N(0, 1) noise.
    With entries of A and B uniform on [0, d^{−1/2}] and E standard normal,

        X = S Aᵀ + noise · E Bᵀ,   then centered per feature.

    The survey's text asks for "cubic splines with four randomly located knots (uniformly
    distributed in the domain, standard normally distributed in range)" and d signals; the
    details (ends of the domain as knots, shape-preserving cubic interpolation — scipy's
    ``PchipInterpolator``, MATLAB's ``pchip`` —, noise mixed by a second random matrix, n = 10d
    in the paper's runs) follow the survey's code (cunni/ldr ``test/test_maf.m``).

    Returns ``X`` of shape (n, d); the row order is the time order.
    """
    from scipy.interpolate import PchipInterpolator

    k = d if n_signals is None else n_signals
    for name, value, low in [("n", n, 2), ("d", d, 1), ("n_signals", k, 0)]:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"make_maf: {name} must be an integer >= {low}, got {value!r}")
    if k > d:
        raise ValueError(f"make_maf: n_signals must be <= d = {d}, got {k}")
    if not (isinstance(noise, (int, float)) and np.isfinite(noise) and noise >= 0):
        raise ValueError(f"make_maf: noise must be a finite number >= 0, got {noise!r}")
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1, dtype=float)
    S = np.empty((n, d))
    for j in range(k):
        inner = np.sort(rng.choice(n, size=2, replace=False) + 1.0)
        knots = np.concatenate([[0.0], inner, [n + 1.0]])
        S[:, j] = PchipInterpolator(knots, rng.standard_normal(4))(t)
    S[:, k:] = 0.01 * rng.standard_normal((n, d - k))
    scale = 1.0 / np.sqrt(d)
    A = rng.uniform(0.0, scale, size=(d, d))
    B = rng.uniform(0.0, scale, size=(d, d))
    X = S @ A.T + noise * (rng.standard_normal((n, d)) @ B.T)
    return X - X.mean(axis=0)


def make_cca(n: int, d: int, noise: float = 1.0, seed=None, *, latent_dim: int | None = None,
             d_b: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The survey's CCA data (§4.2): two views of one latent data set.

    Z (n × ⌈d/2⌉ by default) has iid standard normal entries; ``Xa = Z A_aᵀ + noise·E_a`` and
    ``Xb = Z A_bᵀ + noise·E_b`` with independent random linear maps A_a (d × ⌈d/2⌉), A_b
    (d_b × ⌈d/2⌉) of iid standard normal entries ("the random linear transformation had the
    same distribution") and iid standard normal noise E_a, E_b.  Each coordinate then has
    signal variance ⌈d/2⌉ against noise variance ``noise²``; the default ``noise = 1.0``
    keeps the covariances well conditioned and the canonical correlations distinct (the
    survey gives no level; its code adds a tiny correlated noise, 2e-4 · U·E, which leaves
    Σ_a nearly singular and the top canonical correlations all ≈ 1).

    Returns ``Xa`` (n, d) and ``Xb`` (n, d_b), with ``d_b = d`` by default.
    """
    rng = np.random.default_rng(seed)
    d_b = d if d_b is None else int(d_b)
    k = -(-int(d) // 2) if latent_dim is None else int(latent_dim)
    if n < 2 or d < 1 or d_b < 1 or k < 1 or not noise >= 0:
        raise ValueError(f"make_cca: need n >= 2, d >= 1, d_b >= 1, latent_dim >= 1 and "
                         f"noise >= 0; got n={n}, d={d}, d_b={d_b}, latent_dim={k}, "
                         f"noise={noise}")
    Z = rng.standard_normal((n, k))
    Xa = Z @ rng.standard_normal((d, k)).T + noise * rng.standard_normal((n, d))
    Xb = Z @ rng.standard_normal((d_b, k)).T + noise * rng.standard_normal((n, d_b))
    return Xa, Xb


def make_uica(n: int, d: int, r: int, noise_std: float = 1.5, source_std=(0.5, 2.0),
              sources: str = "laplace", sensor_noise: float = 0.0, seed=None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r independent non-Gaussian sources and d − r Gaussian components, mixed into d dims.

    The latents L (n × d) are the r sources (unit
    variance: Laplace for ``sources="laplace"``, super-Gaussian; uniform for ``"uniform"``,
    sub-Gaussian; ``"mixed"``: Laplace for the sources of even index 0, 2, …, uniform for the
    odd ones, so both kinds span the range of standard deviations) followed by d − r
    standard normal components.  The latent mixing
    ``A = N diag(σ)`` has columns of random direction (N with iid normal entries, columns
    scaled to unit norm, so not orthogonal) and standard deviations σ: the sources' spread
    evenly over ``source_std`` = (low, high), the Gaussian components' ``noise_std`` — by
    default 1.5, above the weaker sources' (0.5, 1.0 for r = 4) and below the stronger ones',
    so the r largest-variance directions (PCA's) hold the strong sources and noise, not the
    weak sources.  ``X = L Aᵀ + sensor_noise · E`` (E standard normal, isotropic; 0 by default).

    The Gaussian part lies in its own directions (A is invertible), as in the model the
    undercomplete ICA likelihood assumes (:mod:`ldr.objectives.ica`): after whitening, the
    noise occupies the orthogonal complement of the sources, so the sources are identifiable
    however weak they are.  Isotropic noise larger than a source would leave no direction in
    which that source dominates and no method could recover it; ``sensor_noise`` adds a
    small amount of it.

    Returns ``X`` (n, d), the sources ``S`` (n, r, unit variance) and the latent mixing
    ``A`` (d, d) with unit-variance latents: ``X = [S, G] @ A.T`` (+ sensor noise).  The
    ideal unmixing W (r × d) has ``W @ A = [diag(·), 0]`` (see
    :func:`ldr.objectives.ica.amari_distance`).
    """
    if not (isinstance(n, (int, np.integer)) and isinstance(d, (int, np.integer))
            and isinstance(r, (int, np.integer)) and n >= 2 and 1 <= r < d):
        raise ValueError(f"make_uica: need integers n >= 2 and 1 <= r < d, got n={n!r}, "
                         f"d={d!r}, r={r!r}")
    if sources not in ("laplace", "uniform", "mixed"):
        raise ValueError(f"make_uica: sources must be 'laplace', 'uniform' or 'mixed', got "
                         f"{sources!r}")
    if not (noise_std > 0 and sensor_noise >= 0 and 0 < source_std[0] <= source_std[1]):
        raise ValueError("make_uica: need noise_std > 0, sensor_noise >= 0 and "
                         f"0 < source_std[0] <= source_std[1]; got {noise_std!r}, "
                         f"{sensor_noise!r}, {source_std!r}")
    rng = np.random.default_rng(seed)
    if sources != "uniform":
        S = rng.laplace(scale=1.0 / np.sqrt(2.0), size=(n, r))
    if sources != "laplace":
        uniform = rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size=(n, r))
        S = uniform if sources == "uniform" else np.where(np.arange(r) % 2 == 0, S, uniform)
    L = np.hstack([S, rng.standard_normal((n, d - r))])
    N = rng.standard_normal((d, d))
    N /= np.linalg.norm(N, axis=0)
    sigma = np.concatenate([np.linspace(source_std[0], source_std[1], r),
                            np.full(d - r, float(noise_std))])
    A = N * sigma
    X = L @ A.T + sensor_noise * rng.standard_normal((n, d))
    return X, S, A
