"""Design diagnostics from the per-document sums (methods.md, "Diagnostics").

The intraclass correlation and the design effect explain why chunk-level intervals are too narrow;
they are not a substitute for the document-level variance (an "effective n" Wald interval is only a
baseline).
"""

from __future__ import annotations

import math

import numpy as np

from ..messages import Message
from .micro import _whole, ldexp
from .results import Diagnostics

__all__ = ["icc_anova", "diagnose", "QUANTILES"]

QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


def icc_anova(n: np.ndarray, s: np.ndarray, q: np.ndarray):
    """One-way ANOVA intraclass correlation (Donner 1986) from per-document sums.

    ``SSB = sum n_d (r_d - R)^2``, ``SSW = sum (q_d - s_d^2/n_d)``, ``MSB = SSB/(K-1)``,
    ``MSW = SSW/(N-K)``, ``n0 = (N - sum n_d^2/N)/(K-1)``,
    ``ICC = (MSB - MSW) / (MSB + (n0 - 1) MSW)``. Can be negative; 0/0 gives 0.
    NaN when every document has a single measurement (``N = K``: no within-document variance).
    Arrays ``(..., K)``: a float for one sample, an array for a batch.
    """
    n, s, q = (np.asarray(x, dtype=float) for x in (n, s, q))
    K = n.shape[-1]
    N = n.sum(axis=-1)
    r = s / n
    R = s.sum(axis=-1) / N
    ssb = np.sum(n * (r - R[..., None]) ** 2, axis=-1)
    ssw = np.sum(np.maximum(q - s * s / n, 0.0), axis=-1)
    msb = ssb / (K - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        msw = ssw / (N - K)
        n0 = (N - np.sum(n * n, axis=-1) / N) / (K - 1)
        den = msb + (n0 - 1) * msw
        icc = np.where(den == 0, 0.0, (msb - msw) / den)
    icc = np.where(N <= K, np.nan, icc)
    return float(icc) if icc.ndim == 0 else icc


def diagnose(n: np.ndarray, s: np.ndarray, q: np.ndarray | None, var_cr1: float, unit_exp: int = 0,
             icc: float | None = None) -> Diagnostics:
    """All diagnostics of one sample. ``var_cr1`` is the CR1 variance of the micro mean (no FPC);
    ``icc``: :func:`icc_anova` of the sample, when the caller has it.

    ``unit_exp``: the sums are ``2^unit_exp`` times the true ones (the estimators' working scale,
    :func:`perdoc.micro.working_exponents`); the rate quantiles are divided back and a rate of 1
    is a true rate of 1. Every other diagnostic is scale-free."""
    K = n.size
    N = float(n.sum())
    r = s / n
    sum_n2 = float(np.sum(n * n))
    notes = []
    if q is None:
        icc = deff = n_eff = deff_realised = float("nan")
        notes.append(Message("note.icc_needs_q", "ICC and design effect need the sums of squared scores (q)"))
    else:
        if icc is None:
            icc = icc_anova(n, s, q)
        if np.isnan(icc):
            notes.append(Message("note.icc_single_measurement", "ICC undefined: every document has a single "
                                 "measurement"))
        deff = 1.0 + (sum_n2 / N - 1.0) * icc
        n_eff = N / deff if deff > 0 else float("nan")
        S = float(s.sum())
        var_y = (float(q.sum()) - S * S / N) / (N - 1) if N > 1 else float("nan")
        deff_realised = var_cr1 / (var_y / N) if var_y > 0 else float("nan")
    qn = _quantiles(n, QUANTILES, whole=_small_whole(n))
    qr = _quantiles(r, QUANTILES)
    return Diagnostics(
        icc=icc, deff=deff, n_eff=n_eff, deff_realised=deff_realised,
        g_star=N * N / sum_n2, max_share=float(n.max() / N),
        frac_rate_0=float(np.mean(s == 0)),
        frac_rate_1=float(np.mean(s == (n if unit_exp == 0 else ldexp(n, unit_exp)))),
        n_quantiles={_qname(p): float(v) for p, v in zip(QUANTILES, qn)},
        rate_quantiles={_qname(p): ldexp(float(v), -unit_exp) for p, v in zip(QUANTILES, qr)},
        notes=tuple(notes),
    )


def _quantiles(x: np.ndarray, probs, whole: bool = False) -> list[float]:
    """``np.quantile(x, probs)`` (linear interpolation, the same numbers) for one sample without NaN:
    each quantile from its two order statistics, which one partial sort puts in place (a full sort
    below ``_PARTITION_MIN`` elements, where it is as fast). np.quantile itself costs more than the
    rest of the diagnostics on a small sample (a simulation asks for thousands), and its first call
    imports numpy.ma (about 40 ms of a command's start-up); a full sort of 10^6 sizes or rates took
    40-50 ms, the partial one 20 ms. ``whole``: the caller knows ``x`` holds whole numbers from 0 to
    a few times its size (document sizes), counted instead (3 ms at 10^6)."""
    x = np.asarray(x, dtype=float)
    last = x.size - 1
    wanted = []   # (prev, gamma) per probability; prev = last for the top
    for p in probs:
        virtual = last * p
        if virtual >= last:
            wanted.append((last, 0.0))
        else:
            prev = math.floor(virtual)
            wanted.append((prev, virtual - prev))
    kth = sorted({i for prev, _ in wanted for i in ((prev,) if prev == last else (prev, prev + 1))})
    # the order statistics wanted, read as Python floats (a list of them all is slow at 10^6)
    if x.size < _PARTITION_MIN:
        xs = np.sort(x).item
    elif whole:   # whole numbers (document sizes): the k-th smallest is the first value counted past k
        at = np.searchsorted(np.cumsum(np.bincount(x.astype(np.intp))), np.asarray(kth) + 1)
        xs = dict(zip(kth, at.astype(float).tolist())).__getitem__
    else:
        xs = _order_statistics(x, kth)
    out = []
    for prev, gamma in wanted:
        if prev == last:
            out.append(xs(last))
            continue
        a, b = xs(prev), xs(prev + 1)
        diff = b - a
        out.append(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)
    return out


def _order_statistics(x: np.ndarray, kth: list[int]):
    """A getter of the ``kth`` smallest elements of finite ``x`` (sorted distinct ranks), exactly:
    each element's bucket ``floor((x - min) * B / (max - min))`` never decreases as it grows, so the
    k-th smallest is the element of its rank inside the bucket where the buckets' running count
    passes k, and only the few buckets that hold a wanted rank are partially sorted (a partial sort
    of the whole sample took 22 ms at 10^6 rates, the buckets about 8). A partial sort of the whole
    when the range cannot be divided so (a constant sample, a range beyond the doubles)."""
    lo, hi = float(x.min()), float(x.max())
    B = int(min(1 << 16, max(1 << 10, x.size >> 4)))
    scale = B / (hi - lo) if hi > lo else 0.0
    if not (0.0 < scale < math.inf and (hi - lo) * scale < math.inf):
        return np.partition(x, kth).item   # every kth element is the sorted sample's, exactly
    b = x - lo
    b *= scale
    b = b.astype(np.intp)
    np.minimum(b, B - 1, out=b)   # (the largest lands on B, or just below by rounding)
    ends = np.cumsum(np.bincount(b, minlength=B))   # elements in buckets up to each
    where = np.searchsorted(ends, kth, side="right")   # each rank's bucket
    wanted = np.zeros(B, dtype=bool)
    wanted[where] = True
    keep = wanted[b]
    cand, cb = x[keep], b[keep]
    del b, keep
    got = {}
    for j in sorted(set(where.tolist())):   # (np.unique would import numpy.ma: 13-40 ms)
        first = int(ends[j - 1]) if j else 0
        ranks = [k for k, w in zip(kth, where.tolist()) if w == j]
        inside = np.partition(cand[cb == j], [k - first for k in ranks])
        got.update((k, inside.item(k - first)) for k in ranks)
    return got.__getitem__


def _small_whole(x: np.ndarray) -> bool:
    """Whether ``x`` holds only whole numbers from 1 to at most 8 times its length (so counting
    them costs about what reading them does)."""
    if x.size < _PARTITION_MIN:
        return False
    return 1.0 <= float(x.min()) and float(x.max()) <= 8.0 * x.size and _whole(x)


#: From this many elements the quantiles' order statistics come from a partial sort.
_PARTITION_MIN = 4096


def _qname(p: float) -> str:
    return {0.0: "min", 1.0: "max", 0.5: "median"}.get(p, f"p{int(round(p * 100)):02d}")
