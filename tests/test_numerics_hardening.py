"""Numerics over the whole double range (power-of-two rescaling, DocTable.scale), bounds on the
parameters, the wild bootstrap's confidence set found whole (every piece), and the out_of_range flag
of intervals for bounded metrics."""

import dataclasses
import json
import math

import numpy as np
import pytest

from perdoc import DocTable, ParameterError, estimate, estimate_design
from perdoc import micro
from perdoc import simulate as sim
from perdoc.compare import PairTable, compare
from perdoc.wild import weights_matrix, wild_interval

from conftest import make_table


# ====================================================================== helpers
def signed_table(K=14, seed=3, with_q=True):
    """Scores of both signs: no rate-based 0/1 assumption, so q may be omitted."""
    rng = np.random.default_rng(seed)
    n = np.maximum(1, np.round(rng.lognormal(2.0, 0.9, K))).astype(float)
    s = np.zeros(K)
    q = np.zeros(K)
    for d in range(K):
        y = rng.normal(rng.normal(0.2, 0.5), 0.7, int(n[d]))
        s[d], q[d] = y.sum(), (y * y).sum()
    return DocTable.from_arrays(n=n, s=s, q=q if with_q else None)


def rescale(t: DocTable, e: int, *, scale_exp: int = 0) -> DocTable:
    """The table with stored sums times 2^e (q times 2^2e) and DocTable.scale = 2^scale_exp."""
    out = DocTable.from_arrays(n=t.n, s=np.ldexp(t.s, e), q=None if t.q is None else np.ldexp(t.q, 2 * e),
                               doc=t.doc, source=t.source)
    assert t.q is None or out.q is not None
    return dataclasses.replace(out, scale=math.ldexp(1.0, scale_exp)) if scale_exp else out


LOCATION_EXTRA = {"pieces"}


def same_scaled(got, ref, e, *, bounded_methods=()):
    """Every location/scale number of ``got`` is exactly 2^e times ``ref``'s; the rest is equal."""
    f = lambda x: None if x is None else math.ldexp(x, e)  # noqa: E731
    assert got.micro_estimate == f(ref.micro_estimate)
    assert got.macro_estimate == f(ref.macro_estimate)
    assert [(iv.estimand, iv.method) for iv in got.intervals] == [(iv.estimand, iv.method) for iv in ref.intervals]
    for g, r in zip(got.intervals, ref.intervals):
        name = f"{g.estimand}.{g.method}"
        k = 0 if g.method in bounded_methods else e
        h = lambda x: None if x is None else math.ldexp(x, k)  # noqa: E731
        assert g.estimate == h(r.estimate), name
        assert g.se == h(r.se), name
        assert g.df == r.df or (g.df != g.df and r.df != r.df), name
        assert g.reason == r.reason or (g.reason and r.reason and g.reason.split("(")[0] == r.reason.split("(")[0]), name
        if r.ci is None:
            assert g.ci is None, name
        else:
            assert (g.ci.low, g.ci.high) == (h(r.ci.low), h(r.ci.high)), name
            assert g.pieces == [(h(a), h(b)) for a, b in r.pieces], name
        assert {k2: v for k2, v in g.extra.items() if k2 not in LOCATION_EXTRA} == \
               {k2: v for k2, v in r.extra.items() if k2 not in LOCATION_EXTRA}, name
        assert g.out_of_range == r.out_of_range, name
    gd, rd = got.diagnostics.to_dict(), ref.diagnostics.to_dict()
    for key in ("icc", "deff", "n_eff", "deff_realised", "g_star", "max_share", "frac_rate_0", "frac_rate_1",
                "n_quantiles"):
        assert gd[key] == rd[key], key
    assert got.diagnostics.rate_quantiles == {k2: f(v) for k2, v in ref.diagnostics.rate_quantiles.items()}
    if ref.bootstrap:
        for a in ("micro", "micro_se", "macro", "macro_se"):
            assert np.array_equal(getattr(got.bootstrap["draws"], a), np.ldexp(getattr(ref.bootstrap["draws"], a), e))


