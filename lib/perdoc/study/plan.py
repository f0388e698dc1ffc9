"""Planning: how many documents to sample. Precision is bought with documents, not chunks.

Half-width of the interval of a mean over K documents drawn without replacement from M:

    h(K) = t(1 - alpha/2; K - 1) * S / sqrt(K) * sqrt(1 - K/M)        (no M: drop the last factor)

with the spread ``S = sd(r_d)`` for the macro mean and ``S = sd(u_d) / nbar`` for the micro mean
(``u_d = s_d - R n_d``, ``nbar`` = mean n_d), taken from a pilot or a census. ``h`` falls as K grows
(t, 1/sqrt(K) and the correction all fall), so the smallest K with ``h(K) <= H`` is found by
bisection.

Degrees of freedom: ``K - 1`` by default (the macro mean's t interval; :func:`half_width` without
``sizes``). The micro mean's realised interval is CR2 with Bell-McCaffrey degrees of freedom, which
depend on the document sizes only and are far below ``K - 1`` when a few documents hold most of the
chunks. Given the sizes of a pilot or census (``sizes=``), the planner uses the same rule: the
Bell-McCaffrey df of K documents whose sizes are the pilot's size quantiles at ``(i - 1/2)/K``
(:func:`planned_df`). At the pilot's own K these are exactly the pilot's sizes, so the planned df
equal the realised CR2 df of that sample. The approximation still ignores skewness: check the
planned design by simulation (:mod:`perdoc.simulate`). :func:`pilot_inputs` gives the spread, sizes
and rule the report's planning section (and ``perdoc plan --params``) takes from a pilot or census.

Paired difference of two systems A and B scored on the same rows (``perdoc plan --vs``,
:func:`plan_difference`): the same planner on the pilot's difference table (per document
``D_d = s_Ad - s_Bd``, :meth:`PairTable.difference`), so the micro spread is ``sd(u_d) / nbar`` with
``u_d = D_d - Delta n_d`` and the macro spread ``sd(r_Ad - r_Bd)``, by the same rules. Since
``u_d = u_Ad - u_Bd``, ``S_D^2 = S_A^2 + S_B^2 - 2 rho S_A S_B``: the correlation rho of the systems
across documents is what pairing cancels, and independent samples (``var_A + var_B``) would need the
spread ``sqrt(S_A^2 + S_B^2)``.

Stratified designs (strata by document size): the combined ratio estimator has
``V = (1/X^2) sum_h M_h^2 (1 - k_h/M_h) S_uh^2 / k_h`` with ``X`` the census total of n and
``S_uh`` the census SD of ``u_d`` in stratum h; allocations equal, proportional (``k_h ~ M_h``) or
Neyman (``k_h ~ M_h S_uh``, a stratum censused when its share exceeds ``M_h``, at least 2 each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from ..methods._dist import t_ppf
from ..errors import ParameterError
from ..reading.pairs import PairTable
from ..reading.table import DocTable

__all__ = ["half_width", "plan_k", "spread", "spread_problem", "Plan", "plan_strata", "StrataPlan", "curve",
           "planned_df", "planned_sizes", "DF_RULES", "df_rule_key", "pilot_inputs", "SPREAD_RULES",
           "DifferencePlan", "plan_difference", "difference_problem"]

#: The degrees-of-freedom rules of the planner (``Plan.df_rule``).
DF_RULES = {"K-1": "t with K - 1 degrees of freedom",
            "bell-mccaffrey": "t with the Bell-McCaffrey degrees of freedom of K documents sized like the pilot's"}
#: How the spread S is taken from a pilot or census (``pilot_inputs``).
SPREAD_RULES = {"sd_r": "sd(r_d), the sd of the document rates",
                "sd_u": "sd(u_d) / mean(n_d)",
                "cr2": "sqrt(K * V_CR2), the spread whose S / sqrt(K) is the pilot's CR2 standard error"}
#: Above this many documents the planned sizes are not built one by one: the Bell-McCaffrey df grow
#: in proportion to K (the t quantile is then within 1e-4 of the normal one).
DF_EXACT_MAX = 200_000

ZERO_SPREAD = ("a spread of 0 (as from a pilot whose documents all share one rate) would claim that K = 2 documents "
               "reach any half-width: give an assumed spread, e.g. from a similar study")


def planned_sizes(sizes, K: int) -> np.ndarray:
    """K document sizes drawn deterministically from the distribution of ``sizes``: the quantiles
    at ``(i - 1/2)/K``, i = 1..K (inverted CDF, so at ``K = len(sizes)`` they are the sizes)."""
    sizes = np.sort(np.asarray(sizes, dtype=float))
    p = (np.arange(K, dtype=float) + 0.5) / K
    idx = np.minimum(np.ceil(p * sizes.size).astype(np.int64) - 1, sizes.size - 1)
    return sizes[np.maximum(idx, 0)]


def planned_df(K: int, sizes=None) -> float:
    """Degrees of freedom of the planned interval over K documents: ``K - 1`` without ``sizes``;
    with them, the Bell-McCaffrey df of CR2 (as the realised micro interval) for K documents sized
    like ``sizes`` (:func:`planned_sizes`)."""
    if sizes is None:
        return float(K - 1)
    from ..methods.micro import df_bell_mccaffrey
    if K <= DF_EXACT_MAX:
        return float(df_bell_mccaffrey(planned_sizes(sizes, K)))
    return float(df_bell_mccaffrey(planned_sizes(sizes, DF_EXACT_MAX))) * K / DF_EXACT_MAX


def half_width(K: int, sd: float, level: float = 0.95, population_size: int | None = None,
               sizes=None) -> float:
    """``t(1 - alpha/2; df) * sd / sqrt(K) * sqrt(1 - K/M)``, ``df`` from :func:`planned_df`
    (``K - 1`` without ``sizes``)."""
    f = 0.0 if population_size is None else K / population_size
    df = planned_df(K, sizes)
    return t_ppf(1 - (1 - level) / 2, df) * sd / math.sqrt(K) * math.sqrt(max(1.0 - f, 0.0))


@dataclass(frozen=True)
class Plan:
    K: int
    half_width: float
    target: float
    sd: float
    level: float
    population_size: int | None
    estimand: str | None = None
    K_without_fpc: int | None = None
    notes: tuple[str, ...] = ()
    df: float | None = None            # degrees of freedom of the planned interval at K
    df_rule: str = "K-1"               # a key of DF_RULES

    def to_dict(self) -> dict:
        return {"K": self.K, "half_width": self.half_width, "target_half_width": self.target, "sd": self.sd,
                "level": self.level, "population_size": self.population_size, "estimand": self.estimand,
                "K_without_fpc": self.K_without_fpc, "notes": list(self.notes), "df": self.df,
                "df_rule": self.df_rule}


def _validate(sd, target, level, population_size):
    for name, v in (("sd", sd), ("half-width", target)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            why = f": {ZERO_SPREAD}" if name == "sd" and v == 0 and not isinstance(v, bool) else ""
            raise ParameterError(f"{name} must be a positive number (got {v!r}){why}")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ParameterError(f"level must be a number strictly between 0 and 1 (got {level!r})")
    if population_size is not None:
        if isinstance(population_size, bool) or float(population_size) != int(population_size) or population_size < 2:
            raise ParameterError(f"population size must be a whole number of at least 2 (got {population_size!r})")


def _smallest_k(sd, target, level, M, sizes=None) -> int:
    hi = 2
    limit = M if M is not None else 10**12
    while half_width(hi, sd, level, M, sizes) > target:
        if hi >= limit:
            return limit
        hi = min(hi * 2, limit)
    lo = max(2, hi // 2)
    if half_width(lo, sd, level, M, sizes) <= target:
        return lo
    while hi - lo > 1:  # h(lo) > target >= h(hi)
        mid = (lo + hi) // 2
        if half_width(mid, sd, level, M, sizes) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def _check_sizes(sizes):
    if sizes is None:
        return None
    arr = np.asarray(sizes, dtype=float).ravel()
    if arr.size < 2 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ParameterError("sizes must hold at least 2 positive, finite document sizes n_d")
    return arr


def plan_k(sd: float, target: float, *, level: float = 0.95, population_size: int | None = None,
           estimand: str | None = None, sizes=None) -> Plan:
    """The smallest number of documents K whose interval half-width is at most ``target``.

    ``sizes``: the document sizes n_d of the pilot or census; given, the degrees of freedom are the
    Bell-McCaffrey df of the micro mean's CR2 interval (:func:`planned_df`), else ``K - 1``."""
    _validate(sd, target, level, population_size)
    sizes = _check_sizes(sizes)
    M = None if population_size is None else int(population_size)
    K = _smallest_k(sd, target, level, M, sizes)
    notes = []
    if M is not None and K == M:
        notes.append("the target needs the whole population: a census")
    K0 = _smallest_k(sd, target, level, None, sizes) if M is not None else None
    return Plan(K=K, half_width=half_width(K, sd, level, M, sizes), target=target, sd=sd, level=level,
                population_size=M, estimand=estimand, K_without_fpc=K0, notes=tuple(notes),
                df=planned_df(K, sizes), df_rule="K-1" if sizes is None else "bell-mccaffrey")


