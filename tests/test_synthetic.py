"""Synthetic censuses for the coverage panel and for teaching: the knobs do what they say."""

import numpy as np
import pytest

from perdoc import ParameterError
from perdoc.synthetic import CensusSpec, synthetic_census, synthetic_pairs


def test_equal_sizes_and_binary_sums():
    c = synthetic_census(documents=300, size_sigma=0.0, median_size=6, icc=0.2, base_rate=0.3, seed=1)
    assert c.K == 300 and np.all(c.n == 6) and c.binary
    assert np.array_equal(c.q, c.s) and np.all((c.s >= 0) & (c.s <= c.n))


def test_knobs_move_the_census():
    flat = synthetic_census(documents=2000, size_sigma=1.0, icc=0.02, base_rate=0.3, seed=2)
    lumpy = synthetic_census(documents=2000, size_sigma=1.0, icc=0.5, base_rate=0.3, seed=2)
    assert np.var(lumpy.s / lumpy.n) > 1.5 * np.var(flat.s / flat.n)         # ICC spreads the rates
    unequal = synthetic_census(documents=2000, size_sigma=2.0, seed=3)
    assert unequal.n.max() / np.median(unequal.n) > 50                         # size inequality
    up = synthetic_census(documents=3000, size_sigma=1.5, size_rate_corr=0.8, seed=4)
    down = synthetic_census(documents=3000, size_sigma=1.5, size_rate_corr=-0.8, seed=4)
    corr = lambda c: np.corrcoef(np.log(c.n), c.s / c.n)[0, 1]  # noqa: E731
    assert corr(up) > 0.2 and corr(down) < -0.2
    cont = synthetic_census(documents=500, metric="continuous", base_rate=0.2, seed=5)
    assert not cont.binary and np.all(cont.q <= cont.s + 1e-12)                 # scores in (0, 1)
    assert abs(cont.s.sum() / cont.n.sum() - 0.2) < 0.05


def test_same_seed_same_census_and_bad_knobs_refused():
    a = synthetic_census(CensusSpec(documents=100, seed=9))
    b = synthetic_census(CensusSpec(documents=100, seed=9))
    assert np.array_equal(a.s, b.s) and np.array_equal(a.n, b.n)
    for bad in ({"icc": 0}, {"base_rate": 1.0}, {"metric": "graded"}, {"documents": 1}):
        with pytest.raises(ParameterError):
            synthetic_census(**bad)


def test_pairs_share_chunks_and_tie_as_asked():
    pt = synthetic_pairs(documents=800, size_sigma=1.0, base_rate=0.4, seed=6, effect=0.1, agreement=0.8)
    a, b = pt.system("a"), pt.system("b")
    assert np.array_equal(a.n, b.n)
    assert a.s.sum() > b.s.sum()                                                # A better on average
    single = synthetic_census(documents=800, size_sigma=1.0, base_rate=0.4, seed=6)
    assert np.array_equal(single.s, a.s)                                        # A is the census itself
    # chunks scored alike: q_d counts the chunks where 0/1 scores differ
    differ = pt.q_d.sum() / a.n.sum()
    assert 0.05 < differ < 0.25
