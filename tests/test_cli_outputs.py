"""An output path never destroys the command's inputs, and a command that fails writes nothing."""

from __future__ import annotations

import pytest

from perdoc.cli import main


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "results.csv"
    data.write_text("doc,hit\nd1,1\nd1,0\nd2,1\nd3,0\nd4,1\n")
    frame = tmp_path / "frame.csv"
    frame.write_text("doc,n\nd1,2\nd2,1\nd3,3\nd4,1\nd5,2\nd6,1\n")
    census = tmp_path / "census.csv"
    census.write_text("doc,hit\nd1,1\nd1,0\nd2,1\nd3,0\nd3,1\nd3,1\nd4,0\nd5,1\nd5,1\nd6,0\n")
    return tmp_path, data, frame, census


def _one_line(capsys, *words):
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "Traceback" not in "\n".join(err)
    assert all(w in err[-1] for w in words), err[-1]


def test_write_table_onto_the_data_is_refused(files, capsys):
    tmp, data, frame, _ = files
    before = data.read_bytes()
    assert main(["estimate", str(data), "--doc", "doc", "--score", "hit", "--replicates", "0",
                 "--write-table", str(data)]) == 2
    _one_line(capsys, "--write-table", "is also an input")
    assert data.read_bytes() == before
    # the frame too, and through another spelling of the same path
    other = tmp / "." / frame.name
    assert main(["estimate", str(data), "--doc", "doc", "--score", "hit", "--replicates", "0",
                 "--frame", str(frame), "--write-table", str(other)]) == 2
    _one_line(capsys, "--write-table", "is also an input")
    assert frame.read_text().startswith("doc,n\n")


def test_write_table_of_a_params_study_is_refused_onto_its_data_and_not_written_when_it_fails(files, capsys):
    tmp, data, _, census = files
    params = tmp / "study.yaml"
    params.write_text("name: tiny\ndata: {path: results.csv, doc: doc, score: hit}\n"
                      "design: {population: six docs, sampling: srs}\nestimand: {kind: micro, why: chunks}\n"
                      "intervals: {level: 0.95, replicates: 0, seed: 1}\n")
    before = data.read_bytes()
    assert main(["estimate", "--params", str(params), "--write-table", str(data)]) == 2
    _one_line(capsys, "--write-table", "is also an input")
    assert data.read_bytes() == before
    # a census simulation that fails (k above the census's documents): no table is left behind
    params.write_text(params.read_text() + "census: {path: census.csv}\n"
                      "simulation: {reps: 20, seed: 1, replicates: 0, k: 100}\n")
    table = tmp / "docs.csv"
    assert main(["estimate", "--params", str(params), "--write-table", str(table)]) == 2
    _one_line(capsys, "k = 100")
    assert not table.exists()


def test_sample_out_onto_its_frame_or_beside_a_folder_is_refused(files, capsys):
    tmp, _, frame, _ = files
    before = frame.read_bytes()
    args = ["sample", "--frame", str(frame), "--doc", "doc", "--k", "2", "--design", "srs", "--seed", "1"]
    assert main([*args, "--out", str(frame)]) == 2
    _one_line(capsys, "--out", "is also an input")
    assert frame.read_bytes() == before
    # the record written beside the manifest (frame.json for --out frame.csv) is checked too
    framej = tmp / "f.json"
    framej.write_bytes(before)
    assert main([*args[:2], str(framej), *args[3:], "--out", str(tmp / "f.csv")]) == 2
    _one_line(capsys, "its record", "is also an input")
    assert framej.read_bytes() == before and not (tmp / "f.csv").exists()
    # a folder where the record goes: nothing is written, not even the manifest
    (tmp / "m.json").mkdir()
    assert main([*args, "--out", str(tmp / "m.csv")]) == 2
    _one_line(capsys, "is a folder")
    assert not (tmp / "m.csv").exists()


def test_report_with_a_params_file_that_does_not_read_creates_no_folder(tmp_path, capsys):
    """A params file that is missing or is not YAML writes nothing, not even the --out folders (they
    were created before the file was read); one that reads but breaks the schema gets its error page."""
    out = tmp_path / "reports" / "a" / "b"
    assert main(["report", str(tmp_path / "nope.yaml"), "--out", str(out)]) == 2
    _one_line(capsys, "params file not found")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n  bad: [\n")
    assert main(["report", str(bad), "--out", str(out)]) == 2
    _one_line(capsys, "not valid YAML")
    assert not (tmp_path / "reports").exists()
    schema = tmp_path / "schema.yaml"
    schema.write_text("name: broken\ndata: {path: results.csv}\n")
    assert main(["report", str(schema), "--out", str(out)]) == 2
    capsys.readouterr()
    assert (out / "broken" / "error.txt").is_file()


@pytest.mark.parametrize("argv, flags", [
    (["compare", "{data}", "--doc", "doc", "--score", "hit", "--vs", "hit"], "--score and --vs"),
    (["estimate", "{data}", "--doc", "hit", "--score", "hit"], "--doc and --score"),
    (["simulate", "--census", "{data}", "--doc", "doc", "--score", "doc", "--k", "2"], "--doc and --score"),
])
def test_two_column_flags_naming_one_column_are_named_as_flags(files, capsys, argv, flags):
    """The loaders' own message named their arguments ("a and b both name column ..."), which the
    command line does not have: the command names its flags."""
    _, data, _, _ = files
    assert main([a.format(data=data) for a in argv]) == 2
    _one_line(capsys, f"{flags} both name column")


def test_write_table_checks_the_params_frame_where_the_params_file_puts_it(tmp_path, capsys):
    """design.frame is relative to the params file's folder, not to the command's: the frame there is
    refused as an output, a file of the same name here is not."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    (there / "data.csv").write_text("doc,hit\nd1,1\nd1,0\nd2,1\nd3,0\n")
    (there / "sizes.csv").write_text("doc,n\nd1,2\nd2,1\nd3,1\nd4,5\n")
    (here / "sizes.csv").write_text("unrelated\n")
    params = there / "p.yaml"
    params.write_text("name: t\ndata: {path: data.csv, doc: doc, score: hit}\n"
                      "design: {population: x, sampling: srs, frame: sizes.csv}\n"
                      "estimand: {kind: micro, why: chunks}\nintervals: {replicates: 0}\n")
    import os
    old = os.getcwd()
    os.chdir(here)
    try:
        frame = (there / "sizes.csv").read_bytes()
        assert main(["estimate", "--params", str(params), "--write-table", str(there / "sizes.csv"),
                     "--skip-simulation"]) == 2
        _one_line(capsys, "is also an input")
        assert (there / "sizes.csv").read_bytes() == frame
        assert main(["estimate", "--params", str(params), "--write-table", "sizes.csv", "--skip-simulation"]) == 0
        assert (here / "sizes.csv").read_text().startswith("doc,n,s,q")
    finally:
        os.chdir(old)


def test_report_of_a_params_file_with_a_key_given_twice_gets_its_error_page(tmp_path, capsys):
    """A file refused for a key given twice still reads as YAML: its name gets the error page, so an
    older report of that name does not stand in for it."""
    p = tmp_path / "dup.yaml"
    p.write_text("name: dupname\ndata: {path: a.csv}\nestimand: {kind: micro, why: a}\n"
                 "estimand: {kind: macro, why: b}\n")
    out = tmp_path / "reports"
    assert main(["report", str(p), "--out", str(out)]) == 2
    _one_line(capsys, "is given twice")
    assert "is given twice" in (out / "dupname" / "error.txt").read_text()
