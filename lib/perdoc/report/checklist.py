"""The reporting checklist: what a per-document uncertainty report must state, filled from the data.

:func:`checklist` returns one :class:`Item` per point to report. Values are short plain-text strings
built from the table, the estimates and the parameters the analyst gives (population, design,
estimand and why, what is out of scope). An item whose required text was not given has status
``"missing"``, so a report can show the gap instead of hiding it; an item that does not apply (no
bootstrap was run) has status ``"not applicable"``; an item the data cannot give (no interval because
every document has the same rate, an ICC of 0/0 because every score is the same) has status
``"unavailable"`` and says why.

The first seven items are the seven points a report must disclose, in this order: population and
design (what was drawn, at which levels, with what fraction); the estimand and why; K, N and the
distribution of measurements per document; the interval method, resampling unit and effective degrees
of freedom; ICC and design effect as diagnostics, not substitutes; the share of documents at rate 0 or
1 and the distribution of document rates; what the uncertainty leaves out (the fixed index, the
retriever, the population of questions). Two more follow: degenerate bootstrap replicates and rows
excluded. The seven points, and the method behind them, come from the source :func:`method_source`
cites (:data:`METHOD_SOURCE`), which the report shows above the checklist.

Items are written in the report's language (:mod:`perdoc.i18n`; ``language=`` or the current one):
English or Spanish, with numbers formatted for the reader. Every sentence is a message of the catalogs
(``checklist.*`` keys); the library's own sentences that items quote (why an interval is missing, the
notes of the diagnostics, the default caveats, the kind of metric) are :class:`perdoc.messages.Message`
objects, found in the catalogs by their code (:func:`perdoc.i18n.message_text`), never by their English
words. ``key`` and ``status`` stay English in every language (they are identifiers, and ``status`` is
what JSON output carries); :func:`status_label` gives the word a reader sees, and
:func:`checklist_table` the table a report shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from . import i18n
from .i18n import N_, translate
from ..errors import ParameterError
from ..messages import Message
from ..methods.results import Estimates
from ..reading.table import DocTable, Exclusion

__all__ = ["Item", "checklist", "checklist_frame", "checklist_table", "STATUSES", "DEFAULT_OUT_OF_SCOPE",
           "every_score_same", "status_label", "out_of_scope_text", "source_text", "method_label",
           "reason_text", "exclusion_text", "design_text", "metric_text", "signed", "METHOD_SOURCE",
           "method_source"]

STATUSES = ("given", "missing", "not applicable", "unavailable", "approximate")

#: The published source of perdoc's method and of the checklist's seven points (an article in Spanish).
#: The README and the teaching notebooks cite the same author and title.
METHOD_SOURCE = {
    "author": "Jean Michael Estevez Alvarez",
    "title": "Calcular la incertidumbre sin réplicas artificiales: un procedimiento por documento",
    "series": "Incertidumbre en RAG",
    "part": 3,
    "date": "2026-10-11",   # published
}

#: The message key of the word a reader sees for each status (the status itself stays English).
_STATUS_KEYS = {"given": N_("checklist.status.given"), "missing": N_("checklist.status.missing"),
                "not applicable": N_("checklist.status.not_applicable"),
                "unavailable": N_("checklist.status.unavailable"),
                "approximate": N_("checklist.status.approximate")}

#: What the uncertainty leaves out when the checklist is given no caveats (``out_of_scope=None``).
DEFAULT_OUT_OF_SCOPE = (
    Message("caveat.checklist.index", "the index, held fixed (one chunking and one embedding of the corpus)"),
    Message("caveat.checklist.retriever", "the retriever configuration, held fixed (model, parameters, k)"),
    Message("caveat.checklist.questions", "the population of questions: uncertainty from which questions were "
            "asked is not included"),
)

#: Where a caveat comes from (the identifiers callers pass as ``out_of_scope_sources``), as the report names it.
_SOURCE_KEYS = {"default": N_("checklist.source.default"), "from the params file": N_("checklist.source.params"),
                "given": N_("checklist.source.given"), "source not given": N_("checklist.source.not_given")}

DESIGN_KEYS = {"population", "sampling", "population_size"}
ESTIMAND_KEYS = {"name", "why", "method"}

#: The estimand in words (its formula and the question it answers), by name.
_ESTIMAND_TEXT = {"micro": N_("checklist.estimand.micro"), "macro": N_("checklist.estimand.macro")}
_PRIMARY = {"micro": "cr2", "macro": "t"}

#: The names of the quantiles the diagnostics report (the others, p10 and the like, are shown as they are).
_QUANTILE_KEYS = {"min": N_("checklist.quantile.min"), "max": N_("checklist.quantile.max"),
                  "median": N_("checklist.quantile.median")}

#: The kinds of metric a loader tells apart (``DocTable.source["metric"]``).
_METRIC_KEYS = {"binary": N_("checklist.metric.binary"), "proportion": N_("checklist.metric.proportion"),
                "score": N_("checklist.metric.score")}


@dataclass(frozen=True)
class Item:
    """One checklist entry: ``key`` (stable id), ``item`` (what to report), ``value`` (plain text
    filled from the data and parameters) and ``status`` (given, missing, not applicable,
    unavailable: the data cannot give it, and the value says why; or approximate). ``key`` and
    ``status`` are English in every language; ``item`` and ``value`` are in the report's language."""

    key: str
    item: str
    value: str
    status: str

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES} (got {self.status!r})")


