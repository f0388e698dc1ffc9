"""Wild cluster restricted (WCR) bootstrap for the micro mean, by document.

For ``H0: mu = mu0`` the restricted residuals are ``ut_d = s_d - mu0 n_d``. A draw multiplies each
document's residuals by one weight ``v_d``; the refit needs no regression (methods.md):

    A = sum_d v_d ut_d,   u*_d = v_d ut_d - n_d A / N,   t* = (A / N) / (sqrt(c1 sum_d u*_d^2) / N)

with ``c1 = K/(K-1)`` (CR1). The observed statistic is ``t = (R - mu0) / se_CR1``, and
``p(mu0) = share of draws with |t*| >= |t|``. The interval is the set of ``mu0`` not rejected,
``{mu0 : p(mu0) > alpha}``, found by test inversion with the same weights for every ``mu0``.

Weights: Rademacher (+-1), enumerated when ``2^K <= B``; Webb's six-point distribution
(+-sqrt(1/2), +-1, +-sqrt(3/2)), enumerated when ``6^K <= B``, is the default below 10 documents,
where Rademacher has too few distinct draws. When no ``mu0`` can be rejected (with Rademacher and
``K <= 5`` the smallest possible p is ``2/2^K > 0.05``) the interval is the whole real line, and the
result says so. References: Cameron, Gelbach & Miller 2008; MacKinnon & Webb 2018; Roodman et al. 2019.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["WildResult", "weights_matrix", "p_value", "wild_interval", "WEBB"]

WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
MAX_ENUMERATE = 1 << 16


@dataclass(frozen=True)
class WildResult:
    low: float | None
    high: float | None
    whole_line: bool
    weights: str
    enumerated: bool
    draws: int
    min_p: float


BLOCK_ELEMS = 1 << 21  # weights are drawn and reduced in blocks: memory O(B + block), never B x K


def _scheme(K: int, weights: str, B: int) -> tuple[np.ndarray, str, bool]:
    if weights == "auto":
        weights = "webb" if K < 10 else "rademacher"
    if weights not in ("rademacher", "webb"):
        raise ValueError(f"weights must be 'rademacher', 'webb' or 'auto' (got {weights!r})")
    values = np.array([-1.0, 1.0]) if weights == "rademacher" else WEBB
    total = values.size ** K
    return values, weights, bool(total <= B and total <= MAX_ENUMERATE)


def _weight_blocks(K: int, weights: str = "auto", B: int = 9999, seed: int | None = 1,
                   block_elems: int = BLOCK_ELEMS):
    """Yield blocks of rows of the B x K weight matrix (all patterns when enumerated)."""
    values, _, enumerated = _scheme(K, weights, B)
    rows = max(1, block_elems // K)
    if enumerated:
        patterns = itertools.product(values, repeat=K)
        while True:
            block = list(itertools.islice(patterns, rows))
            if not block:
                return
            yield np.array(block, dtype=float)
    rng = np.random.default_rng(seed)
    for start in range(0, B, rows):
        b = min(rows, B - start)
        yield values[rng.integers(0, values.size, size=(b, K))]


def weights_matrix(K: int, weights: str = "auto", B: int = 9999, seed: int | None = 1) -> tuple[np.ndarray, str, bool]:
    """The whole B x K matrix of weights (rows = draws): for tests and small K only."""
    _, name, enumerated = _scheme(K, weights, B)
    return np.vstack(list(_weight_blocks(K, weights, B, seed))), name, enumerated


class _Prepared:
    """Per-draw sums that do not depend on mu0, so each p(mu0) costs O(B) and memory is O(B)."""

    def __init__(self, n, s, blocks):
        self.n, self.s = np.asarray(n, float), np.asarray(s, float)
        self.K = self.n.size
        self.N = self.n.sum()
        self.c1 = self.K / (self.K - 1)
        self.R = self.s.sum() / self.N
        u = self.s - self.R * self.n
        self.se = math.sqrt(self.c1 * np.sum(u * u)) / self.N
        # ut = s - mu0 n: every per-draw sum is a polynomial in mu0
        Z1 = np.column_stack([self.s, self.n, self.s * self.n, self.n**2])
        Z2 = np.column_stack([self.s**2, self.s * self.n, self.n**2])
        parts1, parts2, const = [], [], 0
        for v in blocks:
            parts1.append(v @ Z1)
            parts2.append((v * v) @ Z2)
            const += int(np.sum(np.all(v == v[:, :1], axis=1)))
        m1, m2 = np.vstack(parts1), np.vstack(parts2)
        self.draws = m1.shape[0]
        self.Vs, self.Vn, self.Vsn, self.Vnn = m1.T
        self.V2ss, self.V2sn, self.V2nn = m2.T
        self.sum_n2 = float(np.sum(self.n**2))
        # draws whose weights are all equal reproduce |t| exactly, whatever mu0
        self.min_p = const / self.draws

    def p(self, mu0: float) -> float:
        A = self.Vs - mu0 * self.Vn                                   # sum v ut
        S1 = self.V2ss - 2 * mu0 * self.V2sn + mu0 * mu0 * self.V2nn  # sum v^2 ut^2
        S2 = self.Vsn - mu0 * self.Vnn                                # sum v ut n
        a = A / self.N
        ss = np.maximum(S1 - 2 * a * S2 + a * a * self.sum_n2, 0.0)
        den = np.sqrt(self.c1 * ss) / self.N
        with np.errstate(divide="ignore", invalid="ignore"):
            tstar = np.where(den > 0, a / den, np.where(a == 0, 0.0, np.inf))
        t = (self.R - mu0) / self.se
        tol = 1e-10 * max(1.0, abs(t))
        return float(np.mean(np.abs(tstar) >= abs(t) - tol))
def p_value(n, s, mu0: float, weights: str = "rademacher", B: int = 9999, seed: int | None = 1) -> float:
    """Wild cluster restricted bootstrap p-value of ``H0: micro mean = mu0``."""
    return _Prepared(n, s, _weight_blocks(np.asarray(n).size, weights, B, seed)).p(mu0)


def wild_interval(n, s, level: float = 0.95, weights: str = "auto", B: int = 9999,
                  seed: int | None = 1) -> WildResult:
    """The WCR interval for the micro mean by test inversion (bisection to 1e-9 of the CR1 se)."""
    n = np.asarray(n, float)
    _, wname, enumerated = _scheme(n.size, weights, B)
    prep = _Prepared(n, s, _weight_blocks(n.size, weights, B, seed))
    alpha = 1 - level
    # p never falls below the share of all-equal draws, its limit as mu0 moves away
    min_p, draws = prep.min_p, prep.draws
    if prep.se == 0:
        return WildResult(None, None, False, wname, enumerated, draws, min_p)
    if min_p > alpha:
        return WildResult(None, None, True, wname, enumerated, draws, min_p)
    bounds = []
    for sign in (-1.0, 1.0):
        inside, step = prep.R, prep.se
        out = prep.R + sign * step
        doublings = 0
        while prep.p(out) > alpha and doublings < 40:
            inside = out
            step *= 2
            out = prep.R + sign * step
            doublings += 1
        if doublings == 40:
            bounds.append(None)
            continue
        for _ in range(200):
            mid = 0.5 * (inside + out)
            if prep.p(mid) > alpha:
                inside = mid
            else:
                out = mid
            if abs(out - inside) <= 1e-9 * prep.se:
                break
        bounds.append(float(inside))
    whole = bounds[0] is None and bounds[1] is None
    return WildResult(bounds[0], bounds[1], whole, wname, enumerated, draws, min_p)
