"""Prediction-powered estimates: a few gold labels and an automatic judge's scores, by document.

The labelled sample S (``K`` documents drawn from ``M``) has per document the chunks ``n_d``, the
gold sum ``s_d`` and the judge's sum ``f_d`` on the same chunks. The judge also scored a larger set
J of documents (:class:`JudgeScores`): either every document of the population (``covers=True``:
its mean over the population is then known exactly, and J is also a frame), or a sample of
documents of its own (``covers=False``, the setting of ``ppi_py``, where J holds the judged
documents that were not labelled).

Micro mean (chunks count alike), the difference estimator with a weight ``lambda_d`` per document::

    R = sum_S z_d / sum_S n_d,     z_d = s_d - lambda_d (f_d - F_J n_d),     F_J = sum_J f_d / sum_J n_d

i.e. with one weight for all, ``lambda F_J + sum_S (s_d - lambda f_d) / sum_S n_d``: the judge's mean
over J corrected by the judge's error on the labelled documents (GREG with the judge as the working
model). Its variance treats the document as the unit: the CR2 variance of the ratio of ``z_d`` to
``n_d`` over S (the labels-only micro CR2 applied to the corrected scores, times the finite population
factor), plus, when J is a sample, ``lambda^2`` times the CR2 variance of ``F_J``; t interval with the
Bell-McCaffrey df of the labelled sizes (combined with ``M_J - 1`` for the judge's part by
Satterthwaite). ``lambda = 0`` is the labels-only micro CR2, bit for bit.

Macro mean (documents count alike): the same on the document rates ``r_d = s_d / n_d`` and
``g_d = f_d / n_d``: ``mean_S (r_d - lambda_d (g_d - G_J))``, variance
``var_S(z) / K (1 - K/M) + lambda^2 var_J(g) / M_J``, t with ``K - 1`` df.

Weights. Left to perdoc, each labelled document's weight is fitted on the *other* labelled documents
(:func:`crossfit_weights`: the slope of gold on judge, clipped to [0, 1]), so a document's weight does
not depend on its own error and the estimator stays unbiased whatever the judge (cross-fitting). One
weight fitted on the whole sample, PPI++'s (:func:`ppi_lambda`), correlates with the sample's own
judge errors: on the judge panel at K = 20 (benchmarks/judge_panel.py) it gave a bias of 0.1 to 0.35
standard deviations and coverage down to 0.89 for judges of correlation 0.5 to 0.8, where the
cross-fitted weights gave no bias. :func:`ppi_lambda` computes PPI++'s weight with document residuals
in place of items::

    lambda = [sum_S u_d v_d / K] / [(1 + K / M_J) sum_{S+J} w_d^2 / (K + M_J - 1)]

``u_d = s_d - R_S n_d`` and ``v_d = f_d - F_S n_d`` (ratio residuals over S), ``w_d = f_d - F n_d``
over S and J together (micro; for the macro mean the rates minus their means). When J covers the
population, the denominator is the judge's spread over the population and the factor is 1. With one
chunk per document this is exactly ``ppi_py``'s ``_calc_lam_glm`` for the mean.

Baseline ``ppi_iid``: ``ppi_py.ppi_mean_ci`` with every chunk an independent item (z interval,
variances over chunks): the interval that ignores the documents, shown as a warning, never leading.
With one chunk per document, a judge sample and no finite population correction it is
``ppi_mean_ci`` exactly (golden values from ppi_py: ``tests/oracle/ppi_oracle.py``).

When the corrected document rates agree up to rounding (the judge equals the gold on every labelled
document, or is an exact affine copy of it), the data show none of the judge's errors: the standard
error is zero and there is no interval (``code`` FLAT), whether the judge covers the population or
is a sample of its own, never a falsely precise one; the labels-only interval is what is left to report.

Floors. With fitted weights the standard error has two floors, both absent for a weight the user
fixes (the oracles stay exact). The chunk-level one: never below the variance the estimate would have
if the judge's errors fell independently on the chunks (the corrected scores' chunk-level variance
times the design's expected weights, from the frame where the design draws by size), capped at the
labels-only variance, so a useless judge is not widened by it (:func:`_chunk_floor`,
:func:`_srs_floored`; it needs the sums of gold times judge, so rows read where they live go without
it). Errors that cluster by document have more variance than that, so it binds when a sample has
missed the rare documents whose errors weigh most; as a variance of the same order as the estimate's,
it does not fade as K grows. Then the small-sample one of :func:`_floored`.

``effective_documents``: how many labelled documents the labels-only interval would need for the
variance of the prediction-powered one, ``K var_labels / var_ppi`` (more than K when the judge helps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import micro as _micro
from .intervals import logit_cr2, t_interval, z_interval

__all__ = ["JudgeScores", "ppi_lambda", "crossfit_weights", "ppi_micro", "ppi_macro", "ppi_iid", "ppi_design", "size_bias",
           "lead_ends"]


@dataclass(frozen=True)
class JudgeScores:
    """The judge's per-document sums over the judged documents J: chunks ``n``, judge sum ``f`` and
    (for the chunk-level baseline) judge sum of squares ``ff``. ``covers``: J is the whole population
    (the judge's mean is then known, not estimated)."""

    n: np.ndarray
    f: np.ndarray
    ff: np.ndarray | None = None
    covers: bool = True

    def __post_init__(self):
        for name in ("n", "f") + (("ff",) if self.ff is not None else ()):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=float))
        if self.n.ndim != 1 or self.f.shape != self.n.shape or (self.ff is not None and self.ff.shape != self.n.shape):
            raise ValueError("judge scores: n, f (and ff) must be 1-d arrays of the same length")
        if self.n.size < 2:
            raise ValueError("judge scores: at least 2 judged documents are needed")

    @property
    def M(self) -> int:
        return int(self.n.size)

    @property
    def mean(self) -> float:
        """The judge's micro mean over J."""
        return float(self.f.sum() / self.n.sum())

    @property
    def macro_mean(self) -> float:
        return float(np.mean(self.f / self.n))


