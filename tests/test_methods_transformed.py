"""The methods beyond the article: logit CR2, bootstrap-t on the logit scale, the bias-corrected
jackknife, the bootstrap-calibrated (prepivoted) intervals and the atanh interval of a paired
difference. Each against a literal implementation (loops, scipy.stats), their invariances, their
degenerate cases, and the simulation's exact agreement with perdoc.estimate."""

import math

import numpy as np
import pytest
from scipy import stats

from perdoc import DocTable, estimate
from perdoc import simulate as sim
from perdoc.bootstrap import BLOCK_ELEMS, document_bootstrap
from perdoc.compare import PairTable, compare

from conftest import make_table

NEW_MICRO = ("jackknife_bc", "logit_cr2", "bootstrap_t_logit", "calibrated")


# ====================================================================== literal implementations
def lit_ratio(n, s):
    return sum(s) / sum(n)


def lit_cr2_se(n, s):
    N = sum(n)
    R = lit_ratio(n, s)
    tot = 0.0
    for nd, sd in zip(n, s):
        u = sd - R * nd
        tot += u * u / (1.0 - nd / N)
    return math.sqrt(tot) / N


def lit_cr1_se(n, s):
    K, N, R = len(n), sum(n), lit_ratio(n, s)
    return math.sqrt(K / (K - 1) * sum((sd - R * nd) ** 2 for nd, sd in zip(n, s))) / N


def lit_bm_df(n):
    N = sum(n)
    q = [nd * nd / (N - nd) for nd in n]
    cross = sum(q[i] * q[j] for i in range(len(n)) for j in range(len(n)) if i != j)
    return N * N / (sum(nd * nd for nd in n) + cross)


def lit_logit(p):
    return math.log(p / (1 - p))


def lit_expit(x):
    return 1 / (1 + math.exp(-x))


def lit_draws(K, B, seed):
    """The document bootstrap's draws (one block: B * K <= BLOCK_ELEMS)."""
    assert B * K <= BLOCK_ELEMS
    return np.random.default_rng(seed).integers(0, K, size=(B, K))


def tables():
    return [make_table(K=12, seed=1), make_table(K=7, seed=4), make_table(K=25, seed=2, binary=False),
            DocTable.from_arrays(n=[10, 8, 7, 4, 5, 2, 9], s=[10, 6, 5, 4, 4, 0, 8])]


# ====================================================================== formulas
@pytest.mark.parametrize("i", range(4))
@pytest.mark.parametrize("M", [None, 60])
def test_logit_cr2_literal(i, M):
    t = tables()[i]
    n, s = list(t.n), list(t.s)
    K = len(n)
    e = estimate(t, replicates=0, population_size=M, level=0.9)
    iv = e.interval("micro", "logit_cr2")
    fpc = 1.0 if M is None else math.sqrt(1 - K / M)
    R = lit_ratio(n, s)
    se = lit_cr2_se(n, s) * fpc
    df = lit_bm_df(n)
    se_l = se / (R * (1 - R))
    tq = stats.t.ppf(0.95, df)
    assert iv.ci.low == pytest.approx(lit_expit(lit_logit(R) - tq * se_l), rel=1e-10)
    assert iv.ci.high == pytest.approx(lit_expit(lit_logit(R) + tq * se_l), rel=1e-10)
    assert iv.df == pytest.approx(df, rel=1e-12) and iv.se == pytest.approx(se, rel=1e-12)
    assert iv.extra["se_logit"] == pytest.approx(se_l, rel=1e-12)
    # the panel-backed default of a bounded metric's micro mean (perdoc.policy) is this interval
    assert iv.role == "primary" and "logit" in iv.label and "Bell-McCaffrey" in iv.label


