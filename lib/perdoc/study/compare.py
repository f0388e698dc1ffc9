"""Comparing two systems scored on the same documents.

Paired (both systems scored on the same chunks): per document, ``D_d = s_Ad - s_Bd`` becomes the new
score sum, and every single-system method applies to it unchanged (methods.md, "Paired comparison"):
the micro difference ``Delta = sum D_d / N`` with CR1/CR2/CR3/bootstrap intervals (the CR2 degrees
of freedom depend on the sizes only, so they are those of either system), and the macro difference
``mean(r_Ad - r_Bd)`` with the t interval. Pairing removes the variation the systems share,
``Var(A - B) = Var(A) + Var(B) - 2 Cov(A, B)``; it does not change the sampling unit.

The document-level sign-flip randomization test (Fisher) asks whether the labels A and B are
exchangeable within documents: ``T(eps) = sum eps_d D_d / N`` over sign vectors eps. It is exact
(all ``2^K`` patterns, counted by meet-in-the-middle) for ``K <= 20`` and Monte Carlo beyond.

Unpaired (rows scored by only one system): the delta method, ``u^D_d = u_Ad / N_A - u_Bd / N_B``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from ..methods._dist import beta_ppf, norm_ppf, t_ppf

from ..errors import ParameterError
from ..messages import Message
from ..methods import micro as _micro
from .estimate import DEFAULT_REPLICATES, DEFAULT_SEED, _estimate, _validate, estimate
from ..reading.pairs import PairTable
from ..methods.results import ConfidenceInterval, Estimates, Interval, _num

__all__ = ["PairTable", "Comparison", "compare", "sign_flip_test", "EXACT_MAX_K", "verdict"]

EXACT_MAX_K = 20  # 2^20 sign patterns


@dataclass(frozen=True)
class Comparison:
    names: tuple[str, str]
    paired: bool
    level: float
    population_size: int | None
    difference: Estimates | None          # paired: every single-system method on the differences
    unpaired: tuple[Interval, ...]        # unpaired: delta-method intervals
    systems: tuple[Estimates, Estimates]
    correlation: dict
    covariance: dict
    ties_fraction: float
    randomization: dict
    K: int
    N: float
    notes: tuple[str, ...] = ()

    @property
    def micro_difference(self) -> float:
        return self.systems[0].micro_estimate - self.systems[1].micro_estimate if self.difference is None \
            else self.difference.micro_estimate

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``perdoc compare --json``."""
        if self.difference is not None:
            d = self.difference.to_dict()
            diff = {"micro": d["micro"], "macro": d["macro"], "diagnostics": d["diagnostics"],
                    "metric_range": d["metric_range"]}
        else:
            bounded = all(s.metric_range == (0.0, 1.0) for s in self.systems)
            diff = {"micro": {"estimate": _num(self.micro_difference)},
                    "macro": {"estimate": None}, "metric_range": [-1.0, 1.0] if bounded else None}
            for iv in self.unpaired:
                diff[iv.estimand][iv.method] = iv.to_dict()
                if iv.method == "t" or iv.estimand == "macro":
                    diff["macro"]["estimate"] = _num(iv.estimate)
        sys_a, sys_b = (s.to_dict() for s in self.systems)
        return {
            "K": self.K, "N": int(self.N) if float(self.N).is_integer() else self.N,
            "level": self.level, "population_size": self.population_size,
            "paired": self.paired,
            "systems": {"a": {"name": self.names[0], **sys_a}, "b": {"name": self.names[1], **sys_b}},
            "difference": {"label": f"{self.names[0]} - {self.names[1]}", **diff},
            "correlation": {k: _num(v) for k, v in self.correlation.items()},
            "covariance": {k: {kk: _num(vv) for kk, vv in v.items()} for k, v in self.covariance.items()},
            "ties_fraction": _num(self.ties_fraction),
            "randomization": self.randomization,
            "notes": list(self.notes),
        }

    @property
    def label(self) -> str:
        """``"A - B"``: which difference this is."""
        return f"{self.names[0]} - {self.names[1]}"

    def tidy(self):
        """One row per (estimand, method) of the difference A - B (a DataFrame): the columns of
        :meth:`Estimates.tidy` after a ``comparison`` column holding ``"A - B"``. Paired, every
        single-system method on the differences; unpaired, the delta-method intervals."""
        if self.difference is not None:
            frame = self.difference.tidy()
        else:  # the unpaired intervals, in the same columns
            frame = replace(self.systems[0], intervals=self.unpaired).tidy()
        frame.insert(0, "comparison", self.label)
        return frame


