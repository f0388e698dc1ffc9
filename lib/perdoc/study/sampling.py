"""Drawing the documents (and chunks) to label from the frame: ``perdoc sample``.

Honesty about a population comes from how the sample was drawn, not from a model fitted to it. In
retrieval the frame is nearly free: the index already knows how many chunks every document has.
From it perdoc draws one of these designs, and writes a manifest of the units to label together
with each document's inclusion probability, so that :mod:`perdoc.survey` can apply the matching
design-based (design-consistent) estimator afterwards.

Designs (``design``):

``srs``
    simple random sample of K documents, without replacement (inclusion probability K/M).
``stratified``
    H size strata (boundaries by the cumulative square-root-of-frequency rule on log size) and an
    optimal allocation of K across them: Neyman (``k_h`` proportional to ``M_h S_h``) or, with costs,
    cost-optimal (``M_h S_h / sqrt(c_h)``), ``S_h`` being the anticipated spread of the linearised
    micro-mean residual ``s_d - R n_d`` (:func:`residual_spread`); documents drawn by SRS within strata.
``pps``
    probability proportional to size. Without replacement (the default) by Brewer's draw-by-draw
    procedure, whose inclusion probabilities are exactly ``pi_d = K n_d / N``; documents whose
    ``pi_d`` would reach 1 are taken with certainty (stratum ``certainty``) and the rest drawn in
    proportion to size. With replacement (``with_replacement=True``): K independent draws with
    probability ``n_d / N`` each, a document drawn twice appearing as two draws.
``certainty``
    a take-all stratum of the largest documents, the size above which is picked by minimising the
    anticipated variance (or given), and an SRS (``remainder="srs"``) or PPS (``"pps"``) sample of
    the rest.

``take`` = m subsamples m chunks (positions 0 to ``n_d - 1``, without replacement) of every drawn
document (all of them when it has at most m): two stages. PPS with a fixed take is self-weighting:
every chunk of a document drawn in proportion to size has the same chance, ``f = m K' / N'``, of
being labelled. A document taken with certainty (a take-all document: the ``certainty`` stratum, or a
size stratum drawn whole) would break that with only m chunks: its chunks' chance ``m / n_d`` is
below ``f``, its few labels carry the whole of its large weight, and the variance within it,
estimated from m chunks, is noisy and often 0 for a 0/1 metric, so coverage falls as K grows. A
take-all document therefore takes ``ceil(f n_d)`` chunks (at least m, at most ``n_d``), where ``f`` is
the mean chance of a chunk of the documents not taken whole (``m`` times their expected draws over
their chunks; exactly the common chance under PPS, which is then self-weighting) (:func:`doc_takes`).

The same frame, design and seed always give the same manifest, byte for byte.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError

__all__ = ["DESIGNS", "ALLOCATIONS", "Sample", "draw_sample", "prepare_design", "PreparedDesign", "doc_takes", "take_sizes", "chunk_rate",
           "brewer_probabilities", "brewer_draw",
           "residual_spread", "size_strata", "allocate", "certainty_cut"]

DESIGNS = ("srs", "stratified", "pps", "certainty")
ALLOCATIONS = ("neyman", "proportional", "cost")
#: The intra-document correlation assumed when anticipating residual spreads without a pilot.
DEFAULT_ICC = 0.1
MAX_STRATA = 50
#: Elements per block of :func:`brewer_draw` (its arrays of a block stay in the processor's cache).
_BLOCK = 1 << 15


@dataclass(frozen=True)
class Sample:
    """The drawn sample: one row per unit to label (a document draw, or a chunk of it with ``take``).

    ``doc`` (frame ids), ``stratum``, ``prob`` (the document's inclusion probability; for a
    with-replacement draw the expected number of draws ``K n_d / N``, as a survey package takes it),
    ``draw`` (1, 2, ... for the times a document was drawn with replacement; 1 otherwise) and
    ``chunk`` (0-based chunk position, or None without ``take``). ``info`` describes the design.
    """

    doc: np.ndarray
    stratum: np.ndarray
    prob: np.ndarray
    draw: np.ndarray
    chunk: np.ndarray | None
    n: np.ndarray | None = None      # the document's chunks in the frame, per row
    info: dict = field(default_factory=dict)

    @property
    def documents(self) -> int:
        """Distinct documents drawn."""
        return int(np.unique(self.doc.astype(str)).size)


# ------------------------------------------------------------------------------------ helpers
def _rng(seed) -> np.random.Generator:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2**63:
        raise ParameterError(f"--seed must be a whole number from 0 to 2^63 - 1, got {seed!r}")
    return np.random.Generator(np.random.PCG64(int(seed)))


def residual_spread(n, *, icc: float = DEFAULT_ICC) -> float:
    """The anticipated standard deviation (up to a common factor) of ``u_d = s_d - R n_d`` over the
    documents of sizes ``n``: documents whose rates vary with intra-document correlation ``icc``
    give ``var(u_d) = n_d^2 icc + n_d (1 - icc)`` (in units of the chunk-level variance). It grows
    with the size itself, not only with the spread of sizes: a stratum of equally long documents
    still varies."""
    n = np.asarray(n, dtype=float)
    if n.size == 0:
        return 0.0
    return float(np.sqrt(np.mean(n * n) * icc + np.mean(n) * (1.0 - icc)))


def size_strata(n, H: int) -> np.ndarray:
    """Stratum index 0..H'-1 of each size (H' <= H): boundaries by the cumulative square root of
    frequency rule (Dalenius and Hodges) on log size, so that strata split where sizes are dense;
    every stratum holds at least two documents."""
    n = np.asarray(n, dtype=float)
    x = np.log(n)
    lo, hi = float(x.min()), float(x.max())
    if H <= 1 or hi == lo:
        return np.zeros(n.size, dtype=np.int64)
    bins = min(200, max(H * 10, 20))
    edges = np.linspace(lo, hi, bins + 1)
    counts, _ = np.histogram(x, bins=edges)
    cum = np.cumsum(np.sqrt(counts))
    targets = cum[-1] * np.arange(1, H) / H
    cuts = edges[1:][np.searchsorted(cum, targets)]
    cuts = cuts[np.concatenate(([True], cuts[1:] != cuts[:-1]))]   # np.unique of these sorted cuts
    idx = np.searchsorted(cuts, x, side="left")
    # merge strata with fewer than two documents into a neighbour (labels 0..H-1: counted, not sorted)
    while True:
        per_label = np.bincount(idx)
        labels = np.flatnonzero(per_label)
        counts = per_label[labels]
        small = labels[counts < 2]
        if small.size == 0 or labels.size == 1:
            break
        s = small[0]
        pos = int(np.flatnonzero(labels == s)[0])
        target = labels[pos - 1] if pos > 0 else labels[pos + 1]
        idx[idx == s] = target
    rank = np.cumsum(np.bincount(idx) > 0) - 1   # each label's place among those left
    return rank[idx].astype(np.int64)


def allocate(K: int, M_h, weight_h, *, minimum: int = 2) -> np.ndarray:
    """Integer allocation of K documents to strata in proportion to ``weight_h``, at least
    ``minimum`` (and at most ``M_h``) per stratum; largest remainders break ties."""
    M_h = np.asarray(M_h, dtype=np.int64)
    w = np.asarray(weight_h, dtype=float)
    H = M_h.size
    floor = np.minimum(M_h, minimum)
    if floor.sum() > K:
        raise ParameterError(f"--k {K} is too small for {H} strata: each needs at least {minimum} documents "
                             f"(give --k of at least {int(floor.sum())} or fewer --strata)")
    if K > M_h.sum():
        raise ParameterError(f"--k {K} exceeds the {int(M_h.sum()):,} documents of the frame")
    k = floor.copy()
    free = np.ones(H, dtype=bool)
    # iterate: strata whose share exceeds their size are taken whole
    while True:
        left = K - int(k[~free].sum()) - int(floor[free].sum())
        ww = np.where(free, w, 0.0)
        if ww.sum() <= 0:
            ww = np.where(free, M_h.astype(float), 0.0)
        share = floor + left * ww / ww.sum() if left > 0 else floor.astype(float)
        over = free & (share >= M_h)
        if not over.any():
            break
        k[over] = M_h[over]
        free &= ~over
        floor = np.where(free, floor, 0)
        if not free.any():
            break
    if free.any():
        base = np.floor(share[free]).astype(np.int64)
        kk = np.where(free, 0, k)
        kk[free] = base
        rest = K - int(kk.sum())
        frac = np.where(free, share - np.floor(share), -1.0)
        order = np.lexsort((np.arange(H), -frac))
        for i in order[:max(rest, 0)]:
            kk[i] += 1
        k = kk
    return k


def brewer_probabilities(n, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Inclusion probabilities proportional to size for a sample of K without replacement:
    ``pi_d = K' n_d / N'`` over the documents not taken with certainty, where certainty documents are
    those whose probability would reach 1 (found iteratively). Returns ``(pi, certain)``."""
    n = np.asarray(n, dtype=float)
    certain = np.zeros(n.size, dtype=bool)
    while True:
        k_rest = K - int(certain.sum())
        rest = ~certain
        if k_rest <= 0:
            pi = np.where(certain, 1.0, 0.0)
            return pi, certain
        pi = np.where(certain, 1.0, k_rest * n / n[rest].sum())
        newly = rest & (pi >= 1.0)
        if not newly.any():
            return pi, certain
        certain |= newly