def _as(x):
    return np.asarray(x, dtype=float)


def ppi_lambda(n, s, f, judge: JudgeScores, kind: str = "micro") -> float:
    """The PPI++ weight for the micro (``kind="micro"``) or macro mean, clipped to [0, 1]
    (module docstring). 0 when the judge does not vary over the documents."""
    n, s, f = _as(n), _as(s), _as(f)
    K = n.size
    if kind == "micro":
        u = s - (s.sum() / n.sum()) * n
        v = f - (f.sum() / n.sum()) * n
        if judge.covers:
            w = judge.f - judge.mean * judge.n
            denom = np.sum(w * w) / (judge.M - 1)
        else:
            nn, ff = np.concatenate([n, judge.n]), np.concatenate([f, judge.f])
            w = ff - (ff.sum() / nn.sum()) * nn
            denom = (1.0 + K / judge.M) * np.sum(w * w) / (K + judge.M - 1)
    elif kind == "macro":
        r, g = s / n, f / n
        u, v = r - r.mean(), g - g.mean()
        gj = judge.f / judge.n
        if judge.covers:
            denom = np.var(gj, ddof=1)
        else:
            denom = (1.0 + K / judge.M) * np.var(np.concatenate([g, gj]), ddof=1)
    else:
        raise ValueError(f"kind must be 'micro' or 'macro' (got {kind!r})")
    num = np.sum(u * v) / K
    if not (denom > 0 and math.isfinite(denom)):
        return 0.0
    return float(min(1.0, max(0.0, num / denom)))


def _satterthwaite(v1: float, df1: float, v2: float, df2: float) -> float:
    if v2 == 0.0:
        return df1
    return (v1 + v2) ** 2 / (v1 * v1 / df1 + v2 * v2 / df2)


def _result(est, se, df, alpha, flat, lam, *, se_labels, K, z=False, bounded=False) -> dict:
    """The interval and the fields every prediction-powered result carries; with ``bounded`` (a
    metric in [0, 1]) also the interval on the logit scale (``logit_low``, ``logit_high``,
    ``logit_code``: as :func:`perdoc.methods.logit_cr2` from the same se and df)."""
    est, se, df = float(est), float(se), float(df)
    if z:
        lo, hi, code = z_interval(est, se, alpha)
    else:
        lo, hi, code = t_interval(est, se, df, alpha, flat)
    eff = K * (se_labels / se) ** 2 if se > 0 and math.isfinite(se_labels) else float("nan")
    out = {"estimate": est, "se": se, "df": df if not z else float("inf"), "low": float(lo), "high": float(hi),
           "code": int(code), "lam": float(lam), "effective_documents": eff}
    if bounded:
        llo, lhi, lcode, _ = logit_cr2(np.float64(est), np.float64(se), np.float64(df), alpha, np.bool_(flat), True)
        out.update(logit_low=float(llo), logit_high=float(lhi), logit_code=int(lcode))
    return out


