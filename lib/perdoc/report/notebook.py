"""Display helpers for the notebooks: they format what the library computed, and escape every
piece of user text (document ids, params text) before it reaches the HTML report.

Every sentence goes through :func:`perdoc.i18n.L` and every number through :mod:`perdoc.i18n`, so a
report written in Spanish has Spanish sentences and decimal commas. Method labels, notes and reasons
computed by the library are English strings (the JSON keeps them); :func:`method_label` and
:func:`library_text` give them in the report's language.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd

from .i18n import L, get_language, integer, interval, num, numbers_in, pct

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
    return L("yes", "sí") if bool(flag) else "no"


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
    """The label of an interval method in the report's language (the JSON keeps the English one)."""
    if get_language() != "es":
        return iv.label
    from ._spanish import label_es   # one table of Spanish method names for the whole report
    es = label_es(iv.label)
    return numbers_in(iv.label) if es is None else es


_TEXT_ES = [
    (r"finite population correction \(1 - K/M\) applied to a method it was not derived for: a heuristic",
     "corrección por población finita (1 - K/M) aplicada a un método para el que no se dedujo: una heurística"),
    (r"finite population correction applied: variances times 1 - K/M = (\S+)",
     r"corrección por población finita aplicada: varianzas multiplicadas por 1 - K/M = \1"),
    (r"census: the K documents are the whole population \(K = M\), so there is no sampling error and every "
     r"interval is the estimate itself",
     "censo: los K documentos son toda la población (K = M), así que no hay error de muestreo y cada intervalo "
     "es la propia estimación"),
    (r"zero variance: every document has the same rate \((\S+)\), so the documents carry no information about "
     r"sampling error",
     r"varianza nula: todos los documentos tienen la misma tasa (\1), así que los documentos no informan del "
     r"error de muestreo"),
    (r"defined for a binary \(0/1\) metric only", "solo definido para una métrica binaria (0/1)"),
    (r"the interval is unbounded on one side", "el intervalo no está acotado por un lado"),
    (r"zero chunk-level variance: every score is the same",
     "varianza nula entre fragmentos: todas las puntuaciones son iguales"),
    (r"ICC and design effect need the sums of squared scores \(q\)",
     "la correlación intraclase y el efecto de diseño necesitan las sumas de cuadrados de las puntuaciones (q)"),
    (r"ICC undefined: every document has a single measurement",
     "correlación intraclase no definida: cada documento tiene una sola medición"),
    (r"the simple-random-sampling methods \(CR1, CR2, bootstrap, \.\.\.\) ignore this design and are not shown",
     "los métodos del muestreo aleatorio simple (CR1, CR2, remuestreo, ...) ignoran este diseño y no se muestran"),
    (r"diagnostics below are computed without design weights",
     "los diagnósticos de abajo se calculan sin los pesos del diseño"),
    (r"macro mean under this design: point estimate of the sampled documents only \(no design variance "
     r"implemented\)",
     "media macro con este diseño: solo la estimación puntual de los documentos muestreados (no hay varianza "
     "de diseño implementada)"),
    (r"effective n undefined \(design effect not positive or not available\)",
     "n efectivo no definido (efecto de diseño no positivo o no disponible)"),
]


def library_text(text) -> str:
    """A note or reason computed by the library, in the report's language: the known sentences are
    translated; any other keeps its words with its numbers written for the reader."""
    text = "" if text is None else str(text)
    if get_language() != "es":
        return text
    for pattern, repl in _TEXT_ES:
        m = re.fullmatch(pattern, text)
        if m:
            return numbers_in(m.expand(repl))
    return numbers_in(text)


def fpc_heuristic(iv) -> bool:
    """Whether the finite population correction was applied to this interval as a heuristic (a method
    it was not derived for): the library marks it in the interval's notes (``notes`` in the JSON)."""
    from ..study.estimate import FPC_HEURISTIC
    return FPC_HEURISTIC in tuple(getattr(iv, "notes", ()) or ())


