"""Intervals that stay inside [0, 1] for a binary metric's micro mean, as R's ``survey::svyciprop``.

All three use the design variance ``V`` of the micro mean (CR1, times ``1 - K/M`` with the finite
population correction) and ``df`` = the design degrees of freedom (``K - 1``; ``K - H`` with H
strata), with ``p`` the micro mean and ``n = N`` the number of measurements:

* Korn-Graubard (``method = "beta"``): ``n_eff = p(1-p)/V * (qt(a/2, n-1) / qt(a/2, df))^2``;
  ``[qbeta(a/2, n_eff p, n_eff (1-p) + 1), qbeta(1 - a/2, n_eff p + 1, n_eff (1-p))]``.
* logit (``method = "logit"``): ``expit(logit(p) +- t(df) sqrt(V) / (p (1-p)))``.
* Wilson: the score interval with ``n_eff = p(1-p)/V`` and ``t(df)`` in place of z.

When ``p`` is 0 or 1, or ``V = 0``, none of them is defined (svyciprop fails); the documented
fallback (Parker et al. 2017, NCHS) takes ``n_eff = n`` and the Clopper-Pearson interval, and the
result says so.
"""

from __future__ import annotations

import numpy as np

from ._dist import special as _special

__all__ = ["korn_graubard", "logit_interval", "wilson", "clopper_pearson", "intervals", "METHODS"]

METHODS = ("korn_graubard", "logit", "wilson")


def intervals(p, V, n, df, alpha: float):
    """The three intervals (and the fallback) element-wise over arrays of ``p``, ``V``, ``n``, ``df``:
    ``({"korn_graubard": (low, high), "logit": ..., "wilson": ...}, fallback)``, ``fallback`` true
    where ``p`` is 0 or 1 or ``V`` is not positive and finite (then every interval is the
    Clopper-Pearson interval with ``n_eff = n``)."""
    sp = _special()
    p, V, n, df = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (p, V, n, df)))
    fb = ~((p > 0.0) & (p < 1.0)) | ~((V > 0) & np.isfinite(V))
    x = n * p
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        # Clopper-Pearson (exact binomial, x = n p successes out of n)
        cp_lo = np.where(x <= 0, 0.0, sp.betaincinv(x, n - x + 1, alpha / 2))
        cp_hi = np.where(x >= n, 1.0, sp.betaincinv(x + 1, n - x, 1 - alpha / 2))
        pp = np.where(fb, 0.5, p)
        VV = np.where(fb, 1.0, V)
        out = {}
        n_eff = pp * (1 - pp) / VV * (sp.stdtrit(n - 1, alpha / 2) / sp.stdtrit(df, alpha / 2)) ** 2
        lo = sp.betaincinv(n_eff * pp, n_eff * (1 - pp) + 1, alpha / 2)
        hi = sp.betaincinv(n_eff * pp + 1, n_eff * (1 - pp), 1 - alpha / 2)
        out["korn_graubard"] = (lo, hi)
        t = sp.stdtrit(df, 1 - alpha / 2)
        half = t * np.sqrt(VV) / (pp * (1 - pp))
        centre = np.log(pp / (1 - pp))
        out["logit"] = (_expit(centre - half), _expit(centre + half))
        n_eff = pp * (1 - pp) / VV
        t2 = t * t
        den = 1 + t2 / n_eff
        centre = (pp + t2 / (2 * n_eff)) / den
        half = t / den * np.sqrt(pp * (1 - pp) / n_eff + t2 / (4 * n_eff * n_eff))
        out["wilson"] = (centre - half, centre + half)
    return {m: (np.where(fb, cp_lo, lo), np.where(fb, cp_hi, hi)) for m, (lo, hi) in out.items()}, fb


def _one(method: str, p, V, n, df, alpha) -> tuple[tuple[float, float], bool]:
    res, fb = intervals(p, V, n, df, alpha)
    lo, hi = res[method]
    return (float(lo), float(hi)), bool(fb)


def clopper_pearson(p: float, n: float, alpha: float) -> tuple[float, float]:
    """Exact binomial interval for ``x = n p`` successes out of ``n`` (beta quantiles)."""
    return _one("logit", p, 0.0, n, 1.0, alpha)[0]


def korn_graubard(p: float, V: float, n: float, df: float, alpha: float) -> tuple[tuple[float, float], bool]:
    """Korn-Graubard interval; returns ``((low, high), fallback_used)``."""
    return _one("korn_graubard", p, V, n, df, alpha)


def logit_interval(p: float, V: float, n: float, df: float, alpha: float) -> tuple[tuple[float, float], bool]:
    """Wald interval on the logit scale, transformed back; ``((low, high), fallback_used)``."""
    return _one("logit", p, V, n, df, alpha)


def wilson(p: float, V: float, n: float, df: float, alpha: float) -> tuple[tuple[float, float], bool]:
    """Wilson score interval with the effective sample size ``p(1-p)/V`` and ``t(df)``."""
    return _one("wilson", p, V, n, df, alpha)


def _expit(x):
    with np.errstate(over="ignore"):
        e = np.exp(np.where(x >= 0, -x, x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
