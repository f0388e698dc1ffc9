"""Quantile functions from scipy.special (scipy.stats costs most of a second to import)."""

from scipy import special

__all__ = ["t_ppf", "norm_ppf", "beta_ppf"]


def t_ppf(q, df):
    """Quantile of Student's t with ``df`` degrees of freedom (= scipy.stats.t.ppf)."""
    return float(special.stdtrit(df, q))


def norm_ppf(q):
    """Standard normal quantile (= scipy.stats.norm.ppf)."""
    return float(special.ndtri(q))


def beta_ppf(q, a, b):
    """Quantile of the Beta(a, b) distribution (= scipy.stats.beta.ppf)."""
    return float(special.betaincinv(a, b, q))
