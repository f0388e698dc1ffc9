"""Display helpers for the notebooks: they format what the library computed, and escape every
piece of user text (document ids, params text) before it reaches the HTML report.

Every sentence is a message of the catalogs (:func:`perdoc.i18n.tr`, by key) and every number goes
through :mod:`perdoc.i18n`, so a report written in Spanish has Spanish sentences and decimal commas.
Method labels, notes and reasons computed by the library are English strings (the JSON keeps them);
:func:`method_label` (from the catalogs, by method id) and :func:`library_text` (notes and reasons are
:class:`perdoc.messages.Message` objects, found in the catalogs by their code) give them in the
report's language.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd

from ..messages import Message
from ..study.policy import JUDGE_METHODS
from .i18n import N_, get_language, integer, interval, message_text, num, pct, tr

__all__ = ["show_chart", "show_table", "show_text", "note", "warning", "esc", "fmt", "no_sampling_error",
           "headline_sentences", "method_label", "library_text", "fpc_heuristic", "fpc_status",
           "section_link", "note_with_link", "yes_no", "FORMATS", "recommendation_text"]

#: One number format per quantity, everywhere in the report (sentences, tables and charts).
FORMATS = {"estimate": ".4f", "interval": ".4f", "width": ".4f", "se": ".4g", "df": ".2f",
           "coverage": ".3f", "mc_se": ".3f", "spread": ".4f"}


def esc(text) -> str:
    """HTML-escape user-provided text (document ids, population descriptions, ...)."""
    return html.escape(str(text), quote=True)


def _display_html(markup: str) -> None:
    from IPython.display import HTML, display
    display(HTML(markup))


def show_chart(chart) -> None:
    """Display a :class:`perdoc.charts.Chart` as inline SVG with its caption (offline, no script).

    The chart renders itself (:meth:`perdoc.charts.Chart.to_svg`), so this module does not import
    :mod:`perdoc.charts`, which takes its method labels and translated notes from here."""
    if chart is None:
        return
    svg = chart.to_svg()
    _display_html(f'<figure class="perdoc-figure" aria-label="{esc(chart.title)}">{svg}'
                  f'<figcaption class="perdoc-caption">{esc(chart.caption)}</figcaption></figure>')


def yes_no(flag) -> str:
    """A boolean cell in words a reader understands: ``yes``/``no`` in English, ``sí``/``no`` in Spanish
    (never Python's ``True``/``False``)."""
    return tr("word.yes") if bool(flag) else "no"


def _spec(floatfmt: str) -> str:
    m = re.fullmatch(r"\{:([^}]*)\}", floatfmt)
    return m.group(1) if m else ".4g"


def show_table(df: pd.DataFrame, *, floatfmt: str = "{:.4g}", index: bool = False,
               formats: dict | None = None, headers: dict | None = None) -> None:
    """Display a DataFrame as an escaped HTML table.

    Numbers are written for the report's language (:func:`perdoc.i18n.num`) with ``floatfmt``, or
    with ``formats[column]`` (a format spec such as ``".4f"``) for the columns it names; booleans
    through :func:`yes_no`; ``headers`` renames columns for display."""
    shown = df.copy()
    formats = formats or {}
    default = _spec(floatfmt)
    for col in shown.columns:
        series = shown[col]
        if pd.api.types.is_bool_dtype(series):
            shown[col] = series.map(yes_no)
        elif col in formats or pd.api.types.is_float_dtype(series):
            spec = formats.get(col, default)
            shown[col] = series.map(lambda v, spec=spec: _cell(v, spec))
        elif series.dtype == object:   # booleans beside missing values: still yes/no
            shown[col] = series.map(lambda v: yes_no(v) if isinstance(v, (bool, np.bool_)) else v)
    shown = shown.astype(object).where(shown.notna(), "—")
    if headers:
        shown = shown.rename(columns=headers)
    _display_html(shown.to_html(index=index, classes="perdoc", border=0, escape=True, na_rep="—"))


def _cell(v, spec):
    if v is None or isinstance(v, str):
        return "—" if v is None else v
    if isinstance(v, (bool, np.bool_)):
        return yes_no(v)
    try:
        if pd.isna(v):
            return "—"
    except (TypeError, ValueError):
        return str(v)
    return num(v, spec)


def show_text(text: str, *, tag: str = "p", cls: str | None = None) -> None:
    """Display one paragraph of (escaped) text."""
    klass = f' class="{cls}"' if cls else ""
    _display_html(f"<{tag}{klass}>{esc(text)}</{tag}>")


def note(text: str) -> None:
    show_text(text, tag="div", cls="perdoc-note")


def warning(text: str) -> None:
    show_text(text, tag="div", cls="perdoc-warning")


def section_link(title: str) -> str:
    """An HTML link to a heading of the report: the id nbconvert gives it (spaces become '-')."""
    from urllib.parse import quote
    anchor = quote(title.strip().replace(" ", "-"), safe="?/:@!$&'()*+,;=")   # as nbconvert's heading ids
    return f'<a href="#{esc(anchor)}">{esc(title)}</a>'


def note_with_link(before: str, title: str, after: str = "", *, cls: str = "perdoc-note") -> None:
    """A note naming (and linking to) another section of the report: ``before`` + link + ``after``."""
    _display_html(f'<div class="{cls}">{esc(before)}{section_link(title)}{esc(after)}</div>')


def fmt(x, spec: str = ".4g", none: str = "—") -> str:
    """A number for a sentence or table cell in the report's language; ``none`` for None, NaN or
    infinity."""
    if x is None or isinstance(x, bool):
        return none if x is None else str(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return num(v, spec) if math.isfinite(v) else none


# ------------------------------------------------------------------- the library's English text
def method_label(iv) -> str:
    """The label of an interval method in the report's language (the JSON keeps the English one): in
    English the label itself, in Spanish its name from the catalogs (:mod:`perdoc.report._spanish`),
    an error for a method the catalogs do not name."""
    if get_language() == "en":
        return iv.label
    from ._spanish import method_name   # one set of method names for the whole report
    return method_name(iv)


def library_text(text) -> str:
    """A sentence computed by the library (a note, a reason: a :class:`perdoc.messages.Message`) in the
    report's language, from the catalogs by its code (:func:`perdoc.i18n.message_text`); "" for none.
    A sentence without a code is an error, never shown in English in a Spanish report."""
    if text is None or text == "":
        return ""
    return message_text(text)


def fpc_heuristic(iv) -> bool:
    """Whether the finite population correction was applied to this interval as a heuristic (a method
    it was not derived for): the library marks it in the interval's notes (``notes`` in the JSON)."""
    from ..study.estimate import FPC_HEURISTIC
    return FPC_HEURISTIC in tuple(getattr(iv, "notes", ()) or ())


def fpc_status(iv, population_size) -> str:
    """The finite population correction of an interval, for a table cell: heuristic, applied or none."""
    if population_size is None:
        return tr("fpc.not_applied")
    if fpc_heuristic(iv):
        return tr("fpc.heuristic")
    return tr("fpc.applied")


def no_sampling_error(sim) -> tuple[str, ...]:
    """The estimands (micro, macro) whose every simulated sample gave the census value exactly (RMSE 0
    for every method): the census documents do not differ, so there is no sampling error to cover
    and coverage cannot tell the methods apart."""
    out = []
    for estimand in ("micro", "macro"):
        rmse = [m.get("rmse") for name, m in sim.methods.items() if name.split(".", 1)[0] == estimand]
        truth = sim.truth.get(estimand)
        tol = 1e-12 * max(1.0, abs(truth) if truth is not None and math.isfinite(truth) else 1.0)
        if rmse and all(r is not None and math.isfinite(r) and abs(r) <= tol for r in rmse):
            out.append(estimand)
    return tuple(out)


def recommendation_text(sim, estimand: str) -> str:
    """The simulation's recommendation for an estimand in the report's language: the message
    :attr:`SimulationResult.recommendation_notes` holds (its English text is kept as it is)."""
    return library_text(sim.recommendation_notes.get(estimand))


def _kind_name(kind: str) -> str:
    if kind in ("micro", "macro"):
        return tr("estimand.micro_mean") if kind == "micro" else tr("estimand.macro_mean")
    return tr("estimand.other_mean", kind=kind)


def headline_sentences(h, est, kind: str) -> tuple[str, str]:
    """The headline (estimate, interval, method, df, K, N) and the sentence on the evidence behind it,
    from a :class:`perdoc.report.Headline`. The two never disagree with the simulation of the
    section "Which interval holds its level here" (report section Intervals). When the finite
    population correction was applied to the headline method as a heuristic, the headline says so."""
    p = h.interval
    lvl = pct(est.level, 0)
    label = method_label(p)
    name = _kind_name(kind)
    heuristic = est.population_size is not None and fpc_heuristic(p)
    fpc = tr("headline.fpc_heuristic") if heuristic else ""
    if p.ci is not None:
        df_text = (tr("headline.df") + num(p.df, FORMATS["df"]) + "; "
                   if p.df is not None and p.df == p.df else "")
        approx = tr("headline.approximate") if h.approximate else ""
        title = tr("headline.title", name=name, estimate=num(p.estimate, ".4f"), approx=approx, level=lvl,
                   ci=interval(p.ci.low, p.ci.high), label=label, df=df_text, K=integer(est.K),
                   N=integer(est.N), fpc=fpc)
    else:
        reason = library_text(p.reason) or tr("word.not_available")
        title = tr("headline.title_no_interval", name=name, estimate=num(p.estimate, ".4f"), label=label,
                   reason=reason, fpc=fpc)
    where = {"census": tr("where.census"), "pseudo-population": tr("headline.where_pseudo")}.get(h.basis)
    if where is None and p.method in JUDGE_METHODS:
        evidence = tr("headline.judge", label=label)
    elif where is None:
        evidence = tr("headline.not_checked", label=label)
    elif h.coverage is None:
        evidence = tr("headline.checked_no_interval", where=where, reason=_reason_text(h.reason))
    else:
        cov = tr("check.coverage_of_samples", coverage=num(h.coverage, ".3f"), mc_se=num(h.mc_se, ".3f"),
                 reps=integer(h.reps), k=integer(h.k))
        if h.verified:
            evidence = tr("headline.checked", where=where, cov=cov, level=lvl, reason=_reason_text(h.reason))
        else:
            evidence = tr("headline.approximate_check", where=where, level=lvl, cov=cov)
    if heuristic:
        evidence += (tr("headline.fpc_note_simulated") if h.basis in ("census", "pseudo-population")
                      else tr("headline.fpc_note"))
    if p.out_of_range:
        lo_r, hi_r = p.metric_range
        evidence += tr("headline.out_of_range", range=interval(lo_r, hi_r, "g"))
    return title, evidence


# ------------------------------------------------------------------------------------ summary box
#: The reason of an interval without one (summary.json's ``summary_box``) when the library gave none.
NOT_AVAILABLE = Message("reason.not_available", "not available")


def _reason_text(reason) -> str:
    """A reason (for no interval, for the headline's choice) in the report's language."""
    if not reason:
        return tr("word.not_available")
    return message_text(reason)


def _comparison_interval(a):
    """The comparison's headline (None when unpaired) and its interval, as the Comparing systems
    section shows them: :attr:`Analysis.comparison_headline` when paired, else the delta-method
    interval of the declared estimand."""
    cmp = a.comparison
    ch = a.comparison_headline
    if ch is not None:
        return ch, ch.interval
    if cmp is None or cmp.difference is not None:
        return None, None
    wanted = "cr1" if a.study.estimand.kind == "micro" else "t"
    return None, next((i for i in cmp.unpaired if i.estimand == a.study.estimand.kind and i.method == wanted), None)


def _comparison_facts(a) -> dict | None:
    """The comparison's estimate, interval and verdict (None without a comparison)."""
    cmp = a.comparison
    if cmp is None:
        return None
    kind = a.study.estimand.kind
    ch, iv = _comparison_interval(a)
    from ..study.compare import verdict as _verdict
    verdict = _verdict(iv)
    return {"systems": list(cmp.names), "paired": cmp.paired, "K": cmp.K,
            "estimate": cmp.to_dict()["difference"][kind]["estimate"],
            "method": None if iv is None else iv.method, "label": None if iv is None else iv.label,
            "ci": None if iv is None or iv.ci is None else [iv.ci.low, iv.ci.high],
            "df": None if iv is None or iv.df is None or iv.df != iv.df else iv.df,
            "reason": None if iv is None else iv.reason, "verdict": verdict,
            "basis": "none" if ch is None else ch.basis, "verified": bool(ch is not None and ch.verified),
            "approximate": bool(ch is not None and ch.approximate),
            "coverage": None if ch is None else ch.coverage, "mc_se": None if ch is None else ch.mc_se,
            "reps": None if ch is None else ch.reps, "out_of_range": bool(iv is not None and iv.out_of_range),
            "design_ignored": a.study.design.sampling not in ("srs", "census")}


def summary_facts(a) -> dict:
    """What the report's summary box says, as plain values (summary.json keeps them as ``summary_box``).

    Everything comes from the objects the sections show: the headline is :attr:`Analysis.headline`
    (the Headline section of Intervals writes the same object with :func:`headline_sentences`), the
    comparison :attr:`Analysis.comparison_headline` (section Comparing systems). ``warnings`` holds,
    by ``code``: ``no_interval``, ``approximate`` (no method reached the level in the simulation),
    ``out_of_range``, ``fpc_heuristic`` (the finite population correction applied to a method it was
    not derived for: the interval's notes say so), ``census`` (K = M), ``excluded_rows`` (one per
    reason), ``similar_ids`` (near-identical ids kept apart because the params allow them) and
    ``unseen_tail`` (a frame shows that a simple random sample of this size misses long documents
    holding a large share of the chunks, :func:`perdoc.frame.unseen_tail`). Each warning carries the
    numbers that say whether it matters here: ``approximate`` how much wider the interval would need
    to be (``widening``, :func:`widening_needed`), ``fpc_heuristic`` the sampling fraction and how much
    the correction narrows the interval (:func:`fpc_effect`), ``excluded_rows`` their share and, for a
    micro mean of a bounded metric, the most they could move it (:func:`excluded_effect`).
    """
    study, est, table = a.study, a.estimates, a.table
    h = a.headline
    p = h.interval
    warnings = _box_warnings(a, h)
    strata = (est.design or {}).get("strata") if study.design.sampling == "stratified" else None
    return _plain({
        "estimand": {"kind": study.estimand.kind, "why": study.estimand.why},
        "estimate": p.estimate,
        "interval": {"level": est.level, "method": p.method, "label": p.label,
                     "ci": None if p.ci is None else [p.ci.low, p.ci.high],
                     "df": None if p.df is None or p.df != p.df else p.df, "reason": p.reason},
        "K": table.K, "N": int(table.N) if float(table.N).is_integer() else table.N,
        "design": {"sampling": study.design.sampling, "population_size": est.population_size,
                   "strata": None if strata is None else len(strata)},
        "check": {"basis": h.basis, "verified": h.verified, "approximate": h.approximate,
                  "coverage": h.coverage, "mc_se": h.mc_se, "reps": h.reps, "k": h.k, "reason": h.reason,
                  "pseudo_population": _pseudo_facts(a, p)},
        "comparison": _comparison_facts(a),
        "warnings": warnings,
    })


#: Below this sampling fraction K/M the summary box calls the finite population correction negligible:
#: it narrows an interval by under 2.5% there (1 - sqrt(1 - 0.05) = 0.0253).
FPC_NEGLIGIBLE = 0.05
#: An approximate interval that would need to be at most this much wider to reach its level falls
#: short by "a small" amount; more, and the box says it matters.
WIDENING_SMALL = 0.05
#: Excluded rows that could move the micro mean by less than this fraction of the interval's
#: half-width are negligible.
EXCLUDED_SMALL = 0.1


def fpc_effect(K, M) -> dict | None:
    """What the finite population correction does here: the sampling fraction ``K/M``, how much the
    correction (every variance times ``1 - K/M``) narrows an interval, ``1 - sqrt(1 - K/M)``, and
    whether that is negligible (a sampling fraction under :data:`FPC_NEGLIGIBLE`); None without M."""
    if K is None or not M:
        return None
    f = min(max(float(K) / float(M), 0.0), 1.0)
    return {"sampling_fraction": f, "width_change": 1.0 - math.sqrt(1.0 - f), "negligible": f < FPC_NEGLIGIBLE}


def widening_needed(coverage, level) -> float | None:
    """How much wider an interval that covered ``coverage`` of the simulated samples would need to be
    to cover ``level``, from the normal quantiles: ``z((1 + level)/2) / z((1 + coverage)/2) - 1``
    (0 when it already covers ``level``; None without a coverage)."""
    from statistics import NormalDist
    if coverage is None or level is None or not (0.0 < coverage < 1.0 and 0.0 < level < 1.0):
        return None
    z = NormalDist().inv_cdf
    return max(0.0, z((1.0 + level) / 2.0) / z((1.0 + coverage) / 2.0) - 1.0)


def excluded_effect(a, p, rows) -> dict:
    """How much ``rows`` excluded rows could matter, counted as measurements beside the N kept: their
    ``share`` of all; for the micro mean of a metric with a known range, under a simple random sample
    or a census, the most they could move it (``bound``: share times the range) against the headline
    interval's ``half_width``, ``negligible`` under :data:`EXCLUDED_SMALL` of it."""
    total = float(rows) + float(a.table.N)
    out = {"share": float(rows) / total if total > 0 else None, "bound": None, "half_width": None,
           "range": None, "negligible": None}
    if (out["share"] is not None and a.study.estimand.kind == "micro" and p.ci is not None
            and p.metric_range is not None and a.study.design.sampling in ("srs", "census")):
        lo, hi = p.metric_range
        out["range"] = [float(lo), float(hi)]
        out["bound"] = out["share"] * (float(hi) - float(lo))
        out["half_width"] = (p.ci.high - p.ci.low) / 2.0
        out["negligible"] = bool(out["bound"] < EXCLUDED_SMALL * out["half_width"])
    return out


def _box_warnings(a, h) -> list[dict]:
    """The warnings of :func:`summary_facts`, each with the numbers that say whether it matters here."""
    study, est, table, p = a.study, a.estimates, a.table, h.interval
    warnings = []
    if p.ci is None:
        warnings.append({"code": "no_interval", "reason": p.reason or NOT_AVAILABLE})
    if h.approximate and p.ci is not None:
        widening = widening_needed(h.coverage, est.level)
        warnings.append({"code": "approximate", "coverage": h.coverage, "mc_se": h.mc_se, "widening": widening,
                         "small": None if widening is None else widening <= WIDENING_SMALL})
    if p.out_of_range:
        warnings.append({"code": "out_of_range", "range": list(p.metric_range)})
    if est.population_size is not None and fpc_heuristic(p):
        warnings.append({"code": "fpc_heuristic", **(fpc_effect(table.K, est.population_size) or {})})
    if est.population_size is not None and est.population_size == table.K:
        warnings.append({"code": "census"})
    for e in table.exclusions:
        warnings.append({"code": "excluded_rows", "rows": e.rows, "reason": e.reason,
                         **excluded_effect(a, p, e.rows)})
    tail = getattr(est, "frame_tail", None)
    if tail and tail.get("warn") and study.design.sampling == "srs":
        warnings.append({"code": "unseen_tail", "expected": tail["expected"], "sample": tail["sample"],
                         "documents_beyond": tail["documents_beyond"], "longest_sampled": tail["longest_sampled"]})
    judge = getattr(a, "judge", None)
    if judge is not None and judge.warnings and p.method in JUDGE_METHODS and p.estimand == "micro":
        warnings.append({"code": "judge_size", "correlation": judge.agreement.get("size_correlation"),
                         "p_value": judge.agreement.get("size_p_value")})
    similar = table.source.get("similar_ids")
    if similar:
        warnings.append({"code": "similar_ids", "groups": similar["groups"],
                         "examples": [list(g) for g in similar.get("examples", [])]})
    return warnings


def _pseudo_facts(a, p):
    """What the pseudo-population check, when one ran, says of the leading method ``p``: its coverage
    there (a qualifier of the headline, never its reason: :func:`perdoc.policy.lead`), or None."""
    sim = a.pseudo_simulation
    row = None if sim is None or p is None else sim.methods.get(f"{p.estimand}.{p.method}")
    if row is None or row.get("coverage") is None:
        return None
    return {"coverage": row["coverage"], "mc_se": row["mc_se"], "reps": sim.reps, "k": sim.k,
            "holds": bool(row["coverage"] >= sim.level - 2.0 * row["mc_se"])}


def _plain(x):
    """JSON-ready: tuples as lists, whole floats of counts kept as floats, NaN and infinity as None."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return v if math.isfinite(v) else None


#: What each interval method does, in plain words, for the summary box (which gives its technical
#: name on the line below): message keys by the key of the method's name
#: (:data:`perdoc.report._spanish.METHOD_KEYS`); tests/test_plain_words.py checks every method has one.
PLAIN_METHOD = {
    "method.micro.cr1": N_("box.plain.few_documents"),
    "method.micro.cr1.delta": N_("box.plain.unpaired"),
    "method.micro.cr2": N_("box.plain.few_documents"),
    "method.micro.cr2_ik": N_("box.plain.few_documents"),
    "method.micro.cr3": N_("box.plain.few_documents"),
    "method.micro.jackknife_bc": N_("box.plain.few_documents"),
    "method.micro.korn_graubard": N_("box.plain.effective_n_01"),
    "method.micro.logit": N_("box.plain.few_documents_01"),
    "method.micro.wilson": N_("box.plain.effective_n_01"),
    "method.micro.logit_cr2": N_("box.plain.few_documents_01"),
    "method.micro.atanh_cr2": N_("box.plain.difference_11"),
    "method.micro.frame_ratio": N_("box.plain.frame"),
    "method.micro.frame_loglinear": N_("box.plain.frame"),
    "method.micro.frame_rank": N_("box.plain.frame"),
    "method.micro.logit_frame_ratio": N_("box.plain.frame_01"),
    "method.micro.logit_frame_loglinear": N_("box.plain.frame_01"),
    "method.micro.logit_frame_rank": N_("box.plain.frame_01"),
    "method.micro.greg": N_("box.plain.frame"),
    "method.micro.logit_greg": N_("box.plain.frame_01"),
    "method.micro.bootstrap_t": N_("box.plain.bootstrap"),
    "method.micro.percentile": N_("box.plain.bootstrap"),
    "method.micro.wild": N_("box.plain.bootstrap"),
    "method.micro.bootstrap_t_logit": N_("box.plain.bootstrap_01"),
    "method.micro.calibrated": N_("box.plain.calibrated"),
    "method.micro.calibrated.logit": N_("box.plain.calibrated_01"),
    "method.micro.wald_iid": N_("box.plain.iid"),
    "method.micro.wald_eff_n": N_("box.plain.effective_n"),
    "method.micro.design.stratified": N_("box.plain.design"),
    "method.micro.design.two_stage": N_("box.plain.design"),
    "method.micro.design.drawn": N_("box.plain.design"),
    "method.micro.logit_design": N_("box.plain.design_01"),
    "method.macro.t": N_("box.plain.few_documents"),
    "method.macro.t.differences": N_("box.plain.differences"),
    "method.macro.bootstrap_t": N_("box.plain.bootstrap"),
    "method.macro.percentile": N_("box.plain.bootstrap"),
    "method.macro.calibrated": N_("box.plain.calibrated"),
    "method.macro.calibrated.logit": N_("box.plain.calibrated_01"),
    "method.macro.design.stratified": N_("box.plain.design"),
    "method.macro.design.drawn": N_("box.plain.design"),
    "method.macro.logit_design": N_("box.plain.design_01"),
    "method.micro.ppi": N_("box.plain.judge"),
    "method.micro.logit_ppi": N_("box.plain.judge_01"),
    "method.macro.ppi": N_("box.plain.judge"),
    "method.macro.logit_ppi": N_("box.plain.judge_01"),
}


def plain_method(iv) -> str:
    """What an interval method does, in plain words and the report's language (no technical name:
    :func:`method_label` gives that); a general description for a method the catalogs do not name."""
    from ._spanish import UnknownMethod, method_message
    try:
        key = PLAIN_METHOD.get(method_message(iv)[0])
    except UnknownMethod:
        key = None
    return tr(key) if key else tr("box.plain.other")


def _technical(iv, df) -> str:
    """The line under an interval's plain words: its technical name and degrees of freedom, smaller."""
    df_text = "" if df is None else tr("box.df") + num(df, FORMATS["df"])
    line = tr("box.technical", label=esc(method_label(iv)), df=df_text)
    return f'<div class="perdoc-summary-technical">{line}</div>'


def _interval_cell(f: dict, p) -> str:
    """The headline interval's cell: the interval and what it is in plain words on the first line, its
    technical name (method, df) on the line below."""
    iv = f["interval"]
    if iv["ci"] is None:
        first = tr("box.no_interval_plain", why=esc(_reason_text(iv["reason"])))
    else:
        approx = tr("box.approximate_mark") if f["check"]["approximate"] else ""
        ci = f'<strong class="perdoc-summary-number">{interval(*iv["ci"], spec=FORMATS["interval"])}</strong>'
        first = tr("box.interval_line", ci=ci, approx=approx, plain=plain_method(p))
    return f'<div class="perdoc-summary-plain">{first}</div>{_technical(p, None if iv["ci"] is None else iv["df"])}'


#: The symbols the summary box may use: the pattern that finds each in the box's text (by language;
#: ``None`` for both) and the message key of its definition, which the box adds below its warnings.
BOX_SYMBOLS = (
    ({None: r"\bK\b"}, N_("box.symbol.K")),
    ({None: r"\bN\b"}, N_("box.symbol.N")),
    ({None: r"\bM\b"}, N_("box.symbol.M")),
    ({None: r"\bK-H\b|\bH\b"}, N_("box.symbol.H")),
    ({None: r"\bG\*"}, N_("box.symbol.G")),
    ({"en": r"\bdf\b", "es": r"\bgl\b"}, N_("box.symbol.df")),
    ({None: r"(?<!['’])\bt\b"}, N_("box.symbol.t")),
    ({"en": r"\bse\b|\bSE\b", "es": r"\bEE\b"}, N_("box.symbol.se")),
    ({"en": r"\bsd\b", "es": r"\bDE\b"}, N_("box.symbol.sd")),
    ({None: r"\bDEFF\b"}, N_("box.symbol.DEFF")),
    ({None: r"\bCR[123]\b"}, N_("box.symbol.CR")),
    ({None: r"\bHC2\b"}, N_("box.symbol.HC2")),
    ({None: r"\blogit\b"}, N_("box.symbol.logit")),
    ({None: r"\batanh\b"}, N_("box.symbol.atanh")),
    ({None: r"\bsqrt\b"}, N_("box.symbol.sqrt")),
)


def _visible_text(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def box_symbols(text: str, f: dict) -> list[str]:
    """The definition of every symbol of :data:`BOX_SYMBOLS` that ``text`` (the box's visible text)
    uses, in the report's language, with its value here where the study gives one (K, N, M, H)."""
    lang = get_language()
    values = {"box.symbol.K": f["K"], "box.symbol.N": f["N"], "box.symbol.M": f["design"]["population_size"],
              "box.symbol.H": f["design"]["strata"]}
    out = []
    for patterns, key in BOX_SYMBOLS:
        pattern = patterns.get(lang, patterns.get(None))
        if pattern is None or not re.search(pattern, text):
            continue
        value = values.get(key)
        out.append(tr(key) + ("" if value is None else tr("box.symbol.value", value=integer(value))))
    return out


def _exclusion_text(reason) -> str:
    from .checklist import exclusion_text   # the library's reasons from the catalogs, the data's as written
    return exclusion_text(reason)


def _design_text(f: dict) -> str:
    d, K = f["design"], f["K"]
    if d["sampling"] == "census":
        return tr("box.design.census")
    if d["sampling"] == "stratified":
        return tr("box.design.stratified", strata=integer(d["strata"]))
    if d["sampling"] == "drawn":
        return tr("box.design.drawn")
    if d["sampling"] == "two_stage":
        return tr("box.design.two_stage")
    if d["population_size"] is None:
        return tr("box.design.srs")
    return tr("box.design.srs_of", K=integer(K), M=integer(d["population_size"]))


def _coverage_text(coverage, mc_se, reps, k) -> str:
    return tr("check.coverage_of_samples", coverage=num(coverage, FORMATS["coverage"]),
              mc_se=num(mc_se, FORMATS['mc_se']), reps=integer(reps), k=integer(k))


def _check_text(f: dict) -> str:
    c, lvl = f["check"], pct(f["interval"]["level"], 0)
    if c["basis"] == "none" and f["interval"]["method"] in JUDGE_METHODS:
        return tr("box.check.judge")
    if c["basis"] == "none":
        head = tr("box.check.none")
        ps = c.get("pseudo_population")
        if not ps:
            return head
        cov = _coverage_text(ps["coverage"], ps["mc_se"], ps["reps"], ps["k"])
        return head + (tr("box.check.pseudo_holds", cov=cov) if ps["holds"] else
                       tr("box.check.pseudo_below", cov=cov, level=lvl))
    where = tr("where.census") if c["basis"] == "census" else tr("box.check.where_pseudo")
    why = esc(_reason_text(c["reason"]))
    if c["coverage"] is None or f["interval"]["ci"] is None:
        return tr("box.check.yes", where=where, why=why)
    cov = _coverage_text(c["coverage"], c["mc_se"], c["reps"], c["k"])
    if c["verified"]:
        return tr("box.check.verified", where=where, cov=cov, level=lvl, why=why)
    return tr("box.check.closest", where=where, level=lvl, cov=cov)


def _comparison_text(a, f: dict) -> str:
    c, lvl = f["comparison"], pct(f["interval"]["level"], 0)
    _, iv = _comparison_interval(a)
    A, B = (esc(s) for s in c["systems"])
    from .i18n import signed   # a difference keeps its sign in both languages, as in Comparing systems
    head = f"{A} - {B}, {_kind_name(f['estimand']['kind'])}: {signed(c['estimate'])}"
    technical = "" if iv is None else _technical(iv, c["df"])
    if c["ci"] is None:
        why = esc(_reason_text(c["reason"])) if iv is not None else tr("word.not_computed")
        none = tr("box.comparison.no_interval", why=why)
        return f'<div class="perdoc-summary-plain">{head}{none}</div>{technical}'
    approx = tr("box.comparison.approximate") if c["approximate"] else ""
    ivl = tr("box.comparison.interval_plain", approx=approx, level=lvl, ci=interval(*c["ci"], spec="+.4f"),
             plain=plain_method(iv))
    verdict = {
        "a_higher": tr("box.comparison.a_higher", A=A, B=B),
        "b_higher": tr("box.comparison.b_higher", A=A, B=B),
        "includes_zero": tr("box.comparison.includes_zero"),
    }[c["verdict"]]
    if c["basis"] == "census" and c["coverage"] is not None:
        cov = num(c["coverage"], FORMATS["coverage"])
        check = (tr("box.comparison.checked", cov=cov) if c["verified"]
                 else tr("box.comparison.approximate_check", level=lvl, cov=cov))
    else:
        check = tr("box.comparison.not_checked")
    if c["out_of_range"]:
        check += tr("box.comparison.out_of_range")
    if c["design_ignored"]:
        check += tr("box.comparison.design_ignored")
    return f'<div class="perdoc-summary-plain">{head}{ivl}; {verdict}{check}</div>{technical}'


def _warning_texts(f: dict) -> list[str]:
    """Each warning of :func:`summary_facts` as escaped sentences in the report's language: what
    happened, then whether it matters here (:func:`_matters_text`)."""
    return [_warning_text(w, f) + _matters_text(w, f) for w in f["warnings"]]


def _warning_text(w: dict, f: dict) -> str:
    """What a warning of :func:`summary_facts` reports, as one escaped sentence."""
    lvl, code = pct(f["interval"]["level"], 0), w["code"]
    if code == "no_interval":
        return tr("box.warning.no_interval", why=esc(_reason_text(w["reason"])))
    if code == "approximate":
        return tr("box.warning.approximate", level=lvl, cov=num(w["coverage"], FORMATS["coverage"]))
    if code == "out_of_range":
        return tr("box.warning.out_of_range", range=interval(*w["range"], spec="g"))
    if code == "fpc_heuristic":
        return tr("box.warning.fpc_heuristic")
    if code == "census":
        return tr("box.warning.census")
    if code == "excluded_rows":
        return tr("box.warning.excluded_rows", rows=integer(w["rows"]), why=esc(_exclusion_text(w["reason"])))
    if code == "unseen_tail":
        return tr("box.warning.unseen_tail", expected=pct(w["expected"], 0), sample=pct(w["sample"], 0),
                  beyond=integer(w["documents_beyond"]), longest=integer(w["longest_sampled"]))
    if code == "judge_size":
        return tr("box.warning.judge_size", p=num(w["p_value"], ".2g"))
    if code == "similar_ids":
        shown = "; ".join(" / ".join(esc(repr(v)) for v in g) for g in w["examples"])
        return tr("box.warning.similar_ids", groups=integer(w["groups"]), shown=shown)
    return esc(code)


def _matters_text(w: dict, f: dict) -> str:
    """Whether a warning matters here, from its numbers (:func:`_box_warnings`): "" when its own
    sentence already says so (the unseen long documents)."""
    lvl, code = pct(f["interval"]["level"], 0), w["code"]
    if code == "no_interval":
        return tr("box.matters.no_interval")
    if code == "approximate" and w.get("widening") is not None:
        wider = pct(w["widening"], 1)
        return (tr("box.matters.approximate_small", level=lvl, wider=wider) if w["small"] else
                tr("box.matters.approximate_large", level=lvl, wider=wider))
    if code == "out_of_range":
        return tr("box.matters.out_of_range")
    if code == "fpc_heuristic" and w.get("sampling_fraction") is not None:
        fraction, change = pct(w["sampling_fraction"], 1), pct(w["width_change"], 1)
        return (tr("box.matters.fpc_negligible", fraction=fraction, change=change) if w["negligible"] else
                tr("box.matters.fpc_matters", fraction=fraction, change=change))
    if code == "census":
        return tr("box.matters.census")
    if code == "excluded_rows" and w.get("share") is not None:
        share = pct(w["share"], 1)
        if w.get("bound") is None:
            return tr("box.matters.excluded_share", share=share)
        lo, hi = w["range"]
        args = dict(share=share, bound=num(w["bound"], FORMATS["width"]), half=num(w["half_width"], FORMATS["width"]))
        return (tr("box.matters.excluded_negligible", low=num(lo, "g"), high=num(hi, "g"), **args)
                if w["negligible"] else tr("box.matters.excluded_matters", **args))
    if code == "similar_ids":
        return tr("box.matters.similar_ids")
    if code == "judge_size":
        return tr("box.matters.judge_size")
    return ""


def summary_box(a) -> str:
    """The report's answer first, as escaped HTML: what was estimated and why, the estimate, the
    headline interval described in plain words with its technical name (method, df) on the line below,
    K and N, whether and how the interval was checked by simulation, the comparison's verdict, every
    warning that applies with whether it matters here (:func:`summary_facts`), and the definition of
    every symbol the box uses (:func:`box_symbols`).

    Sentences follow the report's language (:func:`perdoc.i18n.tr`), numbers are formatted by
    :mod:`perdoc.i18n` with the formats of the sections (:data:`FORMATS`), and every piece of user
    text (the why, system names, exclusion reasons, ids) is escaped.
    """
    f = summary_facts(a)
    p = a.headline.interval
    kind = f["estimand"]["kind"]
    lvl = pct(f["interval"]["level"], 0)
    question = tr("box.question_micro") if kind == "micro" else tr("box.question_macro")
    why_word = tr("box.why")
    rows = [(tr("box.estimated"),
             f"<strong>{_kind_name(kind)}</strong>: {question}. "
             f'<span class="perdoc-summary-why">{why_word}: {esc(f["estimand"]["why"])}</span>'),
            (tr("box.estimate"),
             f'<strong class="perdoc-summary-number">{num(f["estimate"], FORMATS["estimate"])}</strong>')]
    rows.append((tr("box.interval", level=lvl), _interval_cell(f, p)))
    rows.append((tr("box.sample"),
                 tr("box.sample_text", K=integer(f["K"]), N=integer(f["N"]), design=_design_text(f))))
    rows.append((tr("box.checked"), _check_text(f)))
    if f["comparison"] is not None:
        rows.append((tr("box.comparison"), _comparison_text(a, f)))
    items = "\n".join(f"<dt>{dt}</dt><dd>{dd}</dd>" for dt, dd in rows)
    warnings = _warning_texts(f)
    warnings_word = tr("box.warnings")
    warn = ("" if not warnings else
            f'\n<div class="perdoc-summary-warnings"><p>{warnings_word}</p><ul>\n'
            + "\n".join(f"<li>{w}</li>" for w in warnings) + "\n</ul></div>")
    symbols = box_symbols(_visible_text(items + warn), f)
    symbols_word = tr("box.symbols")
    legend = ("" if not symbols else f'\n<p class="perdoc-summary-symbols"><strong>{symbols_word}</strong>: '
              + "; ".join(symbols) + ".</p>")
    title = tr("box.summary")
    return (f'<section class="perdoc-summary" aria-label="{title}">\n<p class="perdoc-summary-title">{title}</p>\n'
            f"<dl>\n{items}\n</dl>{warn}{legend}\n</section>")


# ------------------------------------------------------- several systems: the leaderboard (section 04)
def _rank_text(low: int, high: int) -> str:
    """The ranks a system may hold: one number when the band settles it, else ``[low, high]``."""
    return integer(low) if low == high else interval(low, high, ",.0f")


def _pair_verdict(p) -> str:
    """What a pair's simultaneous interval shows, in words (``—`` without an interval)."""
    from ..study.compare import verdict
    if p.simultaneous.ci is None:
        return "—"
    v = verdict(p.simultaneous)
    if v == "includes_zero":
        return tr("leaderboard.verdict.includes_zero")
    return tr("leaderboard.verdict.higher", system=p.a if v == "a_higher" else p.b)


def leaderboard_pairs(m) -> pd.DataFrame:
    """The leaderboard's table of pairs (one row per pair of :class:`perdoc.MultiComparison`, in its
    order), as the report shows it: difference, interval, p-values, simultaneous interval, verdict."""
    from .i18n import signed
    lvl = pct(m.level, 0)
    rows = []
    for p in m.pairs:
        iv, sim = p.interval, p.simultaneous
        rows.append({tr("leaderboard.col.pair"): p.label,
                     tr("leaderboard.col.difference"): signed(iv.estimate, FORMATS["estimate"]),
                     tr("leaderboard.col.interval", level=lvl):
                         "—" if iv.ci is None else interval(iv.ci.low, iv.ci.high, "+" + FORMATS["interval"]),
                     tr("leaderboard.col.p"): num(p.p_value, ".3g"),
                     tr("leaderboard.col.p_holm"): num(p.p_holm, ".3g"),
                     tr("leaderboard.col.simultaneous", level=lvl):
                         "—" if sim.ci is None else interval(sim.ci.low, sim.ci.high, "+" + FORMATS["interval"]),
                     tr("leaderboard.col.verdict"): _pair_verdict(p)})
    return pd.DataFrame(rows)


def leaderboard_ranks(m) -> pd.DataFrame:
    """The leaderboard's ranking: rank, system, micro mean and the ranks the simultaneous band allows."""
    return pd.DataFrame([{tr("leaderboard.col.rank"): integer(r.rank), tr("leaderboard.col.system"): r.system,
                          tr("leaderboard.col.micro"): num(r.micro, FORMATS["estimate"]),
                          tr("leaderboard.col.ranks"): _rank_text(r.low, r.high)} for r in m.ranking])


def leaderboard_intro(m) -> str:
    """What the leaderboard compares and how its p-values and simultaneous band are adjusted."""
    methods = list(dict.fromkeys(method_label(p.interval) for p in m.pairs))
    return tr("leaderboard.intro", systems=", ".join(m.systems), count=integer(len(m.systems)), K=integer(m.K),
              method="; ".join(methods), pairs=integer(len(m.pairs)), alpha=num(1 - m.level, ".2g"),
              c=num(m.critical_value, ".3f"), c0=num(m.pointwise_critical_value, ".3f"), level=pct(m.level, 0))


def leaderboard_findings(m) -> list[str]:
    """What the numbers of the leaderboard show, each claim computed from them: the pairs the band
    separates, the pairs Holm's p-values separate, and whether the first place is settled."""
    from ..study.compare import verdict
    pairs = integer(len(m.pairs))
    separated = [p.label for p in m.pairs
                 if p.simultaneous.ci is not None and verdict(p.simultaneous) != "includes_zero"]
    out = [tr("leaderboard.separated", count=integer(len(separated)), pairs=pairs, list="; ".join(separated))
           if separated else tr("leaderboard.separated_none", pairs=pairs)]
    by_holm = [p.label for p in m.pairs if p.p_holm is not None and p.p_holm < 1 - m.level]
    out.append(tr("leaderboard.holm", alpha=num(1 - m.level, ".2g"), count=integer(len(by_holm)), pairs=pairs))
    disagree = [p.label for p in m.pairs if (p.label in separated) != (p.label in by_holm)]
    if disagree:
        out.append(tr("leaderboard.disagree", list="; ".join(disagree), pairs=pairs))
    top = m.ranking[0]
    if top.low == top.high == 1 and sum(r.rank == 1 for r in m.ranking) == 1:
        out.append(tr("leaderboard.first_settled", system=top.system, mean=num(top.micro, FORMATS["estimate"])))
    else:
        out.append(tr("leaderboard.first_open", system=top.system, mean=num(top.micro, FORMATS["estimate"]),
                      count=integer(sum(r.low == 1 for r in m.ranking))))
    missing = sum(1 for p in m.pairs if p.simultaneous.ci is None)
    if missing:
        out.append(tr("leaderboard.left_out", count=integer(missing)))
    return out


def show_leaderboard(a, chart_of=None) -> None:
    """The leaderboard of a study whose data.compare_to lists two or more columns (nothing otherwise):
    every pair with its interval, p-values and simultaneous interval, the ranking, the chart
    (``chart_of(comparison_many)``, :func:`perdoc.charts.leaderboard_chart` in the report: this module
    does not import the charts, which import from it) and what they show."""
    m = getattr(a, "comparison_many", None)
    if m is None:
        return
    show_text(tr("leaderboard.title", count=integer(len(m.systems))), tag="h3")
    show_text(leaderboard_intro(m))
    show_table(leaderboard_pairs(m))
    show_table(leaderboard_ranks(m))
    if chart_of is not None:
        show_chart(chart_of(m))
    for sentence in leaderboard_findings(m):
        note(sentence)
    kind = a.study.estimand.kind
    if kind != "micro":
        A, B = a.comparison.names
        note(tr("leaderboard.micro_only", kind=_kind_name(kind), a=A, b=B))
    if a.study.design.sampling not in ("srs", "census"):
        warning(tr("leaderboard.design_ignored"))


# ------------------------------------------------- the paired difference's plan (section 05)
def difference_plan_rows(dp: dict) -> pd.DataFrame:
    """The planning section's table of the paired difference's plan (``Analysis.difference_plan``)."""
    plan = dp["plan"]
    corr = (tr("plan_difference.no_correlation") if plan.correlation is None
            else num(plan.correlation, ".4f"))
    rows = [(tr("plan_difference.row.target"), num(plan.target, "g")),
            (tr("plan_difference.row.K"), integer(plan.K)),
            (tr("plan_difference.row.half_width"), num(plan.half_width, FORMATS["width"])),
            (tr("plan_difference.row.df"), num(plan.df, FORMATS["df"]))]
    if plan.K_without_fpc is not None:
        rows.append((tr("plan_difference.row.K0"), integer(plan.K_without_fpc)))
    rows += [(tr("plan_difference.row.sd"), num(plan.sd, FORMATS["spread"])),
             (tr("plan_difference.row.sd_system", system=plan.a), num(plan.sd_a, FORMATS["spread"])),
             (tr("plan_difference.row.sd_system", system=plan.b), num(plan.sd_b, FORMATS["spread"])),
             (tr("plan_difference.row.correlation"), corr),
             (tr("plan_difference.row.unpaired_sd"), num(plan.unpaired_sd, FORMATS["spread"])),
             (tr("plan_difference.row.unpaired_k"), integer(plan.unpaired_k))]
    return pd.DataFrame(rows, columns=["", tr("plan_difference.value")])


def difference_plan_sentences(dp: dict, kind: str) -> list[str]:
    """The plan of the paired difference in words: target, spread and K, then what pairing buys."""
    plan = dp["plan"]
    source = (tr("plan_difference.source_census", K=integer(dp["pilot_K"])) if dp["pilot"] == "census"
              else tr("plan_difference.source_study", K=integer(dp["pilot_K"])))
    rule = tr("plan_difference.rule_bm") if plan.df_rule == "bell-mccaffrey" else tr("plan_difference.rule_k1")
    head = tr("plan_difference.text", a=plan.a, b=plan.b, kind=_kind_name(kind), target=num(plan.target, "g"),
              sd=num(plan.sd, FORMATS["spread"]), source=source, rule=rule, K=integer(plan.K),
              hw=num(plan.half_width, FORMATS["width"]), df=num(plan.df, FORMATS["df"]))
    whole = (tr("plan_difference.whole_population")
             if plan.population_size and plan.unpaired_k >= plan.population_size else "")
    args = dict(sd=num(plan.sd, FORMATS["spread"]), unpaired_sd=num(plan.unpaired_sd, FORMATS["spread"]),
                K=integer(plan.K), unpaired_k=integer(plan.unpaired_k), whole=whole)
    pairing = (tr("plan_difference.pairing_no_correlation", **args) if plan.correlation is None else
               tr("plan_difference.pairing", corr=num(plan.correlation, ".4f"), **args))
    notes = [tr("plan_difference.census_needed") for n in plan.notes if "whole population" in n]
    return [head, pairing, *notes]


def show_difference_plan(a) -> None:
    """``planning.difference_half_width``: how many documents the paired difference score - compare_to
    needs (the numbers of ``perdoc plan --params P --vs B --half-width H``); nothing without the key."""
    dp = getattr(a, "difference_plan", None)
    if dp is None:
        return
    A, B = a.study.data.score, a.study.data.compare_to
    kind = a.study.estimand.kind
    show_text(tr("plan_difference.title", a=A, b=B), tag="h3")
    if dp["plan"] is None:
        source = tr("plan_difference.word_census") if dp["pilot"] == "census" else tr("plan_difference.word_pilot")
        warning(tr("plan_difference.problem", a=A, b=B, source=source, kind=kind))
        return
    head, pairing, *notes = difference_plan_sentences(dp, kind)
    show_text(head)
    show_table(difference_plan_rows(dp))
    show_text(pairing)
    for n in notes:
        warning(n)


# ------------------------------------------- the stratified design against its level (section 05)
def _holds(m: dict, level: float) -> bool:
    """Whether a simulated method holds the level within Monte Carlo error (coverage >= level - 2 MC SE)."""
    return m["coverage"] >= level - 2.0 * m["mc_se"]


def strata_coverage_text(plan, ssim, simulation) -> tuple[str, bool] | None:
    """``(sentence, serious)`` when the stratified design's simulated coverage is below the level beyond
    Monte Carlo error, or below the simple random sample's CR2 coverage: what stratifying gains
    (width, else expected SD) and where the coverage falls short, every claim from the numbers;
    ``serious`` when the stratified interval misses the level. None when neither is the case (or there
    is no simulation to tell)."""
    from .i18n import N_
    s = (ssim.methods.get("micro.design") if ssim is not None else None) or {}
    c = (simulation.methods.get("micro.cr2") if simulation is not None else None) or {}
    if s.get("coverage") is None or s.get("mc_se") is None:
        return None
    level = ssim.level
    cov_c = c.get("coverage")
    below_srs = cov_c is not None and s["coverage"] < cov_c
    if _holds(s, level) and not below_srs:
        return None
    same_k = cov_c is not None and simulation.k == ssim.k
    f3, f4 = FORMATS["coverage"], FORMATS["width"]
    if same_k and s.get("mean_width") is not None and c.get("mean_width") is not None:
        gain = s["mean_width"] < c["mean_width"]
        key = N_("strata.width.narrower") if gain else N_("strata.width.not_narrower")
        first = tr(key, strat=num(s["mean_width"], f4), srs=num(c["mean_width"], f4))
    else:
        gain = plan.sd < plan.sd_srs
        key = N_("strata.sd.lower") if gain else N_("strata.sd.not_lower")
        first = tr(key, strat=num(plan.sd, f4),
                   srs=num(plan.sd_srs, f4))
    where = (tr("strata.where.same", K=integer(ssim.k)) if cov_c is None or same_k else
             tr("strata.where.different", k_strat=integer(ssim.k), k_srs=integer(simulation.k)))
    args = dict(level=pct(level, 0), where=where, strat=num(s["coverage"], f3), se_strat=num(s["mc_se"], f3))
    if cov_c is None:
        second = tr("strata.coverage.stratified_below_alone", **args)
    elif not _holds(s, level):
        args.update(srs=num(cov_c, f3), se_srs=num(c["mc_se"], f3))
        key = N_("strata.coverage.neither") if not _holds(c, level) else N_("strata.coverage.stratified_below")
        second = tr(key, **args)
    else:
        within = abs(s["coverage"] - cov_c) <= 2.0 * math.hypot(s["mc_se"], c["mc_se"])
        second = tr("strata.coverage.below_srs", srs=num(cov_c, f3),
                    gap=tr("strata.coverage.gap_within") if within else "", **args)
    joint = tr("strata.but") if gain else tr("strata.and")
    return first + joint + second, not _holds(s, level)


# ------------------------------------------------- the judge-assisted estimate (section 03)
def judge_document_rates(judged) -> pd.DataFrame:
    """Per labelled document of a judged sample: chunks labelled, the gold rate and the judge's rate
    on the same chunks (a drawn sample's documents per draw)."""
    if hasattr(judged, "table"):   # JudgedSample
        t = judged.table
        n = np.asarray(t.n, dtype=float)
        s = np.asarray(t.s, dtype=float) / t.scale
        f = np.asarray(judged.f, dtype=float)
    else:                          # JudgedDesign
        d = judged.data
        n, s, f = np.asarray(d.m, dtype=float), np.asarray(d.s, dtype=float), np.asarray(judged.g, dtype=float)
    return pd.DataFrame({"n": n, "gold": s / n, "judge": f / n})


def judge_rows(a) -> pd.DataFrame:
    """The judge section's table: per mean, the judge-assisted interval, the labels-only one it is set
    against, the judge's weight and what the judge is worth in labelled documents."""
    from ..study.policy import lead
    j, est = a.judge, a.estimates
    rows = []
    for kind in ("micro", "macro"):
        r = j.ppi[kind]
        form = "logit_ppi" if r.get("logit_code") == 0 else "ppi"
        iv = est.interval(kind, form)
        labels = [x for x in est.intervals if x.estimand == kind and not (x.extra or {}).get("judge")]
        lab = lead(replace_intervals(est, labels), kind, a.simulation).interval
        eff = r["effective_documents"]
        rows.append({tr("judge.col.mean"): _kind_name(kind),
                     tr("judge.col.judge"): (interval(iv.ci.low, iv.ci.high) if iv.ci is not None
                                             else tr("judge.no_interval")),
                     tr("judge.col.labels"): (interval(lab.ci.low, lab.ci.high) if lab.ci is not None
                                              else tr("judge.no_interval")),
                     tr("judge.col.labels_method"): method_label(lab),
                     tr("judge.col.weight"): num(r["lam"], ".2f"),
                     tr("judge.col.worth"): ("-" if eff != eff or iv.ci is None else
                                             tr("judge.more_than", M=integer(j.population_size))
                                             if j.population_size and eff >= j.population_size
                                             else integer(round(eff)))})
    return pd.DataFrame(rows)


def replace_intervals(est, intervals):
    """``est`` holding only ``intervals`` (the labels-only rows, to say what would lead without the judge)."""
    from dataclasses import replace
    return replace(est, intervals=tuple(intervals))


def judge_sentences(a) -> tuple[list[str], list[str]]:
    """The judge section in words: ``(notes, warnings)``. What the judge scored, how it agrees with the
    gold by document, its bias, and whether it helped (its weight near 0, or no judge-assisted interval:
    the labels-only interval leads)."""
    j = a.judge
    d = a.study.data
    kind = a.study.estimand.kind
    where = (tr("judge.covers", M=integer(j.judged_documents)) if j.covers
             else tr("judge.sample", M=integer(j.judged_documents)))
    ag = j.agreement
    corr = ag.get("rate_correlation")
    notes = [tr("judge.intro", column=d.judge, where=where, K=integer(j.K)),
             tr("judge.agreement", corr=("-" if corr is None or corr != corr else num(corr, ".2f")),
                bias=num(ag["bias"], "+.4f"), differ=integer(ag["documents_differing"]), K=integer(j.K))]
    warnings = []
    lead = j.lead(kind)
    r = j.ppi[kind]
    if lead["basis"] != "judge":
        warnings.append(tr("judge.no_help_flat") if ag["documents_differing"] == 0 else
                        tr("judge.no_help_spread", reason=r.get("reason") or tr("judge.no_spread")))
    elif r["lam"] < 0.1:
        notes.append(tr("judge.no_help_weight", weight=num(r["lam"], ".2f")))
    elif j.population_size and r["effective_documents"] >= j.population_size:
        notes.append(tr("judge.worth_more", K=integer(j.K), M=integer(j.population_size),
                        weight=num(r["lam"], ".2f")))
    else:
        notes.append(tr("judge.worth", K=integer(j.K), worth=integer(round(r["effective_documents"])),
                        weight=num(r["lam"], ".2f")))
    plan = judge_plan(a)
    if plan is not None:
        notes.append(tr("judge.plan", target=num(plan["judge"].target, "g"), K_judge=integer(plan["judge"].K),
                        K_labels=integer(plan["labels_only"].K)))
    p = ag.get("size_p_value")
    if p is not None and p == p and not ag.get("size_flag"):
        notes.append(tr("judge.size_ok", p=num(p, ".2g")))
    elif p is not None and p == p and not j.warnings:   # flagged, under a design that draws by size
        notes.append(tr("judge.size_design", p=num(p, ".2g")))
    for w in j.warnings:
        warnings.append(tr("judge.size_warning", corr=num(ag["size_correlation"], "+.2f"), p=num(p, ".2g")))
    return notes, warnings


def judge_plan(a) -> dict | None:
    """With a judge and ``planning.half_width``: how many documents to label for that half-width of the
    declared mean, with the judge and without it (:func:`perdoc.study.judge.plan_judged`, the study's
    sample as the pilot, as ``perdoc plan --pilot-data ... --judge`` plans); None otherwise (a drawn
    sample, or a pilot that cannot plan)."""
    from ..errors import ParameterError
    from ..study.judge import JudgedSample, plan_judged
    target = a.study.planning.half_width if a.study.planning is not None else None
    if target is None or not isinstance(getattr(a, "judged", None), JudgedSample):
        return None
    try:
        return plan_judged(a.judged, target, estimand=a.study.estimand.kind, level=a.estimates.level,
                           population_size=a.judge.population_size)
    except ParameterError:
        return None


def show_judge(a, chart_of=None) -> None:
    """The judge-assisted estimate of a study whose params name a judge (nothing otherwise): heading,
    what the judge scored and how it agrees with the gold, the table of intervals, the chart of
    per-document rates (``chart_of(rates, agreement)``, :func:`perdoc.report.charts.judge_vs_gold`) and
    what qualifies it."""
    if getattr(a, "judge", None) is None:
        return
    show_text(tr("judge.title"), tag="h3")
    notes, warnings = judge_sentences(a)
    show_text(notes[0])
    show_table(judge_rows(a))
    for sentence in notes[1:]:
        note(sentence)
    for sentence in warnings:
        warning(sentence)
    if chart_of is not None:
        show_chart(chart_of(judge_document_rates(a.judged), a.judge.agreement))