def fpc_status(iv, population_size) -> str:
    """The finite population correction of an interval, for a table cell: heuristic, applied or none."""
    if population_size is None:
        return L("not applied", "no aplicada")
    if fpc_heuristic(iv):
        return L("heuristic", "heurística")
    return L("applied", "aplicada")


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
    """The simulation's recommendation for an estimand, in the report's language (the English text is
    :attr:`SimulationResult.recommendation_notes`, kept as it is)."""
    text = sim.recommendation_notes.get(estimand, "")
    if get_language() != "es":
        return text
    from ..study.simulate import BASELINES
    methods = sim.methods
    cands = [m for m in methods if m.split(".", 1)[0] == estimand and m not in BASELINES]
    if not cands:
        return f"ningún método {estimand} se aplica con este diseño"
    lvl = num(sim.level, ".3g")
    rec = sim.recommended.get(estimand)
    if rec is not None:
        b = methods[rec]
        ok = [m for m in cands if methods[m]["coverage"] >= sim.level - 2.0 * methods[m]["mc_se"]]
        return (f"{rec}: su cobertura {num(b['coverage'], '.3f')} (error estándar de Monte Carlo "
                f"{num(b['mc_se'], '.3f')}) está a menos de 2 errores estándar de Monte Carlo del nivel nominal "
                f"{lvl}, y su amplitud media, {num(b['mean_width'], '.4f')}, es la menor de los {len(ok)} métodos "
                f"{estimand} que cumplen")
    best = max(cands, key=lambda m: methods[m]["coverage"])
    b = methods[best]
    why = ("sus intervalos son demasiado estrechos: muestree más documentos o preséntelo como aproximado"
           if (b.get("no_interval") or 0.0) < 0.5 else
           f"no dio intervalo en el {pct(b['no_interval'], 0)} de las muestras (muestras sin dispersión: todos los "
           "documentos con la misma tasa): muestree más documentos")
    return (f"ningún método {estimand} alcanza el nivel nominal {lvl} dentro del error de Monte Carlo (cobertura "
            f">= nivel - 2 errores estándar) en muestras como estas; el mejor disponible es {best}, con cobertura "
            f"{num(b['coverage'], '.3f')} (error estándar de Monte Carlo {num(b['mc_se'], '.3f')}): {why}")