def compare(pairs: PairTable, *, level: float = 0.95, population_size: int | None = None,
            replicates: int = DEFAULT_REPLICATES, seed: int | None = DEFAULT_SEED) -> Comparison:
    """Compare system A with system B (A - B) on the same sample of documents."""
    if not isinstance(pairs, PairTable):
        raise ParameterError("pairs must be a perdoc PairTable (use perdoc.load_pairs)")
    ta, tb = pairs.system("a"), pairs.system("b")
    if population_size is not None and not isinstance(population_size, bool) and \
            isinstance(population_size, (int, float)) and population_size < pairs.K:
        raise ParameterError(f"population size M = {population_size:g} is below the number of sampled "
                             f"documents K = {pairs.K}; M must be at least K")
    level, population_size, replicates, seed = _validate(ta, level, population_size, replicates, seed)
    fpc = 1.0 if population_size is None else 1.0 - pairs.K / population_size
    kw = dict(level=level, population_size=population_size, replicates=replicates, seed=seed)
    sys_a, sys_b = estimate(ta, **kw), estimate(tb, **kw)
    # a difference of two bounded metrics lies in [-1, 1]
    bounds = (-1.0, 1.0) if sys_a.metric_range == (0.0, 1.0) and sys_b.metric_range == (0.0, 1.0) else None
    # the comparison's own sums, on one working scale for both systems (perdoc.micro.working_exponents)
    k, (s_a, s_b, q_a, q_b) = _working_pairs(pairs)
    Ra, Rb = _micro.ldexp(sys_a.micro_estimate, k), _micro.ldexp(sys_b.micro_estimate, k)
    notes = []
    if pairs.paired:
        n = pairs.n_a
        N = float(n.sum())
        diff = _estimate(pairs.difference(), bounds=bounds, difference=True, **kw)
        unpaired = ()
        D = s_a - s_b
        ties = float(np.mean(D == 0))
        randomization = sign_flip_test(D, replicates=max(replicates, 9999), seed=seed)
        u_a = s_a - Ra * n
        u_b = s_b - Rb * n
        r_a, r_b = s_a / n, s_b / n
        c1 = pairs.K / (pairs.K - 1)
        cov_micro = {"var_a": fpc * c1 * np.sum(u_a * u_a) / N**2, "var_b": fpc * c1 * np.sum(u_b * u_b) / N**2,
                     "cov": fpc * c1 * np.sum(u_a * u_b) / N**2}
        K = pairs.K
        cm = np.cov(r_a, r_b, ddof=1)
        cov_macro = {"var_a": fpc * cm[0, 0] / K, "var_b": fpc * cm[1, 1] / K, "cov": fpc * cm[0, 1] / K}
        correlation = {"micro": _corr(cov_micro), "macro": _corr(cov_macro)}
    else:
        N = float(max(pairs.n_a.sum(), pairs.n_b.sum()))
        diff = None
        unpaired, cov_micro, cov_macro, correlation = _delta_method(pairs, s_a, s_b, Ra, Rb, level, fpc)
        unpaired = tuple(replace(iv.rescaled(k), metric_range=bounds) for iv in unpaired)
        both = (pairs.n_a > 0) & (pairs.n_b > 0)
        ties = float(np.mean(s_a[both] / pairs.n_a[both] == s_b[both] / pairs.n_b[both]))
        randomization = {"p_value": None, "exact": None, "patterns": None,
                         "reason": "the sign-flip test needs paired rows"}
        notes.append(Message("note.unpaired", "unpaired comparison (delta method): the systems were not scored on "
                             "the same rows"))
    if k:  # covariances back to the true scale (squared units)
        cov_micro = {key: _micro.ldexp(float(v), -2 * k) for key, v in cov_micro.items()}
        cov_macro = {key: _micro.ldexp(float(v), -2 * k) for key, v in cov_macro.items()}
    return Comparison(names=pairs.names, paired=pairs.paired, level=level, population_size=population_size,
                      difference=diff, unpaired=unpaired, systems=(sys_a, sys_b), correlation=correlation,
                      covariance={"micro": cov_micro, "macro": cov_macro}, ties_fraction=ties,
                      randomization=randomization, K=pairs.K, N=N, notes=tuple(notes))


