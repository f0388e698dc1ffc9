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
