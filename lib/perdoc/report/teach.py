"""Helpers for the teaching notebooks (``notebooks/teach``, and their Spanish versions in
``notebooks/teach/es``): the coverage lab, the exercises' checks and their solutions.

The notebooks only wire widgets to these plain functions, and the tests call them directly:

* :func:`coverage_lab` draws a synthetic census (:func:`perdoc.synthetic.synthetic_census`) with the
  chosen size inequality, intra-class correlation and base rate, runs perdoc's coverage simulation
  (:func:`perdoc.simulate.simulate`) for samples of ``k`` documents, and returns one row per chosen
  interval method: its coverage, Monte Carlo standard error, mean width and misses by side;
* :func:`coverage_chart` draws that table (coverage with +- 2 Monte Carlo SE, and mean width);
  :func:`show_lab` displays chart, table and a plain-language summary (static SVG: readable in a
  notebook rendered without a kernel);
* ``check_*`` functions check an exercise's answer, print right or wrong with a hint, and return
  ``True`` or ``False``. They never raise on a student's answer (a missing or non-numeric answer,
  ``None`` or ``...``, is "not yet"), and they never print the right answer to a wrong one;
* :func:`show_solution` prints an exercise's solution and runs it. The solutions live here, not in the
  notebook, so that running the exercises top to bottom ("Run All") shows none of them.

Every sentence these helpers print or draw follows :func:`perdoc.i18n.get_language` (English or
Spanish; the notebooks set it from their ``language`` parameter). The data they return keep English
values (``verdict`` is "holds" or "falls short" in both languages).

Nothing here re-implements a formula: every number comes from :mod:`perdoc.micro`,
:mod:`perdoc.plan` and :mod:`perdoc.simulate`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .i18n import L, get_language, integer, num, pct

__all__ = ["LAB_METHODS", "LAB_METHODS_ES", "DEFAULT_METHODS", "lab_label", "lab_census", "census_summary",
           "census_line", "coverage_lab", "coverage_chart", "lab_summary", "show_lab",
           "PLAN_EXERCISE", "ESTIMAND_QUESTIONS", "ESTIMAND_QUESTIONS_ES", "estimand_questions", "CR2_EXERCISE",
           "exercise_table", "check_documents_needed", "check_estimand", "check_cr2_se", "check_bm_df",
           "SOLUTIONS", "solution_code", "show_solution"]

# ====================================================================== the coverage lab
#: The methods a student can switch on, with a short label (the simulation's method names).
LAB_METHODS = {
    "micro.wald_iid": "iid Wald (every chunk a case)",
    "micro.wald_eff_n": "Wald with effective n (N / design effect)",
    "micro.cr1": "CR1, t with K-1 df",
    "micro.cr2": "CR2, Bell-McCaffrey df",
    "micro.logit_cr2": "CR2 on the logit scale (perdoc's default for a 0/1 metric)",
    "micro.cr3": "CR3 (jackknife), t with K-1 df",
    "micro.bootstrap_t": "bootstrap-t by document",
    "micro.percentile": "percentile bootstrap by document",
    "macro.t": "macro mean: t on document rates",
}
#: The same labels in Spanish.
LAB_METHODS_ES = {
    "micro.wald_iid": "Wald iid (cada fragmento como un caso)",
    "micro.wald_eff_n": "Wald con n efectivo (N / efecto de diseño)",
    "micro.cr1": "CR1, t con K-1 grados de libertad",
    "micro.cr2": "CR2, grados de libertad de Bell-McCaffrey",
    "micro.logit_cr2": "CR2 en escala logit (lo que perdoc usa por defecto con una métrica 0/1)",
    "micro.cr3": "CR3 (jackknife), t con K-1 grados de libertad",
    "micro.bootstrap_t": "bootstrap-t por documento",
    "micro.percentile": "bootstrap percentil por documento",
    "macro.t": "media macro: t sobre las tasas por documento",
}
DEFAULT_METHODS = ("micro.wald_iid", "micro.cr1", "micro.cr2", "micro.logit_cr2")
_RESAMPLING = {"micro.bootstrap_t", "micro.percentile"}
_BASELINES = {"micro.wald_iid", "micro.wald_eff_n"}
MAX_LAB_REPS = 100_000


def lab_label(method: str) -> str:
    """The lab's label of a method (a key of :data:`LAB_METHODS`) in the current language."""
    return L(LAB_METHODS[method], LAB_METHODS_ES[method])


def _positive_int(name: str, x, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < minimum:
        raise ParameterError(f"{name} must be a whole number of at least {minimum} (got {x!r})")
    return int(x)


def _number(name: str, x, lo: float, hi: float, *, open_lo: bool = True, open_hi: bool = True) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)):
        raise ParameterError(f"{name} must be a number (got {x!r})")
    x = float(x)
    bad_lo = x <= lo if open_lo else x < lo
    bad_hi = x >= hi if open_hi else x > hi
    if bad_lo or bad_hi:
        lb, rb = ("(" if open_lo else "["), (")" if open_hi else "]")
        raise ParameterError(f"{name} must lie in {lb}{lo:g}, {hi:g}{rb} (got {x:g})")
    return x


