"""Secrets of a connection URL never reach what perdoc writes, and a table of a database is a study's
input end to end (issue 15).

* A password, a token or a key in ``data.backend.url`` (user info, query string, Spark Connect's
  ``;token=``) and the value of ``SPARK_REMOTE`` appear in no summary.json, report, error.txt, error
  page or message; control characters from the data are printed escaped, one line per message.
* ``data: {backend: {url, table}}`` in a params file renders a report that names the table and the
  URL (without secrets) and records no file hash; a relative ``duckdb://`` path is relative to the
  params file; DuckDB databases are opened read-only and a missing one is refused, never created.
* A Spark Connect server that does not answer fails within its deadline, in one line.

The Spark tests skip saying what to install, as in tests/test_engines.py (under CI they fail).
"""

import hashlib
from html import unescape
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perdoc import redact
from perdoc.cli import main
from perdoc.redact import escape_controls, redact_text, redact_url

ibis = pytest.importorskip("ibis") if not os.environ.get("CI") else __import__("ibis")
duckdb = pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parents[1]
# secrets of the params file, of the --set override, and of a driver's message: none may be written
SECRETS = ("PASSWORD1", "PW_Q1", "TOK_Q1", "KEY_Q1", "PASSWORD2", "PW_Q2", "TOK_Q2", "KEY_Q2", "alice", "bob")


@pytest.fixture(autouse=True, scope="module")
def _forget_secrets():
    """The URLs these tests hand to perdoc are remembered for masking; forget them afterwards."""
    yield
    redact._known.clear()


