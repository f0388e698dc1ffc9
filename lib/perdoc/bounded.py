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

import math

from ._dist import beta_ppf, norm_ppf, t_ppf

__all__ = ["korn_graubard", "logit_interval", "wilson", "clopper_pearson"]


def clopper_pearson(p: float, n: float, alpha: float) -> tuple[float, float]:
    """Exact binomial interval for ``x = n p`` successes out of ``n`` (beta quantiles)."""
    x = n * p
    lo = 0.0 if x <= 0 else float(beta_ppf(alpha / 2, x, n - x + 1))
    hi = 1.0 if x >= n else float(beta_ppf(1 - alpha / 2, x + 1, n - x))
    return lo, hi


def _degenerate(p: float, V: float) -> bool:
    return not (0.0 < p < 1.0) or not (V > 0 and math.isfinite(V))


def korn_graubard(p: float, V: float, n: float, df: float, alpha: float) -> tuple[tuple[float, float], bool]:
    """Korn-Graubard interval; returns ``((low, high), fallback_used)``."""
    if _degenerate(p, V):
        return clopper_pearson(p, n, alpha), True
    n_eff = p * (1 - p) / V * (t_ppf(alpha / 2, n - 1) / t_ppf(alpha / 2, df)) ** 2
    lo = float(beta_ppf(alpha / 2, n_eff * p, n_eff * (1 - p) + 1))
    hi = float(beta_ppf(1 - alpha / 2, n_eff * p + 1, n_eff * (1 - p)))
    return (lo, hi), False


def logit_interval(p: float, V: float, n: float, df: float, alpha: float) -> tuple[tuple[float, float], bool]:
    """Wald interval on the logit scale, transformed back; ``((low, high), fallback_used)``."""
    if _degenerate(p, V):
        return clopper_pearson(p, n, alpha), True
    t = t_ppf(1 - alpha / 2, df)
    half = t * math.sqrt(V) / (p * (1 - p))
    centre = math.log(p / (1 - p))
    return (_expit(centre - half), _expit(centre + half)), False


def wilson(p: float, V: float, n: float, df: float, alpha: float) -> tuple[tuple[float, float], bool]:
    """Wilson score interval with the effective sample size ``p(1-p)/V`` and ``t(df)``."""
    if _degenerate(p, V):
        return clopper_pearson(p, n, alpha), True
    n_eff = p * (1 - p) / V
    t = t_ppf(1 - alpha / 2, df)
    t2 = t * t
    den = 1 + t2 / n_eff
    centre = (p + t2 / (2 * n_eff)) / den
    half = t / den * math.sqrt(p * (1 - p) / n_eff + t2 / (4 * n_eff * n_eff))
    return (centre - half, centre + half), False


def _expit(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)
