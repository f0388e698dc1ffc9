"""perdoc's own normal, t and beta quantiles (perdoc._quantiles through perdoc._dist) against scipy.

Agreement is asked to 1e-13 relative. Where scipy and perdoc differ by more, the test asks that
perdoc's quantile be at least as accurate as scipy's, judged by scipy's own distribution function
(``stdtr``, ``betainc``, ``ndtr``: the residual ``|F(x) - q|``); the cases found so far are scipy's
(``stdtrit`` near df = 2.5 is 1.6e-13 off, checked with 40-digit arithmetic).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from perdoc import _dist, _quantiles

RTOL = 1e-13
LIB = Path(__file__).resolve().parents[1] / "lib"


def log_uniform(lo, hi):
    return st.floats(np.log10(lo), np.log10(hi)).map(lambda e: float(10.0 ** e))


# probabilities from 1e-12 to 1 - 1e-12, both tails, the middle included
probs = st.one_of(
    log_uniform(1e-12, 0.5),
    log_uniform(1e-12, 0.5).map(lambda p: 1.0 - p),
    st.floats(0.3, 0.7),
    st.sampled_from([0.025, 0.975, 0.05, 0.95, 0.005, 0.995, 0.5]),
)
dfs = st.one_of(log_uniform(0.5, 1e7), st.integers(1, 10**7).map(float))
shapes = st.one_of(log_uniform(0.01, 1e6), st.integers(1, 10**6).map(float))


def close_or_better(mine, ref, residual, what):
    """``mine`` within RTOL of scipy's ``ref``, or no farther from the target (by ``residual``)."""
    mine, ref = float(mine), float(ref)
    if mine == ref or abs(mine - ref) <= RTOL * abs(ref):
        return
    rm, rr = residual(mine), residual(ref)
    assert rm <= rr * (1 + 1e-6) + 1e-300, f"{what}: perdoc {mine!r}, scipy {ref!r}, residuals {rm!r} vs {rr!r}"


@settings(max_examples=400, deadline=None, derandomize=True)
@given(q=st.one_of(probs, log_uniform(1e-300, 1e-12)))
def test_norm_quantile(q):
    mine = _dist.special().ndtri(q)
    assert isinstance(mine, np.float64)
    close_or_better(mine, sp.ndtri(q), lambda x: abs(sp.ndtr(x) - q) / q if q < 0.5 else abs(sp.ndtr(-x) - (1 - q)) / (1 - q),
                    f"ndtri({q!r})")
    assert _dist.norm_ppf(q) == float(mine)


def t_residual(df, q):
    # relative error of the smaller tail, where F is accurate; near the middle, of
    # P(|T| < |t|) = I_z(1/2, df/2), z = t^2 / (df + t^2), against |2q - 1| (exact there)
    if 0.25 <= q <= 0.75:
        return lambda t: abs(sp.betainc(0.5, df / 2, t * t / (df + t * t)) - abs(2 * q - 1)) / abs(2 * q - 1)
    if q < 0.5:
        return lambda t: abs(sp.stdtr(df, t) - q) / q
    return lambda t: abs(sp.stdtr(df, -t) - (1 - q)) / (1 - q)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(df=dfs, q=probs)
def test_t_quantile(df, q):
    mine = _dist.special().stdtrit(df, q)
    close_or_better(mine, sp.stdtrit(df, q), t_residual(df, q), f"stdtrit({df!r}, {q!r})")
    assert _dist.t_ppf(q, df) == float(mine)


def beta_residual(a, b, q):
    if q < 0.5:
        return lambda x: abs(sp.betainc(a, b, x) - q) / q
    return lambda x: abs(sp.betaincc(a, b, x) - (1 - q)) / (1 - q)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(a=shapes, b=shapes, q=probs)
def test_beta_quantile(a, b, q):
    mine = _dist.special().betaincinv(a, b, q)
    ref = sp.betaincinv(a, b, q)
    close_or_better(mine, ref, beta_residual(a, b, q), f"betaincinv({a!r}, {b!r}, {q!r})")
    assert _dist.beta_ppf(q, a, b) == float(mine)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(df=dfs, a=shapes, b=shapes, q=probs)