def lead_ends(result: dict) -> tuple[str, float, float] | None:
    """The judge-assisted interval that leads: ``("logit_ppi", low, high)`` for a bounded metric where
    the logit interval exists, else ``("ppi", low, high)`` where the t interval does, else None."""
    if "logit_code" in result and result["logit_code"] == 0:
        return "logit_ppi", result["logit_low"], result["logit_high"]
    if result["code"] == 0 and math.isfinite(result["low"]):
        return "ppi", result["low"], result["high"]
    return None


#: Corrected document rates within this many units in the last place of their largest value have no
#: spread: what is left is the rounding of ``s - lambda (f - F n)``, not the judge's error.
SPREAD_ULPS = 64


def _no_spread(r: np.ndarray) -> bool:
    """The corrected rates ``r`` agree up to rounding (a judge equal to the gold, or an exact affine
    copy of it, on every labelled document)."""
    top = float(np.max(np.abs(r)))
    return bool(np.ptp(r) <= SPREAD_ULPS * np.finfo(float).eps * top) if top > 0 else True


def crossfit_weights(x, y, w=None) -> np.ndarray:
    """Per labelled document d, the weight fitted on the other labelled documents: the slope of the
    gold on the judge through their means, ``sum_e u_e v_e / sum_e v_e^2`` over ``e != d``, clipped
    to [0, 1] (0 where the judge does not vary over them, and for every document when K < 3).

    Micro mean: ``x`` the judge sums ``f``, ``y`` the gold sums ``s`` and ``w`` the chunks ``n``;
    ``u_e = s_e - a n_e``, ``v_e = f_e - b n_e`` with ``a``, ``b`` the others' ratio means. Macro
    mean: ``x``, ``y`` the rates and ``w`` None (plain means). Computed from totals in O(K)."""
    x, y = _as(x), _as(y)
    K = x.size
    w = np.ones(K) if w is None else _as(w)
    sums = lambda v: v.sum() - v   # noqa: E731  (over the other documents)
    W, X, Y = sums(w), sums(x), sums(y)
    WW, XX, XY, XW, YW = sums(w * w), sums(x * x), sums(x * y), sums(x * w), sums(y * w)
    if K < 3:   # a slope needs at least two other documents
        return np.zeros(K)
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b = Y / W, X / W
        num = XY - b * YW - a * XW + a * b * WW
        den = XX - 2.0 * b * XW + b * b * WW
        # a judge constant over the others leaves only the cancellation of the totals: no slope
        usable = den > 1e-12 * (XX + b * b * WW)
        lam = np.where(usable, num / np.where(usable, den, 1.0), 0.0)
    return np.clip(np.nan_to_num(lam), 0.0, 1.0)


def _weights(lam, K: int, fitted) -> np.ndarray:
    """Per-document weights: ``lam`` for every document when given, else the cross-fitted ones."""
    return fitted() if lam is None else np.full(K, float(lam))


#: The variance floor of a judge-assisted interval: this many pseudo-documents per labelled document
#: on which the judge is useless (see :func:`_floored`).
FLOOR_DOCUMENTS = 0.25
#: Whether fitted weights get the chunk-level floor (:func:`_chunk_floor`, :func:`_srs_floored`); off
#: only to measure what it does.
CHUNK_FLOOR = True


def _floored(se: float, se_labels: float, K: int) -> float:
    """The judge-assisted standard error with its small-sample floor: ``v + v_labels / (4 K)``, a
    quarter of one extra labelled document on which the judge is of no help (``v_labels`` is the
    labels-only variance of the same sample). With a near-perfect judge only a few labelled documents
    show its errors; a sample that misses the rare ones is off to one side *and* has a small standard
    error, and nothing in it looks unusual, so no rule built from the sample's own residuals can
    widen it (a df rule from the residuals' spread was tried and did not help); the labels-only
    variance is the outside information that can. The added term is O(1/K^2) against a variance of
    O(1/K), so it fades as K grows (the chunk-level floor, which does not, is applied first). Tuned on
    the judge panel's censuses alone (the
    smallest multiple of v_labels / K among 0.1, 0.25, 0.5 and 1 that brought the r = 0.95 judge's
    coverage to the labels-only interval's), then checked on the held-out ones
    (``benchmarks/README.md``)."""
    return math.sqrt(se * se + FLOOR_DOCUMENTS * se_labels * se_labels / K)


#: Two inclusion probabilities per size within this relative tolerance are proportional to size.
_PPS_RTOL = 1e-9