def _method_names(methods) -> list[str]:
    if isinstance(methods, str):
        methods = (methods,)
    try:
        names = list(methods)
    except TypeError:
        raise ParameterError("methods must be a list of method names, e.g. ['micro.cr1', 'micro.cr2']") from None
    if not names:
        raise ParameterError("methods must name at least one method, e.g. 'micro.cr2'")
    out = []
    for m in names:
        full = m if isinstance(m, str) and "." in m else (f"macro.{m}" if m == "t" else f"micro.{m}")
        if full not in LAB_METHODS:
            raise ParameterError(f"methods: unknown method {m!r}; choose from {', '.join(LAB_METHODS)}")
        if full not in out:
            out.append(full)
    return out


def lab_census(sigma: float = 1.5, icc: float = 0.3, base_rate: float = 0.2, *, documents: int = 1000,
               median_size: float = 8.0, seed: int = 1):
    """The lab's population: a synthetic census of ``documents`` documents with 0/1 chunk scores.

    ``sigma``: size inequality (sd of log document size; 0 gives equal sizes), ``icc``: how alike
    the chunks of one document are, ``base_rate``: the mean rate. A :class:`perdoc.DocTable`."""
    from ..study.synthetic import synthetic_census
    sigma = _number("sigma", sigma, 0.0, 5.0, open_lo=False, open_hi=False)
    icc = _number("icc", icc, 0.0, 1.0)
    base_rate = _number("base_rate", base_rate, 0.0, 1.0)
    documents = _positive_int("documents", documents, 3)
    median_size = _number("median_size", median_size, 1.0, 1e6, open_lo=False)
    return synthetic_census(documents=documents, median_size=median_size, size_sigma=sigma, icc=icc,
                            base_rate=base_rate, metric="binary", seed=_positive_int("seed", seed, 0))


def census_summary(census) -> dict:
    """What the lab's census looks like: documents, chunks, the true micro and macro means, the
    share of all chunks held by the largest 10% of documents, and the ANOVA ICC."""
    from ..methods.diagnostics import icc_anova
    n = np.sort(census.n)[::-1]
    top = max(1, int(round(0.1 * n.size)))
    return {"documents": census.K, "chunks": int(census.N),
            "micro": float(census.s.sum() / census.N), "macro": float(np.mean(census.rate)),
            "top10_share": float(n[:top].sum() / n.sum()),
            "icc": float(icc_anova(census.n, census.s, census.q))}


def coverage_lab(k: int = 10, sigma: float = 1.5, icc: float = 0.3, base_rate: float = 0.2,
                 methods=DEFAULT_METHODS, reps: int = 400, seed: int = 1, *, level: float = 0.95,
                 documents: int = 1000, median_size: float = 8.0, replicates: int = 199) -> pd.DataFrame:
    """Coverage and mean width of each chosen method on samples of ``k`` documents of a synthetic census.

    Draws the census of :func:`lab_census` (``sigma``, ``icc``, ``base_rate``, ``documents``,
    ``median_size``; census seed ``seed``) and runs :func:`perdoc.simulate.simulate` with ``reps``
    samples of ``k`` documents (simple random sampling without replacement, finite population
    correction for M = ``documents``). ``replicates`` bootstrap replicates per sample are drawn only
    when a bootstrap method is chosen.

    Returns one row per method, in the order given: ``method``, ``label``, ``estimand``,
    ``coverage``, ``mc_se``, ``mean_width``, ``miss_low``, ``miss_high``, ``no_interval``,
    ``baseline`` (the iid and effective-n Wald intervals, shown to warn) and ``verdict``: "holds"
    when the coverage is within 2 Monte Carlo SE of ``level``, else "falls short". ``attrs`` holds
    the settings, the census summary (:func:`census_summary`) and the simulation's truth.
    """
    from ..study.simulate import simulate
    k = _positive_int("k", k, 2)
    names = _method_names(methods)
    reps = _positive_int("reps", reps, 1)
    if reps > MAX_LAB_REPS:
        raise ParameterError(f"reps must be at most {MAX_LAB_REPS:,} in the lab (got {reps:,})")
    level = _number("level", level, 0.0, 1.0)
    replicates = _positive_int("replicates", replicates, 0)
    census = lab_census(sigma, icc, base_rate, documents=documents, median_size=median_size, seed=seed)
    if k >= census.K:
        raise ParameterError(f"k must be below the number of census documents ({census.K}); got {k}")
    B = replicates if any(m in _RESAMPLING for m in names) else 0
    if any(m in _RESAMPLING for m in names) and B < 19:
        raise ParameterError(f"replicates must be at least 19 for a bootstrap method (got {replicates})")
    sim = simulate(census, k=k, reps=reps, seed=seed, level=level, replicates=B)
    rows = []
    for m in names:
        r = sim.methods[m]
        holds = r["coverage"] >= level - 2.0 * r["mc_se"]
        rows.append({"method": m, "label": lab_label(m), "estimand": m.split(".", 1)[0],
                     "coverage": r["coverage"], "mc_se": r["mc_se"], "mean_width": r["mean_width"],
                     "miss_low": r["miss_low"], "miss_high": r["miss_high"], "no_interval": r["no_interval"],
                     "baseline": m in _BASELINES, "verdict": "holds" if holds else "falls short"})
    df = pd.DataFrame(rows)
    df.attrs = {"k": k, "sigma": float(sigma), "icc": float(icc), "base_rate": float(base_rate), "reps": reps,
                "seed": seed, "level": level, "replicates": B, "census": census_summary(census),
                "truth": dict(sim.truth)}
    return df


