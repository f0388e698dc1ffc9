"""perdoc.adapters under hostile input (security review, issue 15): every resource use is bounded and
every refusal is one line, a perdoc error naming the file (and the member, field or line) and the
rule, never a traceback.

* inspect logs: a zip member's uncompressed size is capped (checked from the zip header and again
  while decompressing, since headers can lie), so are nesting depth and one sample of a .json log;
  overlapping zip members (a zip bomb) are refused; a log is read in linear time, straight from its
  zip members, with the same samples inspect_ai's own reader gives;
* deeply nested JSON / JSON Lines given to --format deepeval|lm-eval|ragas: one line, as the plain
  loader gives;
* TREC: a query-document pair judged twice with different grades, a document ranked twice with
  different scores, a score that is NaN, infinite or not a number: refused with the file and line.

Hostile inputs are built in tmp_path; each fast test takes well under a few seconds.
"""

from __future__ import annotations

import json
import math
import random
import struct
import sys
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from perdoc import adapters
from perdoc.adapters import _core, inspect_log
from perdoc.cli import main
from perdoc.errors import DataFileError, InputError, PerdocError

F = Path(__file__).resolve().parent / "fixtures" / "frameworks"
DEEP = "[" * 100_000 + "]" * 100_000   # 200 KB nested 10^5 deep


@pytest.fixture
def inspect_ai():   # the log API imported here, so that no timed call pays for its import
    return pytest.importorskip("inspect_ai.log", reason="needs inspect-ai: pip install inspect-ai (perdoc[frameworks])")


@pytest.fixture
def ir_measures():
    return pytest.importorskip("ir_measures", reason="needs ir-measures: pip install ir-measures (perdoc[frameworks])")


def _one_line(err: BaseException) -> str:
    text = str(err)
    assert isinstance(err, PerdocError) and "\n" not in text and "Traceback" not in text, text
    return text


# ----------------------------------------------------------------------------------- building .eval logs
def _header(sample_ids, epochs=1) -> dict:
    raw = json.loads((F / "inspect.json").read_text())
    head = {k: v for k, v in raw.items() if k != "samples"}
    head["eval"]["dataset"]["sample_ids"] = sample_ids
    head["eval"]["config"]["epochs"] = epochs
    return head


def _sample(sid, epoch=1, doc="docA", match="C", **extra) -> dict:
    return {"id": sid, "epoch": epoch, "input": f"question {sid}", "target": "x", "messages": [],
            "output": {"model": "", "choices": [], "completion": ""},
            "scores": {"match": {"value": match, "answer": "x", "history": []}},
            "metadata": {"source_doc": doc}, "store": {}, "events": [], **extra}


def _write_eval(path: Path, members: dict, compression=zipfile.ZIP_DEFLATED) -> Path:
    """An .eval log (a zip) with these members (name -> JSON-able object, str or bytes), in order."""
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, body in members.items():
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            zf.writestr(name, data)
    return path


def _patch(path: Path, name: str, local: dict, central: dict) -> None:
    """Overwrite 4-byte fields of member ``name``'s local header and central directory entry (offset
    in the record -> value): the lies a crafted file tells."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info, pos = zf.getinfo(name), zf.start_dir
    for at, value in local.items():
        struct.pack_into("<I", data, info.header_offset + at, value)
    while data[pos:pos + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        if data[pos + 46:pos + 46 + n].decode() == name:
            for at, value in central.items():
                struct.pack_into("<I", data, pos + at, value)
        pos += 46 + n + m + k
    path.write_bytes(bytes(data))


def _patch_sizes(path: Path, name: str, size: int, offset_of: str | None = None) -> None:
    """Declare another uncompressed size for member ``name``, or point its directory entry at member
    ``offset_of``'s data."""
    central = {24: size}
    if offset_of:
        with zipfile.ZipFile(path) as zf:
            central[42] = zf.getinfo(offset_of).header_offset
    _patch(path, name, {22: size}, central)


def _small_log(tmp_path, name="log.eval", **sample_extra) -> Path:
    return _write_eval(tmp_path / name, {"header.json": _header(["s1", "s2"]),
                                         "samples/s1_epoch_1.json": _sample("s1", **sample_extra),
                                         "samples/s2_epoch_1.json": _sample("s2", doc="docB", match="I")})