def _lang(language: str | None) -> str:
    return i18n.get_language() if language is None else i18n.check_language(language, "language")


def method_source(language: str | None = None) -> str:
    """One sentence citing the method's source (author, title, series, part and date), in the report's
    language; the English sentence says the article is in Spanish."""
    from datetime import date

    from babel.dates import format_date
    s, lang = METHOD_SOURCE, _lang(language)
    when = format_date(date.fromisoformat(s["date"]), "long", locale="es_ES" if lang == "es" else "en_GB")
    return translate(lang, "checklist.method_source", author=s["author"], title=s["title"],
                          part=str(s["part"]), series=s["series"], when=when)


def status_label(status: str, language: str | None = None) -> str:
    """The word a reader sees for a status (one of :data:`STATUSES`, which stay English in the JSON)."""
    if status not in _STATUS_KEYS:
        raise ValueError(f"status must be one of {STATUSES} (got {status!r})")
    return translate(_lang(language), _STATUS_KEYS[status])


def out_of_scope_text(text: str, language: str | None = None) -> str:
    """A caveat in the report's language: a default caveat (this module's or the params file's, a
    :class:`~perdoc.messages.Message`) from the catalogs; the analyst's own text as written."""
    if isinstance(text, Message):
        return i18n.message_text(text, _lang(language))
    return text


def source_text(source: str, language: str | None = None) -> str:
    """Where a caveat comes from ("default", "from the params file", "given", "source not given") in the
    report's language; any other source, the analyst's own, as written."""
    key = _SOURCE_KEYS.get(source)
    return source if key is None else translate(_lang(language), key)


def method_label(label, language: str | None = None) -> str | None:
    """An interval method's name in the report's language, from the catalogs
    (:mod:`perdoc.report._spanish`). ``label`` is the :class:`~perdoc.results.Interval` itself (its
    method must have a name: an error otherwise) or only its English label (``Interval.label``, as the
    JSON keeps it), which is looked up among the English names and returned as it is when none gives
    it; in English the label itself."""
    if label is None:
        return None
    lang = _lang(language)
    if not isinstance(label, str):
        if lang == "en":
            return label.label
        from ._spanish import method_name
        return method_name(label, lang)
    if lang == "en":
        return label
    from ._spanish import label_name
    return label_name(label, lang) or label


def reason_text(reason, language: str | None = None):
    """A sentence of the library (why an interval or a diagnostic is missing, why a headline was chosen,
    a simulation's recommendation) in the report's language, from the catalogs by its code
    (:func:`perdoc.i18n.message_text`: an error for a sentence without one). None and "" stay as they are."""
    if not reason:
        return reason
    return i18n.message_text(reason, _lang(language))