@pytest.mark.parametrize("i", range(4))
def test_jackknife_bc_literal(i):
    t = tables()[i]
    n, s = list(t.n), list(t.s)
    K = len(n)
    R = lit_ratio(n, s)
    loo = [(sum(s) - s[d]) / (sum(n) - n[d]) for d in range(K)]
    mean = sum(loo) / K
    R_J = K * R - (K - 1) * mean
    se = math.sqrt((K - 1) / K * sum((x - mean) ** 2 for x in loo))
    e = estimate(t, replicates=0, population_size=5 * K)
    iv = e.interval("micro", "jackknife_bc")
    fpc = math.sqrt(1 - 1 / 5)
    assert iv.estimate == pytest.approx(R_J, rel=1e-12)
    assert iv.se == pytest.approx(se * fpc, rel=1e-10)
    assert iv.df == K - 1
    half = stats.t.ppf(0.975, K - 1) * se * fpc
    assert (iv.ci.low, iv.ci.high) == pytest.approx((R_J - half, R_J + half), rel=1e-10)
    # centred on mean R_(-d), the jackknife variance is at most (K - 1)/K times CR3's (centred on R)
    assert iv.se ** 2 <= (K - 1) / K * e.interval("micro", "cr3").se ** 2 * (1 + 1e-12)


@pytest.mark.parametrize("i", range(4))
def test_bootstrap_t_logit_literal(i):
    t = tables()[i]
    n, s = t.n, t.s
    K, B, seed = n.size, 499, 7
    idx = lit_draws(K, B, seed)
    R = lit_ratio(n, s)
    tstar, dropped = [], 0
    for row in idx:
        nb, sb = list(n[row]), list(s[row])
        Rb = lit_ratio(nb, sb)
        rates = [a / b for a, b in zip(sb, nb)]
        se_b = lit_cr1_se(nb, sb)
        if len(set(rates)) == 1 or Rb <= 0 or Rb >= 1 or se_b == 0:
            dropped += 1
            continue
        tstar.append((lit_logit(Rb) - lit_logit(R)) / (se_b / (Rb * (1 - Rb))))
    qlo, qhi = np.quantile(tstar, [0.025, 0.975])
    se_l = lit_cr1_se(list(n), list(s)) / (R * (1 - R))
    iv = estimate(t, replicates=B, seed=seed).interval("micro", "bootstrap_t_logit")
    assert iv.ci.low == pytest.approx(lit_expit(lit_logit(R) - qhi * se_l), rel=1e-9)
    assert iv.ci.high == pytest.approx(lit_expit(lit_logit(R) - qlo * se_l), rel=1e-9)
    assert iv.extra["degenerate_fraction"] == pytest.approx(dropped / B)
    assert iv.extra["replicates"] == B and iv.resampling_unit == "document"


def lit_calibrated_micro(n, s, B, seed, alpha, fpc=1.0):
    K = n.size
    idx = lit_draws(K, B, seed)
    R = lit_ratio(list(n), list(s))
    bounded = np.all((s >= 0) & (s <= n))
    lg = bounded and 0 < R < 1
    g = lit_logit if lg else (lambda x: x)
    jac = (lambda p: p * (1 - p)) if lg else (lambda p: 1.0)
    us = []
    for row in idx:
        nb, sb = list(n[row]), list(s[row])
        rates = [a / b for a, b in zip(sb, nb)]
        Rb = lit_ratio(nb, sb)
        se_b = lit_cr2_se(nb, sb)
        if len(set(rates)) == 1 or se_b == 0 or (lg and not 0 < Rb < 1):
            continue
        root = (g(Rb) - g(R)) / (se_b / jac(Rb))
        us.append(stats.t.cdf(root, lit_bm_df(nb)))
    ulo, uhi = np.quantile(us, [alpha / 2, 1 - alpha / 2])
    se = lit_cr2_se(list(n), list(s)) * fpc / jac(R)
    df = lit_bm_df(list(n))
    lo, hi = g(R) - se * stats.t.ppf(uhi, df), g(R) - se * stats.t.ppf(ulo, df)
    back = lit_expit if lg else (lambda x: x)
    return back(lo), back(hi), (ulo, uhi), lg