def _kinds() -> dict:
    """The chart's legend entries: a verdict (or the baseline) -> its words in the current language."""
    return {"holds": L("holds", "alcanza el nominal"), "falls short": L("falls short", "se queda corto"),
            "baseline": L("baseline (chunks as cases)", "referencia (fragmentos como casos)")}


def coverage_chart(df: pd.DataFrame):
    """Two panels from a :func:`coverage_lab` table: coverage of each method with +- 2 Monte Carlo SE
    and the nominal level (dashed), and its mean width. An Altair chart, in the current language."""
    import altair as alt
    level = float(df.attrs.get("level", 0.95))
    kinds = _kinds()
    d = df[["method", "label", "coverage", "mc_se", "mean_width", "verdict", "baseline"]].copy()
    d["lo"] = (d["coverage"] - 2 * d["mc_se"]).clip(lower=0)
    d["hi"] = (d["coverage"] + 2 * d["mc_se"]).clip(upper=1)
    d["kind"] = [kinds["baseline"] if b else kinds.get(v, v) for b, v in zip(d["baseline"], d["verdict"])]
    d = d.drop(columns=["baseline"])
    colour = alt.Color("kind:N", title="", scale=alt.Scale(
        domain=[kinds["holds"], kinds["falls short"], kinds["baseline"]], range=["#1f4e79", "#e07b39", "#d1495b"]))
    y = alt.Y("method:N", title=None, sort=list(d["method"]))
    low = min(0.5, float(np.nanmin(d["lo"])) if len(d) else 0.5)
    base = alt.Chart(d)
    x = alt.X("lo:Q", title=L("coverage (+- 2 Monte Carlo SE)", "cobertura (± 2 errores estándar de Monte Carlo)"),
              scale=alt.Scale(domain=[max(0.0, low - 0.02), 1.0]))
    cov = alt.layer(
        base.mark_rule(strokeWidth=3).encode(x=x, x2="hi:Q", y=y, color=colour),
        base.mark_point(filled=True, size=70).encode(x="coverage:Q", y=y, color=colour,
                                                     tooltip=["label", "coverage", "mc_se"]),
        alt.Chart(pd.DataFrame({"x": [level]})).mark_rule(color="#555555", strokeDash=[4, 4]).encode(x="x:Q"),
    ).properties(width=300, height=max(90, 26 * len(d)),
                 title=L(f"Coverage (nominal {level:.0%})", f"Cobertura (nominal: {pct(level, 0)})"))
    width = base.mark_bar().encode(
        x=alt.X("mean_width:Q", title=L("mean width of the interval", "amplitud media del intervalo")),
        y=alt.Y("method:N", title=None, sort=list(d["method"]), axis=None),
        color=colour, tooltip=["label", "mean_width"],
    ).properties(width=200, height=max(90, 26 * len(d)), title=L("Mean width", "Amplitud media"))
    return alt.hconcat(cov, width).properties(title=_chart_title(df.attrs)).configure_view(stroke=None).configure(
        font="sans-serif", background="white")


def _chart_title(a: dict) -> str:
    nan = float("nan")
    if get_language() == "es":
        return (f"K = {a.get('k')} documentos, desigualdad de tamaños (sigma) {num(a.get('sigma', nan), 'g')}, "
                f"ICC {num(a.get('icc', nan), 'g')}, tasa base {num(a.get('base_rate', nan), 'g')}; "
                f"{integer(a.get('reps'))} muestras simuladas")
    return (f"K = {a.get('k')} documents, size sigma {a.get('sigma', nan):g}, ICC {a.get('icc', nan):g}, "
            f"base rate {a.get('base_rate', nan):g}; {a.get('reps')} simulated samples")


def _summary_line(r, level: float, reps) -> str:
    """:func:`lab_summary`'s sentence for one row ``r`` of a lab table."""
    lopsided = max(r.miss_low, r.miss_high) > 2 * min(r.miss_low, r.miss_high) + 1e-12
    above = r.miss_high > r.miss_low
    if get_language() == "es":
        cov = f"{pct(r.coverage, 1)} (± {pct(2 * r.mc_se, 1)})"
        if r.verdict == "holds":
            verdict = f"alcanza el {pct(level, 0)} nominal"
        else:
            side = "por encima" if above else "por debajo"
            verdict = (f"se queda por debajo del {pct(level, 0)}"
                       + (f"; casi todos los fallos son intervalos situados por completo {side} del valor del "
                          "censo" if lopsided else ""))
        extra = f"; sin intervalo en el {pct(r.no_interval, 1)} de las muestras" if r.no_interval > 0 else ""
        return f"{r.label}: cubrió el valor del censo en el {cov} de {integer(reps)} muestras; {verdict}{extra}."
    cov = f"{r.coverage:.1%} (+- {2 * r.mc_se:.1%})"
    if r.verdict == "holds":
        verdict = f"holds the nominal {level:.0%}"
    else:
        side = "above" if above else "below"
        verdict = (f"falls short of {level:.0%}"
                   + (f"; most misses are intervals lying entirely {side} the census value" if lopsided else ""))
    extra = f"; no interval in {r.no_interval:.1%} of samples" if r.no_interval > 0 else ""
    return f"{r.label}: covered the census value in {cov} of {reps} samples, {verdict}{extra}."