def _expected_weighted(w, a, m, N, f_stage, stratum, judge: JudgeScores, kind: str) -> float | None:
    """``E sum_S w_j^2 a_j^2 / N_j`` over the design, the stage-one factor of a chunk-level variance:
    by strata, ``(1 - f_h) sum_{U_h} a^2 / (N pi)``. A stratum of equal probabilities (simple random)
    or one taken whole is estimated from its drawn documents (Horvitz-Thompson, stable there). The one
    stratum whose probabilities are proportional to size (``perdoc sample --design pps``) is taken from
    the frame: ``sum_{U_h} a^2 / N^2 / c`` with ``pi = c N``, the frame's sum less the other strata's;
    a sample that happened to miss the small documents, whose rare errors weigh most, then gets the
    expected value, not its own. None where that cannot be done (two such strata, a negative
    remainder)."""
    from .survey import _strata_of
    names, _, order, starts, counts = _strata_of(stratum)
    prob = 1.0 / w
    g = a * a / (N * N)                      # a^2 / N^2: 1 (micro) or 1 / N^2 (macro)
    total = 0.0
    others = 0.0                             # Horvitz-Thompson sum of g over the strata not proportional to size
    pps = []
    for i in range(names.size):
        rows = order[starts[i]:starts[i] + counts[i]]
        fh = float(np.asarray(f_stage, dtype=float)[rows[0]])
        p = prob[rows]
        c = p / N[rows]
        if fh >= 1.0:                        # taken whole: every document is here, no stage-one variance
            others += float(np.sum(g[rows]))
        elif np.all(p == p[0]):              # simple random: pi_h for every document of the stratum
            others += float(np.sum(g[rows] / p))
            total += (1.0 - fh) * float(np.sum(a[rows] ** 2 / (N[rows] * p * p)))
        elif np.ptp(c) <= _PPS_RTOL * float(np.max(c)):
            pps.append((fh, float(np.mean(c))))
        else:
            return None
    if len(pps) > 1:
        return None
    if pps:
        fh, c = pps[0]
        frame_sum = float(np.sum(1.0 / (judge.n * judge.n))) if kind == "macro" else float(judge.M)
        rest = frame_sum - others
        if not rest > 0:
            return None
        total += (1.0 - fh) * rest / c
    return total


def _chunk_floor(design, w, a, s_e, q_e, f_stage, stratum, judge: JudgeScores, kind: str) -> float | None:
    """The variance the judge-assisted estimate would have if the judge's errors fell independently on
    the chunks: the population's chunk-level variance of ``y - lambda f`` (estimated with the design's
    weights) times the design's expected ``sum w^2 a^2 / N`` (:func:`_expected_weighted`), plus the
    same for the chunks left unlabelled in the drawn documents, over the squared population total of
    ``a``. None where it cannot be computed."""
    m, N = _as(design.m), _as(design.N)
    X = float(judge.n.sum()) if kind == "micro" else float(judge.M)
    sigma2 = _chunk_variance(m, s_e, q_e, w * N / m)       # chunks expanded: document, then chunk within it
    stage1 = _expected_weighted(w, a, m, N, f_stage, stratum, judge, kind)
    if stage1 is None or not (sigma2 >= 0 and X > 0):
        return None
    within = float(np.sum((1.0 - m / N) * (w * a) ** 2 / m))
    return sigma2 * (stage1 + within) / (X * X)


def _chunk_variance(n, s_e, q_e, up=None) -> float:
    """The chunk-level variance of the corrected scores ``y - lambda f`` from their per-document sums
    ``s_e`` and sums of squares ``q_e`` over ``n`` chunks, each document's chunks counted ``up`` times
    (the design's expansion; 1 for a simple random sample)."""
    up = np.ones_like(n) if up is None else up
    mean = float(np.sum(up * s_e) / np.sum(up * n))
    ss = np.maximum(q_e - 2.0 * mean * s_e + mean * mean * n, 0.0)
    return float(np.sum(up * ss) / np.sum(up * n))


