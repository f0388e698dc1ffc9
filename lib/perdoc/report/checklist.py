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
English or Spanish, with numbers formatted for the reader. ``key`` and ``status`` stay English in every
language (they are identifiers, and ``status`` is what JSON output carries); :func:`status_label` gives
the word a reader sees, and :func:`checklist_table` the table a report shows.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from . import i18n
from ..errors import ParameterError
from ..study.params import DEFAULT_OUT_OF_SCOPE as PARAMS_OUT_OF_SCOPE
from ..methods.results import Estimates
from ..reading.table import DocTable, Exclusion

__all__ = ["Item", "checklist", "checklist_frame", "checklist_table", "STATUSES", "DEFAULT_OUT_OF_SCOPE",
           "every_score_same", "status_label", "out_of_scope_text", "source_text", "method_label",
           "reason_text", "design_text", "metric_text", "signed", "OUT_OF_SCOPE_ES", "METHOD_SOURCE",
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

#: What a reader of a Spanish report sees for each status (the status itself stays English).
STATUS_ES = {"given": "indicado", "missing": "falta", "not applicable": "no aplica",
             "unavailable": "no disponible", "approximate": "aproximado"}

DEFAULT_OUT_OF_SCOPE = (
    "the index, held fixed (one chunking and one embedding of the corpus)",
    "the retriever configuration, held fixed (model, parameters, k)",
    "the population of questions: uncertainty from which questions were asked is not included",
)

#: Spanish text of every default caveat, this module's and the params file's
#: (:data:`perdoc.params.DEFAULT_OUT_OF_SCOPE`), keyed by the English text, which stays as it is.
OUT_OF_SCOPE_ES = {
    DEFAULT_OUT_OF_SCOPE[0]: "el índice, que se mantiene fijo (una sola fragmentación y una sola representación "
                             "vectorial del corpus)",
    DEFAULT_OUT_OF_SCOPE[1]: "la configuración del recuperador, que se mantiene fija (modelo, parámetros, k)",
    DEFAULT_OUT_OF_SCOPE[2]: "la población de preguntas: no se incluye la incertidumbre debida a qué preguntas "
                             "se hicieron",
    PARAMS_OUT_OF_SCOPE[0]: "El índice es fijo: la fragmentación, las representaciones vectoriales y los ajustes "
                            "del índice no se sortean, así que los intervalos no dicen nada sobre otra "
                            "construcción del índice.",
    PARAMS_OUT_OF_SCOPE[1]: "El recuperador y su configuración son fijos: los intervalos no cubren otros "
                            "recuperadores, otros parámetros ni otras versiones.",
    PARAMS_OUT_OF_SCOPE[2]: "Las preguntas (consultas) se toman como dadas: la población de preguntas que harían "
                            "los usuarios no se muestrea, así que los intervalos no cubren la variación de una "
                            "pregunta a otra más allá de estas.",
}

#: Where a caveat comes from, as the report names it.
_SOURCES_ES = {"default": "por defecto", "from the params file": "del archivo de parámetros", "given": "indicado",
               "source not given": "origen no indicado"}

DESIGN_KEYS = {"population", "sampling", "population_size"}
ESTIMAND_KEYS = {"name", "why", "method"}

_ESTIMAND_TEXT = {
    "micro": "micro mean R = sum s_d / sum n_d, the rate of a measurement drawn at random "
             "(large documents weigh more)",
    "macro": "macro mean r\u0304 = mean of the document rates s_d / n_d, the rate of a typical "
             "document (each document counts once)",
}
_ESTIMAND_TEXT_ES = {
    "micro": "media micro R = \u03a3 s_d / \u03a3 n_d, la tasa de una medición elegida al azar "
             "(los documentos grandes pesan más)",
    "macro": "media macro r\u0304 = media de las tasas por documento s_d / n_d, la tasa de un documento "
             "típico (cada documento cuenta una vez)",
}
_PRIMARY = {"micro": "cr2", "macro": "t"}

#: The study the checklist quotes on N/DEFF: the coverage of a Wald interval on the effective n in the
#: simulations of the source article on its census (docs/methods.md, "Published figures").
FRAGILE_N_EFF = ("diagnostics only, not a substitute for the document-level variance: treating N/DEFF "
                 "as that many independent cases is itself a fragile approximation (in the ANEEL\u2013TAESA "
                 "study behind perdoc's methods, a simulation on a census of about 1,300 regulatory documents "
                 "with 5,000 samples at K = 20, a Wald interval on the effective n covered about 89% with "
                 "K = 20 documents and 74% with K = 5, against 95% nominal)")
FRAGILE_N_EFF_ES = ("solo como diagnóstico, no en lugar de la varianza calculada por documentos: tomar N/DEFF "
                    "como si fueran otros tantos casos independientes es a su vez una aproximación frágil (en "
                    "el estudio ANEEL\u2013TAESA en que se basan los métodos de perdoc, una simulación sobre un "
                    "censo de unos 1300 documentos regulatorios con 5000 muestras de K = 20, un intervalo de "
                    "Wald con n efectivo cubrió en torno al 89\u00a0% con K = 20 documentos y al 74\u00a0% con "
                    "K = 5, frente al 95\u00a0% nominal)")

_QUANTILE_ES = {"min": "mín.", "max": "máx.", "median": "mediana"}


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
    if lang == "es":
        return (f"Los siete primeros puntos, y el método de este informe, siguen a {s['author']}, "
                f"«{s['title']}», parte {s['part']} de la serie «{s['series']}», {when}.")
    return (f"The first seven items, and the method of this report, follow {s['author']}, "
            f"\u201c{s['title']}\u201d (in Spanish), part {s['part']} of the series "
            f"\u201c{s['series']}\u201d, {when}.")


def status_label(status: str, language: str | None = None) -> str:
    """The word a reader sees for a status: the status itself in English, its Spanish in Spanish."""
    return STATUS_ES.get(status, status) if _lang(language) == "es" else status


def out_of_scope_text(text: str, language: str | None = None) -> str:
    """A caveat in the report's language: a default caveat (this module's or the params file's) in
    Spanish in a Spanish report; the analyst's own text as written."""
    if _lang(language) == "es":
        return OUT_OF_SCOPE_ES.get(text, text)
    return text


def source_text(source: str, language: str | None = None) -> str:
    """Where a caveat comes from ("default", "from the params file") in the report's language."""
    if _lang(language) == "es":
        return _SOURCES_ES.get(source, source)
    return source


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


_REASONS_ES = {
    "defined for a binary (0/1) metric only": "definido solo para una métrica binaria (0/1)",
    "defined for metrics bounded in [0, 1]": "definido solo para métricas acotadas en [0; 1]",
    "defined for differences of two metrics bounded in [0, 1]":
        "definido solo para diferencias de dos métricas acotadas en [0; 1]",
    "zero standard error: no interval": "error estándar nulo: sin intervalo",
    "degrees of freedom undefined for this sample": "grados de libertad no definidos en esta muestra",
    "effective n undefined (design effect not positive or not available)":
        "n efectivo no definido (efecto de diseño no positivo o no disponible)",
    "needs the sums of squared scores (q)": "requiere las sumas de los cuadrados de las puntuaciones (q)",
    "zero chunk-level variance: every score is the same":
        "varianza nula entre fragmentos: todas las puntuaciones son iguales",
    "zero variance of the linearised difference": "varianza nula de la diferencia linealizada",
    "fewer than 2 documents scored by both systems, or zero variance":
        "menos de 2 documentos evaluados con ambos sistemas, o varianza nula",
    "the interval is unbounded on one side": "el intervalo no está acotado por un lado",
    "not available": "no disponible",
    "not computed": "no calculado",
    "ICC and design effect need the sums of squared scores (q)":
        "la CCI y el efecto de diseño requieren las sumas de los cuadrados de las puntuaciones (q)",
    "ICC undefined: every document has a single measurement":
        "CCI no definida: cada documento tiene una sola medición",
    "recommended by the simulation": "recomendado por la simulación",
    "qualifies in the simulation": "cumple en la simulación",
    "no method checked by the simulation gave this sample an interval":
        "ningún método comprobado por la simulación dio un intervalo en esta muestra",
    "not checked by simulation: no census in the params":
        "sin comprobar por simulación: no hay censo en los parámetros",
}
_REASON_PATTERNS_ES = (
    (re.compile(r"zero variance: every document has the same rate \(([^)]*)\), so the documents carry no "
                r"information about sampling error"),
     lambda m: (f"varianza nula: todos los documentos tienen la misma tasa ({i18n.numbers_in(m.group(1), 'es')}), "
                "así que los documentos no informan sobre el error de muestreo")),
    (re.compile(r"every bootstrap replicate is degenerate \(all drawn documents share one rate(, or its micro "
                r"mean is 0 or 1)?\)"),
     lambda m: ("todas las réplicas bootstrap son degeneradas (todos los documentos sorteados comparten una "
                "tasa" + (", o su media micro es 0 o 1" if m.group(1) else "") + ")")),
    (re.compile(r"the logit scale is undefined at a rate of 0 or 1 \(the micro mean is ([^)]*)\): no interval"),
     lambda m: (f"la escala logit no está definida en una tasa de 0 o 1 (la media micro es "
                f"{i18n.numbers_in(m.group(1), 'es')}): sin intervalo")),
    (re.compile(r"the atanh scale is undefined at a difference of -1 or 1 \(the difference is ([^)]*)\): "
                r"no interval"),
     lambda m: (f"la escala atanh no está definida en una diferencia de -1 o 1 (la diferencia es "
                f"{i18n.numbers_in(m.group(1), 'es')}): sin intervalo")),
)


_QUALIFY_TAIL_ES = {
    "": "",
    "; qualifying methods whose intervals left the metric's range rank after it":
        "; los métodos que cumplen pero cuyos intervalos salieron del rango de la métrica van detrás",
}
_REASON_PATTERNS_ES += (
    (re.compile(r"the narrowest qualifying method that gave this sample an interval \(the recommended (\S+) did "
                r"not\)"),
     lambda m: (f"el método más estrecho de los que cumplen que dio intervalo en esta muestra (el recomendado, "
                f"{m.group(1)}, no lo dio)")),
    (re.compile(r"no method reached (\S+) in the simulation; this one came closest"),
     lambda m: f"ningún método alcanzó el {i18n.numbers_in(m.group(1), 'es')} en la simulación; este fue el que "
               "más se acercó"),
    (re.compile(r"no (micro|macro) method applies under this design"),
     lambda m: f"ningún método {m.group(1)} es aplicable con este diseño"),
    (re.compile(r"(\S+): coverage (\S+) \(Monte Carlo se (\S+)\) is within 2 Monte Carlo se of the nominal (\S+), "
                r"and its mean width (\S+) is the smallest of the (\d+) qualifying (micro|macro) method\(s\)"
                r"(; every qualifying method left the metric's range in some samples \(this one in (\S+)\)|"
                r"; qualifying methods whose intervals left the metric's range rank after it)?"),
     lambda m: (f"{m.group(1)}: su cobertura, {i18n.numbers_in(m.group(2), 'es')} (error estándar de Monte Carlo "
                f"{i18n.numbers_in(m.group(3), 'es')}), queda a menos de 2 errores estándar de Monte Carlo del "
                f"nivel nominal, {i18n.numbers_in(m.group(4), 'es')}, "
                + (f"y su amplitud media, {i18n.numbers_in(m.group(5), 'es')}, es la menor de los {m.group(6)} "
                   f"métodos {m.group(7)} que cumplen" if m.group(6) != "1" else
                   f"y es el único método {m.group(7)} que cumple (amplitud media "
                   f"{i18n.numbers_in(m.group(5), 'es')})")
                + ("" if not m.group(8) else _QUALIFY_TAIL_ES.get(m.group(8)) or
                   f"; todos los métodos que cumplen salieron del rango de la métrica en alguna muestra (este, en el "
                   f"{i18n.numbers_in(m.group(9) or '', 'es')})"))),
    (re.compile(r"no (micro|macro) method reaches the nominal (\S+) within Monte Carlo error \(coverage >= level - "
                r"2 se\) on samples like these; the best available is (\S+) with coverage (\S+) \(Monte Carlo se "
                r"(\S+)\): (its intervals are too narrow, so sample more documents or report it as approximate|"
                r"it gave no interval in (\S+) of the samples \(samples without spread: every document at the same "
                r"rate\), so sample more documents)"),
     lambda m: (f"ningún método {m.group(1)} alcanza el nivel nominal, {i18n.numbers_in(m.group(2), 'es')}, "
                "dentro del error "
                "de Monte Carlo (cobertura >= nivel - 2 errores estándar) en muestras como estas; el mejor disponible "
                f"es {m.group(3)}, con una cobertura de {i18n.numbers_in(m.group(4), 'es')} (error estándar de Monte "
                f"Carlo {i18n.numbers_in(m.group(5), 'es')}): "
                + ("sus intervalos son demasiado estrechos, así que conviene sortear más documentos o presentarlo "
                   "como aproximado" if m.group(7) is None else
                   f"no dio intervalo en el {i18n.numbers_in(m.group(7), 'es')} de las muestras (muestras sin "
                   "dispersión: todos los documentos con la misma tasa), así que conviene sortear más documentos"))),
)


def reason_text(reason: str | None, language: str | None = None) -> str | None:
    """Why an interval (or a diagnostic) is missing, in the report's language; a reason this module
    does not know is returned as it is."""
    if reason is None or _lang(language) != "es":
        return reason
    if reason in _REASONS_ES:
        return _REASONS_ES[reason]
    for pattern, repl in _REASON_PATTERNS_ES:
        m = pattern.fullmatch(reason)
        if m:
            return repl(m)
    return reason


_METRIC_ES = {"binary": "binaria", "proportion": "proporción", "score": "puntuación"}
_METRIC_REASON_ES = {
    "every score is 0 or 1": "todas las puntuaciones son 0 o 1",
    "scores lie in [0, 1] but are not all 0/1": "las puntuaciones están en [0; 1] pero no todas son 0 o 1",
    "some score lies outside [0, 1]": "alguna puntuación queda fuera de [0; 1]",
    "declared binary: every score is checked to be 0 or 1":
        "declarada binaria: se comprueba que cada puntuación sea 0 o 1",
    "declared proportion: every score is checked to lie in [0, 1]":
        "declarada proporción: se comprueba que cada puntuación esté en [0; 1]",
    "declared score: any finite number is accepted": "declarada puntuación: se acepta cualquier número finito",
    "a difference of two systems' scores": "una diferencia entre las puntuaciones de dos sistemas",
}


def metric_text(source: dict, language: str | None = None) -> str:
    """The kind of metric the loader found or was told (``DocTable.source``), and why, in words."""
    kind, reason = source.get("metric", ""), source.get("metric_reason", "")
    if _lang(language) == "es":
        how = ("declarada en los parámetros (data.metric)" if source.get("metric_declared")
               else "deducida de los datos")
        return f"{_METRIC_ES.get(kind, kind)}, {how}: {_METRIC_REASON_ES.get(reason, reason)}"
    how = "declared in the params (data.metric)" if source.get("metric_declared") else "inferred from the data"
    return f"{kind}, {how}: {reason}"


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
    """The sampling design in words, with the sampling fraction at each stage or in each stratum: in
    English :func:`perdoc.report.design_description`, in Spanish the same facts in Spanish."""
    lang = _lang(language)
    if lang != "es":
        from .build import design_description
        return design_description(analysis)
    g, est, K = analysis.study.design, analysis.estimates, analysis.table.K

    def n(x):
        return i18n.integer(x, lang="es")

    def p(x, digits=2):
        return i18n.pct(x, digits, lang="es")
    if g.sampling == "census":
        return f"censo: los {n(K)} documentos de la población"
    if g.sampling == "srs":
        M = est.population_size
        frac = "" if M is None else f" (fracción de muestreo {p(K / M)})"
        of = "" if M is None else f" de {n(M)}"
        return f"muestra aleatoria simple de {n(K)}{of} documentos, sin reemplazo{frac}"
    info = est.design or {}
    if g.sampling == "stratified":
        parts = [f"{h}: {n(v['k_h'])} de {n(v['M_h'])} ({p(v['fraction'])})" for h, v in info["strata"].items()]
        return (f"estratificado por {g.strata_column}, con documentos sorteados sin reemplazo dentro de cada "
                "estrato: " + "; ".join(parts))
    return (f"dos etapas: {n(K)} de {n(info['M'])} documentos ({p(info['f1'])}) y, dentro de ellos, "
            f"{n(info['chunks_sampled'])} de sus {n(info['chunks_in_population'])} fragmentos (fracción por "
            f"documento entre {p(info['f2_min'], 0)} y {p(info['f2_max'], 0)}, media {p(info['f2_mean'], 0)}; "
            f"{n(info['documents_fully_enumerated'])} documentos tomados enteros)")


# ---------------------------------------------------------------------------------- helpers
def _text(x) -> str | None:
    """A parameter text, whitespace-normalised; None when absent or blank."""
    if x is None:
        return None
    t = " ".join(str(x).split())
    return t or None


def _num(x, digits: int = 3, lang: str = "en") -> str:
    if x is None:
        return "n/d" if lang == "es" else "n/a"
    x = float(x)
    if not math.isfinite(x):
        return "n/d" if lang == "es" else "n/a"
    if x.is_integer() and abs(x) < 1e15:
        return i18n.integer(x, lang=lang)
    return i18n.num(x, f".{digits}f", lang=lang)


def _quantiles(q: dict, digits: int, lang: str = "en") -> str:
    names = _QUANTILE_ES if lang == "es" else {}
    return ", ".join(f"{names.get(k, k)} {_num(v, digits, lang)}" for k, v in q.items())


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
    return ("sin indicar: " if lang == "es" else "not given: ") + ", ".join(parts)


# ---------------------------------------------------------------------------------- checklist
def checklist(table: DocTable, estimates: Estimates, *, design: dict, estimand: dict,
              out_of_scope: list[str] | None = None,
              exclusions: Iterable[Exclusion] | None = None,
              out_of_scope_sources: list[str] | None = None,
              evidence: dict | None = None,
              simulation=None,
              language: str | None = None) -> list[Item]:
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
    return items


def _words(lang: str):
    """The three wording helpers of every item: ``T(en, sp)``, a whole number and a formatted number."""
    def T(en: str, sp: str) -> str:
        return sp if lang == "es" else en

    def n_(x) -> str:
        return i18n.integer(x, lang=lang)

    def f_(x, spec) -> str:
        return i18n.num(x, spec, lang=lang)
    return T, n_, f_


def _population_item(table: DocTable, estimates: Estimates, design: dict, lang: str) -> Item:
    """Item 1: the population, how the K documents were drawn, and at what sampling fraction."""
    T, _, _ = _words(lang)
    not_given = T("NOT GIVEN", "NO INDICADO")
    population = _text(design.get("population"))
    sampling = _text(design.get("sampling"))
    size = _size_text(table.K, estimates, design.get("population_size", None), lang)
    gaps = [name for name, v in (("population", population), ("sampling", sampling)) if v is None]
    value = "; ".join([T("population: ", "población: ") + (population or T(not_given, "NO INDICADA")),
                       T("sampling: ", "diseño muestral: ") + (sampling or not_given), size])
    return Item("population_design",
                T("Population and sampling design",
                  "Población y diseño muestral: qué se sorteó, en qué niveles y con qué fracción"),
                value, "missing" if gaps else "given")


def _size_text(K: int, estimates: Estimates, M, lang: str) -> str:
    """M, K and the sampling fraction K/M (or why there is none), with M checked against the estimates."""
    T, n_, f_ = _words(lang)
    if M is None:
        M = estimates.population_size
    elif estimates.population_size is not None and int(M) != estimates.population_size:
        raise ParameterError(f"design population_size M = {M} differs from the M = "
                             f"{estimates.population_size} the estimates were computed with")
    drawn = (estimates.design or {}).get("sampling") == "drawn"
    if drawn:   # a sample drawn by perdoc sample: the manifest's probabilities, not one fraction
        Mf = (estimates.design or {}).get("documents_in_frame")
        return T(f"{'M = ' + n_(Mf) + ' documents in the frame, ' if Mf else ''}{n_(K)} document draws, each "
                 "weighted by the inverse of its inclusion probability from the manifest (the finite population "
                 "correction of each stratum follows from the design)",
                 f"{'M = ' + n_(Mf) + ' documentos en el marco, ' if Mf else ''}{n_(K)} extracciones de documentos, "
                 "cada una ponderada por la inversa de su probabilidad de inclusión del manifiesto (la corrección "
                 "por población finita de cada estrato se deduce del diseño)")
    if M is None:
        return T(f"M not given: sampling fraction unknown, K = {n_(K)} drawn, no finite population correction",
                 f"M sin indicar: fracción de muestreo desconocida, K = {n_(K)} sorteados, sin corrección por "
                 "población finita")
    if isinstance(M, bool) or not float(M).is_integer() or int(M) < K:
        raise ParameterError(f"design population_size must be a whole number >= K = {K} (got {M!r})")
    M = int(M)
    size = T(f"M = {n_(M)} documents, K = {n_(K)} drawn, sampling fraction K/M = {f_(K / M, '.3g')}",
             f"M = {n_(M)} documentos, K = {n_(K)} sorteados, fracción de muestreo K/M = {f_(K / M, '.3g')}")
    if estimates.population_size is None:
        size += T(" (no finite population correction applied)",
                  " (no se aplicó la corrección por población finita)")
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
    T, _, f_ = _words(lang)
    not_given = T("NOT GIVEN", "NO INDICADO")
    if name is None:
        gaps = [T("estimand", "estimando")] + ([] if why else [T("why", "por qué")])
        value = (f"{_missing(gaps, lang)}; " + T("both computed: ", "se calcularon las dos: ")
                 + f"micro R = {f_(estimates.micro_estimate, '.4f')}, "
                 + f"macro r\u0304 = {f_(estimates.macro_estimate, '.4f')}")
    else:
        est = estimates.micro_estimate if name == "micro" else estimates.macro_estimate
        text = _ESTIMAND_TEXT_ES[name] if lang == "es" else _ESTIMAND_TEXT[name]
        value = f"{text} = {f_(est, '.4f')}; " + T("why: ", "por qué: ") + (why or not_given)
    return Item("estimand", T("Estimand (micro or macro) and why it answers the question",
                              "Estimando (media micro o macro) y por qué responde a la pregunta"),
                value, "given" if name and why else "missing")


def _sample_size_item(table: DocTable, diag, lang: str) -> Item:
    """Item 3: K, N and the distribution of measurements per document."""
    T, n_, f_ = _words(lang)
    K, N = table.K, table.N
    value = T(f"K = {n_(K)} documents, N = {_num(N, 3, lang)} measurements; n_d quantiles: "
              f"{_quantiles(diag.n_quantiles, 1, lang)}; the largest document holds {f_(diag.max_share, '.1%')} of N",
              f"K = {n_(K)} documentos, N = {_num(N, 3, lang)} mediciones; cuantiles de n_d: "
              f"{_quantiles(diag.n_quantiles, 1, lang)}; el documento más grande reúne el "
              f"{f_(diag.max_share, '.1%')} de N")
    return Item("sample_size", T("K, N and the distribution of n_d",
                                 "K, N y distribución de n_d, el número de mediciones por documento"),
                value, "given")


def _icc_item(table: DocTable, diag, simulation, lang: str) -> Item:
    """Item 5: the ICC and design effect, as diagnostics and not as substitutes."""
    T, _, f_ = _words(lang)
    N = table.N
    same = every_score_same(table)
    if same is not None:
        value = T(f"not available: every measurement has the same score ({f_(same, '.4g')}), so the ICC is 0/0 and "
                  "the design effect and the effective n are undefined (shown as ICC 0 and DEFF 1 only by "
                  "convention)",
                  f"no disponible: todas las mediciones tienen la misma puntuación ({f_(same, '.4g')}), así que la "
                  "CCI es 0/0 y ni el efecto de diseño ni el n efectivo están definidos (se muestran como CCI 0 y "
                  "DEFF 1 solo por convención)")
        status = "unavailable"
    elif math.isfinite(diag.icc) and math.isfinite(diag.deff):
        if diag.deff > 0:
            n_eff = T(f"effective n = N/DEFF = {_num(diag.n_eff, 1, lang)} of N = {_num(N, 3, lang)}",
                      f"n efectivo = N/DEFF = {_num(diag.n_eff, 1, lang)} de N = {_num(N, 3, lang)}")
        else:
            n_eff = T(f"the design effect is not positive, so there is no effective n; N = {_num(N, 3, lang)}",
                      f"el efecto de diseño no es positivo, así que no hay n efectivo; N = {_num(N, 3, lang)}")
        value = T(f"ICC = {f_(diag.icc, '.3f')}, design effect DEFF = {f_(diag.deff, '.2f')} ({n_eff}), realised "
                  f"DEFF (CR1 variance / iid variance) = {_num(diag.deff_realised, 2, lang)}; {FRAGILE_N_EFF}",
                  f"CCI = {f_(diag.icc, '.3f')}, efecto de diseño DEFF = {f_(diag.deff, '.2f')} ({n_eff}), DEFF "
                  f"observado (varianza CR1 / varianza iid) = {_num(diag.deff_realised, 2, lang)}; "
                  f"{FRAGILE_N_EFF_ES}")
        value += _own_wald_eff_n(simulation, lang)
        status = "given"
    else:
        why_na = "; ".join(reason_text(x, lang) for x in diag.notes) or T("not computable from these data",
                                                                           "no calculable con estos datos")
        value = T("not available: ", "no disponible: ") + why_na
        status = "missing"
    return Item("icc_deff", T("Intraclass correlation and design effect (diagnostics)",
                              "Correlación intraclase y efecto de diseño, como diagnóstico y no como "
                              "sustituto del cálculo"), value, status)


def _rates_item(diag, lang: str) -> Item:
    """Item 6: the share of documents at rate 0 and 1, and the distribution of document rates."""
    T, _, f_ = _words(lang)
    value = T(f"{f_(diag.frac_rate_0, '.1%')} of documents at rate 0, {f_(diag.frac_rate_1, '.1%')} at rate 1; "
              f"rate quantiles: {_quantiles(diag.rate_quantiles, 3, lang)}",
              f"{f_(diag.frac_rate_0, '.1%')} de los documentos con tasa 0 y {f_(diag.frac_rate_1, '.1%')} con "
              f"tasa 1; cuantiles de las tasas por documento: {_quantiles(diag.rate_quantiles, 3, lang)}")
    return Item("rates", T("Documents at rate 0 and 1; distribution of document rates",
                           "Fracción de documentos con tasa 0 o 1 y distribución de las tasas por documento"),
                value, "given")


def _out_of_scope_item(out_of_scope, out_of_scope_sources, lang: str) -> Item:
    """Item 7: what the uncertainty leaves out (the defaults when not given), each after its source."""
    T, _, _ = _words(lang)
    if out_of_scope is None:
        value = (_join_sentences(out_of_scope_text(t, lang) for t in DEFAULT_OUT_OF_SCOPE)
                 + T(" (defaults)", " (por defecto)"))
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
        value = _join_sentences(texts) if texts else T("not given", "sin indicar")
        status = "given" if texts else "missing"
    return Item("out_of_scope", T("What the uncertainty does not cover",
                                  "Qué queda fuera de la incertidumbre: el índice fijo, el recuperador, "
                                  "la población de preguntas"), value, status)


def _bootstrap_item(estimates: Estimates, lang: str) -> Item:
    """Item 8: how many bootstrap replicates were degenerate, and the seed (not applicable without one)."""
    T, n_, f_ = _words(lang)
    draws = estimates.bootstrap.get("draws") if estimates.bootstrap else None
    degenerate = T("Degenerate bootstrap replicates", "Réplicas bootstrap degeneradas")
    if draws is None or draws.replicates == 0:
        return Item("bootstrap_degenerate", degenerate,
                    T("no bootstrap run (replicates = 0)", "no se hizo bootstrap (réplicas = 0)"),
                    "not applicable")
    n_deg = int(draws.degenerate.sum())
    value = T(f"{n_(n_deg)} of {n_(draws.replicates)} replicates ({f_(draws.degenerate_fraction, '.1%')}) "
              "degenerate: every drawn document had the same rate, so no standard error; "
              "dropped from bootstrap-t",
              f"{n_(n_deg)} de {n_(draws.replicates)} réplicas ({f_(draws.degenerate_fraction, '.1%')}) "
              "degeneradas: todos los documentos sorteados tenían la misma tasa, así que no hay error "
              "estándar; se descartan del bootstrap-t")
    if n_deg == draws.replicates:
        value += T("; all replicates degenerate, so no bootstrap-t interval",
                   "; todas las réplicas son degeneradas, así que no hay intervalo bootstrap-t")
    seed = T("none (not reproducible)", "ninguna (no reproducible)") if estimates.seed is None \
        else str(estimates.seed)
    value += T("; seed ", "; semilla ") + seed
    return Item("bootstrap_degenerate", degenerate, value, "given")


def _exclusions_item(table: DocTable, exclusions, lang: str) -> Item:
    """Item 9: the rows excluded and why (missing when a reason is not given)."""
    T, n_, _ = _words(lang)
    excl = tuple(table.exclusions if exclusions is None else exclusions)
    excluded = T("Rows excluded and why", "Filas excluidas y motivo")
    if not excl:
        return Item("exclusions", excluded, T("none", "ninguna"), "given")
    total = sum(int(e.rows) for e in excl)
    parts = [f"{n_(int(e.rows))} ({_text(e.reason) or T('reason NOT GIVEN', 'motivo NO INDICADO')})"
             for e in excl]
    unexplained = any(_text(e.reason) is None for e in excl)
    value = T(f"{n_(total)} rows excluded: ", f"{n_(total)} filas excluidas: ") + "; ".join(parts)
    return Item("exclusions", excluded, value, "missing" if unexplained else "given")


def _own_wald_eff_n(simulation, lang: str) -> str:
    """What the Wald interval on the effective n covered in this study's own simulation (or nothing)."""
    m = (getattr(simulation, "methods", None) or {}).get("micro.wald_eff_n")
    cov = None if m is None else m.get("coverage")
    if cov is None or not math.isfinite(cov):
        return ""
    k, reps = simulation.k, simulation.reps
    if lang == "es":
        return (f"; en la simulación de este informe ({i18n.integer(reps, lang='es')} muestras de K = {k} "
                f"documentos) ese mismo intervalo cubrió el {i18n.pct(cov, 1, lang='es')}")
    return (f"; in this report's own simulation ({reps:,} samples of K = {k} documents) the same interval "
            f"covered {cov:.1%}")


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


def _method_item(estimates: Estimates, name: str | None, method: str | None, evidence: dict | None = None,
                 lang: str = "en") -> Item:
    """Interval method, resampling unit and effective degrees of freedom (K stated apart)."""
    es = lang == "es"
    T, _, _ = _words(lang)
    K = estimates.K
    level = i18n.num(estimates.level, ".0%", lang=lang)
    parts = []
    unavailable = False
    for estimand in ([name] if name else ["micro", "macro"]):
        if method and name:
            m = method
        else:
            from ..study.policy import default_method
            m = default_method(estimates, estimand) if estimates.design is None else _PRIMARY[estimand]
        try:
            iv = estimates.interval(estimand, m)
        except KeyError:
            raise ParameterError(f"estimand method {m!r} was not computed for {estimand} "
                                 f"(available: {', '.join(i.method for i in estimates.intervals if i.estimand == estimand)})") from None
        if iv.ci is not None:
            ci = i18n.interval(iv.ci.low, iv.ci.high, ".4f", lang=lang)
        else:
            why = reason_text(iv.reason, lang) or T("not available", "no disponible")
            ci = T("no interval", "sin intervalo") + f" ({why})"
        unavailable = unavailable or iv.ci is None
        if iv.df is not None and math.isfinite(iv.df):
            df = T("effective df = ", "grados de libertad efectivos = ") + i18n.num(iv.df, ".2f", lang=lang)
        else:
            df = T("df: none (not a t interval)", "grados de libertad: ninguno (no es un intervalo t)")
        if iv.resampling_unit == "document":
            unit = T("documents resampled with replacement", "remuestreo de documentos con reemplazo")
        elif iv.resampling_unit == "document (weights)":
            unit = T("documents kept, their residuals re-signed by random weights (wild bootstrap by document)",
                     "se conservan los documentos y sus residuos se multiplican por pesos aleatorios (bootstrap "
                     "salvaje por documento)")
        else:
            unit = T("analytic, variance from document-level residuals (cluster = document)",
                     "sin remuestreo (analítico): varianza a partir de los residuos por documento (conglomerado = "
                     "documento)")
        shown = T(f"{level} {ci}", f"intervalo al {level} {ci}" if iv.ci is not None else ci)
        parts.append(f"{estimand}: {method_label(iv, lang)}, {shown}; {unit}; {df}")
    if estimates.replicates:
        boot = T(f"document bootstrap with {estimates.replicates:,} replicates",
                 f"bootstrap por documento con {i18n.integer(estimates.replicates, lang=lang)} réplicas")
    else:
        boot = T("no bootstrap", "sin bootstrap")
    value = " | ".join(parts) + T(f" | K = {K:,} documents (stated apart from the df); ",
                                  f" | K = {i18n.integer(K, lang=lang)} documentos (se indica aparte de los "
                                  "grados de libertad); ") + boot
    status = "unavailable" if unavailable else "given"
    if evidence is not None:
        where = ({"census": "the census", "pseudo-population": "a pseudo-population built from the sample"} if not es
                 else {"census": "el censo", "pseudo-population": "una pseudopoblación construida a partir de la "
                                                                  "muestra"}).get(evidence.get("basis"))
        cov = evidence.get("coverage")
        if where is None:
            value += T(" | not checked by simulation (no census)", " | sin comprobar por simulación (no hay censo)")
        elif cov is not None:
            mc_se = i18n.num(evidence.get("mc_se") or 0, ".3f", lang=lang)
            reps = i18n.integer(evidence.get("reps") or 0, lang=lang)
            checked = T(f"simulated coverage on {where}: {cov:.3f} (MC SE {mc_se}, {reps} samples of "
                        f"K = {evidence.get('k')})",
                        f"cobertura simulada sobre {where}: {i18n.num(cov, '.3f', lang=lang)} (error estándar de "
                        f"Monte Carlo {mc_se}; {reps} muestras de K = {evidence.get('k')})")
            if evidence.get("approximate"):
                value += T(f" | APPROXIMATE: no method reached {level} in the simulation; {checked}",
                           f" | APROXIMADO: ningún método alcanzó el {level} en la simulación; {checked}")
                if not unavailable:
                    status = "approximate"
            else:
                value += f" | {checked}"
    if unavailable:
        value = T("interval unavailable from these data: ", "intervalo no disponible con estos datos: ") + value
    return Item("interval_method", T("Interval method, resampling unit and effective degrees of freedom",
                                     "Método del intervalo, unidad de remuestreo y grados de libertad efectivos"),
                value, status)


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