def _working_pairs(pairs: PairTable) -> tuple[int, tuple[np.ndarray, ...]]:
    """``(k, (s_a, s_b, q_a, q_b))``: both systems' sums on one working scale, ``2^k`` times the true
    ones (the stored arrays themselves when no rescaling is needed)."""
    n = np.concatenate([pairs.n_a, pairs.n_b])
    s = np.concatenate([pairs.s_a, pairs.s_b])
    ok = n > 0
    j, k = _micro.working_exponents(n[ok], s[ok], pairs.scale)
    if j == 0:
        return k, (pairs.s_a, pairs.s_b, pairs.q_a, pairs.q_b)
    return k, (np.ldexp(pairs.s_a, j), np.ldexp(pairs.s_b, j), np.ldexp(pairs.q_a, 2 * j),
               np.ldexp(pairs.q_b, 2 * j))


def _corr(c: dict) -> float:
    den = math.sqrt(c["var_a"] * c["var_b"])
    return c["cov"] / den if den > 0 else float("nan")


def _delta_method(pairs: PairTable, s_a, s_b, R_a: float, R_b: float, level: float, fpc: float):
    """Unpaired micro difference by the delta method; macro on documents scored by both. Works on
    the sums given (``s_a``, ``s_b``, with their micro means ``R_a``, ``R_b`` on the same scale)."""
    K = pairs.K
    NA, NB = pairs.n_a.sum(), pairs.n_b.sum()
    u_a = s_a - R_a * pairs.n_a
    u_b = s_b - R_b * pairs.n_b
    z = u_a / NA - u_b / NB
    c1 = K / (K - 1)
    var = fpc * c1 * float(np.sum(z * z))
    est = R_a - R_b
    alpha = 1 - level
    out = []
    se = math.sqrt(var)
    if se > 0:
        half = t_ppf(1 - alpha / 2, K - 1) * se
        out.append(Interval("micro", "cr1", "delta method, CR1, t with K-1 df", est, level, se=se, df=K - 1.0,
                            ci=ConfidenceInterval(est - half, est + half), role="primary"))
    else:
        out.append(Interval("micro", "cr1", "delta method, CR1, t with K-1 df", est, level, se=se, df=K - 1.0,
                            reason=Message("reason.zero_linearised_variance", "zero variance of the linearised "
                                           "difference"), role="primary"))
    both = (pairs.n_a > 0) & (pairs.n_b > 0)
    d = s_a[both] / pairs.n_a[both] - s_b[both] / pairs.n_b[both]
    kb = int(both.sum())
    mest = float(d.mean()) if kb else float("nan")
    if kb >= 2 and np.var(d, ddof=1) > 0:
        mse = math.sqrt(fpc * np.var(d, ddof=1) / kb)
        half = t_ppf(1 - alpha / 2, kb - 1) * mse
        out.append(Interval("macro", "t", "t on per-document differences (documents scored by both)", mest, level,
                            se=mse, df=kb - 1.0, ci=ConfidenceInterval(mest - half, mest + half), role="primary"))
    else:
        out.append(Interval("macro", "t", "t on per-document differences (documents scored by both)", mest, level,
                            reason=Message("reason.too_few_common_documents", "fewer than 2 documents scored by "
                                           "both systems, or zero variance"),
                            role="primary"))
    cov_micro = {"var_a": fpc * c1 * np.sum(u_a**2) / NA**2, "var_b": fpc * c1 * np.sum(u_b**2) / NB**2,
                 "cov": fpc * c1 * np.sum(u_a * u_b) / (NA * NB)}
    ra, rb = s_a[both] / pairs.n_a[both], s_b[both] / pairs.n_b[both]
    if kb >= 2:
        cm = np.cov(ra, rb, ddof=1)
        cov_macro = {"var_a": fpc * cm[0, 0] / kb, "var_b": fpc * cm[1, 1] / kb, "cov": fpc * cm[0, 1] / kb}
    else:
        cov_macro = {"var_a": float("nan"), "var_b": float("nan"), "cov": float("nan")}
    return tuple(out), cov_micro, cov_macro, {"micro": _corr(cov_micro), "macro": _corr(cov_macro)}


