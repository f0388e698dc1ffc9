"""perdoc plan --vs B (and perdoc.plan.plan_difference): the number of documents for a target
half-width of the paired difference A - B, planned from the pilot's paired spread. The planner is the
single-system one applied to the per-document differences D_d = s_Ad - s_Bd (methods.md, "Paired
comparison" and "Planning")."""

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import perdoc
from perdoc.cli import main
from perdoc.compare import PairTable, compare
from perdoc.errors import ParameterError
from perdoc.params import load_params
from perdoc.plan import DifferencePlan, half_width, plan_difference, plan_k, spread
from perdoc.study.run import load_study_pairs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "params" / "example.yaml"


def _rows(K=40, seed=7, noise=0.6):
    """Per-row scores of two systems on the same chunks of K documents of unequal sizes: B follows A
    at the document level, plus ``noise`` of its own."""
    rng = np.random.default_rng(seed)
    sizes = rng.geometric(0.15, K)
    doc = np.repeat([f"d{i:03d}" for i in range(K)], sizes)
    p = np.repeat(rng.beta(1.2, 3.0, K), sizes)
    a = (rng.random(doc.size) < p).astype(float)
    q = np.clip(p + noise * (rng.random(doc.size) - 0.5), 0, 1)
    b = (rng.random(doc.size) < q).astype(float)
    return doc, a, b


def _pairs(doc, a, b, names=("A", "B")):
    return PairTable.from_rows(doc, a, b, names=names)


def _table_of_differences(doc, a, b):
    """Per-document table whose chunk scores are the row differences a - b, built without PairTable."""
    docs, idx = np.unique(doc, return_inverse=True)
    n = np.bincount(idx).astype(float)
    s = np.bincount(idx, weights=a - b)
    return perdoc.DocTable.from_arrays(n=n, s=s, doc=docs, assume_binary=False)


# ---------------------------------------------------------------------------------- the library
@pytest.mark.parametrize("estimand, own_sample, df_rule, variance", [
    ("micro", False, None, "cr1"), ("micro", True, None, "cr2"), ("micro", True, "k-1", "cr1"),
    ("macro", False, None, "cr1"), ("macro", True, None, "cr1")])
def test_the_paired_spread_is_the_spread_of_the_differences(estimand, own_sample, df_rule, variance):
    doc, a, b = _rows()
    plan = plan_difference(_pairs(doc, a, b), 0.05, estimand=estimand, own_sample=own_sample, df_rule=df_rule,
                           population_size=500)
    diff = _table_of_differences(doc, a, b)
    S = spread(diff, estimand, variance=variance)
    assert plan.sd == pytest.approx(S, rel=1e-12)
    sizes = diff.n if plan.df_rule == "bell-mccaffrey" else None
    single = plan_k(S, 0.05, population_size=500, estimand=estimand, sizes=sizes)
    assert (plan.K, plan.K_without_fpc, plan.df) == (single.K, single.K_without_fpc, pytest.approx(single.df))
    assert isinstance(plan, DifferencePlan) and (plan.a, plan.b) == ("A", "B")


def test_the_micro_residuals_are_those_of_the_difference_ratio():
    """u_d = D_d - Delta n_d with Delta = sum D_d / N, normalised by mean n_d (methods.md)."""
    doc, a, b = _rows(seed=3)
    diff = _table_of_differences(doc, a, b)
    delta = diff.s.sum() / diff.N
    u = diff.s - delta * diff.n
    plan = plan_difference(_pairs(doc, a, b), 0.05, estimand="micro", df_rule="k-1")
    assert plan.sd == pytest.approx(np.std(u, ddof=1) / diff.n.mean(), rel=1e-12)