def df_rule_key(rule: str | None) -> str | None:
    """A degrees-of-freedom rule as typed (``k-1``, ``K-1``, ``bell-mccaffrey``, any case) as its key
    of :data:`DF_RULES`; ``None`` stays ``None`` (the default rule of the estimand)."""
    if rule is None:
        return None
    key = str(rule).strip().lower()
    for k in DF_RULES:
        if key == k.lower():
            return k
    raise ParameterError(f"df rule must be k-1 or bell-mccaffrey (got {rule!r})")


def pilot_inputs(pilot: DocTable, estimand: str, *, own_sample: bool,
                 df_rule: str | None = None) -> tuple[float, np.ndarray | None, str, str]:
    """The spread S, the sizes for :func:`plan_k` and the rule keys ``(df_rule, spread_rule)`` with
    which the report's planning section plans from a pilot or census table.

    Default (``df_rule=None``): the rule of the interval being planned. The micro mean: CR2 with
    Bell-McCaffrey df for K documents sized like ``pilot`` (``sizes = pilot.n``), with the spread
    ``sd(u_d) / mean(n_d)`` of a census or larger pilot, or, when ``own_sample`` (the pilot is the
    study's own sample), its CR2 spread, so that the plan at its own K is its realised CR2 interval.
    The macro mean: t with K - 1 df and ``sd(r_d)``. ``df_rule="K-1"`` plans the micro mean the
    earlier way: t with K - 1 df and ``sd(u_d) / mean(n_d)`` (no sizes)."""
    rule = df_rule_key(df_rule)
    if estimand == "macro":
        if rule == "bell-mccaffrey":
            raise ParameterError("the Bell-McCaffrey df rule plans the micro mean; the macro mean's interval is t "
                                 "with K - 1 df")
        return spread(pilot, "macro"), None, "K-1", "sd_r"
    if estimand != "micro":
        raise ParameterError(f"estimand must be micro or macro (got {estimand!r})")
    if rule == "K-1":
        return spread(pilot, "micro"), None, "K-1", "sd_u"
    variance = "cr2" if own_sample else "cr1"
    return (spread(pilot, "micro", variance=variance), np.asarray(pilot.n, dtype=float), "bell-mccaffrey",
            "cr2" if own_sample else "sd_u")


