"""Real tables for ``bench_real.py``: scikit-learn's and statsmodels' bundled datasets, read
offline, as the benchmark's three kinds of data.

* **classes** — (X, y): features and a class column (for the supervised methods, and their
  features for the unsupervised ones);
* **series** — X whose rows are a time order (MAF, SFA);
* **two-view** — (X, Y): two groups of columns of one table (CCA).

Every table is split in two sets: ``DEVELOPMENT`` (the tables on which defaults may be chosen)
and the others.  The others are not unseen: fair's two tables shaped NCA's former annealing
stages and grunfeld a WDAClustering warning rule, so figures on them are not held-out
figures; those come from the sealed list of ``held_out.py`` only.  Classes are
built from a column the table's documentation describes as categorical, or, for a continuous
outcome, from its quartiles (said so in ``note``).  Rows with a missing value are dropped.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass

import numpy as np


@dataclass
class Table:
    name: str
    kind: str  # "classes", "series" or "two-view"
    X: np.ndarray
    y: np.ndarray | None
    note: str = ""

    @property
    def shape(self) -> str:
        extra = (f", {len(np.unique(self.y))} classes" if self.kind == "classes"
                 else f" / {self.y.shape[1]}" if self.kind == "two-view" else "")
        return f"{self.X.shape[0]}×{self.X.shape[1]}{extra}"


def _sm(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(f"statsmodels.datasets.{name}").load_pandas().data


def _classes(name, frame, label, drop=(), note="") -> Table:
    frame = frame.dropna()
    y = frame[label].to_numpy()
    X = frame.drop(columns=[label, *drop]).to_numpy(dtype=float)
    return Table(name, "classes", X, y, note)


def _quartiles(values) -> np.ndarray:
    return np.searchsorted(np.quantile(values, [0.25, 0.5, 0.75]), values, side="right")


def _subsample(X, y, n, seed=0):
    """A stratified, seeded subsample of n rows."""
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(np.arange(len(X)), train_size=n, stratify=y, random_state=seed)
    keep = np.sort(keep)
    return X[keep], y[keep]


def classification_tables() -> list[Table]:
    from sklearn import datasets as skd

    out = []
    for name in ("iris", "wine", "breast_cancer", "digits"):
        X, y = getattr(skd, f"load_{name}")(return_X_y=True)
        out.append(Table(name, "classes", X.astype(float), y))
    anes = _sm("anes96")
    out.append(_classes("anes96/PID", anes, "PID", drop=("logpopul",),
                        note="party identification, 7 classes"))
    out.append(_classes("anes96/vote", anes, "vote", drop=("logpopul",)))
    fair = _sm("fair")
    out.append(_classes("fair/rate_marriage", fair, "rate_marriage"))
    out.append(_classes("fair/religious", fair, "religious"))
    grunfeld = _sm("grunfeld")
    out.append(_classes("grunfeld/firm", grunfeld, "firm"))
    mode = _sm("modechoice")
    out.append(_classes("modechoice/mode", mode, "mode", drop=("individual", "choice"),
                        note="the travel mode of each alternative row"))
    rand = _sm("randhie").dropna()
    health = np.select([rand.hlthg > 0, rand.hlthf > 0, rand.hlthp > 0], [1, 2, 3], 0)
    X = rand.drop(columns=["hlthg", "hlthf", "hlthp"]).to_numpy(float)
    X, y = _subsample(X, health, 3000)
    out.append(Table("randhie/health", "classes", X, y,
                     "self-rated health from the three dummies; 3000 of 20190 rows, stratified"))
    star = _sm("star98").dropna()
    rate = (star.NABOVE / (star.NABOVE + star.NBELOW)).to_numpy()
    X = star.drop(columns=["NABOVE", "NBELOW"]).to_numpy(float)
    out.append(Table("star98/pass", "classes", X, _quartiles(rate),
                     "quartiles of the share of pupils above the national median"))
    out.append(_classes("ccard/ownrent", _sm("ccard"), "OWNRENT"))
    out.append(_classes("spector/grade", _sm("spector"), "GRADE"))
    return out


def series_tables() -> list[Table]:
    macro = _sm("macrodata").drop(columns=["year", "quarter"]).to_numpy(float)
    out = [Table("macrodata/levels", "series", macro, None, "12 quarterly US series"),
           Table("macrodata/changes", "series", np.diff(macro, axis=0), None,
                 "first differences")]
    out.append(Table("danish_data", "series", _sm("danish_data").to_numpy(float), None))
    elnino = _sm("elnino").drop(columns=["YEAR"]).to_numpy(float)
    out.append(Table("elnino", "series", elnino, None, "12 monthly temperatures per year"))
    out.append(Table("copper", "series", _sm("copper").drop(columns=["TIME"]).to_numpy(float),
                     None))
    infl = _sm("interest_inflation")[["Dp", "R"]].to_numpy(float)
    out.append(Table("interest_inflation", "series", infl, None))
    return out


def two_view_tables() -> list[Table]:
    from sklearn.datasets import load_linnerud

    lin = load_linnerud()
    out = [Table("linnerud", "two-view", lin.data.astype(float), lin.target.astype(float))]
    macro = _sm("macrodata")
    out.append(Table("macrodata/real-nominal", "two-view",
                     macro[["realgdp", "realcons", "realinv", "realgovt", "realdpi"]].to_numpy(
                         float),
                     macro[["cpi", "m1", "tbilrate", "unemp", "infl", "realint"]].to_numpy(
                         float)))
    fair = _sm("fair").dropna()
    out.append(Table("fair/marriage-person", "two-view",
                     fair[["rate_marriage", "yrs_married", "children", "affairs"]].to_numpy(
                         float),
                     fair[["age", "religious", "educ", "occupation",
                           "occupation_husb"]].to_numpy(float)))
    anes = _sm("anes96").dropna()
    out.append(Table("anes96/opinion-demography", "two-view",
                     anes[["selfLR", "ClinLR", "DoleLR", "PID", "vote"]].to_numpy(float),
                     anes[["popul", "TVnews", "age", "educ", "income"]].to_numpy(float)))
    return out


#: the tables on which defaults may be chosen (the others: module docstring)
DEVELOPMENT = {"iris", "wine", "breast_cancer", "digits", "anes96/PID", "macrodata/levels",
               "danish_data", "linnerud"}


def all_tables() -> list[Table]:
    return classification_tables() + series_tables() + two_view_tables()
