"""The macro mean: the average of per-document rates.

``r_d = s_d / n_d``, ``rbar = mean(r_d)``, ``se = sd(r_d) / sqrt(K)`` with ``K - 1`` degrees of freedom.
For the macro mean the leave-one-document-out jackknife variance equals ``sd(r)^2 / K``, so the t
interval already is the jackknife interval.
"""

from __future__ import annotations

import numpy as np

from .micro import _out

__all__ = ["macro_mean", "var_macro"]


def macro_mean(n: np.ndarray, s: np.ndarray):
    """Macro mean ``mean(s_d / n_d)``: the expected rate in a typical document. Arrays ``(..., K)``
    (documents on the last axis): a float for one sample, an array for a batch."""
    return _out(np.mean(np.asarray(s, dtype=float) / np.asarray(n, dtype=float), axis=-1))


def var_macro(n: np.ndarray, s: np.ndarray):
    """Variance of the macro mean ``var(r_d) / K`` (sample variance, ddof = 1)."""
    r = np.asarray(s, dtype=float) / np.asarray(n, dtype=float)
    return _out(np.var(r, ddof=1, axis=-1) / r.shape[-1])