def brewer_draw(pi, rng: np.random.Generator) -> np.ndarray:
    """Brewer's draw-by-draw sample without replacement with inclusion probabilities exactly ``pi``
    (all below 1, summing to an integer k): at draw j = 1..k, unit d not yet drawn is chosen with
    probability proportional to ``pi_d (k - A - pi_d) / (k - A - pi_d (k - j + 1))``, A being the sum
    of the drawn units' ``pi`` (Brewer 1975; Tille 2006, algorithm 6.10). Returns the drawn indices.

    Each draw computes the weights and their running sum block by block (blocks that stay in the
    processor's cache), every value by the same floating-point steps as one pass over the whole
    array would take, so the draw does not depend on the block size."""
    pi = np.asarray(pi, dtype=float)
    k = int(round(float(pi.sum())))
    size = pi.size
    picks: list[int] = []
    A = 0.0
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    block = min(size, _BLOCK)
    c = np.empty(size)                  # the running sum of the weights
    w = np.empty(block)                 # a block of weights
    denom = np.empty(block)
    keep = np.empty(block, dtype=bool)
    scratch = np.empty(block, dtype=bool)
    for j in range(1, k + 1):
        kA = k - A
        m = k - j + 1
        for s in range(0, size, block):
            e = min(s + block, size)
            p, ww, dd, kk, tt = pi[s:e], w[:e - s], denom[:e - s], keep[:e - s], scratch[:e - s]
            np.multiply(p, m, out=dd)                   # denom = k - A - pi (k - j + 1)
            np.subtract(kA, dd, out=dd)
            np.subtract(kA, p, out=ww)                  # w = pi (k - A - pi) / denom
            np.multiply(p, ww, out=ww)
            with np.errstate(divide="ignore", invalid="ignore"):
                np.divide(ww, dd, out=ww)
            if not (ww.min() > 0.0 and ww.max() < np.inf):  # only finite positive weights count
                np.greater(ww, 0.0, out=kk)
                np.less(ww, np.inf, out=tt)
                np.logical_and(kk, tt, out=kk)
                np.logical_not(kk, out=kk)
                np.copyto(ww, 0.0, where=kk)
            for i in picks:                             # units drawn already
                if s <= i < e:
                    ww[i - s] = 0.0
            if s:
                ww[0] = c[s - 1] + ww[0]                # the running sum goes on from the last block
            np.cumsum(ww, out=c[s:e])
        if not c[-1] > 0:  # every weight is 0 (only rounding can bring this): take the largest remaining pi
            chosen = np.zeros(size, dtype=bool)
            chosen[picks] = True
            i = int(np.argmax(np.where(chosen, -1.0, pi)))
        else:
            i = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
            i = min(i, size - 1)
        picks.append(i)
        A += float(pi[i])
    return np.sort(np.asarray(picks, dtype=np.int64))