def _srs_floored(se: float, se_labels: float, n, s, f, lam_d, chunks, judge: JudgeScores, fpc: float,
                 kind: str) -> float:
    """The floors of a fitted-weight standard error under a simple random sample of documents: the
    chunk-level one (where ``chunks`` gives the sums it needs): the variance the estimate would have
    if the judge's errors fell independently on the chunks, ``sigma^2 (1 - K/M) E[sum a^2 / n] / K^2 /
    abar^2`` with ``E`` over the judged documents when they are the population (else the labelled
    ones), capped at the labels-only variance; then :func:`_floored`'s small-sample one."""
    if chunks is not None and CHUNK_FLOOR:
        q, ff, sf = (_as(x) for x in chunks)
        s_e = s - lam_d * f
        q_e = q - 2.0 * lam_d * sf + lam_d * lam_d * ff
        sigma2 = _chunk_variance(n, s_e, q_e)
        sizes = judge.n if judge.covers else n
        K = n.size
        # micro: a = n, E[a^2 / n] / E[a]^2 = 1 / E[n]; macro: a = 1, E[1 / n]
        factor = 1.0 / float(np.mean(sizes)) if kind == "micro" else float(np.mean(1.0 / sizes))
        v_chunk = sigma2 * factor * fpc * fpc / K
        se = math.sqrt(max(se * se, min(v_chunk, se_labels * se_labels)))
    return _floored(se, se_labels, n.size) if FLOOR_DOCUMENTS else se


def ppi_micro(n, s, f, judge: JudgeScores, *, lam: float | None = None, level: float = 0.95,
              fpc: float = 1.0, bounded: bool = False, chunks=None) -> dict:
    """The prediction-powered micro mean and its document-level interval (module docstring).

    ``n``, ``s``, ``f``: per labelled document, chunks, gold sum and judge sum; ``judge``: the judged
    documents; ``lam``: one weight for every document (default: each document's weight fitted on the
    others, :func:`crossfit_weights`); ``fpc``: the finite population factor ``sqrt(1 - K/M)`` of the
    labelled sample; ``bounded``: the metric lies in [0, 1] (adds the logit-scale interval, which
    :func:`lead_ends` prefers). Returns ``estimate``, ``se``, ``df``, ``low``, ``high``, ``code`` (an
    interval status code; OK, FLAT, ZERO_SE, BAD_DF), ``lam`` (the weights' mean, by chunks) and
    ``effective_documents``. ``chunks``: per labelled document the gold's sum of squares, the judge's
    and the sum of gold times judge, ``(q, ff, sf)``, for the chunk-level floor of fitted weights
    (:func:`_srs_chunk_floor`); without them only the small-sample floor applies."""
    n, s, f = _as(n), _as(s), _as(f)
    lam_d = _weights(lam, n.size, lambda: crossfit_weights(f, s, n))
    F = judge.mean
    z = s - lam_d * (f - F * n) if lam != 0.0 else s      # each document's gold, corrected by the judge
    N = n.sum()
    lam_bar = float(np.sum(lam_d * n) / N)
    se_labels = math.sqrt(_micro.var_cr2(n, s)) * fpc
    se1 = math.sqrt(_micro.var_cr2(n, z)) * fpc
    df1 = _micro.df_bell_mccaffrey(n)
    v2 = 0.0 if (judge.covers or lam_bar == 0.0) else lam_bar * lam_bar * _micro.var_cr2(judge.n, judge.f)
    r = z / n
    flat = _no_spread(r)
    if flat:   # the corrected rates agree (the judge's errors cannot be measured): no interval
        se1, v2 = 0.0, 0.0
    if se1 > 0 and lam is None and lam_bar != 0.0:   # fitted weights: the floors
        se1 = _srs_floored(se1, se_labels, n, s, f, lam_d, chunks, judge, fpc, "micro")
    se = math.hypot(se1, math.sqrt(v2))
    df = _satterthwaite(se1 * se1, df1, v2, judge.M - 1.0)
    return _result(z.sum() / N, se, df, 1.0 - level, flat, lam_bar, se_labels=se_labels, K=n.size, bounded=bounded)


def ppi_macro(n, s, f, judge: JudgeScores, *, lam: float | None = None, level: float = 0.95,
              fpc: float = 1.0, bounded: bool = False, chunks=None) -> dict:
    """The prediction-powered macro mean (module docstring); same arguments and result as
    :func:`ppi_micro` (the weights fitted on the document rates)."""
    n, s, f = _as(n), _as(s), _as(f)
    K = n.size
    r, g = s / n, f / n
    lam_d = _weights(lam, K, lambda: crossfit_weights(g, r))
    gj = judge.f / judge.n
    G = float(np.mean(gj))
    e = r - lam_d * (g - G) if lam != 0.0 else r
    lam_bar = float(np.mean(lam_d))
    se_labels = math.sqrt(np.var(r, ddof=1) / K) * fpc
    se1 = math.sqrt(np.var(e, ddof=1) / K) * fpc
    v2 = 0.0 if (judge.covers or lam_bar == 0.0) else lam_bar * lam_bar * np.var(gj, ddof=1) / judge.M
    flat = _no_spread(e)
    if flat:   # no spread in the corrected rates (see ppi_micro)
        se1, v2 = 0.0, 0.0
    if se1 > 0 and lam is None and lam_bar != 0.0:   # fitted weights: the floors
        se1 = _srs_floored(se1, se_labels, n, s, f, lam_d, chunks, judge, fpc, "macro")
    se = math.hypot(se1, math.sqrt(v2))
    df = _satterthwaite(se1 * se1, K - 1.0, v2, judge.M - 1.0)
    return _result(float(np.mean(e)), se, df, 1.0 - level, flat, lam_bar, se_labels=se_labels, K=K,
                   bounded=bounded)


