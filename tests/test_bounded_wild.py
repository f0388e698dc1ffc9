"""Bounded intervals for binary metrics and the wild cluster bootstrap: formulas, fallbacks, inversion."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from perdoc import DocTable, estimate
from perdoc import bounded
from perdoc.wild import p_value, weights_matrix, wild_interval

from conftest import make_table


def test_bounded_intervals_inside_unit_interval_and_around_p():
    t = make_table(K=20, seed=1)
    d = estimate(t, replicates=0).to_dict()["micro"]
    p = d["estimate"]
    for m in ("korn_graubard", "logit", "wilson"):
        lo, hi = d[m]["ci"]
        assert 0 <= lo < p < hi <= 1 and d[m]["fallback"] is False


def test_fallback_at_rate_zero_is_clopper_pearson():
    t = DocTable.from_arrays(n=[5, 7, 3], s=[0, 0, 0])
    d = estimate(t, replicates=0).to_dict()["micro"]
    cp_hi = stats.beta.ppf(0.975, 1, 15)
    for m in ("korn_graubard", "logit", "wilson"):
        assert d[m]["ci"] == [0.0, pytest.approx(cp_hi)]
        assert d[m]["fallback"] is True and "Clopper-Pearson" in d[m]["notes"][0]
        assert d[m]["role"] == "baseline"  # chunks as cases: shown to warn, never a headline
    assert d["cr2"]["ci"] is None  # the usual intervals honestly have none


def test_bounded_only_for_binary_scores():
    t = make_table(K=10, seed=2, binary=False)
    d = estimate(t, replicates=0).to_dict()["micro"]
    assert d["korn_graubard"]["ci"] is None and "binary" in d["korn_graubard"]["reason"]


def test_wilson_reduces_to_classic_wilson():
    # with V = p(1-p)/n and a huge df, the formula is the textbook Wilson interval
    p, n = 0.3, 50
    (lo, hi), _ = bounded.wilson(p, p * (1 - p) / n, n, 1e9, 0.05)
    z = stats.norm.ppf(0.975)
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (lo, hi) == (pytest.approx(c - h), pytest.approx(c + h))


def naive_wild_p(n, s, mu0, v):
    """Literal WCR: rebuild y* per document, refit the ratio and its CR1, compare |t|."""
    K, N = n.size, n.sum()
    R = s.sum() / N
    se = math.sqrt(K / (K - 1) * np.sum((s - R * n) ** 2)) / N
    t = (R - mu0) / se
    hits = 0
    for row in v:
        s_star = mu0 * n + row * (s - mu0 * n)
        R_star = s_star.sum() / N
        se_star = math.sqrt(K / (K - 1) * np.sum((s_star - R_star * n) ** 2)) / N
        t_star = (R_star - mu0) / se_star if se_star > 0 else (0.0 if R_star == mu0 else math.inf)
        hits += abs(t_star) >= abs(t) - 1e-10 * max(1, abs(t))
    return hits / len(v)


@pytest.mark.parametrize("weights", ["rademacher", "webb"])
def test_p_value_matches_literal_refit(weights):
    rng = np.random.default_rng(4)
    n = rng.integers(2, 30, 7).astype(float)
    s = rng.binomial(n.astype(int), 0.3).astype(float)
    v, _, _ = weights_matrix(7, weights, B=500, seed=2)
    for mu0 in (0.1, 0.25, 0.4):
        assert p_value(n, s, mu0, weights=weights, B=500, seed=2) == pytest.approx(naive_wild_p(n, s, mu0, v))


def test_rademacher_enumeration_and_whole_line():
    v, name, enumerated = weights_matrix(5, "rademacher", B=9999)
    assert enumerated and v.shape == (32, 5) and len({tuple(r) for r in v}) == 32
    n = np.array([3.0, 8, 5, 12, 4])
    s = np.array([1.0, 2, 0, 6, 1])
    w = wild_interval(n, s, weights="rademacher")
    assert w.whole_line and w.min_p == pytest.approx(2 / 32)
    d = estimate(DocTable.from_arrays(n=n, s=s), replicates=9999).to_dict()["micro"]["wild"]
    assert d["weights"] == "webb"  # the default below 10 documents
    assert d["ci"] is not None


def test_whole_line_reported_in_estimate(monkeypatch):
    import perdoc.wild as wild
    real = wild.wild_interval
    monkeypatch.setattr(wild, "wild_interval", lambda *a, **k: real(*a, **{**k, "weights": "rademacher"}))
    t = DocTable.from_arrays(n=[3, 8, 5, 12, 4], s=[1, 2, 0, 6, 1])
    d = estimate(t, replicates=999).to_dict()["micro"]["wild"]
    assert d["ci"] is None and d["whole_line"] is True and "whole real line" in d["reason"]


def test_interval_is_test_inversion():
    t = make_table(K=12, seed=5)
    w = wild_interval(t.n, t.s, weights="rademacher")
    assert w.enumerated and w.low < t.s.sum() / t.N < w.high
    eps = 1e-6
    for b, outward in ((w.low, -1), (w.high, 1)):
        assert p_value(t.n, t.s, b - outward * eps, "rademacher") > 0.05
        assert p_value(t.n, t.s, b + outward * eps, "rademacher") <= 0.05