# ====================================================================== 1. the whole double range
@pytest.mark.parametrize("e", [-560, 600, -1000 + 40])
def test_estimate_exact_under_power_of_two_scaling_without_q(e):
    # scores near 1e-169, 1e180 and 1e-289: products like u_d^2 under- or overflow unless rescaled
    t = signed_table(with_q=False)
    ref = estimate(t, replicates=199, seed=4)
    got = estimate(rescale(t, e), replicates=199, seed=4)
    same_scaled(got, ref, e)
    assert got.interval("micro", "cr1").se > 0


@pytest.mark.parametrize("e", [-400, 450])
def test_estimate_exact_under_scaling_with_q(e):
    t = signed_table()
    ref = estimate(t, replicates=199, seed=2, population_size=40)
    same_scaled(estimate(rescale(t, e), replicates=199, seed=2, population_size=40), ref, e)


@pytest.mark.parametrize("stored_exp, scale_exp", [(0, -600), (0, 560), (-300, 260), (200, 700)])
def test_table_scale_is_divided_out(stored_exp, scale_exp):
    # stored sums = scale * true sums: true scores are 2^(stored_exp - scale_exp) times t's
    t = signed_table()
    ref = estimate(t, replicates=99, seed=1)
    got = estimate(rescale(t, stored_exp, scale_exp=scale_exp), replicates=99, seed=1)
    same_scaled(got, ref, stored_exp - scale_exp)


def test_bounded_methods_on_scaled_binary_table():
    t = make_table(K=15, seed=7)
    ref = estimate(t, replicates=99, seed=3)
    stored = dataclasses.replace(rescale(t, -300, scale_exp=-300), source={"binary": True})
    got = estimate(stored, replicates=99, seed=3)
    same_scaled(got, ref, 0)  # the true scores are t's own
    assert got.interval("micro", "korn_graubard").ci is not None
    assert got.metric_range == (0.0, 1.0)


def test_tiny_scores_standard_error_regression():
    # on the stored values, sum u_d^2 underflows: a 5% error near 1e-160, zero below 1e-170
    t = signed_table(with_q=False)
    for e in (-530, -565):
        se = estimate(rescale(t, e), replicates=0).interval("micro", "cr2").se
        assert se == math.ldexp(estimate(t, replicates=0).interval("micro", "cr2").se, e)


def test_huge_scores_do_not_overflow():
    t = signed_table(with_q=False)
    got = estimate(rescale(t, 680), replicates=0)  # scores about 1e204: squares overflow
    ref = estimate(t, replicates=0)
    assert got.interval("micro", "cr1").ci.high == math.ldexp(ref.interval("micro", "cr1").ci.high, 680)


def test_imbens_kolesar_df_scale_free_inside_the_neutral_range():
    # rates near 1e-90 are computed on as stored, but the df's traces hold fourth powers
    t = signed_table()
    for e in (-300, 290):
        assert micro.df_imbens_kolesar(t.n, np.ldexp(t.s, e), np.ldexp(t.q, 2 * e)) == \
            micro.df_imbens_kolesar(t.n, t.s, t.q)


def test_ordinary_data_computed_as_stored():
    t = make_table(K=12, seed=1)
    assert micro.working_exponents(t.n, t.s) == (0, 0)
    assert micro.working_exponents(t.n, np.ldexp(t.s, -300)) == (0, 0)
    j, k = micro.working_exponents(t.n, np.ldexp(t.s, -400), scale=2.0**-10)
    assert j > 300 and k == j - 10


def _largest_rate_exponent(n, s):
    # the exponent of max |s_d| / n_d from the exponents of s_d and n_d (never overflows)
    nz = s != 0
    fs, es = np.frexp(np.abs(s[nz]))
    fn, en = np.frexp(n[nz])
    return int(np.max(es - en + np.frexp(fs / fn)[1]))