def lab_summary(df: pd.DataFrame) -> str:
    """One plain sentence per method: its coverage against the nominal level, and how it missed."""
    level = float(df.attrs.get("level", 0.95))
    reps = df.attrs.get("reps")
    return "\n".join(_summary_line(r, level, reps) for r in df.itertuples(index=False))


_LAB_COLUMNS = ["method", "coverage", "mc_se", "mean_width", "miss_low", "miss_high", "no_interval", "verdict"]
_LAB_HEADERS_ES = {"method": "método", "coverage": "cobertura", "mc_se": "error estándar Monte Carlo",
                   "mean_width": "amplitud media", "miss_low": "fallos por debajo", "miss_high": "fallos por encima",
                   "no_interval": "sin intervalo", "verdict": "veredicto"}


def show_lab(df: pd.DataFrame) -> None:
    """Display a :func:`coverage_lab` result: the chart as static SVG (no script, no network), the
    census in one line, the table and :func:`lab_summary`, in the current language."""
    from IPython.display import HTML, display
    from .charts import to_svg
    from .notebook import esc, show_table
    c = df.attrs.get("census", {})
    if c:
        display(HTML(f"<p>{esc(census_line(c))}</p>"))
    display(HTML(to_svg(coverage_chart(df))))
    table = df[_LAB_COLUMNS]
    headers = None
    if get_language() == "es":
        kinds = _kinds()
        table = table.assign(verdict=[kinds.get(v, v) for v in table["verdict"]])
        headers = _LAB_HEADERS_ES
    show_table(table, floatfmt="{:.3f}", headers=headers)
    display(HTML("<ul>" + "".join(f"<li>{esc(s)}</li>" for s in lab_summary(df).splitlines()) + "</ul>"))


def census_line(c: dict) -> str:
    """:func:`census_summary` as one sentence."""
    if get_language() == "es":
        return (f"Censo: {integer(c['documents'])} documentos, {integer(c['chunks'])} fragmentos; el 10 % de los "
                f"documentos más grandes reúne el {pct(c['top10_share'], 0)} de los fragmentos; ICC "
                f"{num(c['icc'], '.2f')}; media micro verdadera {num(c['micro'], '.4f')}, media macro verdadera "
                f"{num(c['macro'], '.4f')}.")
    return (f"Census: {c['documents']:,} documents, {c['chunks']:,} chunks; the largest 10% of documents hold "
            f"{c['top10_share']:.0%} of the chunks; ICC {c['icc']:.2f}; true micro mean {c['micro']:.4f}, "
            f"macro mean {c['macro']:.4f}.")


# ====================================================================== exercises
def _say(ok: bool, text: str) -> bool:
    if get_language() == "es":    # a Spanish sentence starts with a capital letter after the verdict
        text = text[:1].upper() + text[1:]
    print((L("Right. ", "Correcto. ") if ok else L("Not yet. ", "Todavía no. ")) + text)
    return ok


def _as_number(answer):
    """The answer as a float, or None when it is missing (``None``, ``...``) or not a number."""
    from .i18n import finite_number
    return finite_number(answer)


#: Exercise 1: a pilot's spread of the micro mean, the population size and the target.
PLAN_EXERCISE = {"sd": 0.412, "half_width": 0.05, "population_size": 1300, "level": 0.95}


def _plan_hint(K: int, plan, e: dict) -> str:
    """Why ``K`` documents is not the answer to exercise 1 (``plan``: the right one), in the current language."""
    from ..methods._dist import norm_ppf
    M = e["population_size"]
    z = norm_ppf(1 - (1 - e["level"]) / 2)
    z_k = math.ceil((z * e["sd"] / e["half_width"]) ** 2)
    if K == plan.K_without_fpc:
        return L(f"that is the answer for an infinite population. The population has {M:,} documents: include "
                 "the finite population correction sqrt(1 - K/M).",
                 f"esa es la respuesta para una población infinita. La población tiene {integer(M)} documentos: "
                 "incluye la corrección por población finita sqrt(1 - K/M).")
    if abs(K - plan.K) <= 1:
        return L("off by one: find the SMALLEST K whose half-width is at most the target (check K and K - 1).",
                 "te has desviado en uno: busca el K MÁS PEQUEÑO cuya semiamplitud no pase del objetivo "
                 "(comprueba K y K - 1).")
    if K == z_k:
        return L("that is the normal-quantile answer for an infinite population: use t(1 - alpha/2; K - 1), "
                 "and the finite population correction sqrt(1 - K/M).",
                 "esa es la respuesta con el cuantil de la normal y una población infinita: usa "
                 "t(1 - alfa/2; K - 1) y la corrección por población finita sqrt(1 - K/M).")
    if K == math.ceil(z_k / (1 + z_k / M)):
        return L("close, but a normal quantile (1.96) understates the half-width: use t(1 - alpha/2; K - 1), "
                 "which depends on K, so search K step by step.",
                 "cerca, pero el cuantil de la normal (1,96) se queda corto: usa t(1 - alfa/2; K - 1), que "
                 "depende de K, así que recorre los valores de K uno a uno.")
    if K > M:
        return L(f"more documents than the population holds ({M:,}): count documents, not chunks.",
                 f"más documentos de los que tiene la población ({integer(M)}): cuenta documentos, no fragmentos.")
    if K < plan.K:
        return L("too few: at that K the half-width t * S / sqrt(K) * sqrt(1 - K/M) is still above the target.",
                 "demasiado pocos: con ese K la semiamplitud t * S / sqrt(K) * sqrt(1 - K/M) sigue por encima "
                 "del objetivo.")
    return L("too many: a smaller K already reaches the target half-width.",
             "demasiados: un K menor ya alcanza la semiamplitud objetivo.")


