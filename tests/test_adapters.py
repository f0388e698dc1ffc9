"""perdoc.adapters: evaluation-framework outputs (inspect_ai, lm-eval, ragas, DeepEval) and TREC runs
to chunk-level tables, with exclusions and notes, through the loaders, the CLI and a params file.

The fixtures in tests/fixtures/frameworks/ are written by make_fixtures.py (inspect_ai's own log API
for the inspect logs). Tests that need an optional package skip, naming the pip package, without it;
CI installs them (make test EXTRAS=test,frameworks)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perdoc import adapters
from perdoc.reading import adapted
from perdoc.cli import main
from perdoc.errors import ColumnError, InputError, ParameterError
from perdoc.params import ParamsError, load_params
from perdoc.study.run import load_study_pairs, load_study_table
from perdoc.table import Exclusion

F = Path(__file__).resolve().parent / "fixtures" / "frameworks"


def _need(module: str, package: str):
    return pytest.importorskip(module, reason=f"needs {package}: pip install {package} (perdoc[frameworks])")


@pytest.fixture
def inspect_ai():
    return _need("inspect_ai", "inspect-ai")


@pytest.fixture
def ir_measures():
    return _need("ir_measures", "ir-measures")


def _sums(table) -> dict:
    return {d: (float(n), float(s)) for d, n, s in zip(table.doc, table.n, table.s)}


# per sample: epochs' match values (C=1, I=0, P=0.5, N=0); s6 epoch 2 errored, s5 epoch 2 has no match
EXPECTED_MATCH = {"docA": (4, 1 + 1 + 0 + 0.5), "docB": (4, 1 + 0 + 0 + 1), "docC": (1, 1.0), "docD": (3, 0 + 0.5 + 1)}


# ---------------------------------------------------------------------------------------- inspect_ai
@pytest.mark.parametrize("name", ["inspect.eval", "inspect.json"])
def test_inspect_log_one_row_per_sample_epoch_with_inspect_mapping(inspect_ai, name):
    df, excl, notes = adapters.read(F / name, "inspect", ["metadata.source_doc", "match"])
    assert list(df.columns) == ["metadata.source_doc", "match"]
    assert len(df) == 12
    assert set(df["match"]) == {0.0, 0.5, 1.0}
    reasons = {e.reason: e.rows for e in excl}
    assert sum(reasons.values()) == 2
    assert any(r.startswith("sample errored") for r in reasons)
    assert reasons["no score from scorer 'match'"] == 1
    text = " ".join(notes)
    assert "C (correct) = 1" in text and "P (partial) = 0.5" in text and "N (no answer) = 0" in text
    assert "one row per sample and epoch" in text
    assert "not modelled separately" in text and "conservative" in text
    table = adapted.load_chunks(F / name, "inspect", doc="metadata.source_doc", score="match")
    assert _sums(table) == {d: (float(n), float(s)) for d, (n, s) in EXPECTED_MATCH.items()}
    assert table.source["format"] == "inspect" and table.source["notes"] == notes
    assert tuple(table.exclusions) == tuple(excl)


def test_inspect_eval_and_json_logs_agree(inspect_ai):
    a = adapters.read(F / "inspect.eval", "inspect", ["id", "epoch", "metadata.source_doc", "f1", "scores.match"])[0]
    b = adapters.read(F / "inspect.json", "inspect", ["id", "epoch", "metadata.source_doc", "f1", "scores.match"])[0]
    key = ["id", "epoch"]
    pd.testing.assert_frame_equal(a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True))
    assert len(a) == 12  # 'scores.match' names the scorer as 'match' does


def test_inspect_json_log_reads_without_inspect_ai(monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as if not installed
    df, excl, _ = adapters.read(F / "inspect.json", "inspect", ["metadata.source_doc", "f1"])
    assert len(df) == 13 and [e.rows for e in excl] == [1]
    with pytest.raises(Exception, match="pip install inspect-ai"):
        adapters.read(F / "inspect.eval", "inspect", ["metadata.source_doc", "f1"])


def test_inspect_value_mapping_matches_inspect_value_to_float(inspect_ai):
    from inspect_ai.scorer import value_to_float
    from perdoc.adapters.inspect_log import score_to_float
    to_float = value_to_float()
    for v in ["C", "I", "P", "N", "yes", "no", "true", "False", "0.25", 3, 0.75, True, False]:
        assert score_to_float(v) == to_float(v), v


def test_unknown_field_is_named_with_a_suggestion():
    with pytest.raises(ColumnError, match="did you mean 'metadata.source_doc'"):
        adapters.read(F / "inspect.json", "inspect", ["metadata.source_dok", "f1"])
    with pytest.raises(ParameterError, match="no evaluation-framework adapter"):
        adapters.read(F / "inspect.json", "csv", ["id"])
    with pytest.raises(ParameterError, match="needs fields"):
        adapters.read(F / "inspect.json", "inspect", [])


# ---------------------------------------------------------------------------------------- lm-eval
def test_lm_eval_samples_filter_named_as_lm_eval_does():
    df, excl, notes = adapters.read(F / "lm_eval_samples.jsonl", "lm-eval", ["doc.source_id", "acc,strict-match"])
    assert list(df.columns) == ["doc.source_id", "acc,strict-match"]
    assert df["acc,strict-match"].tolist() == [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0]  # booleans count 1/0
    assert excl == []
    assert any("flexible-extract" in n and "set aside" in n for n in notes)
    table = adapted.load_chunks(F / "lm_eval_samples.jsonl", "lm-eval", doc="doc.source_id",
                                 score="exact_match,flexible-extract")
    assert _sums(table) == {"d1": (2, 2), "d2": (2, 2), "d3": (2, 2), "d4": (1, 1)}


def test_lm_eval_several_filters_need_one_named():
    with pytest.raises(ParameterError, match=r"2 lm-eval filters .*e.g. 'acc,flexible-extract'"):
        adapters.read(F / "lm_eval_samples.jsonl", "lm-eval", ["doc.source_id", "acc"])


# ---------------------------------------------------------------------------------------- ragas, DeepEval
def test_ragas_csv_nan_score_excluded_and_counted():
    df, excl, notes = adapters.read(F / "ragas.csv", "ragas", ["doc_id", "answer_relevancy"])
    assert len(df) == 5
    assert excl == [Exclusion(1, "no score for 'answer_relevancy' (NaN: the metric failed on the sample)")]
    df2, excl2, _ = adapters.read(F / "ragas.csv", "ragas", ["doc_id", "faithfulness"])
    assert len(df2) == 6 and excl2 == []
    # the DataFrame ragas gives (EvaluationResult.to_pandas()) is read as it is
    df3, _, _ = adapters.read(pd.read_csv(F / "ragas.csv"), "ragas", ["doc_id", "faithfulness"])
    pd.testing.assert_frame_equal(df2, df3)


def test_ragas_json_nested_fields_by_dotted_path():
    df, excl, _ = adapters.read(F / "ragas.json", "ragas", ["meta.doc_id", "metrics.answer_relevancy"])
    assert list(df.columns) == ["meta.doc_id", "metrics.answer_relevancy"] and len(df) == 5
    assert [e.rows for e in excl] == [1]


def test_deepeval_metric_scores_and_errored_metrics():
    df, excl, notes = adapters.read(F / "deepeval.json", "deepeval", ["additional_metadata.doc", "Contextual Relevancy"])
    assert len(df) == 5
    assert len(excl) == 1 and excl[0].rows == 1 and "errored" in excl[0].reason and "invalid JSON" in excl[0].reason
    same = adapters.read(F / "deepeval.json", "deepeval", ["additional_metadata.doc", "metrics.faithfulness"])[0]
    assert same["metrics.faithfulness"].tolist() == [0.9, 0.6, 0.3, 0.8, 0.5, 1.0]
    pairs = adapted.load_pairs(F / "deepeval.json", "deepeval", doc="additional_metadata.doc", a="Faithfulness",
                                b="Contextual Relevancy")
    assert pairs.K == 3 and sum(e.rows for e in pairs.exclusions) == 1  # docC had only the errored case
    assert "DeepEval results" in pairs.source["notes"][0]


# ---------------------------------------------------------------------------------------- TREC
def test_trec_per_query_measure_from_ir_measures(ir_measures):
    df, excl, notes = adapters.read_trec(F / "run_a.trec", F / "qrels.txt", "nDCG@10", F / "doc_map.csv")
    qrels = list(ir_measures.read_trec_qrels(str(F / "qrels.txt")))
    run = list(ir_measures.read_trec_run(str(F / "run_a.trec")))
    want = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure("nDCG@10")], qrels, run)}
    assert list(df.columns) == ["query", "doc", "nDCG@10"]
    assert df["query"].tolist() == ["q1", "q2", "q3", "q4", "q5", "q6", "q8"]
    for q, v in zip(df["query"], df["nDCG@10"]):
        assert v == pytest.approx(want[q])
    reasons = {e.reason.split(" (")[0]: e.rows for e in excl}
    assert reasons == {"queries ranked in the run(s) but not judged in the qrels": 1,
                       "judged queries not in the document map": 1}
    assert any("ir-measures" in n for n in notes)


def test_trec_query_missing_from_run_scores_zero_and_is_counted(ir_measures):
    df, excl, notes = adapters.read_trec(F / "run_a.trec", F / "qrels.txt", "RR", F / "doc_map.csv",
                                         compare_run=F / "run_b.trec")
    assert list(df.columns) == ["query", "doc", "run_a", "run_b"]
    row = df.set_index("query").loc["q8"]
    assert row["run_b"] == 0.0 and row["run_a"] > 0
    assert any("1 judged query not ranked by run_b.trec score 0" in n and "trec_eval -c" in n for n in notes)
    pairs = adapted.load_trec_pairs(F / "run_a.trec", F / "run_b.trec", F / "qrels.txt", "RR", F / "doc_map.csv")
    assert pairs.K == 4 and pairs.paired and pairs.names == ("run_a", "run_b")


def test_trec_doc_map_without_header_and_conflicts(ir_measures, tmp_path):
    m = tmp_path / "map.tsv"
    m.write_text("q1\tdocA\nq2\tdocA\nq3\tdocB\nq4\tdocB\n")
    df, excl, _ = adapters.read_trec(F / "run_a.trec", F / "qrels.txt", "P@5", m)
    assert df["query"].tolist() == ["q1", "q2", "q3", "q4"]
    assert [e.rows for e in excl if "map" in e.reason] == [4]
    m.write_text("query_id,doc_id\nq1,docA\nq1,docB\n")
    with pytest.raises(InputError, match="more than one document"):
        adapters.read_trec(F / "run_a.trec", F / "qrels.txt", "P@5", m)
    with pytest.raises(ParameterError, match="not one ir-measures parses"):
        adapters.read_trec(F / "run_a.trec", F / "qrels.txt", "nDCG@@", F / "doc_map.csv")


# ---------------------------------------------------------------------------------------- CLI
def _trec_flags(measure="nDCG@10"):
    return ["--qrels", str(F / "qrels.txt"), "--measure", measure, "--doc-map", str(F / "doc_map.csv")]


def test_cli_estimate_trec_run(ir_measures, capsys):
    assert main(["estimate", "--trec-run", str(F / "run_a.trec"), *_trec_flags(), "--replicates", "0",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["K"] == 4
    assert out["input"]["format"] == "trec" and any("ir-measures" in n for n in out["input"]["notes"])
    assert {e["rows"] for e in out["input"]["exclusions"]} == {1}
    assert main(["estimate", "--trec-run", str(F / "run_a.trec"), *_trec_flags(), "--replicates", "0"]) == 0
    text = capsys.readouterr().out
    assert "excluded: 1 row(s): judged queries not in the document map" in text
    assert "note: per-query nDCG@10 computed by ir-measures" in text


def test_cli_compare_trec_runs(ir_measures, capsys, tmp_path):
    assert main(["compare", "--trec-run", str(F / "run_a.trec"), "--vs-run", str(F / "run_b.trec"),
                 *_trec_flags("RR"), "--replicates", "99"]) == 0
    text = capsys.readouterr().out
    assert "run_a - run_b" in text and "trec_eval -c" in text
    # two runs of one file name in two folders are two systems (only the same file is refused)
    import shutil
    for d, f in (("sys1", "run_a.trec"), ("sys2", "run_b.trec")):
        (tmp_path / d).mkdir()
        shutil.copy(F / f, tmp_path / d / "run.trec")
    assert main(["compare", "--trec-run", str(tmp_path / "sys1" / "run.trec"), "--vs-run",
                 str(tmp_path / "sys2" / "run.trec"), *_trec_flags("RR"), "--replicates", "0"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("argv, message", [
    (["estimate", "--trec-run", "r.trec"], "--trec-run needs --qrels, --measure, --doc-map"),
    (["estimate", "--qrels", "q.txt"], "go(es) with --trec-run"),
    (["estimate", "data.csv", "--trec-run", "r", "--qrels", "q", "--measure", "RR", "--doc-map", "m"],
     "drop DATA"),
    (["compare", "--trec-run", "r", "--qrels", "q", "--measure", "RR", "--doc-map", "m"], "needs --vs-run"),
    (["compare", "--trec-run", "a/r.trec", "--vs-run", "a/r.trec", "--qrels", "q", "--measure", "RR", "--doc-map",
      "m"], "--vs-run a/r.trec is the --trec-run file itself"),
    (["compare", "data.csv", "--doc", "d"], "missing --score, --vs"),
    (["estimate", str(F / "inspect.json"), "--format", "inspect", "--doc", "id"], "needs --score"),
])
def test_cli_bad_framework_flags_one_line_status_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_format_inspect_and_ragas(capsys):
    assert main(["estimate", str(F / "inspect.json"), "--format", "inspect", "--doc", "metadata.source_doc",
                 "--score", "match", "--replicates", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["input"]["format"] == "inspect" and sum(e["rows"] for e in out["input"]["exclusions"]) == 2
    assert main(["compare", str(F / "ragas.csv"), "--format", "ragas", "--doc", "doc_id", "--score", "faithfulness",
                 "--vs", "answer_relevancy", "--replicates", "99"]) == 0
    assert "excluded: 1 row(s): no score for 'answer_relevancy'" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------- params, study
def _params(tmp_path, data: str, extra: str = "") -> Path:
    p = tmp_path / "study.yaml"
    p.write_text(f"""name: fw