def _sums(table: DocTable) -> np.ndarray:
    """The true score sums s_d (the loader may store them times a power of two, ``table.scale``)."""
    scale = float(getattr(table, "scale", 1.0))
    return table.s if scale == 1.0 else table.s / scale


def spread(table: DocTable, estimand: str, *, variance: str = "cr1") -> float:
    """The per-document spread S of a pilot or census: sd(r_d) (macro) or sd(u_d)/nbar (micro).

    ``variance="cr2"`` (micro only): ``S = sqrt(K * V_CR2)``, the spread whose ``S / sqrt(K)`` is the
    CR2 standard error of the table itself, so that a plan at the pilot's own K with
    :func:`planned_df` reproduces the pilot's realised CR2 half-width (for a pilot that is the study's
    own sample; a census's spread is the default one)."""
    if variance not in ("cr1", "cr2"):
        raise ParameterError(f"variance must be cr1 or cr2 (got {variance!r})")
    if estimand == "macro":
        return float(np.std(table.rate, ddof=1))
    if estimand == "micro":
        s = _sums(table)
        R = s.sum() / table.N
        u = s - R * table.n
        if variance == "cr2":
            n = np.asarray(table.n, dtype=float)
            N = float(n.sum())
            return float(math.sqrt(table.K * float(np.sum(u * u * (N / (N - n))))) / N)
        return float(np.std(u, ddof=1) / table.n.mean())
    raise ParameterError(f"estimand must be micro or macro (got {estimand!r})")


