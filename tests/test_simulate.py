"""Coverage simulation: per-repetition intervals equal perdoc's own, known coverage behaviour,
determinism, the recommendation rule, designs and paired comparisons."""

import json
import math

import numpy as np
import pytest

import perdoc
from perdoc import DocTable, ParameterError, estimate, estimate_design
from perdoc import simulate as sim
from perdoc.compare import PairTable, compare

from conftest import make_table


def census_binary(M=300, seed=11):
    rng = np.random.default_rng(seed)
    n = np.maximum(1, np.round(rng.lognormal(2.5, 1.0, M))).astype(float)
    p = rng.beta(0.8, 3.0, M)
    s = rng.binomial(n.astype(int), p).astype(float)
    return DocTable.from_arrays(n=n, s=s, q=s.copy(), doc=[f"d{i:04d}" for i in range(M)])


def assert_same(ri, i, intervals, names=None, tol=1e-10):
    """Every interval of perdoc's result equals the vectorised one of repetition i."""
    seen = 0
    for iv in intervals:
        name = f"{iv.estimand}.{iv.method}"
        if name not in ri.low:
            assert names is None or name not in names
            continue
        seen += 1
        lo, hi = ri.low[name][i], ri.high[name][i]
        assert ri.estimate[name][i] == pytest.approx(iv.estimate, abs=tol), name
        if iv.ci is None:
            if "whole real line" in (iv.reason or "") or "unbounded" in (iv.reason or ""):
                assert np.isinf(lo) or np.isinf(hi), (name, iv.reason)
            else:
                assert np.isnan(lo) and np.isnan(hi), (name, iv.reason, lo, hi)
        else:
            assert abs(lo - iv.ci.low) <= tol and abs(hi - iv.ci.high) <= tol, (name, lo, hi, iv.ci)
    assert seen == len(ri.low)


@pytest.mark.parametrize("k, B, level", [(12, 199, 0.95), (4, 99, 0.9), (3, 999, 0.95)])
def test_every_interval_equals_estimate_binary(k, B, level):
    c = census_binary()
    ri = sim.rep_intervals(c, k=k, reps=6, seed=5, level=level, replicates=B)
    assert set(ri.methods) == {"micro." + m for m in ("cr1", "cr2", "cr2_ik", "cr3", "korn_graubard", "logit",
                                                      "wilson", "bootstrap_t", "percentile", "wild", "wald_iid",
                                                      "wald_eff_n", "jackknife_bc", "logit_cr2",
                                                      "bootstrap_t_logit", "calibrated")} | {
        "macro.t", "macro.bootstrap_t", "macro.percentile", "macro.calibrated"}
    for i in range(6):
        e = estimate(c.take(ri.index[i]), population_size=c.K, replicates=B, seed=int(ri.seeds[i]), level=level)
        assert_same(ri, i, e.intervals)


def test_every_interval_equals_estimate_continuous_and_flat_samples():
    c = make_table(K=150, seed=3, binary=False)
    ri = sim.rep_intervals(c, k=8, reps=5, seed=2, replicates=99)
    assert "micro.wilson" not in ri.methods
    for i in range(5):
        e = estimate(c.take(ri.index[i]), population_size=c.K, replicates=99, seed=int(ri.seeds[i]))
        assert_same(ri, i, e.intervals)
    # a sparse census: many samples where every document has rate 0 (no interval) or Clopper-Pearson
    n = np.full(200, 5.0)
    s = np.zeros(200)
    s[:6] = [1, 2, 1, 3, 1, 5]
    sparse = DocTable.from_arrays(n=n, s=s)
    ri = sim.rep_intervals(sparse, k=5, reps=12, seed=1, replicates=49)
    assert np.isnan(ri.low["micro.cr2"]).sum() > 3
    for i in range(12):
        e = estimate(sparse.take(ri.index[i]), population_size=200, replicates=49, seed=int(ri.seeds[i]))
        assert_same(ri, i, e.intervals)


