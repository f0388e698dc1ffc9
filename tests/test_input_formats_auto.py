"""A file's format told by its extension in every door, and the messages that cannot tell it.

* ``.eval`` (inspect_ai's own log extension, a zip archive) is read as an inspect log without
  ``--format``: ``perdoc estimate``, ``perdoc compare``, a params file's ``data.path`` (``perdoc
  report``, ``perdoc estimate --params``) and the Python loaders, with the same numbers as with the
  format named.
* Every "cannot tell the format" message (and the unknown-format ones) names every format perdoc
  reads, listed from the one registry (:mod:`perdoc.reading.formats`), on one line; the command line
  exits with status 2 and no traceback.

The inspect log is tests/fixtures/frameworks/inspect.eval (written by make_fixtures.py with
inspect_ai's own log API); reading a ``.eval`` log needs inspect_ai, so those tests skip without it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import perdoc
from perdoc.cli import FORMATS as CLI_FORMATS
from perdoc.cli import build_parser, main
from perdoc.errors import DataFileError, ParameterError
from perdoc.params import ParamsError, load_params
from perdoc.reading import formats
from perdoc.study.run import load_study_pairs, load_study_table

F = Path(__file__).resolve().parent / "fixtures" / "frameworks"
DOC, SCORE, VS = "metadata.source_doc", "match", "f1"
CSV = "doc_id,hit\na,1\na,0\nb,1\n"


@pytest.fixture
def inspect_ai():
    return pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install inspect-ai (perdoc[frameworks])")


@pytest.fixture
def log(tmp_path):
    """The fixture's inspect log under a name of its own (only its extension tells its format)."""
    p = tmp_path / "run 1.eval"
    shutil.copy(F / "inspect.eval", p)
    return p


def _cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _bad_cli(capsys, *args) -> str:
    """Exit 2, nothing on stdout, one line on stderr without a traceback; returns that line."""
    code, out, err = _cli(capsys, *args)
    assert code == 2, (code, out, err)
    assert out == "" and "Traceback" not in err, err
    assert err.count("\n") == 1, err
    return err


def _sums(table) -> dict:
    return {k: np.asarray(getattr(table, k)).tolist() for k in ("doc", "n", "s", "q")}


def _names_every_format(msg: str) -> None:
    """``msg`` is one short line naming every format of the registry, in its order (and a few by
    their literal names), that gzip-compressed text is read, and a TREC run's flag."""
    assert "\n" not in msg.strip() and len(msg) < 400, msg
    expected = [f.name for f in formats.FORMATS if f.flag is None]
    assert expected == list(formats.names()) and len(expected) >= 9
    for name in (*expected, "csv", "tsv", "jsonl", "json", "parquet", "inspect", "lm-eval", "ragas", "deepeval"):
        assert name in msg, (name, msg)
    assert ", ".join(expected) in msg or "|".join(expected) in msg, msg   # one list, the registry's order
    gz = "/".join(f.name for f in formats.FORMATS if f.gzip)
    assert f"{gz} may be gzipped, .gz" in msg       # gzip-compressed text: csv/tsv/jsonl/json
    assert "--trec-run" in msg                      # a TREC run, chosen by its own flag


# ------------------------------------------------------------------------------------ the registry
def test_registry_tells_eval_as_inspect():
    assert formats.from_file_name("logs/Run.EVAL")[0].name == "inspect"
    assert formats.adapter_for("logs/run.eval") == "inspect"
    assert formats.adapter_for(Path("run.eval")) == "inspect"
    assert formats.adapter_for("run.eval.gz") is None             # inspect never gzips its zip archive
    assert formats.adapter_for("run.csv") is None and formats.adapter_for("-") is None
    assert formats.adapter_for("run.json", "inspect_ai") == "inspect"  # a name wins over the extension
    assert formats.adapter_for("run.eval", "csv") is None
    assert CLI_FORMATS == formats.choices() and "inspect" in CLI_FORMATS


