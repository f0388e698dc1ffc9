"""Comparing several systems scored on the same documents: every pair, adjusted for the number of pairs.

For systems ``S_1, ..., S_m`` (listed in the order given, the first one first in every pair it is in),
each pair ``S_i - S_j`` (``i < j``) is compared exactly as :func:`perdoc.compare` compares two systems,
and it is summarised by the interval that comparison leads with (:func:`perdoc.policy.lead`: CR2 with
Bell-McCaffrey degrees of freedom for a micro difference). On top of the pairs:

* the unadjusted p-value of each pair, from the same standard error and degrees of freedom as its
  leading interval (a two-sided t test), and Holm's step-down adjustment of those p-values across
  the pairs (it controls the chance of any false "this pair differs");
* a simultaneous band: the leading intervals widened by one critical value ``c`` so that all of them
  cover together with probability about ``level``. ``c`` comes from the largest ``|t|`` over the
  pairs under sign multipliers by document: every document's residual ``D_dp - Delta_p n_d`` of every
  pair is multiplied by the same random sign ``eps_d``, so the dependence between pairs (they share
  documents and systems) is kept. Each pair's ``|t|`` is measured against its own sign-multiplier
  distribution (the share of patterns reaching it; with few, unequal documents that distribution is
  far from normal), the largest over the pairs gives the per-pair tail that keeps the whole family
  covered, and ``c`` is the t quantile of the leading intervals' degrees of freedom leaving that
  tail (Westfall and Young's single-step min-p, which is the plain max-|t| when the pairs' statistics
  are equally spread). It never falls below the pointwise t quantile: a band meant to cover every pair at
  once must cover each one. All ``2^(K-1)`` sign patterns are used for few documents (``K`` at most
  :data:`perdoc.compare.EXACT_MAX_K`), else a seeded Monte Carlo sample;
* a ranking: each system's micro mean, its rank (1 is the highest mean) and the ranks compatible with
  the simultaneous band: a system can rank no better than one plus the number of systems the band
  shows are above it, and no worse than ``m`` minus the number it shows are below it. These rank
  intervals hold together with the band's coverage.

Everything is computed from per-document sums; with the same inputs and seed the result is the same.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import InputError, ParameterError
from ..messages import Message
from ..methods._dist import t_cdf, t_ppf
from ..methods.results import ConfidenceInterval, Interval, _num, check_level
from ..reading.pairs import PairTable
from .compare import EXACT_MAX_K, Comparison, compare, verdict
from .estimate import DEFAULT_REPLICATES, DEFAULT_SEED
from .policy import lead

__all__ = ["MultiComparison", "PairDifference", "SystemRank", "compare_many", "holm", "max_t_critical",
           "t_p_value", "MIN_DRAWS", "EXACT_MAX_VALUES"]

#: The sign-multiplier draws of the simultaneous band are at least this many (as the sign-flip test's).
MIN_DRAWS = 9999

#: The band enumerates every sign pattern only while patterns times pairs stays within this many values.
EXACT_MAX_VALUES = 1 << 23

#: How the simultaneous band is made, in words (the JSON's ``band.method``).
BAND_METHOD = ("max-|t| over the pairs (each |t| as the share of sign patterns reaching it), sign "
               "multipliers by document, the same signs for every pair; read on the t scale of the leading "
               "intervals")


@dataclass(frozen=True)
class PairDifference:
    """One pair ``a - b``: its leading interval, p-values and simultaneous interval."""

    a: str
    b: str
    interval: Interval
    p_value: float | None
    p_holm: float | None
    simultaneous: Interval
    comparison: Comparison = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.a} - {self.b}"

    def to_dict(self) -> dict[str, Any]:
        iv, sim = self.interval, self.simultaneous
        return {
            "a": self.a, "b": self.b, "label": self.label, "difference": _num(iv.estimate),
            "method": iv.method, "method_label": iv.label, "se": _num(iv.se), "df": _num(iv.df),
            "interval": _bounds(iv), "reason": iv.reason, "verdict": verdict(iv),
            "p_value": _num(self.p_value), "p_holm": _num(self.p_holm),
            "simultaneous": _bounds(sim), "simultaneous_verdict": verdict(sim),
            "randomization_p": _num(self.comparison.randomization.get("p_value")),
        }


@dataclass(frozen=True)
class SystemRank:
    """A system's micro mean, its rank (1 = highest mean) and the ranks the simultaneous band allows."""

    system: str
    micro: float
    rank: int
    low: int
    high: int

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "micro": _num(self.micro), "rank": self.rank,
                "rank_interval": [self.low, self.high]}


