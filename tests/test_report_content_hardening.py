"""Report content: misspelt top-level keys, the description, the out-of-scope caveats, and reports on
degenerate data (every document at the same rate, a census without spread, identical systems, one
huge document, two documents) that render every section with "no interval" and the reason."""

import copy
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import perdoc
from perdoc import charts
from perdoc.checklist import checklist, every_score_same
from perdoc.errors import ParameterError
from perdoc.params import DEFAULT_OUT_OF_SCOPE, ParamsError, load_params
from perdoc.plan import plan_k, spread, spread_problem
from perdoc.report.build import build_report

ROOT = Path(__file__).resolve().parents[1]
DEGENERATE = ROOT / "tests" / "fixtures" / "degenerate"

BASE = {
    "name": "demo",
    "data": {"path": "data.csv", "doc": "doc_id", "score": "hit"},
    "design": {"population": "all filings of 2025", "population_size": 1300, "sampling": "srs"},
    "estimand": {"kind": "micro", "why": "a chunk drawn at random"},
}


def write(tmp_path, doc):
    p = tmp_path / "p.yaml"
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return p


def params(tmp_path, **changes):
    d = copy.deepcopy(BASE)
    for k, v in changes.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return load_params(write(tmp_path, d))


# ----------------------------------------------------------------------------- 1. misspelt keys
def test_misspelt_estimand_is_named_not_reported_missing(tmp_path):
    d = copy.deepcopy(BASE)
    d["estimnd"] = d.pop("estimand")
    with pytest.raises(ParamsError, match=r"unknown key 'estimnd' \(did you mean 'estimand'\?\)") as e:
        load_params(write(tmp_path, d))
    assert "no estimand declared" not in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("typo, meant", [("titel", "title"), ("desciption", "description"),
                                         ("out_of_scop", "out_of_scope"), ("simulaton", "simulation")])
def test_misspelt_top_level_key_named_even_without_estimand(tmp_path, typo, meant):
    d = copy.deepcopy(BASE)
    del d["estimand"]
    d[typo] = "x"
    with pytest.raises(ParamsError, match=rf"unknown key '{typo}' \(did you mean '{meant}'\?\)"):
        load_params(write(tmp_path, d))


def test_missing_estimand_still_refused(tmp_path):
    with pytest.raises(ParamsError, match="no estimand declared"):
        params(tmp_path, estimand=None)


# ----------------------------------------------------------------------------- 2. description
def test_description_in_study_and_summary(tmp_path):
    s = params(tmp_path, description="  A pilot   of <i>ten</i> filings.\n")
    assert s.description == "A pilot of <i>ten</i> filings."
    assert s.to_dict()["description"] == "A pilot of <i>ten</i> filings."
    assert params(tmp_path).description is None
    with pytest.raises(ParamsError, match=r"key 'description' must be a string"):
        params(tmp_path, description=["x"])


# ----------------------------------------------------------------------------- 3. out of scope
def test_own_out_of_scope_keeps_the_defaults(tmp_path):
    s = params(tmp_path, out_of_scope=["The labels are one annotator's.", DEFAULT_OUT_OF_SCOPE[0]])
    assert s.out_of_scope == DEFAULT_OUT_OF_SCOPE + ("The labels are one annotator's.",)
    assert s.out_of_scope_defaults == DEFAULT_OUT_OF_SCOPE
    assert s.out_of_scope_user == ("The labels are one annotator's.",) and s.out_of_scope_given
    d = s.to_dict()
    assert d["out_of_scope"] == list(s.out_of_scope)
    assert list(d["out_of_scope_user"]) == ["The labels are one annotator's."]


def test_out_of_scope_defaults_false_drops_them(tmp_path):
    s = params(tmp_path, out_of_scope=["Only this."], out_of_scope_defaults=False)
    assert s.out_of_scope == ("Only this.",) and s.out_of_scope_defaults == ()
    s = params(tmp_path, out_of_scope_defaults=False)
    assert s.out_of_scope == () and not s.out_of_scope_given
    s = params(tmp_path, out_of_scope_defaults=True)
    assert s.out_of_scope == DEFAULT_OUT_OF_SCOPE and s.out_of_scope_user == ()