@pytest.mark.parametrize("i", range(4))
@pytest.mark.parametrize("M", [None, 80])
def test_calibrated_micro_literal(i, M):
    t = tables()[i]
    B, seed = 399, 3
    fpc = 1.0 if M is None else math.sqrt(1 - t.K / M)
    lo, hi, (ulo, uhi), lg = lit_calibrated_micro(t.n, t.s, B, seed, 0.05, fpc)
    iv = estimate(t, replicates=B, seed=seed, population_size=M).interval("micro", "calibrated")
    assert (iv.ci.low, iv.ci.high) == pytest.approx((lo, hi), rel=1e-9)
    assert iv.extra["calibrated_levels"] == pytest.approx([ulo, uhi], rel=1e-9)
    assert iv.extra["base"] == ("logit_cr2" if lg else "cr2")


def test_calibrated_micro_unbounded_base_literal():
    rng = np.random.default_rng(5)
    n = rng.integers(2, 30, 15).astype(float)
    s = rng.normal(0.3, 1.0, 15) * n
    q = s * s / n + n
    t = DocTable.from_arrays(n=n, s=s, q=q)
    lo, hi, (ulo, uhi), lg = lit_calibrated_micro(t.n, t.s, 299, 9, 0.1)
    assert not lg
    iv = estimate(t, replicates=299, seed=9, level=0.9).interval("micro", "calibrated")
    assert (iv.ci.low, iv.ci.high) == pytest.approx((lo, hi), rel=1e-9)
    assert iv.extra["base"] == "cr2" and "logit" not in iv.label


@pytest.mark.parametrize("i", range(4))
def test_calibrated_macro_literal(i):
    t = tables()[i]
    n, s = t.n, t.s
    K, B, seed, alpha = n.size, 399, 11, 0.05
    idx = lit_draws(K, B, seed)
    r = s / n
    rbar = r.mean()
    lg = 0 < rbar < 1
    g = lit_logit if lg else (lambda x: x)
    us = []
    for row in idx:
        rb = r[row]
        m = rb.mean()
        se_b = rb.std(ddof=1) / math.sqrt(K)
        if len(set(rb.tolist())) == 1 or se_b == 0 or (lg and not 0 < m < 1):
            continue
        us.append(stats.t.cdf((g(m) - g(rbar)) / (se_b / (m * (1 - m))), K - 1))
    ulo, uhi = np.quantile(us, [alpha / 2, 1 - alpha / 2])
    se = r.std(ddof=1) / math.sqrt(K) / (rbar * (1 - rbar))
    lo = lit_expit(g(rbar) - se * stats.t.ppf(uhi, K - 1))
    hi = lit_expit(g(rbar) - se * stats.t.ppf(ulo, K - 1))
    iv = estimate(t, replicates=B, seed=seed).interval("macro", "calibrated")
    assert (iv.ci.low, iv.ci.high) == pytest.approx((lo, hi), rel=1e-9)
    assert iv.extra["base"] == "logit_t" and iv.role == "alternative"


def test_replicate_cr2_and_df_equal_the_drawn_samples_own():
    from perdoc import micro
    t = make_table(K=9, seed=8)
    d = document_bootstrap(t.n, t.s, 200, seed=2)
    idx = lit_draws(t.K, 200, 2)
    for b in range(200):
        if d.degenerate[b]:
            assert d.micro_se_cr2[b] == 0
            continue
        nb, sb = t.n[idx[b]], t.s[idx[b]]
        assert d.micro_se_cr2[b] == pytest.approx(math.sqrt(micro.var_cr2(nb, sb)), rel=1e-10)
        assert d.micro_df[b] == pytest.approx(micro.df_bell_mccaffrey(nb), rel=1e-12)
        assert d.micro_df[b] == pytest.approx(lit_bm_df(list(nb)), rel=1e-10)


def pairs_table(K=12, seed=3, bounded=True):
    rng = np.random.default_rng(seed)
    n = rng.integers(3, 20, K).astype(float)
    a = [rng.binomial(1, 0.45, int(k)).astype(float) for k in n]
    b = [np.where(rng.random(int(k)) < 0.7, x, 1 - x) for x, k in zip(a, n)]
    if not bounded:
        a = [x * 3 - 1 for x in a]
    sa, sb = [x.sum() for x in a], [y.sum() for y in b]
    qa, qb = [(x * x).sum() for x in a], [(y * y).sum() for y in b]
    qd = [((x - y) ** 2).sum() for x, y in zip(a, b)]
    return PairTable.build(doc=[f"d{i:02d}" for i in range(K)], n_a=n, s_a=sa, q_a=qa, n_b=n, s_b=sb, q_b=qb,
                           q_d=qd), a, b


