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
Spanish; the notebooks set it from their ``language`` parameter): each is a message of the catalogs
(``teach.*`` keys, :func:`perdoc.i18n.tr`), numbers included in the reader's form. The data they return keep English
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
from .i18n import LANGUAGES, N_, get_language, tr, translate

__all__ = ["LAB_METHODS", "LAB_METHODS_ES", "DEFAULT_METHODS", "lab_label", "lab_census", "census_summary",
           "census_line", "coverage_lab", "coverage_chart", "lab_summary", "show_lab",
           "PLAN_EXERCISE", "ESTIMAND_QUESTIONS", "ESTIMAND_QUESTIONS_ES", "estimand_questions", "CR2_EXERCISE",
           "exercise_table", "check_documents_needed", "check_estimand", "check_cr2_se", "check_bm_df",
           "SOLUTIONS", "solution_code", "show_solution"]

# ====================================================================== the coverage lab
#: The message key of each method a student can switch on (its short label; the simulation's method names).
_LAB_KEYS = {
    "micro.wald_iid": N_("teach.lab.micro.wald_iid"),
    "micro.wald_eff_n": N_("teach.lab.micro.wald_eff_n"),
    "micro.cr1": N_("teach.lab.micro.cr1"),
    "micro.cr2": N_("teach.lab.micro.cr2"),
    "micro.logit_cr2": N_("teach.lab.micro.logit_cr2"),
    "micro.cr3": N_("teach.lab.micro.cr3"),
    "micro.bootstrap_t": N_("teach.lab.micro.bootstrap_t"),
    "micro.percentile": N_("teach.lab.micro.percentile"),
    "macro.t": N_("teach.lab.macro.t"),
}
#: The methods a student can switch on, with their short label in English (from the catalogs).
LAB_METHODS = {m: translate("en", key) for m, key in _LAB_KEYS.items()}
#: The same labels in Spanish.
LAB_METHODS_ES = {m: translate("es", key) for m, key in _LAB_KEYS.items()}
DEFAULT_METHODS = ("micro.wald_iid", "micro.cr1", "micro.cr2", "micro.logit_cr2")
_RESAMPLING = {"micro.bootstrap_t", "micro.percentile"}
_BASELINES = {"micro.wald_iid", "micro.wald_eff_n"}
MAX_LAB_REPS = 100_000


def lab_label(method: str) -> str:
    """The lab's label of a method (a key of :data:`LAB_METHODS`) in the current language."""
    return tr(_LAB_KEYS[method])


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
    return {"holds": tr("teach.kind.holds"), "falls short": tr("teach.kind.falls_short"),
            "baseline": tr("teach.kind.baseline")}


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
    x = alt.X("lo:Q", title=tr("teach.chart.coverage_axis"),
              scale=alt.Scale(domain=[max(0.0, low - 0.02), 1.0]))
    cov = alt.layer(
        base.mark_rule(strokeWidth=3).encode(x=x, x2="hi:Q", y=y, color=colour),
        base.mark_point(filled=True, size=70).encode(x="coverage:Q", y=y, color=colour,
                                                     tooltip=["label", "coverage", "mc_se"]),
        alt.Chart(pd.DataFrame({"x": [level]})).mark_rule(color="#555555", strokeDash=[4, 4]).encode(x="x:Q"),
    ).properties(width=300, height=max(90, 26 * len(d)),
                 title=tr("teach.chart.coverage_title", level=level))
    width = base.mark_bar().encode(
        x=alt.X("mean_width:Q", title=tr("teach.chart.width_axis")),
        y=alt.Y("method:N", title=None, sort=list(d["method"]), axis=None),
        color=colour, tooltip=["label", "mean_width"],
    ).properties(width=200, height=max(90, 26 * len(d)), title=tr("teach.chart.width_title"))
    return alt.hconcat(cov, width).properties(title=_chart_title(df.attrs)).configure_view(stroke=None).configure(
        font="sans-serif", background="white")


def _chart_title(a: dict) -> str:
    nan = float("nan")
    return tr("teach.chart.title", k=a.get("k"), sigma=a.get("sigma", nan), icc=a.get("icc", nan),
              base_rate=a.get("base_rate", nan), reps=a.get("reps"))


