"""Wild cluster restricted (WCR) bootstrap for the micro mean, by document.

For ``H0: mu = mu0`` the restricted residuals are ``ut_d = s_d - mu0 n_d``. A draw multiplies each
document's residuals by one weight ``v_d``; the refit needs no regression (methods.md):

    A = sum_d v_d ut_d,   u*_d = v_d ut_d - n_d A / N,   t* = (A / N) / (sqrt(c1 sum_d u*_d^2) / N)

with ``c1 = K/(K-1)`` (CR1). The observed statistic is ``t = (R - mu0) / se_CR1``, and
``p(mu0) = share of draws with |t*| >= |t|``. The confidence set is the set of ``mu0`` not rejected,
``{mu0 : p(mu0) > alpha}``, found by test inversion with the same weights for every ``mu0``. It is
found whole (:func:`invert`: every draw's |t*| >= |t| is a quartic inequality in ``mu0``, so p is
known exactly on the whole line), and it need not be an interval: when one document holds much of
the data it can have several pieces. ``low``/``high`` report its hull and ``pieces`` every piece.

Weights: Rademacher (+-1), enumerated when ``2^K <= B``; Webb's six-point distribution
(+-sqrt(1/2), +-1, +-sqrt(3/2)), enumerated when ``6^K <= B``, is the default below 10 documents,
where Rademacher has too few distinct draws. When no ``mu0`` can be rejected (with Rademacher and
``K <= 5`` the smallest possible p is ``2/2^K > 0.05``) the interval is the whole real line, and the
result says so. References: Cameron, Gelbach & Miller 2008; MacKinnon & Webb 2018; Roodman et al. 2019.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["WildResult", "WildBatch", "weights_matrix", "p_value", "wild_interval", "wild_batch", "draw_sums",
           "WEBB", "DrawSums", "invert"]

WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
MAX_ENUMERATE = 1 << 16


@dataclass(frozen=True)
class WildResult:
    """The WCR confidence set. ``low``/``high``: its hull (None when there is none, or it is the
    whole line); ``pieces``: its pieces ``(low, high)`` in increasing order; ``connected``: one piece
    (or the whole line)."""

    low: float | None
    high: float | None
    whole_line: bool
    weights: str
    enumerated: bool
    draws: int
    min_p: float
    pieces: list[tuple[float, float]] = field(default_factory=list)
    connected: bool = True


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
        yield _draw_block([rng], values, min(rows, B - start), K)[0]


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
    """The set of micro means the WCR test does not reject, ``{mu0 : p(mu0) > alpha}``.

    The set is found whole, not by stepping out from the estimate (module :func:`invert`): it can
    have several pieces when one document holds much of the data. ``low``/``high`` are the
    smallest and largest values of the set (its hull), ``pieces`` its pieces in increasing order
    and ``connected`` says whether there is just one.
    """
    n = np.asarray(n, float)
    s = np.asarray(s, float)
    K = n.size
    _, wname, enumerated = _scheme(K, weights, B)
    # far from unit size, compute on s times a power of two and divide the ends back (exact)
    from .micro import ldexp, working_exponents
    j = working_exponents(n, s)[0]
    if j:
        w = wild_interval(n, ldexp(s, j), level=level, weights=weights, B=B, seed=seed)
        f = lambda x: None if x is None else ldexp(x, -j)  # noqa: E731
        return WildResult(f(w.low), f(w.high), w.whole_line, w.weights, w.enumerated, w.draws, w.min_p,
                          pieces=[(f(a), f(b)) for a, b in w.pieces], connected=w.connected)
    w = wild_batch(n[None, :], s[None, :], [seed], B=B, level=level, weights=weights)
    min_p, draws = float(w.min_p[0]), w.draws
    if w.whole[0]:
        return WildResult(None, None, True, wname, enumerated, draws, min_p)
    prow, plo, phi = w.pieces
    if prow.size == 0:  # zero standard error
        return WildResult(None, None, False, wname, enumerated, draws, min_p)
    pieces = [(float(a), float(b)) for a, b in zip(plo, phi)]
    return WildResult(pieces[0][0], pieces[-1][1], False, wname, enumerated, draws, min_p,
                      pieces=pieces, connected=len(pieces) == 1)


@dataclass
class WildBatch:
    """The WCR confidence sets of a batch of samples (arrays over the rows). ``low``/``high``: the
    hull, NaN where there is none (zero standard error, or a row not run), -inf/inf where the set is
    the whole line (``whole``); ``pieces = (row, low, high)``, one entry per piece sorted by row and
    position (a whole line is one piece from -inf to inf); ``min_p`` the smallest attainable p."""

    low: np.ndarray
    high: np.ndarray
    whole: np.ndarray
    pieces: tuple
    min_p: np.ndarray
    se: np.ndarray
    weights: str
    enumerated: bool
    draws: int


def draw_sums(n, s, seeds, B: int = 9999, weights: str = "auto") -> DrawSums:
    """Per-draw sums of every sample of a batch (``n``, ``s``: ``(rows, K)``), each row with the
    weights of its own seed (drawn in the blocks of :func:`_weight_blocks`, so a row's draws do not
    depend on the batch); enumerated weights are shared by every row."""
    n, s = np.asarray(n, float), np.asarray(s, float)
    rows_n, K = n.shape
    if int(B) < 1:
        raise ValueError(f"the wild bootstrap needs at least 1 draw (got B = {B})")
    values, _, enumerated = _scheme(K, weights, B)
    N = n.sum(axis=1)
    c1 = K / (K - 1)
    R = s.sum(axis=1) / N
    u = s - R[:, None] * n
    se = np.sqrt(c1 * np.sum(u * u, axis=1)) / N
    nn, uu, NN = n[:, None, :], u[:, None, :], N[:, None]
    step = max(1, BLOCK_ELEMS // K)                 # draws per call: fixes each row's stream
    D = min(B, values.size ** K) if enumerated else B
    out = [np.empty((rows_n, D)) for _ in range(5)] + [np.empty((rows_n, D), dtype=bool)]
    chunk = max(1, BLOCK_ELEMS // (K * min(step, D)))   # rows reduced at once
    rngs = None if enumerated else [np.random.default_rng(None if sd is None else int(sd)) for sd in seeds]
    for r0 in range(0, rows_n, chunk):
        rs = slice(r0, min(rows_n, r0 + chunk))
        rows = rs.stop - rs.start
        if enumerated:
            blocks = (np.broadcast_to(v, (rows,) + v.shape) for v in _weight_blocks(K, weights, B, None))
        else:
            blocks = (_draw_block(rngs[rs], values, min(step, B - start), K) for start in range(0, B, step))
        start = 0
        for W in blocks:
            b = W.shape[1]
            for o, x in zip(out, DrawSums.block(W, nn[rs], uu[rs], NN[rs])):
                o[rs, start:start + b] = x
            start += b
            del W
    P, Q, a0, a1, a2, varies = out
    const = np.sum(~varies, axis=1)
    return DrawSums(P, Q, a0, a1, a2, varies, const=const, N=N, R=R, se=se, c1=c1, draws=P.shape[1])


def _draw_block(rngs, values, b: int, K: int) -> np.ndarray:
    """The next ``b`` draws of weights (``values``) of every row's generator: ``(rows, b, K)``."""
    W = np.empty((len(rngs), b, K))
    for i, rng in enumerate(rngs):
        W[i] = values[rng.integers(0, values.size, size=(b, K))]
    return W