def test_distribution_functions(df, a, b, q):
    # the incomplete beta behind every quantile, and the t distribution function, at the points
    # where scipy puts its own quantiles (1e-12, 2e-11 in tails below 1e-6: scipy's betainc is
    # itself 4.5e-13 off in places, and which of the two is off in the far tails is not settled here)
    rel = 1e-12 if 1e-6 < q < 1 - 1e-6 else 2e-11
    t = sp.stdtrit(df, q)
    assert _quantiles.stdtr(df, t) == pytest.approx(sp.stdtr(df, t), rel=rel, abs=0)
    x = sp.betaincinv(a, b, q)
    if 1e-280 < x < 1.0:
        assert _quantiles.betainc(a, b, x) == pytest.approx(sp.betainc(a, b, x), rel=rel, abs=1e-300)


@pytest.mark.parametrize("df, q", [(99999.0, 0.975), (37513.26864708, 0.975), (2360.10651779, 0.975),
                                   (9999999.0, 0.025), (19.0, 0.975), (1.0, 0.975), (2.0, 0.025)])
def test_t_quantiles_of_the_command_line(df, q):
    close_or_better(_quantiles.stdtrit(df, q), sp.stdtrit(df, q), t_residual(df, q), (df, q))


@pytest.mark.parametrize("a, b, q", [(1877168.0, 8122833.0, 0.025), (1877169.0, 8122832.0, 0.975),
                                     (28630.8215044, 123891.53782201, 0.025), (0.5, 0.5, 0.3), (3.0, 18.0, 0.975)])
def test_beta_quantiles_of_the_command_line(a, b, q):
    # (1877168, 8122833, 0.025): scipy's quantile is 2.6e-13 off (I_x - q = 2.3e-11, perdoc's 1.6e-14)
    close_or_better(_quantiles.betaincinv(a, b, q), sp.betaincinv(a, b, q), beta_residual(a, b, q), (a, b, q))


def test_exact_values():
    # closed forms: the Cauchy quantile (df = 1), df = 2, the arcsine and uniform laws
    for q in (0.001, 0.1, 0.3, 0.7, 0.975):
        cauchy = -1 / np.tan(np.pi * q) if q < 0.5 else 1 / np.tan(np.pi * (1 - q))   # tan(pi (q - 1/2))
        assert _quantiles.stdtrit(1.0, q) == pytest.approx(cauchy, rel=1e-14)
        assert _quantiles.stdtrit(2.0, q) == pytest.approx((2 * q - 1) / np.sqrt(2 * q * (1 - q)), rel=1e-14)
        assert _quantiles.betaincinv(0.5, 0.5, q) == pytest.approx(np.sin(np.pi * q / 2) ** 2, rel=1e-14)
        assert _quantiles.betaincinv(1.0, 1.0, q) == pytest.approx(q, rel=1e-14)
    assert _quantiles.stdtrit(7.3, 0.5) == 0.0
    assert _quantiles.ndtri(0.5) == 0.0


