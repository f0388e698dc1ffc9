"""Design-based estimates from a drawn sample (``perdoc estimate LABELS --sample MANIFEST.csv``).

The manifest (:mod:`perdoc.sampling`, ``perdoc sample``) lists every unit drawn with its document's
inclusion probability ``prob`` (``pi_j``), stratum, draw and, for two-stage samples, chunk. The labels
are matched to it row by row. The estimators are design-consistent: whatever relation holds between
a document's size and its score, their bias vanishes as the sample grows, because they only weight
each sampled unit by the inverse of its probability of selection.

For each drawn document j (a draw, with replacement): ``w_j = 1 / pi_j``, ``N_j`` its chunks in
the frame, ``m_j`` labelled chunks with sum ``s_j`` and sum of squares ``q_j``, ``ybar_j = s_j / m_j``.
With ``a_j = N_j`` (micro mean) or ``a_j = 1`` (macro mean), the Hajek ratio

    theta = sum_j w_j a_j ybar_j / X,   X = sum_j w_j a_j,

and its linearised variance (the multistage formula of R's ``survey`` package):

    v = sum_h (1 - f_h) k_h / (k_h - 1) sum_{j in h} (z_j - zbar_h)^2
        + sum_h f_h sum_{j in h} (1 - m_j / N_j) w_j^2 a_j^2 s2_j / (m_j X^2)

with ``z_j = w_j a_j (ybar_j - theta) / X`` and ``s2_j = (q_j - s_j^2/m_j)/(m_j - 1)``. The stage-one
sampling fraction ``f_h`` is 1 for a take-all (certainty) stratum, which then contributes only its
chunk-sampling variance (none when whole documents are labelled), ``k_h / M_h`` for documents drawn
by simple random sampling in stratum h (equal probabilities below 1), and 0 for documents drawn with
unequal probabilities: the with-replacement (Hansen-Hurwitz) form, exact for PPS with replacement and
slightly conservative for PPS without replacement, where the chunk-sampling variance is carried by
the documents' own spread (the ultimate-cluster estimator).

Degrees of freedom: documents (draws) outside take-all strata minus their strata. A stratum drawn
with one document and no take-all gives no variance estimate: then no interval, with the reason.
Oracle: ``svymean`` / ``svyratio`` on ``svydesign(ids = ~psu + chunk, strata = ~stratum, probs = ~prob,
fpc = ...)``, see ``tests/oracle/oracle3.R``.
"""

from __future__ import annotations

import math

import numpy as np

from ..reading.manifest import SampleData, _strata_of, stage_fractions  # noqa: F401  (the drawn sample)
from ..messages import Message
from . import intervals as _methods
from .results import ConfidenceInterval, Interval

__all__ = ["SampleData", "design_estimate", "stage_fractions"]


def _linearised(w, a, ybar, m, N, s2, f, stratum):
    """(theta, se, df, reason) of the Hajek ratio sum w a ybar / sum w a, see the module docstring;
    ``stratum``: the documents' stratum labels."""
    return _linearised_in(w, a, ybar, m, N, s2, f, _strata_of(stratum))


def _linearised_in(w, a, ybar, m, N, s2, f, strata):
    """:func:`_linearised` with the strata already found (``strata``: :func:`_strata_of` of the labels),
    for callers that linearise several variables over one sample."""
    X = float(np.sum(w * a))
    theta = float(np.sum(w * a * ybar)) / X
    z = w * a * (ybar - theta) / X
    v1 = 0.0
    psus, groups = 0, 0
    names, _, order, starts, counts = strata
    fh_all = np.asarray(f, dtype=float)[order[starts]].tolist() if names.size else []
    live = [i for i, fh in enumerate(fh_all) if not fh >= 1.0]   # not taken whole
    for i in live:
        if counts[i] < 2:
            return theta, None, None, Message("reason.stratum_one_document", "stratum {stratum} has one drawn "
                                              "document: its variance cannot be estimated (draw at least two "
                                              "documents in every stratum that is not taken whole)",
                                              stratum=repr(str(names[i])))
    squares = _sum_of_squares_by_stratum(z, order, starts, counts, live)
    for i in live:   # in stratum order, as one loop over the strata adds them
        k_h, fh = int(counts[i]), fh_all[i]
        psus += k_h
        groups += 1
        v1 += (1.0 - fh) * k_h / (k_h - 1) * squares[i]
    with np.errstate(divide="ignore", invalid="ignore"):
        within = np.where((m < N) & (m >= 2), (1.0 - m / N) * (w * a) ** 2 * s2 / (m * X * X), 0.0)
    v2 = float(np.sum(f * within))
    if np.any((f > 0) & (m < N) & (m < 2)):
        return theta, None, None, Message("reason.single_labelled_chunk", "a document with a single labelled chunk "
                                          "out of several gives no estimate of the variance within it (label at "
                                          "least two chunks per document)")
    v = v1 + v2
    if psus:
        df = float(max(psus - groups, 1))
    else:  # every document taken whole: only chunk sampling varies
        df = float(max(int(np.sum(np.maximum(m - 1, 0))), 1))
    if not (v > 0 and math.isfinite(v)):
        return theta, 0.0 if v == 0 else None, df, (
            Message("reason.zero_design_variance_drawn", "zero design variance: every drawn document gives the "
                    "same value") if v == 0 else
            Message("reason.design_variance_not_finite", "the design variance is not finite"))
    return theta, math.sqrt(v), df, None


