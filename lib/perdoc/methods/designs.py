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

from . import intervals as _methods
from ..errors import InputError, ParameterError
from ..messages import Message
from .results import ConfidenceInterval, Interval

__all__ = ["stratified", "two_stage", "stratified_batch", "two_stage_batch", "StratumSummary"]


def _whole(x) -> bool:
    if isinstance(x, numbers.Integral):
        return True
    x = float(x)
    return math.isfinite(x) and x.is_integer()


def _some(names, shown: int = 5) -> str:
    """The first few names, quoted, and how many more (a message stays one short line)."""
    names = list(names)
    if not names:
        return "none"
    more = f", ... ({len(names) - shown} more)" if len(names) > shown else ""
    return ", ".join(map(repr, names[:shown])) + more


class StratumSummary(dict):
    """Per-stratum counts for the report: name -> {M_h, k_h, fraction, n, weight}."""


def _t_interval(estimand, method, label, est, se, df, level, notes=()) -> Interval:
    lo, hi, code = _methods.t_interval(est, se, df, 1 - level, False)
    if int(code) != _methods.OK:
        return Interval(estimand=estimand, method=method, label=label, estimate=est, level=level, se=se, df=df,
                        reason=Message("reason.zero_design_variance", "zero design variance: every sampled "
                                       "document gives the same value"),
                        role="primary", notes=tuple(notes))
    return Interval(estimand=estimand, method=method, label=label, estimate=est, level=level, se=se, df=df,
                    ci=ConfidenceInterval(float(lo), float(hi)), role="primary", notes=tuple(notes))


def stratified_batch(n, s, groups):
    """The stratified estimates of a batch of samples (``n``, ``s``: ``(..., K)``): ``groups`` holds
    ``(M_h, columns)`` per stratum, the columns of its sampled documents. Returns
    ``(R_c, se_micro, macro, se_macro, df)`` (arrays over the leading axes; ``df = K - H``).

    O(K log K) in the number of columns, whatever the number of strata H: the per-stratum variances
    come from :func:`_per_stratum` and the H terms are added in stratum order with one cumulative sum,
    so every number is the one a loop over the strata gives."""
    n, s = np.asarray(n, float), np.asarray(s, float)
    K = n.shape[-1]
    Ms = [M for M, _ in groups]
    cols = [np.asarray(c, dtype=np.intp).reshape(-1) for _, c in groups]
    ks = [int(c.size) for c in cols]
    k_h = np.array(ks, dtype=np.intp)
    w = np.empty(K)
    if cols:
        w[np.concatenate(cols)] = np.repeat([M / k for M, k in zip(Ms, ks)], k_h)
    X = np.sum(w * n, axis=-1)
    Rc = np.sum(w * s, axis=-1) / X
    u = s - Rc[..., None] * n
    r = s / n
    Mtot = float(sum(Ms))
    var_u, _ = _per_stratum(u, cols, k_h)
    var_r, mean_r = _per_stratum(r, cols, k_h)
    # the coefficients exactly as Python computes them stratum by stratum (ints, then floats)
    c_micro = np.array([M * M * (1 - k / M) for M, k in zip(Ms, ks)], dtype=float)
    c_macro = np.array([(M / Mtot) ** 2 * (1 - k / M) for M, k in zip(Ms, ks)], dtype=float)
    c_mean = np.array([M / Mtot for M in Ms], dtype=float)
    v_micro = _stratum_total(c_micro * var_u / k_h)
    v_macro = _stratum_total(c_macro * var_r / k_h)
    macro = _stratum_total(c_mean * mean_r)
    return Rc, np.sqrt(v_micro) / X, macro, np.sqrt(v_macro), float(K - len(groups))


def _stratum_total(terms):
    """The sum over the last axis, added one stratum after another from 0 (a cumulative sum: the
    same rounding as a loop ``total = total + term``)."""
    if terms.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    return 0.0 + np.cumsum(terms, axis=-1)[..., -1]


def _stratum_index(labels):
    """``(names, inverse)`` of stratum labels (any values, compared as text): the distinct names in
    sorted order and, per document, the position of its stratum in ``names``. O(K log K)."""
    text = np.array([str(x) for x in np.asarray(labels).tolist()], dtype=object).reshape(-1)
    if text.size == 0:
        return [], np.zeros(0, dtype=np.intp)
    names, inverse = np.unique(text, return_inverse=True)
    return names.tolist(), inverse.reshape(-1)


def _columns_by_stratum(inverse, H: int) -> list:
    """The columns of each of the H strata (``inverse`` as from :func:`_stratum_index`), each in
    document order. O(K log K)."""
    order = np.argsort(inverse, kind="stable")
    return np.split(order, np.cumsum(np.bincount(inverse, minlength=H))[:-1])


def _per_stratum(x, cols, k_h):
    """(sample variance, mean) of ``x[..., c]`` for each stratum's columns ``c``: arrays ``(..., H)``.
    The strata of one size are stacked and reduced together (one call per distinct size, O(K) work);
    each row is reduced exactly as ``np.var(x[..., c], axis=-1, ddof=1)`` and ``.mean(axis=-1)`` are."""
    H = len(cols)
    var = np.empty(x.shape[:-1] + (H,))
    mean = np.empty(x.shape[:-1] + (H,))
    if not H:
        return var, mean
    flat = np.concatenate(cols)
    start = np.concatenate(([0], np.cumsum(k_h)[:-1])).astype(np.intp)
    by_size = np.argsort(k_h, kind="stable")
    for which in np.split(by_size, np.flatnonzero(np.diff(k_h[by_size])) + 1):
        k = int(k_h[which[0]])
        block = x[..., flat[start[which][:, None] + np.arange(k)]]   # (..., strata of size k, k)
        var[..., which] = np.var(block, axis=-1, ddof=1)
        mean[..., which] = block.mean(axis=-1)
    return var, mean


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
    names, inverse = _stratum_index(strata)
    if inverse.size != n.size:
        raise InputError(f"design.strata: {inverse.size} stratum labels for {n.size} documents; one per document")
    sizes = {str(k): v for k, v in population_sizes.items()}
    unknown = [h for h in names if h not in sizes]
    if unknown:
        raise InputError(f"design.strata: stratum {unknown[0]!r} appears in the data but has no population size "
                         f"(population_sizes has {_some(sizes)})")
    present = set(names)
    empty = [h for h in sizes if h not in present]
    if empty:
        raise InputError(f"design.strata: stratum {empty[0]!r} has a population size but no sampled document; "
                         "every stratum needs at least 2 sampled documents")
    H = len(names)
    cols = _columns_by_stratum(inverse, H)
    ks = np.bincount(inverse, minlength=H).tolist()
    n_h = np.bincount(inverse, weights=n, minlength=H).tolist()  # whole chunk counts: exact in any order
    summary = StratumSummary()
    for h, k, n_sum in zip(names, ks, n_h):
        M = sizes[h]
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
        summary[h] = {"M_h": int(M), "k_h": k, "fraction": k / M, "weight": M / k, "n": float(n_sum)}
    groups = [(summary[h]["M_h"], c) for h, c in zip(names, cols)]
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