@pytest.mark.parametrize("seed", range(6))
def test_working_exponents_agree_with_the_exponent_arithmetic(seed):
    # the fast path (the largest quotient when it is a normal double) and the exponent arithmetic
    # give the same j at every magnitude, also next to a power of two and past the double range
    rng = np.random.default_rng(seed)
    n = np.floor(rng.lognormal(2.0, 1.5, 500)) + 1
    for e in (-1074, -1060, -1020, -1000, -400, -333, -332, -100, 0, 100, 332, 333, 900, 1000, 1010):
        for s in (np.ldexp(rng.random(500) * n, e), np.ldexp(n * (1 - 2.0 ** -52), e),
                  np.ldexp(-n * rng.integers(0, 2, 500), e)):
            if not np.any(s != 0):
                assert micro.working_exponents(n, s) == (0, 0)
                continue
            want = _largest_rate_exponent(n, s)
            j = 0 if -micro.NEUTRAL_EXPONENT <= want <= micro.NEUTRAL_EXPONENT else -want
            assert micro.working_exponents(n, s) == (j, j)


def test_scale_must_be_power_of_two():
    t = dataclasses.replace(signed_table(), scale=3.0)
    with pytest.raises(Exception, match="power of two"):
        estimate(t, replicates=0)


def _pairs(scale_e=0, stored_e=0, seed=5, K=12):
    rng = np.random.default_rng(seed)
    n = rng.integers(2, 20, K).astype(float)
    a = [rng.normal(0.3, 0.6, int(m)) for m in n]
    b = [x + rng.normal(0.1, 0.3, x.size) for x in a]
    f = lambda v, p=1: np.ldexp(np.array(v), p * stored_e)  # noqa: E731
    pt = PairTable.build(doc=[f"d{i}" for i in range(K)], n_a=n, s_a=f([x.sum() for x in a]),
                         q_a=f([(x * x).sum() for x in a], 2), n_b=n, s_b=f([x.sum() for x in b]),
                         q_b=f([(x * x).sum() for x in b], 2), q_d=f([((x - y) ** 2).sum() for x, y in zip(a, b)], 2))
    return dataclasses.replace(pt, scale=math.ldexp(1.0, scale_e)) if scale_e else pt


@pytest.mark.parametrize("stored_e, scale_e", [(-400, 0), (450, 0), (0, -600), (0, 560)])
def test_compare_exact_under_scaling(stored_e, scale_e):
    e = stored_e - scale_e
    ref = compare(_pairs(), replicates=99, seed=2)
    got = compare(_pairs(scale_e, stored_e), replicates=99, seed=2)
    same_scaled(got.difference, ref.difference, e)
    for g, r in zip(got.systems, ref.systems):
        same_scaled(g, r, e)
    assert got.randomization == ref.randomization and got.correlation == ref.correlation
    for key in ("micro", "macro"):
        # squared units: beyond the double range they are infinite, as they truly are
        assert got.covariance[key] == {k: micro.ldexp(v, 2 * e) for k, v in ref.covariance[key].items()}


def test_compare_unpaired_exact_under_scaling():
    def unpaired(p):
        n_b = p.n_b.copy()
        n_b[0] = 0.0
        s_b, q_b = p.s_b.copy(), p.q_b.copy()
        s_b[0] = q_b[0] = 0.0
        return dataclasses.replace(p, n_b=n_b, s_b=s_b, q_b=q_b, q_d=None, paired=False)
    ref = compare(unpaired(_pairs()), replicates=0)
    got = compare(unpaired(_pairs(0, -560)), replicates=0)
    for g, r in zip(got.unpaired, ref.unpaired):
        assert (g.estimate, g.se, g.ci.low, g.ci.high) == tuple(math.ldexp(x, -560) for x in
                                                               (r.estimate, r.se, r.ci.low, r.ci.high))


@pytest.mark.parametrize("stored_e, scale_e", [(-400, 0), (0, -600)])
def test_estimate_design_exact_under_scaling(stored_e, scale_e):
    e = stored_e - scale_e
    t = signed_table(K=16)
    labels = np.array(["x", "y"] * 8)
    strat = {"sampling": "stratified", "strata": {"by": labels, "population_sizes": {"x": 50, "y": 80}}}
    two = {"sampling": "two_stage", "population_size": 60, "chunks_in_doc": np.where(t.n < 2, t.n, 3 * t.n)}
    for design in (strat, two):
        same_scaled(estimate_design(rescale(t, stored_e, scale_exp=scale_e), design=design),
                    estimate_design(t, design=design), e)