def exclusion_text(reason, language: str | None = None) -> str:
    """Why rows were excluded, in the report's language when the library gave the reason a code
    (:class:`~perdoc.messages.Message`); a reason given with the data (a table built by hand, an
    adapter's record-level reason naming its fields) is shown as written."""
    if isinstance(reason, Message):
        return i18n.message_text(reason, _lang(language))
    return "" if reason is None else str(reason)


def metric_text(source: dict, language: str | None = None) -> str:
    """The kind of metric the loader found or was told (``DocTable.source``), and why, in words."""
    lang = _lang(language)
    kind, reason = source.get("metric", ""), source.get("metric_reason", "")
    how = N_("checklist.metric.declared") if source.get("metric_declared") else N_("checklist.metric.inferred")
    kind_key = _METRIC_KEYS.get(kind)
    kind = kind if kind_key is None else translate(lang, kind_key)
    return translate(lang, "checklist.metric", kind=kind, how=translate(lang, how),
                          reason=reason_text(reason, lang) or "")


def signed(x, spec: str = ".4f", language: str | None = None) -> str:
    """A difference with its sign always shown (``+0.0084`` / ``+0,0084``): :func:`perdoc.i18n.num`
    with a ``+`` flag, keeping the plus sign in Spanish too."""
    return i18n.signed(x, spec, lang=_lang(language))


def input_rows(analysis) -> list[tuple[str, str]]:
    """The design section's rows about the input, in the current language: the file, its size, format
    and SHA-256; or, for a table of a database (``data.backend``), the table, the URL without its
    secrets and the SHA-256 of the per-document table aggregated from it (``documents.csv``)."""
    from .i18n import integer, tr
    info = analysis.input
    if info.get("backend"):
        b = info["backend"]
        return [(tr("input.table"), tr("input.table_text", table=b["table"], url=b["url"])),
                (tr("input.table_sha256"),
                 tr("input.table_sha256_text", sha256=info.get("documents_sha256") or "—"))]
    return [(tr("input.file"),
             f"{info['file']} ({integer(info['bytes'])} bytes, {info['format']})"),
            (tr("input.file_sha256"), info["sha256"])]


def design_text(analysis, language: str | None = None) -> str:
    """The sampling design in words, with the sampling fraction at each stage or in each stratum, in the
    report's language (in English :func:`perdoc.report.design_description`, word for word)."""
    lang = _lang(language)
    g, est, K = analysis.study.design, analysis.estimates, analysis.table.K
    if g.sampling == "census":
        return translate(lang, "checklist.design.census", K=K)
    if g.sampling == "drawn":
        return _drawn_text(est.design or {}, K, lang)
    if g.sampling == "srs":
        M = est.population_size
        if M is None:
            return translate(lang, "checklist.design.srs", K=K)
        return translate(lang, "checklist.design.srs_of", K=K, M=M, fraction=K / M)
    info = est.design or {}
    if g.sampling == "stratified":
        parts = [translate(lang, "checklist.design.stratum", stratum=str(h), k=v["k_h"], M=v["M_h"],
                           fraction=v["fraction"]) for h, v in info["strata"].items()]
        return translate(lang, "checklist.design.stratified", column=str(g.strata_column),
                         strata="; ".join(parts))
    return translate(lang, "checklist.design.two_stage", K=K, M=info["M"], f1=info["f1"],
                     sampled=info["chunks_sampled"], chunks=info["chunks_in_population"], f2_min=info["f2_min"],
                     f2_max=info["f2_max"], f2_mean=info["f2_mean"], whole=info["documents_fully_enumerated"])


#: A drawn sample's design (``perdoc sample --design``) in words.
_DRAWN_KEYS = {"srs": N_("checklist.drawn.srs"), "stratified": N_("checklist.drawn.stratified"),
               "certainty": N_("checklist.drawn.certainty")}
_DRAWN_OTHER = N_("checklist.drawn.other")