def check_documents_needed(answer) -> bool:
    """Exercise 1: the smallest number of documents K whose micro interval half-width is at most
    ``PLAN_EXERCISE["half_width"]`` (pilot spread ``sd``, population of ``population_size``
    documents, level ``level``). Prints right or wrong with a hint; returns whether it is right."""
    from ..study.plan import half_width, plan_k
    e = PLAN_EXERCISE
    plan = plan_k(e["sd"], e["half_width"], level=e["level"], population_size=e["population_size"])
    x = _as_number(answer)
    if x is None:
        return _say(False, L("Set `answer` to a whole number of documents.",
                             "Asigna a `answer` un número entero de documentos."))
    if x != round(x):
        return _say(False, L("A number of documents is a whole number: round up to the next one that reaches "
                             "the target.",
                             "Un número de documentos es un número entero: redondea hacia arriba, al primero "
                             "que alcance el objetivo."))
    K = int(round(x))
    if K == plan.K:
        before = half_width(K - 1, e["sd"], e["level"], e["population_size"])
        return _say(True, L(f"K = {K} documents give a half-width of {plan.half_width:.4f} <= {e['half_width']}; "
                            f"{K - 1} would give {before:.4f}.",
                            f"con K = {K} documentos la semiamplitud es {num(plan.half_width, '.4f')} ≤ "
                            f"{num(e['half_width'], 'g')}; con {K - 1} sería {num(before, '.4f')}."))
    return _say(False, f"K = {K}: {_plan_hint(K, plan, e)}")


#: Exercise 2: questions, each answered by one estimand (micro or macro), with why.
ESTIMAND_QUESTIONS = {
    "a": ("A support bot answers questions from its logs; each question is about one chunk, and every chunk "
          "of the knowledge base is as likely as any other to be asked about. How often does the retriever "
          "find the right chunk?", "micro",
          "each chunk counts once, so long documents weigh in proportion to their chunks."),
    "b": ("An auditor opens one contract and wants to know what share of its clauses the retriever finds "
          "in a typical contract, whatever its length.", "macro",
          "the unit of interest is the document: each one counts once, long or short."),
    "c": ("The index holds 44,698 chunks. How many of them, in total, would the retriever find?", "micro",
          "a total over chunks is N times the chunk-level rate."),
    "d": ("A vendor promises the retriever works for every supplier's manual: what hit rate should a "
          "supplier expect on a manual picked at random from the catalogue?", "macro",
          "a manual picked at random is a document drawn with equal chance: the mean of document rates."),
}
#: The same questions in Spanish (the same answers).
ESTIMAND_QUESTIONS_ES = {
    "a": ("Un asistente de soporte responde preguntas que salen de sus registros; cada pregunta trata de un "
          "fragmento, y cualquier fragmento de la base de conocimiento tiene la misma probabilidad de ser "
          "preguntado. ¿Con qué frecuencia encuentra el recuperador el fragmento correcto?", "micro",
          "cada fragmento cuenta una vez, así que los documentos largos pesan en proporción a sus fragmentos."),
    "b": ("Una auditora abre un contrato y quiere saber qué proporción de sus cláusulas encuentra el "
          "recuperador en un contrato típico, sea cual sea su extensión.", "macro",
          "la unidad que interesa es el documento: cada uno cuenta una vez, sea largo o corto."),
    "c": ("El índice contiene 44.698 fragmentos. ¿Cuántos de ellos, en total, encontraría el recuperador?",
          "micro", "un total sobre fragmentos es N por la tasa a nivel de fragmento."),
    "d": ("Un proveedor promete que el recuperador funciona con el manual de cualquier fabricante: ¿qué tasa "
          "de aciertos puede esperar un fabricante con un manual elegido al azar del catálogo?", "macro",
          "un manual elegido al azar es un documento sorteado con la misma probabilidad que los demás: la media "
          "de las tasas por documento."),
}


def estimand_questions() -> dict:
    """Exercise 2's questions in the current language: key -> (question, answer, why)."""
    return ESTIMAND_QUESTIONS_ES if get_language() == "es" else ESTIMAND_QUESTIONS