def _summary_line(r, level: float, reps) -> str:
    """:func:`lab_summary`'s sentence for one row ``r`` of a lab table."""
    lopsided = max(r.miss_low, r.miss_high) > 2 * min(r.miss_low, r.miss_high) + 1e-12
    side = tr("teach.summary.above") if r.miss_high > r.miss_low else tr("teach.summary.below")
    cov = tr("teach.summary.coverage", coverage=r.coverage, spread=2 * r.mc_se)
    if r.verdict == "holds":
        verdict = tr("teach.summary.holds", level=level)
    else:
        verdict = tr("teach.summary.falls_short", level=level,
                     lopsided=tr("teach.summary.lopsided", side=side) if lopsided else "")
    extra = tr("teach.summary.no_interval", share=r.no_interval) if r.no_interval > 0 else ""
    return tr("teach.summary.line", label=r.label, coverage=cov, reps=reps, verdict=verdict, extra=extra)


def lab_summary(df: pd.DataFrame) -> str:
    """One plain sentence per method: its coverage against the nominal level, and how it missed."""
    level = float(df.attrs.get("level", 0.95))
    reps = df.attrs.get("reps")
    return "\n".join(_summary_line(r, level, reps) for r in df.itertuples(index=False))


_LAB_COLUMNS = ["method", "coverage", "mc_se", "mean_width", "miss_low", "miss_high", "no_interval", "verdict"]
#: The lab table's column headers (in English the column names themselves).
_LAB_HEADER_KEYS = {"method": N_("teach.header.method"), "coverage": N_("teach.header.coverage"),
                    "mc_se": N_("teach.header.mc_se"), "mean_width": N_("teach.header.mean_width"),
                    "miss_low": N_("teach.header.miss_low"), "miss_high": N_("teach.header.miss_high"),
                    "no_interval": N_("teach.header.no_interval"), "verdict": N_("teach.header.verdict")}


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
    kinds = _kinds()
    table = df[_LAB_COLUMNS].assign(verdict=[kinds.get(v, v) for v in df["verdict"]])
    headers = {column: tr(key) for column, key in _LAB_HEADER_KEYS.items()}
    show_table(table, floatfmt="{:.3f}", headers=headers)
    display(HTML("<ul>" + "".join(f"<li>{esc(s)}</li>" for s in lab_summary(df).splitlines()) + "</ul>"))


def census_line(c: dict) -> str:
    """:func:`census_summary` as one sentence."""
    return tr("teach.census_line", documents=c["documents"], chunks=c["chunks"], top10_share=c["top10_share"],
              icc=c["icc"], micro=c["micro"], macro=c["macro"])


# ====================================================================== exercises
def _say(ok: bool, text: str) -> bool:
    """Print the verdict and ``text`` (in Spanish the text starts with a capital letter after the verdict)."""
    print(tr("teach.say.right", text=text) if ok else tr("teach.say.not_yet", text=text))
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
        return tr("teach.plan.infinite", M=M)
    if abs(K - plan.K) <= 1:
        return tr("teach.plan.off_by_one")
    if K == z_k:
        return tr("teach.plan.normal_infinite")
    if K == math.ceil(z_k / (1 + z_k / M)):
        return tr("teach.plan.normal")
    if K > M:
        return tr("teach.plan.too_large", M=M)
    if K < plan.K:
        return tr("teach.plan.too_few")
    return tr("teach.plan.too_many")


def check_documents_needed(answer) -> bool:
    """Exercise 1: the smallest number of documents K whose micro interval half-width is at most
    ``PLAN_EXERCISE["half_width"]`` (pilot spread ``sd``, population of ``population_size``
    documents, level ``level``). Prints right or wrong with a hint; returns whether it is right."""
    from ..study.plan import half_width, plan_k
    e = PLAN_EXERCISE
    plan = plan_k(e["sd"], e["half_width"], level=e["level"], population_size=e["population_size"])
    x = _as_number(answer)
    if x is None:
        return _say(False, tr("teach.plan.no_answer"))
    if x != round(x):
        return _say(False, tr("teach.plan.not_whole"))
    K = int(round(x))
    if K == plan.K:
        before = half_width(K - 1, e["sd"], e["level"], e["population_size"])
        return _say(True, tr("teach.plan.right", K=K, half_width=plan.half_width, target=e["half_width"],
                             previous=K - 1, before=before))
    return _say(False, f"K = {K}: {_plan_hint(K, plan, e)}")


#: Exercise 2's questions: key -> (message key of the question, its answer, message key of why).
_QUESTIONS = {
    "a": (N_("teach.question.a"), "micro", N_("teach.question.a.why")),
    "b": (N_("teach.question.b"), "macro", N_("teach.question.b.why")),
    "c": (N_("teach.question.c"), "micro", N_("teach.question.c.why")),
    "d": (N_("teach.question.d"), "macro", N_("teach.question.d.why")),
}
_QUESTIONS_IN = {lang: {key: (translate(lang, q), answer, translate(lang, why))
                        for key, (q, answer, why) in _QUESTIONS.items()} for lang in LANGUAGES}