def certainty_cut(n, K: int, *, icc: float = DEFAULT_ICC) -> int:
    """How many of the largest documents to take with certainty before an SRS of the rest: the count
    c (0 to K - 2) that minimises the anticipated variance of the micro total,
    ``(M - c)^2 (1 - (K - c)/(M - c)) S_rest^2 / (K - c)``, ``S_rest`` by :func:`residual_spread`."""
    n = np.sort(np.asarray(n, dtype=float))[::-1]
    M = n.size
    # running moments of the documents after the c largest
    s1 = np.cumsum(n[::-1])[::-1]
    s2 = np.cumsum((n * n)[::-1])[::-1]
    best, best_v = 0, math.inf
    for c in range(0, max(K - 1, 1)):
        m = M - c
        k = K - c
        if m < 2 or k < 2:
            break
        S2 = (s2[c] / m) * icc + (s1[c] / m) * (1.0 - icc)
        v = m * m * (1.0 - k / m) * S2 / k
        if v < best_v * (1 - 1e-12):
            best, best_v = c, v
    return best


# ------------------------------------------------------------------------------------ the draw
def draw_sample(frame, *, design: str, k: int, seed: int, take: int | None = None, strata: int = 4,
                allocation: str = "neyman", with_replacement: bool = False, remainder: str = "srs",
                certainty_size: float | None = None, cost_doc: float = 1.0, cost_chunk: float = 0.0,
                icc: float = DEFAULT_ICC) -> Sample:
    """Draw a sample of documents (and, with ``take``, chunks) from ``frame`` (:class:`perdoc.frame.Frame`).

    See the module's docstring for the designs. ``k`` is the number of documents (of draws, with
    replacement); ``seed`` makes the draw reproducible. (:func:`prepare_design`, then its
    :meth:`PreparedDesign.draw`: what depends only on the frame and the design is worked out once.)"""
    options = dict(design=design, k=k, take=take, strata=strata, allocation=allocation,
                   with_replacement=with_replacement, remainder=remainder, certainty_size=certainty_size,
                   cost_doc=cost_doc, cost_chunk=cost_chunk, icc=icc)
    _check_draw(design, k, take, allocation=allocation, remainder=remainder, cost_doc=cost_doc,
                cost_chunk=cost_chunk, icc=icc)
    _rng(seed)   # (a bad seed is named before anything the frame decides)
    return prepare_design(frame, **options).draw(seed)


