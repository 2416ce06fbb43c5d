"""The sealed held-out set: seeded generator tables on which no default of ldr was chosen.

A default is chosen on named development tables (``_tables.DEVELOPMENT`` and the tables a
benchmark names as its own); its figures on unseen data come from this list only.  The list
was fixed, and its hash recorded in ``results/held_out_hash.txt``, before any default was
measured on it; a benchmark that reports "held-out" figures prints :func:`digest` beside them,
and ``tests/test_held_out.py`` fails if the list changes without a new record.

Every table is built from its spec alone (scikit-learn's generators, seeded; nothing is
downloaded).  ``kind`` says what the table serves: "classes" for supervised methods (their
features for the unsupervised ones).  Shapes stay small enough for a k-NN evaluation by
5-fold cross-validation on one core, except the two ``fit-only`` tables (a fit must succeed
at the default, at that size and at those units).

Run ``python -P benchmarks/held_out.py`` to print the list and its hash.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

#: (name, generator, keywords); the generators are scikit-learn's ``make_*`` functions, or
#: "blobs-anisotropic" (make_blobs times a seeded random matrix) and "digits-pixels"
#: (scikit-learn's digits on the 0–255 scale of raw pixels)
SPECS = [
    ("classification-a", "make_classification",
     {"n_samples": 1500, "n_features": 20, "n_informative": 6, "n_redundant": 4,
      "n_classes": 4, "random_state": 11}),
    ("classification-b", "make_classification",
     {"n_samples": 1500, "n_features": 20, "n_informative": 6, "n_redundant": 4,
      "n_classes": 4, "random_state": 12}),
    ("classification-c", "make_classification",
     {"n_samples": 3000, "n_features": 40, "n_informative": 10, "n_redundant": 10,
      "n_classes": 6, "class_sep": 0.8, "random_state": 21}),
    ("quantiles", "make_gaussian_quantiles",
     {"n_samples": 1200, "n_features": 6, "n_classes": 3, "random_state": 31}),
    ("blobs-anisotropic", "make_blobs",
     {"n_samples": 1500, "n_features": 10, "centers": 5, "random_state": 41}),
    ("classification-784", "make_classification",
     {"n_samples": 70000, "n_features": 784, "n_informative": 80, "n_redundant": 100,
      "n_classes": 10, "random_state": 51, "fit-only": True}),
    ("digits-pixels", "digits-pixels", {"fit-only": True}),
]


def digest() -> str:
    """The SHA-256 of the list (its JSON, keys sorted): what ``held_out_hash.txt`` records."""
    text = json.dumps(SPECS, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def names(*, fit_only: bool | None = None) -> list[str]:
    return [name for name, _, kw in SPECS
            if fit_only is None or bool(kw.get("fit-only")) == fit_only]


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The table ``name``: (X, y)."""
    from sklearn import datasets

    spec = {n: (g, kw) for n, g, kw in SPECS}
    generator, kw = spec[name]
    kw = {k: v for k, v in kw.items() if k != "fit-only"}
    if generator == "digits-pixels":
        X, y = datasets.load_digits(return_X_y=True)
        return np.round(X * (255.0 / 16.0)), y
    if generator == "make_blobs":
        X, y = datasets.make_blobs(**kw)
        rng = np.random.default_rng(kw["random_state"])
        return X @ rng.standard_normal((X.shape[1], X.shape[1])), y
    return getattr(datasets, generator)(**kw)


if __name__ == "__main__":
    for name, generator, kw in SPECS:
        print(f"{name:22s} {generator:26s} {kw}")
    print(f"sha256 {digest()}")
