"""What the engine flags reaches the reader: a wild bootstrap set in several pieces, intervals that
leave the metric's range, the kind of metric and how it was decided (command line and report)."""

import json
from pathlib import Path

import pytest

from perdoc.cli import main
from perdoc.report.build import build_report

# one document with 60% of the chunks: the wild bootstrap's set of non-rejected values has two pieces
N_D = [88, 3, 2, 3, 2, 7, 11, 4, 5, 13, 9]
S_D = [53, 3, 0, 0, 0, 0, 3, 1, 3, 1, 0]


@pytest.fixture(scope="module", autouse=True)
def _one_kernel(shared_kernel):
    """The module's reports share one notebook kernel (tests/conftest.py)."""


@pytest.fixture
def split_table(tmp_path):
    p = tmp_path / "docs.csv"
    p.write_text("doc,n,s\n" + "".join(f"d{i:02d},{n},{s}\n" for i, (n, s) in enumerate(zip(N_D, S_D))))
    return p


def test_cli_text_shows_every_piece(capsys, split_table):
    assert main(["estimate", str(split_table), "--doc", "doc", "--n", "n", "--s", "s", "--replicates", "9999"]) == 0
    out = capsys.readouterr().out
    wild = [ln for ln in out.splitlines() if ln.strip().startswith("wild")]
    assert len(wild) == 1 and " U " in wild[0] and "not an interval" in wild[0]
    assert main(["estimate", str(split_table), "--doc", "doc", "--n", "n", "--s", "s", "--replicates", "9999",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["micro"]["wild"]
    shown = wild[0].split("  ")
    assert len(d["pieces"]) == 2 and d["connected"] is False
    for lo, hi in d["pieces"]:
        assert f"{lo:.4f}" in wild[0] and f"{hi:.4f}" in wild[0], (d["pieces"], shown)


def test_report_says_the_set_is_not_an_interval(tmp_path, split_table):
    params = tmp_path / "split.yaml"
    params.write_text(f"name: split\ndata: {{path: {split_table.name}, doc: doc, n: n, s: s}}\n"
                      "design: {population: eleven documents}\nestimand: {kind: micro, why: chunks count}\n"
                      "intervals: {replicates: 9999, seed: 1}\n")
    html = build_report(params, tmp_path / "out").read_text()
    s = json.loads((tmp_path / "out" / "split" / "summary.json").read_text())
    pieces = s["micro"]["wild"]["pieces"]
    assert len(pieces) == 2
    assert "is not an interval; it has 2 pieces" in html
    for lo, hi in pieces:
        assert f"[{lo:.4f}, {hi:.4f}]" in html


def test_out_of_range_is_flagged_next_to_the_number(tmp_path, capsys):
    # a 0/1 metric with few hits: the symmetric intervals reach below 0
    data = tmp_path / "rare.csv"
    rows = []
    for d in range(12):
        n = 3 + (d * 7) % 11
        hits = 1 if d in (0, 5) else 0
        rows += [f"d{d:02d},{int(i < hits)}\n" for i in range(n)]
    data.write_text("doc,hit\n" + "".join(rows))
    assert main(["estimate", str(data), "--doc", "doc", "--score", "hit", "--replicates", "999", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    flagged = [m for m, v in d["micro"].items() if isinstance(v, dict) and v.get("out_of_range")]
    assert "cr2" in flagged
    assert all(v["ci"][0] < 0 or v["ci"][1] > 1 for m, v in d["micro"].items()
               if isinstance(v, dict) and v.get("out_of_range"))
    assert not d["micro"]["korn_graubard"]["out_of_range"]
    assert main(["estimate", str(data), "--doc", "doc", "--score", "hit", "--replicates", "999"]) == 0
    out = capsys.readouterr().out
    cr2 = [ln for ln in out.splitlines() if ln.strip().startswith("cr2 ")][0]
    assert "OUT OF RANGE [0, 1]" in cr2
    params = tmp_path / "rare.yaml"
    params.write_text("name: rare\ndata: {path: rare.csv, doc: doc, score: hit}\n"
                      "design: {population: twelve documents}\nestimand: {kind: micro, why: chunks count}\n"
                      "intervals: {replicates: 199, seed: 1}\n")
    html = build_report(params, tmp_path / "out").read_text()
    assert "OUT OF RANGE" in html and "Leave the range [0, 1]" in html
    assert "binary, inferred from the data" in html