#: Exercise 2: questions, each answered by one estimand (micro or macro), with why (from the catalogs).
ESTIMAND_QUESTIONS = _QUESTIONS_IN["en"]
#: The same questions in Spanish (the same answers).
ESTIMAND_QUESTIONS_ES = _QUESTIONS_IN["es"]


def estimand_questions() -> dict:
    """Exercise 2's questions in the current language: key -> (question, answer, why)."""
    return _QUESTIONS_IN[get_language()]


def check_estimand(answers) -> bool:
    """Exercise 2: ``answers`` maps each question of :data:`ESTIMAND_QUESTIONS` ("a", "b", ...) to
    "micro" or "macro". Prints a line per question; returns whether every answer is right."""
    if not isinstance(answers, dict):
        return _say(False, tr("teach.estimand.no_dict"))
    all_ok = True
    for key, (_, right, why) in estimand_questions().items():
        given = answers.get(key)
        given = given.strip().lower() if isinstance(given, str) else given
        if given not in ("micro", "macro"):
            print(tr("teach.estimand.no_answer", key=key))
            all_ok = False
        elif given == right:
            print(tr("teach.estimand.right", key=key, why=why))
        else:
            other = tr("teach.estimand.chunk") if given == "micro" else tr("teach.estimand.document")
            print(tr("teach.estimand.wrong", key=key, given=given, other=other))
            all_ok = False
    print(tr("teach.estimand.all_right") if all_ok else tr("teach.estimand.not_all_right"))
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
        return None, _say(False, tr("teach.set_answer_number", what=what))
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
        (math.sqrt(micro.var_cr1(n, s)), tr("teach.cr2.cr1")),
        (math.sqrt(np.sum(u * u)) / N, tr("teach.cr2.cr0")),
        (math.sqrt(micro.var_cr3(n, s)), tr("teach.cr2.cr3")),
        (micro.var_cr2(n, s), tr("teach.cr2.variance")),
        (math.sqrt(np.sum(u * u / (1 - n / N))), tr("teach.cr2.divide_by_N")),
        (math.sqrt(R * (1 - R) / N), tr("teach.cr2.iid")),
    ]


def check_cr2_se(answer) -> bool:
    """Exercise 3: the CR2 standard error of the micro mean of :data:`CR2_EXERCISE` (no finite
    population correction), to 3 significant digits. Prints right or wrong with a hint."""
    from ..methods import micro
    n, s = np.asarray(CR2_EXERCISE["n"]), np.asarray(CR2_EXERCISE["s"])
    right = math.sqrt(micro.var_cr2(n, s))
    h = n.max() / n.sum()
    x, verdict = _first_check(answer, right, tr("teach.cr2.what"), tr("teach.cr2.right", se=right, h=h))
    if verdict is not None:
        return verdict
    for value, hint in _cr2_hints(n, s):
        if _close(x, value, 1e-2):
            return _say(False, hint)
    return _say(False, tr("teach.cr2.steps", x=x, K=n.size))


def check_bm_df(answer) -> bool:
    """Exercise 4: the Bell-McCaffrey degrees of freedom of the CR2 interval of :data:`CR2_EXERCISE`,
    to 3 significant digits. Prints right or wrong with a hint."""
    from ..methods import micro
    n = np.asarray(CR2_EXERCISE["n"])
    right = micro.df_bell_mccaffrey(n)
    share = n.max() / n.sum()
    x, verdict = _first_check(answer, right, tr("teach.df.what"),
                              tr("teach.df.right", df=right, df_max=n.size - 1, share=share))
    if verdict is not None:
        return verdict
    if x == n.size - 1:
        return _say(False, tr("teach.df.k_minus_1"))
    if x == n.size:
        return _say(False, tr("teach.df.k"))
    if not 1 <= x <= n.size - 1:
        return _say(False, tr("teach.df.range", df_max=n.size - 1))
    return _say(False, tr("teach.df.formula"))


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
    print(tr("teach.solution.title", key=key))
    print()
    print("\n".join(("    " + line) if line else "" for line in code.rstrip("\n").splitlines()))
    if not run:
        return
    print()
    print(tr("teach.solution.prints"))
    import sys
    exec(compile(code, f"<solution {key}>", "exec"),
         {"np": np, "pd": pd, "stats": stats, "teach": sys.modules[__name__], "__name__": "__solution__"})