def spread_problem(table: DocTable, estimand: str, sd: float | None = None, *,
                   source: str = "pilot") -> str | None:
    """Why a pilot (or census) cannot plan a sample: ``None`` when its spread can, else one sentence
    (``source`` names the table in it: "pilot" or "census").

    Every document at the same rate gives a spread of 0 (also for the micro mean: every residual
    ``u_d = n_d (r_d - R)`` is 0), and a plan from it would claim that 2 documents reach any
    half-width. Rates equal up to rounding count as equal.
    """
    K = table.K
    if K < 2:
        return f"No plan from this {source}: it has {K} document(s), and a spread needs at least 2."
    sd = spread(table, estimand) if sd is None else sd
    rate = np.asarray(table.rate, dtype=float)
    flat = _flat(rate)
    if not (flat or not math.isfinite(sd) or sd <= 0):
        return None
    hint = (" (for rates between 0 and 1 the sd of the document rates is at most about 0.5, the most "
            "cautious choice)" if estimand == "macro" else "")
    if flat:
        why = (f"every one of its {K:,} documents has the same rate ({float(rate[0]):.4g}), so the spread S is 0 "
               f"and a plan from it would claim that K = 2 documents reach any half-width. A {source} this uniform "
               "says nothing about how much documents differ")
    else:
        why = f"its spread S = {sd!r} is not a positive number"
    return (f"No plan from this {source}: {why}. Give an assumed spread S instead, from a similar study{hint}: "
            f"perdoc plan --estimand {estimand} --sd S --half-width H.")


def _flat(rate: np.ndarray) -> bool:
    """Whether every document rate is the same, up to rounding."""
    return float(np.ptp(rate)) <= 1e-12 * max(1.0, float(np.max(np.abs(rate))))


# ---------------------------------------------------------------------------------- paired difference
@dataclass(frozen=True)
class DifferencePlan(Plan):
    """A :class:`Plan` for the paired difference A - B (``sd`` is the pilot's paired spread), with
    what pairing buys: each system's own spread, their correlation across documents, and the number
    of documents per system that two independent samples (variance ``var_A + var_B``) would need."""

    a: str = "a"
    b: str = "b"
    spread_rule: str = "sd_u"          # a key of SPREAD_RULES, as pilot_inputs took it
    sd_a: float | None = None
    sd_b: float | None = None
    correlation: float | None = None   # None when a system's spread is 0
    unpaired_sd: float | None = None
    unpaired_k: int | None = None

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["comparison"] = {"a": self.a, "b": self.b, "paired_sd": self.sd, "correlation": self.correlation,
                             "unpaired_k": self.unpaired_k, "unpaired_sd": self.unpaired_sd,
                             "sd_a": self.sd_a, "sd_b": self.sd_b}
        return out


def _difference_table(pairs: PairTable) -> DocTable:
    """The per-document differences of paired systems (refused for anything else)."""
    if not isinstance(pairs, PairTable):
        raise ParameterError("pairs must be a perdoc PairTable (use perdoc.load_pairs)")
    if not pairs.paired:
        raise ParameterError("a plan for the difference of two systems needs both scores on every row (paired); "
                             "these pairs are unpaired")
    return pairs.difference()


def difference_problem(pairs: PairTable, estimand: str, sd: float | None = None, *,
                       source: str = "pilot") -> str | None:
    """Why a paired pilot (or census) cannot plan the difference A - B: ``None`` when it can, else
    one sentence. As :func:`spread_problem` on the differences: when every document's difference
    has the same rate (the systems agree everywhere, or B is A shifted by one constant), the paired
    spread is 0 and would claim that 2 documents reach any half-width."""
    diff = _difference_table(pairs)
    if spread_problem(diff, estimand, sd, source=source) is None:
        return None
    a, b = pairs.names
    rate = np.asarray(diff.rate, dtype=float)
    if diff.K >= 2 and _flat(rate):
        why = (f"the paired spread is 0, because every one of its {diff.K:,} documents has the same difference rate "
               f"({float(rate[0]):.4g}): the two systems agree on every document or differ by one constant, so "
               "the pilot shows nothing of how the difference varies across documents, and a plan from it would "
               "claim that K = 2 documents reach any half-width")
    else:
        why = f"its paired spread is not a positive number ({sd!r})"
    return (f"No plan for the difference {a} - {b} can be made from this {source}: {why}. Plan from a pilot on "
            f"which the systems differ unevenly, or give an assumed spread of the difference: "
            f"perdoc plan --estimand {estimand} --sd S --half-width H.")