# ----------------------------------------------------------------------------- 1. sizes, depth, zip bombs
def test_eval_member_declared_over_the_cap_is_refused_from_its_header(inspect_ai, tmp_path):
    """A sample member declaring 3 x 10^8 bytes (a 10^8-character string took 123 s and 365 MB): refused
    before a byte of it is decompressed."""
    path = _small_log(tmp_path)
    _patch_sizes(path, "samples/s1_epoch_1.json", 3 * 10**8)
    t = time.perf_counter()
    with pytest.raises(DataFileError) as err:
        adapters.read(path, "inspect", ["metadata.source_doc", "match"])
    assert time.perf_counter() - t < 2.0
    text = _one_line(err.value)
    assert str(path) in text and "samples/s1_epoch_1.json" in text and "286.1 MiB" in text and "256 MiB" in text


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, "zstd"])
def test_eval_member_whose_header_lies_is_refused_while_decompressing(inspect_ai, tmp_path, method):
    """The header says 1,000 bytes, the data inflate to 20 MB: decompression stops past 1,000 bytes."""
    import tracemalloc
    if method == "zstd":
        from inspect_ai._util.zipfile import zipfile_compress_kwargs
        method = zipfile_compress_kwargs["compression"]
    body = json.dumps(_sample("s1", input="a" * 20_000_000))
    path = _write_eval(tmp_path / "lie.eval", {"header.json": _header(["s1"]), "samples/s1_epoch_1.json": body},
                       compression=method)
    _patch_sizes(path, "samples/s1_epoch_1.json", 1000)
    tracemalloc.start()
    try:
        with pytest.raises(DataFileError) as err:
            adapters.read(path, "inspect", ["metadata.source_doc", "match"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    text = _one_line(err.value)
    assert "samples/s1_epoch_1.json" in text and "1000 bytes its zip header declares" in text and "corrupt" in text
    assert peak < 5 * 2**20   # never the 20 MB


def test_zstd_frame_declaring_another_size_is_refused_before_decompressing(inspect_ai, tmp_path):
    import zstandard
    from inspect_ai._util.zipfile import zipfile_compress_kwargs
    noise = random.Random(1).randbytes(600).hex()   # incompressible: room for the frame swapped in below
    path = _write_eval(tmp_path / "frame.eval", {"header.json": _header(["s1"]),
                                                 "samples/s1_epoch_1.json": _sample("s1", noise=noise)},
                       compression=zipfile_compress_kwargs["compression"])
    # swap in a frame that states its content size (10 MB of 'a') behind the header's 1,000 bytes
    frame = zstandard.ZstdCompressor(write_content_size=True).compress(b"a" * 10_000_000)
    data = path.read_bytes()
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("samples/s1_epoch_1.json")
    n, m = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + n + m
    assert len(frame) <= info.compress_size
    data = data[:start] + frame + b"\0" * (info.compress_size - len(frame)) + data[start + info.compress_size:]
    path.write_bytes(data)
    _patch_sizes(path, "samples/s1_epoch_1.json", 1000)
    with pytest.raises(DataFileError, match=r"says 10000000 bytes in its zstd frame and 1000 in its zip header"):
        adapters.read(path, "inspect", ["metadata.source_doc", "match"])


def test_overlapping_zip_members_are_refused(inspect_ai, tmp_path):
    """Many directory entries pointing at one compressed block (an 'overlapping files' zip bomb)."""
    path = _small_log(tmp_path)
    _patch_sizes(path, "samples/s2_epoch_1.json", len(json.dumps(_sample("s1"))), offset_of="samples/s1_epoch_1.json")
    with pytest.raises(DataFileError) as err:
        adapters.read(path, "inspect", ["metadata.source_doc", "match"])
    assert "overlap" in _one_line(err.value) and str(path) in str(err.value)


def test_member_cap_also_holds_for_methods_read_through_zipfile(inspect_ai, tmp_path, monkeypatch):
    """bzip2 members go through zipfile: same cap, read in bounded pieces; honest ones read as before."""
    ok = _write_eval(tmp_path / "bz.eval", {"header.json": _header(["s1", "s2"]),
                                            "samples/s1_epoch_1.json": _sample("s1", pad="p" * 5000),
                                            "samples/s2_epoch_1.json": _sample("s2", doc="docB", match="I")},
                     compression=zipfile.ZIP_BZIP2)
    df = adapters.read(ok, "inspect", ["metadata.source_doc", "match"])[0]
    assert df.values.tolist() == [["docA", 1.0], ["docB", 0.0]]
    monkeypatch.setattr(inspect_log, "MAX_MEMBER_BYTES", 4000)
    with pytest.raises(DataFileError, match=r"member samples/s1_epoch_1.json is 5,\d\d\d bytes uncompressed, over "
                                            r"perdoc's limit of 4,000 bytes for one member"):
        adapters.read(ok, "inspect", ["metadata.source_doc", "match"])


@pytest.mark.parametrize("where", ["sample", "header"])
def test_eval_member_nested_too_deep_is_refused(inspect_ai, tmp_path, where):
    if where == "sample":
        members = {"header.json": _header(["s1"]), "samples/s1_epoch_1.json": json.dumps(_sample("s1"))[:-1] +
                   ', "deep": ' + DEEP + "}"}
    else:
        head = json.dumps(_header(["s1"]))
        members = {"header.json": head[:-1] + ', "metadata2": ' + DEEP + "}", "samples/s1_epoch_1.json": _sample("s1")}
    path = _write_eval(tmp_path / "deep.eval", members)
    t = time.perf_counter()
    with pytest.raises(DataFileError) as err:
        adapters.read(path, "inspect", ["metadata.source_doc", "match"])
    assert time.perf_counter() - t < 2.0
    text = _one_line(err.value)
    assert "more than 128 levels deep" in text and ("header.json" in text or "samples/s1_epoch_1.json" in text)


@pytest.mark.parametrize("without_inspect", [False, True])
def test_json_log_nested_deep_is_refused_fast(tmp_path, monkeypatch, without_inspect):
    """A 200 KB .json log nested 10^5 deep took 76 s and 10.6 GB inside inspect's reader."""
    if without_inspect:
        monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    else:
        pytest.importorskip("inspect_ai.log")
    raw = json.loads((F / "inspect.json").read_text())
    text = json.dumps(raw, indent=1)
    text = text.replace('"topic": "t"', '"topic": ' + DEEP, 1)
    path = tmp_path / "deep.json"
    path.write_text(text)
    t = time.perf_counter()
    with pytest.raises(DataFileError) as err:
        adapters.read(path, "inspect", ["metadata.source_doc", "match"])
    assert time.perf_counter() - t < 2.0
    msg = _one_line(err.value)
    line = 1 + text[:text.index(DEEP)].count("\n")
    assert str(path) in msg and f"line {line} nests JSON more than 128 levels deep" in msg


def test_json_log_sample_over_the_cap_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(inspect_log, "MAX_MEMBER_BYTES", 2**20)
    raw = json.loads((F / "inspect.json").read_text())
    raw["samples"][3]["metadata"]["topic"] = "x" * (2 * 2**20)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(raw, indent=1))
    with pytest.raises(DataFileError) as err:
        adapters.read(path, "inspect", ["metadata.source_doc", "match"])
    assert "over 1 MiB, perdoc's limit for one record" in _one_line(err.value) and "big.json" in str(err.value)


@pytest.mark.parametrize("without_inspect", [False, True])
def test_json_log_read_in_a_stream_gives_the_same_rows(tmp_path, monkeypatch, without_inspect):
    """A .json log whose samples outgrow the read block (1 MiB), with NaN, escapes and non-ASCII: the
    same rows as the fixture gives (the stream parses what json.load parses)."""
    if without_inspect:
        monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    else:
        pytest.importorskip("inspect_ai.log")
    fields = ["id", "epoch", "metadata.source_doc", "f1"]
    want = adapters.read(F / "inspect.json", "inspect", fields)
    raw = json.loads((F / "inspect.json").read_text())
    for i, s in enumerate(raw["samples"]):
        s["store"] = {"blob": "é\"\\[{" * (300_000 if i % 5 == 0 else 3), "nan": float("nan"), "n": 1e300}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(raw, indent=None if without_inspect else 2, ensure_ascii=False), encoding="utf-8")
    assert path.stat().st_size > 3 * 2**20
    got = adapters.read(path, "inspect", fields)
    pd.testing.assert_frame_equal(got[0], want[0])
    assert got[1] == want[1] and got[2] == [n.replace("inspect.json", "big.json") for n in want[2]]


