"""Prediction-powered estimates (perdoc.methods.ppi) against ppi_py, and their identities.

Golden values: tests/oracle/golden_ppi.json, made by tests/oracle/ppi_oracle.py with ppi_py 0.2.3
(``make oracle`` regenerates them). With one chunk per document and the judged items a sample, the
chunk-level baseline is ``ppi_mean_ci`` and the document-level weight is PPI++'s, to 1e-10.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from perdoc import DocTable, estimate
from perdoc.methods import micro
from perdoc.methods.ppi import JudgeScores, ppi_iid, ppi_lambda, ppi_macro, ppi_micro

GOLDEN = json.loads((Path(__file__).parent / "oracle" / "golden_ppi.json").read_text())
CASES = GOLDEN["cases"]


def _items(case):
    Y, Yh, Yu = (np.array(case[k]) for k in ("Y", "Yhat", "Yhat_unlabeled"))
    one = np.ones_like(Y)
    judge = JudgeScores(np.ones_like(Yu), Yu, Yu * Yu, covers=False)
    return dict(n=one, s=Y, f=Yh, q=Y * Y, ff=Yh * Yh, sf=Y * Yh), judge


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_chunk_baseline_is_ppi_mean_ci(case):
    x, judge = _items(case)
    for r in case["results"]:
        got = ppi_iid(**x, judge=judge, lam=r["lam"], level=1 - r["alpha"])
        assert got["estimate"] == pytest.approx(r["estimate"], abs=1e-10, rel=1e-10)
        assert got["low"] == pytest.approx(r["low"], abs=1e-10, rel=1e-10)
        assert got["high"] == pytest.approx(r["high"], abs=1e-10, rel=1e-10)
        if r["lam"] is None:
            assert got["lam"] == pytest.approx(case["lam_ppi"], abs=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_document_weight_is_ppi_plus_plus_with_one_chunk_per_document(case):
    x, judge = _items(case)
    for kind in ("micro", "macro"):
        assert ppi_lambda(x["n"], x["s"], x["f"], judge, kind) == pytest.approx(case["lam_ppi"], abs=1e-10)


def test_oracle_cases_span_useless_and_good_judges():
    lams = [c["lam_ppi"] for c in CASES]
    assert min(lams) < 0.1 and max(lams) > 0.8       # the golden cases exercise both ends of lambda


def _study(K=12, seed=3, M=200):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 30, M).astype(float)
    p = rng.beta(2, 3, M)
    s = rng.binomial(n.astype(int), p).astype(float)
    f = np.clip(s + rng.normal(0, 1.0, M) + 0.1 * n, 0, n)         # a judge that over-scores long documents
    idx = np.sort(rng.choice(M, K, replace=False))
    return n, s, f, idx


def test_lambda_zero_is_the_labels_only_micro_cr2_bit_for_bit():
    n, s, f, idx = _study()
    M, K = n.size, idx.size
    judge = JudgeScores(n, f, covers=True)
    got = ppi_micro(n[idx], s[idx], f[idx], judge, lam=0.0, fpc=math.sqrt(1 - K / M))
    iv = estimate(DocTable.from_arrays(n=n[idx], s=s[idx], q=s[idx]), population_size=M).interval("micro", "cr2")
    assert (got["low"], got["high"]) == (iv.ci.low, iv.ci.high)
    assert got["estimate"] == iv.estimate and got["se"] == iv.se and got["df"] == iv.df
    assert got["effective_documents"] == K


def test_lambda_zero_is_the_labels_only_macro_t():
    n, s, f, idx = _study(seed=4)
    M, K = n.size, idx.size
    got = ppi_macro(n[idx], s[idx], f[idx], JudgeScores(n, f), lam=0.0, fpc=math.sqrt(1 - K / M))
    iv = estimate(DocTable.from_arrays(n=n[idx], s=s[idx], q=s[idx]), population_size=M).interval("macro", "t")
    assert got["estimate"] == pytest.approx(iv.estimate, rel=1e-15)
    assert (got["low"], got["high"]) == pytest.approx((iv.ci.low, iv.ci.high), rel=1e-14)


def test_a_perfect_judge_gives_the_population_value_and_no_interval():
    n, s, _, idx = _study(seed=5)
    judge = JudgeScores(n, s.copy(), covers=True)
    got = ppi_micro(n[idx], s[idx], s[idx], judge)
    assert got["lam"] == 1.0
    assert got["estimate"] == pytest.approx(s.sum() / n.sum(), rel=1e-14)
    assert math.isnan(got["low"]) and got["code"] != 0          # zero variance: no interval, with a reason


def test_a_useless_judge_gets_weight_near_zero_and_costs_little():
    rng = np.random.default_rng(6)
    n, s, _, idx = _study(seed=6, K=40, M=2000)
    noise = np.array([rng.binomial(int(k), 0.5) for k in n], dtype=float)   # unrelated to the gold
    judge = JudgeScores(n, noise, covers=True)
    got = ppi_micro(n[idx], s[idx], noise[idx], judge, fpc=math.sqrt(1 - idx.size / n.size))
    labels = ppi_micro(n[idx], s[idx], noise[idx], judge, lam=0.0, fpc=math.sqrt(1 - idx.size / n.size))
    assert got["lam"] < 0.3
    assert got["high"] - got["low"] <= 1.05 * (labels["high"] - labels["low"])


def test_judged_sample_adds_the_judges_own_variance():
    n, s, f, idx = _study(seed=7)
    rest = np.setdiff1d(np.arange(n.size), idx)
    covers = ppi_micro(n[idx], s[idx], f[idx], JudgeScores(n, f, covers=True), lam=0.7)
    sample = ppi_micro(n[idx], s[idx], f[idx], JudgeScores(n[rest], f[rest], covers=False), lam=0.7)
    assert sample["se"] > covers["se"]
    v_judge = 0.49 * micro.var_cr2(n[rest], f[rest])
    assert sample["se"] ** 2 == pytest.approx(covers["se"] ** 2 + v_judge, rel=1e-12)
    assert covers["df"] < sample["df"] < covers["df"] + rest.size      # Satterthwaite between the two


def test_estimator_is_the_judge_mean_corrected_by_its_labelled_error():
    n, s, f, idx = _study(seed=8)
    judge = JudgeScores(n, f)
    got = ppi_micro(n[idx], s[idx], f[idx], judge, lam=1.0)
    bias = (f[idx].sum() - s[idx].sum()) / n[idx].sum()
    assert got["estimate"] == pytest.approx(f.sum() / n.sum() - bias, rel=1e-13)
    assert got["effective_documents"] > idx.size                  # this judge helps


def test_bad_judge_arrays_are_refused():
    with pytest.raises(ValueError, match="same length"):
        JudgeScores(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="at least 2"):
        JudgeScores(np.ones(1), np.ones(1))


@pytest.mark.parametrize("macro", [False, True])
def test_crossfit_weights_are_the_slopes_fitted_without_each_document(macro):
    from perdoc.methods.ppi import crossfit_weights
    n, s, f, idx = _study(seed=9, K=15)
    n, s, f = n[idx], s[idx], f[idx]
    x, y, w = (f / n, s / n, None) if macro else (f, s, n)
    got = crossfit_weights(x, y, w)
    for d in range(n.size):
        keep = np.arange(n.size) != d
        xs, ys = x[keep], y[keep]
        ws = np.ones(keep.sum()) if w is None else w[keep]
        u = ys - ys.sum() / ws.sum() * ws
        v = xs - xs.sum() / ws.sum() * ws
        assert got[d] == pytest.approx(min(1.0, max(0.0, np.sum(u * v) / np.sum(v * v))), abs=1e-12)


def test_each_documents_weight_ignores_its_own_error():
    """Changing one document's judge score changes every other document's weight, never its own."""
    from perdoc.methods.ppi import crossfit_weights
    n, s, f, idx = _study(seed=10, K=12)
    n, s, f = n[idx], s[idx], f[idx].copy()
    before = crossfit_weights(f, s, n)
    f[4] = f[4] + 3.0
    after = crossfit_weights(f, s, n)
    assert after[4] == pytest.approx(before[4], abs=1e-12)
    assert np.any(np.abs(np.delete(after - before, 4)) > 1e-6)


def test_no_labelled_judge_error_gives_no_interval_not_a_rounding_one():
    n, s, f, idx = _study(seed=11)
    f = f.copy()
    f[idx] = s[idx]                                   # the judge is right on every labelled document
    judge = JudgeScores(n, f)
    for fn in (ppi_micro, ppi_macro):
        got = fn(n[idx], s[idx], f[idx], judge)
        assert got["se"] == 0.0 and math.isnan(got["low"]) and got["code"] != 0


def test_a_judge_that_is_an_exact_affine_copy_of_the_gold_gives_no_interval():
    n, s, _, idx = _study(seed=12)
    f = 2.0 * s + 0.1 * n                               # another scale: the weight 1/2 undoes it exactly
    for fn in (ppi_micro, ppi_macro):
        got = fn(n[idx], s[idx], f[idx], JudgeScores(n, f))
        assert got["se"] == 0.0 and math.isnan(got["low"]) and got["code"] != 0, fn.__name__


def test_agreement_gives_no_interval_with_a_judged_sample_too():
    n, s, _, idx = _study(seed=13)
    rest = np.setdiff1d(np.arange(n.size), idx)
    f = s.copy()
    for fn in (ppi_micro, ppi_macro):
        got = fn(n[idx], s[idx], f[idx], JudgeScores(n[rest], f[rest], covers=False))
        assert math.isnan(got["low"]) and got["se"] == 0.0, fn.__name__


def test_a_fixed_weight_below_one_keeps_the_spread_of_the_corrected_scores():
    n, s, _, idx = _study(seed=14)
    got = ppi_micro(n[idx], s[idx], s[idx], JudgeScores(n, s.copy()), lam=0.5)
    assert got["se"] > 0 and got["low"] < got["high"]


def test_crossfit_weights_need_two_other_documents_and_a_varying_judge():
    from perdoc.methods.ppi import crossfit_weights
    assert np.array_equal(crossfit_weights([1.0, 2.0], [1.0, 1.0], [2.0, 3.0]), [0.0, 0.0])
    n = np.array([3.0, 5.0, 2.0, 7.0])
    f = 0.3 * n                                          # the same judge rate everywhere: no slope
    assert np.array_equal(crossfit_weights(f, np.array([1.0, 2.0, 0.0, 3.0]), n), np.zeros(4))


def test_logit_interval_of_a_bounded_metric_is_logit_cr2_of_the_same_se_and_df():
    from perdoc.methods.intervals import logit_cr2
    from perdoc.methods.ppi import lead_ends
    n, s, f, idx = _study(seed=15)
    got = ppi_micro(n[idx], s[idx], f[idx], JudgeScores(n, f), bounded=True)
    lo, hi, code, _ = logit_cr2(np.float64(got["estimate"]), np.float64(got["se"]), np.float64(got["df"]), 0.05,
                                np.bool_(False), True)
    assert (got["logit_low"], got["logit_high"]) == (float(lo), float(hi)) and 0 < lo < got["estimate"] < hi < 1
    assert lead_ends(got) == ("logit_ppi", got["logit_low"], got["logit_high"])
    plain = ppi_micro(n[idx], s[idx], f[idx], JudgeScores(n, f))
    assert "logit_low" not in plain and lead_ends(plain) == ("ppi", plain["low"], plain["high"])
