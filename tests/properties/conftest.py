"""Hypothesis profiles of the property suite.

``ci`` (default): derandomized and small — the whole directory runs in about a minute on a
2-core machine, the same examples every run.  ``soak``: the long profile that
``benchmarks/soak.py`` runs (random examples, many of them).  Choose with
``HYPOTHESIS_PROFILE=soak`` or pytest's ``--hypothesis-profile``.
"""

import os

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("ci", derandomize=True, max_examples=15, deadline=None,
                          suppress_health_check=_QUIET, database=None, print_blob=True)
settings.register_profile("soak", max_examples=250, deadline=None,
                          suppress_health_check=_QUIET, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
