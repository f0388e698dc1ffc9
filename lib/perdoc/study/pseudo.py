"""A pseudo-population built from the sample, for checking interval methods without a census.

Without a census, the methods can still be checked on data shaped like the sample: each of the K
sampled documents is replicated about M/K times (M: the population size, or ``PSEUDO_FACTOR * K``
when it is unknown), the remainder filled by documents drawn at random, and samples of K documents
are drawn from that population (Gross 1980; Booth, Butler and Hall 1994: the without-replacement
bootstrap population). The census value of the pseudo-population is (close to) the sample's own
estimate.

What it can and cannot show: it reproduces the sizes, rates and skewness the sample shows, so it
catches a method that fails on documents like these; it cannot contain documents unlike any that
were sampled (a very long document the sample missed), so it tends to flatter every method. Reports
label it as such and never present it as a census check.
"""

from __future__ import annotations

import numpy as np

from ..reading.table import DocTable

__all__ = ["pseudo_population", "PSEUDO_FACTOR", "PSEUDO_MAX_K", "pseudo_check"]

#: Population size used when M is unknown: this many copies of the sample.
PSEUDO_FACTOR = 50
#: Above this many sampled documents the check is not run in reports (its cost grows with K, and the
#: large-sample approximations it would check are then far less fragile).
PSEUDO_MAX_K = 200


def pseudo_population(table: DocTable, population_size: int | None = None, *, seed: int = 1) -> DocTable:
    """The K documents of ``table`` replicated up to ``population_size`` documents (see the module
    docstring); ids are ``<id>#<copy>``. Document attributes are carried along."""
    K = table.K
    M = int(population_size) if population_size is not None else PSEUDO_FACTOR * K
    M = max(M, 2 * K)
    copies = np.full(K, M // K, dtype=np.int64)
    rest = M - int(copies.sum())
    if rest:
        rng = np.random.default_rng(seed)
        copies[rng.choice(K, size=rest, replace=False)] += 1
    index = np.repeat(np.arange(K), copies)
    copy_no = np.concatenate([np.arange(c) for c in copies])
    doc = np.array([f"{d}#{c}" for d, c in zip(table.doc[index], copy_no)], dtype=object)
    q = None if table.q is None else table.q[index]
    src = dict(table.source)
    src["pseudo_population"] = {"from_documents": K, "documents": M, "seed": seed}
    out = DocTable(doc=doc.astype(str), n=table.n[index], s=table.s[index], q=q,
                   q_assumed_binary=table.q_assumed_binary, source=src,
                   attrs={k: np.asarray(v)[index] for k, v in table.attrs.items()}, scale=table.scale)
    return out


def pseudo_check(table: DocTable, *, population_size: int | None, level: float, seed: int,
                 reps: int = 1000, replicates: int = 199, progress=None):
    """Coverage of every method on samples of K documents from the pseudo-population of ``table``
    (a :class:`perdoc.simulate.SimulationResult`), or None when it cannot say anything: every
    document at the same rate, or more than :data:`PSEUDO_MAX_K` documents. ``progress``, a
    ``progress(done, total)`` callback, follows the simulation."""
    from .simulate import simulate
    r = table.rate
    if table.K > PSEUDO_MAX_K or table.K < 3 or bool(np.all(r == r[0])):
        return None
    pop = pseudo_population(table, population_size, seed=seed)
    return simulate(pop, k=table.K, reps=reps, seed=seed, level=level, replicates=replicates, progress=progress)