def _implied_correlation(sd_a: float, sd_b: float, sd_d: float) -> float | None:
    """The rho with ``sd_d^2 = sd_a^2 + sd_b^2 - 2 rho sd_a sd_b`` (None when a system does not vary)."""
    if not sd_a > 0 or not sd_b > 0:
        return None
    return float(min(1.0, max(-1.0, (sd_a * sd_a + sd_b * sd_b - sd_d * sd_d) / (2.0 * sd_a * sd_b))))


def plan_difference(pairs: PairTable, target: float, *, estimand: str = "micro", level: float = 0.95,
                    population_size: int | None = None, own_sample: bool = False,
                    df_rule: str | None = None) -> DifferencePlan:
    """The smallest number of documents K whose interval of the paired difference A - B has a
    half-width of at most ``target``, planned from a pilot (or census) whose rows carry both scores.

    The spread and degrees of freedom are those a single system's plan takes from a pilot
    (:func:`pilot_inputs`, with ``own_sample`` and ``df_rule`` as there), taken on the table of
    per-document differences ``D_d = s_Ad - s_Bd``; the plan is :func:`plan_k`'s. For contrast, the
    same rules on each system alone give ``S_A`` and ``S_B``, their correlation across documents
    (``S_D^2 = S_A^2 + S_B^2 - 2 rho S_A S_B``), and the K per system that two independent samples
    would need (spread ``sqrt(S_A^2 + S_B^2)``, the same degrees-of-freedom rule)."""
    diff = _difference_table(pairs)
    sd, sizes, rule, spread_rule = pilot_inputs(diff, estimand, own_sample=own_sample, df_rule=df_rule)
    problem = difference_problem(pairs, estimand, sd)
    if problem:
        raise ParameterError(problem)
    plan = plan_k(sd, target, level=level, population_size=population_size, estimand=estimand, sizes=sizes)
    sd_a, sd_b = (pilot_inputs(pairs.system(x), estimand, own_sample=own_sample, df_rule=rule)[0] for x in "ab")
    unpaired_sd = math.hypot(sd_a, sd_b)
    unpaired = plan_k(unpaired_sd, target, level=level, population_size=population_size, sizes=sizes)
    a, b = pairs.names
    return DifferencePlan(**{f.name: getattr(plan, f.name) for f in fields(Plan)}, a=a, b=b,
                          spread_rule=spread_rule, sd_a=sd_a, sd_b=sd_b,
                          correlation=_implied_correlation(sd_a, sd_b, sd), unpaired_sd=unpaired_sd,
                          unpaired_k=unpaired.K)


def curve(sd: float, *, level: float = 0.95, population_size: int | None = None, k_max: int | None = None,
          k_min: int = 5, points: int = 60, sizes=None) -> list[tuple[int, float]]:
    """``(K, half-width)`` pairs on a log-spaced grid of K from ``k_min``, for the planning chart
    (``sizes``: as in :func:`plan_k`)."""
    sizes = _check_sizes(sizes)
    top = k_max or (population_size if population_size else 1000)
    ks = np.unique(np.round(np.geomspace(max(2, k_min), max(k_min + 1, top), points)).astype(int))
    return [(int(k), half_width(int(k), sd, level, population_size, sizes)) for k in ks]


# ---------------------------------------------------------------------------------- strata
@dataclass(frozen=True)
class StrataPlan:
    threshold: float
    allocation: str
    strata: dict          # name -> {M_h, k_h, S_uh, n_total}
    k: int
    sd: float             # expected SD of the combined ratio estimator
    sd_srs: float         # expected SD of the ratio under SRS of the same k (linearised, with FPC)
    level: float
    searched: list = field(default_factory=list)  # (threshold, sd) pairs when the threshold was searched

    def to_dict(self) -> dict:
        return {"threshold": self.threshold, "allocation": self.allocation, "k": self.k,
                "strata": self.strata, "sd": self.sd, "sd_srs": self.sd_srs, "level": self.level,
                "searched": [{"threshold": t, "sd": s} for t, s in self.searched]}

    def labels(self, table: DocTable) -> np.ndarray:
        """The stratum of each document of ``table`` under this plan's threshold."""
        return np.where(table.n > self.threshold, "large", "small")


