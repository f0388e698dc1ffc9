"""perdoc plan --params plans as the report's planning section (notebooks/05_planning.ipynb) does: the
census (else the study) as the pilot, CR2 with Bell-McCaffrey df for the micro mean, t with K - 1 df for
the macro mean; --df-rule k-1 keeps the earlier rule reachable."""

import json
from pathlib import Path

import pytest

from perdoc.cli import main
from perdoc.params import load_params
from perdoc.plan import plan_k, spread
from perdoc.study.run import load_study_census, load_study_table

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "params" / "example.yaml"
NOTEBOOK = ROOT / "notebooks" / "05_planning.ipynb"


def _notebook_source() -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def test_the_notebook_still_plans_with_these_calls():
    """The planning section plans with the command line's ``pilot_inputs``; the reference below
    computes the same rule independently, so if either changes its rule, this says so."""
    src = _notebook_source()
    for call in ('pilot = a.census if from_census else table',
                 'S, sizes, _, _ = pilot_inputs(pilot, kind, own_sample=not from_census)',
                 'plan_k(S, h, level=est.level, population_size=M, estimand=kind, sizes=sizes)',
                 'M = est.population_size if study.design.sampling in ("srs", "census") else None'):
        assert call in src, call


def _report_plan(params, half_width, *, estimand=None, use_census=True):
    """The planning section's plan (notebook 05's library calls) for a simple random sample study."""
    study = load_params(params)
    table = load_study_table(study)
    census = load_study_census(study) if use_census else None
    kind = estimand or study.estimand.kind
    from_census = census is not None
    pilot = census if from_census else table
    sizes = pilot.n if kind == "micro" else None
    S = spread(pilot, kind, variance="cr1" if (from_census or kind == "macro") else "cr2")
    M = study.design.population_size if study.design.sampling in ("srs", "census") else None
    return plan_k(S, half_width, level=study.intervals.level, population_size=M, estimand=kind, sizes=sizes)