@dataclass(frozen=True)
class MultiComparison:
    """Every pair of several systems on the same documents, with Holm p-values, a simultaneous band and
    a ranking. ``pairs`` are in the order of ``itertools.combinations(systems, 2)``."""

    systems: tuple[str, ...]
    level: float
    K: int
    N: float
    population_size: int | None
    pairs: tuple[PairDifference, ...]
    ranking: tuple[SystemRank, ...]
    critical_value: float | None
    pointwise_critical_value: float | None
    band: dict
    replicates: int
    seed: int | None
    notes: tuple[str, ...] = ()

    def pair(self, a: str, b: str) -> PairDifference:
        """The pair ``a - b`` (KeyError when the systems are not a pair in this order)."""
        for p in self.pairs:
            if (p.a, p.b) == (a, b):
                return p
        raise KeyError(f"no pair {a} - {b}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``perdoc compare --vs B,C,...`` (keys are stable; new keys may be added)."""
        return {
            "systems": list(self.systems), "K": self.K, "N": int(self.N) if float(self.N).is_integer() else self.N,
            "level": self.level, "population_size": self.population_size, "replicates": self.replicates,
            "seed": self.seed, "critical_value": _num(self.critical_value),
            "pointwise_critical_value": _num(self.pointwise_critical_value), "band": dict(self.band),
            "pairs": [p.to_dict() for p in self.pairs], "ranking": [r.to_dict() for r in self.ranking],
            "notes": list(self.notes),
        }

    def tidy(self):
        """One row per pair (a DataFrame): the micro difference, its leading interval (``low``,
        ``high``), the p-values and the simultaneous interval (``sim_low``, ``sim_high``)."""
        import pandas as pd
        rows = []
        for p in self.pairs:
            iv, sim = p.interval, p.simultaneous
            rows.append({
                "comparison": p.label, "a": p.a, "b": p.b, "estimand": iv.estimand, "method": iv.method,
                "label": iv.label, "estimate": iv.estimate, "se": iv.se, "df": iv.df,
                "low": None if iv.ci is None else iv.ci.low, "high": None if iv.ci is None else iv.ci.high,
                "level": iv.level, "p_value": p.p_value, "p_holm": p.p_holm,
                "sim_low": None if sim.ci is None else sim.ci.low, "sim_high": None if sim.ci is None else sim.ci.high,
                "critical_value": self.critical_value,
            })
        return pd.DataFrame(rows)

    def ranks(self):
        """The ranking as a DataFrame: system, micro mean, rank and rank interval (``rank_low``, ``rank_high``)."""
        import pandas as pd
        return pd.DataFrame([{"system": r.system, "micro": r.micro, "rank": r.rank, "rank_low": r.low,
                              "rank_high": r.high} for r in self.ranking])


def compare_many(data, systems=None, *, doc: str | None = None, level: float = 0.95,
                 population_size: int | None = None, replicates: int = DEFAULT_REPLICATES,
                 seed: int | None = DEFAULT_SEED, metric: str | None = None,
                 allow_similar_ids: bool = False) -> MultiComparison:
    """Compare every pair of ``systems`` scored on the same documents.

    ``data`` is either per-row results (a DataFrame, or a file :func:`perdoc.load_pairs` reads) with
    the ``doc`` column and one score column per system, or the paired tables themselves (a
    :class:`PairTable` per pair, as a list or a mapping; a table may hold its pair in either order).
    ``systems`` lists the systems; with tables it defaults to the order they first appear in. Every
    pair uses :func:`perdoc.compare` with ``level``, ``population_size``, ``replicates`` and ``seed``;
    the simultaneous band uses ``seed`` too, and at least :data:`MIN_DRAWS` sign patterns.
    """
    level = check_level(level)
    systems, tables = _pair_tables(data, systems, doc, metric=metric, allow_similar_ids=allow_similar_ids)
    kw = dict(level=level, population_size=population_size, replicates=replicates, seed=seed)
    done = [(a, b, compare(tables[a, b], **kw)) for a, b in itertools.combinations(systems, 2)]
    first = done[0][2].systems[0]   # its replicates and seed, as compare checked them
    leading = [lead(c.difference, "micro", difference=True).interval for _, _, c in done]
    p_values = [t_p_value(iv) for iv in leading]
    adjusted = holm(p_values)
    residuals = np.column_stack([_residuals(tables[a, b]) for a, b, _ in done])
    usable = np.array([iv.ci is not None and bool(iv.se) and iv.df is not None for iv in leading])
    dfs = [iv.df for iv, ok in zip(leading, usable) if ok]
    df = min(dfs) if dfs else None
    c, pointwise, band = max_t_critical(residuals[:, usable], level, df, draws=max(first.replicates, MIN_DRAWS),
                                        seed=first.seed)
    pairs = tuple(PairDifference(a, b, iv, p, ph, _band_interval(iv, c, int(usable.sum())), comp)
                  for (a, b, comp), iv, p, ph in zip(done, leading, p_values, adjusted))
    notes = [] if usable.all() else [f"{int((~usable).sum())} pair(s) without a leading interval are left out "
                                     "of the simultaneous band"]
    return MultiComparison(systems=tuple(systems), level=level, K=done[0][2].K, N=done[0][2].N,
                           population_size=first.population_size, pairs=pairs, ranking=_ranking(systems, done, pairs),
                           critical_value=c, pointwise_critical_value=pointwise,
                           band={"method": BAND_METHOD, **band, "df": _num(df), "pairs": int(usable.sum())},
                           replicates=first.replicates, seed=first.seed, notes=tuple(notes))


def _pair_tables(data, systems, doc, **opts) -> tuple[list[str], dict]:
    """``(systems, {(a, b): PairTable})`` for every pair ``a`` before ``b`` in ``systems``; checks that
    there are at least two distinct systems and that every table is paired on the same documents."""
    given = _given_tables(data)
    if systems is None:
        if given is None:
            raise ParameterError("systems is required with per-row data: the score columns to compare")
        systems = list(dict.fromkeys(name for t in given for name in t.names))
    if isinstance(systems, str) or not all(isinstance(s, str) and s for s in systems):
        raise ParameterError("systems must be a list of names (strings), one per system")
    systems = list(systems)
    if len(systems) < 2:
        raise ParameterError(f"need at least 2 systems to compare (got {len(systems)})")
    dup = next((s for i, s in enumerate(systems) if s in systems[:i]), None)
    if dup is not None:
        raise ParameterError(f"duplicate system '{dup}': every system is named once")
    if given is None:
        tables = _load_tables(data, systems, doc, **opts)
    else:
        tables = _arrange(given, systems)
    _check_same_documents(tables)
    return systems, tables


def _given_tables(data) -> list[PairTable] | None:
    """The pair tables passed in (a PairTable, a list of them or a mapping to them), or None for data
    to load."""
    if isinstance(data, PairTable):
        return [data]
    if isinstance(data, Mapping):
        values = list(data.values())
    elif isinstance(data, (list, tuple)):
        values = list(data)
    else:
        return None
    if not values or not all(isinstance(t, PairTable) for t in values):
        raise ParameterError("data must be per-row results (a DataFrame or a file) or PairTables, one per pair")
    return values


def _load_tables(data, systems, doc, **opts) -> dict:
    """Every pair's table from per-row results, through :func:`perdoc.load_pairs` (paired rows)."""
    if doc is None:
        raise ParameterError("doc is required with per-row data: the document id column")
    if isinstance(data, (str, os.PathLike)) and os.fspath(data) == "-":
        raise ParameterError("several systems read the data once per pair: give a file, not standard input")
    from ..reading.io import load_pairs
    return {(a, b): load_pairs(data, doc=doc, a=a, b=b, **opts) for a, b in itertools.combinations(systems, 2)}


def _arrange(given: list[PairTable], systems: list[str]) -> dict:
    """``{(a, b): table}`` for every pair of ``systems`` from tables holding either order."""
    found = {}
    for t in given:
        found[tuple(t.names)] = t
        found.setdefault(tuple(t.names[::-1]), _swapped(t))
    tables = {}
    for a, b in itertools.combinations(systems, 2):
        if (a, b) not in found:
            raise ParameterError(f"no table compares '{a}' with '{b}': give one PairTable per pair of systems")
        tables[a, b] = found[a, b]
    return tables


def _swapped(t: PairTable) -> PairTable:
    """The same pair with the systems' order reversed (B - A)."""
    return replace(t, names=(t.names[1], t.names[0]), n_a=t.n_b, s_a=t.s_b, q_a=t.q_b, n_b=t.n_a, s_b=t.s_a,
                   q_b=t.q_a)


def _check_same_documents(tables: dict) -> None:
    """Every table paired, on the same documents with the same measurements per document."""
    ref = next(iter(tables.values()))
    for (a, b), t in tables.items():
        if not t.paired:
            raise InputError(f"{a} - {b}: several systems are compared paired only (every row scored by every "
                             "system)")
        if not (np.array_equal(t.doc, ref.doc) and np.array_equal(t.n_a, ref.n_a)):
            raise InputError(f"{a} - {b}: every pair must be scored on the same documents and rows as "
                             f"{ref.names[0]} - {ref.names[1]}; rows without a score for some system were left "
                             "out of that system's pairs only, so keep the rows every system scored")


def t_p_value(iv: Interval) -> float | None:
    """Two-sided p-value of ``difference = 0`` from an interval's estimate, standard error and degrees of
    freedom (the t test its interval inverts); None when it has no interval or no positive se."""
    if iv.ci is None or not iv.se or iv.df is None or not math.isfinite(iv.se) or iv.se <= 0:
        return None
    return min(1.0, 2.0 * t_cdf(-abs(iv.estimate) / iv.se, iv.df))


def holm(p_values) -> list[float | None]:
    """Holm's step-down adjusted p-values, in the order given; a missing p-value (None or NaN) stays
    None and does not count towards the number of tests."""
    ok = [i for i, p in enumerate(p_values) if p is not None and p == p]
    order = sorted(ok, key=lambda i: p_values[i])
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - step) * float(p_values[i])))
        out[i] = running
    return out


