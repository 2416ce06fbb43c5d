"""
Comparing solvers on one objective
==================================

:func:`ldr.compare` runs every solver from the same random starts under the same stopping
rules, groups the answers by subspace, certifies each, and plots the optimality gap against
time and iteration (the survey's Figure 4). Here: orthogonal LDA on the breast-cancer data
(30 features) with a first-order, a conjugate-gradient, a second-order and a spectral solver.
The ``converged`` column says which reached the gradient tolerance within the default budget
of 1000 iterations; a run that did not is reported as such, never as converged.
"""

import matplotlib.pyplot as plt

import ldr
from ldr.objectives import LDA

X, y = ldr.datasets.load("breast_cancer")
lda = LDA(X, y, r=1)
cmp = ldr.compare(lda, ["gradient", "conjugate-gradient", "trust-region", "ism"],
                  n_starts=3, progress=False)
print(cmp.table(per="solver", notes=False))

# %%
# The cost gap per iteration and per second, median and range over the starts:

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
cmp.plot(axes)