def test_broken_logs_are_one_line(inspect_ai, tmp_path):
    cases = {
        "notzip.eval": b"PK\x03\x04 not really a zip",
        "empty.eval": b"",
        "trunc.json": b'{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": [{"id": 1, ',
        "samples_not_list.json": b'{"version": 2, "eval": {}, "samples": 3}',
        "sample_not_object.json": json.dumps({**_header(["s1"]), "samples": [1]}).encode(),
        "list.json": b"[1, 2]",
        "latin1.json": '{"version": 2, "eval": {"task": "\xe9"}}'.encode("latin-1"),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(DataFileError) as err:
            adapters.read(tmp_path / name, "inspect", ["metadata.source_doc", "match"])
        assert name in _one_line(err.value), name
    no_header = _write_eval(tmp_path / "nohead.eval", {"samples/s1_epoch_1.json": _sample("s1")})
    with pytest.raises(DataFileError, match="neither header.json nor _journal/start.json"):
        adapters.read(no_header, "inspect", ["metadata.source_doc", "match"])
    not_object = _write_eval(tmp_path / "list.eval", {"header.json": _header(["s1"]), "samples/s1_epoch_1.json": [1]})
    with pytest.raises(DataFileError, match="member samples/s1_epoch_1.json is not a JSON object"):
        adapters.read(not_object, "inspect", ["metadata.source_doc", "match"])
    crc = _small_log(tmp_path, name="crc.eval")
    with zipfile.ZipFile(crc) as zf:
        info = zf.getinfo("samples/s1_epoch_1.json")
    _patch(crc, "samples/s1_epoch_1.json", {14: info.CRC ^ 1}, {16: info.CRC ^ 1})
    with pytest.raises(DataFileError, match="fails its CRC-32 check"):
        adapters.read(crc, "inspect", ["metadata.source_doc", "match"])


@pytest.mark.parametrize("without_inspect", [False, True])
def test_fields_of_the_wrong_type_are_one_line(tmp_path, monkeypatch, without_inspect):
    """Siblings: a hand-made log or export whose fields have unexpected JSON types ended in an
    AttributeError or TypeError traceback (a string 'error', a list 'scores', a list id, mixed epochs,
    a number for lm-eval's 'metrics' or DeepEval's 'metrics_data')."""
    if without_inspect:
        monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    else:
        pytest.importorskip("inspect_ai.log")
    base = json.loads((F / "inspect.json").read_text())
    for field, value in (("error", "RuntimeError: boom"), ("scores", [1, 2]), ("id", ["s1"]), ("epoch", "2")):
        raw = json.loads(json.dumps(base))
        raw["samples"][2][field] = value
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps(raw))
        with pytest.raises(DataFileError) as err:
            adapters.read(path, "inspect", ["metadata.source_doc", "match"])
        assert "sample 3 has" in _one_line(err.value) and path.name in str(err.value)
    lm = tmp_path / "lm.jsonl"
    lm.write_text(json.dumps({"doc_id": 0, "doc": {"source_id": "d1"}, "metrics": 5, "acc": True}) + "\n")
    assert adapters.read(lm, "lm-eval", ["doc.source_id", "acc"])[0].values.tolist() == [["d1", 1.0]]
    de = tmp_path / "de.json"
    cases = [{"name": "a", "metrics_data": 7, "doc": "d"},
             {"name": "b", "metrics_data": [{"name": "M", "score": 0.5}], "doc": "d"}]
    de.write_text(json.dumps({"test_results": cases}))
    df, excl, _ = adapters.read(de, "deepeval", ["doc", "M"])
    assert df.values.tolist() == [["d", 0.5]] and [e.rows for e in excl] == [1]