# ------------------------------------------------------------------------------------ .eval, every door
def test_cli_estimate_reads_eval_without_format(inspect_ai, log, capsys):
    base = ["estimate", log, "--doc", DOC, "--score", SCORE, "--replicates", "0", "--json"]
    code, out, err = _cli(capsys, *base)
    assert code == 0, err
    auto = json.loads(out)
    code, out, err = _cli(capsys, *base, "--format", "inspect")
    assert code == 0, err
    named = json.loads(out)
    assert auto == named                                 # the same numbers, notes and exclusions
    assert auto["input"]["format"] == "inspect" and auto["K"] == 4
    assert sum(e["rows"] for e in auto["input"]["exclusions"]) == 2


def test_cli_compare_reads_eval_without_format(inspect_ai, log, capsys):
    base = ["compare", log, "--doc", DOC, "--score", SCORE, "--vs", VS, "--replicates", "99", "--json"]
    code, out, err = _cli(capsys, *base)
    assert code == 0, err
    auto = json.loads(out)
    code, out, err = _cli(capsys, *base, "--format", "inspect")
    assert code == 0, err
    assert auto == json.loads(out)


def test_cli_eval_without_format_keeps_the_adapter_rules(inspect_ai, log, capsys):
    err = _bad_cli(capsys, "estimate", log, "--doc", DOC)
    assert "needs --score" in err and "format inspect" in err and "extension" in err
    err = _bad_cli(capsys, "estimate", log, "--doc", DOC, "--score", SCORE, "--n", "n", "--s", "s")
    assert "per-sample results" in err


def test_python_loaders_read_eval_without_fmt(inspect_ai, log):
    auto = perdoc.load_chunks(log, doc=DOC, score=SCORE)
    named = perdoc.load_chunks(log, doc=DOC, score=SCORE, fmt="inspect")
    assert _sums(auto) == _sums(named) and auto.K == 4
    assert tuple(auto.exclusions) == tuple(named.exclusions) and auto.source == named.source
    assert auto.source["format"] == "inspect" and auto.source["path"] == str(log)
    a, b = perdoc.estimate(auto, replicates=0), perdoc.estimate(named, replicates=0)
    assert a.to_dict() == b.to_dict()
    pa = perdoc.load_pairs(log, doc=DOC, a=SCORE, b=VS)
    pb = perdoc.load_pairs(log, doc=DOC, a=SCORE, b=VS, fmt="inspect")
    assert pa.K == pb.K and perdoc.compare(pa, replicates=0).to_dict() == perdoc.compare(pb, replicates=0).to_dict()
    assert perdoc.load_chunks(str(log), doc=DOC, score=SCORE).source["format"] == "inspect"


def _params(tmp_path, data: str) -> Path:
    p = tmp_path / "study.yaml"
    p.write_text(f"""name: auto
data: {data}
design: {{population: "the documents", sampling: srs}}
estimand: {{kind: macro, why: "each document counts once"}}
intervals: {{replicates: 0}}
""")
    return p


def test_params_data_path_eval_without_format(inspect_ai, log, tmp_path, capsys):
    data = f"{{path: '{log.name}', doc: {DOC}, score: {SCORE}, compare_to: {VS}}}"
    study = load_params(_params(tmp_path, data))
    assert study.data.format is None                      # nothing written into the params
    named = load_params(_params(tmp_path, data[:-1] + ", format: inspect}"))
    assert _sums(load_study_table(study)) == _sums(load_study_table(named))
    assert load_study_table(study).source["format"] == "inspect"
    assert load_study_pairs(study).K == load_study_pairs(named).K
    p = _params(tmp_path, data)
    code, out, err = _cli(capsys, "estimate", "--params", p, "--json")
    assert code == 0, err
    assert json.loads(out)["input"]["format"] == "inspect"


def test_report_reads_eval_without_format(inspect_ai, log, tmp_path, capsys):
    p = _params(tmp_path, f"{{path: '{log.name}', doc: {DOC}, score: {SCORE}}}")
    code, out, err = _cli(capsys, "report", p, "--out", tmp_path / "out")
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "auto" / "summary.json").read_text())
    expected = perdoc.estimate(perdoc.load_chunks(log, doc=DOC, score=SCORE, fmt="inspect"), replicates=0)
    assert summary["macro"]["estimate"] == pytest.approx(expected.macro_estimate, abs=0, rel=1e-15)


