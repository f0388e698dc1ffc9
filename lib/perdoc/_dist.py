"""Quantile functions from scipy.special (scipy.stats costs most of a second to import).

scipy.special itself is imported on first use, so that the command line can import it in a
background thread while DuckDB reads the data (:func:`prefetch`).
"""

import threading

__all__ = ["t_ppf", "t_cdf", "norm_ppf", "beta_ppf", "prefetch", "special"]

_special = None
_lock = threading.Lock()


def _sp():
    global _special
    if _special is None:
        with _lock:
            if _special is None:
                from scipy import special
                _special = special
    return _special


def special():
    """The scipy.special module (imported on first use): for the array forms of the functions below."""
    return _sp()


def prefetch() -> None:
    """Start importing scipy.special in a background thread (the command line's data loading
    releases the GIL, so the two overlap)."""
    threading.Thread(target=_sp, daemon=True).start()


def t_ppf(q, df):
    """Quantile of Student's t with ``df`` degrees of freedom (= scipy.stats.t.ppf)."""
    return float(_sp().stdtrit(df, q))


def t_cdf(x, df):
    """Distribution function of Student's t with ``df`` degrees of freedom (= scipy.stats.t.cdf)."""
    return float(_sp().stdtr(df, x))


def norm_ppf(q):
    """Standard normal quantile (= scipy.stats.norm.ppf)."""
    return float(_sp().ndtri(q))


def beta_ppf(q, a, b):
    """Quantile of the Beta(a, b) distribution (= scipy.stats.beta.ppf)."""
    return float(_sp().betaincinv(a, b, q))