# ------------------------------------------------------------------------ 2. linear reading, same samples
def _many(tmp_path, n: int) -> tuple[Path, list, dict]:
    """n sample ids x 2 epochs, ids shuffled in the header, int and str ids, a few samples absent, one
    sample re-logged (its last member wins), one not in the header's ids, a legacy 'score', errors,
    mapping-valued and numeric scores. Also returns the members' JSON (the last of a name)."""
    rng = random.Random(15)
    ids = [i if i % 3 else f"q{i}" for i in range(n)]
    rng.shuffle(ids)
    members = {"header.json": _header(ids, epochs=2)}
    for k, sid in enumerate(ids):
        for epoch in (1, 2):
            if (k + epoch) % 97 == 0:
                continue   # never written
            s = _sample(sid, epoch, doc=f"doc{k % 50}", match="CIPN"[(k + epoch) % 4])
            s["scores"]["acc"] = {"value": {"a": (k % 7) / 7, "b": "C"}}
            s["metadata"]["k"] = {"nested": [k, {"deeper": epoch}]}
            if k % 101 == 0:
                s["error"] = {"message": f"RuntimeError: sample {k}", "traceback": "tb", "traceback_ansi": "tb"}
                s.pop("scores")
            if k % 211 == 0:
                s["score"] = s.pop("scores", {}).get("match", {"value": "C"})
            members[f"samples/{sid}_epoch_{epoch}.json"] = s
    members["samples/extra_epoch_1.json"] = _sample("extra")
    path = _write_eval(tmp_path / "many.eval", members)
    first = f"samples/{ids[1]}_epoch_1.json"
    members[first] = _sample(ids[1], 1, doc="relogged", match="C")
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as zf:   # re-logged: the later entry wins
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # zipfile warns about the repeated name
            zf.writestr(first, json.dumps(members[first]))
    return path, ids, members