# ------------------------------------------------------------------------------------ the messages
def test_unknown_extension_names_every_format(tmp_path):
    p = tmp_path / "chunks.xlsx"
    p.write_text(CSV)
    with pytest.raises(DataFileError, match=r"cannot tell the format of .*chunks\.xlsx.*'\.xlsx'") as e:
        perdoc.load_chunks(p, "doc_id", "hit")
    msg = str(e.value)
    _names_every_format(msg)
    assert "--format" in msg and "fmt= in Python" in msg and "data.format" in msg


def test_gzipped_eval_and_parquet_name_every_format(tmp_path):
    for name in ("run.eval.gz", "t.parquet.gz"):
        p = tmp_path / name
        p.write_bytes(b"\x1f\x8b\x08\x00")
        with pytest.raises(DataFileError, match="cannot tell the format") as e:
            perdoc.load_chunks(p, "doc_id", "hit")
        _names_every_format(str(e.value))


def test_unknown_fmt_names_every_format(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(CSV)
    with pytest.raises(ParameterError, match="fmt='excel' is not a known format") as e:
        perdoc.load_chunks(p, "doc_id", "hit", fmt="excel")
    _names_every_format(str(e.value))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_pipe_without_format_names_every_format(tmp_path):
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    with pytest.raises(DataFileError, match="cannot tell the format of .*feed") as e:
        perdoc.load_chunks(fifo, "doc_id", "hit")
    _names_every_format(str(e.value))


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def test_cli_cannot_tell_the_format_names_every_format(tmp_path, capsys, monkeypatch):
    p = tmp_path / "chunks.data"
    p.write_text(CSV)
    err = _bad_cli(capsys, "estimate", p, "--doc", "doc_id", "--score", "hit")
    assert "cannot tell the format" in err and "--format" in err
    _names_every_format(err)
    monkeypatch.setattr(sys, "stdin", _Stdin(CSV.encode()))
    err = _bad_cli(capsys, "estimate", "-", "--doc", "doc_id", "--score", "hit")
    assert "standard input has no file name" in err
    _names_every_format(err)


def test_params_unknown_data_format_names_every_format(tmp_path):
    with pytest.raises(ParamsError, match="data.format") as e:
        load_params(_params(tmp_path, "{path: x.csv, doc: d, score: s, format: promptfoo}"))
    _names_every_format(str(e.value))


def test_messages_follow_the_registry(tmp_path, monkeypatch):
    """A format added to the registry appears in every message, with its extension."""
    extra = formats.Format("newfmt", "a new framework's output", (".newx",), adapter=True)
    monkeypatch.setattr(formats, "FORMATS", formats.FORMATS + (extra,))
    monkeypatch.setattr(formats, "_NAMED", formats._NAMED + (extra,))
    p = tmp_path / "chunks.xlsx"
    p.write_text(CSV)
    with pytest.raises(DataFileError) as e:
        perdoc.load_chunks(p, "doc_id", "hit")
    assert "newfmt" in str(e.value)
    with pytest.raises(ParameterError) as e:
        perdoc.load_chunks(p, "doc_id", "hit", fmt="excel")
    assert "newfmt" in str(e.value)
    with pytest.raises(ParamsError) as e:
        load_params(_params(tmp_path, "{path: x.csv, doc: d, score: s, format: promptfoo}"))
    assert "newfmt" in str(e.value)


def test_format_help_names_the_extensions():
    sub = build_parser()._subparsers._group_actions[0].choices
    for command in ("estimate", "compare"):
        text = " ".join(sub[command].format_help().split())
        assert "--format {" + ",".join(formats.choices()) + "}" in text
        assert ".eval for inspect" in text and ".parquet/.pq" in text and "needed for '-' and pipes" in text