@pytest.mark.parametrize("estimand", ["micro", "macro"])
def test_shifting_b_by_a_constant_changes_nothing_but_the_estimate(estimand):
    """Adding c to every score of B shifts D_d by -c n_d and Delta by -c: the residuals u_d (and the
    differences of the document rates, up to the constant) are unchanged, so is the plan."""
    doc, a, b = _rows(seed=11)
    base = plan_difference(_pairs(doc, a, b), 0.04, estimand=estimand)
    shifted = plan_difference(_pairs(doc, a, b + 0.375), 0.04, estimand=estimand)
    assert shifted.sd == pytest.approx(base.sd, rel=1e-9) and shifted.K == base.K
    assert shifted.correlation == pytest.approx(base.correlation, abs=1e-9)
    swapped = plan_difference(_pairs(doc, b, a, names=("B", "A")), 0.04, estimand=estimand)
    assert swapped.sd == pytest.approx(base.sd, rel=1e-12) and swapped.K == base.K
    assert (swapped.sd_a, swapped.sd_b) == (pytest.approx(base.sd_b), pytest.approx(base.sd_a))


@pytest.mark.parametrize("estimand", ["micro", "macro"])
def test_the_paired_variance_is_var_a_plus_var_b_minus_twice_the_covariance(estimand):
    """u^D_d = u_Ad - u_Bd, so S_D^2 = S_A^2 + S_B^2 - 2 r S_A S_B with r the Pearson correlation of the
    systems' document rates (macro) or of their residuals u_d (micro), as perdoc compare reports it."""
    doc, a, b = _rows(seed=5)
    pairs = _pairs(doc, a, b)
    plan = plan_difference(pairs, 0.05, estimand=estimand)
    ta, tb = pairs.system("a"), pairs.system("b")
    if estimand == "macro":
        xa, xb = ta.rate, tb.rate
    else:
        xa, xb = ta.s - ta.s.sum() / ta.N * ta.n, tb.s - tb.s.sum() / tb.N * tb.n
    r = float(np.corrcoef(xa, xb)[0, 1])
    assert plan.correlation == pytest.approx(r, abs=1e-12)
    assert compare(pairs, replicates=0).correlation[estimand] == pytest.approx(r, abs=1e-12)
    assert (plan.sd_a, plan.sd_b) == (pytest.approx(spread(ta, estimand)), pytest.approx(spread(tb, estimand)))
    assert plan.sd ** 2 == pytest.approx(plan.sd_a ** 2 + plan.sd_b ** 2 - 2 * r * plan.sd_a * plan.sd_b, rel=1e-10)
    assert plan.unpaired_sd == pytest.approx(math.hypot(plan.sd_a, plan.sd_b))
    sizes = pairs.n_a if plan.df_rule == "bell-mccaffrey" else None   # the same df rule as the paired plan
    assert plan.unpaired_k == plan_k(plan.unpaired_sd, 0.05, sizes=sizes).K


@pytest.mark.parametrize("estimand, own_sample, M", [("micro", False, None), ("micro", True, 2000),
                                                      ("macro", False, 2000), ("micro", False, 800)])
@pytest.mark.parametrize("target", [0.1, 0.03, 0.012])
def test_the_planned_k_reaches_the_target(estimand, own_sample, M, target):
    doc, a, b = _rows(K=60, seed=2)
    pairs = _pairs(doc, a, b)
    plan = plan_difference(pairs, target, estimand=estimand, own_sample=own_sample, population_size=M)
    sizes = pairs.n_a if plan.df_rule == "bell-mccaffrey" else None
    h = lambda k: half_width(k, plan.sd, 0.95, M, sizes)  # noqa: E731
    assert plan.half_width == h(plan.K) <= target
    if plan.K > 2:
        assert h(plan.K - 1) > target


def test_correlated_systems_need_far_fewer_documents_than_unpaired_samples():
    doc, a, _ = _rows(K=80, seed=4)
    rng = np.random.default_rng(9)
    b = np.where(rng.random(a.size) < 0.05, 1 - a, a)   # B flips 5% of A's rows
    plan = plan_difference(_pairs(doc, a, b), 0.02, estimand="micro")
    assert plan.correlation > 0.9
    assert plan.unpaired_k > 5 * plan.K
    d = plan.to_dict()
    assert set(d["comparison"]) >= {"a", "b", "paired_sd", "correlation", "unpaired_k"}
    assert d["comparison"]["paired_sd"] == d["sd"] and d["comparison"]["unpaired_k"] == plan.unpaired_k
    # systems whose document rates vary independently: little to cancel, so pairing saves little
    docs, idx = np.unique(doc, return_inverse=True)
    p_b = rng.beta(1.2, 3.0, docs.size)[idx]
    indep = plan_difference(_pairs(doc, a, (rng.random(a.size) < p_b).astype(float)), 0.02, estimand="macro")
    assert abs(indep.correlation) < 0.2 and 0.8 * indep.K < indep.unpaired_k < 1.25 * indep.K