@pytest.mark.parametrize("value", ["no", 0, 1, "false"])
def test_out_of_scope_defaults_must_be_boolean(tmp_path, value):
    with pytest.raises(ParamsError, match=r"key 'out_of_scope_defaults' must be true or false"):
        params(tmp_path, out_of_scope_defaults=value)


def test_checklist_marks_where_each_caveat_comes_from():
    t = perdoc.DocTable.from_arrays(n=[3, 5, 8, 4], s=[1, 2, 5, 0])
    e = perdoc.estimate(t, replicates=0)
    items = checklist(t, e, design={"population": "p", "sampling": "srs"}, estimand={"name": "micro", "why": "w"},
                      out_of_scope=["Fixed index.", "Labels by one annotator."],
                      out_of_scope_sources=["default", "from the params file"], exclusions=())
    v = {i.key: i for i in items}["out_of_scope"].value
    assert v == "[default] Fixed index. [from the params file] Labels by one annotator."
    with pytest.raises(ParameterError):
        checklist(t, e, design={"population": "p", "sampling": "srs"}, estimand={"name": "micro", "why": "w"},
                  out_of_scope=["a"], out_of_scope_sources=["default", "x"], exclusions=())


# ----------------------------------------------------------------------------- 4. degenerate data
def flat(rate=0.5, K=20):
    n = np.arange(2, 2 * K + 2, 2, dtype=float)
    return perdoc.DocTable.from_arrays(n=n, s=n * rate)


@pytest.mark.parametrize("rate", [0.0, 1.0, 0.5])
@pytest.mark.parametrize("kind", ["micro", "macro"])
def test_planner_explains_a_pilot_without_spread(rate, kind):
    t = flat(rate)
    msg = spread_problem(t, kind)
    assert msg.startswith("No plan from this pilot") and "K = 2" in msg and "assumed spread" in msg
    assert spread_problem(t, kind, source="census").startswith("No plan from this census")
    with pytest.raises(ParameterError, match="sd must be a positive number .*assumed spread"):
        plan_k(spread(t, kind), 0.05)
    assert spread_problem(perdoc.DocTable.from_arrays(n=[2, 4, 6], s=[1, 1, 5]), kind) is None


def test_rates_equal_up_to_rounding_count_as_equal():
    n = np.array([3.0, 6, 9, 12, 30])
    t = perdoc.DocTable.from_arrays(n=n, s=n / 3, assume_binary=False)
    assert spread_problem(t, "micro") is not None


def test_bootstrap_chart_skipped_when_every_replicate_is_equal():
    e = perdoc.estimate(flat(0.5), replicates=50, seed=1)
    assert "no distribution to draw" in charts.bootstrap_empty(e, "micro")
    assert charts.bootstrap_empty(perdoc.estimate(flat(0.5), replicates=0)) is not None
    t = perdoc.DocTable.from_arrays(n=[2, 4, 6, 8], s=[1, 1, 5, 2])
    assert charts.bootstrap_empty(perdoc.estimate(t, replicates=50, seed=1), "micro") is None


def test_coverage_and_planning_charts_skip_or_drop_what_has_no_value():
    frame = pd.DataFrame({"method": ["micro.cr2", "micro.t"], "estimand": ["micro", "micro"],
                          "coverage": [np.nan, np.nan], "mc_se": [np.nan, np.nan], "baseline": [False, False]})
    assert charts.coverage_empty(frame) is not None
    frame.loc[0, ["coverage", "mc_se"]] = [0.9, 0.01]
    assert charts.coverage_empty(frame) is None
    c = charts.coverage_chart(frame, level=0.95)
    assert "Not drawn (no coverage): micro.t" in c.caption and charts.to_svg(c).startswith("<svg")
    assert charts.planning_empty({"no FPC": [(5, 0.0), (10, 0.0)]}) is not None
    assert charts.planning_empty({"no FPC": [(5, 0.1)]}) is None


def test_checklist_says_interval_and_icc_unavailable():
    t = flat(0.0)
    e = perdoc.estimate(t, replicates=50, seed=1)
    assert every_score_same(t) == 0.0 and every_score_same(flat(1.0)) == 1.0
    assert every_score_same(flat(0.5)) is None  # 0/1 scores within each document: they differ
    d = {i.key: i for i in checklist(t, e, design={"population": "p", "sampling": "srs"},
                                     estimand={"name": "micro", "why": "w"}, exclusions=())}
    assert d["interval_method"].status == "unavailable"
    assert "no interval (zero variance" in d["interval_method"].value
    assert d["icc_deff"].status == "unavailable" and "0/0" in d["icc_deff"].value


