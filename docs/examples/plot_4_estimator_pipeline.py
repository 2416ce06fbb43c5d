"""
Estimators in a scikit-learn pipeline
=====================================

Every method has a scikit-learn transformer in :mod:`ldr.estimators`. Here PCA, orthogonal
LDA and supervised HSIC reduce the digits data (five classes, 64 pixels) to two dimensions
ahead of a nearest-neighbour classifier, scored by 3-fold cross-validation. The three
objectives choose different planes; the cross-validated score says which one serves this
classifier best.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ldr.estimators import PCA, OrthogonalLDA, SupervisedHSIC

X, y = load_digits(n_class=5, return_X_y=True)
X = X[:, X.std(axis=0) > 0]          # constant pixels carry nothing and make S_w singular

reducers = {"PCA": PCA(n_components=2),
            "orthogonal LDA": OrthogonalLDA(n_components=2, shrinkage=1e-3),
            "supervised HSIC": SupervisedHSIC(n_components=2)}
for name, reducer in reducers.items():
    pipe = make_pipeline(StandardScaler(), reducer, KNeighborsClassifier())
    print(f"{name:16s} 3-fold accuracy {cross_val_score(pipe, X, y, cv=3).mean():.3f}")

# %%
# The two-dimensional embeddings the classifier sees:

fig, axes = plt.subplots(1, 3, figsize=(12, 4), layout="constrained")
for ax, (name, reducer) in zip(axes, reducers.items()):
    Z = make_pipeline(StandardScaler(), reducer).fit_transform(X, y)
    ax.scatter(Z[:, 0], Z[:, 1], c=y, s=6, cmap="tab10", vmax=9)
    ax.set_title(name)