def _drawn_text(info: dict, K: int, lang: str) -> str:
    """A drawn sample's design in words (from the manifest and its JSON), as
    :func:`perdoc.report.drawn_description` writes it in English."""
    design = info.get("design")
    if design == "pps":
        what = (translate(lang, "checklist.drawn.pps_with") if info.get("with_replacement") else
                translate(lang, "checklist.drawn.pps_without"))
    else:
        what = translate(lang, _DRAWN_KEYS.get(design, _DRAWN_OTHER))
    M = info.get("documents_in_frame")
    frame = translate(lang, "checklist.drawn.frame", M=M) if M else ""
    text = translate(lang, "checklist.drawn.head", what=what, K=K, frame=frame)
    if info.get("take"):
        text += translate(lang, "checklist.drawn.take", take=info["take"])
    if info.get("seed") is not None:
        text += translate(lang, "checklist.drawn.seed", seed=str(info["seed"]))
    strata = info.get("strata") or {}
    parts = [translate(lang, "checklist.drawn.stratum", stratum=str(h), kind=reason_text(v.get("kind", ""), lang),
                       drawn=v.get("drawn", "?")) for h, v in strata.items()]
    if parts:
        text += translate(lang, "checklist.drawn.strata", strata="; ".join(parts))
    return text


# ---------------------------------------------------------------------------------- helpers
def _text(x) -> str | None:
    """A parameter text, whitespace-normalised; None when absent or blank. A library sentence (a
    :class:`~perdoc.messages.Message`, such as a default caveat) is kept as it is, with its code."""
    if x is None:
        return None
    if isinstance(x, Message):
        return x if x.strip() else None
    t = " ".join(str(x).split())
    return t or None


def _num(x, digits: int = 3, lang: str = "en") -> str:
    if x is None:
        return translate(lang, "checklist.not_available_short")
    x = float(x)
    if not math.isfinite(x):
        return translate(lang, "checklist.not_available_short")
    if x.is_integer() and abs(x) < 1e15:
        return i18n.integer(x, lang=lang)
    return i18n.num(x, f".{digits}f", lang=lang)


def _quantiles(q: dict, digits: int, lang: str = "en") -> str:
    def name(k):
        return translate(lang, _QUANTILE_KEYS[k]) if k in _QUANTILE_KEYS else k
    return ", ".join(f"{name(k)} {_num(v, digits, lang)}" for k, v in q.items())


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


def _missing(parts: list[str], lang: str = "en") -> str:
    return translate(lang, "checklist.not_given_list", items=", ".join(parts))


# ---------------------------------------------------------------------------------- checklist
def checklist(table: DocTable, estimates: Estimates, *, design: dict, estimand: dict,
              out_of_scope: list[str] | None = None,
              exclusions: Iterable[Exclusion] | None = None,
              out_of_scope_sources: list[str] | None = None,
              evidence: dict | None = None,
              simulation=None,
              language: str | None = None,
              judge=None) -> list[Item]:
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
    simulation : perdoc.simulate.SimulationResult, optional
        This study's coverage simulation: the ICC item then quotes what the Wald interval on the
        effective n covered here, beside the reference study's figures.
    language : str, optional
        ``"en"`` or ``"es"`` (default: the current report language, :func:`perdoc.i18n.get_language`).
    judge : perdoc.study.judge.JudgeEstimates, optional
        An automatic judge's part in the estimate (params ``data.judge``): a last item says what it
        scored, how it agrees with the gold, its weight and what it is worth in labelled documents.
    """
    lang = _lang(language)
    design = _check_keys(design, DESIGN_KEYS, "design")
    estimand = _check_keys(estimand, ESTIMAND_KEYS, "estimand")
    diag = estimates.diagnostics
    items: list[Item] = [_population_item(table, estimates, design, lang)]
    name = _estimand_name(estimand)
    items.append(_estimand_item(estimates, name, _text(estimand.get("why")), lang))
    items.append(_sample_size_item(table, diag, lang))
    items.append(_method_item(estimates, name, _text(estimand.get("method")), evidence, lang))
    items.append(_icc_item(table, diag, simulation, lang))
    items.append(_rates_item(diag, lang))
    items.append(_out_of_scope_item(out_of_scope, out_of_scope_sources, lang))
    items.append(_bootstrap_item(estimates, lang))
    items.append(_exclusions_item(table, exclusions, lang))
    if judge is not None:
        items.append(_judge_item(judge, estimand.get("name") or "micro", lang))
    return items


def _judge_item(judge, kind: str, lang: str) -> Item:
    """The judge's item (only with a judge): what it scored, its agreement with the gold on the labelled
    documents, its weight, what it is worth, and the size warning when there is one."""
    n_, f_ = _words(lang)
    r, ag = judge.ppi[kind], judge.agreement
    corr = ag.get("rate_correlation")
    value = translate(lang, "checklist.judge.value", judged=n_(judge.judged_documents), K=n_(judge.K),
                      corr="-" if corr is None or corr != corr else f_(corr, ".2f"), bias=f_(ag["bias"], "+.4f"),
                      weight=f_(r["lam"], ".2f"))
    if judge.lead(kind)["basis"] != "judge":
        if ag["documents_differing"] == 0:
            value += translate(lang, "checklist.judge.no_interval")
        else:
            value += translate(lang, "checklist.judge.no_spread")
    if judge.warnings:
        value += translate(lang, "checklist.judge.size_warning")
    return Item("judge", translate(lang, "checklist.judge.item"), value, "given")



def _words(lang: str):
    """The number helpers of every item: a whole number and a formatted number in the report's language."""
    def n_(x) -> str:
        return i18n.integer(x, lang=lang)

    def f_(x, spec) -> str:
        return i18n.num(x, spec, lang=lang)
    return n_, f_


