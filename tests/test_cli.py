"""The command line: JSON contract, agreement with the library and R, bad input -> one line, exit 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import perdoc
from perdoc.cli import main

ROOT = Path(__file__).resolve().parents[1]
ORACLE = ROOT / "tests" / "oracle"


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def chunks(tmp_path):
    p = tmp_path / "chunks.csv"
    rng = np.random.default_rng(0)
    rows = ["doc_id,hit"]
    for d in range(8):
        for _ in range(int(rng.integers(2, 30))):
            rows.append(f"d{d},{int(rng.random() < 0.1 + 0.1 * d)}")
    p.write_text("\n".join(rows) + "\n")
    return p


CONTRACT = [
    "K", "N", "level", "micro.estimate",
    *[f"micro.{m}.{k}" for m in ("cr1", "cr2", "cr3") for k in ("se", "df", "ci")],
    "micro.bootstrap_t.ci", "micro.bootstrap_t.replicates", "micro.bootstrap_t.degenerate_fraction",
    "micro.wald_iid.se", "micro.wald_iid.ci", "micro.wald_eff_n.se", "micro.wald_eff_n.ci",
    "macro.estimate", "macro.t.se", "macro.t.df", "macro.t.ci",
    "macro.bootstrap_t.ci", "macro.bootstrap_t.replicates", "macro.bootstrap_t.degenerate_fraction",
    *[f"diagnostics.{k}" for k in ("icc", "deff", "n_eff", "frac_rate_0", "frac_rate_1", "max_share")],
]


def dig(d, path):
    for k in path.split("."):
        d = d[k]
    return d


def test_json_contract_keys(capsys, chunks):
    code, out, err = run(capsys, "estimate", chunks, "--doc", "doc_id", "--score", "hit",
                         "--replicates", "200", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    for key in CONTRACT:
        dig(d, key)  # KeyError names the missing key
    assert d["K"] == 8 and d["level"] == 0.95
    assert len(d["micro"]["cr2"]["ci"]) == 2 and d["micro"]["bootstrap_t"]["replicates"] == 200


def test_json_equals_library(capsys, chunks):
    code, out, _ = run(capsys, "estimate", chunks, "--doc", "doc_id", "--score", "hit",
                       "--replicates", "300", "--seed", "4", "--level", "0.9", "--population-size", "50",
                       "--json")
    d = json.loads(out)
    lib = perdoc.estimate(perdoc.load_chunks(chunks, doc="doc_id", score="hit"), replicates=300, seed=4,
                          level=0.9, population_size=50).to_dict()
    d.pop("input")
    # the CLI adds the interval it leads with (perdoc.lead, as the report): the same library call
    est = perdoc.estimate(perdoc.load_chunks(chunks, doc="doc_id", score="hit"), replicates=300, seed=4, level=0.9,
                          population_size=50)
    assert d.pop("headlines") == json.loads(json.dumps({k: perdoc.lead(est, k).to_dict() for k in ("micro", "macro")}))
    assert d.pop("headline") == json.loads(json.dumps(perdoc.lead(est, "micro").to_dict()))
    assert d == json.loads(json.dumps(lib))


@pytest.mark.parametrize("case", ["article_like", "article_like_fpc", "continuous", "dominant", "k2"])
def test_cli_json_agrees_with_r(capsys, case):
    cases = json.loads((ORACLE / "cases.json").read_text())
    golden = json.loads((ORACLE / "golden.json").read_text())[case]
    c = cases[case]
    args = ["estimate", ORACLE / "data" / c["data"], "--doc", "doc", "--score", "y", "--replicates", "0",
            "--level", c["level"], "--json"]
    if c["population_size"] is not None:
        args += ["--population-size", c["population_size"]]
    code, out, _ = run(capsys, *args)
    assert code == 0
    d = json.loads(out)
    checked = 0
    for key, want in golden.items():
        if key.split(".")[0] not in ("micro", "macro", "diagnostics"):
            continue
        got = dig(d, key)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12, err_msg=f"{case}:{key}")
        checked += 1
    assert checked >= 20


def test_aggregated_input_gives_same_numbers(capsys, chunks, tmp_path):
    docs = tmp_path / "docs.parquet"
    code, out, _ = run(capsys, "estimate", chunks, "--doc", "doc_id", "--score", "hit", "--replicates", "100",
                       "--json", "--write-table", docs)
    a = json.loads(out)
    code, out, _ = run(capsys, "estimate", docs, "--doc", "doc_id", "--n", "n", "--s", "s", "--q", "q",
                       "--replicates", "100", "--json")
    b = json.loads(out)
    assert code == 0
    for k in ("micro", "macro", "diagnostics"):
        assert a[k] == b[k]


def test_human_table(capsys, chunks):
    code, out, err = run(capsys, "estimate", chunks, "--doc", "doc_id", "--score", "hit", "--replicates", "0")
    assert code == 0
    assert "micro mean" in out and "macro mean" in out and "cr2" in out and "baseline" in out


def test_degenerate_data_says_no_interval(capsys, tmp_path):
    p = tmp_path / "flat.csv"
    p.write_text("doc,y\na,1\na,0\nb,1\nb,0\nc,0\nc,1\n")
    code, out, _ = run(capsys, "estimate", p, "--doc", "doc", "--score", "y", "--replicates", "50", "--json")
    d = json.loads(out)
    assert code == 0
    assert d["micro"]["cr2"]["ci"] is None and "same rate" in d["micro"]["cr2"]["reason"]
    assert d["macro"]["t"]["ci"] is None
    code, out, _ = run(capsys, "estimate", p, "--doc", "doc", "--score", "y", "--replicates", "0")
    assert "no interval: zero variance" in out


def _write(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return p


BAD = [
    # (file name, content or None for missing, extra args, message regex)
    ("missing.csv", None, [], r"data file not found: .*missing\.csv"),
    ("bad.parquet", b"PAR1 this is not parquet", [], r"cannot read .*bad\.parquet as Parquet"),
    ("bad.jsonl", '{"doc_id": "a", "hit": 1}\n{"doc_id": "b", "hit": \n', [], r"line 2 is not valid JSON"),
    ("bad.csv", 'doc_id,hit\n"a,1\nb,0\n', [], r"cannot read .*bad\.csv as CSV"),
    ("ragged.csv", "doc_id,hit\na,1\nb,0,7\nc,1\n", [], r"line 3 has 3 field\(s\) but the header has 2"),
    ("empty.csv", "", [], r"empty: it has no data rows"),
    ("header.csv", "doc_id,hit\n", [], r"has no data rows"),
    ("one.csv", "doc_id,hit\na,1\na,0\n", [], r"the data have 1 document; need at least 2"),
    ("nodoc.csv", "doc_id,hit\na,1\n,0\nb,1\n", [], r"column 'doc_id' .*1 of 3 row\(s\) have no document id"),
    ("nan.csv", "doc_id,hit\na,1\nb,nan\nc,0\n", [], r"column 'hit' .*1 row\(s\) have a NaN score"),
    ("inf.csv", "doc_id,hit\na,1\nb,inf\nc,0\n", [], r"column 'hit' .*1 row\(s\) have an infinite score"),
    ("text.csv", "doc_id,hit\na,1\nb,yes\nc,0\n", [], r"column 'hit' .*non-numeric score \(e\.g\. 'yes'\)"),
    ("ok.csv", "doc_id,hit\na,1\nb,0\n", ["--level", "1.5"], r"level must be a number strictly between 0 and 1"),
    ("ok.csv", "doc_id,hit\na,1\nb,0\n", ["--replicates", "-5"], r"replicates must be a non-negative integer"),
    ("ok.csv", "doc_id,hit\na,1\nb,0\n", ["--population-size", "1"],
     r"population size M = 1 is below the number of sampled documents K = 2"),
    ("ok.csv", "doc_id,hit\na,1\nb,0\n", ["--level", "abc"], r"--level must be a number"),
]


@pytest.mark.parametrize("name, content, extra, message", BAD, ids=[f"{b[0]}{''.join(b[2])}" for b in BAD])
def test_bad_input(capsys, tmp_path, name, content, extra, message):
    path = tmp_path / name if content is None else _write(tmp_path, name, content)
    code, out, err = run(capsys, "estimate", path, "--doc", "doc_id", "--score", "hit", *extra)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert __import__("re").search(message, err), err


def test_misspelled_column_suggests(capsys, tmp_path):
    p = _write(tmp_path, "x.csv", "doc_id,score\na,1\nb,0\n")
    code, out, err = run(capsys, "estimate", p, "--doc", "doc_id", "--score", "scroe")
    assert code == 2 and out == ""
    assert "column 'scroe' not found" in err and "did you mean 'score'?" in err


def test_aggregated_n_not_positive(capsys, tmp_path):
    p = _write(tmp_path, "docs.csv", "doc,n_chunks,s\na,3,1\nb,0,0\nc,4,2\n")
    code, out, err = run(capsys, "estimate", p, "--doc", "doc", "--n", "n_chunks", "--s", "s")
    assert code == 2 and out == ""
    assert "column 'n_chunks'" in err and "n <= 0" in err


def test_console_script_no_traceback(tmp_path):
    exe = Path(sys.executable).with_name("perdoc")
    p = _write(tmp_path, "ragged.csv", "doc_id,hit\na,1\nb,0,7\n")
    r = subprocess.run([str(exe), "estimate", str(p), "--doc", "doc_id", "--score", "hit"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1
    r = subprocess.run([str(exe), "estimate"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_console_script_exits_at_once_with_its_whole_output(tmp_path, capsys):
    # estimate, compare and plan leave without tearing the interpreter down (perdoc.cli.console): what
    # they print still arrives whole, to a pipe and to a file, with the same status as main's, and
    # the other commands exit as usual
    exe = Path(sys.executable).with_name("perdoc")
    rows = "".join(f"d{d},{(d * 7 + c) % 3 == 0:d},{(d + c) % 2}\n" for d in range(400) for c in range(5))
    p = _write(tmp_path, "chunks.csv", "doc_id,hit,other\n" + rows)
    args = ["estimate", str(p), "--doc", "doc_id", "--score", "hit", "--replicates", "0", "--json"]
    code, want, _ = run(capsys, *args)
    r = subprocess.run([str(exe), *args], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (code, want) and code == 0 and json.loads(r.stdout)
    with open(tmp_path / "out.json", "w") as fh:
        r = subprocess.run([str(exe), *args], stdout=fh, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0 and (tmp_path / "out.json").read_text() == want
    args = ["compare", str(p), "--doc", "doc_id", "--score", "hit", "--vs", "other", "--replicates", "0"]
    code, want, _ = run(capsys, *args)
    r = subprocess.run([str(exe), *args], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (code, want) and code == 0 and want.strip()
    r = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("perdoc ")
    # the exit skips the interpreter's teardown (an atexit handler does not run) only for those commands
    probe = ("import atexit, sys; atexit.register(lambda: print('teardown', file=sys.stderr)); "
             "from perdoc.cli import console; sys.argv = ['perdoc', *sys.argv[1:]]; console()")
    quick = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)
    usual = subprocess.run([sys.executable, "-c", probe, "--version"], capture_output=True, text=True)
    assert quick.returncode == 0 and quick.stdout == want and "teardown" not in quick.stderr
    assert usual.returncode == 0 and "teardown" in usual.stderr


def test_only_the_command_lets_the_allocator_keep_freed_memory(tmp_path):
    # the perdoc command asks glibc's malloc to keep freed arrays for reuse once the aggregation is
    # fetched (perdoc._allocator); a program that imports perdoc keeps its allocator as it is
    rows = "".join(f"{d * 7},{(d + c) % 2}\n" for d in range(300) for c in range(3))
    p = _write(tmp_path, "chunks.csv", "doc_id,hit\n" + rows)
    args = ["estimate", str(p), "--doc", "doc_id", "--score", "hit", "--replicates", "0"]
    probe = ("import sys; from perdoc import _allocator as a; f = a.reuse_freed_memory; "
             "a.reuse_freed_memory = lambda: print('asked', f(), file=sys.stderr, flush=True) or True; "
             "from perdoc.cli import console; sys.argv = ['perdoc', *sys.argv[1:]]; console()")
    command = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True)
    glibc = sys.platform.startswith("linux") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    assert command.returncode == 0 and f"asked {glibc}" in command.stderr
    library = ("import sys; from perdoc import _allocator as a, load_chunks, estimate; "
               "estimate(load_chunks(sys.argv[1], doc='doc_id', score='hit'), replicates=0); "
               "print(a.ENABLED, a.reuse_freed_memory())")
    lib = subprocess.run([sys.executable, "-c", library, str(p)], capture_output=True, text=True)
    assert lib.returncode == 0 and lib.stdout.split() == ["False", "False"]


def test_estimate_with_params_file(capsys):
    params = ROOT / "params" / "stratified.yaml"
    code, out, err = run(capsys, "estimate", "--params", params, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["design"]["sampling"] == "stratified" and d["micro"]["design"]["df"] == d["K"] - 2
    assert set(d["design"]["strata"]) == {"large", "small"}
    code, out, err = run(capsys, "estimate", "--params", ROOT / "params" / "example.yaml", "--replicates", "0",
                         "--json")
    d = json.loads(out)
    assert code == 0 and d["population_size"] == 1300 and d["replicates"] == 0 and "cr2" in d["micro"]
    code, out, err = run(capsys, "estimate", "x.csv", "--params", params)
    assert code == 2 and "drop DATA" in err