data: {data}
design: {{population: "the documents", sampling: srs}}
estimand: {{kind: macro, why: "each document counts once"}}
intervals: {{replicates: 0}}
{extra}""")
    return p


def _copy_fixtures(tmp_path):
    for f in F.iterdir():
        shutil.copy(f, tmp_path / f.name)


def test_params_trec_paths_relative_to_the_params_file(ir_measures, tmp_path):
    _copy_fixtures(tmp_path)
    p = _params(tmp_path, "{trec: {run: run_a.trec, qrels: qrels.txt, measure: nDCG@10, doc_map: doc_map.csv, "
                          "compare_run: run_b.trec}}")
    study = load_params(p)
    assert study.data.trec.qrels == tmp_path / "qrels.txt" and study.data.path == tmp_path / "run_a.trec"
    assert (study.data.doc, study.data.score, study.data.compare_to) == ("doc", "run_a", "run_b")
    table = load_study_table(study)
    assert table.K == 4 and table.source["notes"] and len(table.exclusions) == 2
    pairs = load_study_pairs(study)
    assert pairs.names == ("run_a", "run_b")
    assert study.to_dict()["data"]["trec"]["run"] == "run_a.trec"


def test_params_format_adapter(tmp_path):
    _copy_fixtures(tmp_path)
    study = load_params(_params(tmp_path, "{path: deepeval.json, format: deepeval, doc: additional_metadata.doc, "
                                          "score: Faithfulness, compare_to: Contextual Relevancy}"))
    table = load_study_table(study)
    assert table.K == 4 and table.source["format"] == "deepeval"
    assert load_study_pairs(study).K == 3


@pytest.mark.parametrize("data, message", [
    ("{path: x.csv, trec: {run: r, qrels: q, measure: RR, doc_map: m}}", "drop data.path"),
    ("{trec: {run: r, qrels: q, doc_map: m}}", "missing required key 'data.trec.measure'"),
    ("{doc: d, score: s}", "missing required key 'data.path'"),
    ("{path: x.csv, doc: d, score: s, format: promptfoo}", "inspect, lm-eval, ragas, deepeval"),
])
def test_params_framework_keys_checked(tmp_path, data, message):
    with pytest.raises(ParamsError, match=message.replace("(", r"\(")):
        load_params(_params(tmp_path, data))


def test_report_from_trec_runs_lists_the_exclusions(ir_measures, tmp_path):
    _copy_fixtures(tmp_path)
    p = _params(tmp_path, "{trec: {run: run_a.trec, qrels: qrels.txt, measure: nDCG@10, doc_map: doc_map.csv}}")
    assert main(["report", str(p), "--out", str(tmp_path / "out")]) == 0
    summary = json.loads((tmp_path / "out" / "fw" / "summary.json").read_text())
    assert {e["reason"].split(" (")[0] for e in summary["exclusions"]} == {
        "queries ranked in the run(s) but not judged in the qrels", "judged queries not in the document map"}
    html = (tmp_path / "out" / "fw" / "report.html").read_text()
    assert "judged queries not in the document map" in html
    assert "How the input was read (1)" in html                      # the adapter's notes are shown
    import hashlib
    for key, name in (("qrels", "qrels.txt"), ("doc_map", "doc_map.csv")):   # every input hashed
        assert summary["input"]["trec"][key]["sha256"] == hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
    assert np.isfinite(summary["macro"]["estimate"])


def test_io_loaders_read_adapter_formats_through_read(inspect_ai):
    """perdoc.load_chunks / load_pairs with fmt naming an adapter call perdoc.adapters.read and give
    the same table as the adapters' own loaders, notes and exclusions included."""
    import perdoc
    direct = perdoc.load_chunks(F / "inspect.eval", doc="metadata.source_doc", score="match", fmt="inspect")
    mine = adapted.load_chunks(F / "inspect.eval", "inspect", doc="metadata.source_doc", score="match")
    assert _sums(direct) == _sums(mine)
    assert tuple(direct.exclusions) == tuple(mine.exclusions)
    assert direct.source["notes"] == mine.source["notes"]
    pairs = perdoc.load_pairs(F / "deepeval.json", doc="additional_metadata.doc", a="Faithfulness",
                              b="Contextual Relevancy", fmt="deepeval")
    assert pairs.K == 3 and sum(e.rows for e in pairs.exclusions) == 1