def wild_batch(n, s, seeds, B: int = 9999, level: float = 0.95, weights: str = "auto",
               run=None) -> WildBatch:
    """The WCR confidence set of every sample of a batch (rows of ``n``, ``s``), each with its own
    seed; ``run`` (bool per row, default all) limits the inversion to some rows (the others get
    NaN). One sample's set is the same alone or in a batch: per-draw sums are element-wise and the
    inversion is row by row."""
    n, s = np.asarray(n, float), np.asarray(s, float)
    rows_n, K = n.shape
    _, wname, enumerated = _scheme(K, weights, B)
    sums = draw_sums(n, s, seeds, B, weights)
    min_p = sums.const / sums.draws
    alpha = 1 - level
    run = np.ones(rows_n, dtype=bool) if run is None else np.asarray(run, dtype=bool)
    low = np.full(rows_n, np.nan)
    high = np.full(rows_n, np.nan)
    whole = run & (sums.se != 0) & (min_p > alpha)
    low[whole], high[whole] = -np.inf, np.inf
    inv = run & (sums.se != 0) & ~(min_p > alpha)
    prow, plo, phi = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
    if inv.any():
        prow, plo, phi = invert(sums, alpha, inv)
        first = np.ones(prow.size, dtype=bool)
        first[1:] = prow[1:] != prow[:-1]
        last = np.ones(prow.size, dtype=bool)
        last[:-1] = first[1:]
        low[prow[first]] = plo[first]
        high[prow[last]] = phi[last]
    wr = np.flatnonzero(whole)
    prow = np.concatenate([prow, wr])
    plo = np.concatenate([plo, np.full(wr.size, -np.inf)])
    phi = np.concatenate([phi, np.full(wr.size, np.inf)])
    order = np.argsort(prow, kind="stable")
    return WildBatch(low=low, high=high, whole=whole, pieces=(prow[order], plo[order], phi[order]),
                     min_p=min_p, se=sums.se, weights=wname, enumerated=enumerated, draws=sums.draws)