def _population_item(table: DocTable, estimates: Estimates, design: dict, lang: str) -> Item:
    """Item 1: the population, how the K documents were drawn, and at what sampling fraction."""
    population = _text(design.get("population"))
    sampling = _text(design.get("sampling"))
    size = _size_text(table.K, estimates, design.get("population_size", None), lang)
    gaps = [name for name, v in (("population", population), ("sampling", sampling)) if v is None]
    value = "; ".join([translate(lang, "checklist.population.population",
                                 population=population or translate(lang, "checklist.population.not_given")),
                       translate(lang, "checklist.population.sampling",
                                 sampling=sampling or translate(lang, "checklist.not_given_caps")), size])
    return Item("population_design", translate(lang, "checklist.population.item"), value,
                "missing" if gaps else "given")


def _size_text(K: int, estimates: Estimates, M, lang: str) -> str:
    """M, K and the sampling fraction K/M (or why there is none), with M checked against the estimates."""
    n_, f_ = _words(lang)
    if M is None:
        M = estimates.population_size
    elif estimates.population_size is not None and int(M) != estimates.population_size:
        raise ParameterError(f"design population_size M = {M} differs from the M = "
                             f"{estimates.population_size} the estimates were computed with")
    drawn = (estimates.design or {}).get("sampling") == "drawn"
    if drawn:   # a sample drawn by perdoc sample: the manifest's probabilities, not one fraction
        Mf = (estimates.design or {}).get("documents_in_frame")
        frame = translate(lang, "checklist.size.drawn_frame", M=n_(Mf)) if Mf else ""
        return translate(lang, "checklist.size.drawn", frame=frame, K=n_(K))
    if M is None:
        return translate(lang, "checklist.size.no_M", K=n_(K))
    if isinstance(M, bool) or not float(M).is_integer() or int(M) < K:
        raise ParameterError(f"design population_size must be a whole number >= K = {K} (got {M!r})")
    M = int(M)
    size = translate(lang, "checklist.size.M", M=n_(M), K=n_(K), fraction=f_(K / M, '.3g'))
    if estimates.population_size is None:
        size += translate(lang, "checklist.size.no_fpc")
    return size


def _estimand_name(estimand: dict) -> str | None:
    """The estimand's name in lower case, ``"micro"`` or ``"macro"``; None when not given."""
    name = _text(estimand.get("name"))
    if name is not None:
        name = name.lower()
        if name not in _ESTIMAND_TEXT:
            raise ParameterError(f"estimand name must be 'micro' or 'macro' (got {estimand.get('name')!r})")
    return name