def _allocate(M: dict, S: dict, k: int, allocation: str) -> dict:
    """Integer allocation of k documents to strata: at least 2 and at most M_h in each, summing to k.

    Shares: equal, proportional to M_h, or Neyman (M_h S_h). Units are handed out one at a time to
    the stratum furthest below its share of what the strata not yet censused should hold, so a
    stratum whose share exceeds its size is censused and the rest is reallocated among the others.
    """
    names = sorted(M)
    if allocation == "equal":
        share = {h: 1.0 for h in names}
    elif allocation == "proportional":
        share = {h: float(M[h]) for h in names}
    elif allocation == "neyman":
        share = {h: float(M[h]) * max(S[h], 1e-300) for h in names}
    else:
        raise ParameterError(f"allocation must be equal, proportional or neyman (got {allocation!r})")
    small = [h for h in names if M[h] < 2]
    if small:
        raise ParameterError(f"stratum {small[0]!r} has {M[small[0]]} document(s); every stratum needs at least 2")
    if k < 2 * len(names):
        raise ParameterError(f"k = {k} is too small: every stratum needs at least 2 documents")
    if k > sum(M.values()):
        raise ParameterError(f"k = {k} exceeds the {sum(M.values())} documents of the population")
    alloc = {h: 2 for h in names}
    while sum(alloc.values()) < k:
        free = [h for h in names if alloc[h] < M[h]]
        held = k - sum(alloc[h] for h in names if h not in free)
        total = sum(share[h] for h in free)
        gap = {h: held * share[h] / total - alloc[h] for h in free}
        best = max(free, key=lambda h: (gap[h], h))
        alloc[best] += 1
    return alloc


def _strata_sd(census: DocTable, large: np.ndarray, k_h: dict) -> tuple[float, dict]:
    n, s = census.n, _sums(census)
    R = s.sum() / n.sum()
    u = s - R * n
    X = n.sum()
    v = 0.0
    info = {}
    for name, mask in (("large", large), ("small", ~large)):
        M_h, k = int(mask.sum()), k_h[name]
        S2 = float(np.var(u[mask], ddof=1)) if M_h > 1 else 0.0
        v += M_h**2 * (1 - k / M_h) * S2 / k
        info[name] = {"M_h": M_h, "k_h": k, "S_uh": math.sqrt(S2), "n_total": float(n[mask].sum())}
    return math.sqrt(v) / X, info


def plan_strata(census: DocTable, *, k: int = 20, threshold: float | None = None,
                allocation: str = "equal", level: float = 0.95) -> StrataPlan:
    """Two strata by document size (``n_d > threshold`` is "large") for the micro mean.

    With ``threshold=None`` the threshold is searched over the census's distinct sizes (each stratum
    keeping at least 2 documents) for the smallest expected SD under the chosen allocation.
    """
    n = census.n
    sizes = np.unique(n)
    if threshold is None:
        candidates = sizes[:-1]
        if candidates.size > 200:
            candidates = np.unique(np.quantile(n, np.linspace(0.5, 0.995, 200), method="lower"))
        searched = []
        for t in candidates:
            large = n > t
            if large.sum() < 2 or (~large).sum() < 2:
                continue
            try:
                M = {"large": int(large.sum()), "small": int((~large).sum())}
                S = _stratum_spreads(census, large)
                alloc = _allocate(M, S, k, allocation)
                sd, _ = _strata_sd(census, large, alloc)
            except ParameterError:
                continue
            searched.append((float(t), sd))
        if not searched:
            raise ParameterError("no size threshold leaves at least 2 documents in each stratum")
        threshold = min(searched, key=lambda p: (p[1], p[0]))[0]
    else:
        searched = []
    large = n > threshold
    if large.sum() < 2 or (~large).sum() < 2:
        raise ParameterError(f"threshold {threshold:g} leaves fewer than 2 documents in a stratum")
    M = {"large": int(large.sum()), "small": int((~large).sum())}
    alloc = _allocate(M, _stratum_spreads(census, large), k, allocation)
    sd, info = _strata_sd(census, large, alloc)
    R = _sums(census).sum() / census.N
    u = _sums(census) - R * census.n
    Mtot = census.K
    sd_srs = float(np.std(u, ddof=1) / census.n.mean() / math.sqrt(k) * math.sqrt(1 - k / Mtot))
    return StrataPlan(threshold=float(threshold), allocation=allocation, strata=info, k=k, sd=sd,
                      sd_srs=sd_srs, level=level, searched=searched)


def _stratum_spreads(census: DocTable, large: np.ndarray) -> dict:
    R = _sums(census).sum() / census.N
    u = _sums(census) - R * census.n
    return {name: float(np.std(u[m], ddof=1)) if m.sum() > 1 else 0.0
            for name, m in (("large", large), ("small", ~large))}