def check_estimand(answers) -> bool:
    """Exercise 2: ``answers`` maps each question of :data:`ESTIMAND_QUESTIONS` ("a", "b", ...) to
    "micro" or "macro". Prints a line per question; returns whether every answer is right."""
    if not isinstance(answers, dict):
        return _say(False, L("Set `answers` to a dict such as {'a': 'micro', 'b': 'macro', ...}.",
                             "Asigna a `answers` un diccionario como {'a': 'micro', 'b': 'macro', ...}."))
    all_ok = True
    for key, (_, right, why) in estimand_questions().items():
        given = answers.get(key)
        given = given.strip().lower() if isinstance(given, str) else given
        if given not in ("micro", "macro"):
            print(L(f"({key}) no answer yet: write 'micro' or 'macro'.",
                    f"({key}) todavía sin respuesta: escribe 'micro' o 'macro'."))
            all_ok = False
        elif given == right:
            print(L(f"({key}) right: {why}", f"({key}) correcto: {why}"))
        else:
            other = L("a chunk drawn at random" if given == "micro" else "a document drawn at random",
                      "un fragmento sorteado al azar" if given == "micro" else "un documento sorteado al azar")
            print(L(f"({key}) not yet: '{given}' answers a question about {other}. Who or what is drawn at "
                    "random in this question?",
                    f"({key}) todavía no: '{given}' responde a una pregunta sobre {other}. ¿Quién o qué se "
                    "sortea al azar en esta pregunta?"))
            all_ok = False
    print(L("All right.", "Todo correcto.") if all_ok else L("Not all right yet.", "Todavía no está todo bien."))
    return all_ok


#: Exercise 3: a four-document table (chunks n, hits s).
CR2_EXERCISE = {"doc": ["w", "x", "y", "z"], "n": [2.0, 4.0, 6.0, 28.0], "s": [2.0, 1.0, 0.0, 9.0]}


def exercise_table() -> pd.DataFrame:
    """The four-document table of exercises 3 and 4 (columns doc, n, s)."""
    return pd.DataFrame(CR2_EXERCISE)


def _close(x: float, target: float, rel: float = 1e-3) -> bool:
    return abs(x - target) <= rel * abs(target)


def _first_check(answer, right: float, what: str, praise: str) -> tuple[float | None, bool | None]:
    """The answer as a number, and the verdict when it is no number or is right (None: grade it further)."""
    x = _as_number(answer)
    if x is None:
        return None, _say(False, L(f"Set `answer` to a number: {what}.", f"Asigna a `answer` un número: {what}."))
    if _close(x, right):
        return x, _say(True, praise)
    return x, None


def _cr2_hints(n: np.ndarray, s: np.ndarray) -> list[tuple[float, str]]:
    """Exercise 3's usual wrong answers, each with what it is, in the current language."""
    from ..methods import micro
    N = n.sum()
    u = micro.residuals(n, s)
    R = s.sum() / N
    return [
        (math.sqrt(micro.var_cr1(n, s)),
         L("that is the CR1 standard error: CR2 divides each u_d^2 by (1 - h_d) instead of multiplying the sum "
           "by K/(K-1).", "ese es el error estándar CR1: CR2 divide cada u_d^2 entre (1 - h_d) en lugar de "
           "multiplicar la suma por K/(K-1).")),
        (math.sqrt(np.sum(u * u)) / N,
         L("that is CR0, with no correction at all: divide each u_d^2 by (1 - h_d), h_d = n_d / N.",
           "ese es CR0, sin ninguna corrección: divide cada u_d^2 entre (1 - h_d), con h_d = n_d / N.")),
        (math.sqrt(micro.var_cr3(n, s)),
         L("that is CR3: the leverage enters once, 1/(1 - h_d), not squared.",
           "ese es CR3: el apalancamiento entra una sola vez, 1/(1 - h_d), no al cuadrado.")),
        (micro.var_cr2(n, s), L("that is the variance: take its square root.",
                                "esa es la varianza: falta la raíz cuadrada.")),
        (math.sqrt(np.sum(u * u / (1 - n / N))),
         L("divide by N = sum n_d at the end: se = sqrt(sum u_d^2/(1 - h_d)) / N.",
           "al final hay que dividir entre N = suma de n_d: se = sqrt(suma de u_d^2/(1 - h_d)) / N.")),
        (math.sqrt(R * (1 - R) / N),
         L("that is the iid standard error, which treats the chunks as cases.",
           "ese es el error estándar iid, que trata cada fragmento como un caso.")),
    ]


def check_cr2_se(answer) -> bool:
    """Exercise 3: the CR2 standard error of the micro mean of :data:`CR2_EXERCISE` (no finite
    population correction), to 3 significant digits. Prints right or wrong with a hint."""
    from ..methods import micro
    n, s = np.asarray(CR2_EXERCISE["n"]), np.asarray(CR2_EXERCISE["s"])
    right = math.sqrt(micro.var_cr2(n, s))
    h = n.max() / n.sum()
    x, verdict = _first_check(
        answer, right, L("the CR2 standard error", "el error estándar CR2"),
        L(f"se_CR2 = {right:.5f}. The large document z has leverage h = {h:.2f}, so its residual is inflated "
          "by 1/(1 - h) in the variance.",
          f"se_CR2 = {num(right, '.5f')}. El documento grande, z, tiene un apalancamiento h = {num(h, '.2f')}, "
          "así que en la varianza su residuo se infla por 1/(1 - h)."))
    if verdict is not None:
        return verdict
    for value, hint in _cr2_hints(n, s):
        if _close(x, value, 1e-2):
            return _say(False, hint)
    return _say(False, L(f"not {x:.5g}. Steps: R = sum s / sum n; u_d = s_d - R n_d; h_d = n_d / N; "
                         f"se = sqrt(sum u_d^2 / (1 - h_d)) / N. K = {n.size}.",
                         f"no es {num(x, '.5g')}. Pasos: R = suma de s / suma de n; u_d = s_d - R n_d; "
                         f"h_d = n_d / N; se = sqrt(suma de u_d^2 / (1 - h_d)) / N. K = {n.size}."))