def _plan_json(capsys, *args) -> dict:
    assert main(["plan", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("half_width", [0.10, 0.05, 0.02])
def test_plan_gives_the_reports_number_of_documents(capsys, half_width):
    ref = _report_plan(EXAMPLE, half_width)
    d = _plan_json(capsys, "--params", str(EXAMPLE), "--half-width", str(half_width))
    assert d["K"] == ref.K and d["K_without_fpc"] == ref.K_without_fpc
    assert d["half_width"] == ref.half_width and d["df"] == ref.df and d["sd"] == ref.sd
    assert d["df_rule"] == "bell-mccaffrey" and d["pilot"] == "census" and d["pilot_K"] == 1300
    assert d["spread_rule"] == "sd_u" and "Bell-McCaffrey" in d["df_rule_text"]
    assert d["sd_source"] == "census: example (K = 1,300 documents)"


def test_the_example_plan_for_the_reports_target():
    """The example report's planning section asks for +-0.05 (planning.half_width): 290 documents."""
    assert load_params(EXAMPLE).planning.half_width == 0.05
    ref = _report_plan(EXAMPLE, 0.05)
    assert (ref.K, ref.K_without_fpc) == (290, 372) and ref.df < ref.K - 1


def test_plan_text_says_the_rule_and_the_df(capsys):
    assert main(["plan", "--params", str(EXAMPLE), "--half-width", "0.05"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == ("rule: CR2 with the Bell-McCaffrey df of K documents sized like the census's, spread "
                      "sd(u_d) / mean(n_d) (the report's rule)")
    assert out[2].startswith("K = 290 documents give a half-width of 0.04997 (target 0.05) with M = 1,300, df 43.7")


def test_the_study_as_pilot_and_the_macro_mean(capsys):
    ref = _report_plan(EXAMPLE, 0.05, use_census=False)
    d = _plan_json(capsys, "--params", str(EXAMPLE), "--half-width", "0.05", "--pilot", "study")
    assert d["K"] == ref.K and d["df"] == ref.df and d["pilot"] == "study" and d["spread_rule"] == "cr2"
    assert d["sd_source"] == "pilot: example (K = 20 documents)"
    ref = _report_plan(EXAMPLE, 0.05, estimand="macro")
    d = _plan_json(capsys, "--params", str(EXAMPLE), "--half-width", "0.05", "--estimand", "macro")
    assert d["K"] == ref.K and d["df_rule"] == "K-1" and d["df"] == d["K"] - 1 and d["spread_rule"] == "sd_r"


def test_df_rule_k_1_is_the_earlier_rule(capsys):
    study = load_params(EXAMPLE)
    for pilot, table in (("census", load_study_census(study)), ("study", load_study_table(study))):
        ref = plan_k(spread(table, "micro"), 0.05, population_size=1300, estimand="micro")
        d = _plan_json(capsys, "--params", str(EXAMPLE), "--half-width", "0.05", "--df-rule", "k-1",
                       "--pilot", pilot)
        assert d["K"] == ref.K and d["df_rule"] == "K-1" and d["df"] == ref.K - 1 and d["spread_rule"] == "sd_u"
    assert _plan_json(capsys, "--params", str(EXAMPLE), "--half-width", "0.05", "--df-rule", "k-1")["K"] == 280
    # --sd alone: no sizes, so t with K - 1 df, as before
    d = _plan_json(capsys, "--estimand", "micro", "--sd", "0.412", "--half-width", "0.05", "--population-size", "1300")
    assert d["K"] == 220 and d["df_rule"] == "K-1" and d["pilot"] is None and d["spread_rule"] == "given"


def test_a_frame_gives_the_population_size(tmp_path, capsys):
    text = EXAMPLE.read_text(encoding="utf-8").replace("../data/", f"{(ROOT / 'data').as_posix()}/")
    text = text.replace("  population_size: 1300\n", "  frame: census\n")
    params = tmp_path / "framed.yaml"
    params.write_text(text, encoding="utf-8")
    d = _plan_json(capsys, "--params", str(params), "--half-width", "0.05")
    assert d["population_size"] == 1300 and d["K"] == 290


def test_other_designs_plan_a_simple_random_sample_without_fpc(capsys):
    assert main(["plan", "--params", str(ROOT / "params" / "two_stage.yaml"), "--half-width", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "with M =" not in out and "design is two-stage" in out


@pytest.mark.parametrize("args, message", [
    (["--estimand", "micro", "--sd", "0.4", "--df-rule", "bell-mccaffrey"], "needs the document sizes"),
    (["--params", str(EXAMPLE), "--estimand", "macro", "--df-rule", "bell-mccaffrey"], "plans the micro mean"),
    (["--estimand", "micro", "--sd", "0.4", "--pilot", "census"], "--pilot goes with --params"),
    (["--params", str(ROOT / "tests" / "fixtures" / "tiny" / "tiny.yaml"), "--pilot", "census"], "names no census"),
    (["--params", str(ROOT / "tests" / "fixtures" / "degenerate" / "all_half.yaml")], "No plan from this pilot"),
])
def test_refusals_are_one_line(capsys, args, message):
    assert main(["plan", *args, "--half-width", "0.05"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and message in captured.err


def test_the_readme_shows_what_plan_prints(capsys):
    import re
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Plan the next sample"):text.index("## Which interval can I trust here?")]
    shown = re.search(r"^```text\n(.*?)^```$", section, re.S | re.M).group(1)
    assert "--params params/example.yaml --half-width 0.05 " in section
    assert main(["plan", "--params", str(EXAMPLE), "--half-width", "0.05"]) == 0
    assert capsys.readouterr().out == shown


def test_a_population_smaller_than_the_studys_own_sample_is_refused(capsys):
    """--population-size below the documents the params study already holds is refused as estimate
    refuses it (it was taken: a plan of K = M documents with a half-width of 0)."""
    from perdoc.study.run import load_study_table
    k = load_study_table(load_params(EXAMPLE)).K    # (the example's own sample)
    assert main(["plan", "--params", str(EXAMPLE), "--half-width", "0.05", "--population-size", str(k - 1)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"M = {k - 1} is below the number of sampled documents K = {k}" in err
    assert main(["plan", "--params", str(EXAMPLE), "--half-width", "0.05", "--population-size", str(k)]) == 0