def _sum_of_squares_by_stratum(z, order, starts, counts, which) -> dict:
    """{stratum position: float(np.sum((z_h - z_h.mean()) ** 2))} for the strata in ``which``. The
    strata of one size are stacked and reduced together (one call per distinct size, O(K) work); each
    row is reduced as the one-dimensional ``z_h`` would be."""
    out = {}
    which = np.asarray(which, dtype=np.intp)
    if not which.size:
        return out
    sizes = counts[which]
    by_size = which[np.argsort(sizes, kind="stable")]
    for same in np.split(by_size, np.flatnonzero(np.diff(counts[by_size])) + 1):
        k = int(counts[same[0]])
        block = z[order[starts[same][:, None] + np.arange(k)]]          # (strata of size k, k)
        ss = np.sum((block - block.mean(axis=-1)[:, None]) ** 2, axis=-1)
        out.update(zip(same.tolist(), map(float, ss)))
    return out


def design_estimate(data: SampleData, *, level: float = 0.95, bounded: bool | None = None):
    """Design-based micro and macro means of ``data`` (:class:`SampleData`) with t intervals and, for
    a metric in [0, 1], logit-scale intervals; returns :class:`perdoc.results.Estimates` whose
    ``design`` block describes the design (its ``sampling`` is ``"drawn"``)."""
    from .diagnostics import diagnose
    from .results import check_level
    from .results import Estimates
    from . import micro as _micro
    level = check_level(level)
    alpha = 1.0 - level
    m = data.m.astype(float)
    N = data.N.astype(float)
    s, q = data.s.astype(float), data.q.astype(float)
    w = 1.0 / data.prob
    ybar = s / m
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = np.where(m >= 2, np.maximum(q - s * s / m, 0.0) / np.maximum(m - 1, 1), 0.0)
    if bounded is None:
        bounded = bool(np.all((s >= 0) & (s <= m) & (q <= s + 1e-9 * np.maximum(1, s))))
    mrange = (0.0, 1.0) if bounded else None
    intervals = []
    strata = _strata_of(data.stratum.astype(str))      # (once for both estimands)
    for kind, a in (("micro", N), ("macro", np.ones_like(N))):
        theta, se, df, reason = _linearised_in(w, a, ybar, m, N, s2, data.f, strata)
        label = "design-based (Hajek ratio)" if kind == "micro" else "design-based (weighted document rates)"
        intervals.append(_interval(kind, "design", label, theta, se, df, level, reason, mrange, alpha, logit=False))
        if bounded:
            intervals.append(_interval(kind, "logit_design", "design-based, on the logit scale", theta, se, df, level,
                                       reason, mrange, alpha, logit=True))
    intervals = _lead(intervals)
    diag = diagnose(m, s, q, _micro.var_cr1(m, s), unit_exp=0)
    info = {"sampling": "drawn", **data.info}
    # population_size stays None: the design's own fractions, not one fpc, apply (see ``design``)
    est = Estimates(K=data.K, N=float(m.sum()), level=level, population_size=None,
                    micro_estimate=intervals[0].estimate,
                    macro_estimate=next(iv.estimate for iv in intervals if iv.estimand == "macro"),
                    intervals=tuple(intervals), diagnostics=diag, replicates=0, seed=None,
                    notes=tuple(data.notes) + (
                        Message("note.srs_methods_ignore_drawn", "the simple-random-sampling methods (CR2, "
                                "bootstrap, ...) ignore this design and are not shown"),
                        Message("note.diagnostics_unweighted", "diagnostics are computed without design weights")),
                    design=info, metric_range=mrange)
    return est


def _lead(intervals):
    """The logit-scale interval leads a bounded metric's estimand when it is available (it stays in
    [0, 1] and holds its level near 0 and 1); otherwise the plain design interval leads."""
    from dataclasses import replace
    out = []
    for iv in intervals:
        logit = next((x for x in intervals if x.estimand == iv.estimand and x.method == "logit_design"), None)
        lead = "logit_design" if logit is not None and logit.ci is not None else "design"
        out.append(replace(iv, role="primary" if iv.method == lead else "alternative"))
    return out


def _interval(kind, method, label, theta, se, df, level, reason, mrange, alpha, *, logit) -> Interval:
    common = dict(estimand=kind, method=method, label=label, estimate=theta, level=level, se=se, df=df,
                  role="primary", metric_range=mrange)
    if reason is not None or se is None:
        return Interval(**common, reason=reason or Message("reason.no_variance_estimate", "no variance estimate"))
    if logit:
        if not (0.0 < theta < 1.0):
            return Interval(**common, reason=Message("reason.logit_design_bounds", "the estimate is {estimate:g}: "
                                                     "the logit scale is undefined at 0 and 1 (the plain design "
                                                     "interval is shown)", estimate=theta))
        lo, hi, code, _ = _methods.logit_cr2(np.float64(theta), np.float64(se), np.float64(df), alpha, False)
    else:
        lo, hi, code = _methods.t_interval(np.float64(theta), np.float64(se), np.float64(df), alpha, False)
    if int(code) != _methods.OK:
        return Interval(**common, reason=Message("reason.design_variance_zero_or_undefined", "no interval: the "
                                                 "design variance is zero or undefined"))
    return Interval(**common, ci=ConfidenceInterval(float(lo), float(hi)))