def test_trec_eval_measure_names_are_accepted(ir_measures):
    a = adapted.load_trec(F / "run_a.trec", F / "qrels.txt", "ndcg_cut.10", F / "doc_map.csv")
    b = adapted.load_trec(F / "run_a.trec", F / "qrels.txt", "nDCG@10", F / "doc_map.csv")
    assert _sums(a) == _sums(b) and a.source["notes"][0].startswith("per-query nDCG@10")


def test_lm_eval_json_array_and_long_lines(tmp_path):
    records = [json.loads(line) for line in (F / "lm_eval_samples.jsonl").read_text().splitlines()]
    for r in records:
        r["arguments"]["gen_args_0"]["arg_0"] += " context" * 2000  # lines far longer than a read block
    as_lines = tmp_path / "samples.json"
    as_lines.write_text("".join(json.dumps(r) + "\n" for r in records))
    as_array = tmp_path / "samples_array.json"
    as_array.write_text(json.dumps(records, indent=1))
    want = adapters.read(F / "lm_eval_samples.jsonl", "lm-eval", ["doc.source_id", "acc,strict-match"])[0]
    for path in (as_lines, as_array):
        got = adapters.read(path, "lm-eval", ["doc.source_id", "acc,strict-match"])[0]
        pd.testing.assert_frame_equal(got, want)


def test_inspect_log_without_sample_ids_or_unfinished(inspect_ai, tmp_path):
    raw = json.loads((F / "inspect.json").read_text())
    raw["eval"]["dataset"].pop("sample_ids", None)  # cannot be streamed: read whole
    raw["status"] = "cancelled"
    p = tmp_path / "old.json"
    p.write_text(json.dumps(raw))
    df, excl, notes = adapters.read(p, "inspect", ["metadata.source_doc", "match"])
    assert len(df) == 12 and sum(e.rows for e in excl) == 2
    assert any("status is cancelled" in n for n in notes)
