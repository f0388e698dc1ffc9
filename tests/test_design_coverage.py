"""Coverage of drawn designs and their design-based intervals on a census with extremely unequal
document sizes (coefficient of variation about 6, the largest 1% of documents holding over a third of
the chunks, the rate rising with size): the case where no interval from a simple random sample of
documents can hold its level, and where probability proportional to size does."""

from __future__ import annotations

import numpy as np
import pytest

from perdoc.design_sim import simulate_design
from perdoc.table import DocTable


def _extreme_census(M=2900, seed=1):
    rng = np.random.default_rng(seed)
    n = np.minimum(np.ceil(rng.lognormal(1.5, 2.0, size=M)), 50000)
    eta = -1.5 + 0.5 * np.log(n) + rng.normal(0, 1, M)
    s = rng.binomial(n.astype(int), 1 / (1 + np.exp(-eta))).astype(float)
    return DocTable.from_arrays(n, s, s, doc=[f"d{i}" for i in range(M)])


def test_the_census_is_extreme():
    c = _extreme_census()
    n = np.sort(c.n)
    assert n.std() / n.mean() > 4.5 and n[-29:].sum() / n.sum() > 0.28


def test_pps_with_a_take_covers_on_an_extreme_census():
    """PPS without replacement, 20 chunks per document, logit design interval: within 3 Monte Carlo
    SE of 0.95 at K = 10 and 20 (300 samples each)."""
    c = _extreme_census()
    for k in (10, 20):
        r = simulate_design(c, design="pps", k=k, reps=300, seed=3, take=20)
        m = r["methods"]["micro.logit_design"]
        assert m["coverage"] >= 0.95 - 3 * m["mc_se"], (k, m)


@pytest.mark.slow
def test_pps_coverage_does_not_fall_as_k_grows():
    c = _extreme_census()
    covs = []
    for k in (10, 20, 40, 80):
        m = simulate_design(c, design="pps", k=k, reps=1000, seed=4, take=20)["methods"]["micro.logit_design"]
        covs.append((m["coverage"], m["mc_se"]))
        assert m["coverage"] >= 0.94 - 2 * m["mc_se"], (k, m)
    for (a, sa), (b, sb) in zip(covs, covs[1:]):
        assert b >= a - 3 * np.hypot(sa, sb), covs


def test_simulation_refuses_a_take_on_a_continuous_census():
    c = DocTable.from_arrays([3.0, 4, 5], [1.5, 2.2, 0.3], [1.0, 2.0, 0.5])
    from perdoc.errors import ParameterError
    with pytest.raises(ParameterError, match="take"):
        simulate_design(c, design="pps", k=2, reps=2, take=2)


@pytest.mark.slow
def test_small_take_holds_as_certainty_documents_multiply():
    """A real census (California schools in 757 districts, 0/1 'met its growth target', rate about 0.8):
    PPS with a take of 5. As K grows, more districts are taken with certainty; labelled through only 5
    chunks each they carried most of the variance on a few 0/1 labels (a third of those takes all 0 or
    all 1, zero variance within), and the coverage fell (0.953, 0.948, 0.918 at K = 35, 70, 140 before
    their takes became self-weighting). With ``ceil(f n_d)`` chunks it holds at every K."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from coverage_panel import load
    c = load(("real", "apipop", "sch_wide"))
    covs = []
    for k in (35, 140):
        m = simulate_design(c, design="pps", k=k, reps=500, seed=11, take=5)["methods"]["micro.logit_design"]
        covs.append((m["coverage"], m["mc_se"]))
        assert m["coverage"] >= 0.94 - 2 * m["mc_se"], (k, m)
    (a, sa), (b, sb) = covs
    assert b >= a - 3 * np.hypot(sa, sb), covs