def test_whole_line_wild_is_infinite_and_covers():
    c = census_binary()
    ri = sim.rep_intervals(c, k=2, reps=5, seed=1, replicates=99)
    for i in range(5):
        e = estimate(c.take(ri.index[i]), population_size=c.K, replicates=99, seed=int(ri.seeds[i]))
        assert_same(ri, i, e.intervals)
    res = sim.simulate(c, k=2, reps=50, seed=1, replicates=99)
    w = res.methods["micro.wild"]
    assert w["infinite"] > 0.5 and w["coverage"] >= w["infinite"]


def test_summary_equals_counts_of_rep_intervals():
    c = census_binary()
    ri = sim.rep_intervals(c, k=10, reps=60, seed=4, replicates=49)
    res = sim.simulate(c, k=10, reps=60, seed=4, replicates=49)
    for name, m in res.methods.items():
        truth = res.truth[name.split(".")[0]]
        lo, hi = ri.low[name], ri.high[name]
        none = np.isnan(lo)
        with np.errstate(invalid="ignore"):
            cov = np.mean(~none & (lo <= truth) & (hi >= truth))
        fin = ~none & np.isfinite(lo) & np.isfinite(hi)
        assert m["coverage"] == pytest.approx(cov)
        assert m["mc_se"] == pytest.approx(math.sqrt(cov * (1 - cov) / 60))
        assert m["no_interval"] == pytest.approx(none.mean())
        assert m["mean_width"] == pytest.approx(np.mean((hi - lo)[fin]))
        assert m["rmse"] == pytest.approx(np.sqrt(np.mean((ri.estimate[name] - truth) ** 2)))
        assert m["n"] == 60
    assert res.truth == {"micro": pytest.approx(c.s.sum() / c.n.sum()), "macro": pytest.approx(np.mean(c.s / c.n))}


def test_deterministic_under_seed_and_block_size(monkeypatch):
    c = census_binary()
    a = sim.simulate(c, k=8, reps=40, seed=9, replicates=99).to_dict()
    b = sim.simulate(c, k=8, reps=40, seed=9, replicates=99).to_dict()
    assert a == b
    monkeypatch.setattr(sim, "BLOCK_CELLS", 99 * 3)  # blocks of 3 repetitions
    c3 = sim.simulate(c, k=8, reps=40, seed=9, replicates=99).to_dict()
    assert c3 == a
    assert sim.simulate(c, k=8, reps=40, seed=10, replicates=99).to_dict() != a
    # the first repetitions do not depend on how many follow
    r10 = sim.rep_intervals(c, k=8, reps=10, seed=9, replicates=99)
    r20 = sim.rep_intervals(c, k=8, reps=20, seed=9, replicates=99)
    assert np.array_equal(r10.index, r20.index[:10])
    assert np.array_equal(r10.low["micro.wild"], r20.low["micro.wild"][:10], equal_nan=True)


def test_threads_change_no_result(monkeypatch):
    """Blocks computed by several threads give the same numbers as one thread, in any split."""
    c = census_binary()
    monkeypatch.setenv("PERDOC_THREADS", "1")
    one = sim.rep_intervals(c, k=8, reps=30, seed=4, replicates=49)
    a = sim.simulate(c, k=8, reps=30, seed=4, replicates=49).to_dict()
    monkeypatch.setenv("PERDOC_THREADS", "3")
    monkeypatch.setattr(sim, "BLOCK_CELLS", 49 * 4 * 3)      # 3 threads: blocks of at most 4 repetitions
    plan = sim._Plan(c, k=8, reps=30, seed=4, level=0.95, design=None, replicates=49)
    assert plan.threads == 3 and plan.block == 4             # 30 = 7 x 4 + 2: 8 blocks in 3 threads
    three = sim.rep_intervals(c, k=8, reps=30, seed=4, replicates=49)
    assert sim.simulate(c, k=8, reps=30, seed=4, replicates=49).to_dict() == a
    assert np.array_equal(one.index, three.index)
    for m in one.low:
        assert np.array_equal(one.low[m], three.low[m], equal_nan=True), m
        assert np.array_equal(one.high[m], three.high[m], equal_nan=True), m
    rows1, lo1, hi1 = one.pieces["micro.wild"]
    rows3, lo3, hi3 = three.pieces["micro.wild"]
    assert np.array_equal(rows1, rows3) and np.array_equal(lo1, lo3) and np.array_equal(hi1, hi3)


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_threads_setting_checked(monkeypatch, value):
    monkeypatch.setenv("PERDOC_THREADS", value)
    with pytest.raises(ParameterError, match="PERDOC_THREADS must be a whole number"):
        sim.simulate(census_binary(), k=8, reps=5, seed=1, replicates=9)