def ppi_iid(n, s, f, q, ff, sf, judge: JudgeScores, *, lam: float | None = None, level: float = 0.95,
            fpc: float = 1.0) -> dict:
    """The baseline that treats every chunk as an independent item: ``ppi_py.ppi_mean_ci`` on the
    chunks (PPI++ weight from the chunks, z interval, variances over chunks with divisor the count).
    ``q``, ``ff``, ``sf``: per labelled document, the sums of gold squared, judge squared and gold
    times judge; the judge's chunk-level spread needs ``judge.ff``. ``fpc`` multiplies the labelled
    part's standard error (1: ``ppi_mean_ci`` exactly)."""
    n, s, f, q, ff, sf = (_as(x) for x in (n, s, f, q, ff, sf))
    if judge.ff is None:
        raise ValueError("the chunk-level baseline needs the judge's sums of squares (judge.ff)")
    nl, Nj = n.sum(), judge.n.sum()
    ybar, fbar = s.sum() / nl, f.sum() / nl
    if lam is None:
        cov = (sf.sum() - nl * ybar * fbar) / nl                      # ppi_py: (1/n) sum centred products
        tot_n, tot_f, tot_ff = nl + Nj, f.sum() + judge.f.sum(), ff.sum() + judge.ff.sum()
        var_all = (tot_ff - tot_f * tot_f / tot_n) / (tot_n - 1.0)   # np.cov over labelled and judged chunks
        denom = (1.0 + nl / Nj) * var_all
        lam = float(min(1.0, max(0.0, cov / denom))) if denom > 0 else 0.0
    fj = judge.f.sum() / Nj
    est = lam * fj + (s.sum() - lam * f.sum()) / nl
    var_imp = lam * lam * max(judge.ff.sum() / Nj - fj * fj, 0.0) / Nj
    m2 = (q.sum() - 2.0 * lam * sf.sum() + lam * lam * ff.sum()) / nl
    mean = (s.sum() - lam * f.sum()) / nl
    var_rect = max(m2 - mean * mean, 0.0) / nl
    se_rect = math.sqrt(var_rect) * fpc
    se = math.sqrt(se_rect * se_rect + (0.0 if judge.covers else var_imp))
    se_labels = math.sqrt(max(q.sum() / nl - ybar * ybar, 0.0) / nl) * fpc
    return _result(est, se, math.inf, 1.0 - level, False, lam, se_labels=se_labels, K=n.size, z=True)