def test_atanh_cr2_literal_and_swap_symmetry():
    p, a, b = pairs_table()
    n = list(p.n_a)
    D = [x - y for x, y in zip(p.s_a, p.s_b)]
    c = compare(p, replicates=0, level=0.9)
    iv = c.difference.interval("micro", "atanh_cr2")
    Dm = sum(D) / sum(n)
    se = lit_cr2_se(n, D)
    df = lit_bm_df(n)
    se_z = se / (1 - Dm * Dm)
    tq = stats.t.ppf(0.95, df)
    assert iv.ci.low == pytest.approx(math.tanh(math.atanh(Dm) - tq * se_z), rel=1e-10)
    assert iv.ci.high == pytest.approx(math.tanh(math.atanh(Dm) + tq * se_z), rel=1e-10)
    assert iv.extra["se_atanh"] == pytest.approx(se_z, rel=1e-12)
    assert -1 <= iv.ci.low <= iv.ci.high <= 1 and iv.role == "alternative"
    # B - A gives the mirrored interval
    swapped = PairTable.build(doc=p.doc, n_a=p.n_b, s_a=p.s_b, q_a=p.q_b, n_b=p.n_a, s_b=p.s_a, q_b=p.q_a,
                              q_d=p.q_d)
    sw = compare(swapped, replicates=0, level=0.9).difference.interval("micro", "atanh_cr2")
    assert (sw.ci.low, sw.ci.high) == pytest.approx((-iv.ci.high, -iv.ci.low), rel=1e-12)
    # the logit methods do not apply to a difference, nor does atanh to a single system
    assert "logit_cr2" not in c.to_dict()["difference"]["micro"]
    assert "atanh_cr2" not in estimate(make_table(), replicates=0).to_dict()["micro"]


# ====================================================================== invariances
@pytest.mark.parametrize("seed", range(5))
def test_logit_intervals_inside_unit_interval(seed):
    t = make_table(K=4 + seed, seed=seed)
    e = estimate(t, replicates=299, seed=seed)
    for m in ("logit_cr2", "bootstrap_t_logit", "calibrated"):
        iv = e.interval("micro", m)
        if iv.ci is not None:
            assert 0 <= iv.ci.low <= iv.estimate <= iv.ci.high <= 1, m
            assert not iv.out_of_range
    iv = e.interval("macro", "calibrated")
    assert iv.ci is None or 0 <= iv.ci.low <= iv.ci.high <= 1


def test_logit_cr2_of_complement_is_reflected():
    t = make_table(K=15, seed=6)
    c = DocTable.from_arrays(n=t.n, s=t.n - t.s, q=t.n - t.s)
    for m in ("logit_cr2", "bootstrap_t_logit", "calibrated"):
        a = estimate(t, replicates=199, seed=1).interval("micro", m)
        b = estimate(c, replicates=199, seed=1).interval("micro", m)
        assert b.estimate == pytest.approx(1 - a.estimate, rel=1e-12)
        assert (b.ci.low, b.ci.high) == pytest.approx((1 - a.ci.high, 1 - a.ci.low), rel=1e-9, abs=1e-12), m
    a = estimate(t, replicates=199, seed=1).interval("macro", "calibrated")
    b = estimate(c, replicates=199, seed=1).interval("macro", "calibrated")
    assert (b.ci.low, b.ci.high) == pytest.approx((1 - a.ci.high, 1 - a.ci.low), rel=1e-9, abs=1e-12)


def test_calibrated_with_the_same_draws_as_bootstrap_t():
    t = make_table(K=10, seed=2)
    e = estimate(t, replicates=499, seed=4)
    for m in ("bootstrap_t", "bootstrap_t_logit", "calibrated"):
        assert e.interval("micro", m).extra["degenerate_fraction"] == \
            e.interval("micro", "bootstrap_t").extra["degenerate_fraction"]