FIXTURES = ["all_zero", "all_one", "all_half", "census_same", "paired_identical", "one_big", "k2"]


@pytest.fixture(scope="module", autouse=True)
def _one_kernel(shared_kernel):
    """The module's reports share one notebook kernel (tests/conftest.py)."""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("degenerate-reports")
    return {name: build_report(DEGENERATE / f"{name}.yaml", out) for name in FIXTURES}


def html(reports, name):
    return reports[name].read_text(encoding="utf-8")


def text(reports, name):
    """The report's visible text (tags dropped, SVG dropped, entities kept)."""
    h = re.sub(r"<svg.*?</svg>", " ", html(reports, name), flags=re.S)
    h = re.sub(r"<style.*?</style>", " ", h, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", h).split())


@pytest.mark.parametrize("name", FIXTURES)
def test_degenerate_report_renders_every_section_without_errors(reports, name):
    h = html(reports, name)
    for title in ("Study design", "Estimand", "Intervals", "Comparing systems", "Planning the next sample",
                  "Reporting checklist", "What the uncertainty does not cover"):
        assert title in h, title
    assert "Traceback" not in h and "Error:" not in h and "ParameterError" not in h
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in h
    summary = json.loads((reports[name].parent / "summary.json").read_text())
    assert summary["K"] >= 2


@pytest.mark.parametrize("name, rate", [("all_zero", "0"), ("all_one", "1"), ("all_half", "0.5")])
def test_every_document_at_one_rate(reports, name, rate):
    t = text(reports, name)
    assert "no interval" in t
    assert f"every document has the same rate ({rate})" in t
    assert "No plan from this pilot" in t and "K = 2 documents reach any half-width" in t
    assert "assumed spread" in t
    assert "no distribution to draw" in t
    assert "Unavailable from these data" in t
    assert "Every item is given" not in t
    assert "documents needed, K" not in t  # no plan table


def test_every_score_identical_has_no_icc(reports):
    for name in ("all_zero", "all_one"):
        assert "the ICC is 0/0" in text(reports, name)
    assert "the ICC is 0/0" not in text(reports, "all_half")


def test_fallback_intervals_are_flagged(reports):
    t = text(reports, "all_zero")
    assert "documented fallback" in t and "not as the uncertainty of this estimate" in t


def test_census_without_spread(reports):
    t = text(reports, "census_same")
    assert "no sampling error to cover" in t
    assert "recommended micro." not in t and "recommended macro." not in t
    assert "No plan from this census" in t
    assert "this census cannot show what stratifying gains" in t


def test_identical_systems(reports):
    t = text(reports, "paired_identical")
    assert "sys_a - sys_b, micro mean: +0.0000: no interval" in t
    assert "the two systems do not differ" in t
    assert "census difference exactly" in t


@pytest.mark.parametrize("name", ["one_big", "k2"])
def test_extreme_sizes_still_plan_and_report(reports, name):
    t = text(reports, name)
    assert "documents needed, K" in t
    # the checklist is complete, or says the headline is approximate (the pseudo-population check found
    # no method at the nominal level): never both
    assert ("Every item is given" in t) != ("Approximate:" in t)


def test_one_huge_document_warns_the_plan_is_optimistic(reports):
    assert "the planned numbers are optimistic" in text(reports, "one_big")


def test_description_and_caveat_sources_shown_escaped(reports):
    h = html(reports, "all_zero")
    assert "A pilot of a weak retriever: &lt;i&gt;nothing&lt;/i&gt; is found in any document." in h
    assert "<i>nothing</i>" not in h
    s = json.loads((reports["all_zero"].parent / "summary.json").read_text())
    assert s["params"]["description"].startswith("A pilot of a weak retriever")
    h = html(reports, "all_half")
    assert "The relevance labels are &lt;b&gt;one&lt;/b&gt; annotator" in h and "<b>one</b>" not in h
    t = text(reports, "all_half")
    assert "from the params file" in t and "[default] The index is fixed" in t
    assert t.count("The index is fixed") >= 2  # in the checklist and in the out-of-scope table
