"""WDA's class rows in bounded memory (issue 25): the rows split by class and centred, and
the FDA scatters S_w, S_b, with no temporary copy of the whole data.

At 52 500 × 784 (MNIST's size, 330 MB) the former path held about seven arrays of the data's
size at once: a validated copy, the centred copy, the classes' rows, and within
``scatter_matrices`` (:func:`ldr.data.statistics.chunk_moments`) a validated copy, the
shifted rows, the centred rows, the class offsets per row and the within-class residuals.
Here the classes' rows (fancy indexing: one copy, centred in place) are the only array of
that size; the scatters are one pass over row chunks of about ``CHUNK_BYTES`` each
(:func:`ldr.data.statistics.chunk_moments`, merged as they come: a chunk's temporaries).
"""

from __future__ import annotations

import numpy as np

from ldr.data.statistics import chunk_moments, merge
from ldr.objectives.lda import scatter_matrices

#: bytes of one row chunk of the scatters' pass (:func:`class_scatters`)
CHUNK_BYTES = 16 * 2**20


def class_scatters(X: np.ndarray, codes: np.ndarray, n_classes: int, mean=None,
                   chunk_bytes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``scatter_matrices(X − mean, codes, n_classes)[:2]`` (mean: X's column means when
    None): (S_w, S_b) divided by n — once X is larger than ``chunk_bytes`` (default
    :data:`CHUNK_BYTES`) by chunks of rows whose moments are merged as they come (the same
    statistics to rounding), so that no array of X's size is made."""
    mean = X.mean(axis=0) if mean is None else mean
    chunk_bytes = CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    rows = max(2, int(chunk_bytes // (8 * max(X.shape[1], 1))))
    if X.shape[0] <= rows:
        return scatter_matrices(X - mean, codes, n_classes)[:2]
    stats = None  # merged chunk by chunk: two chunks' d×d statistics at a time
    for i in range(0, X.shape[0], rows):
        part = chunk_moments(X[i:i + rows] - mean, codes[i:i + rows], name="X", start=i)
        stats = part if stats is None else merge(stats, part)
    return stats.class_scatter()[:2]


def class_groups(X: np.ndarray, codes: np.ndarray, n_classes: int):
    """``(mean, groups, S_w, S_b)``: X's column means, each class's rows less them (the
    classes' copies, centred in place: X is only read) and the FDA scatters
    (:func:`class_scatters`)."""
    mean = X.mean(axis=0)
    groups = [X[codes == c] for c in range(n_classes)]
    for G in groups:
        G -= mean
    Sw, Sb = class_scatters(X, codes, n_classes, mean)
    return mean, groups, Sw, Sb


def uniform_within(groups) -> float:
    """tr C_w with uniform plans, Σ_c (2/n_c) Σ_i ‖x_i − m_c‖² over the classes' rows, by row
    chunks (a chunk's temporaries, not a class's)."""
    total = 0.0
    for G in groups:
        m, rows = G.mean(axis=0), max(2, int(CHUNK_BYTES // (8 * max(G.shape[1], 1))))
        total += 2.0 * sum(float(np.sum((G[i:i + rows] - m) ** 2))
                           for i in range(0, len(G), rows)) / len(G)
    return total