def _estimand_item(estimates: Estimates, name: str | None, why: str | None, lang: str) -> Item:
    """Item 2: the estimand (micro or macro) with its value, and why it answers the question."""
    _, f_ = _words(lang)
    if name is None:
        gaps = [translate(lang, "checklist.estimand.gap")] + ([] if why else [translate(lang, "checklist.why.gap")])
        value = translate(lang, "checklist.estimand.both", missing=_missing(gaps, lang),
                          micro=f_(estimates.micro_estimate, '.4f'), macro=f_(estimates.macro_estimate, '.4f'))
    else:
        est = estimates.micro_estimate if name == "micro" else estimates.macro_estimate
        value = translate(lang, "checklist.estimand.value", text=translate(lang, _ESTIMAND_TEXT[name]),
                          estimate=f_(est, '.4f'), why=why or translate(lang, "checklist.not_given_caps"))
    return Item("estimand", translate(lang, "checklist.estimand.item"), value,
                "given" if name and why else "missing")


def _sample_size_item(table: DocTable, diag, lang: str) -> Item:
    """Item 3: K, N and the distribution of measurements per document."""
    n_, f_ = _words(lang)
    value = translate(lang, "checklist.sample_size.value", K=n_(table.K), N=_num(table.N, 3, lang),
                      quantiles=_quantiles(diag.n_quantiles, 1, lang), share=f_(diag.max_share, '.1%'))
    return Item("sample_size", translate(lang, "checklist.sample_size.item"), value, "given")


def _icc_item(table: DocTable, diag, simulation, lang: str) -> Item:
    """Item 5: the ICC and design effect, as diagnostics and not as substitutes."""
    _, f_ = _words(lang)
    N = table.N
    same = every_score_same(table)
    if same is not None:
        value = translate(lang, "checklist.icc.same_score", score=f_(same, '.4g'))
        status = "unavailable"
    elif math.isfinite(diag.icc) and math.isfinite(diag.deff):
        if diag.deff > 0:
            n_eff = translate(lang, "checklist.icc.n_eff", n_eff=_num(diag.n_eff, 1, lang), N=_num(N, 3, lang))
        else:
            n_eff = translate(lang, "checklist.icc.no_n_eff", N=_num(N, 3, lang))
        value = translate(lang, "checklist.icc.value", icc=f_(diag.icc, '.3f'), deff=f_(diag.deff, '.2f'),
                          n_eff=n_eff, realised=_num(diag.deff_realised, 2, lang),
                          fragile=translate(lang, "checklist.icc.fragile_n_eff"))
        value += _own_wald_eff_n(simulation, lang)
        status = "given"
    else:
        why_na = ("; ".join(reason_text(x, lang) for x in diag.notes)
                  or translate(lang, "checklist.icc.not_computable"))
        value = translate(lang, "checklist.not_available_because", why=why_na)
        status = "missing"
    return Item("icc_deff", translate(lang, "checklist.icc.item"), value, status)


def _rates_item(diag, lang: str) -> Item:
    """Item 6: the share of documents at rate 0 and 1, and the distribution of document rates."""
    _, f_ = _words(lang)
    value = translate(lang, "checklist.rates.value", rate_0=f_(diag.frac_rate_0, '.1%'),
                      rate_1=f_(diag.frac_rate_1, '.1%'), quantiles=_quantiles(diag.rate_quantiles, 3, lang))
    return Item("rates", translate(lang, "checklist.rates.item"), value, "given")


def _out_of_scope_item(out_of_scope, out_of_scope_sources, lang: str) -> Item:
    """Item 7: what the uncertainty leaves out (the defaults when not given), each after its source."""
    if out_of_scope is None:
        value = (_join_sentences(out_of_scope_text(t, lang) for t in DEFAULT_OUT_OF_SCOPE)
                 + translate(lang, "checklist.out_of_scope.defaults"))
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
            texts = [f"[{source_text(_text(src) or 'source not given', lang)}] {out_of_scope_text(t, lang)}"
                     for t, src in zip((_text(x) for x in out_of_scope), sources) if t]
        else:
            texts = [out_of_scope_text(t, lang) for t in (_text(x) for x in out_of_scope) if t]
        value = _join_sentences(texts) if texts else translate(lang, "checklist.not_given")
        status = "given" if texts else "missing"
    return Item("out_of_scope", translate(lang, "checklist.out_of_scope.item"), value, status)


