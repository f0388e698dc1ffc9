"""Document bootstrap: resample documents (never chunks) with replacement.

For each replicate b the K documents are drawn with replacement and we record

* the micro mean ``R*_b`` and its own CR1 standard error (for the studentised bootstrap-t);
* the macro mean ``rbar*_b`` and its own ``sd(r*)/sqrt(K)``;
* the micro mean's CR2 standard error and Bell-McCaffrey degrees of freedom of the replicate,
  treating a document drawn twice as two clusters (for the calibrated intervals);
* whether the replicate is degenerate: every drawn document has the same rate, so the
  replicate has no standard error. Degenerate replicates are dropped from bootstrap-t and their
  fraction is reported; if all are degenerate there is no interval.

Memory stays bounded for any K and any batch: samples and replicates are processed in blocks of at
most ``block_elems`` (sample x replicate x document) cells, and each block is reduced through
document counts and one matrix product, so no B x K array of a large sample is ever held. The
random stream is ``Generator.integers(0, K)`` drawn row by row in calls of ``block_elems // K``
replicates, so the result depends neither on the batch nor on how it is split.

One implementation serves one sample (:func:`document_bootstrap`, for :func:`perdoc.estimate`) and
a batch of samples, each with its own seed (:func:`bootstrap_batch`, for the coverage simulation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BootstrapDraws", "document_bootstrap", "bootstrap_batch", "replicate_cr2", "rate_classes",
           "BLOCK_ELEMS"]

BLOCK_ELEMS = 1 << 21  # about 2 million cells per block: ~80 MB of temporaries at most
MAX_K_CLASS_MOMENTS = 8192  # up to this K, degenerate replicates are found from two sums (K^4 < 2^53)


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
    """Draw ``replicates`` document bootstrap samples of one sample and return their statistics
    (:func:`bootstrap_batch` with a batch of one)."""
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    d = bootstrap_batch(n[None, :], s[None, :], [seed], replicates, block_elems)
    return BootstrapDraws(**{key: v[0] for key, v in d.items()})


def rate_classes(r: np.ndarray) -> np.ndarray:
    """Per sample (last axis), an integer class per document: equal rates, equal class (equal
    rationals give equal doubles, so == is exact equality of rates)."""
    order = np.argsort(r, axis=-1, kind="stable")
    rs = np.take_along_axis(r, order, axis=-1)
    z = np.zeros(r.shape[:-1] + (1,), dtype=np.int64)
    cid = np.concatenate((z, np.cumsum(rs[..., 1:] != rs[..., :-1], axis=-1)), axis=-1)
    cls = np.empty_like(cid)
    np.put_along_axis(cls, order, cid, axis=-1)
    return cls


def bootstrap_batch(n: np.ndarray, s: np.ndarray, seeds, replicates: int,
                    block_elems: int = BLOCK_ELEMS) -> dict:
    """The document bootstrap of every sample of a batch, each with its own seed.

    ``n``, ``s``: arrays ``(rows, K)``; ``seeds``: one per row. Returns the fields of
    :class:`BootstrapDraws` as arrays ``(rows, replicates)``. Row i's draws are those of
    ``numpy.random.default_rng(seeds[i]).integers(0, K)`` in blocks of ``block_elems // K``
    replicates, whatever the batch.

    Sums over a replicate are computed as ``counts @ Z`` where ``counts[b, d]`` is how often
    document d was drawn. The moments are centred on the full-sample values (residuals
    ``u_d = s_d - R n_d`` and ``e_d = r_d - rbar``), so a replicate's variance is computed without
    the cancellation of raw sums of squares:
    ``R* = R + sum c u / sum c n`` and ``sum c (s - R* n)^2 = sum c u^2 - 2 delta sum c u n + delta^2 sum c n^2``.
    """
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    rows_n, K = n.shape
    B = int(replicates)
    rngs = [np.random.default_rng(None if sd is None else int(sd)) for sd in seeds]
    N = n.sum(axis=-1)
    R = s.sum(axis=-1) / N
    r = s / n
    rbar = np.mean(r, axis=-1)
    u = s - R[:, None] * n
    e = r - rbar[:, None]
    cls = rate_classes(r)
    # the documents in ascending order of size (stable): a draw of document d counts at its place
    # rank[d] in that order, so the counts come out in the order the CR2 df accumulates them
    order = np.argsort(n, axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(K), axis=-1)
    ns, us, es, cs = (np.take_along_axis(x, order, axis=-1) for x in (n, u, e, cls))
    # a replicate is degenerate when every drawn document is of one rate class: K sum c x^2 = (sum c x)^2
    # for the class numbers x, exact in floating point while K^4 < 2^53
    exact_classes = K <= MAX_K_CLASS_MOMENTS
    cols = [ns, us, us * us, us * ns, ns * ns, es, es * es]
    if exact_classes:
        xs = cs.astype(float)
        cols += [xs, xs * xs]
    Z = np.stack(cols, axis=-1)  # (rows, K, 7 or 9)
    c1 = K / (K - 1)
    out = {key: np.empty((rows_n, B)) for key in ("micro", "micro_se", "macro", "macro_se", "micro_se_cr2",
                                                  "micro_df")}
    out["degenerate"] = np.empty((rows_n, B), dtype=bool)
    step = max(1, int(block_elems) // K)           # replicates per draw call: fixes each row's stream
    chunk = max(1, int(block_elems) // (K * min(step, B))) if B else rows_n   # rows reduced at once
    for r0 in range(0, rows_n, chunk):
        rs = slice(r0, min(rows_n, r0 + chunk))
        rows = rs.stop - rs.start
        for start in range(0, B, step):
            b = min(step, B - start)
            idx = np.empty((rows, b, K), dtype=np.int64)
            for i, rng in enumerate(rngs[rs]):
                idx[i] = rng.integers(0, K, size=(b, K))
            place = np.take_along_axis(rank[rs], idx.reshape(rows, b * K), axis=1).reshape(rows, b, K)
            place += (np.arange(rows * b, dtype=np.int64) * K).reshape(rows, b, 1)
            counts = np.bincount(place.ravel(), minlength=rows * b * K).reshape(rows, b, K).astype(float)
            del place
            m = np.matmul(counts, Z[rs])
            Nb, Su, Suu, Sun, Snn, Se, See = np.moveaxis(m[..., :7], -1, 0)
            delta = Su / Nb
            ss_u = np.maximum(Suu - 2.0 * delta * Sun + delta * delta * Snn, 0.0)
            sl = (rs, slice(start, start + b))
            out["micro"][sl] = R[rs, None] + delta
            out["micro_se"][sl] = np.sqrt(c1 * ss_u) / Nb
            out["macro"][sl] = rbar[rs, None] + Se / K
            out["macro_se"][sl] = np.sqrt(np.maximum(See - Se * Se / K, 0.0) / (K - 1) / K)
            out["micro_se_cr2"][sl], out["micro_df"][sl] = replicate_cr2(counts, ns[rs], us[rs], Nb, delta, Snn)
            if exact_classes:
                out["degenerate"][sl] = K * m[..., 8] == m[..., 7] * m[..., 7]
            else:
                drawn = np.take_along_axis(cls[rs], idx.reshape(rows, b * K), axis=1).reshape(rows, b, K)
                out["degenerate"][sl] = np.all(drawn == drawn[:, :, :1], axis=2)
                del drawn
            del counts, m, idx
    deg = out["degenerate"]
    for key in ("micro_se", "macro_se", "micro_se_cr2"):
        out[key][deg] = 0.0
    return out


def replicate_cr2(counts, n, u, Nb, delta, Snn):
    """CR2 standard error and Bell-McCaffrey df of the micro mean of each replicate:
    ``(se, df)`` of shape ``(..., b)``.

    ``counts`` (``(..., b, K)``): how often each document was drawn (a document drawn twice is two
    clusters); ``n``, ``u`` (``(..., K)``): sizes and residuals ``s_d - R n_d`` of the sample, the
    documents in ascending order of size; ``Nb``, ``delta``, ``Snn`` (``(..., b)``): the replicate's
    ``N*``, ``R* - R`` and ``sum c_d n_d^2``.
    ``se^2 = sum_d c_d (u_d - delta n_d)^2 / (N* - n_d) / N*``. The df is
    :func:`perdoc.micro.df_bell_mccaffrey` of the drawn sizes, accumulated over the documents in
    ascending order of ``q_d = n_d^2 / (N* - n_d)`` (ascending size) with multiplicity:
    ``cross = sum_d c_d q_d ((c_d - 1) q_d + 2 P_d)``, ``P_d`` the sum of ``c_e q_e`` over the
    smaller documents, so every term is positive.
    """
    c = counts
    nb = n[..., None, :]
    rest = Nb[..., None] - nb                      # N* - n_d: exact for whole counts, > 0 where drawn
    w = 1.0 / np.where(rest > 0, rest, 1.0)        # (an undrawn document counts 0 times)
    e = u[..., None, :] - delta[..., None] * nb
    e *= e
    e *= c
    e *= w
    se = np.sqrt(np.sum(e, axis=-1) / Nb)
    del e
    q = (n * n)[..., None, :] * w                  # n_d^2 / (N* - n_d)
    cq = c * q
    prefix = np.zeros_like(cq)                     # P_d: the sum of c_e q_e over the smaller documents
    np.cumsum(cq[..., :-1], axis=-1, out=prefix[..., 1:])
    prefix *= 2.0
    q *= c - 1.0
    q += prefix
    q *= cq
    return se, Nb * Nb / (Snn + np.sum(q, axis=-1))
