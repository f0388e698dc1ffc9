"""The report kit end to end: notebooks execute, the HTML is offline, escaped, reproducible, and its
numbers are the engine's."""

import json
import re
import shutil
from pathlib import Path

import nbformat
import papermill as pm
import pytest

import perdoc
from perdoc.cli import main
from perdoc.report.build import NOTEBOOKS, build_report, notebook_dir

from conftest import shared_report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "params" / "example.yaml"
TINY = ROOT / "tests" / "fixtures" / "tiny" / "tiny.yaml"


@pytest.fixture(scope="module", autouse=True)
def _one_kernel(shared_kernel):
    """The module's reports share one notebook kernel (tests/conftest.py)."""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    paths = {}
    for params in (TINY, ROOT / "params" / "stratified.yaml", ROOT / "params" / "two_stage.yaml"):
        paths[params.stem] = build_report(params, out)
    # the example's report as every module that only reads it has it (rendered once per run)
    shutil.copytree(shared_report(EXAMPLE).parent, out / "example")
    paths["example"] = out / "example" / "report.html"
    return out, paths


def html_of(built, name):
    return built[1][name].read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["example", "tiny", "stratified", "two_stage"])
def test_report_files(built, name):
    folder = built[0] / name
    assert sorted(p.name for p in folder.iterdir()) == ["documents.csv", "report.html", "summary.json"]
    html = html_of(built, name)
    for title in ("Study design", "Estimand", "Intervals", "Comparing systems", "Planning the next sample",
                  "Reporting checklist", "Contents"):
        assert title in html, title


@pytest.mark.parametrize("name", ["example", "tiny", "stratified", "two_stage"])
def test_html_offline_and_without_errors(built, name):
    html = html_of(built, name)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "<script src" not in html
    assert "Traceback" not in html
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html
    assert "<svg" in html


def test_toc_links_resolve(built):
    html = html_of(built, "example")
    links = re.findall(r'href="#([^"]+)"', html)
    ids = set(re.findall(r'id="([^"]+)"', html))
    toc = [l for l in links if l in {"Study-design", "Estimand", "Intervals", "Comparing-systems",
                                     "Planning-the-next-sample", "Reporting-checklist"}]
    assert len(toc) >= 6
    for l in links:
        assert l in ids, f"TOC link #{l} has no target"


def test_hostile_document_id_is_escaped(built):
    html = html_of(built, "tiny")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html  # params text is escaped too


@pytest.mark.parametrize("name, params, data, score", [
    ("example", EXAMPLE, ROOT / "data" / "example" / "sample.csv", "bm25"),
    ("tiny", TINY, ROOT / "tests" / "fixtures" / "tiny" / "tiny.csv", "hit"),
])
def test_summary_equals_cli(built, capsys, name, params, data, score):
    summary = json.loads((built[0] / name / "summary.json").read_text())
    study = perdoc.params.load_params(params)
    args = ["estimate", str(data), "--doc", "doc_id", "--score", score, "--json",
            "--level", str(study.intervals.level), "--replicates", str(study.intervals.replicates),
            "--seed", str(study.intervals.seed)]
    if study.design.population_size:
        args += ["--population-size", str(study.design.population_size)]
    assert main(args) == 0
    cli = json.loads(capsys.readouterr().out)
    def numbers(block):   # every number, without the roles
        return {m: ({k: v for k, v in iv.items() if k != "role"} if isinstance(iv, dict) else iv)
                for m, iv in block.items()}

    for key in ("K", "N", "level", "diagnostics", "population_size", "fpc"):
        assert summary[key] == cli[key], key
    for key in ("micro", "macro"):
        assert numbers(summary[key]) == numbers(cli[key]), key
    # which interval leads: the same as the CLI given the same inputs (the params file: with a census,
    # the CLI runs the report's simulation and leads with what it supports)
    assert main(["estimate", "--params", str(params), "--json"]) == 0
    same_inputs = json.loads(capsys.readouterr().out)
    for key in ("micro", "macro"):
        roles = {m: iv.get("role") for m, iv in summary[key].items() if isinstance(iv, dict)}
        assert roles == {m: iv.get("role") for m, iv in same_inputs[key].items() if isinstance(iv, dict)}, key
    assert summary["input"]["file"] == data.name
    assert len(summary["input"]["sha256"]) == 64
    assert summary["input"]["bytes"] == data.stat().st_size
    assert summary["params"]["estimand"]["kind"] == study.estimand.kind
    assert summary["seed"] == study.intervals.seed and summary["versions"]["perdoc"]
    import hashlib
    docs = (built[0] / name / "documents.csv").read_bytes()
    assert summary["documents_table"]["sha256"] == hashlib.sha256(docs).hexdigest()


def test_rerun_is_byte_identical(built, tmp_path, shared_kernel, monkeypatch):
    """Built again in a kernel of its own (the module's other reports share one, tests/conftest.py,
    and the first was built there after the example): the same bytes."""
    from perdoc.report import kernel
    monkeypatch.setattr(kernel, "EarlyKernel", type(shared_kernel))
    again = build_report(TINY, tmp_path)
    first = built[0] / "tiny"
    for f in ("report.html", "summary.json", "documents.csv"):
        assert (first / f).read_bytes() == (again.parent / f).read_bytes(), f


