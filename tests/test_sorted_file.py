"""A large Parquet file whose rows come grouped by document is summed run by run (issue 20):
:mod:`perdoc.reading.sorted_file` gives DuckDB's table (the same ids, counts and exact sums; float
sums to the last bits of their order), the same bits whichever threads read it, and hands back every
file it cannot vouch for (not grouped after all, missing values, blank ids), which DuckDB then reads
with the usual counts and messages."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perdoc.errors import InputError
from perdoc.reading import io as pio
from perdoc.reading import sorted_file
from perdoc.reading.table import AsciiIds


@pytest.fixture
def route(monkeypatch):
    """The route taken from one row up; records what each try returned (None: handed back)."""
    tries = []
    real = sorted_file.sorted_sums

    def spy(*args, **kwargs):
        got = real(*args, **kwargs)
        tries.append(got)
        return got
    monkeypatch.setattr(sorted_file, "MIN_ROWS", 1)
    monkeypatch.setattr(sorted_file, "sorted_sums", spy)
    return tries


def _duckdb_table(monkeypatch, path, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(sorted_file, "MIN_ROWS", 1 << 62)
        return pio.load_chunks(path, "doc_id", "hit", **kwargs)


def _ids(kind: str, k: int, rng) -> np.ndarray:
    v = np.arange(k, dtype=np.int64)
    if kind == "int64":
        return v * 7919 - 10**6          # (negative and positive: text order is not numeric order)
    if kind == "int32-wrapping":
        return (v * (3 * 10**9 // k) + 2 * 10**9).astype(np.int32)   # (wraps around once: not ascending)
    if kind == "uint16":
        return (v * 3 + 7).astype(np.uint16)
    if kind == "ascii":
        ids = [f"doc-{i:05d}" for i in range(k)]
    elif kind == "mixed":     # varied lengths, upper case, inner spaces
        ids = [("Doc " if i % 3 == 0 else "d") + str(i * 13) for i in range(k)]
    else:
        ids = [("é" if i % 4 == 0 else "") + f"n{i}" for i in range(k)]
    return np.array(sorted(ids), dtype=object)     # (a file sorted by its text ids)


def _scores(kind: str, rows: int, rng):
    if kind == "int8":
        return pa.array(rng.integers(0, 2, rows).astype(np.int8))
    if kind == "bool":
        return pa.array(rng.random(rows) < 0.3)
    if kind == "graded":
        return pa.array(rng.integers(0, 4, rows).astype(np.int16))
    if kind == "float32":
        return pa.array(rng.random(rows).astype(np.float32))
    return pa.array(rng.random(rows) * 3 - 1)


def _write(path, ids, sizes, hit, *, row_group_size=97, order=None):
    doc = np.repeat(ids, sizes)
    if order is not None:
        doc, hit = doc[order], hit.take(pa.array(order))
    col = pa.array(doc.tolist(), type=pa.string()) if doc.dtype == object else pa.array(doc)
    pq.write_table(pa.table({"doc_id": col, "hit": hit}), path, row_group_size=row_group_size)


@pytest.mark.parametrize("ids", ["int64", "int32-wrapping", "uint16", "ascii", "mixed", "non-ascii"])
@pytest.mark.parametrize("scores", ["int8", "bool", "graded", "float32", "float64"])
def test_runs_give_duckdbs_table(tmp_path, monkeypatch, route, ids, scores):
    rng = np.random.default_rng([len(ids), len(scores)])
    k = 700
    sizes = rng.integers(1, 40, k)
    path = tmp_path / "sorted.parquet"
    _write(path, _ids(ids, k, rng), sizes, _scores(scores, int(sizes.sum()), rng))
    got = pio.load_chunks(path, "doc_id", "hit", allow_similar_ids=ids == "mixed")
    assert len(route) == 1 and route[0] is not None, "the file was not read run by run"
    want = _duckdb_table(monkeypatch, path, allow_similar_ids=ids == "mixed")
    assert got.doc.tolist() == want.doc.tolist()
    np.testing.assert_array_equal(got.n, want.n)
    if scores.startswith("float"):    # (summed in the rows' order, not compensated)
        np.testing.assert_allclose(got.s, want.s, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(got.q, want.q, rtol=1e-13, atol=1e-13)
    else:
        np.testing.assert_array_equal(got.s, want.s)
        np.testing.assert_array_equal(got.q, want.q)
    assert got.source == want.source
    assert got.exclusions == want.exclusions


def test_sums_follow_the_rows_and_do_not_depend_on_the_threads(tmp_path):
    """The sums are put together in the file's order whichever thread read a row group: the same
    bits with one thread or four, each within rounding of the exact sum."""
    rng = np.random.default_rng(11)
    k = 300
    sizes = rng.integers(1, 300, k)
    x = rng.lognormal(0, 3, int(sizes.sum()))
    path = tmp_path / "f.parquet"
    _write(path, np.arange(k, dtype=np.int64), sizes, pa.array(x), row_group_size=211)
    one = sorted_file.sorted_sums(str(path), "doc_id", "hit", squares=True, threads=1)
    four = sorted_file.sorted_sums(str(path), "doc_id", "hit", squares=True, threads=4)
    for key in ("g", "n", "s", "q"):
        assert one[key].tobytes() == four[key].tobytes(), key
    np.testing.assert_array_equal(one["g"], np.arange(k))
    np.testing.assert_array_equal(one["n"], sizes)
    bounds = np.cumsum(np.concatenate(([0], sizes)))
    for d in range(k):
        part = x[bounds[d]:bounds[d + 1]]
        assert math.isclose(one["s"][d], math.fsum(part), rel_tol=1e-13), d
        assert math.isclose(one["q"][d], math.fsum(part * part), rel_tol=1e-13), d


def test_ascii_ids_come_as_bytes_with_their_flags(tmp_path):
    k = 50
    for ids, plain in ((np.array([f"d{i:03d}" for i in range(k)], dtype=object), True),
                       (np.array([f"D{i:03d}" for i in range(k)], dtype=object), False),
                       (np.array([f"d {i:03d}" for i in range(k)], dtype=object), False)):
        path = tmp_path / "a.parquet"
        _write(path, ids, np.full(k, 3), pa.array(np.ones(3 * k, dtype=np.int8)), row_group_size=7)
        got = sorted_file.sorted_sums(str(path), "doc_id", "hit", squares=False, threads=2)
        assert isinstance(got["doc"], AsciiIds) and got["doc"].plain == plain
        assert got["doc"].build().tolist() == sorted(ids.tolist())
        np.testing.assert_array_equal(got["n"], 3)
        assert "q" not in got


@pytest.mark.parametrize("case", ["shuffled", "split document", "blank id", "spaces id", "nul in id",
                                  "missing score", "missing id", "large integers", "one row each"])
def test_files_it_cannot_vouch_for_are_handed_back(tmp_path, case):
    rng = np.random.default_rng(3)
    k = 400
    ids = np.array([f"d{i:04d}" for i in range(k)], dtype=object)
    sizes = np.full(k, 5)
    rows = int(sizes.sum())
    hit = pa.array(rng.integers(0, 2, rows).astype(np.int8))
    order = None
    if case == "shuffled":
        order = rng.permutation(rows)
    elif case == "split document":      # d0007's rows in two places, far apart
        order = np.arange(rows)
        order = np.concatenate([order[:35], order[37:1500], order[35:37], order[1500:]])
    elif case in ("blank id", "spaces id", "nul in id"):
        ids[k // 2] = {"blank id": "", "spaces id": "   ", "nul in id": "d\x00x"}[case]
        ids = np.array(sorted(ids.tolist()), dtype=object)
    elif case == "missing score":
        hit = pa.array([None if i == 999 else v for i, v in enumerate(hit.to_pylist())], type=pa.int8())
    elif case == "large integers":
        hit = pa.array(rng.integers(0, 2**30, rows))
    elif case == "one row each":
        sizes = np.ones(k, dtype=np.int64)
        hit = pa.array(np.ones(k, dtype=np.int8))
    path = tmp_path / "f.parquet"
    _write(path, ids, sizes, hit, order=order)
    if case == "missing id":
        t = pq.read_table(path)
        doc = t.column("doc_id").to_pylist()
        doc[10] = None
        pq.write_table(t.set_column(0, "doc_id", pa.array(doc, type=pa.string())), path, row_group_size=97)
    squares = case == "large integers"
    assert sorted_file.sorted_sums(str(path), "doc_id", "hit", squares=squares, threads=2,
                                   int_bound=2**30 if squares else None) is None


@pytest.mark.parametrize("case, message", [
    ("missing score", r"column 'hit' in .*: 1 row\(s\) have a missing score"),
    ("blank id", r"column 'doc_id' in .*: 5 of 2000 row\(s\) have no document id")])
def test_handed_back_files_get_duckdbs_counts(tmp_path, monkeypatch, route, case, message):
    """What the route hands back is read by DuckDB, with the usual counts (here in the table's
    exclusions or the refusal's message)."""
    rng = np.random.default_rng(4)
    k = 400
    ids = np.array([f"d{i:04d}" for i in range(k)], dtype=object)
    hit = rng.integers(0, 2, 5 * k).astype(np.int8).tolist()
    if case == "blank id":
        ids[0] = "  "
        ids = np.array(sorted(ids.tolist()), dtype=object)
    else:
        hit[999] = None
    path = tmp_path / "f.parquet"
    _write(path, ids, np.full(k, 5), pa.array(hit, type=pa.int8()))
    with pytest.raises(InputError, match=message):
        pio.load_chunks(path, "doc_id", "hit")
    assert all(r is None for r in route)
    assert route or case == "missing score"    # (its footer shows the missing score: not tried)


def test_the_footer_guess(tmp_path):
    """A file is tried when its row groups follow one another in the ids' order (a few steps back
    allowed: wrapping integer ids); a shuffled file's groups each span nearly every id."""
    from perdoc.reading.io import _open_source
    rng = np.random.default_rng(8)
    k = 2000
    sizes = np.full(k, 5)
    hit = pa.array(np.zeros(5 * k, dtype=np.int8))
    cases = {"sorted": (np.arange(k, dtype=np.int64) * 11, None, True),
             "wrapping": (_ids("int32-wrapping", k, rng), None, True),
             "shuffled": (np.arange(k, dtype=np.int64), rng.permutation(5 * k), False)}
    for name, (ids, order, tried) in cases.items():
        path = tmp_path / f"{name}.parquet"
        _write(path, ids, sizes, hit, row_group_size=500, order=order)
        with _open_source(str(path), None) as src:
            assert src.grouped_by("doc_id", 1) == tried, name
            assert not src.grouped_by("doc_id", 10**9)       # (too few rows to be worth it)