def test_no_plan_from_a_constant_difference():
    doc, a, _ = _rows(seed=1)
    for b in (a + 0.25, a.copy()):      # B is A shifted by a constant, or A itself: D_d = -c n_d
        with pytest.raises(ParameterError, match="paired spread is 0"):
            plan_difference(_pairs(doc, a, b), 0.05)
        with pytest.raises(ParameterError, match="No plan for the difference A - B can be made"):
            plan_difference(_pairs(doc, a, b), 0.05, estimand="macro")


def test_unpaired_tables_are_refused():
    doc, a, b = _rows(seed=1)
    p = _pairs(doc, a, b)
    unpaired = replace(p, paired=False, q_d=None)
    with pytest.raises(ParameterError, match="needs both scores on every row"):
        plan_difference(unpaired, 0.05)
    with pytest.raises(ParameterError, match="PairTable"):
        plan_difference(p.system("a"), 0.05)


def test_exported_from_perdoc_study():
    import perdoc.study as study
    assert study.plan_difference is plan_difference and study.DifferencePlan is DifferencePlan


# ---------------------------------------------------------------------------------- the command line
def _census_pairs():
    study = load_params(EXAMPLE)
    return load_study_pairs(replace(study, data=replace(study.data, path=study.census)))


def _run(capsys, *args):
    code = main(["plan", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_json_adds_the_comparison_and_keeps_every_key(capsys):
    code, out, _ = _run(capsys, "--params", str(EXAMPLE), "--half-width", "0.02", "--json")
    single = json.loads(out)
    code, out, err = _run(capsys, "--params", str(EXAMPLE), "--half-width", "0.02", "--vs", "tfidf", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert set(single) <= set(d) and set(d) - set(single) == {"comparison"}
    c = d["comparison"]
    assert (c["a"], c["b"]) == ("bm25", "tfidf")
    ref = plan_difference(_census_pairs(), 0.02, population_size=1300)
    assert d["K"] == ref.K and d["sd"] == c["paired_sd"] == ref.sd and c["unpaired_k"] == ref.unpaired_k
    assert c["correlation"] == pytest.approx(compare(_census_pairs(), replicates=0).correlation["micro"], abs=1e-12)
    assert d["pilot"] == "census" and d["pilot_K"] == 1300 and d["spread_rule"] == "sd_u"
    assert d["df_rule"] == "bell-mccaffrey" and d["population_size"] == 1300
    assert c["unpaired_k"] > 10 * d["K"]


def test_cli_study_pilot_macro_and_score_override(capsys):
    code, out, _ = _run(capsys, "--params", str(EXAMPLE), "--half-width", "0.03", "--vs", "tfidf", "--json",
                        "--pilot", "study", "--estimand", "macro")
    d = json.loads(out)
    ref = plan_difference(load_study_pairs(load_params(EXAMPLE)), 0.03, estimand="macro", own_sample=True,
                          population_size=1300)
    assert code == 0 and d["K"] == ref.K and d["sd"] == ref.sd and d["df_rule"] == "K-1"
    assert d["pilot"] == "study" and d["spread_rule"] == "sd_r"
    code, out, _ = _run(capsys, "--params", str(EXAMPLE), "--half-width", "0.03", "--vs", "bm25", "--json",
                        "--score", "tfidf", "--pilot", "study", "--estimand", "macro")
    swapped = json.loads(out)
    assert (swapped["comparison"]["a"], swapped["comparison"]["b"]) == ("tfidf", "bm25")
    assert swapped["K"] == d["K"] and swapped["sd"] == pytest.approx(d["sd"], rel=1e-12)


def test_cli_text_says_it_plans_the_difference(capsys):
    code, out, err = _run(capsys, "--params", str(EXAMPLE), "--half-width", "0.02", "--vs", "tfidf")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("perdoc plan: micro difference bm25 - tfidf, paired spread S = 0.07554 "
                               "(census: example (K = 1,300 documents)), level 0.95")
    assert "of the per-document differences A - B" in lines[1]
    assert re.match(r"K = 64 documents give a half-width of 0\.01998 \(target 0\.02\) with M = 1,300", lines[2])
    pairing = next(x for x in lines if x.startswith("pairing: "))
    assert "bm25 has spread 0.479" in pairing and "correlation of their document rates" in pairing
    unpaired = next(x for x in lines if x.startswith("unpaired: "))
    assert "var_A + var_B" in unpaired and "K = 977 documents for each system" in unpaired
    assert lines[-1].startswith("note: an approximation")


def test_the_readme_shows_what_plan_vs_prints(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Plan the next sample"):text.index("## Which interval can I trust here?")]
    m = re.search(r"perdoc plan (--params params/example\.yaml --vs \S+ --half-width \S+)\s*\n```\n+"
                  r"```text\n(.*?)^```$", section, re.S | re.M)
    assert m, "the README's planning section shows a perdoc plan --vs example"
    assert main(["plan", *m.group(1).replace("params/", f"{ROOT / 'params'}/").split()]) == 0
    assert capsys.readouterr().out == m.group(2)


def _params(tmp_path, name, rows):
    (tmp_path / f"{name}.csv").write_text("doc,a,b\n" + "\n".join(rows) + "\n", encoding="utf-8")
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: {name}\ntitle: t\ndata: {{path: {name}.csv, doc: doc, score: a}}\n"
                    "design: {population: p, sampling: srs}\nestimand: {kind: micro, why: w}\n"
                    "intervals: {level: 0.95, replicates: 0, seed: 1}\n", encoding="utf-8")
    return str(path)


BAD = {
    "missing": (["--vs", "nope"], ["--vs nope must name a score column of the pilot", "column 'nope' not found"]),
    "same as data.score": (["--vs", "bm25"], ["--vs bm25 is the data.score column", "two different"]),
    "same as --score": (["--score", "tfidf", "--vs", "tfidf"], ["--vs tfidf is the --score column"]),
    "score missing": (["--score", "nope", "--vs", "tfidf"], ["--score nope must name a score column"]),
    "with --sd": (["--vs", "tfidf", "--sd", "0.3"], ["--vs plans from the paired spread of a pilot", "not --sd"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_flags_are_one_line_with_status_2(capsys, case):
    args, words = BAD[case]
    code, out, err = _run(capsys, "--params", str(EXAMPLE), "--half-width", "0.05", *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    for w in words:
        assert w in err


@pytest.mark.parametrize("args, words", [
    (["--estimand", "micro", "--sd", "0.3", "--vs", "b"], ["--vs plans from the paired spread", "--params"]),
    (["--frame", "frame.csv", "--vs", "b"], ["--vs does not go with --frame"]),
])
def test_vs_needs_a_pilot(capsys, args, words):
    code, out, err = _run(capsys, "--half-width", "0.05", *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    for w in words:
        assert w in err


@pytest.mark.parametrize("name, rows, words", [
    ("one_document", ["d1,1,0", "d1,0,1"], ["at least 2 documents", "1 document"]),
    ("b_on_one_document", ["d1,1,0", "d1,0,1", "d2,1,", "d2,0,", "d3,1,", "d3,1,"],
     ["at least 2 documents, every row scored by both", "have a score for 'a' but not for 'b'"]),
    ("constant_shift", ["d1,1,1.5", "d1,0,0.5", "d2,1,1.5", "d3,0,0.5", "d3,1,1.5", "d3,1,1.5"],
     ["No plan for the difference a - b can be made", "paired spread is 0", "differ by one constant"]),
    ("identical", ["d1,1,1", "d1,0,0", "d2,1,1", "d3,0,0", "d3,1,1"], ["paired spread is 0", "(0)"]),
])
def test_bad_pilots_are_one_line_with_status_2(tmp_path, capsys, name, rows, words):
    code, out, err = _run(capsys, "--params", _params(tmp_path, name, rows), "--half-width", "0.05", "--vs", "b")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("perdoc: error: --vs b: ")
    for w in words:
        assert w in err