def _bootstrap_item(estimates: Estimates, lang: str) -> Item:
    """Item 8: how many bootstrap replicates were degenerate, and the seed (not applicable without one)."""
    n_, f_ = _words(lang)
    draws = estimates.bootstrap.get("draws") if estimates.bootstrap else None
    degenerate = translate(lang, "checklist.bootstrap.item")
    if draws is None or draws.replicates == 0:
        return Item("bootstrap_degenerate", degenerate, translate(lang, "checklist.bootstrap.none"),
                    "not applicable")
    n_deg = int(draws.degenerate.sum())
    value = translate(lang, "checklist.bootstrap.value", degenerate=n_(n_deg), replicates=n_(draws.replicates),
                      share=f_(draws.degenerate_fraction, '.1%'))
    if n_deg == draws.replicates:
        value += translate(lang, "checklist.bootstrap.all_degenerate")
    seed = translate(lang, "checklist.bootstrap.no_seed") if estimates.seed is None else str(estimates.seed)
    value += translate(lang, "checklist.bootstrap.seed", seed=seed)
    return Item("bootstrap_degenerate", degenerate, value, "given")


def _exclusions_item(table: DocTable, exclusions, lang: str) -> Item:
    """Item 9: the rows excluded and why (missing when a reason is not given)."""
    n_, _ = _words(lang)
    excl = tuple(table.exclusions if exclusions is None else exclusions)
    excluded = translate(lang, "checklist.exclusions.item")
    if not excl:
        return Item("exclusions", excluded, translate(lang, "checklist.exclusions.none"), "given")
    total = sum(int(e.rows) for e in excl)
    no_reason = translate(lang, "checklist.exclusions.no_reason")
    parts = [f"{n_(int(e.rows))} ({exclusion_text(_text(e.reason), lang) or no_reason})" for e in excl]
    unexplained = any(_text(e.reason) is None for e in excl)
    value = translate(lang, "checklist.exclusions.value", rows=n_(total), reasons="; ".join(parts))
    return Item("exclusions", excluded, value, "missing" if unexplained else "given")


def _own_wald_eff_n(simulation, lang: str) -> str:
    """What the Wald interval on the effective n covered in this study's own simulation (or nothing)."""
    m = (getattr(simulation, "methods", None) or {}).get("micro.wald_eff_n")
    cov = None if m is None else m.get("coverage")
    if cov is None or not math.isfinite(cov):
        return ""
    return translate(lang, "checklist.icc.own_simulation", reps=i18n.integer(simulation.reps, lang=lang),
                     k=str(simulation.k), coverage=i18n.pct(cov, 1, lang=lang))


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


#: How an interval's resampling unit is described, by ``Interval.resampling_unit`` (any other: analytic).
_UNIT_KEYS = {"document": N_("checklist.method.unit.document"),
              "document (weights)": N_("checklist.method.unit.weights")}
_UNIT_ANALYTIC = N_("checklist.method.unit.analytic")