def check_bm_df(answer) -> bool:
    """Exercise 4: the Bell-McCaffrey degrees of freedom of the CR2 interval of :data:`CR2_EXERCISE`,
    to 3 significant digits. Prints right or wrong with a hint."""
    from ..methods import micro
    n = np.asarray(CR2_EXERCISE["n"])
    right = micro.df_bell_mccaffrey(n)
    share = n.max() / n.sum()
    x, verdict = _first_check(
        answer, right, L("the degrees of freedom", "los grados de libertad"),
        L(f"df = {right:.4f}, far below K - 1 = {n.size - 1}: one document holds {share:.0%} of the chunks, so "
          "the variance rests on little information.",
          f"gl = {num(right, '.4f')}, muy por debajo de K - 1 = {n.size - 1}: un documento reúne el "
          f"{pct(share, 0)} de los fragmentos, así que la varianza se apoya en muy poca información."))
    if verdict is not None:
        return verdict
    if x == n.size - 1:
        return _say(False, L(
            "K - 1 is the df of CR1 (and of CR2 only when every document has the same size). Bell-McCaffrey's "
            "df depends on the sizes: q_d = n_d^2 / (N - n_d), df = N^2 / (sum n_d^2 + sum over d != e of "
            "q_d q_e).",
            "K - 1 son los grados de libertad de CR1 (y de CR2 solo si todos los documentos tienen el mismo "
            "tamaño). Los de Bell-McCaffrey dependen de los tamaños: q_d = n_d^2 / (N - n_d), gl = N^2 / "
            "(suma de n_d^2 + suma sobre d != e de q_d q_e)."))
    if x == n.size:
        return _say(False, L("K is not a df here; the df are at most K - 1 and shrink when sizes are unequal.",
                             "K no son los grados de libertad: como mucho son K - 1, y bajan cuando los tamaños "
                             "son desiguales."))
    if not 1 <= x <= n.size - 1:
        return _say(False, L(f"the Bell-McCaffrey df always lie between 1 and K - 1 = {n.size - 1}.",
                             "los grados de libertad de Bell-McCaffrey siempre están entre 1 y K - 1 = "
                             f"{n.size - 1}."))
    return _say(False, L("q_d = n_d^2 / (N - n_d); df = N^2 / (sum n_d^2 + sum over pairs d != e of q_d q_e) "
                         "(each unordered pair counts twice).",
                         "q_d = n_d^2 / (N - n_d); gl = N^2 / (suma de n_d^2 + suma sobre los pares d != e de "
                         "q_d q_e) (cada par sin orden cuenta dos veces)."))