def _same_sim(got, ref, e):
    assert got.truth == {k: math.ldexp(v, e) for k, v in ref.truth.items()}
    for m, r in ref.methods.items():
        g = got.methods[m]
        for key in ("coverage", "mc_se", "no_interval", "infinite", "n"):
            assert g[key] == r[key], (m, key)
        for key in ("mean_width", "rmse"):
            assert g[key] == math.ldexp(r[key], e) or (g[key] != g[key] and r[key] != r[key]), (m, key)
    assert got.recommended == ref.recommended


@pytest.mark.parametrize("stored_e, scale_e, with_q", [(-560, 0, False), (600, 0, False), (-400, 0, True),
                                                       (0, -600, True)])
def test_simulation_exact_under_scaling(stored_e, scale_e, with_q):
    e = stored_e - scale_e
    census = signed_table(K=60, seed=9, with_q=with_q)
    kw = dict(k=8, reps=30, seed=3, replicates=49)
    ref = sim.simulate(census, **kw)
    scaled = rescale(census, stored_e, scale_exp=scale_e)
    _same_sim(sim.simulate(scaled, **kw), ref, e)
    ri, rr = sim.rep_intervals(scaled, **kw), sim.rep_intervals(census, **kw)
    for m in rr.methods:
        for a in ("estimate", "low", "high"):
            assert np.array_equal(getattr(ri, a)[m], np.ldexp(getattr(rr, a)[m], e), equal_nan=True), (m, a)
    assert np.array_equal(ri.pieces["micro.wild"][1], np.ldexp(rr.pieces["micro.wild"][1], e))
    # and each repetition is still the library's own estimate
    i = 4
    est = estimate(scaled.take(ri.index[i]), population_size=census.K, replicates=49, seed=int(ri.seeds[i]))
    for iv in est.intervals:
        name = f"{iv.estimand}.{iv.method}"
        if name in ri.low and iv.ci is not None:
            assert (iv.ci.low, iv.ci.high) == (ri.low[name][i], ri.high[name][i]), name


def test_simulation_of_scaled_binary_census_keeps_bounded_methods():
    c = make_table(K=80, seed=2)
    stored = dataclasses.replace(rescale(c, -300, scale_exp=-300), source={"binary": True})
    kw = dict(k=6, reps=20, seed=1, replicates=29)
    ref, got = sim.simulate(c, **kw), sim.simulate(stored, **kw)
    assert "micro.korn_graubard" in got.methods
    _same_sim(got, ref, 0)


def test_paired_simulation_exact_under_scale():
    p = _pairs(K=30)
    kw = dict(k=6, reps=15, seed=2, replicates=29)
    _same_sim(sim.simulate_pairs(dataclasses.replace(p, scale=2.0**-600), **kw), sim.simulate_pairs(p, **kw), 600)


# ====================================================================== 2. bounds up front
def test_replicates_bound_everywhere():
    t = make_table(K=10, seed=1)
    for call in (lambda: estimate(t, replicates=10**9),
                 lambda: estimate_design(t, design={"sampling": "srs"}, replicates=10**9),
                 lambda: compare(_pairs(), replicates=10**9),
                 lambda: sim.simulate(make_table(K=50), k=5, reps=3, replicates=10**9)):
        with pytest.raises(ParameterError, match=r"replicates must be at most 1,000,000"):
            call()
    estimate(t, replicates=0)  # still fine


def test_simulation_size_bounds():
    c = make_table(K=50)
    with pytest.raises(ParameterError, match=r"reps must be at most 1,000,000"):
        sim.simulate(c, k=5, reps=10**12, replicates=0)
    big = make_table(K=2000, seed=1)
    with pytest.raises(ParameterError, match=r"replicates x k must be at most"):
        sim.simulate(big, k=1500, reps=2, replicates=999_999)
    with pytest.raises(ParameterError, match="below the number"):
        sim.simulate(c, k=10**15, reps=2, replicates=0)