# ====================================================================== test inversion, whole
#
# With y = mu0 - R and the residuals u_d = s_d - R n_d, a draw v has (methods.md)
#
#     A(y) = P - y Q,   u*_d = alpha_d - y beta_d,   sum_d u*_d^2 = a0 - 2 a1 y + a2 y^2
#
# with P = sum v u, Q = sum v n, alpha_d = v_d u_d - n_d P/N, beta_d = n_d (v_d - Q/N),
# a0 = sum alpha^2, a1 = sum alpha beta, a2 = sum beta^2; and |t*| >= |t| = |y|/se is, in units of
# the standard error (y = se tau),
#
#     g(tau) = (P - se Q tau)^2 - c1 tau^2 (a0 - 2 se a1 tau + se^2 a2 tau^2) >= 0,
#
# a quartic whose leading coefficient -c1 se^2 a2 is negative unless every weight is equal (then
# g = 0: the draw always reaches |t|, the floor min_p of p). So each draw counts on at most two
# intervals of mu0, between real roots of its quartic, and p(mu0) is the share of draws whose
# intervals hold mu0, plus min_p. Sorting the ends of every draw's intervals and counting gives
# p on every stretch of the line: the set {p > alpha} is exact, every piece, with no grid to miss
# a narrow one. The roots come from Ferrari's closed form (the resolvent cubic's largest root, then
# two quadratics; vectorised, a tenth of the time of companion-matrix eigenvalues, which remain for
# any quartic the closed form cannot place), polished by Newton steps; which stretches between
# candidate roots belong to the draw is decided by the sign of g in their middle, so a spurious
# candidate (the real part of a complex pair) only splits a stretch in two.

_EIG_CHUNK = 1 << 16  # companion matrices per eigenvalue call
NEWTON_STEPS = 1      # on each candidate root (each step kept only where it brings the quartic nearer 0)