def _within_variance(m, s, q):
    """Per document the sample variance of its labelled chunks' values from their count ``m``, sum
    ``s`` and sum of squares ``q`` (0 for one chunk); values within rounding of zero are zero."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ss = q - s * s / np.maximum(m, 1.0)
        tiny = SPREAD_ULPS * np.finfo(float).eps * np.maximum(np.abs(q), s * s / np.maximum(m, 1.0))
        ss = np.where(ss <= tiny, 0.0, ss)
        return np.where(m >= 2, ss / np.maximum(m - 1.0, 1.0), 0.0)


def _judge_references(F: float, gbar, m, N, a, f_stage, judge: JudgeScores, kind: str, judge_rows):
    """What each drawn document's judge mean is corrected against under fitted weights (see
    :func:`ppi_design`): ``F`` when no document was taken whole; else, for a document taken whole, its
    own judge mean over all its chunks, and for the others the judge's mean over the documents not
    taken whole (the frame's total less theirs)."""
    whole = np.asarray(f_stage, dtype=float) >= 1.0
    if not np.any(whole):
        return F
    if judge_rows is not None:
        rows = np.asarray(judge_rows, dtype=np.int64)
        own = judge.f[rows] / judge.n[rows]
    elif np.all(m[whole] == N[whole]):
        own = gbar
    else:
        raise ValueError("a document taken whole had only some of its chunks labelled: give judge_rows (each drawn "
                         "document's row in the judge's scores) so that its judge mean over all its chunks is known")
    A = float(judge.n.sum()) if kind == "micro" else float(judge.M)
    A_whole = float(np.sum(a[whole]))
    rest = (F * A - float(np.sum((a * own)[whole]))) / (A - A_whole) if A - A_whole > 0 else F
    return np.where(whole, own, rest)


def ppi_design(design, g, gg, sg, judge: JudgeScores, kind: str = "micro", *, lam: float | None = None,
               level: float = 0.95, bounded: bool = False, judge_rows=None) -> dict:
    """The prediction-powered mean under a drawn design (``perdoc sample``: strata, unequal
    probabilities, two stages), design-consistent whatever the judge.

    ``design``: the drawn sample's gold sums (:class:`perdoc.methods.survey.SampleData`: per drawn
    document the probability ``prob``, frame chunks ``N``, labelled chunks ``m``, gold sum ``s`` and
    sum of squares ``q``, stage fraction ``f`` and stratum); ``g``, ``gg``, ``sg``: the judge's sum,
    sum of squares and the sum of gold times judge over the same labelled chunks; ``judge``: the
    judge's scores on every population document (``covers``).

    With ``a_j = N_j`` (micro) or 1 (macro), ``w_j = 1/pi_j``, the judge's population mean ``F``
    (by chunks, or by documents for the macro mean) and the labelled means ``ybar_j``, ``gbar_j``::

        e_j = ybar_j - lambda_j (gbar_j - F),     theta = sum_j w_j a_j e_j / sum_j w_j a_j

    the design's Hajek ratio of the corrected means (the known judge mean plus the weighted mean of
    the judge's errors). Its variance is the design's linearised one (:mod:`perdoc.methods.survey`)
    applied to ``e_j``, with the within-document variance of the chunks' ``y - lambda_j f``. Since
    ``E sum w a e = sum_U a (Ybar - lambda (Gbar - F))`` and ``sum_U a (Gbar - F) = 0``, the estimate
    is consistent for the gold mean for any weights fitted out of sample: each document's
    ``lambda_j`` is fitted on the others (:func:`crossfit_weights` on ``w a ybar`` against
    ``w a gbar``, the values the linearisation centres). ``lam=0`` gives the labels-only design
    estimate exactly; a fixed ``lam`` equals R's ``svymean`` of ``y - lam f`` plus ``lam F``.

    With fitted weights, which differ from document to document, the documents taken whole at the first
    stage (a census of themselves, in every sample) are not corrected against ``F``: the cancellation
    ``sum_U a (Gbar - F) = 0`` needs one weight for them all, and their own weights would leave a bias
    that does not shrink as the rest of the sample grows. Each is corrected only within itself, against
    its own known judge mean (nothing to correct when all its chunks were labelled), and the other
    documents against the judge's mean over the documents not taken whole. ``judge_rows``: each drawn
    document's row in ``judge`` (needed when a document taken whole had only some of its chunks
    labelled; otherwise its labelled chunks give its judge mean)."""
    from .survey import _linearised_in, _strata_of
    if not judge.covers:
        raise ValueError("a drawn design needs the judge's scores on every population document (judge.covers)")
    if kind not in ("micro", "macro"):
        raise ValueError(f"kind must be 'micro' or 'macro' (got {kind!r})")
    m, N = _as(design.m), _as(design.N)
    s, q = _as(design.s), _as(design.q)
    g, gg, sg = _as(g), _as(gg), _as(sg)
    w = 1.0 / _as(design.prob)
    a = N if kind == "micro" else np.ones_like(N)
    F = judge.mean if kind == "micro" else judge.macro_mean
    ybar, gbar = s / m, g / m
    wa = w * a
    lam_d = _weights(lam, m.size, lambda: crossfit_weights(wa * gbar, wa * ybar, wa))
    ref = F if lam is not None else _judge_references(F, gbar, m, N, a, _as(design.f), judge, kind, judge_rows)
    e = ybar - lam_d * (gbar - ref) if lam != 0.0 else ybar
    stratum = np.asarray(design.stratum).astype(str)
    drawn = _as(design.f) < 1.0                  # documents not taken whole: where the judge's errors show
    mixed = bool(np.any(drawn) and not np.all(drawn)) and np.ndim(ref) > 0
    flat = _no_spread(e[drawn] if mixed else e)
    shift = 0.0
    if flat and not mixed:   # the corrected means agree up to rounding: no spread between documents (exactly
        #                      0, not the rounding of e - theta), only the chunk sampling within documents, if any
        shift = float(np.sum(wa * e) / np.sum(wa))
        e = np.zeros_like(e)
    s_e = s - lam_d * g
    q_e = q - 2.0 * lam_d * sg + lam_d * lam_d * gg
    strata = _strata_of(stratum)   # (once for the corrected and the labels-only variance)
    theta, se, df, reason = _linearised_in(w, a, e, m, N, _within_variance(m, s_e, q_e), _as(design.f), strata)
    theta += shift
    _, se_lab, _, _ = _linearised_in(w, a, ybar, m, N, _within_variance(m, s, q), _as(design.f), strata)
    lam_bar = float(np.sum(lam_d * wa) / np.sum(wa))
    if se and se_lab and lam is None and lam_bar != 0.0:   # fitted weights: the small-sample floor
        if CHUNK_FLOOR:
            v_chunk = _chunk_floor(design, w, a, s_e, q_e, _as(design.f), stratum, judge, kind)
            if v_chunk is not None:
                se = math.sqrt(max(se * se, min(v_chunk, se_lab * se_lab)))
        if FLOOR_DOCUMENTS:
            se = _floored(se, se_lab, int(np.sum(_as(design.f) < 1.0)) or m.size)
    if reason is not None or se is None or se == 0.0 or (flat and mixed):
        out = _result(theta, 0.0, df if df else float("nan"), 1.0 - level, True, lam_bar,
                      se_labels=float("nan"), K=m.size, bounded=bounded)
        out["reason"] = ("the judge's corrected values show no spread: its errors cannot be measured"
                         if flat or reason is None else str(reason))
        return out
    return _result(theta, se, df, 1.0 - level, False, lam_bar,
                   se_labels=se_lab if se_lab is not None else float("nan"), K=m.size, bounded=bounded)


#: The two-sided p-value below which :func:`size_bias` flags a judge whose errors follow document size.
SIZE_BIAS_P = 0.05


def size_bias(n, s, f, size=None) -> dict:
    """Whether the judge's errors follow document size in the labelled sample beyond what the gold
    explains: the weighted least-squares fit of each labelled document's judge error rate
    ``(f_d - s_d) / n_d`` on its gold rate and ``log n_d`` (weights ``n_d``: the micro mean weighs a
    document's errors by its chunks, and a one-chunk document's rate of 0 or 1 says little). A judge
    with the same errors in every document (symmetric flips make the error rate a straight line in the
    gold rate; a useless judge makes it the judge's rate minus the gold rate) has no size term; a judge
    that errs more in long documents has one. Returns ``coefficient`` (of ``log n``), ``t``, its
    two-sided ``p_value`` (t with K - 3 df), ``correlation`` (the partial correlation of error and log
    size given the gold rate) and ``flag`` (p below :data:`SIZE_BIAS_P`).

    Such a judge is where a simple random sample of documents fails the judge-assisted micro interval:
    its correction rests on the few long documents the sample happens to hold (``benchmarks/README.md``,
    the judge panel). A sample drawn in proportion to size (``perdoc sample --design pps``) labels them
    in proportion. ``size``: the documents' sizes when ``n`` counts only their labelled chunks (a
    drawn sample with a take of chunks: the size term is the document's, the weights its labels)."""
    n, s, f = _as(n), _as(s), _as(f)
    K = n.size
    r, e, x = s / n, (f - s) / n, np.log(n if size is None else _as(size))
    out = {"coefficient": float("nan"), "t": float("nan"), "p_value": float("nan"), "correlation": float("nan"),
           "flag": False, "K": int(K)}
    if K < 5 or np.ptp(x) == 0 or _no_spread(e):
        return out
    sw = np.sqrt(n / n.mean())
    X = np.column_stack([np.ones(K), r, x]) * sw[:, None]
    y = e * sw
    beta, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
    if rank < 3:
        return out
    resid = y - X @ beta
    df = K - 3.0
    sigma2 = float(resid @ resid) / df
    try:
        cov = sigma2 * np.linalg.inv(X.T @ X)
    except np.linalg.LinAlgError:
        return out
    se = math.sqrt(max(float(cov[2, 2]), 0.0))
    if not se > 0:
        return out
    from ._dist import t_cdf
    tt = float(beta[2]) / se
    p = float(2.0 * (1.0 - t_cdf(abs(tt), df)))
    out.update(coefficient=float(beta[2]), t=tt, p_value=p, correlation=tt / math.sqrt(tt * tt + df),
               flag=bool(p < SIZE_BIAS_P))
    return out