def _kind_name(kind: str) -> str:
    return {"micro": L("micro mean", "media micro"), "macro": L("macro mean", "media macro")}.get(
        kind, L(f"{kind} mean", f"media {kind}"))


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
    fpc = L("; finite population correction applied as a heuristic",
            "; corrección por población finita aplicada como heurística") if heuristic else ""
    if p.ci is not None:
        df_text = (L("df = ", "grados de libertad = ") + num(p.df, FORMATS["df"]) + "; "
                   if p.df is not None and p.df == p.df else "")
        approx = L("APPROXIMATE ", "APROXIMADO ") if h.approximate else ""
        title = L(f"{name} = {num(p.estimate, '.4f')}, {approx}{lvl} interval {interval(p.ci.low, p.ci.high)} "
                  f"({label}; {df_text}K = {integer(est.K)} documents; N = {integer(est.N)} measurements{fpc}).",
                  f"{name[:1].upper() + name[1:]} = {num(p.estimate, '.4f')}, intervalo de confianza {approx}"
                  f"al {lvl} {interval(p.ci.low, p.ci.high)} ({label}; {df_text}K = {integer(est.K)} documentos; "
                  f"N = {integer(est.N)} mediciones{fpc}).")
    else:
        reason = library_text(p.reason) or L("not available", "no disponible")
        title = L(f"{name} = {num(p.estimate, '.4f')}: no interval ({label}): {reason}{fpc}.",
                  f"{name[:1].upper() + name[1:]} = {num(p.estimate, '.4f')}: sin intervalo ({label}): {reason}{fpc}.")
    where = {"census": L("on the census", "sobre el censo"),
             "pseudo-population": L("on a pseudo-population built from this sample (weaker evidence than a census: "
                                    "it holds only documents like those sampled)",
                                    "sobre una pseudopoblación construida con esta muestra (evidencia más débil que "
                                    "un censo: solo contiene documentos como los muestreados)")}.get(h.basis)
    if where is None:
        evidence = L("Not checked by simulation: no census was given, so this is the default method "
                     f"({label}), whose coverage on data like these is unknown. Add a census (key census.path) to "
                     "check every method on data like yours.",
                     "Sin comprobar por simulación: no se dio un censo, así que este es el método por defecto "
                     f"({label}), cuya cobertura en datos como estos se desconoce. Añada un censo (clave census.path) "
                     "para comprobar cada método en datos como los suyos.")
    elif h.coverage is None:
        evidence = L(f"Checked by simulation {where}: {h.reason}.",
                     f"Comprobado por simulación {where}: ningún método comprobado por la simulación dio un "
                     "intervalo en esta muestra.")
    else:
        cov = L(f"{num(h.coverage, '.3f')} (Monte Carlo SE {num(h.mc_se, '.3f')}) of {integer(h.reps)} samples "
                f"of K = {integer(h.k)} documents",
                f"{num(h.coverage, '.3f')} (error estándar de Monte Carlo {num(h.mc_se, '.3f')}) de "
                f"{integer(h.reps)} muestras de K = {integer(h.k)} documentos")
        if h.verified:
            why_es = ("recomendado por la simulación" if h.reason == "recommended by the simulation" else
                      "el método más estrecho que cumple y que dio un intervalo en esta muestra"
                      if h.reason.startswith("the narrowest") else "cumple en la simulación")
            evidence = L(f"Checked by simulation {where}: this method covered {cov}, within Monte Carlo error of "
                         f"{lvl}; {h.reason}.",
                         f"Comprobado por simulación {where}: este método tuvo una cobertura de {cov}, dentro del "
                         f"error de Monte Carlo del {lvl}; {why_es}.")
        else:
            evidence = L(f"Approximate: checked by simulation {where}, no method reached {lvl}; this one came closest, "
                         f"covering {cov}. Read the interval as narrower than its nominal {lvl}.",
                         f"Aproximado: comprobado por simulación {where}, ningún método alcanzó el {lvl}; este fue el "
                         f"que más se acercó, con una cobertura de {cov}. Lea el intervalo como más estrecho que su "
                         f"{lvl} nominal.")
    if heuristic:
        evidence += L(" The finite population correction (1 - K/M) was applied to this method as a heuristic: it was "
                      "not derived for it" + (" (its simulated coverage was measured with the same correction)."
                                              if h.basis in ("census", "pseudo-population") else "."),
                      " La corrección por población finita (1 - K/M) se aplicó a este método como heurística: no se "
                      "dedujo para él" + (" (su cobertura simulada se midió con la misma corrección)."
                                          if h.basis in ("census", "pseudo-population") else "."))
    if p.out_of_range:
        lo_r, hi_r = p.metric_range
        evidence += L(f" The interval leaves the range {interval(lo_r, hi_r, 'g')} the metric cannot leave.",
                      f" El intervalo sale del rango {interval(lo_r, hi_r, 'g')} del que la métrica no puede salir.")
    return title, evidence


# ------------------------------------------------------------------------------------ summary box
#: Spanish forms of the reasons :func:`perdoc.report.choose_headline` gives for its choice (as the
#: Headline section words them); any other reason goes through :func:`library_text`.
_HEADLINE_REASON_ES = (
    (r"recommended by the simulation", "recomendado por la simulación"),
    (r"qualifies in the simulation", "cumple en la simulación"),
    (r"the narrowest qualifying method that gave this sample an interval \(the recommended (\S+) did not\)",
     "el método más estrecho que cumple y que dio un intervalo en esta muestra (el recomendado, {0}, no lo dio)"),
    (r"no method checked by the simulation gave this sample an interval",
     "ningún método comprobado por la simulación dio un intervalo en esta muestra"),
    (r"not available", "no disponible"),
)