@dataclass
class DrawSums:
    """Per-draw sums of the WCR bootstrap for ``rows`` samples at once (arrays ``(rows, draws)``)
    and the per-row constants; rows of one call share the number of draws."""

    P: np.ndarray
    Q: np.ndarray
    a0: np.ndarray
    a1: np.ndarray
    a2: np.ndarray
    varies: np.ndarray   # bool: the draw's weights are not all equal
    const: np.ndarray    # per row: draws with all weights equal
    N: np.ndarray
    R: np.ndarray
    se: np.ndarray
    c1: float
    draws: int

    @staticmethod
    def block(v: np.ndarray, n: np.ndarray, u: np.ndarray, N) -> tuple[np.ndarray, ...]:
        """``(P, Q, a0, a1, a2, varies)`` for weights ``v`` of shape ``(..., draws, K)``, with ``n``
        and ``u`` broadcastable to it (``(..., 1, K)``) and ``N`` to ``(..., 1)``. Sums along the
        documents (a matrix product for P and Q, ``einsum`` for the others), the same for one sample
        alone or in a batch (tested)."""
        un = np.stack(np.broadcast_arrays(u, n), axis=-1)[..., 0, :, :]   # (..., K, 2)
        PQ = np.matmul(v, un)
        P, Q = PQ[..., 0], PQ[..., 1]
        alpha = v * u
        alpha -= n * (P / N)[..., None]
        beta = v - (Q / N)[..., None]
        beta *= n
        dot = lambda x, y: np.einsum("...k,...k->...", x, y)  # noqa: E731
        a0, a1, a2 = dot(alpha, alpha), dot(alpha, beta), dot(beta, beta)
        varies = ~np.all(v == v[..., :1], axis=-1)
        return P, Q, a0, a1, a2, varies