def _method_part(estimates: Estimates, estimand: str, m: str, lang: str) -> tuple[str, bool]:
    """One estimand's part of the interval-method item, and whether its interval is unavailable."""
    try:
        iv = estimates.interval(estimand, m)
    except KeyError:
        raise ParameterError(f"estimand method {m!r} was not computed for {estimand} "
                             f"(available: {', '.join(i.method for i in estimates.intervals if i.estimand == estimand)})") from None
    level = i18n.num(estimates.level, ".0%", lang=lang)
    if iv.ci is not None:
        ci = i18n.interval(iv.ci.low, iv.ci.high, ".4f", lang=lang)
        shown = translate(lang, "checklist.method.interval", level=level, ci=ci)
    else:
        why = reason_text(iv.reason, lang) or translate(lang, "checklist.not_available")
        shown = translate(lang, "checklist.method.no_interval", level=level, why=why)
    if iv.df is not None and math.isfinite(iv.df):
        df = translate(lang, "checklist.method.df", df=i18n.num(iv.df, ".2f", lang=lang))
    else:
        df = translate(lang, "checklist.method.no_df")
    unit = translate(lang, _UNIT_KEYS.get(iv.resampling_unit, _UNIT_ANALYTIC))
    return f"{estimand}: {method_label(iv, lang)}, {shown}; {unit}; {df}", iv.ci is None


def _evidence_text(evidence: dict, level: str, lang: str) -> tuple[str, bool]:
    """What checked the reported method, for the interval-method item, and whether it is approximate."""
    where = {"census": N_("checklist.method.where.census"),
             "pseudo-population": N_("checklist.method.where.pseudo")}.get(evidence.get("basis"))
    cov = evidence.get("coverage")
    if where is None:
        return translate(lang, "checklist.method.not_checked"), False
    if cov is None:
        return "", False
    checked = translate(lang, "checklist.method.checked", where=translate(lang, where),
                        coverage=i18n.num(cov, ".3f", lang=lang),
                        mc_se=i18n.num(evidence.get("mc_se") or 0, ".3f", lang=lang),
                        reps=i18n.integer(evidence.get("reps") or 0, lang=lang), k=str(evidence.get("k")))
    if evidence.get("approximate"):
        return translate(lang, "checklist.method.approximate", level=level, checked=checked), True
    return f" | {checked}", False


def _method_item(estimates: Estimates, name: str | None, method: str | None, evidence: dict | None = None,
                 lang: str = "en") -> Item:
    """Interval method, resampling unit and effective degrees of freedom (K stated apart)."""
    parts = []
    unavailable = False
    for estimand in ([name] if name else ["micro", "macro"]):
        if method and name:
            m = method
        else:
            from ..study.policy import default_method
            m = default_method(estimates, estimand) if estimates.design is None else _PRIMARY[estimand]
        part, missing = _method_part(estimates, estimand, m, lang)
        parts.append(part)
        unavailable = unavailable or missing
    if estimates.replicates:
        boot = translate(lang, "checklist.method.bootstrap",
                         replicates=i18n.integer(estimates.replicates, lang=lang))
    else:
        boot = translate(lang, "checklist.method.no_bootstrap")
    value = " | ".join(parts) + translate(lang, "checklist.method.K", K=i18n.integer(estimates.K, lang=lang),
                                          bootstrap=boot)
    status = "unavailable" if unavailable else "given"
    if evidence is not None:
        level = i18n.num(estimates.level, ".0%", lang=lang)
        text, approximate = _evidence_text(evidence, level, lang)
        value += text
        if approximate and not unavailable:
            status = "approximate"
    if unavailable:
        value = translate(lang, "checklist.method.unavailable", value=value)
    return Item("interval_method", translate(lang, "checklist.method.item"), value, status)


def checklist_frame(items: Iterable[Item]) -> pd.DataFrame:
    """The checklist as a DataFrame with columns key, item, value, status (one row per item)."""
    return pd.DataFrame([{"key": i.key, "item": i.item, "value": i.value, "status": i.status}
                         for i in items], columns=["key", "item", "value", "status"])


def checklist_table(items: Iterable[Item], language: str | None = None) -> pd.DataFrame:
    """The checklist as a report shows it: in English :func:`checklist_frame`; in Spanish the items
    numbered, with Spanish column headers and status words (the statuses themselves stay English)."""
    lang = _lang(language)
    items = list(items)
    if lang != "es":
        return checklist_frame(items)
    return pd.DataFrame([{"n.\u00ba": str(k), "qué informar": i.item, "en este estudio": i.value,
                          "estado": status_label(i.status, lang)} for k, i in enumerate(items, 1)],
                        columns=["n.\u00ba", "qué informar", "en este estudio", "estado"])