def sign_flip_test(D: np.ndarray, *, replicates: int = 9999, seed: int | None = 1,
                   exact_max_k: int = EXACT_MAX_K) -> dict:
    """Two-sided document-level sign-flip randomization test of ``sum D_d = 0``.

    ``p = share of sign vectors eps with |sum eps_d D_d| >= |sum D_d|`` (ties within a relative
    1e-12 of ``sum |D_d|`` count as reaching it). Exact over all ``2^K`` vectors when
    ``K <= exact_max_k`` (the smallest possible p is ``2 / 2^K``), else Monte Carlo with
    ``(1 + hits) / (1 + replicates)``. The common ``1/N`` cancels.
    """
    D = np.asarray(D, dtype=float)
    K = D.size
    # the p-value is scale-free: far from unit size, compute on D times a power of two (exact)
    j = _micro.working_exponents(np.ones(K), D)[0]
    if j:
        D = _micro.ldexp(D, j)
    t_obs = abs(float(D.sum()))
    tol = 1e-12 * float(np.sum(np.abs(D)))
    if K <= exact_max_k:
        half = K // 2
        lo = _all_signed_sums(D[:half])
        hi = np.sort(_all_signed_sums(D[half:]))
        # |x + y| >= c  <=>  y >= c - x  or  y <= -c - x
        c = t_obs - tol
        ge = hi.size - np.searchsorted(hi, c - lo, side="left")
        le = np.searchsorted(hi, -c - lo, side="right")
        if c <= 0:
            count = lo.size * hi.size
        else:
            count = int(np.sum(ge + le))
        total = 2**K
        return {"p_value": count / total, "exact": True, "patterns": total, "replicates": None}
    rng = np.random.default_rng(seed)
    hits = 0
    rows = max(1, (1 << 21) // K)
    for start in range(0, replicates, rows):
        b = min(rows, replicates - start)
        eps = rng.integers(0, 2, size=(b, K)) * 2 - 1
        hits += int(np.sum(np.abs(eps @ D) >= t_obs - tol))
    return {"p_value": (1 + hits) / (1 + replicates), "exact": False, "patterns": None, "replicates": replicates}


def _all_signed_sums(x: np.ndarray) -> np.ndarray:
    """All ``2^len(x)`` sums ``sum eps_i x_i``, built by doubling."""
    sums = np.zeros(1)
    for v in x:
        sums = np.concatenate((sums + v, sums - v))
    return sums


def verdict(iv) -> str:
    """What an interval of a difference A - B says: ``a_higher`` (it lies above 0), ``b_higher`` (below
    0), ``includes_zero``, or ``no_interval`` (None, or an interval without bounds)."""
    if iv is None or iv.ci is None:
        return "no_interval"
    if iv.ci.low > 0:
        return "a_higher"
    if iv.ci.high < 0:
        return "b_higher"
    return "includes_zero"