def test_eval_log_read_directly_gives_what_inspect_gives(inspect_ai, tmp_path):
    """200 ids x 2 epochs: the kept fields of every sample equal what inspect_ai's own reader gives
    (read_eval_log, then model_dump), in the order its streaming reader yielded them (header ids x
    epochs), a re-logged sample's last member, the samples the header does not list left out."""
    from inspect_ai.log import read_eval_log
    path, ids, _ = _many(tmp_path, 200)
    got, head = inspect_log._samples(str(path), ["input", "target"])
    log = read_eval_log(str(path))
    by_key = {(str(s.id), s.epoch): s for s in log.samples}
    want = [by_key[(str(sid), e)].model_dump(mode="json", include=set(inspect_log.KEEP))
            for sid in ids for e in (1, 2) if (str(sid), e) in by_key]
    assert len(got) == len(want) == 2 * 200 - sum((k + e) % 97 == 0 for k in range(200) for e in (1, 2))
    assert got == want and any(s["metadata"]["source_doc"] == "relogged" for s in got)
    assert head["status"] == log.status and head["epochs"] == 2 and head["task"] == log.eval.task


def test_a_few_thousand_samples_read_fast_and_as_inspect_validates_them(inspect_ai, tmp_path):
    """1,500 ids x 2 epochs: every sample as inspect_ai's EvalSample model gives it, in under a few
    seconds (inspect's streaming reader took 21 s for 2,000 samples, 218 s for 8,000)."""
    from inspect_ai._util.constants import get_deserializing_context
    from inspect_ai.log import EvalSample
    path, ids, members = _many(tmp_path, 1500)
    t = time.perf_counter()
    got, head = inspect_log._samples(str(path), ["input", "target"])
    elapsed = time.perf_counter() - t
    names = [f"samples/{sid}_epoch_{e}.json" for sid in ids for e in (1, 2)]
    want = [EvalSample.model_validate(members[n], context=get_deserializing_context()).model_dump(
        mode="json", include=set(inspect_log.KEEP)) for n in names if n in members]
    assert got == want and len(got) > 2900
    assert elapsed < 10.0, elapsed   # about 1 s; 3,000 samples took inspect's streaming reader ~50 s

    df, excl, notes = adapters.read(path, "inspect", ["metadata.source_doc", "match", "acc.a"])
    assert sum(e.rows for e in excl) + len(df) == len(want)
    assert any(e.reason.startswith("sample errored in inspect_ai (e.g. RuntimeError: sample") for e in excl)
    assert notes[0].endswith(f"{len(ids)} sample(s) x 2 epoch(s), {len(want)} sample-epoch record(s)")


