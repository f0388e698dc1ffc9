"""Display helpers for the notebooks: they format what the library computed, and escape every
piece of user text (document ids, params text) before it reaches the HTML report.

Every sentence is a message of the catalogs (:func:`perdoc.i18n.tr`, by key) and every number goes
through :mod:`perdoc.i18n`, so a report written in Spanish has Spanish sentences and decimal commas.
Method labels, notes and reasons computed by the library are English strings (the JSON keeps them);
:func:`method_label` (from the catalogs, by method id) and :func:`library_text` give them in the
report's language.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd

from .i18n import get_language, integer, interval, num, numbers_in, pct, tr

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
    if where is None:
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
    if c["ci"] is None:
        why = esc(_reason_text(c["reason"])) if iv is not None else tr("word.not_computed")
        return head + tr("box.comparison.no_interval", why=why)
    approx = tr("box.comparison.approximate") if c["approximate"] else ""
    df = "" if c["df"] is None else tr("box.df") + num(c["df"], FORMATS["df"])
    ivl = tr("box.comparison.interval", approx=approx, level=lvl, ci=interval(*c["ci"], spec="+.4f"),
             label=esc(method_label(iv)), df=df)
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
    return head + ivl + "; " + verdict + check


def _warning_texts(f: dict) -> list[str]:
    """Each warning of :func:`summary_facts` as one escaped sentence in the report's language."""
    lvl = pct(f["interval"]["level"], 0)
    out = []
    for w in f["warnings"]:
        code = w["code"]
        if code == "no_interval":
            why = esc(_reason_text(w["reason"]))
            out.append(tr("box.warning.no_interval", why=why))
        elif code == "approximate":
            cov = num(w["coverage"], FORMATS["coverage"])
            out.append(tr("box.warning.approximate", level=lvl, cov=cov))
        elif code == "out_of_range":
            rng = interval(*w["range"], spec="g")
            out.append(tr("box.warning.out_of_range", range=rng))
        elif code == "fpc_heuristic":
            out.append(tr("box.warning.fpc_heuristic"))
        elif code == "census":
            out.append(tr("box.warning.census"))
        elif code == "excluded_rows":
            n, why = integer(w["rows"]), esc(library_text(w["reason"]))
            out.append(tr("box.warning.excluded_rows", rows=n, why=why))
        elif code == "unseen_tail":
            e, smp = pct(w["expected"], 0), pct(w["sample"], 0)
            nb, longest = integer(w["documents_beyond"]), integer(w["longest_sampled"])
            out.append(tr("box.warning.unseen_tail", expected=e, sample=smp, beyond=nb, longest=longest))
        elif code == "similar_ids":
            n = integer(w["groups"])
            shown = "; ".join(" / ".join(esc(repr(v)) for v in g) for g in w["examples"])
            out.append(tr("box.warning.similar_ids", groups=n, shown=shown))
    return out


def summary_box(a) -> str:
    """The report's answer first, as escaped HTML: what was estimated and why, the estimate, the
    headline interval with its method and df, K and N, whether and how the interval was checked by
    simulation, the comparison's verdict and every warning that applies (:func:`summary_facts`).

    Sentences follow the report's language (:func:`perdoc.i18n.tr`), numbers are formatted by
    :mod:`perdoc.i18n` with the formats of the sections (:data:`FORMATS`), and every piece of user
    text (the why, system names, exclusion reasons, ids) is escaped.
    """
    f = summary_facts(a)
    p = a.headline.interval
    kind = f["estimand"]["kind"]
    iv, lvl = f["interval"], pct(f["interval"]["level"], 0)
    question = tr("box.question_micro") if kind == "micro" else tr("box.question_macro")
    why_word = tr("box.why")
    rows = [(tr("box.estimated"),
             f"<strong>{_kind_name(kind)}</strong>: {question}. "
             f'<span class="perdoc-summary-why">{why_word}: {esc(f["estimand"]["why"])}</span>'),
            (tr("box.estimate"),
             f'<strong class="perdoc-summary-number">{num(f["estimate"], FORMATS["estimate"])}</strong>')]
    label = esc(method_label(p))
    if iv["ci"] is not None:
        approx = tr("box.approximate") if f["check"]["approximate"] else ""
        df = "" if iv["df"] is None else tr("box.df") + num(iv["df"], FORMATS["df"])
        rows.append((tr("box.interval", level=lvl),
                     f'<strong class="perdoc-summary-number">{interval(*iv["ci"], spec=FORMATS["interval"])}</strong> '
                     f"{approx}({label}{df})"))
    else:
        why = esc(_reason_text(iv["reason"]))
        rows.append((tr("box.interval", level=lvl), tr("box.no_interval", label=label, why=why)))
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
    title = tr("box.summary")
    return (f'<section class="perdoc-summary" aria-label="{title}">\n<p class="perdoc-summary-title">{title}</p>\n'
            f"<dl>\n{items}\n</dl>{warn}\n</section>")