def _reason_text(reason) -> str:
    """A reason (for no interval, for the headline's choice) in the report's language."""
    text = str(reason or "not available")
    if get_language() != "es":
        return text
    for pattern, es in _HEADLINE_REASON_ES:
        m = re.fullmatch(pattern, text)
        if m:
            return es.format(*m.groups())
    return library_text(text)


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
    holding a large share of the chunks, :func:`perdoc.frame.unseen_tail`).
    """
    study, est, table = a.study, a.estimates, a.table
    h = a.headline
    p = h.interval
    warnings = []
    if p.ci is None:
        warnings.append({"code": "no_interval", "reason": p.reason or "not available"})
    if h.approximate and p.ci is not None:
        warnings.append({"code": "approximate", "coverage": h.coverage, "mc_se": h.mc_se})
    if p.out_of_range:
        warnings.append({"code": "out_of_range", "range": list(p.metric_range)})
    if est.population_size is not None and fpc_heuristic(p):
        warnings.append({"code": "fpc_heuristic"})
    if est.population_size is not None and est.population_size == table.K:
        warnings.append({"code": "census"})
    for e in table.exclusions:
        warnings.append({"code": "excluded_rows", "rows": e.rows, "reason": e.reason})
    tail = getattr(est, "frame_tail", None)
    if tail and tail.get("warn") and study.design.sampling == "srs":
        warnings.append({"code": "unseen_tail", "expected": tail["expected"], "sample": tail["sample"],
                         "documents_beyond": tail["documents_beyond"], "longest_sampled": tail["longest_sampled"]})
    similar = table.source.get("similar_ids")
    if similar:
        warnings.append({"code": "similar_ids", "groups": similar["groups"],
                         "examples": [list(g) for g in similar.get("examples", [])]})
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


def _design_text(f: dict) -> str:
    d, K = f["design"], f["K"]
    if d["sampling"] == "census":
        return L("a census: every document of the population", "un censo: todos los documentos de la población")
    if d["sampling"] == "stratified":
        return L(f"a stratified sample ({integer(d['strata'])} strata)",
                 f"una muestra estratificada ({integer(d['strata'])} estratos)")
    if d["sampling"] == "drawn":
        return L("a sample drawn from the frame by perdoc sample (design-based weights)",
                 "una muestra extraída del marco con perdoc sample (ponderaciones según el diseño)")
    if d["sampling"] == "two_stage":
        return L("a two-stage sample (documents, then chunks within them)",
                 "una muestra en dos etapas (documentos y, dentro de ellos, fragmentos)")
    if d["population_size"] is None:
        return L("a simple random sample of documents", "una muestra aleatoria simple de documentos")
    return L(f"a simple random sample of {integer(K)} of {integer(d['population_size'])} documents",
             f"una muestra aleatoria simple de {integer(K)} de {integer(d['population_size'])} documentos")


def _coverage_text(coverage, mc_se, reps, k) -> str:
    return L(f"{num(coverage, FORMATS['coverage'])} (Monte Carlo SE {num(mc_se, FORMATS['mc_se'])}) of "
             f"{integer(reps)} samples of K = {integer(k)} documents",
             f"{num(coverage, FORMATS['coverage'])} (error estándar de Monte Carlo {num(mc_se, FORMATS['mc_se'])}) "
             f"de {integer(reps)} muestras de K = {integer(k)} documentos")


def _check_text(f: dict) -> str:
    c, lvl = f["check"], pct(f["interval"]["level"], 0)
    if c["basis"] == "none":
        head = L("no: no census was given, so this is the default method, whose coverage on data like these is "
                 "unknown (a census, key census.path, adds the check).",
                 "no: no se dio un censo, así que es el método por defecto y se desconoce su cobertura en datos "
                 "como estos (un censo, clave census.path, añade la comprobación).")
        ps = c.get("pseudo_population")
        if not ps:
            return head
        cov = _coverage_text(ps["coverage"], ps["mc_se"], ps["reps"], ps["k"])
        return head + (L(f" On a pseudo-population built from this sample (weak evidence: it holds only documents "
                         f"like the sampled ones) it covered {cov}"
                         + ("." if ps["holds"] else f", below {lvl}: it may cover less than it claims."),
                         f" Sobre una pseudopoblación construida con esta muestra (evidencia débil: solo contiene "
                         f"documentos como los muestreados) tuvo una cobertura de {cov}"
                         + ("." if ps["holds"] else f", por debajo del {lvl}: puede cubrir menos de lo que afirma.")))
    where = (L("on the census", "sobre el censo") if c["basis"] == "census" else
             L("on a pseudo-population built from this sample (weaker evidence than a census)",
               "sobre una pseudopoblación construida con esta muestra (evidencia más débil que un censo)"))
    why = esc(_reason_text(c["reason"]))
    if c["coverage"] is None or f["interval"]["ci"] is None:
        return L(f"yes, {where}: {why}.", f"sí, {where}: {why}.")
    cov = _coverage_text(c["coverage"], c["mc_se"], c["reps"], c["k"])
    if c["verified"]:
        return L(f"yes, {where}: this method covered {cov}, within Monte Carlo error of {lvl}; {why}.",
                 f"sí, {where}: este método tuvo una cobertura de {cov}, dentro del error de Monte Carlo del "
                 f"{lvl}; {why}.")
    return L(f"yes, {where}; no method reached {lvl}, and this one came closest, covering {cov}.",
             f"sí, {where}; ningún método alcanzó el {lvl}, y este fue el que más se acercó, con una cobertura "
             f"de {cov}.")


def _comparison_text(a, f: dict) -> str:
    c, lvl = f["comparison"], pct(f["interval"]["level"], 0)
    _, iv = _comparison_interval(a)
    A, B = (esc(s) for s in c["systems"])
    from .i18n import signed   # a difference keeps its sign in both languages, as in Comparing systems
    head = f"{A} - {B}, {_kind_name(f['estimand']['kind'])}: {signed(c['estimate'])}"
    if c["ci"] is None:
        why = esc(_reason_text(c["reason"])) if iv is not None else L("not computed", "no calculado")
        return head + L(f"; no interval ({why}), so neither system can be called better.",
                        f"; sin intervalo ({why}), así que no puede decirse que un sistema sea mejor.")
    approx = L("approximate ", "aproximado ") if c["approximate"] else ""
    df = "" if c["df"] is None else L("; df = ", "; grados de libertad = ") + num(c["df"], FORMATS["df"])
    ivl = L(f", {approx}{lvl} interval {interval(*c['ci'], spec='+.4f')} ({esc(method_label(iv))}{df})",
            f", intervalo {approx}al {lvl} {interval(*c['ci'], spec='+.4f')} ({esc(method_label(iv))}{df})")
    verdict = {
        "a_higher": L(f"the interval lies above 0: {A} scores higher than {B} on the population.",
                      f"el intervalo queda por encima de 0: {A} puntúa más alto que {B} en la población."),
        "b_higher": L(f"the interval lies below 0: {B} scores higher than {A} on the population.",
                      f"el intervalo queda por debajo de 0: {B} puntúa más alto que {A} en la población."),
        "includes_zero": L("the interval includes 0: these documents do not show which system is better.",
                           "el intervalo incluye el 0: estos documentos no muestran qué sistema es mejor."),
    }[c["verdict"]]
    if c["basis"] == "census" and c["coverage"] is not None:
        cov = num(c["coverage"], FORMATS["coverage"])
        check = (L(f" Checked by the paired simulation on the census (coverage {cov}).",
                   f" Comprobado con la simulación pareada sobre el censo (cobertura {cov}).") if c["verified"]
                 else L(f" Approximate: no method reached {lvl} in the paired simulation on the census (this one "
                        f"covered {cov}).",
                        f" Aproximado: ningún método alcanzó el {lvl} en la simulación pareada sobre el censo "
                        f"(este cubrió {cov})."))
    else:
        check = L(" Not checked by simulation.", " Sin comprobar por simulación.")
    if c["out_of_range"]:
        check += L(" The interval leaves [-1, 1], the range a difference of bounded metrics cannot leave.",
                   " El intervalo sale de [-1; 1], el rango del que no puede salir una diferencia de métricas "
                   "acotadas.")
    if c["design_ignored"]:
        check += L(" The comparison treats the documents as a simple random sample (it ignores the design).",
                   " La comparación trata los documentos como una muestra aleatoria simple (no usa el diseño).")
    return head + ivl + "; " + verdict + check


def _warning_texts(f: dict) -> list[str]:
    """Each warning of :func:`summary_facts` as one escaped sentence in the report's language."""
    lvl = pct(f["interval"]["level"], 0)
    out = []
    for w in f["warnings"]:
        code = w["code"]
        if code == "no_interval":
            why = esc(_reason_text(w["reason"]))
            out.append(L(f"No interval: {why}.", f"Sin intervalo: {why}."))
        elif code == "approximate":
            cov = num(w["coverage"], FORMATS["coverage"])
            out.append(L(f"Approximate: no method reached {lvl} in the simulation (this one covered {cov}); read "
                         f"the interval as narrower than its nominal {lvl}.",
                         f"Aproximado: ningún método alcanzó el {lvl} en la simulación (este cubrió {cov}); lea el "
                         f"intervalo como más estrecho que su {lvl} nominal."))
        elif code == "out_of_range":
            rng = interval(*w["range"], spec="g")
            out.append(L(f"Out of range: the interval leaves {rng}, the range the metric cannot leave.",
                         f"Fuera de rango: el intervalo sale de {rng}, el rango del que la métrica no puede salir."))
        elif code == "fpc_heuristic":
            out.append(L("Heuristic finite population correction: the factor 1 - K/M is applied to a method that "
                         "was not derived for it.",
                         "Corrección por población finita aplicada como heurística: el factor 1 - K/M se aplica a un "
                         "método que no se dedujo para él."))
        elif code == "census":
            out.append(L("Census: the documents are the whole population (K = M), so there is no sampling error "
                         "and the interval is the estimate itself.",
                         "Censo: los documentos son toda la población (K = M), así que no hay error de muestreo y "
                         "el intervalo es la propia estimación."))
        elif code == "excluded_rows":
            n, why = integer(w["rows"]), esc(library_text(w["reason"]))
            out.append(L(f"Rows excluded: {n} ({why}).", f"Filas excluidas: {n} ({why})."))
        elif code == "unseen_tail":
            e, smp = pct(w["expected"], 0), pct(w["sample"], 0)
            nb, longest = integer(w["documents_beyond"]), integer(w["longest_sampled"])
            out.append(L(f"Unseen long documents: a simple random sample of this size typically misses the longest "
                         f"documents, where {e} of the population's chunks are expected ({smp} in this sample: {nb} "
                         f"documents are longer than its longest, of {longest} chunks). If they score differently, no "
                         "interval from this sample can show it: draw with probability proportional to size "
                         "(perdoc sample --design pps).",
                         f"Documentos largos no vistos: una muestra aleatoria simple de este tamaño suele perder los "
                         f"documentos más largos, donde se espera el {e} de los fragmentos de la población ({smp} en "
                         f"esta muestra: {nb} documentos son más largos que el más largo de ella, de {longest} "
                         "fragmentos). Si puntúan distinto, ningún intervalo de esta muestra puede mostrarlo: extraiga "
                         "con probabilidad proporcional al tamaño (perdoc sample --design pps)."))
        elif code == "similar_ids":
            n = integer(w["groups"])
            shown = "; ".join(" / ".join(esc(repr(v)) for v in g) for g in w["examples"])
            out.append(L(f"Similar document ids allowed (data.allow_similar_ids): {n} group(s) differ only in "
                         f"spaces, letter case or Unicode form and are kept as different documents: {shown}.",
                         f"Identificadores parecidos admitidos (data.allow_similar_ids): {n} grupo(s) difieren solo "
                         f"en espacios, mayúsculas o forma Unicode y se tratan como documentos distintos: {shown}."))
    return out