@dataclass(frozen=True)
class PreparedDesign:
    """A design on a frame with everything that does not depend on the random draw worked out: the
    size strata and their allocation, the certainty documents and the cut, Brewer's probabilities.
    :meth:`draw` draws one sample; every draw with the same seed is :func:`draw_sample`'s, bit for bit.
    Built by :func:`prepare_design` (a coverage simulation draws many samples from one)."""

    frame: object
    n: np.ndarray               # the frame's sizes, as floats
    k: int
    take: int | None
    info: dict                  # what every sample's info starts with (copied per draw)
    kind: str                   # "srs", "stratified", "pps_wr" or "certainty" (pps without replacement too)
    parts: tuple = ()           # per kind: what the draw needs (see prepare_design)

    def draw(self, seed) -> Sample:
        """One sample drawn with ``seed``."""
        rng = _rng(seed)
        info = {**self.info, "seed": int(seed)}   # (the keys keep the order draw_sample writes them in)
        n, k = self.n, self.k
        if self.kind == "srs":
            rows = _draw_srs(n, k, rng, info)
        elif self.kind == "stratified":
            rows = _draw_stratified(n, rng, info, *self.parts)
        elif self.kind == "pps_wr":
            rows = _draw_pps_with_replacement(n, k, rng, info, *self.parts)
        else:
            rows = _draw_with_certainty(n, k, rng, info, *self.parts)
        info["documents_drawn"] = len(set(rows[0].tolist()))   # (np.unique would import numpy.ma: 50 ms)
        whole = rows[2] >= 1.0
        if whole.any() and not info["with_replacement"] and not whole.all():
            # the chance of being drawn per chunk of the documents not taken whole (times the take: a chunk's)
            info["chunk_rate"] = chunk_rate(np.count_nonzero(~whole), n.sum(), n[rows[0][whole]].sum())
        take = self.take
        info["labels"] = (int(n[rows[0]].sum()) if take is None
                          else int(doc_takes(n[rows[0]], rows[2], take, info).sum()))
        return _finish(self.frame, rows, take, rng, info)


def prepare_design(frame, *, design: str, k: int, take: int | None = None, strata: int = 4,
                   allocation: str = "neyman", with_replacement: bool = False, remainder: str = "srs",
                   certainty_size: float | None = None, cost_doc: float = 1.0, cost_chunk: float = 0.0,
                   icc: float = DEFAULT_ICC) -> PreparedDesign:
    """The design on ``frame`` ready to draw from (:class:`PreparedDesign`); the arguments are
    :func:`draw_sample`'s but the seed."""
    k = _check_draw(design, k, take, allocation=allocation, remainder=remainder, cost_doc=cost_doc,
                    cost_chunk=cost_chunk, icc=icc)
    n = np.asarray(frame.n, dtype=float)
    M = n.size
    if not (with_replacement and design == "pps") and k > M:
        raise ParameterError(f"--k {k} exceeds the {M:,} documents of the frame")
    info = {"design": design, "k": k, "take": take, "seed": None, "documents_in_frame": M,
            "chunks_in_frame": int(n.sum()), "with_replacement": bool(with_replacement and design == "pps")}
    if design == "srs":
        kind, parts = "srs", ()
        info["strata"] = {"all": {"documents": M, "drawn": k, "chunks": int(n.sum()), "selection": "srs"}}
    elif design == "stratified":
        kind = "stratified"
        parts = _prepare_stratified(n, k, take, info, strata=strata, allocation=allocation, cost_doc=cost_doc,
                                    cost_chunk=cost_chunk, icc=icc)
    elif design == "pps" and with_replacement:
        kind, parts = "pps_wr", (n / n.sum(),)
        info["strata"] = {"pps": {"documents": M, "drawn": k, "chunks": int(n.sum()),
                                  "selection": "pps with replacement"}}
    else:
        kind = "certainty"
        parts = _prepare_with_certainty(n, k, info, design=design, remainder=remainder,
                                        certainty_size=certainty_size, icc=icc)
    return PreparedDesign(frame=frame, n=n, k=k, take=take, info=info, kind=kind, parts=parts)


