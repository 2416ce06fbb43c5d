"""``verbose`` on every estimator: silent at 0; at 1 a progress table per solve (a header,
a line per iteration with the running count, a closing line with the driver's reason), and
for an alternation a line per round."""

import re
import warnings

import pytest
from sklearn.datasets import load_wine
from test_units import FITS, build_case

import ldr.estimators as E


def _fit(name, verbose):
    est, X, target = build_case(name, verbose=verbose)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, *target)


@pytest.mark.parametrize("name", sorted(FITS))
def test_verbose_prints_a_table_per_solve(name, capsys):
    est = _fit(name, 0)
    assert capsys.readouterr().out == ""
    _fit(name, 1)
    lines = capsys.readouterr().out.splitlines()
    if not lines:  # only a closed form solves nothing
        assert est.objective_ is None and est.result_.solver == "closed-form", name
        return
    prefix = f"[{name}]"
    assert all(line.startswith(prefix) for line in lines)
    rounds = [int(m.group(1)) for line in lines
              if (m := re.match(re.escape(prefix) + r" round (\d+): cost \S+, change of [UW] "
                                r"\d\.\d{3}e[+-]\d+, \d+\.\d{2}s$", line))]
    if rounds:  # an alternation: a line per round, counting from 1, and its n_outer_ rounds
        assert rounds == list(range(1, len(rounds) + 1))
        assert len(rounds) == est.n_outer_
    lines = [line for line in lines if not re.match(re.escape(prefix) + r" round \d+:", line)]
    starts = [i for i, line in enumerate(lines) if line == prefix]
    assert starts and starts[0] == 0
    for i in starts:  # each solve: a header, a rule, then rows counting up from the start
        assert "Iteration" in lines[i + 1] and set(lines[i + 2][len(prefix):].strip()) == {"-"}
        counts = []
        for line in lines[i + 3:]:
            m = re.match(re.escape(prefix) + r" +(\d+) +-?\d\.\d{6}e[+-]\d+ ", line)
            if not m:
                assert re.search(r"after \d+ iterations; training took +\d+\.\d{2}s\.$", line)
                break
            counts.append(int(m.group(1)))
        assert counts == list(range(counts[0], counts[0] + len(counts)))


@pytest.mark.parametrize("bad", [-1, 1.5, "yes"])
def test_verbose_is_checked(bad):
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match="verbose"):
        E.OrthogonalLDA(2, verbose=bad).fit(X, y)