def summary_box(a) -> str:
    """The report's answer first, as escaped HTML: what was estimated and why, the estimate, the
    headline interval with its method and df, K and N, whether and how the interval was checked by
    simulation, the comparison's verdict and every warning that applies (:func:`summary_facts`).

    Sentences follow the report's language (:func:`perdoc.i18n.L`), numbers are formatted by
    :mod:`perdoc.i18n` with the formats of the sections (:data:`FORMATS`), and every piece of user
    text (the why, system names, exclusion reasons, ids) is escaped.
    """
    f = summary_facts(a)
    p = a.headline.interval
    kind = f["estimand"]["kind"]
    iv, lvl = f["interval"], pct(f["interval"]["level"], 0)
    question = (L("the rate of a chunk drawn at random from the collection",
                  "la tasa de un fragmento elegido al azar de la colección") if kind == "micro" else
                L("the expected rate in a typical document", "la tasa esperada en un documento típico"))
    rows = [(L("Estimated", "Qué se estima"),
             f"<strong>{_kind_name(kind)}</strong>: {question}. "
             f'<span class="perdoc-summary-why">{L("Why", "Por qué")}: {esc(f["estimand"]["why"])}</span>'),
            (L("Estimate", "Estimación"),
             f'<strong class="perdoc-summary-number">{num(f["estimate"], FORMATS["estimate"])}</strong>')]
    label = esc(method_label(p))
    if iv["ci"] is not None:
        approx = L("<strong>approximate</strong> ", "<strong>aproximado</strong> ") if f["check"]["approximate"] else ""
        df = ("" if iv["df"] is None else
              L("; df = ", "; grados de libertad = ") + num(iv["df"], FORMATS["df"]))
        rows.append((L(f"{lvl} interval", f"Intervalo al {lvl}"),
                     f'<strong class="perdoc-summary-number">{interval(*iv["ci"], spec=FORMATS["interval"])}</strong> '
                     f"{approx}({label}{df})"))
    else:
        why = esc(_reason_text(iv["reason"]))
        rows.append((L(f"{lvl} interval", f"Intervalo al {lvl}"),
                     L(f"<strong>no interval</strong> ({label}): {why}.",
                       f"<strong>sin intervalo</strong> ({label}): {why}.")))
    rows.append((L("Sample", "Muestra"),
                 L(f"K = {integer(f['K'])} documents, N = {integer(f['N'])} measurements (chunks or queries); "
                   f"{_design_text(f)}.",
                   f"K = {integer(f['K'])} documentos, N = {integer(f['N'])} mediciones (fragmentos o consultas); "
                   f"{_design_text(f)}.")))
    rows.append((L("Checked by simulation", "Comprobado por simulación"), _check_text(f)))
    if f["comparison"] is not None:
        rows.append((L("Comparison", "Comparación"), _comparison_text(a, f)))
    items = "\n".join(f"<dt>{dt}</dt><dd>{dd}</dd>" for dt, dd in rows)
    warnings = _warning_texts(f)
    warn = ("" if not warnings else
            f'\n<div class="perdoc-summary-warnings"><p>{L("Warnings", "Advertencias")}</p><ul>\n'
            + "\n".join(f"<li>{w}</li>" for w in warnings) + "\n</ul></div>")
    title = L("Summary", "Resumen")
    return (f'<section class="perdoc-summary" aria-label="{title}">\n<p class="perdoc-summary-title">{title}</p>\n'
            f"<dl>\n{items}\n</dl>{warn}\n</section>")
