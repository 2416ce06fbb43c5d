"""Seeded data generators from the papers, and the bundled datasets the CLI runs on.

Nothing here downloads anything: bundled data come from scikit-learn's package.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import special_ortho_group
from sklearn import datasets as _skd

BUNDLED = ("iris", "wine", "breast_cancer", "digits")


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def random_covariance_factor(d: int, mean_scale: float, rng: np.random.Generator) -> np.ndarray:
    """K = Q diag(e) with Q uniformly random (Haar) orthogonal and e_i ~ Exponential(mean).

    The covariance K Kᵀ = Q diag(e²) Qᵀ has uniformly random orientation.  (The survey's MATLAB
    code writes diag(e)·Q, whose covariance diag(e²) is axis-aligned; the text asks for
    random orientation, which is what this draws.)
    """
    e = rng.exponential(mean_scale, size=d)
    if d == 1:
        return e.reshape(1, 1)
    Q = special_ortho_group.rvs(d, random_state=rng)
    return Q * e


def make_lda(d: int, r: int = 2, n_per_class: int = 1000, n_classes: int | None = None,
             eccentricity: float = 5.0, seed=None) -> tuple[np.ndarray, np.ndarray]:
    """The survey's LDA data (§4.2): ``n_classes`` Gaussian classes in d dimensions.

    Each class has a random mean (normal with standard deviation 5/d) and a random covariance
    (uniformly random orientation, exponentially distributed scales with mean
    ``eccentricity``).  ``n_classes`` defaults to r + 1, as in the survey's code.

    Returns ``X`` (n_classes·n_per_class, d) and integer labels ``y``.
    """
    rng = _rng(seed)
    c = r + 1 if n_classes is None else int(n_classes)
    if c < 2 or d < 1 or n_per_class < 1:
        raise ValueError(f"make_lda: need n_classes >= 2, d >= 1, n_per_class >= 1; got "
                         f"n_classes={c}, d={d}, n_per_class={n_per_class}")
    blocks = []
    for _ in range(c):
        K = random_covariance_factor(d, eccentricity, rng)
        mean = (5.0 / d) * rng.standard_normal(d)
        blocks.append(rng.standard_normal((n_per_class, d)) @ K.T + mean)
    X = np.vstack(blocks)
    y = np.repeat(np.arange(c), n_per_class)
    return X, y


def make_pca(n: int, d: int, eccentricity: float = 2.0, seed=None) -> np.ndarray:
    """The survey's PCA data (§4.2): n normal samples with a random covariance
    (random orientation, exponentially distributed scales with mean ``eccentricity``)."""
    rng = _rng(seed)
    K = random_covariance_factor(d, eccentricity, rng)
    return rng.standard_normal((n, d)) @ K.T


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A dataset bundled with scikit-learn, standardized per feature: ``(X, y)``."""
    loaders = {"iris": _skd.load_iris, "wine": _skd.load_wine,
               "breast_cancer": _skd.load_breast_cancer, "digits": _skd.load_digits}
    if name not in loaders:
        raise ValueError(f"dataset: unknown name {name!r}; choose one of {BUNDLED}")
    X, y = loaders[name](return_X_y=True)
    sd = X.std(axis=0)
    keep = sd > 0
    X = (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]
    return X, y
