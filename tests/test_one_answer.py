"""One answer in every interface: for the same inputs, ``perdoc estimate`` (text and JSON), the
Python API (:func:`perdoc.lead`) and the report's analysis lead with the same interval, chosen by one
function (:func:`perdoc.policy.lead`), and every table marks that interval as the one that leads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import perdoc
from perdoc.cli import main
from perdoc.report.build import analyse

from conftest import cli_json, example_params

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "example" / "sample.csv"


def _params(tmp_path, extra: str = "") -> Path:
    return example_params(tmp_path, extra=extra)


_cli_json = cli_json


def test_cli_and_api_lead_with_the_same_interval_without_a_census(capsys):
    out = _cli_json(capsys, ["estimate", str(SAMPLE), "--doc", "doc_id", "--score", "bm25", "--replicates", "199"])
    est = perdoc.estimate(perdoc.load_chunks(SAMPLE, doc="doc_id", score="bm25"), replicates=199)
    for kind in ("micro", "macro"):
        h = perdoc.lead(est, kind)
        assert out["headlines"][kind] == json.loads(json.dumps(h.to_dict()))
        assert h.basis == "none" and not h.verified and not h.approximate
        # the table marks the same method primary
        assert out[kind][h.interval.method]["role"] == "primary"
        assert sum(isinstance(v, dict) and v["role"] == "primary" for v in out[kind].values()) == 1
    assert out["headline"] == out["headlines"]["micro"]


def test_report_without_a_census_leads_as_the_cli_does(tmp_path, capsys):
    """A pseudo-population check may run beside it, but it never chooses the headline."""
    p = _params(tmp_path)
    a = analyse(p)
    assert a.pseudo_simulation is not None            # the check ran ...
    out = _cli_json(capsys, ["estimate", "--params", str(p)])
    assert out["headline"] == json.loads(json.dumps(a.headline.to_dict()))   # ... and chose nothing
    assert a.headline.basis == "none"
    primaries = [iv.method for iv in a.estimates.intervals if iv.estimand == "micro" and iv.role == "primary"]
    assert primaries == [a.headline.interval.method]


def test_cli_with_a_census_runs_the_report_simulation_and_leads_with_its_choice(tmp_path, capsys):
    p = _params(tmp_path, f"census: {{path: {ROOT / 'data' / 'example' / 'census.csv'}}}\n"
                          "simulation: {reps: 200, seed: 3, replicates: 0}\n")
    a = analyse(p)
    out = _cli_json(capsys, ["estimate", "--params", str(p)])
    assert "checking the intervals on the census" in capsys.readouterr().err or True
    h = json.loads(json.dumps(a.headline.to_dict()))
    assert out["headline"] == h and h["basis"] == "census"
    # every table marks the headline's method, in the report and in the CLI
    assert out["micro"][h["method"]]["role"] == "primary"
    assert [iv.method for iv in a.estimates.intervals if iv.estimand == "micro" and iv.role == "primary"] == \
        [h["method"]]
    text = main(["estimate", "--params", str(p)])
    assert text == 0
    shown = capsys.readouterr().out
    lead_line = [ln for ln in shown.splitlines() if ln.startswith("answer, micro mean")][0]
    assert f"[{h['ci'][0]:.4f}, {h['ci'][1]:.4f}]" in lead_line
    assert ("approximate" in lead_line) == h["approximate"]
    assert "why this interval:" in shown and f"{h['method']}" in shown
    # --skip-simulation: the default leads, marked not checked
    out = _cli_json(capsys, ["estimate", "--params", str(p), "--skip-simulation"])
    assert out["headline"]["basis"] == "none"


def test_skip_simulation_is_refused_without_params(capsys):
    assert main(["estimate", str(SAMPLE), "--doc", "doc_id", "--score", "bm25", "--skip-simulation"]) == 2
    assert "--skip-simulation" in capsys.readouterr().err


def test_compare_leads_with_one_interval_and_says_what_it_means(capsys):
    """perdoc compare: the answer first (the difference's leading interval, the verdict in words, what
    chose it), the leading row marked once per estimand, and rows that cannot apply to a difference
    (the 0/1-only intervals) left out with one line saying so."""
    from perdoc.study.compare import verdict
    args = ["compare", str(SAMPLE), "--doc", "doc_id", "--score", "bm25", "--vs", "tfidf", "--replicates", "199"]
    out = _cli_json(capsys, args)
    pairs = perdoc.load_pairs(SAMPLE, doc="doc_id", a="bm25", b="tfidf")
    cmp = perdoc.compare(pairs, replicates=199)
    for kind in ("micro", "macro"):
        h = perdoc.lead(cmp.difference, kind, difference=True)
        got = dict(out["headlines"][kind])
        assert got.pop("verdict") == verdict(h.interval)
        assert got == json.loads(json.dumps(h.to_dict()))
    assert out["headline"]["method"] == "cr2" and out["headline"]["verdict"] == "includes_zero"
    assert main(args) == 0
    text = capsys.readouterr().out
    first = text.split("\n\n")[1]
    assert first.startswith("answer, micro difference bm25 - tfidf: ")
    assert "verdict: the interval includes 0: these documents do not show which system is better" in first
    assert text.count("<- leads") == 2
    assert "\n  logit " not in text and "not shown: korn_graubard, logit, wilson" in text


def test_verdict_reads_the_interval():
    from perdoc.methods.results import ConfidenceInterval, Interval
    from perdoc.study.compare import verdict

    def iv(lo, hi):
        return Interval("micro", "cr2", "x", 0.0, 0.95, ci=None if lo is None else ConfidenceInterval(lo, hi))
    assert verdict(iv(0.01, 0.2)) == "a_higher" and verdict(iv(-0.2, -0.01)) == "b_higher"
    assert verdict(iv(-0.1, 0.1)) == "includes_zero" and verdict(iv(None, None)) == "no_interval"
    assert verdict(None) == "no_interval"
