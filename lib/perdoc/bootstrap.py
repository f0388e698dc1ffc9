"""Document bootstrap: resample documents (never chunks) with replacement.

For each replicate b the K documents are drawn with replacement and we record

* the micro mean ``R*_b`` and its own CR1 standard error (for the studentised bootstrap-t);
* the macro mean ``rbar*_b`` and its own ``sd(r*)/sqrt(K)``;
* the micro mean's CR2 standard error and Bell-McCaffrey degrees of freedom of the replicate,
  treating a document drawn twice as two clusters (for the calibrated intervals);
* whether the replicate is degenerate: every drawn document has the same rate, so the
  replicate has no standard error. Degenerate replicates are dropped from bootstrap-t and their
  fraction is reported; if all are degenerate there is no interval.

Memory stays bounded for any K: replicates are processed in blocks of at most ``block_elems``
(replicate x document) cells, and each block is reduced through document counts and one matrix
product, so no B x K array is ever held. The random stream is ``Generator.integers(0, K)`` drawn
row by row, so the result does not depend on the block size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BootstrapDraws", "document_bootstrap", "replicate_cr2", "BLOCK_ELEMS"]

BLOCK_ELEMS = 1 << 21  # about 2 million cells per block: ~80 MB of temporaries at most


@dataclass(frozen=True)
class BootstrapDraws:
    """Per-replicate statistics of a document bootstrap (arrays of length B)."""

    micro: np.ndarray       # R*_b
    micro_se: np.ndarray    # CR1 standard error of replicate b
    macro: np.ndarray       # rbar*_b
    macro_se: np.ndarray    # sd(r*)/sqrt(K) of replicate b
    degenerate: np.ndarray  # bool: every drawn document has the same rate
    micro_se_cr2: np.ndarray | None = None  # CR2 standard error of replicate b
    micro_df: np.ndarray | None = None      # Bell-McCaffrey df of replicate b

    @property
    def replicates(self) -> int:
        return int(self.micro.size)

    @property
    def degenerate_fraction(self) -> float:
        return float(self.degenerate.mean()) if self.degenerate.size else 0.0


def document_bootstrap(n: np.ndarray, s: np.ndarray, replicates: int, seed: int | None,
                       block_elems: int = BLOCK_ELEMS) -> BootstrapDraws:
    """Draw ``replicates`` document bootstrap samples and return their statistics.

    Sums over a replicate are computed as ``counts @ Z`` where ``counts[b, d]`` is how often
    document d was drawn. The moments are centred on the full-sample values (residuals
    ``u_d = s_d - R n_d`` and ``e_d = r_d - rbar``), so a replicate's variance is computed without
    the cancellation of raw sums of squares:
    ``R* = R + sum c u / sum c n`` and ``sum c (s - R* n)^2 = sum c u^2 - 2 delta sum c u n + delta^2 sum c n^2``.
    """
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    K = n.size
    B = int(replicates)
    rng = np.random.default_rng(seed)
    N = n.sum()
    R = s.sum() / N
    r = s / n
    rbar = r.mean()
    u = s - R * n
    e = r - rbar
    Z = np.column_stack([n, u, u * u, u * n, n * n, e, e * e])
    # rate classes: equal rationals give equal doubles, so == is exact equality of rates
    _, cls = np.unique(r, return_inverse=True)
    cls = cls.astype(np.int64)

    micro = np.empty(B)
    micro_se = np.empty(B)
    micro_se2 = np.empty(B)
    micro_df = np.empty(B)
    order = np.argsort(n, kind="stable")
    macro = np.empty(B)
    macro_se = np.empty(B)
    degenerate = np.empty(B, dtype=bool)
    rows = max(1, int(block_elems) // K)
    c1 = K / (K - 1)
    for start in range(0, B, rows):
        b = min(rows, B - start)
        idx = rng.integers(0, K, size=(b, K))
        c = idx + (np.arange(b, dtype=np.int64) * K)[:, None]
        counts = np.bincount(c.ravel(), minlength=b * K).reshape(b, K).astype(float)
        del c
        m = counts @ Z
        Nb, Su, Suu, Sun, Snn, Se, See = m.T
        delta = Su / Nb
        ss_u = np.maximum(Suu - 2.0 * delta * Sun + delta * delta * Snn, 0.0)
        sl = slice(start, start + b)
        micro_se2[sl], micro_df[sl] = replicate_cr2(counts, n, u, Nb, delta, Snn, order)
        del counts
        micro[sl] = R + delta
        micro_se[sl] = np.sqrt(c1 * ss_u) / Nb
        macro[sl] = rbar + Se / K
        macro_se[sl] = np.sqrt(np.maximum(See - Se * Se / K, 0.0) / (K - 1) / K)
        drawn = cls[idx]
        degenerate[sl] = drawn.min(axis=1) == drawn.max(axis=1)
        del drawn, idx
    micro_se[degenerate] = 0.0
    macro_se[degenerate] = 0.0
    micro_se2[degenerate] = 0.0
    return BootstrapDraws(micro=micro, micro_se=micro_se, macro=macro, macro_se=macro_se,
                          degenerate=degenerate, micro_se_cr2=micro_se2, micro_df=micro_df)


def replicate_cr2(counts, n, u, Nb, delta, Snn, order):
    """CR2 standard error and Bell-McCaffrey df of the micro mean of each replicate:
    ``(se, df)`` of shape ``(..., b)``.

    ``counts`` (``(..., b, K)``): how often each document was drawn (a document drawn twice is two
    clusters); ``n``, ``u`` (``(..., K)``): sizes and residuals ``s_d - R n_d`` of the sample;
    ``Nb``, ``delta``, ``Snn`` (``(..., b)``): the replicate's ``N*``, ``R* - R`` and
    ``sum c_d n_d^2``; ``order`` the documents in ascending order of size.
    ``se^2 = sum_d c_d (u_d - delta n_d)^2 N* / (N* - n_d) / N*^2``. The df is
    :func:`perdoc.micro.df_bell_mccaffrey` of the drawn sizes, accumulated over the documents in
    ascending order of ``q_d = n_d^2 / (N* - n_d)`` (ascending size) with multiplicity:
    ``cross = sum_d c_d q_d ((c_d - 1) q_d + 2 P_d)``, ``P_d`` the sum of ``c_e q_e`` over the
    smaller documents, so every term is positive.
    """
    c = counts
    drawn = c > 0
    Nc = Nb[..., None]
    nb = n[..., None, :]
    rest = np.where(drawn, Nc - nb, 1.0)          # N* - n_d: exact for whole counts
    e = u[..., None, :] - delta[..., None] * nb
    se = np.sqrt(np.sum(np.where(drawn, c * e * e * (Nc / rest), 0.0), axis=-1)) / Nb
    o = np.broadcast_to(order[..., None, :], c.shape)
    cs = np.take_along_axis(c, o, axis=-1)
    ns = np.take_along_axis(np.broadcast_to(nb, c.shape), o, axis=-1)
    rs = np.take_along_axis(rest, o, axis=-1)
    cq = cs * (ns * ns / rs)
    z = np.zeros(cq.shape[:-1] + (1,))
    prefix = np.concatenate((z, np.cumsum(cq, axis=-1)[..., :-1]), axis=-1)
    cross = np.sum(cq * ((cs - 1.0) * (ns * ns / rs) + 2.0 * prefix), axis=-1)
    return se, Nb * Nb / (Snn + cross)