def _residuals(t: PairTable) -> np.ndarray:
    """The pair's per-document residuals ``D_d - Delta n_d`` of the micro difference, divided by their
    largest size (the band only needs their ratios)."""
    D = t.s_a - t.s_b
    u = D - D.sum() / t.n_a.sum() * t.n_a
    top = float(np.max(np.abs(u)))
    return u / top if top > 0 and math.isfinite(top) else np.zeros_like(u)


def max_t_critical(residuals: np.ndarray, level: float, df: float | None, *, draws: int = MIN_DRAWS,
                   seed: int | None = DEFAULT_SEED) -> tuple[float | None, float | None, dict]:
    """``(c, pointwise, info)``: the simultaneous critical value for the pairs whose per-document
    residuals are the columns of ``residuals`` (documents in rows), the pointwise t quantile at
    ``level`` with ``df`` degrees of freedom, and how ``c`` was found.

    Each sign pattern multiplies every document's row by one sign and gives each pair the statistic
    ``|t_p| = |sum_d eps_d u_dp| / sqrt(sum_d u_dp^2)``. Each ``|t_p|`` is read as the share of
    patterns where that pair reaches it (so pairs whose statistics are spread differently count
    alike: with equal spreads this is the plain largest ``|t|``), and the smallest share over the pairs
    is kept. Its ``1 - level`` quantile is the per-pair tail that keeps every pair covered together;
    ``c`` is the t quantile with ``df`` leaving that tail, and at least ``pointwise``. Exact over every
    sign pattern for few documents (``K <= EXACT_MAX_K`` and at most :data:`EXACT_MAX_VALUES`
    statistics in all), else ``draws`` seeded patterns. Without pairs ``c`` is the pointwise quantile;
    without ``df`` both are None.
    """
    U = np.asarray(residuals, dtype=float)
    if U.ndim != 2:
        raise ParameterError("residuals must be a matrix: one row per document, one column per pair")
    level = check_level(level)
    pointwise = None if df is None else t_ppf(1 - (1 - level) / 2, df)
    norms = np.sqrt(np.sum(U * U, axis=0))
    U = U[:, norms > 0] / norms[norms > 0]
    K, P = U.shape
    exact = K <= EXACT_MAX_K and P * 2 ** (K - 1) <= EXACT_MAX_VALUES
    info = {"exact": exact if P else None, "patterns": (2**K if exact else None) if P else None,
            "draws": None if exact or not P else int(draws), "pair_tail": None}
    if pointwise is None or P == 0:
        return pointwise, pointwise, info
    T = np.concatenate([np.abs(eps @ U) for eps in _sign_batches(K, int(draws), seed, exact)])
    tol = 1e-12 * np.sum(np.abs(U), axis=0)   # a pattern reaching |t| within rounding counts as reaching it
    reach = np.empty_like(T)
    for p in range(P):
        ordered = np.sort(T[:, p])
        reach[:, p] = (T.shape[0] - np.searchsorted(ordered, T[:, p] - tol[p], side="left")) / T.shape[0]
    tail = float(np.quantile(reach.min(axis=1), 1 - level, method="inverted_cdf"))
    info["pair_tail"] = tail
    return max(t_ppf(1 - tail / 2, df), pointwise), pointwise, info