def test_macro_t_nominal_on_normal_equal_sizes():
    rng = np.random.default_rng(1)
    M, size = 4000, 10
    y = rng.normal(0.5, 0.2, (M, 1)) + rng.normal(0, 0.1, (M, size))
    c = DocTable.from_arrays(n=np.full(M, float(size)), s=y.sum(1), q=(y * y).sum(1))
    res = sim.simulate(c, k=30, reps=3000, seed=2, replicates=0)
    m = res.methods["macro.t"]
    assert abs(m["coverage"] - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / 3000)
    assert abs(res.methods["micro.cr2"]["coverage"] - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / 3000)
    assert m["no_interval"] == 0 and m["infinite"] == 0


def test_clustered_census_wald_iid_far_below_nominal():
    c = census_binary(M=1000, seed=3)
    res = sim.simulate(c, k=20, reps=400, seed=1, replicates=0)
    assert res.methods["micro.wald_iid"]["coverage"] < 0.7
    assert res.methods["micro.cr2"]["coverage"] > res.methods["micro.wald_iid"]["coverage"] + 0.15
    assert res.recommended["micro"] not in sim.BASELINES


def _m(cov, width, infinite=0.0, reps=1000):
    return {"coverage": cov, "mc_se": math.sqrt(cov * (1 - cov) / reps), "mean_width": width, "rmse": 0.1,
            "no_interval": 0.0, "infinite": infinite, "n": reps}


def test_recommendation_rule():
    methods = {
        "micro.cr1": _m(0.90, 0.10),            # too low
        "micro.cr2": _m(0.945, 0.20),           # within 2 MC se of 0.95 (se ~ 0.0072)
        "micro.bootstrap_t": _m(0.96, 0.25),    # qualifies, wider
        "micro.wild": _m(0.99, 0.15, infinite=0.01),  # narrowest but sometimes infinite
        "micro.wald_iid": _m(0.95, 0.01),       # baseline: never recommended
        "macro.t": _m(0.90, 0.1),
        "macro.percentile": _m(0.92, 0.1),
    }
    rec, notes = sim.recommend(methods, 0.95)
    assert rec["micro"] == "micro.cr2"
    assert "micro.cr2" in notes["micro"] and "smallest" in notes["micro"]
    assert rec["macro"] is None
    assert "no macro method" in notes["macro"] and "macro.percentile" in notes["macro"] and "0.920" in notes["macro"]
    # just outside Monte Carlo error does not qualify
    assert sim.recommend({"micro.cr2": _m(0.93, 0.1)}, 0.95)[0]["micro"] is None