@pytest.mark.parametrize("M", [10**400, 1e300, 2**53 + 2, float("inf"), float("nan")])
def test_population_size_bounds(M):
    t = make_table(K=10)
    with pytest.raises(ParameterError, match="population size"):
        estimate(t, replicates=0, population_size=M)
    with pytest.raises(ParameterError, match="population"):
        estimate_design(t, design={"sampling": "two_stage", "population_size": M, "chunks_in_doc": t.n})
    with pytest.raises(ParameterError, match="population"):
        estimate_design(t, design={"sampling": "stratified",
                                   "strata": {"by": ["a"] * 5 + ["b"] * 5, "population_sizes": {"a": M, "b": 9}}})
    assert estimate(t, replicates=0, population_size=2**53).population_size == 2**53


@pytest.mark.parametrize("level", [1 - 1e-16, 1 - 1e-12, 1e-300, 5e-324, 1e-12])
def test_level_bounds(level):
    t = make_table(K=10)
    for call in (lambda: estimate(t, replicates=0, level=level), lambda: compare(_pairs(), level=level),
                 lambda: sim.simulate(make_table(K=40), k=5, reps=2, level=level, replicates=0)):
        with pytest.raises(ParameterError, match="level must"):
            call()
    for ok in (1e-9, 1 - 1e-9):
        d = estimate(t, replicates=99, level=ok).to_dict()
        json.dumps(d)


