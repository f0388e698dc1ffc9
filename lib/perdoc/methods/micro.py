"""The micro mean (ratio estimator) and its cluster-robust variances.

Notation (methods.md): K documents, ``n_d`` measurements and score sum ``s_d`` in document d,
``N = sum n_d``, ``R = sum s_d / N``, ratio residual ``u_d = s_d - R n_d``, leverage ``h_d = n_d / N``.

Every estimator takes arrays whose last axis runs over the documents, ``(..., K)``, and reduces over
that axis only: one sample (1-D arrays) gives plain floats, a batch of samples (the coverage
simulation, :mod:`perdoc.simulate`) gives arrays over the leading axes, and a sample gives the same
bits alone or in a batch. They never read, print or round.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ratio", "residuals", "var_cr1", "var_cr2", "var_cr3", "df_bell_mccaffrey",
           "df_imbens_kolesar", "moulton", "jackknife_bc", "working_exponents", "ldexp", "NEUTRAL_EXPONENT"]

#: Rates whose largest magnitude lies within ``2^-NEUTRAL_EXPONENT .. 2^NEUTRAL_EXPONENT`` (about
#: 1e-100 .. 1e100) are computed on as stored; beyond, they are first rescaled by a power of two.
NEUTRAL_EXPONENT = 332


def working_exponents(n: np.ndarray, s: np.ndarray, scale: float = 1.0) -> tuple[int, int]:
    """Powers of two that keep every computation inside the double range: ``(j, k)``.

    The estimators compute on ``s * 2^j`` (and ``q * 2^(2j)``) and divide every location or scale
    result by ``2^k``, where ``k = j + log2(scale)`` also removes the table's own scale (the stored
    sums are ``scale`` times the true ones, :attr:`perdoc.DocTable.scale`). ``j`` is 0 when the
    largest rate ``max |s_d| / n_d`` is within about 1e-100 .. 1e100, so ordinary data are computed
    on exactly as stored; otherwise ``2^j`` brings that rate to about 1. Squares and products of
    residuals (``u_d^2``, fourth powers in the Imbens-Kolesar df) then neither underflow nor
    overflow. Multiplying by a power of two is exact, and so is dividing by one: results are those
    of the unscaled data, rounding for rounding.
    """
    k_scale = _exponent_of_power_of_two(scale)
    s = np.asarray(s, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(all="ignore"):
        top = float(np.max(np.abs(s) / n)) if s.size else 0.0
    if _NORMAL_MIN <= top <= _NORMAL_MAX:
        # the largest |s_d| / n_d is a normal double: its exponent is the one computed below (the
        # quotient of the mantissas rounds the same way), in two passes instead of eight
        e = math.frexp(top)[1]
    else:
        nz = s != 0
        if not nz.any():
            return 0, k_scale
        # exponent of the largest |s_d| / n_d, from the exponents of s_d and n_d (no overflow in s/n)
        fs, es = np.frexp(np.abs(s[nz]))
        fn, en = np.frexp(n[nz])
        e = int(np.max(es - en + np.frexp(fs / fn)[1]))
    j = 0 if -NEUTRAL_EXPONENT <= e <= NEUTRAL_EXPONENT else -e
    return j, j + k_scale


_NORMAL_MIN, _NORMAL_MAX = 2.0 ** -1000, 2.0 ** 1000


def ldexp(x, e: int):
    """``x * 2^e`` for a float or an array: exact, and inf or 0 (no exception) beyond the double range."""
    if e == 0:
        return x
    with np.errstate(over="ignore", under="ignore"):
        y = np.ldexp(x, e)
    return float(y) if np.ndim(y) == 0 else y


def _exponent_of_power_of_two(x: float) -> int:
    m, e = math.frexp(float(x))
    if m != 0.5:
        from ..errors import InputError
        raise InputError(f"the table's scale must be a positive power of two (got {x!r})")
    return e - 1


def _out(x):
    """A float for one sample (0-d result), the array for a batch."""
    return float(x) if np.ndim(x) == 0 else x


def _f(x) -> np.ndarray:
    return np.asarray(x, dtype=float)


def ratio(n: np.ndarray, s: np.ndarray):
    """Micro mean ``R = sum s_d / sum n_d``: the rate of a chunk drawn at random."""
    return _out(_f(s).sum(axis=-1) / _f(n).sum(axis=-1))


def residuals(n: np.ndarray, s: np.ndarray, R=None) -> np.ndarray:
    """Ratio residuals ``u_d = s_d - R n_d`` (the linearisation of the ratio estimator)."""
    n, s = _f(n), _f(s)
    if R is None:
        R = ratio(n, s)
    return s - np.asarray(R, dtype=float)[..., None] * n


def var_cr1(n: np.ndarray, s: np.ndarray):
    """CR1 variance ``K/(K-1) * sum u_d^2 / N^2``.

    Equals R's ``survey::svyratio`` under one-stage cluster sampling (no FPC) and
    ``clubSandwich::vcovCR(lm(y ~ 1), type = "CR1")``.
    """
    n, s = _f(n), _f(s)
    return _out(_variances(n, s, None)[0])


def var_cr2(n: np.ndarray, s: np.ndarray):
    """CR2 (Bell-McCaffrey bias-reduced) variance ``sum u_d^2 / (1 - h_d) / N^2``.

    For an intercept-only model the adjustment matrix of document d is ``(I - J/N)^{-1/2}`` and the
    constant vector is its eigenvector with eigenvalue ``1 / (1 - h_d)``; hence the closed form.
    Oracle: ``clubSandwich::vcovCR(lm(y ~ 1), cluster = doc, type = "CR2")``.
    Written as ``u_d^2 * N / (N - n_d)`` so that ``1 - h_d`` is never formed by subtraction from 1.
    """
    n, s = _f(n), _f(s)
    return _out(_variances(n, s, _rest(n), cr3=False)[1])


def var_cr3(n: np.ndarray, s: np.ndarray):
    """CR3 variance ``sum u_d^2 / (1 - h_d)^2 / N^2`` (clubSandwich's "CR3", no (K-1)/K factor).

    ``(K-1)/K`` times this is the leave-one-document-out jackknife variance (about ``R``), because
    ``R_(-d) - R = -u_d / (N - n_d)``.
    """
    n, s = _f(n), _f(s)
    return _out(_variances(n, s, _rest(n))[2])


def _variances(n: np.ndarray, s: np.ndarray, rest: np.ndarray | None, *, cr3: bool = True):
    """``(CR1, CR2, CR3)`` variances of float arrays ``n``, ``s`` (arrays over the leading axes)
    given ``rest = N - n_d`` (:func:`_rest`; None: CR1 alone, the others None; ``cr3=False``: CR3
    None), with one array of residuals: ``u^2``, then ``u^2 w``, then ``u^2 w w`` with
    ``w = N / (N - n_d)``, each term as the single formulas multiply it (the same numbers)."""
    K = n.shape[-1]
    N = n.sum(axis=-1)
    uu = residuals(n, s)
    uu *= uu
    v1 = K / (K - 1) * np.sum(uu, axis=-1) / N**2
    if rest is None:
        return v1, None, None
    w = N[..., None] / rest
    uu *= w
    v2 = np.sum(uu, axis=-1) / N**2
    if not cr3:
        return v1, v2, None
    uu *= w
    return v1, v2, np.sum(uu, axis=-1) / N**2


def df_bell_mccaffrey(n: np.ndarray):
    """Bell-McCaffrey degrees of freedom for CR2 (independence working model), O(K).

    ``df = N^2 / (sum n_d^2 + sum_{d != e} q_d q_e)`` with ``q_d = n_d^2 / (N - n_d)``.
    The cross sum is ``(sum q)^2 - sum q^2`` when that loses at most one bit (``sum q^2`` at most half
    of ``(sum q)^2``: no document holds most of the q). When one document m holds most of the q (a
    document far longer than the others), it is ``2 q_m sum_{d != m} q_d`` plus the others' cross sum,
    taken the same way when none of them dominates the rest (from ``_PEEL_MIN`` documents).
    Otherwise (several long documents, or fewer documents) it is accumulated as
    ``2 sum_d q_d (q_1 + ... + q_{d-1})`` in ascending order of q, so every term is positive and
    nothing cancels (the sort that needs took 35 ms at 10^6 documents).
    Properties: ``1 <= df <= K - 1``; ``K - 1`` for equal sizes; ``1`` for ``K = 2``; depends on the
    sizes only. Oracle: ``clubSandwich::coef_test(..., vcov = "CR2", test = "Satterthwaite")``.
    """
    n = _f(n)
    return _out(_df_bell_mccaffrey(n, _rest(n)))


def _df_bell_mccaffrey(n: np.ndarray, rest: np.ndarray):
    """:func:`df_bell_mccaffrey` of float sizes ``n`` given ``rest = N - n_d`` (:func:`_rest`)."""
    N = n.sum(axis=-1)
    q = n * n / rest
    total = q.sum(axis=-1)
    square = np.sum(q * q, axis=-1)
    cross = np.asarray(total * total - square)
    dominated = square > 0.5 * (total * total)
    if np.any(dominated) and q.shape[-1] > _PEEL_MIN:
        dominated = _peel(q, cross, dominated)
    if np.any(dominated):   # a dominated cross sum: positive terms only
        qs = np.sort(q[dominated] if q.ndim > 1 else q, axis=-1)
        z = np.zeros(qs.shape[:-1] + (1,))
        prefix = np.concatenate((z, np.cumsum(qs, axis=-1)[..., :-1]), axis=-1)  # never by subtraction
        exact = 2.0 * np.sum(qs * prefix, axis=-1)
        if q.ndim > 1:
            cross[dominated] = exact
        else:
            cross = exact
    return N * N / (np.sum(n * n, axis=-1) + cross)


def moulton(n: np.ndarray, s: np.ndarray, q: np.ndarray):
    """Moulton (1986) moment estimates ``(sigma_eps^2, rho)`` from chunk residuals ``y_i - R``.

    As in Kolesar's ``dfadjust`` (defaults): ``ssr = sum_i (y_i - R)^2 = Q - R S``;
    ``rho = (sum_d u_d^2 - ssr) / (sum n_d^2 - N)`` (0 when every document has one chunk; not
    truncated at 0); ``sigma_eps^2 = max(ssr / N - rho, 0)``.
    """
    n, s, q = _f(n), _f(s), _f(q)
    N = n.sum(axis=-1)
    R = s.sum(axis=-1) / N
    u = s - R[..., None] * n
    ssr = np.maximum(q.sum(axis=-1) - R * s.sum(axis=-1), 0.0)
    den = np.sum(n * n, axis=-1) - N
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(den > 0, (np.sum(u * u, axis=-1) - ssr) / den, 0.0)
    sig = np.maximum(ssr / N - rho, 0.0)
    return _out(sig), _out(rho)


def df_imbens_kolesar(n: np.ndarray, s: np.ndarray, q: np.ndarray):
    """Imbens-Kolesar (2016) degrees of freedom for CR2 under a Moulton working model, O(K).

    The CR2 variance is ``V = sum_d (g_d'y)^2`` with ``g_d = a_d/N (1_d - h_d 1)`` and
    ``a_d = (1 - h_d)^{-1/2}``. With the working covariance
    ``Omega = sig I + rho blockdiag(J_d)`` (:func:`moulton`), IK's df is
    ``tr(P)^2 / tr(P^2)`` for ``P = G' Omega G``. For an intercept the K x K matrix P is
    (times N^2)

    * diagonal: ``sig n_d + rho (n_d^2 (1 - h_d) + h_d^2 (S2 - n_d^2) / (1 - h_d))``,
    * off-diagonal: ``a_d a_e h_d h_e (alpha - beta (n_d + n_e))``,

    with ``S2 = sum n_c^2``, ``alpha = rho S2 - sig N`` and ``beta = rho N``. The off-diagonal sum
    of squares is separable, ``sum_{d != e} w_d w_e (c_d - beta n_e)^2`` with
    ``w_d = a_d^2 h_d^2 = n_d^2 / (N (N - n_d))`` and ``c_d = alpha - beta n_d``, and is computed from
    leave-one-out sums (prefix plus suffix sums), so no K x K matrix is formed.
    Oracle: a dense implementation of the definition (tests/oracle/oracle.R), which reduces to the
    Bell-McCaffrey df when ``rho = 0``. NaN where ``tr(P^2)`` is not positive.
    """
    n = _f(n)
    sig, rho = moulton(n, s, q)
    # the df is scale-free, but its traces hold fourth powers of the scores: bring the moments to
    # about 1 by a power of two (exact, so the df is unchanged) when they are far from it
    sig, rho = normalise_moments(np.asarray(sig), np.asarray(rho))
    if n.shape[-1] >= _BY_SIZE_MIN:   # (every term depends on a document's size alone)
        return _out(_df_ik_rows_by_size(n, sig, rho))
    return _out(_df_ik_each(n, sig, rho))


def _df_ik_rows_by_size(n: np.ndarray, sig, rho) -> np.ndarray:
    """:func:`df_imbens_kolesar` of each sample (row) of ``n`` given its normalised moments, from its
    distinct sizes where it can (:func:`_df_imbens_kolesar_by_size`), else document by document."""
    K = n.shape[-1]
    rows = n.reshape(-1, K)
    sig = np.broadcast_to(np.asarray(sig, dtype=float), n.shape[:-1]).reshape(-1)
    rho = np.broadcast_to(np.asarray(rho, dtype=float), n.shape[:-1]).reshape(-1)
    out = np.empty(rows.shape[0])
    for i, row in enumerate(rows):
        sizes = _size_groups(row)
        df = None if sizes is None else _df_imbens_kolesar_by_size(*sizes, float(sig[i]), float(rho[i]))
        out[i] = df if df is not None else _df_ik_each(row, sig[i], rho[i])
    return out.reshape(n.shape[:-1])


def _df_ik_each(n: np.ndarray, sig, rho) -> np.ndarray:
    """:func:`df_imbens_kolesar` document by document, given the normalised moments."""
    sig, rho = np.asarray(sig)[..., None], np.asarray(rho)[..., None]
    # (written in place, operation for operation as the formulas read, so the same bits with about
    # half the arrays alive at once: at 10^6 documents this function was the estimate's memory peak)
    N = n.sum(axis=-1)[..., None]
    rest = _rest(n)
    nn = n * n
    S2 = np.sum(nn, axis=-1)[..., None]
    # diag = sig n + rho (n^2 rest / N + h^2 loo(n^2) N / rest), h = n / N
    diag = nn * rest
    diag /= N
    part = n / N
    part *= part
    part *= _loo(nn)
    part *= N
    part /= rest
    diag += part
    diag *= rho
    part = np.multiply(sig, n, out=part)
    diag += part
    del part
    trace = np.sum(diag, axis=-1)
    diag *= diag
    trace_sq = np.sum(diag, axis=-1)
    del diag
    w = nn
    w /= N * rest
    del nn, rest
    alpha = rho * S2 - sig * N
    beta = rho * N
    c = beta * n
    np.subtract(alpha, c, out=c)
    # sum_{d != e} w_d w_e (c_d^2 - 2 beta c_d n_e + beta^2 n_e^2)
    # = sum_d w_d (c_d^2 W_d - 2 beta c_d Wn_d + beta^2 Wnn_d), with the leave-one-out sums W, Wn, Wnn
    # of w, w n and w n^2
    off = c * c
    off *= _loo(w)
    c *= 2.0 * beta
    wx = w * n
    del w   # (made again below, the same numbers: four arrays alive at once instead of five)
    c *= _loo(wx)
    off -= c
    del c
    wx *= n
    wx = _loo(wx)
    wx *= beta * beta
    off += wx
    del wx
    w = n * n
    w /= N * _rest(n)
    off *= w
    trace_sq += np.sum(off, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(trace_sq > 0.0, trace * trace / trace_sq, np.nan)


#: From this many documents the size-only sums of :func:`df_imbens_kolesar` are taken once per
#: distinct size (with its count) when the sizes are whole numbers of at most 8 K: at 10^6 documents
#: 28 -> 9 ms; below, per document (a few hundred microseconds either way).
_BY_SIZE_MIN = 4096


def _size_groups(n: np.ndarray):
    """``(sizes, counts)``: the distinct values of one sample's sizes ``n`` and how many documents
    have each, as floats, when ``n`` holds at least ``_BY_SIZE_MIN`` whole numbers from 1 to 8 K
    (counted in one pass); None otherwise."""
    K = n.shape[-1]
    if n.ndim != 1 or K < _BY_SIZE_MIN or not (float(n.min()) >= 1.0 and float(n.max()) <= 8.0 * K):
        return None
    if not _whole(n):
        return None
    counts = np.bincount(n.astype(np.intp))
    sizes = np.flatnonzero(counts)
    return sizes.astype(float), counts[sizes].astype(float)


def _df_imbens_kolesar_by_size(v: np.ndarray, m: np.ndarray, sig: float, rho: float):
    """:func:`df_imbens_kolesar` from the distinct sizes ``v`` and their counts ``m`` (the terms of a
    document depend on its size and on the totals alone): each per-document term is formed as there,
    operation for operation, and the sums over documents are sums over sizes weighted by their
    counts (so they differ from the per-document sums in the last bits only). A leave-one-out sum
    ``total - x`` loses at most a bit when no document holds more than half the total; when one does
    (then it is alone of its size), None: the per-document computation handles it."""
    N = float(np.sum(m * v))
    rest = N - v
    nn = v * v
    S2 = float(np.sum(m * nn))
    loo_nn = S2 - nn
    if not (N <= _EXACT_TOTAL and S2 <= _EXACT_TOTAL):   # (else not every partial sum is exact)
        return None
    # diag = sig n + rho (n^2 rest / N + h^2 loo(n^2) N / rest), h = n / N
    diag = nn * rest
    diag /= N
    part = v / N
    part *= part
    part *= loo_nn
    part *= N
    part /= rest
    diag += part
    diag *= rho
    diag += sig * v
    trace = float(np.sum(m * diag))
    trace_sq = float(np.sum(m * (diag * diag)))
    w = nn / (N * rest)
    alpha = rho * S2 - sig * N
    beta = rho * N
    c = alpha - beta * v
    wx = w * v
    wxx = wx * v
    loo = []
    for x in (w, wx, wxx):
        loo_x = _loo_by_size(x, m)
        if loo_x is None:
            return None
        loo.append(loo_x)
    off = c * c
    off *= loo[0]
    c *= 2.0 * beta
    c *= loo[1]
    off -= c
    loo[2] *= beta * beta
    off += loo[2]
    off *= w
    trace_sq += float(np.sum(m * off))
    return trace * trace / trace_sq if trace_sq > 0.0 else math.nan


def _loo_by_size(x: np.ndarray, m: np.ndarray):
    """:func:`_loo` of positive per-size values ``x`` held by ``m`` documents each: the total minus
    each when none holds more than half of it; when one does (alone of its size), the others' sum R
    for it and ``x_max + (R - x)`` for the others, as :func:`_loo_peeled` takes them, when none of
    them holds half of R; None otherwise."""
    total = float(np.sum(m * x))
    if not math.isfinite(total):
        return None
    top = int(np.argmax(x))
    if float(x[top]) <= 0.5 * total:
        return total - x
    others = np.delete(x, top)
    rest = float(np.sum(np.delete(m, top) * others))
    if m[top] != 1.0 or not (others.size == 0 or float(others.max()) <= 0.5 * rest):
        return None
    out = rest - x
    out += x[top]
    out[top] = rest
    return out


def normalise_moments(sig, rho):
    """``(sig, rho)`` times one power of two bringing the larger to about 1, when it lies outside
    ``2^-128 .. 2^128`` (else unchanged). Works on floats and on arrays (one factor per element)."""
    g = np.maximum(np.abs(sig), np.abs(rho))
    e = np.frexp(g)[1]
    shift = np.where((g > 0) & np.isfinite(g) & ((e < -128) | (e > 128)), -e, 0)
    if np.ndim(shift) == 0:
        shift = int(shift)
        if shift == 0:
            return sig, rho
        return math.ldexp(sig, shift), math.ldexp(rho, shift)
    return np.ldexp(sig, shift), np.ldexp(rho, shift)


def jackknife_bc(n: np.ndarray, s: np.ndarray):
    """Bias-corrected jackknife ratio and its jackknife standard error: ``(R_J, se_J)``.

    With the leave-one-document-out ratios ``R_(-d) = (S - s_d) / (N - n_d)``,
    ``R_J = K R - (K - 1) mean_d R_(-d)`` and
    ``se_J = sqrt((K - 1)/K sum_d (R_(-d) - mean R_(-))^2)`` (no finite population factor).
    Computed from ``R_(-d) - R = -u_d / (N - n_d)`` (methods.md), so nothing cancels:
    ``R_J = R + (K - 1) mean(v)`` and the deviations are ``-(v_d - mean v)``, ``v_d = u_d / (N - n_d)``.
    Arrays of shape ``(..., K)``: floats for one sample, arrays over the leading axes for a batch.
    """
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    return _jackknife_bc(n, s, _rest(n))


def _jackknife_bc(n: np.ndarray, s: np.ndarray, rest: np.ndarray):
    """:func:`jackknife_bc` of float arrays given ``rest = N - n_d`` (:func:`_rest`)."""
    K = n.shape[-1]
    N = n.sum(axis=-1)
    R = s.sum(axis=-1) / N
    # u = s - R n, then v = u / (N - n_d), dev = v - mean v and its square in the same array, in
    # the same layout (the same numbers as separate arrays; at 10^6 documents the estimate's peak of
    # memory was here, four arrays beside N - n_d)
    v = s - R[..., None] * n
    v /= rest
    vbar = np.mean(v, axis=-1)
    R_J = R + (K - 1) * vbar
    v -= vbar[..., None]
    v *= v
    se_J = np.sqrt((K - 1) / K * np.sum(v, axis=-1))
    if R_J.ndim == 0:
        return float(R_J), float(se_J)
    return R_J, se_J


def _peel(q: np.ndarray, cross, dominated):
    """The cross sums of :func:`df_bell_mccaffrey` where one document m holds most of the q:
    ``2 q_m sum_{d != m} q_d`` (positive) plus the others' cross sum by the identity, when none of
    them dominates the rest. Written into ``cross`` (an array, or a 0-d array for one sample); returns
    which rows are still dominated (they are summed sorted)."""
    rows = q.reshape(-1, q.shape[-1])
    out = cross.reshape(-1)
    left = np.array(dominated).reshape(-1).copy()
    for i in np.flatnonzero(left):
        m, others = _set_apart(rows[i])
        rest = others.sum()
        others *= others    # (their squares in the same array: one copy of the row alive, not two)
        rest_square = others.sum()
        if not rest_square > 0.5 * (rest * rest):
            out[i] = 2.0 * rows[i, m] * rest + (rest * rest - rest_square)
            left[i] = False
    return left.reshape(np.shape(dominated))


#: From this many documents a cross sum that one document dominates is split at that document
#: rather than sorted (below, the sort costs less than the split's copy).
_PEEL_MIN = 4096

#: Below this many elements the prefix and suffix sums are as fast as the exactness checks.
_LOO_EXACT_MIN = 256
#: Non-negative whole numbers whose total is at most 2^53 have every partial sum exact.
_EXACT_TOTAL = float(2 ** 53)


def _rest(n: np.ndarray) -> np.ndarray:
    """``N - n_d`` computed as the sum of the other documents' sizes (exact for integers)."""
    return _loo(np.asarray(n, dtype=float))


def _loo(x: np.ndarray) -> np.ndarray:
    """Leave-one-out sums ``sum_{e != d} x_e`` along the last axis.

    - Whole numbers whose every partial sum is an integer below 2^53 (document sizes, their squares)
      sum exactly in any order: the total minus each, the same number.
    - Non-negative numbers none of which exceeds half their total: the total (a pairwise sum) minus
      each, which then loses at most one bit (every result is at least half the total); prefix sums
      gather more rounding, and cost twice the time at 10^6 elements.
    - Non-negative numbers one of which holds most of the total and none of the others half of
      theirs: the same with that one set apart (:func:`_loo_peeled`).
    - Otherwise (a negative or infinite number, or several holding most of the total in turn) from
      prefix and suffix sums, with no subtraction."""
    x = np.asarray(x, dtype=float)
    if x.size >= _LOO_EXACT_MIN:
        total = x.sum(axis=-1, keepdims=True)
        if _whole(x[..., :_LOO_EXACT_MIN]):   # (fractions fail on the first few)
            if bool(np.all(total <= _EXACT_TOTAL)) and _whole(x):
                return total - x
        if bool(np.all(x >= 0)) and bool(np.all(np.isfinite(total))):
            if bool(np.all(x <= 0.5 * total)):
                return total - x
            peeled = _loo_peeled(x)
            if peeled is not None:
                return peeled
    if x.shape[-1] < 2:
        return np.zeros_like(x)
    out = np.empty_like(x)      # the prefix sums, then plus the suffix sums (in place: the same bits)
    out[..., 0] = 0.0
    np.cumsum(x[..., :-1], axis=-1, out=out[..., 1:])
    suffix = np.empty_like(x)   # sum of the documents after each, summed from the last
    suffix[..., -1] = 0.0
    np.cumsum(x[..., :0:-1], axis=-1, out=suffix[..., -2::-1])
    out += suffix
    return out


def _loo_peeled(x: np.ndarray):
    """:func:`_loo` of non-negative ``x`` where in each row one element m holds most of the total
    and none of the others holds half of theirs, R: ``R`` for m, ``x_m + (R - x_d)`` for the others
    (each difference loses at most a bit, the sum adds a positive number); None for any other ``x``."""
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty_like(rows)
    for i, row in enumerate(rows):
        m, others = _set_apart(row)
        R = others.sum()
        if not others.max() <= 0.5 * R:
            return None
        np.subtract(R, row, out=out[i])
        out[i] += row[m]
        out[i, m] = R
    return out.reshape(x.shape)


def _set_apart(row: np.ndarray) -> tuple[int, np.ndarray]:
    """``(m, others)``: the position of the largest element of the 1-D ``row`` and the row without it
    (:func:`_peel`, :func:`_loo_peeled`)."""
    m = int(np.argmax(row))
    return m, np.delete(row, m)


def _whole(x: np.ndarray) -> bool:
    """Whether every element is a non-negative whole number (a block of the last axis at a time, so
    that no temporary is as long as ``x``, and stopping at the first block that is not)."""
    for start in range(0, x.shape[-1], _BLOCK):
        b = x[..., start:start + _BLOCK]
        if not (bool(np.all(b >= 0)) and bool(np.all(b == np.floor(b)))):
            return False
    return True


#: Elements of the last axis :func:`_whole` takes at a time (its temporaries stay in cache).
_BLOCK = 1 << 16