# ---------------------------------------------------------------------- same bits, any batch
def random_args(n, seed):
    rng = np.random.default_rng(seed)
    q = 10 ** rng.uniform(-12, np.log10(0.5), n)
    q = np.where(rng.random(n) < 0.5, q, 1 - q)
    q[: n // 10] = 0.975
    df = 10 ** rng.uniform(np.log10(0.5), 7, n)
    df[n // 10: n // 5] = np.round(df[n // 10: n // 5])
    a = 10 ** rng.uniform(-2, 6, n)
    b = 10 ** rng.uniform(-2, 6, n)
    return q, df, a, b


def test_arrays_give_the_scalar_bits():
    q, df, a, b = random_args(400, 5)
    t_vec = _quantiles.v_stdtrit(df, q)
    x_vec = _quantiles.v_betaincinv(a, b, q)
    z_vec = _quantiles.v_ndtri(q)
    for i in range(q.size):
        assert t_vec[i] == _quantiles.stdtrit(df[i], q[i]), (df[i], q[i])
        assert x_vec[i] == _quantiles.betaincinv(a[i], b[i], q[i]), (a[i], b[i], q[i])
        assert z_vec[i] == _quantiles.ndtri(q[i])


@pytest.mark.parametrize("n", [1, 3, _dist.SMALL, _dist.SMALL + 1, 500])
def test_special_does_not_depend_on_the_batch(n):
    q, df, a, b = random_args(500, 11)
    sp_ = _dist.special()
    whole_t = sp_.stdtrit(df, q)
    whole_x = sp_.betaincinv(a, b, q)
    for s in range(0, 500, n):
        np.testing.assert_array_equal(sp_.stdtrit(df[s:s + n], q[s:s + n]), whole_t[s:s + n])
        np.testing.assert_array_equal(sp_.betaincinv(a[s:s + n], b[s:s + n], q[s:s + n]), whole_x[s:s + n])
    # repeated arguments (computed once) give the same numbers as distinct ones
    np.testing.assert_array_equal(sp_.stdtrit(np.repeat(df[:7], 20), 0.975),
                                  np.repeat(sp_.stdtrit(df[:7], 0.975), 20))


def test_shapes_types_and_scipy_outside_the_domain():
    s = _dist.special()
    assert isinstance(s.stdtrit(10.0, 0.975), np.float64)
    out = s.stdtrit(np.array([[3.0], [30.0]]), np.array([0.1, 0.5, 0.975]))
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, sp.stdtrit(np.array([[3.0], [30.0]]), np.array([0.1, 0.5, 0.975])), rtol=RTOL)
    assert s.betaincinv(np.array([2.0]), np.array([3.0]), 0.5).shape == (1,)
    # outside the checked domain the numbers are scipy's, element by element
    df = np.array([np.inf, 0.1, np.nan, 5.0, 5.0, 2e10])
    q = np.array([0.975, 0.975, 0.5, 0.0, 1.0, 0.3])
    np.testing.assert_array_equal(s.stdtrit(df, q), sp.stdtrit(df, q))
    a = np.array([0.001, 2.0, 0.0136, 5.0, 0.0, 4.0, 0.0])
    b = np.array([2.0, 1e9, 32074.6, 5.0, 7.0, 0.0, 0.0])
    qb = np.array([0.3, 0.3, 2.83e-5, np.nan, 0.025, 0.975, 0.5])   # the third underflows: scipy's smallest normal
    np.testing.assert_array_equal(s.betaincinv(a, b, qb), sp.betaincinv(a, b, qb))
    np.testing.assert_array_equal(s.ndtri(np.array([0.0, 1.0, np.nan, 1e-320])),
                                  sp.ndtri(np.array([0.0, 1.0, np.nan, 1e-320])))
    # keyword arguments and other dtypes: scipy's ufunc itself
    assert s.stdtrit(np.float32(5.0), np.float32(0.9)).dtype == sp.stdtrit(np.float32(5.0), np.float32(0.9)).dtype
    assert s.expit is sp.expit or s.expit(0.0) == 0.5


def test_estimate_from_the_command_line_does_not_import_scipy(tmp_path):
    data = tmp_path / "chunks.csv"
    rng = np.random.default_rng(3)
    rows = ["doc_id,hit"] + [f"d{d},{int(rng.random() < 0.3)}" for d in range(30) for _ in range(int(rng.integers(1, 9)))]
    data.write_text("\n".join(rows) + "\n")
    code = ("import sys, perdoc.cli\n"
            "rc = perdoc.cli.main(['estimate', sys.argv[1], '--doc', 'doc_id', '--score', 'hit',"
            " '--replicates', '0', '--json'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas')), file=sys.stderr)\n"
            "sys.exit(rc)\n")
    r = subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True, text=True,
                       env={"PYTHONPATH": str(LIB), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr
    # no hit at all (Clopper-Pearson's zero parameter) does not need scipy either
    data.write_text("doc_id,hit\n" + "".join(f"d{d},0\n" for d in range(6) for _ in range(3)))
    r0 = subprocess.run([sys.executable, "-c", code, str(data)], capture_output=True, text=True,
                        env={"PYTHONPATH": str(LIB), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert r0.returncode == 0 and r0.stderr.strip().splitlines()[-1] == "[]", r0.stderr
    d = json.loads(r.stdout)
    # and the numbers are those scipy would give, to 1e-13
    cr2 = d["micro"]["cr2"]
    t = sp.stdtrit(cr2["df"], 0.975)
    assert cr2["ci"][1] - d["micro"]["estimate"] == pytest.approx(t * cr2["se"], rel=1e-12)