def test_cli_replicates_bound_is_one_line(capsys):
    from pathlib import Path
    from perdoc.cli import main
    data = Path(__file__).resolve().parents[1] / "data" / "example" / "sample.csv"
    assert main(["estimate", str(data), "--doc", "doc_id", "--score", "bm25", "--replicates", "1000000000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "replicates must be at most 1,000,000" in err[0]


# ====================================================================== 3. the wild confidence set, whole
# one document with 60% of the chunks; 2^K <= 9999, so every Rademacher sign vector is used
TWO_PIECES = {
    "k11": ([88, 3, 2, 3, 2, 7, 11, 4, 5, 13, 9], [53, 3, 0, 0, 0, 0, 3, 1, 3, 1, 0]),
    "k12": ([90, 3, 3, 5, 2, 8, 9, 4, 6, 6, 4, 10], [36, 0, 1, 0, 0, 0, 0, 1, 1, 2, 0, 2]),
}


def brute_p(n, s, grid, v):
    """p(mu0) by the literal refit: y* = mu0 n + v (s - mu0 n), ratio and CR1 refitted, |t*| >= |t|."""
    K, N = n.size, n.sum()
    R = s.sum() / N
    se = math.sqrt(K / (K - 1) * np.sum((s - R * n) ** 2)) / N
    out = np.empty(grid.size)
    for i, mu0 in enumerate(grid):
        ystar = mu0 * n + v * (s - mu0 * n)                     # draws x documents
        Rs = ystar.sum(axis=1) / N
        ses = np.sqrt(K / (K - 1) * np.sum((ystar - Rs[:, None] * n) ** 2, axis=1)) / N
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = np.where(ses > 0, np.abs(Rs - mu0) / ses, np.inf)
        t = abs(R - mu0) / se
        out[i] = np.mean(ts >= t - 1e-10 * max(1.0, t))
    return out


@pytest.mark.parametrize("case", sorted(TWO_PIECES))
def test_wild_set_with_two_pieces_matches_brute_force(case):
    n, s = (np.array(x, float) for x in TWO_PIECES[case])
    assert n[0] / n.sum() == pytest.approx(0.6, abs=0.01)
    w = wild_interval(n, s)
    assert w.enumerated and w.weights == "rademacher"
    assert len(w.pieces) == 2 and not w.connected
    assert (w.low, w.high) == (w.pieces[0][0], w.pieces[-1][1])
    (a, b), (c, d) = w.pieces
    assert a < b < c < d
    R = s.sum() / n.sum()
    assert a <= R <= b  # the estimate lies in the first piece; the second is beyond a gap
    v, _, _ = weights_matrix(n.size, "rademacher")
    width = d - a
    grid = np.linspace(a - 0.5 * width, d + 0.5 * width, 6001)
    accept = brute_p(n, s, grid, v) > 0.05
    inside = np.zeros(grid.size, dtype=bool)
    for lo, hi in w.pieces:
        inside |= (grid >= lo) & (grid <= hi)
    near = np.zeros(grid.size, dtype=bool)
    for x in (a, b, c, d):
        near |= np.abs(grid - x) < 1e-9
    assert np.array_equal(accept[~near], inside[~near])
    # just inside and just outside every end
    eps = 1e-7
    for lo, hi in w.pieces:
        p = brute_p(n, s, np.array([lo + eps, hi - eps, lo - eps, hi + eps]), v)
        assert p[0] > 0.05 and p[1] > 0.05 and p[2] <= 0.05 and p[3] <= 0.05


def test_wild_pieces_in_estimate_json():
    n, s = TWO_PIECES["k11"]
    e = estimate(DocTable.from_arrays(n=n, s=s), replicates=9999)
    iv = e.interval("micro", "wild")
    d = json.loads(json.dumps(e.to_dict()))["micro"]["wild"]
    assert d["connected"] is False and len(d["pieces"]) == 2
    assert d["ci"] == [d["pieces"][0][0], d["pieces"][1][1]]
    assert any("not an interval" in note for note in d["notes"])
    assert iv.pieces == [tuple(p) for p in d["pieces"]]
    # with the finite population correction every piece shrinks towards the estimate
    ef = estimate(DocTable.from_arrays(n=n, s=s), replicates=9999, population_size=40)
    fpc = math.sqrt(1 - 11 / 40)
    R = e.micro_estimate
    want = [(R + fpc * (lo - R), R + fpc * (hi - R)) for lo, hi in iv.pieces]
    assert ef.interval("micro", "wild").pieces == want


def test_wild_connected_case_keys():
    t = make_table(K=20, seed=3)
    d = estimate(t, replicates=999).to_dict()["micro"]["wild"]
    assert d["connected"] is True and d["pieces"] == [d["ci"]]
    d = estimate(DocTable.from_arrays(n=[3, 4, 5], s=[0, 0, 0]), replicates=99).to_dict()["micro"]["wild"]
    assert d["ci"] is None and d["pieces"] is None and d["out_of_range"] is False


def test_wild_connected_set_is_the_stepping_interval():
    # where the set is one interval, its ends are where p first falls to alpha on either side
    from perdoc.wild import p_value
    t = make_table(K=14, seed=8)
    w = wild_interval(t.n, t.s, weights="rademacher")
    assert w.connected
    for b, outward in ((w.low, -1), (w.high, 1)):
        assert p_value(t.n, t.s, b - outward * 1e-7, "rademacher") > 0.05
        assert p_value(t.n, t.s, b + outward * 1e-7, "rademacher") <= 0.05


def _dominated_census():
    rng = np.random.default_rng(0)
    M = 40
    n = rng.integers(2, 15, M).astype(float)
    n[:3] = [150, 120, 90]
    s = rng.binomial(n.astype(int), rng.beta(1, 2, M)).astype(float)
    return DocTable.from_arrays(n=n, s=s, q=s.copy())


def test_simulation_pieces_equal_library_and_coverage_uses_them():
    c = _dominated_census()
    kw = dict(k=11, reps=40, seed=0, replicates=999)
    ri = sim.rep_intervals(c, **kw)
    rep, lo, hi = ri.pieces["micro.wild"]
    multi = np.flatnonzero(np.bincount(rep, minlength=40) > 1)
    assert multi.size >= 3
    for i in list(multi[:3]) + [0, 1]:
        e = estimate(c.take(ri.index[i]), population_size=c.K, replicates=999, seed=int(ri.seeds[i]))
        iv = e.interval("micro", "wild")
        assert ri.pieces_of("micro.wild", int(i)) == iv.pieces
        assert (ri.low["micro.wild"][i], ri.high["micro.wild"][i]) == (iv.ci.low, iv.ci.high)
    res = sim.simulate(c, **kw)
    truth = res.truth["micro"]
    covered = np.zeros(40, dtype=bool)
    covered[rep[(lo <= truth) & (truth <= hi)]] = True
    assert res.methods["micro.wild"]["coverage"] == covered.mean()


# ====================================================================== 4. out_of_range
def test_out_of_range_flag_for_binary_metric():
    t = DocTable.from_arrays(n=[10, 8, 7, 4, 5, 2], s=[10, 6, 5, 4, 4, 2])
    e = estimate(t, replicates=999)
    d = json.loads(json.dumps(e.to_dict()))
    assert d["metric_range"] == [0, 1]
    m = d["micro"]
    assert m["bootstrap_t"]["ci"][1] > 1 and m["bootstrap_t"]["out_of_range"] is True
    assert m["cr2"]["out_of_range"] is True and m["cr2_ik"]["out_of_range"] is True
    for method in ("korn_graubard", "logit", "wilson", "percentile"):
        assert m[method]["out_of_range"] is False
    for block in (m, d["macro"]):
        for method, iv in block.items():
            if isinstance(iv, dict) and iv.get("ci") is not None:
                lo, hi = iv["ci"]
                assert iv["out_of_range"] is (lo < 0 or hi > 1), method
    assert e.tidy()["out_of_range"].any()


def test_out_of_range_for_unit_interval_scores_and_not_for_others():
    rng = np.random.default_rng(1)
    n = np.array([3, 5, 2, 4], float)
    ys = [rng.uniform(lo, 1.0, int(k)) for lo, k in zip((0.95, 0.3, 0.97, 0.9), n)]
    s = np.array([y.sum() for y in ys])
    q = np.array([(y * y).sum() for y in ys])
    e = estimate(DocTable.from_arrays(n=n, s=s, q=q), replicates=199)
    assert e.metric_range == (0.0, 1.0)
    assert any(iv.out_of_range for iv in e.intervals)
    # the same rates with sums of squares no [0, 1] scores can give: not bounded, never flagged
    e2 = estimate(DocTable.from_arrays(n=n, s=s, q=q * 1.5), replicates=199)
    assert e2.metric_range is None and not any(iv.out_of_range for iv in e2.intervals)
    e3 = estimate(signed_table(), replicates=99)
    assert e3.to_dict()["metric_range"] is None
    assert all(v["out_of_range"] is False for v in e3.to_dict()["micro"].values() if isinstance(v, dict))


def test_out_of_range_for_differences_uses_minus_one_to_one():
    rng = np.random.default_rng(3)
    K = 6
    n = rng.integers(2, 6, K).astype(float)
    a = [rng.binomial(1, 0.9, int(k)).astype(float) for k in n]
    b = [np.zeros(int(k)) for k in n]
    b[0][:] = 1.0
    pt = PairTable.build(doc=[f"d{i}" for i in range(K)], n_a=n, s_a=[x.sum() for x in a], q_a=[x.sum() for x in a],
                         n_b=n, s_b=[x.sum() for x in b], q_b=[x.sum() for x in b],
                         q_d=[((x - y) ** 2).sum() for x, y in zip(a, b)])
    c = compare(pt, replicates=999)
    assert c.difference.metric_range == (-1.0, 1.0)
    d = c.to_dict()["difference"]["micro"]
    for method, iv in d.items():
        if isinstance(iv, dict) and iv.get("ci") is not None:
            lo, hi = iv["ci"]
            assert iv["out_of_range"] is (lo < -1 or hi > 1), method
    assert any(iv["out_of_range"] for iv in d.values() if isinstance(iv, dict))
    # differences of unbounded metrics are never flagged
    c2 = compare(_pairs(), replicates=0)
    assert c2.difference.metric_range is None


def test_design_intervals_carry_the_flag():
    t = make_table(K=12, seed=4)
    labels = np.array(["x", "y"] * 6)
    e = estimate_design(t, design={"sampling": "stratified",
                                   "strata": {"by": labels, "population_sizes": {"x": 30, "y": 30}}})
    d = e.to_dict()
    assert d["metric_range"] == [0.0, 1.0] and d["micro"]["design"]["out_of_range"] in (True, False)


def test_public_helpers_rescale_themselves():
    from perdoc.compare import sign_flip_test
    n, s = (np.array(x, float) for x in TWO_PIECES["k12"])
    w = wild_interval(n, s)
    for e in (-700, 800):
        we = wild_interval(n, np.ldexp(s, e))
        assert we.pieces == [(math.ldexp(a, e), math.ldexp(b, e)) for a, b in w.pieces]
    D = signed_table().s
    assert sign_flip_test(np.ldexp(D, 900)) == sign_flip_test(D) == sign_flip_test(np.ldexp(D, -1000))