def check_costs(cost_doc, cost_chunk) -> None:
    """Each cost (of a drawn document, of a labelled chunk) a finite number >= 0; else ParameterError."""
    for name, v in (("--cost-doc", cost_doc), ("--cost-chunk", cost_chunk)):
        if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise ParameterError(f"{name} must be a finite number >= 0, got {v!r}")


def _check_draw(design: str, k, take, *, allocation: str, remainder: str, cost_doc, cost_chunk, icc) -> int:
    """The arguments of :func:`draw_sample` that do not need the frame, checked; ``k`` as an int."""
    if design not in DESIGNS:
        raise ParameterError(f"--design must be one of {', '.join(DESIGNS)}, got {design!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ParameterError(f"--k must be a whole number of documents, at least 2, got {k!r}")
    if take is not None and (isinstance(take, bool) or not isinstance(take, (int, np.integer)) or take < 2):
        raise ParameterError(f"--take must be a whole number of chunks per document, at least 2 (so that the "
                             f"variance within a document can be estimated), got {take!r}")
    if allocation not in ALLOCATIONS:
        raise ParameterError(f"--allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    if remainder not in ("srs", "pps"):
        raise ParameterError(f"--remainder must be srs or pps, got {remainder!r}")
    check_costs(cost_doc, cost_chunk)
    if cost_doc + cost_chunk <= 0:
        raise ParameterError("--cost-doc and --cost-chunk cannot both be 0")
    if not (0.0 <= icc < 1.0):
        raise ParameterError(f"--icc must lie in [0, 1), got {icc!r}")
    return int(k)


def _draw_srs(n, k: int, rng, info: dict):
    """A simple random sample of ``k`` documents without replacement (one stratum, ``all``)."""
    M = n.size
    idx = np.sort(rng.choice(M, size=k, replace=False))
    info["strata"] = {name: dict(st) for name, st in info["strata"].items()}
    return _rows(idx, np.full(idx.size, "all", dtype=object), np.full(idx.size, k / M), None)


def _prepare_stratified(n, k: int, take, info: dict, *, strata, allocation: str, cost_doc, cost_chunk, icc):
    """Size strata and ``k`` allocated across them (``info``: the strata, the allocation): ``(members of
    each stratum, its name, its k_h, its inclusion probability)`` for :func:`_draw_stratified`."""
    if not (isinstance(strata, (int, np.integer)) and 1 <= strata <= MAX_STRATA):
        raise ParameterError(f"--strata must be a whole number from 1 to {MAX_STRATA}, got {strata!r}")
    h = size_strata(n, min(int(strata), max(k // 2, 1)))
    H = int(h.max()) + 1
    M_h = np.bincount(h, minlength=H)
    S_h = np.array([residual_spread(n[h == j], icc=icc) for j in range(H)])
    if allocation == "proportional":
        weight = M_h.astype(float)
    elif allocation == "neyman":
        weight = M_h * S_h
    else:
        weight = None
    k_h = (_cost_allocation(n, h, k, M_h, S_h, take, cost_doc=cost_doc, cost_chunk=cost_chunk, icc=icc)
           if weight is None else allocate(k, M_h, weight))
    names = _stratum_names(n, h, H)
    parts = []
    info["strata"] = {}
    for j in range(H):
        members = np.flatnonzero(h == j)
        parts.append((members, names[j], int(k_h[j]), k_h[j] / M_h[j]))
        info["strata"][names[j]] = {"documents": int(M_h[j]), "drawn": int(k_h[j]),
                                    "chunks": int(n[members].sum()), "min_size": int(n[members].min()),
                                    "max_size": int(n[members].max()), "selection": "srs"}
    info["allocation"] = allocation
    return tuple(parts)


def _draw_stratified(n, rng, info: dict, *strata):
    """An SRS within each stratum of :func:`_prepare_stratified` (``strata``)."""
    parts = []
    for members, name, k_j, prob in strata:
        pick = np.sort(rng.choice(members, size=k_j, replace=False))
        parts.append((pick, name, prob))
    info["strata"] = {name: dict(st) for name, st in info["strata"].items()}
    idx = np.concatenate([p[0] for p in parts])
    return _rows(idx, np.concatenate([np.full(p[0].size, p[1], dtype=object) for p in parts]),
                 np.concatenate([np.full(p[0].size, p[2]) for p in parts]), None)


def _cost_allocation(n, h, k: int, M_h, S_h, take, *, cost_doc, cost_chunk, icc) -> np.ndarray:
    """The cost-optimal allocation of ``k`` across the size strata ``h`` (``k_h`` proportional to
    ``M_h S_h / sqrt(c_h)``), ``c_h`` being a document's cost with the labels the draw will take in it:
    all its chunks without a take; with one, :func:`take_sizes` (what :func:`doc_takes` gives the drawn
    sample): ``min(n_d, take)`` in a stratum drawn in part, more in a stratum drawn whole, at the chunk
    rate the allocation gives. Which strata are drawn whole follows from the allocation, so the two are
    iterated until they agree. They need not: a stratum of large documents drawn whole at the cheap
    anticipation can fall short of whole at its whole-stratum cost, and then it labels ``min(n_d,
    take)`` again. Then, of the allocations met on the way, the one with the smallest anticipated
    variance times cost (each at the labels its own draw takes, :func:`_variance_times_cost`) is kept."""
    H = M_h.size

    def allocation(whole_h, k_h):
        labelled = n if take is None else _anticipated_labels(n, h, whole_h, k_h, take)
        c_h = np.array([cost_doc + cost_chunk * labelled[h == j].mean() for j in range(H)])
        return allocate(k, M_h, M_h * S_h / np.sqrt(c_h))

    k_h = allocation(np.zeros(H, dtype=bool), None)   # every document anticipated at min(n_d, take)
    if take is None:
        return k_h
    tried = [k_h]
    for _ in range(4 * H):
        nxt = allocation(k_h >= M_h, k_h)
        if np.array_equal(nxt, k_h):
            return k_h   # the allocation agrees with the labels it anticipated
        if any(np.array_equal(nxt, kk) for kk in tried):
            break        # a cycle: no allocation agrees with its own anticipation
        tried.append(nxt)
        k_h = nxt
    score = [_variance_times_cost(n, h, kk, M_h, S_h, take, cost_doc=cost_doc, cost_chunk=cost_chunk, icc=icc)
             for kk in tried]
    return tried[int(np.argmin(score))]


def _variance_times_cost(n, h, k_h, M_h, S_h, take: int, *, cost_doc, cost_chunk, icc) -> float:
    """The anticipated variance of the micro total under the allocation ``k_h`` with a take, times its
    expected cost: between documents ``sum_h M_h^2 (1/k_h - 1/M_h) S_h^2`` (:func:`residual_spread`'s
    units), within them ``sum_h (M_h/k_h) sum_d n_d^2 (1/m_d - 1/n_d) (1 - icc)`` (m_d chunks of n_d
    drawn without replacement), the labels ``m_d`` being those the draw takes (:func:`take_sizes`)."""
    m = _anticipated_labels(n, h, k_h >= M_h, k_h, take).astype(float)
    k = np.asarray(k_h, dtype=float)
    between = float(np.sum(M_h * M_h * (1.0 / k - 1.0 / M_h) * S_h * S_h))
    within_d = n * n * (1.0 / m - 1.0 / n) * (1.0 - icc)
    within = float(np.sum((M_h / k) * np.bincount(h, weights=within_d, minlength=M_h.size)))
    cost = float(np.sum(k * (cost_doc + cost_chunk * np.bincount(h, weights=m, minlength=M_h.size) / M_h)))
    return (between + within) * cost


def _anticipated_labels(n, h, whole_h, k_h, take: int) -> np.ndarray:
    """Labels per frame document under a take when the strata ``whole_h`` are drawn whole and the others
    draw ``k_h`` documents (:func:`take_sizes`, at the chunk rate of :func:`chunk_rate`)."""
    whole = whole_h[h]
    rate = None
    if whole.any() and not whole.all():
        rate = chunk_rate(int(np.asarray(k_h)[~whole_h].sum()), n.sum(), n[whole].sum())
    return take_sizes(n, whole, take, rate)


def _draw_pps_with_replacement(n, k: int, rng, info: dict, p):
    """``k`` independent draws with probability ``p = n_d / N`` (a document drawn twice: two draws)."""
    M = n.size
    picks = np.sort(rng.choice(M, size=k, replace=True, p=p))
    uniq, counts = np.unique(picks, return_counts=True)
    draws = np.concatenate([np.arange(1, c + 1) for c in counts])
    idx = np.repeat(uniq, counts)
    info["strata"] = {name: dict(st) for name, st in info["strata"].items()}
    return _rows(idx, np.full(idx.size, "pps", dtype=object), k * p[idx], draws)


def _prepare_with_certainty(n, k: int, info: dict, *, design: str, remainder: str, certainty_size, icc):
    """The pps and certainty designs: the documents taken with certainty, and how the rest is drawn
    (``info``: both strata, and what a take of the certainty documents needs). Returns ``(certainty
    documents, the rest, k of the rest, the rest's inclusion probabilities, whether by PPS, the rest's
    stratum name)`` for :func:`_draw_with_certainty`."""
    certain = _certain(n, k, design=design, remainder=remainder, certainty_size=certainty_size, icc=icc)
    use_pps = design == "pps" or remainder == "pps"
    rest = np.flatnonzero(~certain)
    k_rest = k - int(certain.sum())
    if use_pps:
        pi_rest, certain_rest = brewer_probabilities(n[rest], k_rest)
        certain[rest[certain_rest]] = True
        rest = np.flatnonzero(~certain)
        k_rest = k - int(certain.sum())
        pi_rest = pi_rest[~certain_rest]
    else:
        pi_rest = np.full(rest.size, k_rest / max(rest.size, 1))
    cert_idx = np.flatnonzero(certain)
    rest_name = "pps" if use_pps else "srs"
    info["strata"] = {}
    if cert_idx.size:
        info["strata"]["certainty"] = {"documents": int(cert_idx.size), "drawn": int(cert_idx.size),
                                       "chunks": int(n[cert_idx].sum()), "min_size": int(n[cert_idx].min()),
                                       "selection": "all (take-all stratum)"}
    drawn = k_rest if (k_rest > 0 and rest.size) else 0
    info["strata"][rest_name] = {"documents": int(rest.size), "drawn": int(drawn),
                                 "chunks": int(n[rest].sum()),
                                 "selection": "pps without replacement (Brewer)" if use_pps else "srs"}
    if design == "certainty":
        info["remainder"] = remainder
        info["certainty_size"] = None if not cert_idx.size else int(n[cert_idx].min())
    return cert_idx, rest, k_rest, pi_rest, use_pps, rest_name


def _draw_with_certainty(n, k: int, rng, info: dict, cert_idx, rest, k_rest, pi_rest, use_pps, rest_name):
    """The documents taken with certainty, then an SRS or a PPS (Brewer) of the rest
    (:func:`_prepare_with_certainty`)."""
    if k_rest > 0 and rest.size:
        if use_pps:
            drawn = brewer_draw(pi_rest, rng)
            pick = rest[drawn]
            rest_prob = pi_rest[drawn]
        else:
            pick = np.sort(rng.choice(rest, size=k_rest, replace=False))
            rest_prob = np.full(pick.size, k_rest / rest.size)
    else:
        pick, rest_prob = np.zeros(0, dtype=np.int64), np.zeros(0)
    info["strata"] = {name: dict(st) for name, st in info["strata"].items()}
    idx = np.concatenate([cert_idx, pick])
    return _rows(idx, np.array(["certainty"] * cert_idx.size + [rest_name] * pick.size, dtype=object),
                 np.concatenate([np.ones(cert_idx.size), rest_prob]), None)


def _certain(n, k: int, *, design: str, remainder: str, certainty_size, icc) -> np.ndarray:
    """Which documents the certainty design takes whole before the rest is drawn (none under pps: its
    certainty documents follow from the sizes, :func:`brewer_probabilities`)."""
    M = n.size
    if design != "certainty":
        return np.zeros(M, dtype=bool)
    if certainty_size is not None:
        if not (isinstance(certainty_size, (int, float)) and math.isfinite(certainty_size) and certainty_size > 0):
            raise ParameterError(f"--certainty-size must be a positive number of chunks, got "
                                 f"{certainty_size!r}")
        certain = n >= certainty_size
        if int(certain.sum()) > k - 2:
            raise ParameterError(f"--certainty-size {certainty_size:g}: {int(certain.sum())} documents have "
                                 f"that many chunks or more, leaving fewer than 2 of --k {k} for the rest")
        return certain
    if remainder == "srs":
        return _largest(n, certainty_cut(n, k, icc=icc))
    return np.zeros(M, dtype=bool)


def doc_takes(n, prob, take: int, info: dict) -> np.ndarray:
    """Chunks to label in each drawn document (rows of a sample: sizes ``n``, inclusion probabilities
    ``prob``) under a take of ``take``: :func:`take_sizes`, the documents taken whole being those of
    ``prob`` 1, at ``info["chunk_rate"]`` (set by :func:`draw_sample`)."""
    return take_sizes(n, np.asarray(prob, dtype=float) >= 1.0, take, info.get("chunk_rate"))


def take_sizes(n, whole, take: int, rate) -> np.ndarray:
    """Chunks to label in documents of sizes ``n`` under a take of ``take``: ``min(n_d, take)``, except
    that a document taken whole (``whole``) takes ``min(n_d, max(take, ceil(take * rate * n_d)))`` when
    ``rate`` (:func:`chunk_rate`) is given, so that its chunks have the mean chance of the other chunks.
    The one rule for the labels per document: the draw (:func:`doc_takes`) and the cost-optimal
    allocation that anticipates it both use it."""
    n = np.asarray(n, dtype=np.int64)
    m = np.minimum(n, int(take))
    if rate:
        cert = np.asarray(whole, dtype=bool)
        want = np.ceil(int(take) * float(rate) * n[cert] - 1e-9).astype(np.int64)
        m[cert] = np.minimum(n[cert], np.maximum(int(take), want))
    return m


def chunk_rate(drawn_rest, chunks, chunks_whole) -> float:
    """The chance of being drawn per chunk of the documents not taken whole: the ``drawn_rest`` documents
    drawn among them over their chunks (all ``chunks`` of the frame but the ``chunks_whole`` of the
    documents taken whole)."""
    return float(drawn_rest / (chunks - chunks_whole))


def _largest(n, c: int) -> np.ndarray:
    """Where the ``c`` largest sizes are, ties going to the earlier document: the first ``c`` of
    ``np.argsort(-n, kind="stable")``, found by a partition (O(M)) instead of a sort."""
    M = n.size
    if not np.all(np.isfinite(n)):   # (a frame's sizes always are)
        certain = np.zeros(M, dtype=bool)
        certain[np.argsort(-n, kind="stable")[:c]] = True
        return certain
    if c <= 0:
        return np.zeros(M, dtype=bool)
    if c >= M:
        return np.ones(M, dtype=bool)
    cut = np.partition(n, M - c)[M - c]   # the c-th largest size
    certain = n > cut
    ties = np.flatnonzero(n == cut)
    certain[ties[:c - int(certain.sum())]] = True
    return certain


def _stratum_names(n, h, H) -> list[str]:
    """Stratum names that say what they hold: ``size 1-12``, ``size 13-80`` ..."""
    out = []
    for j in range(H):
        m = n[h == j]
        out.append(f"size {int(m.min())}-{int(m.max())}")
    return out


def _rows(idx, stratum, prob, draws):
    idx = np.asarray(idx, dtype=np.int64)
    draws = np.ones(idx.size, dtype=np.int64) if draws is None else np.asarray(draws, dtype=np.int64)
    return idx, np.asarray(stratum, dtype=object), np.asarray(prob, dtype=float), draws


def _finish(frame, rows, take, rng, info) -> Sample:
    idx, stratum, prob, draw = rows
    doc = np.asarray(frame.doc, dtype=object)[idx]
    # a stable order: by document id, then draw (the draw itself used the frame's order)
    order = np.lexsort((draw, doc.astype(str)))
    idx, stratum, prob, draw, doc = idx[order], stratum[order], prob[order], draw[order], doc[order]
    n = np.asarray(frame.n, dtype=np.int64)[idx]
    if take is None:
        return Sample(doc=doc, stratum=stratum, prob=prob, draw=draw, chunk=None, n=n, info=info)
    reps, chunks = [], []
    for size, m in zip(n.tolist(), doc_takes(n, prob, take, info).tolist()):
        reps.append(m)
        chunks.append(np.arange(size) if m == size else np.sort(rng.choice(size, size=m, replace=False)))
    reps = np.asarray(reps)
    return Sample(doc=np.repeat(doc, reps), stratum=np.repeat(stratum, reps), prob=np.repeat(prob, reps),
                  draw=np.repeat(draw, reps), chunk=np.concatenate(chunks).astype(np.int64), n=np.repeat(n, reps),
                  info=info)