# ====================================================================== degenerate cases
def test_rate_zero_or_one_gives_logit_reason():
    for s in ([0, 0, 0, 0], [3, 4, 5, 2]):
        t = DocTable.from_arrays(n=[3, 4, 5, 2], s=s)
        e = estimate(t, replicates=99)
        for m in ("logit_cr2", "bootstrap_t_logit"):
            iv = e.interval("micro", m)
            assert iv.ci is None and "logit scale is undefined at a rate of 0 or 1" in iv.reason, m
        for est in ("micro", "macro"):
            iv = e.interval(est, "calibrated")
            assert iv.ci is None and "same rate" in iv.reason
        assert e.interval("micro", "jackknife_bc").ci is None


def test_no_spread_gives_reason():
    t = DocTable.from_arrays(n=[4, 4, 4], s=[2, 2, 2])
    e = estimate(t, replicates=99)
    for m in ("logit_cr2", "bootstrap_t_logit", "jackknife_bc", "calibrated"):
        iv = e.interval("micro", m)
        assert iv.ci is None and "zero variance" in iv.reason, m


def test_unbounded_metric_gives_reason_and_others_still_work():
    rng = np.random.default_rng(0)
    n = rng.integers(2, 9, 10).astype(float)
    s = rng.normal(0, 2, 10) * n
    t = DocTable.from_arrays(n=n, s=s, q=s * s / n + n)
    e = estimate(t, replicates=99)
    assert e.metric_range is None
    for m in ("logit_cr2", "bootstrap_t_logit"):
        iv = e.interval("micro", m)
        assert iv.ci is None and iv.reason == "defined for metrics bounded in [0, 1]" and iv.se is None
    assert e.interval("micro", "calibrated").ci is not None
    assert e.interval("micro", "jackknife_bc").ci is not None
    p, _, _ = pairs_table(bounded=False)
    iv = compare(p, replicates=0).difference.interval("micro", "atanh_cr2")
    assert iv.ci is None and iv.reason == "defined for differences of two metrics bounded in [0, 1]"


def test_atanh_at_plus_minus_one():
    n = np.array([3.0, 4, 5])
    p = PairTable.build(doc=["a", "b", "c"], n_a=n, s_a=n, q_a=n, n_b=n, s_b=0 * n, q_b=0 * n, q_d=n)
    iv = compare(p, replicates=0).difference.interval("micro", "atanh_cr2")
    assert iv.ci is None and "atanh scale is undefined" in iv.reason


def test_census_gives_the_estimate():
    t = make_table(K=8, seed=3)
    e = estimate(t, replicates=99, population_size=8)
    for m in NEW_MICRO:
        iv = e.interval("micro", m)
        assert iv.ci.low == iv.ci.high == e.micro_estimate, m
    assert e.interval("macro", "calibrated").ci.low == e.macro_estimate


def test_json_contract_of_new_methods():
    import json
    d = json.loads(json.dumps(estimate(make_table(K=9), replicates=99).to_dict()))
    for m in NEW_MICRO:
        want = "primary" if m == "logit_cr2" else "alternative"   # perdoc.policy's default for 0/1 data
        assert d["micro"][m]["role"] == want and d["micro"][m]["ci"] is not None
    assert d["micro"]["cr2"]["role"] == "alternative" and d["macro"]["bootstrap_t"]["role"] == "primary"
    assert d["macro"]["calibrated"]["base"] == "logit_t"
    assert d["micro"]["calibrated"]["replicates"] == 99


# ====================================================================== simulation = estimate, exactly
def assert_exact(ri, i, e, names):
    for name in names:
        est, method = name.split(".")
        iv = e.interval(est, method)
        lo, hi = ri.low[name][i], ri.high[name][i]
        assert ri.estimate[name][i] == iv.estimate, name
        if iv.ci is None:
            if "unbounded" in (iv.reason or ""):
                assert np.isinf(lo) or np.isinf(hi), name
            else:
                assert np.isnan(lo) and np.isnan(hi), (name, iv.reason)
        else:
            assert (lo, hi) == (iv.ci.low, iv.ci.high), name