def test_result_contract_and_progress():
    c = census_binary()
    calls = []
    res = sim.simulate(c, k=6, reps=25, seed=1, replicates=19, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (25, 25) and all(t == 25 for _, t in calls)
    d = json.loads(json.dumps(res.to_dict()))
    assert {"k", "reps", "seed", "level", "truth", "design", "methods", "recommended"} <= set(d)
    assert set(d["methods"]["micro.cr2"]) == {"coverage", "mc_se", "mean_width", "rmse", "no_interval", "infinite",
                                              "miss_low", "miss_high", "out_of_range"}
    assert d["design"] == {"sampling": "srs", "population_size": c.K}
    assert set(d["recommended"]) == {"micro", "macro"}
    f = res.to_frame()
    assert {"method", "estimand", "coverage", "mc_se", "baseline", "recommended"} <= set(f.columns)
    assert len(f) == len(res.methods) and f["baseline"].sum() == 2


def test_stratified_design_equals_estimate_design():
    c = census_binary(M=200)
    labels = np.where(c.n > 20, "large", "small")
    design = {"sampling": "stratified", "strata": {"by": labels, "k": {"large": 4, "small": 6}}}
    ri = sim.rep_intervals(c, k=10, reps=5, seed=3, design=design)
    M_h = {h: int((labels == h).sum()) for h in ("large", "small")}
    for i in range(5):
        idx = ri.index[i]
        e = estimate_design(c.take(idx), design={"sampling": "stratified",
                                                 "strata": {"by": labels[idx], "population_sizes": M_h}})
        assert_same(ri, i, e.intervals)
    res = sim.simulate(c, k=10, reps=200, seed=3, design=design)
    assert set(res.methods) == {"micro.design", "macro.design"}
    assert res.design["strata"]["large"] == {"M_h": M_h["large"], "k_h": 4}
    with pytest.raises(ParameterError, match="sum of the stratum"):
        sim.simulate(c, k=9, reps=5, design=design)


@pytest.mark.parametrize("rule", [{"chunks_per_doc": 3}, {"fraction": 0.25}])
def test_two_stage_design_equals_estimate_design(rule):
    c = census_binary(M=200)
    design = {"sampling": "two_stage", **rule}
    ri = sim.rep_intervals(c, k=10, reps=5, seed=3, design=design)
    for i in range(5):
        idx = ri.index[i]
        n, s = ri.chunks["n"][i], ri.chunks["s"][i]
        assert np.all(n <= c.n[idx]) and np.all(s <= np.minimum(n, c.s[idx]))
        sample = DocTable.from_arrays(n=n, s=s, q=s.copy())
        e = estimate_design(sample, design={"sampling": "two_stage", "population_size": c.K,
                                            "chunks_in_doc": c.n[idx]})
        assert_same(ri, i, e.intervals)
    res = sim.simulate(c, k=10, reps=200, seed=3, design=design)
    assert set(res.methods) == {"micro.design"} and res.recommended["macro"] is None


def test_two_stage_needs_binary_census():
    with pytest.raises(ParameterError, match="binary"):
        sim.simulate(make_table(K=50, binary=False), k=5, reps=3, design={"sampling": "two_stage",
                                                                          "chunks_per_doc": 2})


def test_bad_parameters():
    c = census_binary(M=30)
    for kw, msg in ((dict(k=30), "below the number"), (dict(k=1), "k must"), (dict(reps=0), "reps"),
                    (dict(replicates=1), "replicates"), (dict(level=1.5), "level"),
                    (dict(design={"sampling": "cluster"}), "design.sampling")):
        args = dict(k=5, reps=3) | kw
        with pytest.raises(ParameterError, match=msg):
            sim.simulate(c, **args)


def test_paired_simulation_equals_compare():
    rng = np.random.default_rng(4)
    M = 150
    n = np.maximum(2, np.round(rng.lognormal(2.0, 0.8, M))).astype(float)
    s_b = rng.binomial(n.astype(int), rng.beta(1, 3, M)).astype(float)
    flips = rng.binomial(n.astype(int), 0.1).astype(float)
    s_a = np.minimum(n, s_b + flips)
    q_d = s_a - s_b  # A hits a superset of B's chunks: (a - b)^2 = a - b
    pairs = PairTable.build(doc=[f"d{i}" for i in range(M)], n_a=n, s_a=s_a, q_a=s_a, n_b=n, s_b=s_b, q_b=s_b,
                            q_d=q_d)
    ri = sim.rep_intervals(pairs, k=8, reps=4, seed=1, replicates=49)
    assert not any(m.endswith(("korn_graubard", "logit", "wilson")) for m in ri.methods)
    for i in range(4):
        idx = ri.index[i]
        sub = PairTable.build(doc=pairs.doc[idx], n_a=n[idx], s_a=s_a[idx], q_a=s_a[idx], n_b=n[idx],
                              s_b=s_b[idx], q_b=s_b[idx], q_d=q_d[idx])
        cmp = compare(sub, population_size=M, replicates=49, seed=int(ri.seeds[i]))
        assert_same(ri, i, cmp.difference.intervals)
    res = sim.simulate_pairs(pairs, k=8, reps=100, seed=1, replicates=49)
    assert res.truth["micro"] == pytest.approx((s_a - s_b).sum() / n.sum())
    assert res.design["paired"] is True and "micro.cr2" in res.methods


@pytest.mark.slow
def test_example_census_coverage_pattern():
    c = perdoc.load_chunks("data/example/census.csv", doc="doc_id", score="bm25")
    res = sim.simulate(c, k=20, reps=1000, seed=1, replicates=199)
    m = res.methods
    assert m["micro.wald_iid"]["coverage"] < 0.5
    assert m["micro.cr2"]["coverage"] > m["micro.cr1"]["coverage"]
    assert m["micro.cr3"]["coverage"] > m["micro.cr1"]["coverage"]
    assert res.recommended["micro"] not in sim.BASELINES


@pytest.mark.slow
def test_bootstrap_t_macro_near_nominal_on_smooth_census():
    rng = np.random.default_rng(7)
    M = 3000
    n = np.full(M, 20.0)
    p = rng.beta(4, 6, M)
    s = rng.binomial(20, p).astype(float)
    c = DocTable.from_arrays(n=n, s=s)
    res = sim.simulate(c, k=25, reps=1000, seed=3, replicates=499)
    mc = math.sqrt(0.95 * 0.05 / 1000)
    assert abs(res.methods["macro.bootstrap_t"]["coverage"] - 0.95) < 4 * mc + 0.01
    assert abs(res.methods["macro.t"]["coverage"] - 0.95) < 4 * mc


# ---------------------------------------------------------------------------------- command line
def test_cli_simulate_json_contract(capsys):
    import json
    from pathlib import Path
    from perdoc.cli import main
    root = Path(__file__).resolve().parents[1]
    census = root / "data" / "example" / "census.csv"
    args = ["simulate", "--census", str(census), "--doc", "doc_id", "--score", "bm25", "--k", "10",
            "--reps", "60", "--replicates", "99", "--seed", "5", "--json"]
    assert main(args) == 0
    d = json.loads(capsys.readouterr().out)
    for name in ("micro.cr1", "micro.cr2", "micro.cr3", "micro.bootstrap_t", "micro.wild", "micro.korn_graubard",
                 "micro.wald_iid", "macro.t", "macro.bootstrap_t"):
        assert set(d["methods"][name]) >= {"coverage", "mc_se", "mean_width", "rmse"}
    assert set(d["recommended"]) == {"micro", "macro"} and d["k"] == 10 and d["reps"] == 60
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == d  # determinism under the seed
    assert main(["simulate", "--params", str(root / "params" / "stratified.yaml"), "--reps", "40", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert set(s["methods"]) == {"micro.design", "macro.design"}
    assert main(["simulate", "--census", str(census), "--doc", "doc_id", "--score", "bm25"]) == 2
    assert "missing --k" in capsys.readouterr().err


def test_out_of_range_share_and_in_range_methods_recommended_first():
    # a rare 0/1 metric: symmetric intervals often reach below 0
    n = np.array([3 + (d * 7) % 11 for d in range(60)], float)
    s = np.array([1.0 if d % 9 == 0 else 0.0 for d in range(60)])
    c = DocTable.from_arrays(n, s)
    res = sim.simulate(c, k=12, reps=300, seed=4, replicates=0)
    m = res.methods
    assert m["micro.cr2"]["out_of_range"] > 0.2
    assert m["micro.logit_cr2"]["out_of_range"] == 0 and m["micro.korn_graubard"]["out_of_range"] == 0
    ri = sim.rep_intervals(c, k=12, reps=300, seed=4, replicates=0)
    lo, hi = ri.low["micro.cr2"], ri.high["micro.cr2"]
    with np.errstate(invalid="ignore"):
        share = np.mean(~np.isnan(lo) & ((lo < 0) | (hi > 1)))
    assert m["micro.cr2"]["out_of_range"] == share
    fake = {"micro.cr2": {**_m(0.95, 0.1), "out_of_range": 0.3}, "micro.logit_cr2": {**_m(0.95, 0.2), "out_of_range": 0.0}}
    rec, notes = sim.recommend(fake, 0.95)
    assert rec["micro"] == "micro.logit_cr2" and "rank after it" in notes["micro"]


def test_note_says_no_interval_rather_than_too_narrow():
    m = {"micro.cr2": {**_m(0.30, 0.1), "no_interval": 0.7}}
    rec, notes = sim.recommend(m, 0.95)
    assert rec["micro"] is None and "no interval in 70%" in notes["micro"] and "too narrow" not in notes["micro"]
