"""
Your own objective: a sparse PCA in five lines
==============================================

Write the cost with ``autograd.numpy``; :func:`ldr.objective` supplies its gradient and
Hessian-vector products, :func:`ldr.check` verifies them against finite differences, and
every solver can minimize it. The penalty trades explained variance for loadings near zero.
"""

import autograd.numpy as anp
import matplotlib.pyplot as plt
import numpy as np

import ldr

X, _ = ldr.datasets.load("wine")
C = np.cov(X, rowvar=False)


def sparse_pca(penalty):
    @ldr.objective(shape=(13, 2), manifold="stiefel")
    def cost(M):
        return -anp.trace(M.T @ C @ M) + penalty * anp.sum(anp.sqrt(M**2 + 1e-6))
    return cost


print(ldr.check(sparse_pca(0.5)))

# %%
# Solve for three penalties and show the loadings of the first component (without the
# penalty the cost depends only on the plane, so any unit vector of the PCA plane could be
# "component 1"; the penalty picks sparse ones):

fig, axes = plt.subplots(1, 3, figsize=(10, 3.2), sharey=True)
for ax, penalty in zip(axes, [0.0, 0.5, 2.0]):
    result = ldr.solve(sparse_pca(penalty), "trust-region")
    M = result.M * np.sign(result.M[np.abs(result.M[:, 0]).argmax(), 0])
    variance = np.trace(M.T @ C @ M) / np.trace(C)
    ax.bar(range(13), M[:, 0])
    ax.set_title(f"penalty {penalty}: {variance:.0%} of the variance")
    ax.set_xlabel("feature")
axes[0].set_ylabel("loading, component 1")
fig.tight_layout()
