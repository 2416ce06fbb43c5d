"""
Comparing solvers on one objective
==================================

:func:`ldr.compare` runs every solver from the same random starts under the same stopping
rules, groups the answers by subspace, certifies each, and plots the optimality gap against
time and iteration (the survey's Figure 4). Here: orthogonal LDA on the breast-cancer data
with a first-order, a conjugate-gradient, a second-order and a spectral solver.
"""

import matplotlib.pyplot as plt

import ldr
from ldr.objectives import LDA

X, y = ldr.datasets.load("breast_cancer")
lda = LDA(X, y, r=1)
cmp = ldr.compare(lda, ["gradient", "conjugate-gradient", "trust-region", "ism"],
                  n_starts=3, progress=False)
print(cmp.table(per="solver"))

# %%
# The cost gap per iteration and per second, median and range over the starts:

cmp.plot()
plt.gcf().set_size_inches(10, 3.8)
plt.tight_layout()
