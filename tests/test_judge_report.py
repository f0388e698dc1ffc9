"""A study with an automatic judge (params data.judge, data.judge_file): the report's judge section,
and one answer: the report, ``perdoc estimate --params``, ``perdoc estimate --judge`` and the Python
API lead with the same judge-assisted interval; the params keys are checked with one line each."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from perdoc.cli import main
from perdoc.report.build import analyse, build_report, summary
from perdoc.study.judge import estimate_judged, load_judged
from perdoc.study.params import ParamsError, load_params

from conftest import cli_json, example_params

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "example" / "sample.csv"
CENSUS = ROOT / "data" / "example" / "census.csv"


@pytest.fixture(autouse=True, scope="module")
def _one_kernel(shared_kernel):
    """The module's reports share one notebook kernel (tests/conftest.py)."""


def _params(tmp_path, data_extra: str = f", judge: tfidf, judge_file: {CENSUS}", extra: str = "",
            name: str = "judged") -> Path:
    return example_params(tmp_path, data_extra=data_extra, extra=extra, name=name)


_cli_json = cli_json


def test_report_cli_and_api_lead_with_the_same_judge_assisted_interval(tmp_path, capsys):
    p = _params(tmp_path)
    a = analyse(p)
    h = a.headline
    assert h.interval.method == "logit_ppi" and h.basis == "none"
    cli = _cli_json(capsys, ["estimate", "--params", str(p)])
    assert cli["headline"] == json.loads(json.dumps(h.to_dict()))
    judge_cli = _cli_json(capsys, ["estimate", str(SAMPLE), "--doc", "doc_id", "--score", "bm25", "--judge", "tfidf",
                                   "--judge-file", str(CENSUS), "--population-size", "1300"])
    api = estimate_judged(load_judged(SAMPLE, "doc_id", "bm25", "tfidf", judge_file=CENSUS), population_size=1300)
    assert judge_cli["headline"]["ci"] == cli["headline"]["ci"] == api.to_dict()["headline"]["ci"]
    assert judge_cli["headline"]["method"] == f"micro.{h.interval.method}"
    # every table marks the judge-assisted interval as the one that leads, and nothing else
    primaries = [iv.method for iv in a.estimates.intervals if iv.estimand == "micro" and iv.role == "primary"]
    assert primaries == ["logit_ppi"]
    s = summary(a)
    assert s["headline"] == cli["headline"] and s["summary_box"]["interval"]["ci"] == cli["headline"]["ci"]
    assert s["summary_box"]["estimate"] == h.interval.estimate
    assert s["judge"]["headline"]["ci"] == cli["headline"]["ci"] and s["judge"]["K"] == 20


@pytest.fixture(scope="module")
def judge_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("judge_report")
    p = _params(tmp, extra="planning: {half_width: 0.05}\n")
    out = tmp / "out"
    build_report(p, out)
    folder = out / "judged"
    return (folder / "report.html").read_text(encoding="utf-8"), json.loads((folder / "summary.json").read_text())