def test_eval_log_without_sample_ids_is_sorted_as_inspect_sorts(inspect_ai, tmp_path):
    from inspect_ai.log import read_eval_log
    members = {"header.json": _header(None, epochs=2)}
    for sid in [10, "b", 2, "a", 1]:
        for epoch in (2, 1):
            members[f"samples/{sid}_epoch_{epoch}.json"] = _sample(sid, epoch)
    path = _write_eval(tmp_path / "noids.eval", members)
    got = [(s["id"], s["epoch"]) for s in inspect_log._samples(str(path))[0]]
    assert got == [(s.id, s.epoch) for s in read_eval_log(str(path)).samples]


@pytest.mark.slow
def test_eval_log_read_time_grows_linearly(inspect_ai, tmp_path):
    """20,000 samples take about 10x what 2,000 take (inspect's streaming reader: 2,000 in 21 s,
    8,000 in 218 s). Best of three each, to ride out other processes."""
    def timed(n):
        path = _write_eval(tmp_path / f"n{n}.eval", {"header.json": _header([f"s{i}" for i in range(n)]),
                                                     **{f"samples/s{i}_epoch_1.json": _sample(f"s{i}", doc=f"d{i % 50}")
                                                        for i in range(n)}})
        best = math.inf
        for _ in range(3):
            t = time.perf_counter()
            assert len(adapters.read(path, "inspect", ["metadata.source_doc", "match"])[0]) == n
            best = min(best, time.perf_counter() - t)
        return best

    small, large = timed(2000), timed(20000)
    assert large / small < 20, (small, large)   # quadratic would be ~100