# ====================================================================== solutions
#: Each exercise's solution: the same code in both languages, with its comments and printed words
#: in that language. :func:`show_solution` prints it and runs it; no notebook cell holds it.
SOLUTIONS = {
    "1": {"en": '''\
# Search K upwards: the t quantile and the finite population correction both change with K.
e = teach.PLAN_EXERCISE
S, H, M, level = e["sd"], e["half_width"], e["population_size"], e["level"]

def half_width(k):
    return stats.t.ppf(1 - (1 - level) / 2, k - 1) * S / np.sqrt(k) * np.sqrt(1 - k / M)

k = 2
while half_width(k) > H:
    k += 1
print(f"K = {k}: half-width {half_width(k):.5f} (K = {k - 1} would give {half_width(k - 1):.5f})")
teach.check_documents_needed(k)
''', "es": '''\
# Se recorre K hacia arriba: el cuantil t y la corrección por población finita cambian con K.
e = teach.PLAN_EXERCISE
S, H, M, level = e["sd"], e["half_width"], e["population_size"], e["level"]

def half_width(k):
    return stats.t.ppf(1 - (1 - level) / 2, k - 1) * S / np.sqrt(k) * np.sqrt(1 - k / M)

k = 2
while half_width(k) > H:
    k += 1
print(f"K = {k}: semiamplitud {half_width(k):.5f} (con K = {k - 1} sería {half_width(k - 1):.5f})")
teach.check_documents_needed(k)
'''},
    "2": {"en": '''\
# Ask what is drawn at random in each question: a chunk (micro) or a document (macro).
answers = {
    "a": "micro",   # every chunk is equally likely to be asked about
    "b": "macro",   # a typical contract, whatever its length
    "c": "micro",   # a total over chunks = N x the chunk-level rate
    "d": "macro",   # a manual picked at random from the catalogue
}
teach.check_estimand(answers)
''', "es": '''\
# En cada pregunta, ¿qué se sortea al azar: un fragmento (micro) o un documento (macro)?
answers = {
    "a": "micro",   # cualquier fragmento tiene la misma probabilidad de ser preguntado
    "b": "macro",   # un contrato típico, sea cual sea su extensión
    "c": "micro",   # un total sobre fragmentos = N x la tasa por fragmento
    "d": "macro",   # un manual elegido al azar del catálogo
}
teach.check_estimand(answers)
'''},
    "3": {"en": '''\
# Residuals u_d = s_d - R n_d, leverages h_d = n_d / N, then se = sqrt(sum u_d^2 / (1 - h_d)) / N.
small = teach.exercise_table()
n = small.n.to_numpy(dtype=float)
s = small.s.to_numpy(dtype=float)
N = n.sum()
R = s.sum() / N
u = s - R * n
h = n / N
se_cr2 = np.sqrt(np.sum(u ** 2 / (1 - h))) / N
se_cr1 = np.sqrt(n.size / (n.size - 1) * np.sum(u ** 2)) / N
print(f"R = {R:.4f}; leverages {np.round(h, 3)}; se CR2 = {se_cr2:.5f} (CR1 would say {se_cr1:.5f})")
teach.check_cr2_se(se_cr2)
''', "es": '''\
# Residuos u_d = s_d - R n_d, apalancamientos h_d = n_d / N; se = sqrt(suma u_d^2 / (1 - h_d)) / N.
small = teach.exercise_table()
n = small.n.to_numpy(dtype=float)
s = small.s.to_numpy(dtype=float)
N = n.sum()
R = s.sum() / N
u = s - R * n
h = n / N
se_cr2 = np.sqrt(np.sum(u ** 2 / (1 - h))) / N
se_cr1 = np.sqrt(n.size / (n.size - 1) * np.sum(u ** 2)) / N
print(f"R = {R:.4f}; apalancamientos {np.round(h, 3)}; se CR2 = {se_cr2:.5f} (CR1 daría {se_cr1:.5f})")
teach.check_cr2_se(se_cr2)
'''},
    "4": {"en": '''\
# q_d = n_d^2 / (N - n_d); df = N^2 / (sum n_d^2 + sum over d != e of q_d q_e).
small = teach.exercise_table()
n = small.n.to_numpy(dtype=float)
N = n.sum()
q = n ** 2 / (N - n)
cross = sum(q[d] * q[e] for d in range(n.size) for e in range(n.size) if d != e)
df_bm = N ** 2 / (np.sum(n ** 2) + cross)
t_bm, t_3 = stats.t.ppf(0.975, df_bm), stats.t.ppf(0.975, 3)
print(f"df = {df_bm:.4f}: t quantile {t_bm:.2f}, against {t_3:.2f} with K - 1 = 3 df")
# One document holds 70% of the chunks: the variance rests on little more than one document's worth
# of information, and a t interval with 3 degrees of freedom would be far too short.
teach.check_bm_df(df_bm)
''', "es": '''\
# q_d = n_d^2 / (N - n_d); gl = N^2 / (suma de n_d^2 + suma sobre d != e de q_d q_e).
small = teach.exercise_table()
n = small.n.to_numpy(dtype=float)
N = n.sum()
q = n ** 2 / (N - n)
cross = sum(q[d] * q[e] for d in range(n.size) for e in range(n.size) if d != e)
df_bm = N ** 2 / (np.sum(n ** 2) + cross)
t_bm, t_3 = stats.t.ppf(0.975, df_bm), stats.t.ppf(0.975, 3)
print(f"gl = {df_bm:.4f}: cuantil t {t_bm:.2f}, frente a {t_3:.2f} con K - 1 = 3 gl")
# Un documento reúne el 70 % de los fragmentos: la varianza descansa en poco más que la información
# de un solo documento, y un intervalo t con 3 grados de libertad sería demasiado corto.
teach.check_bm_df(df_bm)
'''},
}


def _exercise_key(exercise) -> str:
    key = str(exercise).strip() if isinstance(exercise, (str, numbers.Integral)) else None
    if key not in SOLUTIONS or isinstance(exercise, bool):
        raise ParameterError(f"exercise must be one of {', '.join(SOLUTIONS)} (got {exercise!r})")
    return key


def solution_code(exercise, lang: str | None = None) -> str:
    """The code of an exercise's solution (``exercise``: 1 to 4, or "1" to "4"), with its comments
    in ``lang`` (default: the current language)."""
    lang = lang or get_language()
    return SOLUTIONS[_exercise_key(exercise)]["es" if lang == "es" else "en"]


def show_solution(exercise, *, run: bool = True) -> None:
    """Print the solution of an exercise (1 to 4) and, with ``run``, run it and print what it prints
    (the answer, confirmed by the exercise's check). It runs in a namespace of its own (numpy as
    ``np``, pandas as ``pd``, ``scipy.stats`` as ``stats``, this module as ``teach``): the learner's
    variables are left alone."""
    from scipy import stats
    key = _exercise_key(exercise)
    code = solution_code(key)
    print(L(f"Solution of exercise {key}:", f"Solución del ejercicio {key}:"))
    print()
    print("\n".join(("    " + line) if line else "" for line in code.rstrip("\n").splitlines()))
    if not run:
        return
    print()
    print(L("What it prints:", "Lo que imprime:"))
    import sys
    exec(compile(code, f"<solution {key}>", "exec"),
         {"np": np, "pd": pd, "stats": stats, "teach": sys.modules[__name__], "__name__": "__solution__"})
