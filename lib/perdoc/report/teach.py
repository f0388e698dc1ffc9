"""Helpers for the teaching notebooks (``notebooks/teach``): the coverage lab and the exercises' checks.

The notebooks only wire widgets to these plain functions, and the tests call them directly:

* :func:`coverage_lab` draws a synthetic census (:func:`perdoc.synthetic.synthetic_census`) with the
  chosen size inequality, intra-class correlation and base rate, runs perdoc's coverage simulation
  (:func:`perdoc.simulate.simulate`) for samples of ``k`` documents, and returns one row per chosen
  interval method: its coverage, Monte Carlo standard error, mean width and misses by side;
* :func:`coverage_chart` draws that table (coverage with +- 2 Monte Carlo SE, and mean width);
  :func:`show_lab` displays chart, table and a plain-language summary (static SVG: readable in a
  notebook rendered without a kernel);
* ``check_*`` functions check an exercise's answer, print right or wrong with a hint, and return
  ``True`` or ``False``. They never raise on a student's answer (a missing or non-numeric answer is
  "not yet").

Nothing here re-implements a formula: every number comes from :mod:`perdoc.micro`,
:mod:`perdoc.plan` and :mod:`perdoc.simulate`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from ..errors import ParameterError

__all__ = ["LAB_METHODS", "DEFAULT_METHODS", "lab_census", "census_summary", "census_line", "coverage_lab",
           "coverage_chart", "lab_summary", "show_lab",
           "PLAN_EXERCISE", "ESTIMAND_QUESTIONS", "CR2_EXERCISE", "exercise_table",
           "check_documents_needed", "check_estimand", "check_cr2_se", "check_bm_df"]

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
DEFAULT_METHODS = ("micro.wald_iid", "micro.cr1", "micro.cr2", "micro.logit_cr2")
_RESAMPLING = {"micro.bootstrap_t", "micro.percentile"}
_BASELINES = {"micro.wald_iid", "micro.wald_eff_n"}
MAX_LAB_REPS = 100_000


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
        rows.append({"method": m, "label": LAB_METHODS[m], "estimand": m.split(".", 1)[0],
                     "coverage": r["coverage"], "mc_se": r["mc_se"], "mean_width": r["mean_width"],
                     "miss_low": r["miss_low"], "miss_high": r["miss_high"], "no_interval": r["no_interval"],
                     "baseline": m in _BASELINES, "verdict": "holds" if holds else "falls short"})
    df = pd.DataFrame(rows)
    df.attrs = {"k": k, "sigma": float(sigma), "icc": float(icc), "base_rate": float(base_rate), "reps": reps,
                "seed": seed, "level": level, "replicates": B, "census": census_summary(census),
                "truth": dict(sim.truth)}
    return df


def coverage_chart(df: pd.DataFrame):
    """Two panels from a :func:`coverage_lab` table: coverage of each method with +- 2 Monte Carlo SE
    and the nominal level (dashed), and its mean width. An Altair chart."""
    import altair as alt
    level = float(df.attrs.get("level", 0.95))
    d = df[["method", "label", "coverage", "mc_se", "mean_width", "verdict", "baseline"]].copy()
    d["lo"] = (d["coverage"] - 2 * d["mc_se"]).clip(lower=0)
    d["hi"] = (d["coverage"] + 2 * d["mc_se"]).clip(upper=1)
    d["kind"] = [("baseline (chunks as cases)" if b else v) for b, v in zip(d["baseline"], d["verdict"])]
    d = d.drop(columns=["baseline"])
    colour = alt.Color("kind:N", title="", scale=alt.Scale(
        domain=["holds", "falls short", "baseline (chunks as cases)"], range=["#1f4e79", "#e07b39", "#d1495b"]))
    y = alt.Y("method:N", title=None, sort=list(d["method"]))
    low = min(0.5, float(np.nanmin(d["lo"])) if len(d) else 0.5)
    base = alt.Chart(d)
    x = alt.X("lo:Q", title="coverage (+- 2 Monte Carlo SE)", scale=alt.Scale(domain=[max(0.0, low - 0.02), 1.0]))
    cov = alt.layer(
        base.mark_rule(strokeWidth=3).encode(x=x, x2="hi:Q", y=y, color=colour),
        base.mark_point(filled=True, size=70).encode(x="coverage:Q", y=y, color=colour,
                                                     tooltip=["label", "coverage", "mc_se"]),
        alt.Chart(pd.DataFrame({"x": [level]})).mark_rule(color="#555555", strokeDash=[4, 4]).encode(x="x:Q"),
    ).properties(width=300, height=max(90, 26 * len(d)), title=f"Coverage (nominal {level:.0%})")
    width = base.mark_bar().encode(
        x=alt.X("mean_width:Q", title="mean width of the interval"), y=alt.Y("method:N", title=None,
                                                                           sort=list(d["method"]), axis=None),
        color=colour, tooltip=["label", "mean_width"],
    ).properties(width=200, height=max(90, 26 * len(d)), title="Mean width")
    a = df.attrs
    title = (f"K = {a.get('k')} documents, size sigma {a.get('sigma', float('nan')):g}, ICC {a.get('icc', float('nan')):g}, "
             f"base rate {a.get('base_rate', float('nan')):g}; {a.get('reps')} simulated samples")
    return alt.hconcat(cov, width).properties(title=title).configure_view(stroke=None).configure(
        font="sans-serif", background="white")


def lab_summary(df: pd.DataFrame) -> str:
    """One plain sentence per method: its coverage against the nominal level, and how it missed."""
    level = float(df.attrs.get("level", 0.95))
    reps = df.attrs.get("reps")
    out = []
    for r in df.itertuples(index=False):
        cov = f"{r.coverage:.1%} (+- {2 * r.mc_se:.1%})"
        if r.verdict == "holds":
            verdict = f"holds the nominal {level:.0%}"
        else:
            side = "above" if r.miss_high > r.miss_low else "below"
            lopsided = max(r.miss_low, r.miss_high) > 2 * min(r.miss_low, r.miss_high) + 1e-12
            verdict = (f"falls short of {level:.0%}"
                       + (f"; most misses are intervals lying entirely {side} the census value" if lopsided else ""))
        extra = f"; no interval in {r.no_interval:.1%} of samples" if r.no_interval > 0 else ""
        out.append(f"{r.label}: covered the census value in {cov} of {reps} samples, {verdict}{extra}.")
    return "\n".join(out)


def show_lab(df: pd.DataFrame) -> None:
    """Display a :func:`coverage_lab` result: the chart as static SVG (no script, no network), the
    census in one line, the table and :func:`lab_summary`."""
    from IPython.display import HTML, display
    from .charts import to_svg
    from .notebook import esc, show_table
    c = df.attrs.get("census", {})
    if c:
        display(HTML(f"<p>{esc(census_line(c))}</p>"))
    display(HTML(to_svg(coverage_chart(df))))
    show_table(df[["method", "coverage", "mc_se", "mean_width", "miss_low", "miss_high", "no_interval", "verdict"]],
               floatfmt="{:.3f}")
    display(HTML("<ul>" + "".join(f"<li>{esc(s)}</li>" for s in lab_summary(df).splitlines()) + "</ul>"))


def census_line(c: dict) -> str:
    """:func:`census_summary` as one sentence."""
    return (f"Census: {c['documents']:,} documents, {c['chunks']:,} chunks; the largest 10% of documents hold "
            f"{c['top10_share']:.0%} of the chunks; ICC {c['icc']:.2f}; true micro mean {c['micro']:.4f}, "
            f"macro mean {c['macro']:.4f}.")


# ====================================================================== exercises
def _say(ok: bool, text: str) -> bool:
    print(("Right. " if ok else "Not yet. ") + text)
    return ok


def _as_number(answer):
    """The answer as a float, or None when it is missing or not a number."""
    from .i18n import finite_number
    return finite_number(answer)


#: Exercise 1: a pilot's spread of the micro mean, the population size and the target.
PLAN_EXERCISE = {"sd": 0.412, "half_width": 0.05, "population_size": 1300, "level": 0.95}


def check_documents_needed(answer) -> bool:
    """Exercise 1: the smallest number of documents K whose micro interval half-width is at most
    ``PLAN_EXERCISE["half_width"]`` (pilot spread ``sd``, population of ``population_size``
    documents, level ``level``). Prints right or wrong with a hint; returns whether it is right."""
    from ..methods._dist import norm_ppf
    from ..study.plan import half_width, plan_k
    e = PLAN_EXERCISE
    plan = plan_k(e["sd"], e["half_width"], level=e["level"], population_size=e["population_size"])
    x = _as_number(answer)
    if x is None:
        return _say(False, "Set `answer` to a whole number of documents.")
    if x != round(x):
        return _say(False, "A number of documents is a whole number: round up to the next one that reaches "
                    "the target.")
    K = int(round(x))
    if K == plan.K:
        return _say(True, f"K = {K} documents give a half-width of {plan.half_width:.4f} <= {e['half_width']}; "
                    f"{K - 1} would give {half_width(K - 1, e['sd'], e['level'], e['population_size']):.4f}.")
    z = norm_ppf(1 - (1 - e["level"]) / 2)
    z_k = math.ceil((z * e["sd"] / e["half_width"]) ** 2)
    if K == plan.K_without_fpc:
        hint = ("that is the answer for an infinite population. The population has "
                f"{e['population_size']:,} documents: include the finite population correction sqrt(1 - K/M).")
    elif abs(K - plan.K) <= 1:
        hint = ("off by one: find the SMALLEST K whose half-width is at most the target "
                "(check K and K - 1).")
    elif K == z_k:
        hint = ("that is the normal-quantile answer for an infinite population: use t(1 - alpha/2; K - 1), "
                "and the finite population correction sqrt(1 - K/M).")
    elif K == math.ceil(z_k / (1 + z_k / e["population_size"])):
        hint = ("close, but a normal quantile (1.96) understates the half-width: use t(1 - alpha/2; K - 1), "
                "which depends on K, so search K step by step.")
    elif K > e["population_size"]:
        hint = f"more documents than the population holds ({e['population_size']:,}): count documents, not chunks."
    elif K < plan.K:
        hint = "too few: at that K the half-width t * S / sqrt(K) * sqrt(1 - K/M) is still above the target."
    else:
        hint = "too many: a smaller K already reaches the target half-width."
    return _say(False, f"K = {K}: {hint}")


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


def check_estimand(answers) -> bool:
    """Exercise 2: ``answers`` maps each question of :data:`ESTIMAND_QUESTIONS` ("a", "b", ...) to
    "micro" or "macro". Prints a line per question; returns whether every answer is right."""
    if not isinstance(answers, dict):
        return _say(False, "Set `answers` to a dict such as {'a': 'micro', 'b': 'macro', ...}.")
    all_ok = True
    for key, (_, right, why) in ESTIMAND_QUESTIONS.items():
        given = answers.get(key)
        given = given.strip().lower() if isinstance(given, str) else given
        if given not in ("micro", "macro"):
            print(f"({key}) no answer yet: write 'micro' or 'macro'.")
            all_ok = False
        elif given == right:
            print(f"({key}) right: {why}")
        else:
            other = "a chunk drawn at random" if given == "micro" else "a document drawn at random"
            print(f"({key}) not yet: '{given}' answers a question about {other}. Who or what is drawn at "
                  "random in this question?")
            all_ok = False
    print("All right." if all_ok else "Not all right yet.")
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
        return None, _say(False, f"Set `answer` to a number: {what}.")
    if _close(x, right):
        return x, _say(True, praise)
    return x, None


def check_cr2_se(answer) -> bool:
    """Exercise 3: the CR2 standard error of the micro mean of :data:`CR2_EXERCISE` (no finite
    population correction), to 3 significant digits. Prints right or wrong with a hint."""
    from ..methods import micro
    n, s = np.asarray(CR2_EXERCISE["n"]), np.asarray(CR2_EXERCISE["s"])
    right = math.sqrt(micro.var_cr2(n, s))
    x, verdict = _first_check(answer, right, "the CR2 standard error",
                              f"se_CR2 = {right:.5f}. The large document z has leverage h = "
                              f"{n.max() / n.sum():.2f}, so its residual is inflated by 1/(1 - h) in the variance.")
    if verdict is not None:
        return verdict
    K, N = n.size, n.sum()
    u = micro.residuals(n, s)
    cr0 = math.sqrt(np.sum(u * u)) / N
    hints = [
        (math.sqrt(micro.var_cr1(n, s)), "that is the CR1 standard error: CR2 divides each u_d^2 by (1 - h_d) "
         "instead of multiplying the sum by K/(K-1)."),
        (cr0, "that is CR0, with no correction at all: divide each u_d^2 by (1 - h_d), h_d = n_d / N."),
        (math.sqrt(micro.var_cr3(n, s)), "that is CR3: the leverage enters once, 1/(1 - h_d), not squared."),
        (micro.var_cr2(n, s), "that is the variance: take its square root."),
        (math.sqrt(np.sum(u * u / (1 - n / N))), "divide by N = sum n_d at the end: se = sqrt(sum u_d^2/(1 - h_d)) / N."),
    ]
    R = s.sum() / N
    hints.append((math.sqrt(R * (1 - R) / N), "that is the iid standard error, which treats the chunks as cases."))
    for value, hint in hints:
        if _close(x, value, 1e-2):
            return _say(False, hint)
    return _say(False, f"not {x:.5g}. Steps: R = sum s / sum n; u_d = s_d - R n_d; h_d = n_d / N; "
                "se = sqrt(sum u_d^2 / (1 - h_d)) / N. K = " + str(K) + ".")


def check_bm_df(answer) -> bool:
    """Exercise 4: the Bell-McCaffrey degrees of freedom of the CR2 interval of :data:`CR2_EXERCISE`,
    to 3 significant digits. Prints right or wrong with a hint."""
    from ..methods import micro
    n = np.asarray(CR2_EXERCISE["n"])
    right = micro.df_bell_mccaffrey(n)
    x, verdict = _first_check(answer, right, "the degrees of freedom",
                              f"df = {right:.4f}, far below K - 1 = {n.size - 1}: one document holds "
                              f"{n.max() / n.sum():.0%} of the chunks, so the variance rests on little information.")
    if verdict is not None:
        return verdict
    if x == n.size - 1:
        return _say(False, "K - 1 is the df of CR1 (and of CR2 only when every document has the same size). "
                    "Bell-McCaffrey's df depends on the sizes: q_d = n_d^2 / (N - n_d), "
                    "df = N^2 / (sum n_d^2 + sum over d != e of q_d q_e).")
    if x == n.size:
        return _say(False, "K is not a df here; the df are at most K - 1 and shrink when sizes are unequal.")
    if not 1 <= x <= n.size - 1:
        return _say(False, f"the Bell-McCaffrey df always lie between 1 and K - 1 = {n.size - 1}.")
    return _say(False, "q_d = n_d^2 / (N - n_d); df = N^2 / (sum n_d^2 + sum over pairs d != e of q_d q_e) "
                "(each unordered pair counts twice).")