def _chunks(seed=5, rows=400, docs=40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = rng.integers(0, docs, rows)
    return pd.DataFrame({"doc": np.char.add("d", d.astype(str)), "hit": rng.integers(0, 2, rows).astype("int64")})


def _database(path: Path, frame: pd.DataFrame, table: str = "results") -> Path:
    con = duckdb.connect(str(path))
    con.register("frame", frame)
    con.execute(f"CREATE TABLE {table} AS SELECT * FROM frame")
    con.close()
    return path


PARAMS = """name: {name}
data:
  backend: {{url: "{url}", table: results}}
  doc: doc
  score: hit
design: {{population: "made-up documents", sampling: srs, population_size: 400}}
estimand: {{kind: micro, why: "each chunk answers a question"}}
intervals: {{level: 0.9, replicates: 0, seed: 3}}
"""


def _secretless(text: str, where: str) -> None:
    for s in SECRETS:
        assert s not in text, f"{s} in {where}"


def _files_secretless(folder: Path) -> None:
    for p in folder.rglob("*"):
        if p.is_file():
            _secretless(p.read_text(encoding="utf-8"), str(p))


# ---------------------------------------------------------------------------------- perdoc.redact
def test_redact_url_forms():
    assert redact_url("duckdb://alice:PASSWORD@/path.duckdb") == "duckdb://***@/path.duckdb"
    assert redact_url("postgres://user:pw@host:5432/db") == "postgres://***@host:5432/db"
    assert redact_url("postgres://host/db?sslmode=require&password=x&Token=y&API_KEY=z&access_token=t"
                      "&authSource=a&secret=s&pwd=p") == \
        ("postgres://host/db?sslmode=require&password=***&Token=***&API_KEY=***&access_token=***"
         "&authSource=***&secret=***&pwd=***")
    assert redact_url("sc://spark.example:15002/;token=abc;user_id=bob;use_ssl=true") == \
        "sc://spark.example:15002/;token=***;user_id=***;use_ssl=true"
    # a password with an unescaped '/' or '?' is masked whole, never cut short
    assert redact_url("snowflake://u:pa/ss?wd@acct/db") == "snowflake://***@acct/db"
    # a URL a message cut short before the '@': what follows 'user:' is not a port, so it is masked
    assert redact_url("postgres://alice:PASSWORD1...") == "postgres://***@"
    assert redact_url("trino://host:8080/catalog") == "trino://host:8080/catalog"
    assert redact_url("duckdb:///data/results.duckdb") == "duckdb:///data/results.duckdb"
    assert redact_url("not a url") == "not a url"


def test_redact_text_masks_urls_inside_messages_and_known_secrets():
    url = "postgres://carol:s3cr%2Ft%21@db.example/evals?token=TKN123"
    redact.remember(url)
    msg = (f"connection to {url!r} failed: password 's3cr/t!' rejected for carol; DSN host=h password=hunter22 "
           f"and again: {url[:30]}")
    got = redact_text(msg)
    for s in ("s3cr%2Ft%21", "s3cr/t!", "TKN123", "hunter22"):
        assert s not in got, got
    assert "postgres://***@db.example/evals?token=***" in got


def test_escape_controls():
    assert escape_controls("a\x1b[31mb\x1b]0;title\x07c\rd\ne\x9bf\u202eg") == \
        "a\\x1b[31mb\\x1b]0;title\\x07c\\x0dd\\x0ae\\x9bf\\u202eg"
    assert escape_controls("plain — café") == "plain — café"


# ---------------------------------------------------------------------------------- params
def test_params_backend_keys(tmp_path):
    from perdoc.params import ParamsError, parse_params
    base = {"name": "x", "data": {"backend": {"url": "duckdb://alice:PASSWORD1@w.duckdb?token=TOK_Q1",
                                              "table": "results"}, "doc": "doc", "score": "s"},
            "design": {"population": "docs"}, "estimand": {"kind": "micro", "why": "because"}}
    study = parse_params(base, base=tmp_path)
    assert study.data.path is None
    assert study.data.backend == {"url": f"duckdb://{tmp_path / 'w.duckdb'}?token=TOK_Q1", "table": "results"}
    written = study.to_dict()["data"]
    assert written["path"] is None
    assert written["backend"] == {"url": "duckdb://***@w.duckdb?token=***", "table": "results"}
    for key, value, why in (("path", "d.csv", "not both"), ("format", "csv", "data.format")):
        bad = json.loads(json.dumps(base))
        bad["data"][key] = value
        with pytest.raises(ParamsError, match=why):
            parse_params(bad, base=tmp_path)


# ---------------------------------------------------------------------------------- report, end to end
@pytest.fixture(scope="module")
def backend_report(tmp_path_factory):
    """A report of a params file whose data is a table of a DuckDB file beside it (relative URL),
    with secrets in the URL of the file and of a --set override, built from another folder; an empty
    file named like the table sits beside the params file (it was once read as the data)."""
    root = tmp_path_factory.mktemp("backend-report")
    study, elsewhere, out = root / "study", root / "elsewhere", root / "reports"
    study.mkdir(), elsewhere.mkdir()
    frame = _chunks()
    _database(study / "w.duckdb", frame)
    frame.to_csv(study / "chunks.csv", index=False)
    (study / "results").write_bytes(b"")
    params = study / "db.yaml"
    params.write_text(PARAMS.format(name="dbstudy", url="duckdb://alice:PASSWORD1@w.duckdb?password=PW_Q1"
                                                         "&token=TOK_Q1&api_key=KEY_Q1"), encoding="utf-8")
    override = "duckdb://bob:PASSWORD2@w.duckdb?Password=PW_Q2&TOKEN=TOK_Q2&Api_Key=KEY_Q2&threads=1"
    before = (study / "w.duckdb").read_bytes()
    from perdoc.report import build as report
    frozen, freeze = [], report._freeze

    def spy(params_path, analysis):   # the analysis the kernel reads is a file of the build folder too
        freeze(params_path, analysis)
        frozen.append((Path(os.environ[report.CACHE_ENV]) / report.FROZEN).read_bytes())
    old = os.getcwd()
    os.chdir(elsewhere)
    report._freeze = spy
    try:
        import contextlib
        import io
        err, std = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
            code = main(["report", str(params), "--out", str(out), "--set", f"data.backend.url={override}"])
    finally:
        os.chdir(old)
        report._freeze = freeze
    assert code == 0, err.getvalue()
    return {"frozen": frozen, "root": root, "study": study, "out": out / "dbstudy", "elsewhere": elsewhere,
            "frame": frame, "stderr": err.getvalue(), "stdout": std.getvalue(), "db_before": before}


def test_backend_report_names_the_table_and_keeps_no_secret(backend_report):
    r = backend_report
    folder = r["out"]
    assert sorted(p.name for p in folder.iterdir()) == ["documents.csv", "report.html", "summary.json"]
    _files_secretless(folder)
    _secretless(r["stdout"] + r["stderr"], "the terminal")
    assert len(r["frozen"]) == 1
    _secretless(r["frozen"][0].decode("latin-1"), "the frozen analysis")
    s = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    shown = "duckdb://***@w.duckdb?Password=***&TOKEN=***&Api_Key=***&threads=1"
    assert s["params"]["data"]["backend"] == {"url": shown, "table": "results"}
    assert s["params"]["data"]["path"] is None
    assert s["params_overrides"] == {"data.backend.url": shown}
    inp = s["input"]
    assert inp["backend"] == {"url": shown, "table": "results"}
    assert inp["rows"] == len(r["frame"]) and inp["format"] == "table"
    # no file was read, so no file is named or hashed (not the empty file named like the table)
    assert inp["file"] is None and inp["bytes"] is None and inp["sha256"] is None
    assert hashlib.sha256(b"").hexdigest() not in json.dumps(s)
    # the database's provenance: the SHA-256 of the per-document table aggregated from it
    table_sha = hashlib.sha256((folder / "documents.csv").read_bytes()).hexdigest()
    assert inp["documents_sha256"] == s["documents_table"]["sha256"] == table_sha
    html = (folder / "report.html").read_text(encoding="utf-8")
    subtitle = html.split('class="perdoc-subtitle">', 1)[1].split("</p>", 1)[0]
    assert "table results at duckdb://***@w.duckdb?Password=***&TOKEN=***&Api_Key=***&threads=1" \
        in unescape(subtitle) and table_sha[:12] in subtitle
    assert "Input table" in html and "a database, not a file" in html and "Input file" not in html


def test_backend_report_reads_the_database_beside_the_params_read_only(backend_report):
    r = backend_report
    assert list(r["elsewhere"].iterdir()) == []          # nothing created in the working directory
    assert (r["study"] / "w.duckdb").read_bytes() == r["db_before"]
    assert not (r["study"] / "w.duckdb.wal").exists()
    # the same per-document table as the file the database was made from
    from perdoc.io import load_chunks
    ref = load_chunks(r["study"] / "chunks.csv", doc="doc", score="hit")
    got = pd.read_csv(r["out"] / "documents.csv")
    assert list(got["doc"]) == list(ref.doc) and np.array_equal(got["n"], ref.n) and np.array_equal(got["s"], ref.s)


def test_backend_params_estimate_and_plan(backend_report, capsys):
    """The params form works for perdoc estimate --params too, and its header names table and URL."""
    params = backend_report["study"] / "db.yaml"
    assert main(["estimate", "--params", str(params)]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("perdoc estimate: table results at duckdb://") and "None" not in first
    assert first.endswith("w.duckdb?password=***&token=***&api_key=***")
    _secretless(out, "stdout")
    assert main(["estimate", "--params", str(params), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["input"]["table"] == "results" and got["input"]["url"].endswith("w.duckdb?password=***&token=***"
                                                                                "&api_key=***")


# ---------------------------------------------------------------------------------- failures
def _failed_report(tmp_path, url, capsys, monkeypatch=None):
    params = tmp_path / "p.yaml"
    params.write_text(PARAMS.format(name="broken", url=url), encoding="utf-8")
    out = tmp_path / "reports"
    code = main(["report", str(params), "--out", str(out)])
    cap = capsys.readouterr()
    assert code == 2 and "Traceback" not in cap.err and cap.err.count("\n") == 1, cap.err
    folder = out / "broken"
    assert sorted(p.name for p in folder.iterdir()) == ["error.txt", "report.html"]
    return cap.err, (folder / "error.txt").read_text(encoding="utf-8"), (folder / "report.html").read_text("utf-8")


def test_failure_paths_keep_no_secret(tmp_path, capsys):
    _database(tmp_path / "w.duckdb", _chunks())
    url = "duckdb://alice:PASSWORD1@w.duckdb?password=PW_Q1&token=TOK_Q1&api_key=KEY_Q1"
    err, text, page = _failed_report(tmp_path, url.replace("w.duckdb", "missing.duckdb"), capsys)
    for where, t in (("stderr", err), ("error.txt", text), ("error page", page)):
        _secretless(t, where)
        assert "no such database file" in t and "never creates one" in t
    assert not (tmp_path / "missing.duckdb").exists()
    # the database exists, the table does not: the tables it has are named
    params = tmp_path / "p.yaml"
    params.write_text(PARAMS.format(name="broken", url=url).replace("table: results", "table: nope"), "utf-8")
    assert main(["report", str(params), "--out", str(tmp_path / "reports")]) == 2
    err = capsys.readouterr().err
    _secretless(err, "stderr")
    assert f"no table 'nope' at duckdb://{tmp_path / 'w.duckdb'}?password=***&token=***&api_key=***" in err
    assert "(its tables: 'results')" in err
    for f in ("error.txt", "report.html"):
        _secretless((tmp_path / "reports" / "broken" / f).read_text(encoding="utf-8"), f)


def test_a_driver_quoting_the_url_and_password_is_masked(tmp_path, capsys, monkeypatch):
    url = "postgres://alice:PASSWORD1@db.example:5432/evals?password=PW_Q1&token=TOK_Q1&api_key=KEY_Q1"

    def refuse(u, **kw):  # what some drivers say: the URL, and the password again on its own
        raise RuntimeError(f"could not connect to {u}: FATAL: password 'PASSWORD1' rejected (token TOK_Q1)"
                           "\nsecond line")
    monkeypatch.setattr(ibis, "connect", refuse)
    err, text, page = _failed_report(tmp_path, url, capsys)
    for where, t in (("stderr", err), ("error.txt", text), ("error page", page)):
        _secretless(t, where)
        assert "postgres://***@db.example:5432/evals?password=***&" in t.replace("&amp;", "&")
    # the same from perdoc estimate --backend
    assert main(["estimate", "--backend", url, "--table", "t", "--doc", "doc", "--score", "hit"]) == 2
    cap = capsys.readouterr()
    _secretless(cap.err, "stderr")
    assert cap.err.startswith("perdoc: error: cannot connect to the backend postgres://***@") and \
        cap.err.count("\n") == 1 and cap.out == ""


def test_set_override_error_keeps_no_secret(tmp_path, capsys):
    """An override the schema refuses is quoted in the error: without its secrets."""
    params = tmp_path / "p.yaml"
    params.write_text(PARAMS.format(name="ok", url="duckdb:///nowhere.duckdb"), encoding="utf-8")
    code = main(["report", str(params), "--out", str(tmp_path / "r"), "--set",
                 "data.backend.url={x: postgres://alice_the_user:PASSWORD1_long@h/db}"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "data.backend.url" in err and "must be a string" in err
    _secretless(err, "stderr")   # the schema's message shortens the value, URL and all


# ---------------------------------------------------------------------------------- the command line
def test_missing_duckdb_database_is_refused_not_created(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for url in (f"duckdb://{tmp_path}/missing/path.duckdb", "duckdb://here.duckdb", f"{tmp_path}/plain.duckdb",
                f"sqlite://{tmp_path}/lite.sqlite"):
        assert main(["estimate", "--backend", url, "--table", "x", "--doc", "d", "--score", "s"]) == 2
        cap = capsys.readouterr()
        assert cap.err.count("\n") == 1 and "no such database file" in cap.err and "Traceback" not in cap.err
    assert list(tmp_path.iterdir()) == []
    assert main(["estimate", "--backend", "duckdb://", "--table", "x", "--doc", "d", "--score", "s"]) == 2
    assert "in-memory" in capsys.readouterr().err


def test_sqlite_backend_is_read_only_too(tmp_path):
    import sqlite3
    db = tmp_path / "w.sqlite"
    con = sqlite3.connect(db)
    _chunks().to_sql("results", con, index=False)
    con.close()
    before = db.read_bytes()
    from perdoc.engines import open_source
    t = open_source(None, backend={"url": f"sqlite://{db}", "table": "results"})
    assert t.count().to_pyarrow().as_py() == 400
    with pytest.raises(Exception, match="(?i)read.?only"):
        t.get_backend().con.execute("CREATE TABLE z (a INTEGER)")
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["w.sqlite"]


def test_census_of_a_backend_study_is_its_file(tmp_path):
    """data.backend names the data's table; census.path stays a file (it was read as the table)."""
    from perdoc.params import load_params
    from perdoc.study.run import load_study_census, load_study_table
    _database(tmp_path / "w.duckdb", _chunks(rows=200))
    _chunks(seed=9, rows=900, docs=90).to_csv(tmp_path / "census.csv", index=False)
    params = tmp_path / "p.yaml"
    params.write_text(PARAMS.format(name="c", url="duckdb://w.duckdb") + "census: {path: census.csv}\n", "utf-8")
    study = load_params(params)
    assert load_study_table(study).source["rows"] == 200
    census = load_study_census(study)
    assert census.source["rows"] == 900 and census.K == 90


def test_duckdb_backend_is_opened_read_only(tmp_path):
    from perdoc.engines import open_source
    db = _database(tmp_path / "w.duckdb", _chunks())
    t = open_source(None, backend={"url": f"duckdb://{db}?read_only=false", "table": "results"})
    with pytest.raises(Exception, match="(?i)read.only"):
        t.get_backend().con.execute("CREATE TABLE z (a INTEGER)")


def test_estimate_header_names_table_and_redacted_url(tmp_path, capsys):
    db = _database(tmp_path / "w.duckdb", _chunks())
    url = f"duckdb://alice:PASSWORD1@{db}?token=TOK_Q1"
    assert main(["estimate", "--backend", url, "--table", "results", "--doc", "doc", "--score", "hit",
                 "--replicates", "0"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"perdoc estimate: table results at duckdb://***@{db}?token=***"
    _secretless(out, "stdout")
    frame = _chunks()
    frame["b"] = 1 - frame["hit"]
    _database(tmp_path / "p.duckdb", frame)
    assert main(["compare", "--backend", f"duckdb://{tmp_path / 'p.duckdb'}", "--table", "results", "--doc", "doc",
                 "--score", "hit", "--vs", "b", "--replicates", "0"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"perdoc compare: table results at duckdb://{tmp_path / 'p.duckdb'}"


def test_cli_messages_escape_control_characters(tmp_path, capsys):
    """A column name (or file name) holding terminal escapes is printed escaped, on one line."""
    hostile = "d\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"
    data = tmp_path / "chunks.csv"
    frame = _chunks()
    frame.rename(columns={"hit": hostile}).to_csv(data, index=False)
    assert main(["estimate", str(data), "--doc", "doc", "--score", "nope\r" + hostile]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n")
    for ch in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
        assert ch not in err
    assert "\\x1b]0;owned\\x07" in err
    odd = tmp_path / "odd\x1b[31m.csv"
    shutil.copy(data, odd)
    assert main(["estimate", str(odd), "--doc", "doc", "--score", hostile, "--replicates", "0"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"perdoc estimate: {tmp_path}/odd\\x1b[31m.csv"
    for ch in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
        assert ch not in out


# ---------------------------------------------------------------------------------- Spark
def _spark_connect_missing():
    try:
        import grpc  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError:
        return "the Spark Connect client is not installed: pip install 'perdoc[spark]' (pyspark[connect])"
    return None


def _need(why):
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"Spark tests cannot run under CI: {why}")
        pytest.skip(why)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _estimate_with_remote(tmp_path, remote, timeout_env=None):
    data = tmp_path / "chunks.csv"
    _chunks().to_csv(data, index=False)
    env = {**os.environ, "SPARK_REMOTE": remote}
    env.pop("PYSPARK_REMOTE", None)
    if timeout_env is not None:
        env["PERDOC_SPARK_CONNECT_TIMEOUT"] = str(timeout_env)
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "perdoc.cli", "estimate", str(data), "--doc", "doc", "--score",
                          "hit", "--engine", "spark"], env=env, capture_output=True, text=True, timeout=180)
    return run, time.monotonic() - start


def test_spark_connect_with_nothing_listening_fails_fast(tmp_path):
    _need(_spark_connect_missing())
    port = _free_port()
    remote = f"sc://127.0.0.1:{port}/;token=TOK_SPARK_1;user_id=alice"
    run, took = _estimate_with_remote(tmp_path, remote)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"SPARK_REMOTE=sc://127.0.0.1:{port}/;token=***;user_id=***" in run.stderr
    assert remote not in run.stderr and "TOK_SPARK_1" not in run.stderr and "alice" not in run.stderr
    assert took < 60


class _Garbage:
    """A loopback server answering every connection with bytes that are not HTTP/2 (nor gRPC)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        deadline = time.monotonic() + 300   # never outlives the test by much
        while not self.stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.settimeout(1)
                    conn.sendall(b"HTTP/1.0 418 garbage\r\n\r\n\x00\xff garbage " * 8)
                    conn.recv(65536)
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


def test_spark_connect_answering_garbage_fails_within_the_deadline(tmp_path):
    _need(_spark_connect_missing())
    server = _Garbage()
    try:
        remote = f"sc://127.0.0.1:{server.port}/;token=TOK_SPARK_2;user_id=alice"
        run, took = _estimate_with_remote(tmp_path, remote, timeout_env=3)
    finally:
        server.close()
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"SPARK_REMOTE=sc://127.0.0.1:{server.port}/;token=***;user_id=***" in run.stderr
    assert "TOK_SPARK_2" not in run.stderr and "alice" not in run.stderr
    assert took < 90
