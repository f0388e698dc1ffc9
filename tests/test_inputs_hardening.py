"""Hostile and unusual inputs: streams, lying file names, URL-like paths, near-identical ids, declared
metrics, write-table round trips, formula injection in CSV exports, counts and scores at the edges of
the double range. Each test fails on the loaders as they were before these rules."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import perdoc.io as pio
from perdoc.cli import main
from perdoc.errors import DataFileError, InputError, ParameterError, PerdocError
from perdoc.io import load_chunks, load_docs, load_pairs, neutralise_csv_cell, write_table
from perdoc.params import ParamsError, load_params
from perdoc.table import DocTable

CSV = "doc_id,hit\nd1,1\nd1,0\nd2,1\nd3,0\nd3,0\nd3,1\n"
EXE = Path(sys.executable).with_name("perdoc")


# ---------------------------------------------------------------------- helpers
def one_line(err) -> str:
    msg = str(err.value)
    assert "\n" not in msg and "\r" not in msg, msg
    assert len(msg) < 500, msg
    return msg


def raises(cls, pattern, fn, *args, **kwargs) -> str:
    with pytest.raises(cls, match=pattern) as err:
        fn(*args, **kwargs)
    return one_line(err)


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def bad_cli(capsys, *args) -> str:
    """Exit 2, nothing on stdout, one line on stderr without a traceback; returns that line."""
    code, out, err = run(capsys, *args)
    assert code == 2, (code, out, err)
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


class _Stdin:
    """A stand-in for sys.stdin whose .buffer yields the given bytes."""

    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def expected_csv_table():
    return load_chunks(pd.read_csv(io.StringIO(CSV), dtype={"doc_id": str}), "doc_id", "hit")


def same_table(a: DocTable, b: DocTable) -> None:
    assert list(a.doc) == list(b.doc)
    np.testing.assert_array_equal(a.n, b.n)
    np.testing.assert_array_equal(a.s, b.s)
    np.testing.assert_array_equal(a.q, b.q)
    assert a.scale == b.scale


# ====================================================================== 1. standard input and pipes
def as_format(fmt: str) -> bytes:
    df = pd.read_csv(io.StringIO(CSV), dtype={"doc_id": str})
    if fmt == "csv":
        return CSV.encode()
    if fmt == "tsv":
        return CSV.replace(",", "\t").encode()
    if fmt == "jsonl":
        return df.to_json(orient="records", lines=True).encode()
    if fmt == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return buf.getvalue()
    raise AssertionError(fmt)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
def test_standard_input_is_read_with_format(monkeypatch, fmt):
    monkeypatch.setattr(sys, "stdin", _Stdin(as_format(fmt)))
    table = load_chunks("-", "doc_id", "hit", fmt=fmt)
    same_table(table, expected_csv_table())
    assert table.source["path"] == "-" and table.source["format"] == fmt
    assert table.source["bytes"] == len(as_format(fmt))


def test_gzip_standard_input_is_recognised(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin(gzip.compress(CSV.encode())))
    same_table(load_chunks("-", "doc_id", "hit", fmt="csv"), expected_csv_table())


def test_standard_input_without_format_says_pass_format(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin(CSV.encode()))
    msg = raises(DataFileError, r"standard input", load_chunks, "-", "doc_id", "hit")
    assert "--format csv|tsv|jsonl" in msg and "fmt=" in msg


def test_empty_standard_input(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Stdin(b""))
    raises(InputError, r"standard input is empty", load_chunks, "-", "doc_id", "hit", fmt="csv")


def test_stream_copy_is_deleted(monkeypatch, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(sys, "stdin", _Stdin(CSV.encode()))
    load_chunks("-", "doc_id", "hit", fmt="csv")
    assert list(scratch.iterdir()) == []


def test_named_pipe(tmp_path):
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as fh:
            fh.write(CSV.encode())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        table = load_chunks(fifo, "doc_id", "hit", fmt="csv")
    finally:
        if writer.is_alive():  # the pipe was never read: open it once so the writer can finish
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(timeout=10)
    same_table(table, expected_csv_table())
    assert table.source["bytes"] == len(CSV)


def test_named_pipe_without_format(tmp_path):
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    # refused before the pipe is opened: no writer needed
    msg = raises(DataFileError, r"cannot tell the format of .*feed", load_chunks, fifo, "doc_id", "hit")
    assert "--format" in msg


@pytest.mark.skipif(shutil.which("bash") is None or not EXE.exists(), reason="needs bash and the console script")
def test_process_substitution_and_pipe_on_the_command_line(tmp_path):
    data = tmp_path / "r.csv"
    data.write_text(CSV)
    cmd = f"'{EXE}' estimate <(cat '{data}') --format csv --doc doc_id --score hit --replicates 0 --json"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["K"] == 3
    r = subprocess.run([str(EXE), "estimate", "-", "--format", "csv", "--doc", "doc_id", "--score", "hit",
                        "--replicates", "0", "--json"], input=CSV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["input"]["path"] == "-"
    r = subprocess.run([str(EXE), "estimate", "-", "--doc", "doc_id", "--score", "hit"], input=CSV,
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and "--format" in r.stderr


def test_compare_and_simulate_read_standard_input(monkeypatch, capsys):
    pairs = "doc,a,b\n" + "".join(f"d{i % 6},{i % 2},{(i // 2) % 2}\n" for i in range(40))
    monkeypatch.setattr(sys, "stdin", _Stdin(pairs.encode()))
    code, out, err = run(capsys, "compare", "-", "--format", "csv", "--doc", "doc", "--score", "a", "--vs", "b",
                         "--replicates", "0", "--json")
    assert code == 0, err
    assert json.loads(out)["input"]["path"] == "-"
    monkeypatch.setattr(sys, "stdin", _Stdin(pairs.encode()))
    code, out, err = run(capsys, "simulate", "--census", "-", "--format", "csv", "--doc", "doc", "--score", "a",
                         "--k", "3", "--reps", "10", "--replicates", "0", "--json")
    assert code == 0, err


def test_unknown_format_flag_is_named(capsys, tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(CSV)
    err = bad_cli(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit", "--format", "excel")
    assert "--format" in err


def test_format_messages_name_the_flag(tmp_path):
    p = tmp_path / "r.data"
    p.write_text(CSV)
    msg = raises(DataFileError, r"cannot tell the format", load_chunks, p, "doc_id", "hit")
    assert "--format" in msg and "fmt= in Python" in msg
    msg = raises(ParameterError, r"fmt='excel' is not a known format", load_chunks, p, "doc_id", "hit", fmt="excel")
    assert "--format" in msg


def test_format_flag_on_estimate_and_compare(capsys, tmp_path):
    p = tmp_path / "r.txt"
    p.write_text("doc,a,b\nx,1,0\nx,0,0\ny,1,1\nz,0,1\n")
    code, out, err = run(capsys, "estimate", p, "--format", "csv", "--doc", "doc", "--score", "a",
                         "--replicates", "0", "--json")
    assert code == 0, err
    code, out, err = run(capsys, "compare", p, "--format", "csv", "--doc", "doc", "--score", "a", "--vs", "b",
                         "--replicates", "0", "--json")
    assert code == 0, err


def study_file(tmp_path, data: dict, **extra) -> Path:
    doc = {"name": "t", "data": data,
           "design": {"population": "the documents", "sampling": "srs"},
           "estimand": {"kind": "micro", "why": "a chunk at random"},
           "intervals": {"replicates": 0}, **extra}
    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_params_data_format_reads_data_and_census(tmp_path):
    from perdoc.study.run import load_study_census, load_study_table
    (tmp_path / "runs.txt").write_text(CSV)
    (tmp_path / "census.txt").write_text(CSV)
    p = study_file(tmp_path, {"path": "runs.txt", "doc": "doc_id", "score": "hit", "format": "csv"},
                   census={"path": "census.txt"})
    study = load_params(p)
    assert study.data.format == "csv"
    same_table(load_study_table(study), expected_csv_table())
    same_table(load_study_census(study), expected_csv_table())


@pytest.mark.parametrize("key, value, message", [
    ("format", "excel", r"key 'data\.format' must be one of csv"),
    ("metric", "ratio", r"key 'data\.metric' must be binary, proportion or score"),
    ("allow_similar_ids", "yes", r"key 'data\.allow_similar_ids' must be true or false"),
])
def test_params_data_keys_are_checked(tmp_path, key, value, message):
    p = study_file(tmp_path, {"path": "runs.csv", "doc": "doc_id", "score": "hit", key: value})
    with pytest.raises(ParamsError, match=message) as err:
        load_params(p)
    one_line(err)


# ====================================================================== 2. clear file errors
@pytest.mark.parametrize("content, line", [
    (b"doc_id,hit\r\nd1,1\r\nd2,0\nd3,1\n", 3),           # CRLF, then LF
    (b"doc_id,hit\nd1,1\r\nd2,0\r\n", 2),                  # LF header, CRLF rows
    (b"doc_id,hit\nd1,1\nd2,0\rd3,1\nd4,0\n", 3),          # a lone CR
])
def test_mixed_line_endings_name_the_line(tmp_path, content, line):
    p = tmp_path / "mixed.csv"
    p.write_bytes(content)
    msg = raises(DataFileError, rf"mixed\.csv as CSV: mixed line endings: line {line} ends in", load_chunks,
                 p, "doc_id", "hit")
    assert "state machine" not in msg


def test_quoted_line_breaks_do_not_count_as_mixed_endings(tmp_path):
    p = tmp_path / "q.csv"
    p.write_bytes(b'doc_id,hit,text\r\nd1,1,"a\nb"\r\nd2,0,x\r\nd3,1,y\nd4,0,z\r\n')
    raises(DataFileError, r"line 4 ends in LF", load_chunks, p, "doc_id", "hit")


def test_old_mac_line_endings_are_read(tmp_path):
    p = tmp_path / "mac.csv"
    p.write_bytes(CSV.replace("\n", "\r").encode())
    same_table(load_chunks(p, "doc_id", "hit"), expected_csv_table())


@pytest.mark.parametrize("name, fmt", [("r.csv", "CSV"), ("r.tsv", "TSV"), ("r.jsonl", "JSON Lines")])
def test_gzip_bytes_under_a_plain_name(tmp_path, name, fmt):
    p = tmp_path / name
    text = CSV if name.endswith(".csv") else CSV.replace(",", "\t") if name.endswith(".tsv") else \
        '{"doc_id": "d1", "hit": 1}\n'
    p.write_bytes(gzip.compress(text.encode()))
    msg = raises(DataFileError, rf"cannot read .*{re.escape(name)} as {fmt}: it is gzip-compressed data; "
                 rf"name it {re.escape(name)}\.gz", load_chunks, p, "doc_id", "hit")
    assert "UTF-8" not in msg


def test_gzip_bytes_under_a_plain_name_for_every_loader(tmp_path):
    p = tmp_path / "agg.csv"
    p.write_bytes(gzip.compress(b"doc,n,s\na,2,1\nb,3,1\n"))
    raises(DataFileError, r"gzip-compressed data", load_docs, p, "doc", "n", "s")
    raises(DataFileError, r"gzip-compressed data", load_pairs, p, "doc", "n", "s")


def test_parquet_bytes_under_csv_name(tmp_path):
    p = tmp_path / "r.csv"
    pd.read_csv(io.StringIO(CSV)).to_parquet(p)
    msg = raises(DataFileError, r"r\.csv as CSV: it is Parquet data; name it \.parquet", load_chunks, p,
                 "doc_id", "hit")
    assert "--format parquet" in msg
    same_table(load_chunks(p, "doc_id", "hit", fmt="parquet"), expected_csv_table())


def test_header_that_starts_like_parquet_is_still_csv(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("PAR1,doc_id,hit\nx,d1,1\nx,d2,0\n")
    assert load_chunks(p, "doc_id", "hit").K == 2


@pytest.mark.parametrize("payload, what", [
    (b"PK\x03\x04" + b"\x00" * 40, r"a ZIP archive \(an Excel \.xlsx workbook is one\)"),
    ("doc_id,hit\nd1,1\n".encode("utf-16"), r"UTF-16 text; save it as UTF-8"),
    ("doc_id,hit\nd1,1\n".encode("utf-16-le"), r"UTF-16 text\? save it as UTF-8"),
])
def test_other_obvious_mismatches(tmp_path, payload, what):
    p = tmp_path / "r.csv"
    p.write_bytes(payload)
    raises(DataFileError, what, load_chunks, p, "doc_id", "hit")


def test_json_lines_under_csv_name(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text('{"doc_id": "d1", "hit": 1}\n{"doc_id": "d2", "hit": 0}\n')
    raises(DataFileError, r"r\.csv as CSV: line 1 is a JSON object, not a header; .*--format jsonl", load_chunks, p,
           "doc_id", "hit")
    assert load_chunks(p, "doc_id", "hit", fmt="jsonl").K == 2


def test_gzip_under_parquet_name(tmp_path):
    p = tmp_path / "r.parquet"
    p.write_bytes(gzip.compress(b"x" * 200))
    raises(DataFileError, r"as Parquet: it is gzip-compressed data, not a Parquet file; decompress it",
           load_chunks, p, "doc_id", "hit")


def test_cli_mismatch_is_one_line(capsys, tmp_path):
    p = tmp_path / "r.csv"
    p.write_bytes(gzip.compress(CSV.encode()))
    err = bad_cli(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit")
    assert "gzip-compressed data" in err


# ====================================================================== 3. paths are files, never URLs
@pytest.fixture
def url_like_tree(tmp_path, monkeypatch):
    df = pd.read_csv(io.StringIO(CSV), dtype={"doc_id": str})
    for folder in ("http:/host", "s3:/bucket"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "r.csv").write_text(CSV)
        df.to_parquet(tmp_path / folder / "r.parquet", index=False)
        df.to_json(tmp_path / folder / "r.jsonl", orient="records", lines=True)
        (tmp_path / folder / "agg.csv").write_text("doc,n,s\na,2,1\nb,3,1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("path", ["http://host/r.csv", "http:/host/r.csv", "s3://bucket/r.csv", "s3:/bucket/r.csv",
                                  "http://host/r.parquet", "s3://bucket/r.jsonl"])
def test_url_like_local_paths_are_files(url_like_tree, path):
    table = load_chunks(path, "doc_id", "hit")
    same_table(table, expected_csv_table())
    assert table.source["path"] == path


def test_url_like_paths_for_every_loader(url_like_tree):
    assert load_docs("s3://bucket/agg.csv", "doc", "n", "s").K == 2
    assert load_pairs("http://host/agg.csv", "doc", "n", "s").K == 2


def test_a_real_url_is_not_fetched(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raises(DataFileError, r"data file not found: https://example\.invalid/r\.csv", load_chunks,
           "https://example.invalid/r.csv", "doc_id", "hit")


def test_connections_never_install_or_load_extensions(monkeypatch, tmp_path):
    import duckdb
    seen = []
    real = duckdb.connect

    def spy(*args, **kwargs):
        seen.append(kwargs.get("config", {}))
        return real(*args, **kwargs)

    monkeypatch.setattr(pio.duckdb, "connect", spy)
    p = tmp_path / "r.csv"
    p.write_text(CSV)
    load_chunks(p, "doc_id", "hit")
    load_docs(pd.DataFrame({"d": ["a", "b"], "n": [1, 2], "s": [1, 1]}), "d", "n", "s")
    assert len(seen) == 2
    for config in seen:
        assert config["autoinstall_known_extensions"] is False
        assert config["autoload_known_extensions"] is False


# ====================================================================== 4. ids that collide
def test_ids_that_differ_in_spaces_or_case_are_refused(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("doc_id,hit\nd7,1\nd7 ,0\nA,1\na,0\nb,1\n")
    msg = raises(InputError, r"column 'doc_id' in .*r\.csv: 2 group\(s\) of document ids differ only", load_chunks,
                 p, "doc_id", "hit")
    assert "'d7' / 'd7 '" in msg and "'A' / 'a'" in msg and "--allow-similar-ids" in msg


def test_similar_ids_accepted_on_request_and_kept_exact(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("doc_id,hit\nd7,1\nd7 ,0\nA,1\na,0\nb,1\n")
    table = load_chunks(p, "doc_id", "hit", allow_similar_ids=True)
    assert list(table.doc) == ["A", "a", "b", "d7", "d7 "]
    assert table.source["similar_ids"] == {"groups": 2, "examples": [["A", "a"], ["d7", "d7 "]]}
    assert "similar_ids" not in load_chunks(pd.DataFrame({"d": ["x", "y"], "s": [1, 0]}), "d", "s").source


def test_unicode_forms_and_case_folding_collide():
    df = pd.DataFrame({"d": ["caf\u00e9", "cafe\u0301", "Stra\u00dfe", "STRASSE", "other"], "s": [1, 0, 1, 0, 1]})
    msg = raises(InputError, r"2 group\(s\)", load_chunks, df, "d", "s")
    assert "column 'd' in the DataFrame" in msg
    table = load_chunks(df, "d", "s", allow_similar_ids=True)
    assert table.K == 5 and table.source["similar_ids"]["groups"] == 2


def test_similar_ids_in_load_docs_and_load_pairs():
    agg = pd.DataFrame({"page": ["x", "X", "y"], "n": [2, 2, 2], "s": [1, 1, 1]})
    raises(InputError, r"column 'page' in the DataFrame: 1 group\(s\).*'X' / 'x'", load_docs, agg, "page", "n", "s")
    assert load_docs(agg, "page", "n", "s", allow_similar_ids=True).source["similar_ids"]["groups"] == 1
    # exact repeats keep their own message
    raises(InputError, r"document id 'x' appears 2 times", load_docs,
           pd.DataFrame({"page": ["x", "x", "y"], "n": [2, 2, 2], "s": [1, 1, 1]}), "page", "n", "s")
    rows = pd.DataFrame({"d": ["x", "x ", "y", "y"], "a": [1, 0, 1, 1], "b": [0, 0, 1, 0]})
    raises(InputError, r"column 'd' in the DataFrame: 1 group\(s\)", load_pairs, rows, "d", "a", "b")
    pairs = load_pairs(rows, "d", "a", "b", allow_similar_ids=True)
    assert pairs.K == 3 and pairs.source["similar_ids"]["examples"] == [["x", "x "]]


def test_similar_ids_on_the_command_line_and_in_params(capsys, tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("doc_id,hit\nd7,1\nd7 ,0\nd8,1\nd9,0\n")
    err = bad_cli(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit")
    assert "column 'doc_id'" in err and "--allow-similar-ids" in err
    code, out, err = run(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit", "--allow-similar-ids",
                         "--replicates", "0", "--json")
    assert code == 0, err
    assert json.loads(out)["input"]["similar_ids"]["groups"] == 1
    code, out, err = run(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit", "--allow-similar-ids",
                         "--replicates", "0")
    assert "kept as different documents" in out
    from perdoc.study.run import load_study_table
    params = study_file(tmp_path, {"path": "r.csv", "doc": "doc_id", "score": "hit", "allow_similar_ids": True})
    assert load_study_table(load_params(params)).K == 4


# ====================================================================== 5. declared metric
def test_binary_metric_refuses_other_values(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("doc_id,hit\nd1,1\nd1,2.5\nd2,0\nd3,1\nd3,-1\n")
    raises(InputError, r"column 'hit' in .*r\.csv: 2 row\(s\) have a score other than 0 or 1 \(e\.g\. 2\.5\); "
           r"the declared metric binary", load_chunks, p, "doc_id", "hit", metric="binary")
    raises(InputError, r"column 'hit' in .*: 2 row\(s\) have a score outside \[0, 1\] \(e\.g\. 2\.5\)",
           load_chunks, p, "doc_id", "hit", metric="proportion")
    table = load_chunks(p, "doc_id", "hit", metric="score")
    assert table.source["metric"] == "score" and table.source["metric_declared"] is True
    ints = pd.DataFrame({"d": ["a", "a", "b"], "y": np.array([1, 2, 0], dtype=np.int64)})
    raises(InputError, r"column 'y' in the DataFrame: 1 row\(s\) have a score other than 0 or 1 \(e\.g\. 2\)",
           load_chunks, ints, "d", "y", metric="binary")


def test_proportion_metric_refuses_values_outside_unit_interval():
    df = pd.DataFrame({"d": ["a", "a", "b", "c"], "y": [0.5, 1.0, -0.25, 0.0]})
    raises(InputError, r"1 row\(s\) have a score outside \[0, 1\] \(e\.g\. -0\.25\)", load_chunks, df, "d", "y",
           metric="proportion")
    raises(InputError, r"2 row\(s\) have a score other than 0 or 1", load_chunks, df, "d", "y", metric="binary")


@pytest.mark.parametrize("scores, metric, reason", [
    ([1, 0, 1, 0], "binary", "every score is 0 or 1"),
    ([1, 0.5, 0, 0.25], "proportion", "scores lie in [0, 1] but are not all 0/1"),
    ([1, 2.5, 0, 0], "score", "some score lies outside [0, 1]"),
    ([1, -1, 0, 0], "score", "some score lies outside [0, 1]"),
])
def test_inferred_metric_and_reason(tmp_path, scores, metric, reason):
    df = pd.DataFrame({"d": ["a", "a", "b", "c"], "y": scores})
    df.to_csv(tmp_path / "r.csv", index=False)
    df.astype({"y": float}).to_parquet(tmp_path / "r.parquet")
    for source in (df, tmp_path / "r.csv", tmp_path / "r.parquet"):
        src = load_chunks(source, "d", "y").source
        assert (src["metric"], src["metric_declared"], src["metric_reason"]) == (metric, False, reason)
        assert src["binary"] is (metric == "binary")


def test_declared_proportion_on_zero_one_data_is_not_binary():
    df = pd.DataFrame({"d": ["a", "a", "b", "c"], "y": [1, 0, 1, 0]})
    table = load_chunks(df, "d", "y", metric="proportion")
    assert table.source["metric"] == "proportion" and table.binary is False
    assert load_chunks(df, "d", "y", metric="binary").binary is True


def test_unknown_metric_is_a_parameter_error():
    raises(ParameterError, r"metric='ratio' is not a known kind of metric.*--metric",
           load_chunks, pd.DataFrame({"d": ["a", "b"], "y": [1, 0]}), "d", "y", metric="ratio")


def test_declared_metric_for_per_document_tables():
    agg = pd.DataFrame({"doc": ["a", "b", "c"], "n": [2, 3, 4], "hits": [2.5, 1, 0], "sq": [3.5, 1, 0]})
    raises(InputError, r"column 'hits' in the DataFrame: 1 document\(s\) have a sum outside \[0, n\] \(e\.g\. 2\.5 "
           r"with n = 2\)", load_docs, agg, "doc", "n", "hits", "sq", metric="proportion")
    raises(InputError, r"column 'hits' .*a sum that 0/1 scores cannot give", load_docs, agg, "doc", "n", "hits",
           "sq", metric="binary")
    frac = pd.DataFrame({"doc": ["a", "b"], "n": [2, 3], "hits": [1.0, 1.0], "sq": [0.5, 1.0]})
    raises(InputError, r"column 'sq' in the DataFrame: 1 document\(s\) have a sum of squares other than the sum",
           load_docs, frac, "doc", "n", "hits", "sq", metric="binary")
    over = pd.DataFrame({"doc": ["a", "b"], "n": [2, 3], "hits": [1.0, 1.0], "sq": [1.5, 1.0]})
    raises(InputError, r"column 'sq' .*outside \[0, s\]", load_docs, over, "doc", "n", "hits", "sq",
           metric="proportion")
    src = load_docs(frac, "doc", "n", "hits", "sq").source
    assert (src["metric"], src["metric_declared"]) == ("proportion", False)
    assert load_docs(agg, "doc", "n", "hits", "sq").source["metric"] == "score"
    ok = load_docs(agg.assign(hits=[2, 1, 0], sq=[2, 1, 0]), "doc", "n", "hits", "sq")
    assert ok.source["metric"] == "binary"
    # a declared proportion without q is not assumed to be 0/1
    t = load_docs(frac, "doc", "n", "hits", metric="proportion")
    assert t.q is None and not t.q_assumed_binary


def test_declared_metric_for_pairs_and_on_the_command_line(capsys, tmp_path):
    rows = pd.DataFrame({"d": ["x", "x", "y", "z"], "a": [1, 0, 1, 1], "b": [0, 0.5, 1, 0]})
    raises(InputError, r"column 'b' in the DataFrame: 1 row\(s\) have a score other than 0 or 1", load_pairs,
           rows, "d", "a", "b", metric="binary")
    pairs = load_pairs(rows, "d", "a", "b")
    assert pairs.source["metric"] == "proportion" and "'b'" in pairs.source["metric_reason"]
    p = tmp_path / "r.csv"
    p.write_text("doc_id,hit\nd1,1\nd1,2.5\nd2,0\nd3,1\n")
    err = bad_cli(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit", "--metric", "binary")
    assert "column 'hit'" in err and "1 row(s)" in err and "2.5" in err
    err = bad_cli(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit", "--metric", "ratio")
    assert "--metric" in err
    code, out, err = run(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit", "--replicates", "0", "--json")
    d = json.loads(out)["input"]
    assert (d["metric"], d["metric_declared"], d["metric_reason"]) == ("score", False,
                                                                       "some score lies outside [0, 1]")


def test_params_data_metric(tmp_path):
    from perdoc.study.run import load_study_table
    (tmp_path / "r.csv").write_text("doc_id,hit\nd1,1\nd1,0.5\nd2,0\nd3,1\n")
    params = study_file(tmp_path, {"path": "r.csv", "doc": "doc_id", "score": "hit", "metric": "binary"})
    raises(InputError, r"column 'hit' .*score other than 0 or 1", load_study_table, load_params(params))


def test_metric_check_costs_no_extra_pass_on_common_data(monkeypatch, tmp_path):
    calls = []
    real = pio._Source.fetch

    def counting(self, sql, params=None):
        calls.append(sql)
        return real(self, sql, params)

    monkeypatch.setattr(pio._Source, "fetch", counting)
    p = tmp_path / "r.csv"
    p.write_text(CSV)
    load_chunks(p, "doc_id", "hit")                      # 0/1 scores: one pass
    assert len(calls) == 1
    calls.clear()
    p.write_text("doc_id,y\na,0.5\na,0.25\nb,0.75\n")   # other scores: compensated sums in the same pass
    load_chunks(p, "doc_id", "y")
    assert len(calls) == 1
    calls.clear()
    p.write_text("doc_id,y\na,1e200\na,0.25\nb,0.75\n")  # squares past the double range: summed again, rescaled
    t = load_chunks(p, "doc_id", "y")
    # (and one counting the infinite squares, one finding the range: the pass counts only the scores
    # outside [0, 1], enough for every score of ordinary size)
    assert len(calls) == 4 and t.scale != 1.0


# ====================================================================== 6. --write-table keeps --doc
@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_write_table_round_trip_with_the_users_doc_name(tmp_path, ext):
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"page_id": [f"p{i % 40}" for i in range(600)], "y": rng.random(600)})
    table = load_chunks(df, "page_id", "y")
    out = tmp_path / f"docs.{ext}"
    write_table(table, out, doc_name="page_id")
    back = load_docs(out, doc="page_id", n="n", s="s", q="q")
    same_table(back, table)


def test_write_table_doc_name_cannot_clash(tmp_path):
    table = DocTable.from_arrays([2, 3], [1, 2], doc=["a", "b"])
    raises(DataFileError, r"document column name 'rate'", write_table, table, tmp_path / "t.csv", doc_name="rate")


def test_cli_write_table_feeds_back_with_the_same_doc(capsys, tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(CSV)
    out = tmp_path / "docs.csv"
    code, first, err = run(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit", "--replicates", "0",
                           "--json", "--write-table", out)
    assert code == 0, err
    assert pd.read_csv(out).columns[0] == "doc_id"
    code, second, err = run(capsys, "estimate", out, "--doc", "doc_id", "--n", "n", "--s", "s", "--q", "q",
                            "--replicates", "0", "--json")
    assert code == 0, err
    for key in ("micro", "macro"):
        assert json.loads(first)[key] == json.loads(second)[key]


# ====================================================================== 7. CSV formula injection
HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "\tTAB", "\rCR",
           "\uff1dSUM(1)", "plain", "-5", "+2.5e3"]


def test_neutralise_csv_cell():
    assert [neutralise_csv_cell(v) for v in HOSTILE] == [
        "'=HYPERLINK(\"http://x\",\"y\")", "'+cmd|' /C calc'!A0", "'-2+3", "'@SUM(1)", "'\tTAB", "'\rCR",
        "'\uff1dSUM(1)", "plain", "-5", "+2.5e3"]
    assert neutralise_csv_cell(3) == 3 and neutralise_csv_cell(None) is None and neutralise_csv_cell("") == ""


def test_csv_exports_neutralise_formulas_but_parquet_keeps_ids(tmp_path):
    n = len(HOSTILE)
    table = DocTable.from_arrays(np.arange(1, n + 1), np.ones(n), doc=HOSTILE,
                                 attrs={"stratum": np.array(["=1+1"] * n, dtype=object)})
    csv_path = tmp_path / "docs.csv"
    table.write(csv_path)
    written = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    assert list(written["doc"]) == [neutralise_csv_cell(v) for v in HOSTILE]
    assert set(written["stratum"]) == {"'=1+1"}
    assert list(written["n"]) == [str(i) for i in range(1, n + 1)]     # numbers untouched
    raw = csv_path.read_text()
    assert not any(line.startswith(("=", "+", "@")) for line in raw.splitlines())
    pq = tmp_path / "docs.parquet"
    write_table(table, pq)
    assert list(pd.read_parquet(pq)["doc"]) == HOSTILE


def test_table_module_does_not_import_the_loaders():
    code = ("import sys, perdoc.table, perdoc.export; "
            "assert 'perdoc.io' not in sys.modules and 'duckdb' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert pio.write_table is write_table


# ====================================================================== 8. bounds up front
@pytest.mark.parametrize("n, message", [
    ("1e300", r"column 'chunks' in .*: 1 document\(s\) have a count above 2\*\*53"),
    (str(2 ** 53 + 2), r"column 'chunks' in .*: 1 document\(s\) have a count above 2\*\*53"),
])
def test_huge_counts_are_refused_naming_the_column(tmp_path, n, message):
    p = tmp_path / "agg.csv"
    p.write_text(f"doc,chunks,s\na,{n},1\nb,3,1\n")
    raises(InputError, message, load_docs, p, "doc", "chunks", "s")


def test_total_count_above_2_53_is_refused():
    agg = pd.DataFrame({"doc": ["a", "b"], "chunks": [2 ** 52 + 4, 2 ** 52 + 4], "s": [1, 1]})
    raises(InputError, r"column 'chunks' in the DataFrame: the counts add up to N = .* more than 2\*\*53",
           load_docs, agg, "doc", "chunks", "s")
    raises(InputError, r"column n: .*count above 2\*\*53", DocTable.from_arrays, [1e300, 2], [1, 1])


def test_huge_count_on_the_command_line(capsys, tmp_path):
    p = tmp_path / "agg.csv"
    p.write_text("doc,chunks,s\na,1e300,1\nb,3,1\n")
    err = bad_cli(capsys, "estimate", p, "--doc", "doc", "--n", "chunks", "--s", "s")
    assert "column 'chunks'" in err


def test_huge_sum_with_one_chunk_is_rescaled_not_broken():
    agg = pd.DataFrame({"doc": ["a", "b", "c"], "n": [1, 2, 3], "total": [1e308, 1.0, 2.0]})
    table = load_docs(agg, "doc", "n", "total")
    assert table.scale < 1 and np.frexp(table.scale)[0] == 0.5
    np.testing.assert_allclose(table.rate, [1e308, 0.5, 2 / 3], rtol=1e-15)
    assert not table.q_assumed_binary


def test_huge_sum_with_a_small_q_is_refused_naming_q():
    agg = pd.DataFrame({"doc": ["a", "b"], "n": [1, 2], "total": [1e200, 1.0], "sq": [1.0, 1.0]})
    raises(InputError, r"column 'sq' in the DataFrame: a sum of squared scores is smaller than s\^2/n",
           load_docs, agg, "doc", "n", "total", "sq")


# ====================================================================== 9. the whole double range
@pytest.mark.parametrize("size", [1e200, 1e-170, 1e300, 1e-300])
@pytest.mark.parametrize("fmt", ["dataframe", "csv", "parquet"])
def test_scores_far_from_one_are_rescaled(tmp_path, size, fmt):
    rng = np.random.default_rng(1)
    x = rng.normal(1.0, 0.5, 300) * size
    df = pd.DataFrame({"d": [f"d{i % 30:02d}" for i in range(300)], "y": x})
    if fmt == "csv":
        source = tmp_path / "r.csv"
        df.to_csv(source, index=False, float_format="%.17g")
    elif fmt == "parquet":
        source = tmp_path / "r.parquet"
        df.to_parquet(source)
    else:
        source = df
    table = load_chunks(source, "d", "y")
    c = table.scale
    assert c != 1 and np.frexp(c)[0] == 0.5
    assert 0.25 <= np.max(np.abs(x)) * c <= 4
    g = df.groupby("d")["y"]
    np.testing.assert_allclose(table.s / c, g.sum().to_numpy(), rtol=1e-12)
    xs = x * c
    q_true_scaled = pd.Series(xs * xs).groupby(df["d"]).sum().to_numpy()
    np.testing.assert_allclose(table.q, q_true_scaled, rtol=1e-12)
    np.testing.assert_allclose(table.rate, g.mean().to_numpy(), rtol=1e-12)
    frame = table.to_frame()
    np.testing.assert_allclose(frame["s"], g.sum().to_numpy(), rtol=1e-12)
    assert table.source["metric"] == "score"


def test_ordinary_scores_keep_scale_one_and_exact_sums():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"d": [f"d{i % 30}" for i in range(600)], "y": rng.normal(0.3, 2.0, 600)})
    table = load_chunks(df, "d", "y")
    assert table.scale == 1.0
    assert load_chunks(df.assign(y=(df.y > 0).astype(int)), "d", "y").scale == 1.0


def test_load_docs_stores_rescaled_sums():
    s = np.array([3e150, -1e150, 2e150])
    q = np.array([5e300, 2e300, 4e300])   # finite, but their products would leave the double range
    agg = pd.DataFrame({"doc": ["a", "b", "c"], "n": [3, 2, 2], "s": s, "q": q})
    table = load_docs(agg, "doc", "n", "s", "q")
    c = table.scale
    assert c != 1 and np.frexp(c)[0] == 0.5
    np.testing.assert_array_equal(table.s, s * c)
    np.testing.assert_array_equal(table.q, q * c * c)
    np.testing.assert_allclose(table.rate, s / [3, 2, 2], rtol=1e-15)
    tiny = load_docs(agg.assign(s=s * 1e-300, q=q * 1e-300 * 1e-300), "doc", "n", "s", "q")
    assert tiny.scale > 1


def test_rescaled_table_writes_true_values(tmp_path):
    df = pd.DataFrame({"d": ["a", "a", "b", "c"], "y": [1e200, 3e200, -2e200, 5e199]})
    table = load_chunks(df, "d", "y")
    out = tmp_path / "docs.csv"
    table.write(out)
    written = pd.read_csv(out)
    np.testing.assert_allclose(written["s"], [4e200, -2e200, 5e199], rtol=1e-15)
    assert np.isinf(written["q"]).all()            # true q overflows: written as it is
    np.testing.assert_allclose(written["rate"], [2e200, -2e200, 5e199], rtol=1e-15)


@pytest.mark.parametrize("size", [1e200, 1e-170])
def test_pairs_beyond_the_double_range_are_rescaled(size):
    from perdoc.compare import compare
    rng = np.random.default_rng(3)
    rows = pd.DataFrame({"d": [f"d{i % 12:02d}" for i in range(240)], "a": rng.normal(1, 0.5, 240) * size,
                         "b": rng.normal(1.2, 0.5, 240) * size})
    pairs = load_pairs(rows, "d", "a", "b")
    c = pairs.scale
    assert c != 1 and np.frexp(c)[0] == 0.5 and 0.25 <= max(rows.a.abs().max(), rows.b.abs().max()) * c <= 4
    g = rows.groupby("d")
    np.testing.assert_allclose(pairs.s_a / c, g.a.sum().to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(pairs.q_d, ((rows.a * c - rows.b * c) ** 2).groupby(rows.d).sum().to_numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(pairs.system("b").rate, g.b.mean().to_numpy(), rtol=1e-12)
    d = compare(pairs, replicates=0).to_dict()
    np.testing.assert_allclose(d["systems"]["a"]["micro"]["estimate"], rows.a.mean(), rtol=1e-9)
    assert pairs.source["metric"] == "score"


def test_chunk_route_messages_name_the_score_column(monkeypatch):
    def fail(*args, **kwargs):
        raise InputError("column q: sums of squared scores must be finite")

    monkeypatch.setattr(DocTable, "from_arrays", staticmethod(fail))
    raises(InputError, r"^column 'hit' in the DataFrame: sums of squared scores", load_chunks,
           pd.DataFrame({"doc": ["a", "b"], "hit": [0.5, 0.25]}), "doc", "hit")


def test_every_new_error_is_a_perdoc_error():
    assert issubclass(DataFileError, PerdocError)