# ------------------------------------------------------------------------- 3. deep JSON, every adapter
def _deep_files(tmp_path) -> dict:
    files = {
        "deep.json": '[{"doc": "a", "s": 1, "x": ' + DEEP + "}]",
        "deep_obj.json": '{"test_results": [{"doc": "a", "s": 1, "x": ' + DEEP + "}]}",
        "deep.jsonl": '{"doc": "a", "s": 1}\n\n{"doc": "b", "s": 0, "x": ' + DEEP + "}\n",
        "deep_first.jsonl": '{"doc": "b", "s": 0, "x": ' + DEEP + '}\n{"doc": "a", "s": 1}\n',
        "deep_pretty.json": '[\n {"doc": "a",\n  "s": 1,\n  "x": ' + DEEP + "}\n]",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return files


@pytest.mark.parametrize("fmt", ["lm-eval", "ragas", "deepeval"])
def test_deep_json_is_one_line_for_every_adapter(tmp_path, fmt):
    """A RecursionError traceback before; now the plain loader's rule (DuckDB's 128 levels), one line
    naming the file and the line."""
    lines = {"deep.json": 1, "deep_obj.json": 1, "deep.jsonl": 3, "deep_first.jsonl": 1, "deep_pretty.json": 4}
    for name in _deep_files(tmp_path):
        t = time.perf_counter()
        with pytest.raises(DataFileError) as err:
            adapters.read(tmp_path / name, fmt, ["doc", "s"])
        assert time.perf_counter() - t < 2.0
        text = _one_line(err.value)
        assert name in text and f"line {lines[name]} nests JSON more than 128 levels deep" in text, text


def test_deep_json_through_the_cli_is_one_line(tmp_path, capsys):
    _deep_files(tmp_path)
    for fmt in ("deepeval", "lm-eval", "ragas"):
        code = main(["estimate", str(tmp_path / "deep.json"), "--format", fmt, "--doc", "doc", "--score", "s"])
        err = capsys.readouterr().err.strip()
        assert code != 0 and len(err.splitlines()) == 1 and "Traceback" not in err
        assert "more than 128 levels deep" in err


def test_depth_limit_is_the_plain_loaders(tmp_path):
    """129 nested brackets pass, 130 are refused: where DuckDB's JSON reader (the plain loader) stops."""
    import perdoc
    for k, ok in ((127, True), (128, False)):   # plus the list and the record around them
        text = '[{"doc": "a", "s": 1, "x": ' + "[" * k + "]" * k + '}, {"doc": "b", "s": 0}]'
        path = tmp_path / f"d{k}.json"
        path.write_text(text)
        outcomes = []
        for load in (lambda: perdoc.load_chunks(path, doc="doc", score="s"),
                     lambda: adapters.read(path, "ragas", ["doc", "s"])):
            try:
                load()
                outcomes.append(True)
            except DataFileError as e:
                assert "depth" in str(e) or "levels deep" in str(e)
                outcomes.append(False)
        assert outcomes == [ok, ok], k


def test_depth_scan_matches_the_parsed_depth_in_any_pieces():
    """Brackets in strings, escaped quotes and backslashes, pieces cut anywhere (even inside an escape)."""
    rng = random.Random(7)

    def build(d):
        if d == 0 or rng.random() < 0.2:
            return rng.choice(["x", 'q"[{', "\\", "\\\"]}", 1.5, None, "é[", "\\u005b"])
        if rng.random() < 0.5:
            return [build(d - 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(["a", "[", '"{', "\\"]) + str(i): build(d - 1) for i in range(rng.randint(0, 3))}

    def depth(v):
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    for _ in range(300):
        value = build(rng.randint(1, 9))
        data = json.dumps(value, indent=rng.choice([None, 1])).encode()
        d = depth(value)
        for limit in (max(d - 2, 0), d - 1):   # DepthScan's limit counts the outermost level as 0
            cuts = sorted(rng.sample(range(len(data) + 1), min(4, len(data) + 1)))
            scan, hit = _core.DepthScan(limit), None
            for a, b in zip([0] + cuts, cuts + [len(data)]):
                hit = hit or scan.feed(data[a:b])
            deep = d > limit + 1
            assert (hit is not None) == deep and (_core.deeper_than(data, limit) is not None) == deep


def test_json_stream_parses_what_json_load_parses():
    """Values cut by the read block anywhere (a block of a few characters), numbers split across blocks,
    errors at the same line json.load names."""
    import io
    rng = random.Random(3)
    docs = ['{"a": [1, 2.5e3, -0, true, false, null, NaN, Infinity, "x\\"y\\\\"], "b": {"c": "é\\u00e9"}}',
            '[12345678901234567890, 1.25, {"k": []}, [], {}]', '  {"samples": [ ], "n": 123456}  ', "7", '"s"']
    for text in docs:
        for block in (1, 2, 3, 7, 1 << 20):
            st = _core.JsonStream(io.StringIO(text), "f", "x", 10**6, block=block)
            got = st.value()
            st.end()
            assert repr(got) == repr(json.loads(text)), (text, block)
    for text in ('{"a": 1,\n "b": [1, 2,\n ]}', '[1, 2]\n x', '{"a": 1\n "b": 2}'):
        try:
            json.loads(text)
        except json.JSONDecodeError as e:
            want = e.lineno
        with pytest.raises(DataFileError, match=rf"invalid JSON at line {want} "):
            st = _core.JsonStream(io.StringIO(text), "f", "x", 10**6, block=rng.choice([1, 3, 100]))
            st.value()
            st.end()
    st = _core.JsonStream(io.StringIO('{"big": "' + "y" * 5000 + '"}'), "f", "x", 1000, block=64)
    with pytest.raises(DataFileError, match="value at line 1 is over 1,000 characters, perdoc's limit for one record"):
        for _ in st.keys():
            st.value()


# ---------------------------------------------------------------------------------------------- 4. TREC
def _trec(tmp_path, qrels: str, run: str) -> tuple[Path, Path, Path]:
    (tmp_path / "q.txt").write_text(qrels)
    (tmp_path / "r.trec").write_text(run)
    (tmp_path / "map.csv").write_text("query_id,doc_id\nq1,A\nq2,B\n")
    return tmp_path / "r.trec", tmp_path / "q.txt", tmp_path / "map.csv"


RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 3.0 r\nq2 Q0 d1 2 0.5 r\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


def test_conflicting_qrels_are_refused_naming_both_lines(ir_measures, tmp_path):
    run, qrels, dmap = _trec(tmp_path, QRELS + "q2 0 d4 0\n\nq1 0 d2 1\n", RUN)
    with pytest.raises(InputError) as err:
        adapters.read_trec(run, qrels, "nDCG@10", dmap)
    text = _one_line(err.value)
    assert str(qrels) in text and "query q1, document d2" in text
    assert "0 at line 2 and 1 at line 6" in text


def test_repeated_identical_qrels_are_counted_once_in_a_note(ir_measures, tmp_path):
    run, qrels, dmap = _trec(tmp_path, QRELS + "q1 0 d1 1\nq2 0 d3 2\n", RUN)
    df, _, notes = adapters.read_trec(run, qrels, "nDCG@10", dmap)
    (tmp_path / "once.txt").write_text(QRELS)
    want = adapters.read_trec(run, tmp_path / "once.txt", "nDCG@10", dmap)[0]
    assert df["nDCG@10"].tolist() == want["nDCG@10"].tolist()
    assert any("2 repeated line(s) in q.txt" in n and "query q1, document d1 at lines 1 and 4" in n for n in notes)


@pytest.mark.parametrize("score", ["nan", "NaN", "inf", "-Infinity", "abc", "1,5"])
def test_run_scores_that_are_not_finite_numbers_are_refused_with_the_line(ir_measures, tmp_path, score):
    run, qrels, dmap = _trec(tmp_path, QRELS, RUN + f"q2 Q0 d9 3 {score} r\n")
    with pytest.raises(DataFileError) as err:
        adapters.read_trec(run, qrels, "nDCG@10", dmap)
    text = _one_line(err.value)
    assert str(run) in text and "line 5" in text and repr(score) in text


def test_run_ranking_a_document_twice_with_different_scores_is_refused(ir_measures, tmp_path):
    run, qrels, dmap = _trec(tmp_path, QRELS, RUN + "q1 Q0 d1 3 0.25 r\n")
    with pytest.raises(InputError) as err:
        adapters.read_trec(run, qrels, "nDCG@10", dmap)
    text = _one_line(err.value)
    assert "query q1 ranks document d1 twice" in text and "2.0 at line 1 and 0.25 at line 5" in text
    run, qrels, dmap = _trec(tmp_path, QRELS, RUN + "q1 Q0 d1 1 2.0 r\n")
    notes = adapters.read_trec(run, qrels, "nDCG@10", dmap)[2]
    assert any("1 repeated line(s) in r.trec" in n for n in notes)


@pytest.mark.parametrize("qrels, line, what", [
    ("q1 0 d1 1\nq1 0 d2 x\n", 2, "the grade 'x' is not an integer"),
    ("q1 0 d1 1\nq1 0 d2 1.5\n", 2, "the grade '1.5' is not an integer"),
    ("q1 0 d1 1\n\nq1 d2 1\n", 3, "has 3 field(s); a TREC qrels line has 4"),
])
def test_malformed_qrels_lines_are_refused_with_their_number(ir_measures, tmp_path, qrels, line, what):
    run, qrels_path, dmap = _trec(tmp_path, qrels, RUN)
    with pytest.raises(DataFileError) as err:
        adapters.read_trec(run, qrels_path, "nDCG@10", dmap)
    text = _one_line(err.value)
    assert str(qrels_path) in text and f"line {line}" in text and what in text


def test_malformed_run_lines_and_the_cli(ir_measures, tmp_path, capsys):
    run, qrels, dmap = _trec(tmp_path, QRELS, "q1 Q0 d1 1 2.0\n")
    with pytest.raises(DataFileError, match=r"line 1 has 5 field\(s\); a TREC run line has 6"):
        adapters.read_trec(run, qrels, "nDCG@10", dmap)
    run, qrels, dmap = _trec(tmp_path, QRELS, RUN + "q2 Q0 d9 3 nan r\n")
    code = main(["estimate", "--trec-run", str(run), "--qrels", str(qrels), "--measure", "nDCG@10",
                 "--doc-map", str(dmap)])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1 and "line 5" in err and "'nan'" in err
