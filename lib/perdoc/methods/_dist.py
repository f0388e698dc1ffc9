"""Normal, Student t and beta distribution functions for the rest of perdoc.

``scipy.special`` costs 0.1-0.15 s to import (``scipy.stats`` most of a second), more than a
command-line estimate spends computing. So :func:`special` returns a stand-in for the
``scipy.special`` module whose ``stdtrit``, ``ndtri`` and ``betaincinv`` are perdoc's own
(:mod:`perdoc._quantiles`, agreeing with scipy to about 1e-14 relative) for arguments inside the
domain ``tests/test_dist.py`` checks against scipy: pure Python for small inputs (at most
:data:`SMALL` elements), numpy loops for larger ones, giving the same numbers bit for bit, so a
sample's interval does not depend on how many samples are computed with it. Arguments outside
that domain (NaN, infinities, extreme parameters) and every other attribute (``stdtr``, ...) go
to ``scipy.special``, imported on first use. The scalar functions below take the same routes.
"""

import functools
import math
import threading

import numpy as np

from . import _quantiles

__all__ = ["t_ppf", "t_cdf", "norm_ppf", "beta_ppf", "prefetch", "special", "SMALL"]

SMALL = 64   # above this many elements the numpy form is faster than the pure-Python one

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


# The domain of perdoc's own forms (what tests/test_dist.py compares with scipy); anything else,
# including NaN, infinities and the ends of the ranges, goes to scipy, element by element.
_Q_MIN, _Q_MAX = 1e-300, 1.0 - 2.0 ** -53
_DF_MIN, _DF_MAX = 0.5, 1e10
_AB_MIN, _AB_MAX = 0.05, 1e8   # below this a beta quantile magnifies the error of I_x(a, b) 1/a times
_X_MIN = 1e-280   # a beta quantile below this (near underflow) is left to scipy; 1.0 is kept


def _q_in(q):
    return (q >= _Q_MIN) & (q <= _Q_MAX)


def _ndtri_in(q):
    return _q_in(q)


def _stdtrit_in(df, q):
    return (df >= _DF_MIN) & (df <= _DF_MAX) & _q_in(q)


def _ab_in(a):
    return ((a >= _AB_MIN) & (a <= _AB_MAX)) | (a == 0.0)


def _betaincinv_in(a, b, q):
    # a zero parameter (Clopper-Pearson with no hit, or every chunk a hit) has no quantile: NaN
    return _ab_in(a) & _ab_in(b) & _q_in(q)


def _betaincinv_out(x, a, b, q):
    return ((x >= _X_MIN) & (x <= 1.0)) | ((a == 0.0) | (b == 0.0))


def _betaincinv(a, b, q):
    return math.nan if a == 0.0 or b == 0.0 else _quantiles.betaincinv(a, b, q)


def _v_betaincinv(a, b, q):
    out = np.full(a.shape, np.nan)
    k = (a != 0.0) & (b != 0.0)
    if k.any():
        out[k] = _quantiles.v_betaincinv(a[k], b[k], q[k])
    return out


_FLOAT = np.dtype(np.float64)


def _own(name, scalar, vector, inside, args, kwargs, valid=None):
    """``scipy.special.<name>(*args)`` computed by perdoc's own ``scalar`` (up to :data:`SMALL`
    elements) or ``vector`` function (same results, bit for bit) where every argument is inside
    the checked domain, and by scipy elsewhere (and for keyword arguments or other dtypes)."""
    if not kwargs:
        try:
            arrs = [np.asarray(a) for a in args]
        except Exception:  # noqa: BLE001 - anything unusual is scipy's business
            arrs = None
        if arrs is not None and all(a.dtype == _FLOAT or a.dtype.kind in "iub" for a in arrs):
            shape = np.broadcast_shapes(*(a.shape for a in arrs))
            cols = [np.broadcast_to(a, shape).astype(np.float64).ravel() for a in arrs]
            ok = inside(*cols)
            out = np.empty(cols[0].size, dtype=np.float64)
            if ok.any():
                sub = [c[ok] for c in cols]
                if sub[0].size <= SMALL:
                    vals = np.array([scalar(*v) for v in zip(*(c.tolist() for c in sub))], dtype=np.float64)
                else:   # each distinct argument tuple once (intervals often share df and level)
                    uniq, inv = np.unique(np.stack(sub, axis=1), axis=0, return_inverse=True)
                    vals = vector(*(np.ascontiguousarray(uniq[:, j]) for j in range(len(sub))))[inv.ravel()]
                out[ok] = vals
                if valid is not None:
                    ok[ok] = valid(vals, *sub)
            if not ok.all():
                out[~ok] = getattr(_sp(), name)(*(c[~ok] for c in cols))
            if not shape:
                return np.float64(out[0])
            return out.reshape(shape)
    return getattr(_sp(), name)(*args, **kwargs)


def _scalar(x) -> bool:
    """A float or a 0-d float64 array (what ``np.where`` makes of scalars)."""
    return isinstance(x, float) or (isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype == _FLOAT)


@functools.lru_cache(maxsize=4096)
def _stdtrit_scalar(df: float, q: float):
    """One t quantile, remembered: a simulation asks for the same df and level thousands of times."""
    return _own("stdtrit", _quantiles.stdtrit, _quantiles.v_stdtrit, _stdtrit_in, (np.float64(df), np.float64(q)), {})


class _Special:
    """``scipy.special`` with perdoc's own ``stdtrit``, ``ndtri``, ``betaincinv`` (see the module
    docstring); every other attribute is scipy's (imported on first use)."""

    def __getattr__(self, name):
        return getattr(_sp(), name)

    @staticmethod
    def stdtrit(df, q, **kwargs):
        if not kwargs and _scalar(df) and _scalar(q):
            return _stdtrit_scalar(float(df), float(q))
        return _own("stdtrit", _quantiles.stdtrit, _quantiles.v_stdtrit, _stdtrit_in, (df, q), kwargs)

    @staticmethod
    def ndtri(q, **kwargs):
        return _own("ndtri", _quantiles.ndtri, _quantiles.v_ndtri, _ndtri_in, (q,), kwargs)

    @staticmethod
    def betaincinv(a, b, q, **kwargs):
        return _own("betaincinv", _betaincinv, _v_betaincinv, _betaincinv_in,
                    (a, b, q), kwargs, valid=_betaincinv_out)


_SPECIAL = _Special()


def special():
    """``scipy.special``'s namespace for the array forms (``special().stdtrit(df, q)``, ...): small
    inputs of ``stdtrit``, ``stdtr``, ``ndtri`` and ``betaincinv`` are computed without importing
    scipy, everything else by scipy."""
    return _SPECIAL


def prefetch() -> None:
    """Start importing scipy.special in a background thread (for callers that will need it for
    large arrays: the import then overlaps with their own work)."""
    threading.Thread(target=_sp, daemon=True).start()


def t_ppf(q, df):
    """Quantile of Student's t with ``df`` degrees of freedom (= scipy.stats.t.ppf)."""
    return float(_SPECIAL.stdtrit(df, q))


def t_cdf(x, df):
    """Distribution function of Student's t with ``df`` degrees of freedom (= scipy.stats.t.cdf);
    scipy's, as ``special().stdtr``."""
    return float(_sp().stdtr(df, x))


def norm_ppf(q):
    """Standard normal quantile (= scipy.stats.norm.ppf)."""
    return float(_SPECIAL.ndtri(q))


def beta_ppf(q, a, b):
    """Quantile of the Beta(a, b) distribution (= scipy.stats.beta.ppf)."""
    return float(_SPECIAL.betaincinv(a, b, q))
