"""scikit-learn estimators (``fit``/``transform``; ``fit_predict`` for clustering)."""

from ldr.estimators.hsic import KDAC, SemiSupervisedHSIC, SupervisedHSIC, UnsupervisedHSIC
from ldr.estimators.wda import WassersteinDA, WDAClustering

__all__ = ["KDAC", "SemiSupervisedHSIC", "SupervisedHSIC", "UnsupervisedHSIC", "WDAClustering",
           "WassersteinDA"]