def census_proportion(M=200, seed=3):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 30, M).astype(float)
    p = rng.beta(0.7, 2.5, M)
    s = np.zeros(M)
    q = np.zeros(M)
    for d in range(M):
        y = rng.beta(p[d] * 4 + 0.1, 4, int(n[d]))
        s[d], q[d] = y.sum(), (y * y).sum()
    return DocTable.from_arrays(n=n, s=s, q=q)


@pytest.mark.parametrize("census, k, B", [
    (make_table(K=300, seed=11), 12, 199),
    (make_table(K=300, seed=11), 3, 99),
    (census_proportion(), 8, 149),
])
def test_simulation_equals_estimate_for_new_methods(census, k, B):
    ri = sim.rep_intervals(census, k=k, reps=8, seed=5, replicates=B)
    names = ["micro." + m for m in NEW_MICRO] + ["macro.calibrated"]
    assert set(names) <= set(ri.methods)
    for i in range(8):
        e = estimate(census.take(ri.index[i]), population_size=census.K, replicates=B, seed=int(ri.seeds[i]))
        assert_exact(ri, i, e, names)


def test_simulation_calibrated_base_follows_each_sample():
    # one document with rates above 1: the census is not bounded, samples without it are
    c = census_proportion(M=60, seed=1)
    s = c.s.copy()
    q = c.q.copy()
    s[0], q[0] = 2.5 * c.n[0], 6.25 * c.n[0]
    c = DocTable.from_arrays(n=c.n, s=s, q=q)
    ri = sim.rep_intervals(c, k=5, reps=25, seed=2, replicates=99)
    assert "micro.logit_cr2" not in ri.methods and "micro.calibrated" in ri.methods
    bases = set()
    for i in range(25):
        e = estimate(c.take(ri.index[i]), population_size=c.K, replicates=99, seed=int(ri.seeds[i]))
        assert_exact(ri, i, e, ["micro.jackknife_bc", "micro.calibrated", "macro.calibrated"])
        bases.add(e.interval("micro", "calibrated").extra["base"])
    assert bases == {"cr2", "logit_cr2"}


def test_paired_simulation_equals_compare_for_atanh():
    p, _, _ = pairs_table(K=80, seed=7)
    ri = sim.rep_intervals(p, k=8, reps=6, seed=1, replicates=49)
    names = ["micro.atanh_cr2", "micro.jackknife_bc", "micro.calibrated", "macro.calibrated"]
    assert set(names) <= set(ri.methods) and "micro.logit_cr2" not in ri.methods
    for i in range(6):
        idx = ri.index[i]
        sub = PairTable.build(doc=p.doc[idx], n_a=p.n_a[idx], s_a=p.s_a[idx], q_a=p.q_a[idx], n_b=p.n_b[idx],
                              s_b=p.s_b[idx], q_b=p.q_b[idx], q_d=p.q_d[idx])
        cmp = compare(sub, population_size=p.K, replicates=49, seed=int(ri.seeds[i]))
        assert_exact(ri, i, cmp.difference, names)
    res = sim.simulate_pairs(p, k=8, reps=50, seed=1, replicates=49)
    assert "micro.atanh_cr2" in res.methods


def test_simulation_rmse_of_jackknife_uses_its_own_estimate():
    c = make_table(K=200, seed=4)
    ri = sim.rep_intervals(c, k=6, reps=40, seed=3, replicates=0)
    res = sim.simulate(c, k=6, reps=40, seed=3, replicates=0)
    truth = res.truth["micro"]
    assert not np.array_equal(ri.estimate["micro.jackknife_bc"], ri.estimate["micro.cr2"])
    assert res.methods["micro.jackknife_bc"]["rmse"] == pytest.approx(
        np.sqrt(np.mean((ri.estimate["micro.jackknife_bc"] - truth) ** 2)))


