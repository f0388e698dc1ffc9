"""The whole workflow in a report: frame, drawn sample (perdoc sample), labels, report
(params/example_pps.yaml, data/example/make_drawn.py), and the params key design.sample."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from perdoc.params import ParamsError, load_params
from perdoc.report.build import build_report

ROOT = Path(__file__).resolve().parents[1]
PPS = ROOT / "params" / "example_pps.yaml"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    return out, build_report(PPS, out)


def test_headline_is_the_design_interval_checked_by_its_own_simulation(built):
    out, _ = built
    s = json.loads((out / "example_pps" / "summary.json").read_text())
    h = s["headline"]
    assert h["method"] == "logit_design" and h["basis"] == "census" and h["verified"] and not h["approximate"]
    assert s["micro"]["logit_design"]["role"] == "primary"
    assert s["summary_box"]["interval"]["ci"] == h["ci"]
    assert s["design"]["sampling"] == "drawn" and s["design"]["design"] == "pps" and s["design"]["take"] == 10
    man = ROOT / "data" / "example" / "pps_manifest.csv"
    assert s["input"]["sample"]["sha256"] == hashlib.sha256(man.read_bytes()).hexdigest()
    assert s["simulation"]["design"]["sampling"] == "drawn"


def test_report_says_how_the_sample_was_drawn(built):
    html = built[1].read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", " ", html)
    assert "drawn by perdoc sample" in text and "proportional to size" in text
    assert "a simple random sample of documents" not in text.split("Contents")[0]   # the summary box
    assert "Traceback" not in html


def test_committed_example_files_are_what_make_drawn_writes(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT / "data" / "example"))
    try:
        import make_drawn
    finally:
        sys.path.pop(0)
    make_drawn.main(tmp_path)
    for name in ("frame.csv", "pps_manifest.csv", "pps_labels.csv"):
        assert (tmp_path / name).read_bytes() == (ROOT / "data" / "example" / name).read_bytes(), name


def _params(tmp_path, design: str) -> Path:
    p = tmp_path / "p.yaml"
    p.write_text(f"name: p\ndata: {{path: {ROOT / 'data/example/pps_labels.csv'}, doc: doc_id, score: bm25}}\n"
                 f"design: {{population: x, {design}}}\nestimand: {{kind: micro, why: y}}\n", encoding="utf-8")
    return p


def test_design_sample_params_rules(tmp_path):
    man = ROOT / "data" / "example" / "pps_manifest.csv"
    s = load_params(_params(tmp_path, f"sample: {man}"))
    assert s.design.sampling == "drawn" and s.to_dict()["design"]["sample"] == str(man)
    for design, words in ((f"sample: {man}, sampling: srs", "leave 'design.sampling' out"),
                          ("sampling: drawn", "needs key 'design.sample'"),
                          (f"sample: {man}, population_size: 1300", "does not go with design.sample"),
                          ("nonresponse: true", "goes with design.sample")):
        with pytest.raises(ParamsError, match=re.escape(words)):
            load_params(_params(tmp_path, design))


def test_summary_names_the_manifest_as_written(built):
    s = json.loads((built[0] / "example_pps" / "summary.json").read_text())
    assert s["params"]["design"]["sample"] == "../data/example/pps_manifest.csv"


def test_planning_section_recommends_a_design_and_shows_the_table(built):
    """planning.design: the designs compared at the study's label budget on the census; the
    recommendation holds its level at every K up to it, stays within the budget, and the report names
    it with the command that draws it."""
    out, html_path = built
    s = json.loads((out / "example_pps" / "summary.json").read_text())
    dp = s["planning_design"]
    assert dp["basis"] == "census" and dp["budget"] == 200 and dp["budget_source"] == "this study's labels"
    assert {(r["design"], r["take"]) for r in dp["rows"]} == {("srs", None), ("srs", 10), ("pps", None), ("pps", 10)}
    rec = dp["recommended"]
    assert rec is not None and rec["cost"] <= dp["budget"]
    assert all(r["holds"] for r in dp["rows"] if (r["design"], r["take"]) == (rec["design"], rec["take"])
               and r["k"] <= rec["k"])
    html = html_path.read_text(encoding="utf-8")
    assert "Which design to draw" in html
    assert f"--k {rec['k']} --design {rec['design']}" in html


def test_planning_design_params_rules(tmp_path):
    base = PPS.read_text(encoding="utf-8").replace("../data/", str(ROOT / "data") + "/")
    cases = {"designs: [srs, lottery]": "'lottery' is not one of",
             "takes: [0]": "planning.design.takes",
             "ks: [1]": "planning.design.ks",
             "budget: -3": "planning.design.budget",
             "reps: 5": "planning.design.reps",
             "cost_doc: 0, cost_chunk: 0": "cannot both be 0"}
    for bad, message in cases.items():
        p = tmp_path / "p.yaml"
        p.write_text(base.replace("design: {designs: [srs, pps], takes: [null, 10], reps: 200}", "design: {" + bad + "}"),
                     encoding="utf-8")
        with pytest.raises(ParamsError, match=re.escape(message)):
            load_params(p)
    # without a census or a frame there are no sizes to plan on
    p = tmp_path / "p.yaml"
    p.write_text(base.replace("census: {path:", "#census: {path:").replace("simulation: {reps: 2000, seed: 1}", ""),
                 encoding="utf-8")
    with pytest.raises(ParamsError, match="needs the population's document sizes"):
        load_params(p)