def _text(page: str) -> str:
    page = re.sub(r"<svg.*?</svg>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_the_report_has_a_judge_section_whose_numbers_are_the_summarys(judge_report):
    page, s = judge_report
    text = _text(page)
    j = s["judge"]
    assert "Judge-assisted estimate" in text and "An automatic judge (column tfidf)" in text
    lo, hi = s["headline"]["ci"]
    assert f"[{lo:.4f}, {hi:.4f}]" in text
    # agreement, weight and the chart are there, with the summary's numbers
    assert f"their rates correlate {j['agreement']['rate_correlation']:.2f}" in text
    assert f"they differ in {j['agreement']['documents_differing']} of 20 documents" in text
    assert "the judge's rate equals the gold rate (on the dashed diagonal)" in text and "<svg" in page
    # the summary box and the headline speak of the judge, not of an unchecked default
    assert "judge-assisted interval" in text and "no census was given, so this is the default" not in text
    assert s["input"]["judge_file"]["file"] == "census.csv" and s["input"]["judge_file"]["column"] == "tfidf"
    assert s["params"]["data"]["judge"] == "tfidf"
    assert "automatic judge (its part in the estimate)" in text        # the checklist's item
    # planning with the judge: what perdoc plan --pilot-data ... --judge plans from the same sample
    from perdoc.study.judge import plan_judged
    plan = plan_judged(load_judged(SAMPLE, "doc_id", "bm25", "tfidf", judge_file=CENSUS), 0.05, population_size=1300)
    assert (f"for a half-width of 0.05 (planning.half_width), about {plan['judge'].K:,} labelled documents with the "
            f"judge, against {plan['labels_only'].K:,} with the labels alone") in text


def test_the_spanish_report_has_the_judge_section_in_spanish(tmp_path):
    p = _params(tmp_path, extra="report: {language: es}\n", name="juez")
    build_report(p, tmp_path / "out")
    text = _text((tmp_path / "out" / "juez" / "report.html").read_text(encoding="utf-8"))
    assert "Estimación asistida por el juez" in text and "Un juez automático (columna tfidf)" in text
    assert "juez automático (su parte en la estimación)" in text


def test_a_report_without_a_judge_has_no_judge_section(tmp_path):
    a = analyse(_params(tmp_path, data_extra="", name="plain"))
    assert a.judge is None and "judge" not in summary(a)
    assert all(iv.method not in ("ppi", "logit_ppi") for iv in a.estimates.intervals)


@pytest.mark.parametrize("data_extra,message", [
    (", judge: tfidf", "data.judge_file"),
    (f", judge_file: {CENSUS}", "goes with 'data.judge'"),
    (", judge: bm25, judge_file: x.csv", "another column"),
    (f", judge: tfidf, judge_file: {CENSUS}, judge_sample: {CENSUS}", "one of"),
])
def test_judge_params_are_checked_with_one_line(tmp_path, data_extra, message):
    with pytest.raises(ParamsError, match=re.escape(message)) as err:
        load_params(_params(tmp_path, data_extra=data_extra))
    assert "\n" not in str(err.value)


def test_judge_params_refuse_a_design_the_judge_cannot_take(tmp_path):
    p = _params(tmp_path, extra="")
    text = p.read_text().replace("sampling: srs}", "sampling: stratified, strata: {column: bm25, population_sizes: {a: 1300}}}")
    p.write_text(text)
    with pytest.raises(ParamsError, match="data.judge"):
        load_params(p)


def test_a_judge_whose_errors_follow_size_is_a_warning_of_the_summary_box(tmp_path):
    """The judge of tests/test_judge_estimate.py that errs in long documents only: the box warns, says
    why it matters, and the judge section carries the same warning."""
    from judge_data import write_size_biased
    from perdoc.report.notebook import _warning_texts, judge_sentences, summary_facts
    labels, judge = write_size_biased(tmp_path)
    p = tmp_path / "size.yaml"
    p.write_text(f"name: size\ndata: {{path: {labels}, doc: doc_id, score: gold, judge: judge, "
                 f"judge_file: {judge}}}\ndesign: {{population: x, sampling: srs}}\n"
                 "estimand: {kind: micro, why: y}\nintervals: {level: 0.95, replicates: 0, seed: 1}\n")
    a = analyse(p)
    f = summary_facts(a)
    codes = [w["code"] for w in f["warnings"]]
    assert "judge_size" in codes and a.judge.warnings
    text = " ".join(_warning_texts(f))
    assert "follows document size" in text and "--design pps" in text
    assert any("follows document size" in w for w in judge_sentences(a)[1])


def test_a_drawn_sample_with_a_judge_leads_with_the_design_based_judge_interval(tmp_path, capsys):
    """params design.sample + data.judge: the report's analysis leads with what perdoc estimate --sample
    --judge prints (design-based, perdoc.methods.ppi.ppi_design)."""
    ex = ROOT / "data" / "example"
    p = tmp_path / "drawn.yaml"
    p.write_text(f"name: drawn\ndata: {{path: {ex / 'pps_labels.csv'}, doc: doc_id, score: bm25, judge: tfidf, "
                 f"judge_file: {CENSUS}}}\ndesign: {{population: x, sample: {ex / 'pps_manifest.csv'}}}\n"
                 "estimand: {kind: micro, why: y}\nintervals: {level: 0.95, seed: 1}\n")
    a = analyse(p)
    cli = _cli_json(capsys, ["estimate", str(ex / "pps_labels.csv"), "--doc", "doc_id", "--score", "bm25", "--judge",
                             "tfidf", "--judge-file", str(CENSUS), "--sample", str(ex / "pps_manifest.csv")])
    assert a.headline.interval.method == "logit_ppi" and a.judge.design["design"] == "pps"
    assert [a.headline.interval.ci.low, a.headline.interval.ci.high] == cli["headline"]["ci"]
    # marking the judge-assisted row as the lead does not change which labels-only interval the judge
    # section sets beside it: the logit design interval, as perdoc estimate --sample leads
    from perdoc.study.policy import default_method
    assert default_method(a.estimates, "micro") == "logit_design"


def test_without_a_population_size_the_judge_file_is_the_frame_for_every_interval(tmp_path, capsys):
    """No design.population_size: the judge file's documents are M for the labels-only intervals too, so
    perdoc estimate --params, the report and perdoc estimate --judge agree on both."""
    p = _params(tmp_path, name="noM")
    p.write_text(p.read_text().replace("population_size: 1300, ", ""))
    a = analyse(p)
    assert a.estimates.population_size == 1300 == a.judge.population_size
    judge_cli = _cli_json(capsys, ["estimate", str(SAMPLE), "--doc", "doc_id", "--score", "bm25", "--judge", "tfidf",
                                   "--judge-file", str(CENSUS)])
    lab = a.judge.labels_interval("micro")
    assert judge_cli["labels_only"]["population_size"] == 1300
    assert [lab.ci.low, lab.ci.high] == judge_cli["labels_only"]["micro"][lab.method]["ci"]


def _two_judged_systems(folder: Path) -> tuple[Path, Path]:
    """The example's labelled rows with a judge for each system (bm25: ja, tfidf: jb; each flips about
    one chunk in ten), and both judges on every chunk of its census (the judge file)."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(5)
    out = []
    for src, name in ((SAMPLE, "labels.csv"), (CENSUS, "judges.csv")):
        t = pd.read_csv(src)
        for sys_col, judge_col in (("bm25", "ja"), ("tfidf", "jb")):
            flip = rng.random(len(t)) < 0.1
            t[judge_col] = np.where(flip, 1 - t[sys_col], t[sys_col])
        if name == "labels.csv":   # the labelled rows' judges are the judge file's on the same chunks
            judges = pd.read_csv(CENSUS)[["doc_id", "chunk_id"]]
            t = t.drop(columns=["ja", "jb"])
            out.append((t, name))
            continue
        out.append((t[["doc_id", "chunk_id", "ja", "jb"]], name))
    labels, judges = out[0][0], out[1][0]
    labels = labels.merge(judges, on=["doc_id", "chunk_id"], how="left")
    paths = folder / "labels.csv", folder / "judges.csv"
    labels.to_csv(paths[0], index=False)
    judges.to_csv(paths[1], index=False)
    return paths


def test_a_judged_comparison_leads_the_report_as_perdoc_compare_judge(tmp_path, capsys):
    """data.judge_compare_to: the report's paired comparison leads with the judge-assisted difference,
    the one perdoc compare --judge --judge-vs prints, and summary.json carries it (judge_comparison)."""
    labels, judges = _two_judged_systems(tmp_path)
    p = tmp_path / "pair.yaml"
    p.write_text(f"name: pair\ndata: {{path: {labels}, doc: doc_id, score: bm25, compare_to: tfidf, judge: ja, "
                 f"judge_compare_to: jb, judge_file: {judges}}}\n"
                 "design: {population: x, sampling: srs}\n"
                 "estimand: {kind: micro, why: y}\nintervals: {level: 0.95, replicates: 199, seed: 1}\n",
                 encoding="utf-8")
    a = analyse(p)
    h = a.comparison_headline
    assert h.interval.method == "ppi" and h.reason.code == "choice.judge"
    cli = _cli_json(capsys, ["compare", str(labels), "--doc", "doc_id", "--score", "bm25", "--vs", "tfidf",
                             "--judge", "ja", "--judge-vs", "jb", "--judge-file", str(judges)])
    assert cli["headline"]["ci"] == list(h.interval.ci) and cli["difference"] == ["bm25", "tfidf"]
    s = summary(a)
    assert s["judge_comparison"]["headline"]["ci"] == cli["headline"]["ci"]
    assert s["comparison_headline"]["ci"] == cli["headline"]["ci"]
    primaries = [iv.method for iv in a.comparison.difference.intervals if iv.estimand == "micro" and iv.role == "primary"]
    assert primaries == ["ppi"]


@pytest.mark.parametrize("data_extra,message", [
    (f", judge: tfidf, judge_file: {CENSUS}, judge_compare_to: bm25", "needs one column in 'data.compare_to'"),
    (f", compare_to: tfidf, judge_compare_to: x", "'data.judge_compare_to' goes with 'data.judge'"),
])
def test_judge_compare_to_is_checked_in_one_line(tmp_path, data_extra, message):
    with pytest.raises(ParamsError, match=re.escape(message)):
        load_params(_params(tmp_path, data_extra=data_extra))
