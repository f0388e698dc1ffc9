"""The planner: the article's numbers, monotonicity, the pilot route, the strata planner."""

import json
from pathlib import Path

import numpy as np
import pytest

import perdoc
from perdoc.cli import main
from perdoc.plan import curve, half_width, plan_k, plan_strata, spread

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("sd, M, K", [(0.224, 1300, 76), (0.224, None, 80), (0.412, 1300, 220), (0.412, None, 264)])
def test_article_numbers(sd, M, K):
    p = plan_k(sd, 0.05, population_size=M)
    assert p.K == K
    assert p.half_width <= 0.05 < half_width(K - 1, sd, 0.95, M)


def test_monotone_curve_and_census_limit():
    pts = curve(0.3, population_size=500)
    hw = [h for _, h in pts]
    assert all(a > b for a, b in zip(hw, hw[1:]))
    p = plan_k(0.3, 1e-6, population_size=50)
    assert p.K == 50 and "census" in p.notes[0]


def test_spread_definitions():
    t = perdoc.DocTable.from_arrays(n=[2, 4, 6, 8], s=[1, 1, 3, 2])
    assert spread(t, "macro") == pytest.approx(np.std(t.rate, ddof=1))
    R = t.s.sum() / t.N
    assert spread(t, "micro") == pytest.approx(np.std(t.s - R * t.n, ddof=1) / t.n.mean())


def test_cli_plan_json_and_errors(capsys):
    assert main(["plan", "--estimand", "macro", "--sd", "0.224", "--half-width", "0.05",
                 "--population-size", "1300", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["K"] == 76 and d["K_without_fpc"] == 80 and d["half_width"] <= 0.05
    assert main(["plan", "--params", str(ROOT / "params" / "example.yaml"), "--half-width", "0.05", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["estimand"] == "micro" and d["population_size"] == 1300 and d["K"] > 20
    assert main(["plan", "--estimand", "micro", "--sd", "0", "--half-width", "0.05"]) == 2
    assert "sd must be a positive number" in capsys.readouterr().err
    assert main(["plan", "--sd", "0.2", "--half-width", "0.05"]) == 2
    assert "missing --estimand" in capsys.readouterr().err


def test_strata_planner_on_the_example_census():
    census = perdoc.load_chunks(ROOT / "data" / "example" / "census.csv", doc="doc_id", score="bm25")
    p = plan_strata(census, k=20, threshold=76, allocation="equal")
    assert p.strata["large"]["M_h"] == 129 and p.strata["small"]["M_h"] == 1171
    assert p.strata["large"]["k_h"] == 10 and p.strata["small"]["k_h"] == 10
    assert p.sd < 0.7 * p.sd_srs  # stratifying by size makes each document count
    ney = plan_strata(census, k=20, threshold=76, allocation="neyman")
    assert ney.sd <= p.sd + 1e-12 and sum(v["k_h"] for v in ney.strata.values()) == 20
    searched = plan_strata(census, k=20, allocation="equal")
    assert searched.sd <= p.sd + 1e-12 and searched.searched


def test_allocation_sums_to_k_within_bounds():
    from perdoc.plan import _allocate
    rng = np.random.default_rng(0)
    for _ in range(2000):
        H = int(rng.integers(1, 5))
        M = {f"h{j}": int(rng.integers(2, 40)) for j in range(H)}
        S = {h: float(rng.random() * 10) for h in M}
        k = int(rng.integers(2 * H, sum(M.values()) + 1))
        for how in ("equal", "proportional", "neyman"):
            alloc = _allocate(M, S, k, how)
            assert sum(alloc.values()) == k
            assert all(2 <= alloc[h] <= M[h] for h in M)
    assert _allocate({"large": 9, "small": 16}, {"large": 1.0, "small": 10.0}, 17, "neyman") == {"large": 2, "small": 15}


def _example_tables():
    sample = perdoc.load_chunks(ROOT / "data" / "example" / "sample.csv", doc="doc_id", score="bm25")
    census = perdoc.load_chunks(ROOT / "data" / "example" / "census.csv", doc="doc_id", score="bm25")
    return sample, census


def test_planned_sizes_are_the_pilot_sizes_at_its_own_K():
    from perdoc.plan import planned_sizes
    sizes = np.array([5.0, 1.0, 177.0, 3.0, 40.0])
    assert planned_sizes(sizes, 5).tolist() == sorted(sizes.tolist())
    big = planned_sizes(sizes, 50)
    assert big.size == 50 and set(big.tolist()) == set(sizes.tolist()) and np.all(np.diff(big) >= 0)


def test_planned_df_is_the_realised_bell_mccaffrey_df():
    from perdoc.plan import planned_df
    sample, census = _example_tables()
    est = perdoc.estimate(sample, population_size=1300, replicates=0)
    cr2 = est.interval("micro", "cr2")
    assert planned_df(sample.K, sample.n) == pytest.approx(cr2.df, rel=1e-12)
    assert planned_df(sample.K) == sample.K - 1          # without sizes: the K - 1 rule
    # unequal sizes: the Bell-McCaffrey df are far below K - 1, so more documents are needed
    S = spread(census, "micro")
    bm = plan_k(S, 0.05, population_size=1300, sizes=census.n)
    k1 = plan_k(S, 0.05, population_size=1300)
    assert bm.df_rule == "bell-mccaffrey" and k1.df_rule == "K-1"
    assert bm.df < bm.K - 1 and bm.K > k1.K
    assert bm.half_width <= 0.05 < half_width(bm.K - 1, S, 0.95, 1300, census.n)
    assert bm.to_dict()["df"] == pytest.approx(bm.df)


def test_plan_at_the_pilot_K_reproduces_the_realised_cr2_half_width():
    """Planning and the realised interval use one rule: a pilot planned at its own K gives its CR2 interval."""
    sample, _ = _example_tables()
    for M in (None, 1300):
        est = perdoc.estimate(sample, population_size=M, replicates=0)
        cr2 = est.interval("micro", "cr2")
        S = spread(sample, "micro", variance="cr2")
        planned = half_width(sample.K, S, est.level, M, sample.n)
        assert planned == pytest.approx(cr2.ci.width / 2, rel=1e-10)
        # the default rule (t with K - 1 df, CR1 spread) does not: it is the CR1 interval
        assert half_width(sample.K, spread(sample, "micro"), est.level, M) < 0.95 * cr2.ci.width / 2


def test_sizes_and_variance_are_checked():
    from perdoc.errors import ParameterError
    with pytest.raises(ParameterError, match="sizes"):
        plan_k(0.3, 0.05, sizes=[3.0])
    with pytest.raises(ParameterError, match="variance"):
        spread(perdoc.DocTable.from_arrays(n=[2, 4], s=[1, 1]), "micro", variance="cr9")
