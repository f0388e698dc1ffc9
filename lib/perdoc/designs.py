"""Estimates under stratified and two-stage designs (Cochran 1977; R's survey).

Stratified, combined ratio estimator. Strata h hold ``M_h`` documents of which ``k_h`` were drawn
by simple random sampling without replacement; document weight ``M_h / k_h``:

    R_c = sum_h (M_h/k_h) sum_{d in h} s_d / X,   X = sum_h (M_h/k_h) sum_{d in h} n_d
    v(R_c) = (1/X^2) sum_h M_h^2 (1 - k_h/M_h) s_uh^2 / k_h,   u_d = s_d - R_c n_d

with ``s_uh^2`` the sample variance of ``u_d`` within h, and ``df = K - H``. The macro mean is
``sum_h (M_h/M) rbar_h`` with variance ``sum_h (M_h/M)^2 (1 - k_h/M_h) s_rh^2 / k_h``.
Oracle: ``svyratio(~s, ~n, svydesign(ids = ~doc, strata = ~h, fpc = ~M_h))`` and ``svymean(~r, ...)``.

Two-stage: K of M documents, then ``n_d`` of the ``N_d`` chunks of document d, both without
replacement (``f1 = K/M``, ``f2d = n_d/N_d``):

    R2 = sum_d N_d ybar_d / sum_d N_d,  z_d = N_d (ybar_d - R2),  Nbar = sum_d N_d / K
    v(R2) = [ (1 - f1) var(z)/K + (f1/K^2) sum_d N_d^2 (1 - f2d) s2_d / n_d ] / Nbar^2

with ``s2_d = (q_d - s_d^2/n_d)/(n_d - 1)`` and ``df = K - 1``.
Oracle: ``svymean(~y, svydesign(ids = ~doc + chunk, fpc = ~M + N_d))``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import methods as _methods
from .errors import InputError, ParameterError
from .results import ConfidenceInterval, Interval

__all__ = ["stratified", "two_stage", "stratified_batch", "two_stage_batch", "StratumSummary"]


def _whole(x) -> bool:
    if isinstance(x, numbers.Integral):
        return True
    x = float(x)
    return math.isfinite(x) and x.is_integer()


class StratumSummary(dict):
    """Per-stratum counts for the report: name -> {M_h, k_h, fraction, n, weight}."""


def _t_interval(estimand, method, label, est, se, df, level, notes=()) -> Interval:
    lo, hi, code = _methods.t_interval(est, se, df, 1 - level, False)
    if int(code) != _methods.OK:
        return Interval(estimand=estimand, method=method, label=label, estimate=est, level=level, se=se, df=df,
                        reason="zero design variance: every sampled document gives the same value",
                        role="primary", notes=tuple(notes))
    return Interval(estimand=estimand, method=method, label=label, estimate=est, level=level, se=se, df=df,
                    ci=ConfidenceInterval(float(lo), float(hi)), role="primary", notes=tuple(notes))


def stratified_batch(n, s, groups):
    """The stratified estimates of a batch of samples (``n``, ``s``: ``(..., K)``): ``groups`` holds
    ``(M_h, columns)`` per stratum, the columns of its sampled documents. Returns
    ``(R_c, se_micro, macro, se_macro, df)`` (arrays over the leading axes; ``df = K - H``)."""
    n, s = np.asarray(n, float), np.asarray(s, float)
    K = n.shape[-1]
    w = np.empty(K)
    for M, cols in groups:
        w[cols] = M / len(cols)
    X = np.sum(w * n, axis=-1)
    Rc = np.sum(w * s, axis=-1) / X
    u = s - Rc[..., None] * n
    r = s / n
    Mtot = float(sum(M for M, _ in groups))
    v_micro = np.zeros(n.shape[:-1])
    v_macro = np.zeros(n.shape[:-1])
    macro = np.zeros(n.shape[:-1])
    for M, cols in groups:
        k = len(cols)
        v_micro = v_micro + M * M * (1 - k / M) * np.var(u[..., cols], axis=-1, ddof=1) / k
        v_macro = v_macro + (M / Mtot) ** 2 * (1 - k / M) * np.var(r[..., cols], axis=-1, ddof=1) / k
        macro = macro + M / Mtot * r[..., cols].mean(axis=-1)
    return Rc, np.sqrt(v_micro) / X, macro, np.sqrt(v_macro), float(K - len(groups))


def two_stage_batch(n, s, q, Nd, M):
    """The two-stage ratio to size of a batch of samples (arrays ``(..., K)``; ``Nd`` the chunks in
    each document): ``(R2, se)``."""
    n, s, q, Nd = (np.asarray(x, float) for x in (n, s, q, Nd))
    K = n.shape[-1]
    f1 = K / M
    f2 = n / Nd
    ybar = s / n
    R2 = np.sum(Nd * ybar, axis=-1) / np.sum(Nd, axis=-1)
    z = Nd * (ybar - R2[..., None])
    Nbar = Nd.sum(axis=-1) / K
    with np.errstate(invalid="ignore", divide="ignore"):
        s2 = np.where(n > 1, np.maximum(q - s * s / n, 0.0) / (n - 1), 0.0)
    within = np.where(f2 < 1, Nd**2 * (1 - f2) * s2 / n, 0.0)
    v = ((1 - f1) * np.var(z, axis=-1, ddof=1) / K + f1 / K**2 * np.sum(within, axis=-1)) / Nbar**2
    return R2, np.sqrt(v)


def stratified(n, s, strata, population_sizes: dict, level: float = 0.95):
    """Combined ratio (micro) and stratified macro mean; returns ``(micro, macro, summary)``."""
    n, s = np.asarray(n, float), np.asarray(s, float)
    strata = np.array([str(x) for x in np.asarray(strata).tolist()], dtype=object)
    sizes = {str(k): v for k, v in population_sizes.items()}
    names = sorted(set(strata))
    unknown = [h for h in names if h not in sizes]
    if unknown:
        raise InputError(f"design.strata: stratum {unknown[0]!r} appears in the data but has no population size "
                         f"(population_sizes has {', '.join(map(repr, sizes)) or 'none'})")
    empty = [h for h in sizes if h not in names]
    if empty:
        raise InputError(f"design.strata: stratum {empty[0]!r} has a population size but no sampled document; "
                         "every stratum needs at least 2 sampled documents")
    K, H = n.size, len(names)
    summary = StratumSummary()
    w = np.empty(K)
    for h in names:
        idx = strata == h
        k, M = int(idx.sum()), sizes[h]
        if isinstance(M, bool) or not isinstance(M, numbers.Real) or not _whole(M) or M < 1:
            raise ParameterError(f"design.strata.population_sizes.{h} must be a whole number of documents (got {M!r})")
        if M > 2**53:
            raise ParameterError(f"design.strata.population_sizes.{h} must be at most 2^53 documents: larger whole "
                                 "numbers are not exact in double precision")
        if k < 2:
            raise InputError(f"design.strata: stratum {h!r} has {k} sampled document; a stratified variance needs "
                             "at least 2 sampled documents in every stratum")
        if k > M:
            raise InputError(f"design.strata: stratum {h!r} has {k} sampled documents but a population of {int(M)}")
        w[idx] = M / k
        summary[h] = {"M_h": int(M), "k_h": k, "fraction": k / M, "weight": M / k, "n": float(n[idx].sum())}
    groups = [(summary[h]["M_h"], np.flatnonzero(strata == h)) for h in names]
    Rc, se_micro, macro, se_macro, df = (float(x) for x in stratified_batch(n, s, groups))
    micro_iv = _t_interval("micro", "design", f"combined ratio, stratified ({H} strata), t with K-H df",
                           Rc, se_micro, df, level)
    macro_iv = _t_interval("macro", "design", f"stratified mean of document rates ({H} strata), t with K-H df",
                           macro, se_macro, df, level)
    return micro_iv, macro_iv, summary


def two_stage(n, s, q, chunks_in_doc, population_size: int, level: float = 0.95):
    """Two-stage ratio-to-size estimator of the micro mean; returns ``(micro, summary)``."""
    n, s, q = np.asarray(n, float), np.asarray(s, float), np.asarray(q, float)
    Nd = np.asarray(chunks_in_doc, float)
    K = n.size
    M = population_size
    if M is None:
        raise ParameterError("design.population_size is required for a two-stage design")
    if not np.all(np.isfinite(Nd)) or np.any(Nd < 1) or np.any(Nd != np.round(Nd)):
        raise InputError("design.chunks_in_doc: every document needs a whole number of chunks >= 1")
    over = n > Nd
    if over.any():
        raise InputError(f"design.chunks_in_doc: {int(over.sum())} document(s) have more sampled chunks than "
                         "chunks in the document")
    f1 = K / M
    f2 = n / Nd
    single = (n < 2) & (f2 < 1)
    if single.any():
        raise InputError(f"two-stage design: {int(single.sum())} document(s) have a single sampled chunk out of "
                         "several, so their within-document variance is undefined; sample at least 2 chunks "
                         "per document (or all of them)")
    R2, se = (float(x) for x in two_stage_batch(n, s, q, Nd, M))
    iv = _t_interval("micro", "design", "two-stage ratio to size, t with K-1 df", R2, se, K - 1.0, level)
    summary = {"M": int(M), "K": K, "f1": f1, "chunks_in_population": float(Nd.sum()),
               "chunks_sampled": float(n.sum()), "f2_min": float(f2.min()), "f2_max": float(f2.max()),
               "f2_mean": float(f2.mean()), "documents_fully_enumerated": int(np.sum(f2 == 1))}
    return iv, summary