def invert(sums: DrawSums, alpha: float, run: np.ndarray):
    """Every piece of ``{mu0 : p(mu0) > alpha}`` for the rows where ``run`` is true.

    Returns flat arrays ``(row, low, high)``, one entry per piece, sorted by row and then by
    position. Rows in ``run`` need ``se > 0`` and ``min_p <= alpha`` (so that the set is bounded).
    Rows are inverted in groups of at most ``_INVERT_DRAWS`` draws (about 400 bytes each); each
    row's result does not depend on the grouping.
    """
    rows = np.flatnonzero(run)
    per = max(1, _INVERT_DRAWS // max(1, sums.draws))
    if rows.size <= per:
        return _invert(sums, alpha, run)
    parts = []
    for start in range(0, rows.size, per):
        sub = np.zeros_like(run)
        sub[rows[start:start + per]] = True
        parts.append(_invert(sums, alpha, sub))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


_INVERT_DRAWS = 1 << 18


def _invert(sums: DrawSums, alpha: float, run: np.ndarray):
    mask = sums.varies & run[:, None]
    rows_all, draws_all = np.nonzero(mask)
    se = sums.se[rows_all]
    c1 = sums.c1
    P, Q, a0, a1, a2 = (x[mask] for x in (sums.P, sums.Q, sums.a0, sums.a1, sums.a2))
    del mask
    # g(tau) = b4 tau^4 + b3 tau^3 + b2 tau^2 + b1 tau + b0, and its monic form h = g / b4 (b4 < 0)
    b4 = -c1 * se * se * a2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        h = np.stack([2.0 * c1 * se * a1, se * se * Q * Q - c1 * a0, -2.0 * se * P * Q, P * P], axis=1) / b4[:, None]
    del P, Q, a0, a1, a2, se, b4
    good = np.all(np.isfinite(h), axis=1)
    if not good.all():  # a draw with no usable quartic cannot be placed: leave it out
        h, rows_all, draws_all = h[good], rows_all[good], draws_all[good]
    roots = _real_candidates(h)
    # sign of g in the middle of each stretch between candidates: g >= 0 <=> h <= 0
    mids = 0.5 * (roots[:, :-1] + roots[:, 1:])
    on = _horner(h, mids) <= 0.0
    status = np.zeros((roots.shape[0], 5), dtype=np.int8)
    status[:, 1:4] = on
    step = np.diff(status, axis=1)                 # +1 where the draw starts counting, -1 where it stops
    del mids, on, status, h
    # every row's events in one line of a table (slot = draw x 4 + root; no event: +inf, weight 0),
    # each line sorted: rows are independent, so a sort per line replaces a sort of every event
    # by (row, position); events at one position may come in any order (the stretch between them
    # is empty, and the count after them is the same)
    rows_run = np.flatnonzero(run)
    line = np.zeros(sums.varies.shape[0], dtype=np.int64)
    line[rows_run] = np.arange(rows_run.size)
    width = 4 * sums.draws
    pos = np.full((rows_run.size, width), np.inf)
    wt = np.zeros((rows_run.size, width), dtype=np.int8)
    slot = (4 * draws_all)[:, None] + np.arange(4)
    keep = step != 0
    li = np.broadcast_to(line[rows_all][:, None], keep.shape)[keep]
    pos[li, slot[keep]] = roots[keep]
    wt[li, slot[keep]] = step[keep]
    del roots, step, keep, slot, li, draws_all
    order = np.argsort(pos, axis=1)
    pos = np.take_along_axis(pos, order, axis=1)
    count = np.cumsum(np.take_along_axis(wt, order, axis=1), axis=1, dtype=np.int64)
    del order, wt
    # stretch j of a line runs from its event j to event j + 1; p there counts the draws that hold it
    lo, hi = pos[:, :-1], pos[:, 1:]
    p = (sums.const[rows_run][:, None] + count[:, :-1]) / sums.draws
    line_i, col = np.nonzero((hi > lo) & (p > alpha))
    row, lo, hi = rows_run[line_i], lo[line_i, col], hi[line_i, col]
    del pos, count, p
    # touching accepted stretches (only empty ones between them) form one piece
    start = np.ones(row.size, dtype=bool)
    start[1:] = (row[1:] != row[:-1]) | (lo[1:] > hi[:-1])
    end = np.ones(row.size, dtype=bool)
    end[:-1] = start[1:]
    prow, plo, phi = row[start], lo[start], hi[end]
    # the estimate itself (tau = 0, where every draw counts) is never rejected; guard the
    # degenerate case of a row without any piece
    missing = run.copy()
    missing[prow] = False
    if missing.any():
        extra = np.flatnonzero(missing)
        prow = np.concatenate([prow, extra])
        plo = np.concatenate([plo, np.zeros(extra.size)])
        phi = np.concatenate([phi, np.zeros(extra.size)])
        order = np.lexsort((plo, prow))
        prow, plo, phi = prow[order], plo[order], phi[order]
    R, se = sums.R[prow], sums.se[prow]
    return prow, R + se * plo, R + se * phi


def _horner(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The monic quartic ``x^4 + h0 x^3 + h1 x^2 + h2 x + h3`` at x (rows of h, columns of x)."""
    out = x + h[:, :1]
    for i in (1, 2, 3):
        out *= x
        out += h[:, i:i + 1]
    return out


def _real_candidates(h: np.ndarray) -> np.ndarray:
    """Sorted real parts of the four roots of each monic quartic (rows of h), Newton-polished."""
    m = h.shape[0]
    out = _quartic_roots(h)
    rows = np.flatnonzero(~np.all(np.isfinite(out), axis=1))
    for start in range(0, rows.size, _EIG_CHUNK):   # what the closed form cannot place: eigenvalues
        take = rows[start:start + _EIG_CHUNK]
        C = np.zeros((take.size, 4, 4))
        C[:, 0, :] = -h[take]
        C[:, 1, 0] = C[:, 2, 1] = C[:, 3, 2] = 1.0
        out[take] = np.linalg.eigvals(C).real
    d = np.stack([4.0 * np.ones(m), 3.0 * h[:, 0], 2.0 * h[:, 1], h[:, 2]], axis=1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(NEWTON_STEPS):
            g = _horner(h, out)
            gp = ((d[:, :1] * out + d[:, 1:2]) * out + d[:, 2:3]) * out + d[:, 3:4]
            new = out - g / gp
            better = np.isfinite(new) & (np.abs(_horner(h, new)) < np.abs(g))
            out = np.where(better, new, out)
    out.sort(axis=1)
    return out


def _quartic_roots(h: np.ndarray) -> np.ndarray:
    """Real parts of the four roots of ``x^4 + a x^3 + b x^2 + c x + d`` (rows ``[a, b, c, d]`` of h),
    unsorted and unpolished, by Ferrari's method: with ``x = y - a/4`` the quartic is
    ``y^4 + p y^2 + q y + r``; ``m``, the largest root of the resolvent cubic
    ``m^3 + p m^2 + (p^2/4 - r) m - q^2/8`` (never negative), splits it into
    ``(y^2 + s y + p/2 + m - q/(2s)) (y^2 - s y + p/2 + m + q/(2s))`` with ``s = sqrt(2m)``; when ``q``
    is 0 (``s`` too) it is a quadratic in ``y^2``. A complex pair gives its real part. A row that
    overflows, or whose roots this form cannot separate (two roots closer than about 1e-3.5 of the
    quartic's scale, where the discriminant of a quadratic cancels), comes back non-finite: the
    caller uses eigenvalues there."""
    a, b, c, d = h[:, 0], h[:, 1], h[:, 2], h[:, 3]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        aa = a * a
        p = b - 0.375 * aa
        q = c - 0.5 * a * b + 0.125 * aa * a
        r = d - 0.25 * a * c + 0.0625 * aa * b - 0.01171875 * aa * aa
        A, B, C = p, 0.25 * p * p - r, -0.125 * q * q
        P = B - A * A / 3.0                       # the cubic with t = u - A/3: u^3 + P u + Q
        Q = (2.0 / 27.0) * A * A * A - A * B / 3.0 + C
        disc = 0.25 * Q * Q + (P / 3.0) ** 3
        sq = np.sqrt(np.maximum(disc, 0.0))
        one = np.cbrt(-0.5 * Q + sq) + np.cbrt(-0.5 * Q - sq)          # one real root (Cardano)
        rad = np.sqrt(np.maximum(-P / 3.0, 0.0))
        cos3 = np.clip(np.where(rad > 0, (-0.5 * Q) / (rad * rad * rad), 0.0), -1.0, 1.0)
        three = 2.0 * rad * np.cos(np.arccos(cos3) / 3.0)              # the largest of three
        m = np.where(disc > 0, one, three) - A / 3.0
        for _ in range(3):                   # Newton on the cubic, a step kept when it improves
            f = ((m + A) * m + B) * m + C
            new = m - f / ((3.0 * m + 2.0 * A) * m + B)
            m = np.where(np.isfinite(new) & (np.abs(((new + A) * new + B) * new + C) < np.abs(f)), new, m)
        m = np.maximum(m, 0.0)
        s = np.sqrt(2.0 * m)
        small = s <= 1e-12 * (1.0 + np.abs(p) + np.sqrt(np.abs(r)))
        qs = np.where(small, 0.0, q / np.where(small, 1.0, s))
        out = np.empty((h.shape[0], 4))
        shaky = ~small & (s <= 1e-6 * (1.0 + np.abs(p) + np.sqrt(np.abs(r))))   # q / s loses digits
        for j, sign in enumerate((1.0, -1.0)):
            dsc = 2.0 * (sign * qs - p - m)          # s^2 - 4 (p/2 + m -+ q/(2s)), the quadratic's discriminant
            # near 0 against its terms, the two roots (a close pair, or a pair about to turn complex)
            # cannot be told apart in this form: such a quartic is left to the eigenvalues
            shaky |= np.abs(dsc) <= 1e-7 * (2.0 * (np.abs(qs) + np.abs(p) + m))
            root = np.sqrt(np.maximum(dsc, 0.0))
            out[:, 2 * j] = 0.5 * (root - sign * s)
            out[:, 2 * j + 1] = 0.5 * (-root - sign * s)
        half = np.sqrt(np.maximum(p * p - 4.0 * r, 0.0))                # q = 0: y^2 = (-p +- half) / 2
        y1, y2 = np.sqrt(np.maximum(0.5 * (half - p), 0.0)), np.sqrt(np.maximum(-0.5 * (half + p), 0.0))
        out = np.where(small[:, None], np.stack([y1, -y1, y2, -y2], axis=1), out)
        shaky |= small & (np.abs(half) <= 1e-7 * (np.abs(p) + 2.0 * np.sqrt(np.abs(r))))
        out[shaky] = np.nan
        return out - 0.25 * a[:, None]