def _sign_batches(K: int, draws: int, seed: int | None, exact: bool):
    """Sign vectors (rows of +1/-1, one column per document), in batches: with ``exact`` every pattern
    whose first sign is +1 (a pattern and its negation give the same ``|t|``), else ``draws`` seeded
    random ones."""
    rows = max(1, (1 << 21) // max(K, 1))
    if exact:
        total, shifts = 1 << (K - 1), np.arange(K - 1, dtype=np.int64)
        for start in range(0, total, rows):
            bits = (np.arange(start, min(total, start + rows), dtype=np.int64)[:, None] >> shifts) & 1
            yield np.column_stack([np.ones(bits.shape[0]), 1.0 - 2.0 * bits])
        return
    rng = np.random.default_rng(seed)
    for start in range(0, draws, rows):
        yield rng.integers(0, 2, size=(min(rows, draws - start), K)) * 2.0 - 1.0


def _band_interval(iv: Interval, c: float | None, pairs: int) -> Interval:
    """The leading interval ``iv`` widened to the simultaneous critical value ``c`` (never narrower than
    ``iv`` itself), or an interval without bounds when there is nothing to widen."""
    label = f"simultaneous over {pairs} pair(s): max-|t| critical value times the {iv.method} se"
    common = dict(se=iv.se, df=iv.df, role="primary", metric_range=iv.metric_range,
                  resampling_unit="document (sign multipliers, the same for every pair)")
    if c is None or iv.ci is None or not iv.se:
        return Interval(iv.estimand, "max_t", label, iv.estimate, iv.level,
                        reason=iv.reason or Message("reason.nothing_to_widen", "no leading interval to widen"),
                        **common)
    half = c * iv.se
    ci = ConfidenceInterval(min(iv.estimate - half, iv.ci.low), max(iv.estimate + half, iv.ci.high))
    return Interval(iv.estimand, "max_t", label, iv.estimate, iv.level, ci=ci, extra={"critical_value": c},
                    **common)


def _ranking(systems: list[str], done: list, pairs: tuple[PairDifference, ...]) -> tuple[SystemRank, ...]:
    """Each system's micro mean, rank (1 = highest; ties share the better rank) and the ranks its
    simultaneous intervals allow, highest mean first (ties in the order of ``systems``)."""
    means = {}
    for a, b, comp in done:
        means.setdefault(a, comp.systems[0].micro_estimate)
        means.setdefault(b, comp.systems[1].micro_estimate)
    above = dict.fromkeys(systems, 0)   # systems the band shows are higher
    below = dict.fromkeys(systems, 0)   # systems the band shows are lower
    for p in pairs:
        v = verdict(p.simultaneous)
        if v == "a_higher":
            above[p.b] += 1
            below[p.a] += 1
        elif v == "b_higher":
            above[p.a] += 1
            below[p.b] += 1
    m = len(systems)
    out = [SystemRank(s, means[s], 1 + sum(means[o] > means[s] for o in systems), 1 + above[s], m - below[s])
           for s in systems]
    return tuple(sorted(out, key=lambda r: (r.rank, systems.index(r.system))))


def _bounds(iv: Interval) -> list | None:
    return None if iv.ci is None else [_num(iv.ci.low), _num(iv.ci.high)]