def test_failing_dataset_leaves_error_page_and_others_still_build(tmp_path, capsys):
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: broken\ndata: {path: missing.csv, doc: d, score: y}\n"
                   "design: {population: x}\nestimand: {kind: micro, why: y}\n")
    out = tmp_path / "out"
    (out / "broken").mkdir(parents=True)
    (out / "broken" / "report.html").write_text("an old complete report")
    (out / "broken" / "summary.json").write_text('{"versions": {"perdoc": "0"}}')  # perdoc wrote it
    code = main(["report", str(bad), str(TINY), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "data file not found" in err and err.count("\n") == 1
    page = (out / "broken" / "report.html").read_text()
    assert "Report failed" in page and "data file not found" in page
    assert not (out / "broken" / "summary.json").exists()
    assert (out / "tiny" / "summary.json").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary folders left


def test_missing_estimand_refuses(tmp_path, capsys):
    p = tmp_path / "noest.yaml"
    p.write_text("name: noest\ndata: {path: x.csv, doc: d, score: y}\ndesign: {population: x}\n")
    assert main(["report", str(p), "--out", str(tmp_path / "out")]) == 2
    assert "no estimand declared" in capsys.readouterr().err


@pytest.fixture(scope="module")
def kernel(shared_kernel):
    """One kernel for the standalone runs: each notebook starts with the namespace emptied (%reset), so
    it can use no name another notebook defined; imports and the analysis cache are kept, which is
    what a reader running the notebooks one after another in one Jupyter session has too."""
    with type(shared_kernel)(notebook_dir()) as k:   # a kernel of their own
        yield k


@pytest.mark.parametrize("params", [EXAMPLE, TINY], ids=["example", "tiny"])
@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_each_notebook_executes_standalone(kernel, stem, params):
    nb = nbformat.read(notebook_dir() / f"{stem}.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("%reset -f"))
    nb = pm.execute_notebook(nb, None, parameters={"params_file": str(params)}, kernel_name="python3",
                             cwd=str(notebook_dir()), progress_bar=False, km=kernel.manager)
    assert nb.cells[0].source == "%reset -f" and len(nb.cells) > 3
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            assert o.get("output_type") != "error"
            assert not (o.get("output_type") == "stream" and o.get("name") == "stderr"), o.get("text")


def test_committed_notebooks_have_no_outputs():
    for stem in NOTEBOOKS:
        nb = nbformat.read(notebook_dir() / f"{stem}.ipynb", as_version=4)
        params = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params) == 1, stem
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
        for c in nb.cells:
            if c.cell_type == "code":
                assert not c.outputs and c.execution_count is None, stem


def test_example_report_compares_bm25_with_tfidf(built):
    summary = json.loads((built[0] / "example" / "summary.json").read_text())
    c = summary["comparison"]
    assert c["systems"]["a"]["name"] == "bm25" and c["systems"]["b"]["name"] == "tfidf"
    assert c["difference"]["micro"]["estimate"] == pytest.approx(
        summary["micro"]["estimate"] - c["systems"]["b"]["micro"]["estimate"], abs=1e-12)
    html = html_of(built, "example")
    assert "bm25 - tfidf" in html and "Per-document rates: bm25 against tfidf" in html


def test_design_reports_show_their_design(built):
    s = json.loads((built[0] / "stratified" / "summary.json").read_text())
    assert s["design"]["sampling"] == "stratified" and s["micro"]["design"]["df"] == s["K"] - 2
    html = html_of(built, "stratified")
    assert "Strata:" in html and "stratified by size_stratum" in html
    t = json.loads((built[0] / "two_stage" / "summary.json").read_text())
    assert t["design"]["sampling"] == "two_stage" and t["micro"]["design"]["ci"] is not None
    assert "second stage: chunks within documents" in html_of(built, "two_stage")


def test_relative_out_dir_with_simulation(tmp_path, monkeypatch, capsys):
    # the notebook kernel runs in notebooks/: every path handed to it must be absolute
    monkeypatch.chdir(tmp_path)
    params = ROOT / "tests" / "fixtures" / "tiny" / "tiny_census.yaml"
    assert main(["report", str(params), "--out", "out"]) == 0, capsys.readouterr().err
    s = json.loads((tmp_path / "out" / "tiny_census" / "summary.json").read_text())
    assert s["simulation"]["k"] == 3 and s["simulation"]["reps"] == 20
    assert "Which interval holds its level here" in (tmp_path / "out" / "tiny_census" / "report.html").read_text()


@pytest.mark.parametrize("name", ["example", "tiny", "stratified"])
def test_one_answer_headline_follows_the_evidence(built, name):
    s = json.loads((built[0] / name / "summary.json").read_text())
    h = s["headline"]
    html = html_of(built, name)
    kind = s["params"]["estimand"]["kind"]
    assert h["estimand"] == kind
    assert f"({h['label']};" in html                                   # the headline names its method
    sim = s.get("simulation")
    if sim is None:   # a pseudo-population check, when one ran, qualifies the default but never chooses
        assert h["basis"] == "none" and "Not checked by simulation" in html
        assert h["method"] == s["summary_box"]["interval"]["method"]
        if s.get("simulation_pseudo_population"):
            assert s["summary_box"]["check"]["pseudo_population"] is not None
        return
    m = sim["methods"][f"{kind}.{h['method']}"]
    assert h["coverage"] == m["coverage"]
    qualifies = m["coverage"] >= sim["level"] - 2 * m["mc_se"]
    assert h["verified"] == qualifies and h["approximate"] == (not qualifies)
    if h["approximate"]:
        assert "APPROXIMATE" in html and "Approximate:" in html
        assert "Every item is given" not in html
    else:
        assert "APPROXIMATE" not in html
    if s.get("metric_range") and any(
            not v.get("out_of_range") and v.get("ci") and v.get("role") != "baseline"
            for v in s[kind].values() if isinstance(v, dict)):
        assert not h["out_of_range"]
