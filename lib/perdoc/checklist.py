"""The reporting checklist: what a per-document uncertainty report must state, filled from the data.

:func:`checklist` returns one :class:`Item` per point to report. Values are short plain-text strings
built from the table, the estimates and the parameters the analyst gives (population, design,
estimand and why, what is out of scope). An item whose required text was not given has status
``"missing"``, so a report can show the gap instead of hiding it; an item that does not apply (no
bootstrap was run) has status ``"not applicable"``; an item the data cannot give (no interval because
every document has the same rate, an ICC of 0/0 because every score is the same) has status
``"unavailable"`` and says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from .errors import ParameterError
from .results import Estimates
from .table import DocTable, Exclusion

__all__ = ["Item", "checklist", "checklist_frame", "STATUSES", "DEFAULT_OUT_OF_SCOPE", "every_score_same"]

STATUSES = ("given", "missing", "not applicable", "unavailable", "approximate")

DEFAULT_OUT_OF_SCOPE = (
    "the index, held fixed (one chunking and one embedding of the corpus)",
    "the retriever configuration, held fixed (model, parameters, k)",
    "the population of questions: uncertainty from which questions were asked is not included",
)

DESIGN_KEYS = {"population", "sampling", "population_size"}
ESTIMAND_KEYS = {"name", "why", "method"}

_ESTIMAND_TEXT = {
    "micro": "micro mean R = sum s_d / sum n_d, the rate of a measurement drawn at random "
             "(large documents weigh more)",
    "macro": "macro mean r\u0304 = mean of the document rates s_d / n_d, the rate of a typical "
             "document (each document counts once)",
}
_PRIMARY = {"micro": "cr2", "macro": "t"}

FRAGILE_N_EFF = ("diagnostics only, not a substitute for the document-level variance: treating N/DEFF "
                 "as that many independent cases is itself a fragile approximation (in the reference "
                 "study a Wald interval on the effective n covered about 89% with 20 documents and "
                 "74% with 5, against 95% nominal)")


@dataclass(frozen=True)
class Item:
    """One checklist entry: ``key`` (stable id), ``item`` (what to report), ``value`` (plain text
    filled from the data and parameters) and ``status`` (given, missing, not applicable or
    unavailable: the data cannot give it, and the value says why)."""

    key: str
    item: str
    value: str
    status: str

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES} (got {self.status!r})")


# ---------------------------------------------------------------------------------- helpers
def _text(x) -> str | None:
    """A parameter text, whitespace-normalised; None when absent or blank."""
    if x is None:
        return None
    t = " ".join(str(x).split())
    return t or None


def _num(x, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    x = float(x)
    if not math.isfinite(x):
        return "n/a"
    if x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:.{digits}f}"


def _quantiles(q: dict, digits: int) -> str:
    return ", ".join(f"{k} {_num(v, digits)}" for k, v in q.items())


def _check_keys(d: dict, allowed: set, name: str) -> dict:
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise ParameterError(f"{name} must be a dict (keys: {', '.join(sorted(allowed))})")
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise ParameterError(f"{name}: unknown key(s) {', '.join(map(repr, unknown))}; "
                             f"allowed: {', '.join(sorted(allowed))}")
    return d


def _join_sentences(texts) -> str:
    """Join items with '; ', or with a space when an item already ends a sentence."""
    out = ""
    for text in texts:
        text = text.strip()
        if out:
            out += " " if out.endswith((".", "!", "?")) else "; "
        out += text
    return out


def _missing(parts: list[str]) -> str:
    return "not given: " + ", ".join(parts)


# ---------------------------------------------------------------------------------- checklist
def checklist(table: DocTable, estimates: Estimates, *, design: dict, estimand: dict,
              out_of_scope: list[str] | None = None,
              exclusions: Iterable[Exclusion] | None = None,
              out_of_scope_sources: list[str] | None = None,
              evidence: dict | None = None) -> list[Item]:
    """The reporting checklist of one analysis.

    Parameters
    ----------
    table, estimates
        The per-document table and ``perdoc.estimate(table, ...)``.
    design : dict
        ``population`` (which documents, text), ``sampling`` (how the K documents were drawn,
        text) and optionally ``population_size`` (M; defaults to ``estimates.population_size``).
    estimand : dict
        ``name`` ("micro" or "macro"), ``why`` (why it answers the question, text) and optionally
        ``method`` (the interval method reported; default: the primary one, CR2 or t).
    out_of_scope : list of str, optional
        What the uncertainty does not cover. ``None`` gives the defaults (fixed index, fixed
        retriever configuration, population of questions); an empty list is "missing".
    exclusions : iterable of Exclusion, optional
        Rows left out and why; ``None`` takes ``table.exclusions``.
    out_of_scope_sources : list of str, optional
        Where each entry of ``out_of_scope`` comes from (same length), e.g. "default" or "from the
        params file"; each entry is then shown after its source in brackets.
    evidence : dict, optional
        What checked the reported method (``perdoc.report.Headline.to_dict()``): ``basis`` (census,
        pseudo-population or none), ``verified``, ``approximate``, ``coverage``, ``mc_se``, ``reps``, ``k``.
        An approximate headline gives the method item the status ``"approximate"``.
    """
    design = _check_keys(design, DESIGN_KEYS, "design")
    estimand = _check_keys(estimand, ESTIMAND_KEYS, "estimand")
    K, N = table.K, table.N
    diag = estimates.diagnostics
    items: list[Item] = []

    # 1. population and design -----------------------------------------------------------
    population = _text(design.get("population"))
    sampling = _text(design.get("sampling"))
    M = design.get("population_size", None)
    if M is None:
        M = estimates.population_size
    elif estimates.population_size is not None and int(M) != estimates.population_size:
        raise ParameterError(f"design population_size M = {M} differs from the M = "
                             f"{estimates.population_size} the estimates were computed with")
    if M is not None:
        if isinstance(M, bool) or not float(M).is_integer() or int(M) < K:
            raise ParameterError(f"design population_size must be a whole number >= K = {K} (got {M!r})")
        M = int(M)
        size = f"M = {M:,} documents, K = {K:,} drawn, sampling fraction K/M = {K / M:.3g}"
        if estimates.population_size is None:
            size += " (no finite population correction applied)"
    else:
        size = f"M not given: sampling fraction unknown, K = {K:,} drawn, no finite population correction"
    gaps = [name for name, v in (("population", population), ("sampling", sampling)) if v is None]
    value = "; ".join([f"population: {population or 'NOT GIVEN'}",
                       f"sampling: {sampling or 'NOT GIVEN'}", size])
    items.append(Item("population_design", "Population and sampling design", value,
                      "missing" if gaps else "given"))

    # 2. estimand -------------------------------------------------------------------------
    name = _text(estimand.get("name"))
    why = _text(estimand.get("why"))
    if name is not None:
        name = name.lower()
        if name not in _ESTIMAND_TEXT:
            raise ParameterError(f"estimand name must be 'micro' or 'macro' (got {estimand.get('name')!r})")
    if name is None:
        value = (f"{_missing(['estimand'] + ([] if why else ['why']))}; both computed: "
                 f"micro R = {estimates.micro_estimate:.4f}, macro r\u0304 = {estimates.macro_estimate:.4f}")
    else:
        est = estimates.micro_estimate if name == "micro" else estimates.macro_estimate
        value = f"{_ESTIMAND_TEXT[name]} = {est:.4f}; why: {why or 'NOT GIVEN'}"
    items.append(Item("estimand", "Estimand (micro or macro) and why it answers the question", value,
                      "given" if name and why else "missing"))

    # 3. sample size ----------------------------------------------------------------------
    value = (f"K = {K:,} documents, N = {_num(N)} measurements; n_d quantiles: "
             f"{_quantiles(diag.n_quantiles, 1)}; the largest document holds {diag.max_share:.1%} of N")
    items.append(Item("sample_size", "K, N and the distribution of n_d", value, "given"))

    # 4. interval method, resampling unit, effective df -----------------------------------
    items.append(_method_item(estimates, name, _text(estimand.get("method")), evidence))

    # 5. ICC and design effect ------------------------------------------------------------
    same = every_score_same(table)
    if same is not None:
        value = (f"not available: every measurement has the same score ({same:.4g}), so the ICC is 0/0 and "
                 "the design effect and the effective n are undefined (shown as ICC 0 and DEFF 1 only by "
                 "convention)")
        status = "unavailable"
    elif math.isfinite(diag.icc) and math.isfinite(diag.deff):
        n_eff = (f"effective n = N/DEFF = {_num(diag.n_eff, 1)} of N = {_num(N)}" if diag.deff > 0 else
                 f"the design effect is not positive, so there is no effective n; N = {_num(N)}")
        value = (f"ICC = {diag.icc:.3f}, design effect DEFF = {diag.deff:.2f} "
                 f"({n_eff}), realised "
                 f"DEFF (CR1 variance / iid variance) = {_num(diag.deff_realised, 2)}; {FRAGILE_N_EFF}")
        status = "given"
    else:
        why_na = "; ".join(diag.notes) or "not computable from these data"
        value = f"not available: {why_na}"
        status = "missing"
    items.append(Item("icc_deff", "Intraclass correlation and design effect (diagnostics)", value, status))

    # 6. rates at 0 and 1 -----------------------------------------------------------------
    value = (f"{diag.frac_rate_0:.1%} of documents at rate 0, {diag.frac_rate_1:.1%} at rate 1; "
             f"rate quantiles: {_quantiles(diag.rate_quantiles, 3)}")
    items.append(Item("rates", "Documents at rate 0 and 1; distribution of document rates", value, "given"))

    # 7. out of scope ---------------------------------------------------------------------
    if out_of_scope is None:
        value = _join_sentences(DEFAULT_OUT_OF_SCOPE) + " (defaults)"
        status = "given"
    else:
        if isinstance(out_of_scope, str):
            out_of_scope = [out_of_scope]
        out_of_scope = list(out_of_scope)
        if out_of_scope_sources is not None:
            sources = list(out_of_scope_sources)
            if len(sources) != len(out_of_scope):
                raise ParameterError(f"out_of_scope_sources has {len(sources)} entries for "
                                     f"{len(out_of_scope)} out_of_scope entries")
            texts = [f"[{_text(src) or 'source not given'}] {t}"
                     for t, src in zip((_text(x) for x in out_of_scope), sources) if t]
        else:
            texts = [t for t in (_text(x) for x in out_of_scope) if t]
        value = _join_sentences(texts) if texts else "not given"
        status = "given" if texts else "missing"
    items.append(Item("out_of_scope", "What the uncertainty does not cover", value, status))

    # 8. degenerate bootstrap replicates --------------------------------------------------
    draws = estimates.bootstrap.get("draws") if estimates.bootstrap else None
    if draws is None or draws.replicates == 0:
        items.append(Item("bootstrap_degenerate", "Degenerate bootstrap replicates",
                          "no bootstrap run (replicates = 0)", "not applicable"))
    else:
        n_deg = int(draws.degenerate.sum())
        value = (f"{n_deg:,} of {draws.replicates:,} replicates ({draws.degenerate_fraction:.1%}) "
                 "degenerate: every drawn document had the same rate, so no standard error; "
                 "dropped from bootstrap-t")
        if n_deg == draws.replicates:
            value += "; all replicates degenerate, so no bootstrap-t interval"
        seed = "none (not reproducible)" if estimates.seed is None else str(estimates.seed)
        value += f"; seed {seed}"
        items.append(Item("bootstrap_degenerate", "Degenerate bootstrap replicates", value, "given"))

    # 9. exclusions -----------------------------------------------------------------------
    excl = tuple(table.exclusions if exclusions is None else exclusions)
    if not excl:
        items.append(Item("exclusions", "Rows excluded and why", "none", "given"))
    else:
        total = sum(int(e.rows) for e in excl)
        parts = [f"{int(e.rows):,} ({_text(e.reason) or 'reason NOT GIVEN'})" for e in excl]
        unexplained = any(_text(e.reason) is None for e in excl)
        value = f"{total:,} rows excluded: " + "; ".join(parts)
        items.append(Item("exclusions", "Rows excluded and why", value,
                          "missing" if unexplained else "given"))
    return items


def every_score_same(table: DocTable) -> float | None:
    """The one score every measurement has (all 0, all 1, ...), or ``None`` when scores differ or the
    sums of squares (q) are not known. Then within- and between-document variances are both 0."""
    if table.q is None or table.N <= 0:
        return None
    n, s, q = (np.asarray(x, dtype=float) for x in (table.n, table.s, table.q))
    rate = s / n
    mean = float(s.sum() / n.sum())
    scale = max(1.0, abs(mean))
    if float(np.ptp(rate)) > 1e-12 * scale:
        return None
    within = float(np.sum(q - s * s / n))  # sum of squared deviations from each document's mean
    if abs(within) > 1e-9 * scale * scale * float(n.sum()):
        return None
    return mean / float(getattr(table, "scale", 1.0))  # stored sums may carry a power-of-two scale


def _method_item(estimates: Estimates, name: str | None, method: str | None, evidence: dict | None = None) -> Item:
    """Interval method, resampling unit and effective degrees of freedom (K stated apart)."""
    K = estimates.K
    level = f"{estimates.level:.0%}"
    parts = []
    unavailable = False
    for estimand in ([name] if name else ["micro", "macro"]):
        if method and name:
            m = method
        else:
            from .policy import default_method
            m = default_method(estimates, estimand) if estimates.design is None else _PRIMARY[estimand]
        try:
            iv = estimates.interval(estimand, m)
        except KeyError:
            raise ParameterError(f"estimand method {m!r} was not computed for {estimand} "
                                 f"(available: {', '.join(i.method for i in estimates.intervals if i.estimand == estimand)})") from None
        ci = (f"[{iv.ci.low:.4f}, {iv.ci.high:.4f}]" if iv.ci is not None
              else f"no interval ({iv.reason or 'not available'})")
        unavailable = unavailable or iv.ci is None
        df = f"effective df = {iv.df:.2f}" if iv.df is not None and math.isfinite(iv.df) else "df: none (not a t interval)"
        unit = ("documents resampled with replacement" if iv.resampling_unit == "document"
                else "analytic, variance from document-level residuals (cluster = document)")
        parts.append(f"{estimand}: {iv.label}, {level} {ci}; {unit}; {df}")
    boot = (f"document bootstrap with {estimates.replicates:,} replicates" if estimates.replicates
            else "no bootstrap")
    value = " | ".join(parts) + f" | K = {K:,} documents (stated apart from the df); {boot}"
    status = "unavailable" if unavailable else "given"
    if evidence is not None:
        where = {"census": "the census", "pseudo-population": "a pseudo-population built from the sample"}.get(
            evidence.get("basis"))
        cov = evidence.get("coverage")
        if where is None:
            value += " | not checked by simulation (no census)"
        elif cov is not None:
            checked = (f"simulated coverage on {where}: {cov:.3f} (MC SE {evidence.get('mc_se') or 0:.3f}, "
                       f"{evidence.get('reps') or 0:,} samples of K = {evidence.get('k')})")
            if evidence.get("approximate"):
                value += f" | APPROXIMATE: no method reached {level} in the simulation; {checked}"
                if not unavailable:
                    status = "approximate"
            else:
                value += f" | {checked}"
    if unavailable:
        value = "interval unavailable from these data: " + value
    return Item("interval_method", "Interval method, resampling unit and effective degrees of freedom",
                value, status)


def checklist_frame(items: Iterable[Item]) -> pd.DataFrame:
    """The checklist as a DataFrame with columns key, item, value, status (one row per item)."""
    return pd.DataFrame([{"key": i.key, "item": i.item, "value": i.value, "status": i.status}
                         for i in items], columns=["key", "item", "value", "status"])