# ====================================================================== miss rates
def _check_miss(res, ri):
    for name, m in res.methods.items():
        total = m["coverage"] + m["miss_low"] + m["miss_high"] + m["no_interval"] + m.get("miss_gap", 0.0)
        assert total == pytest.approx(1.0, abs=1e-12), name
        truth = res.truth[name.split(".")[0]]
        lo, hi = ri.low[name], ri.high[name]
        with np.errstate(invalid="ignore"):
            assert m["miss_low"] == pytest.approx(np.mean(hi < truth)), name   # NaN compares False
            assert m["miss_high"] == pytest.approx(np.mean(lo > truth)), name


@pytest.mark.parametrize("k", [2, 5, 12])
def test_miss_rates_sum_with_coverage_and_no_interval_to_one(k):
    c = make_table(K=300, seed=11)
    kw = dict(k=k, reps=80, seed=4, replicates=99)
    res = sim.simulate(c, **kw)
    _check_miss(res, sim.rep_intervals(c, **kw))
    d = res.to_dict()
    assert {"miss_low", "miss_high"} <= set(d["methods"]["micro.cr2"]) and "miss_gap" in d["methods"]["micro.wild"]
    f = res.to_frame()
    assert {"miss_low", "miss_high"} <= set(f.columns)


def test_miss_rates_with_samples_without_interval():
    n = np.full(200, 5.0)
    s = np.zeros(200)
    s[:6] = [1, 2, 1, 3, 1, 5]
    sparse = DocTable.from_arrays(n=n, s=s)
    kw = dict(k=5, reps=60, seed=1, replicates=49)
    res = sim.simulate(sparse, **kw)
    assert res.methods["micro.cr2"]["no_interval"] > 0.3
    _check_miss(res, sim.rep_intervals(sparse, **kw))


def test_miss_rates_of_a_wild_set_in_pieces_use_its_hull():
    rng = np.random.default_rng(0)
    M = 40
    n = rng.integers(2, 15, M).astype(float)
    n[:3] = [150, 120, 90]
    s = rng.binomial(n.astype(int), rng.beta(1, 2, M)).astype(float)
    c = DocTable.from_arrays(n=n, s=s, q=s.copy())
    kw = dict(k=11, reps=60, seed=0, replicates=999)
    res = sim.simulate(c, **kw)
    ri = sim.rep_intervals(c, **kw)
    _check_miss(res, ri)
    rep, lo, hi = ri.pieces["micro.wild"]
    truth = res.truth["micro"]
    inside_hull = (ri.low["micro.wild"] <= truth) & (truth <= ri.high["micro.wild"])
    covered = np.zeros(60, dtype=bool)
    covered[rep[(lo <= truth) & (truth <= hi)]] = True
    assert res.methods["micro.wild"]["miss_gap"] == pytest.approx(np.mean(inside_hull & ~covered))


def test_paired_simulation_miss_rates():
    p, _, _ = pairs_table(K=80, seed=7)
    kw = dict(k=8, reps=40, seed=1, replicates=49)
    _check_miss(sim.simulate_pairs(p, **kw), sim.rep_intervals(p, **kw))


def test_calibrated_with_one_df_equals_the_same_df_per_replicate():
    """One df for every replicate takes the t distribution function at the needed order statistics
    only: the same bits as evaluating it at every replicate."""
    from perdoc.methods import intervals as m
    rng = np.random.default_rng(4)
    rows, B = 50, 199
    theta, se = rng.normal(size=rows), rng.uniform(0.1, 1.0, rows)
    theta_s, se_s = theta[:, None] + rng.normal(size=(rows, B)), rng.uniform(0.05, 1.5, (rows, B))
    usable = rng.uniform(size=(rows, B)) > 0.1
    usable[0] = False                       # a row with no usable replicate: no interval
    flat = np.zeros(rows, dtype=bool)
    lg = rng.uniform(size=rows) > 0.5
    one = m.calibrated(theta, se, 9.0, theta_s, se_s, 9.0, usable, 0.05, flat, lg)
    each = m.calibrated(theta, se, 9.0, theta_s, se_s, np.full((rows, B), 9.0), usable, 0.05, flat, lg)
    for a, b in zip(one, each):
        assert np.array_equal(a, b, equal_nan=True)
    assert np.isnan(one[0][0]) and np.isfinite(one[0][1:]).all()
