"""The fast routes of ``perdoc estimate`` on a chunk file (issue 20) give the numbers of the slow ones.

* a CSV/TSV score column of numbers is parsed by DuckDB's reader; a field it cannot parse sends the
  read back to the text route, with the same table and the same messages;
* 0/1 scores known from the column's type or the Parquet footer are summed once;
* a float column's range comes from the Parquet footer, and its 0/1 test is exact;
* the start-up imports neither PyYAML nor numpy.ma nor scipy, and builds one command's flags;
* leave-one-out sums of whole numbers by subtraction are the prefix and suffix sums, bit for bit;
* text ids read as integer keys (CSV ids that spell integers; short ASCII ids as their bytes) give the
  text route's table, order, refusals and similar-ids check, and fall back to it when an id does not fit.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perdoc.errors import InputError
from perdoc.reading import io as pio


def _same_table(a, b) -> None:
    assert list(a.doc) == list(b.doc)
    for name in ("n", "s", "q"):
        assert np.array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name))), name
    assert a.exclusions == b.exclusions
    assert a.source == b.source


@pytest.fixture
def spy_typed(monkeypatch):
    """Records whether each read asked for numbers and got them."""
    calls = []
    real = pio._Source.read_as_numbers

    def spy(self, name):
        got = real(self, name)
        calls.append(got)
        return got
    monkeypatch.setattr(pio._Source, "read_as_numbers", spy)
    return calls


def _text_route(monkeypatch, *args, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(pio._Source, "read_as_numbers", lambda self, name: False)
        return pio.load_chunks(*args, **kwargs)


def _write_csv(path, docs, scores, sep=","):
    with open(path, "w") as fh:
        fh.write(f"doc{sep}hit\n")
        for d, h in zip(docs, scores):
            fh.write(f"{d}{sep}{h}\n")


@pytest.mark.parametrize("sep, ext", [(",", "csv"), ("\t", "tsv")])
def test_numbers_parsed_by_the_reader_are_the_text_routes(tmp_path, monkeypatch, spy_typed, sep, ext):
    rng = np.random.default_rng(5)
    k = 3000
    docs = [f"d{i}" for i in rng.integers(0, 40, k)]
    forms = ["1", " 1", "1 ", "+1", "1e0", "0", "-0", ".5", "5.", "0.25", "1.0E+0", "3", "-2.5"]
    scores = [forms[i] for i in rng.integers(0, len(forms), k)]
    path = tmp_path / f"rows.{ext}"
    _write_csv(path, docs, scores, sep)
    fast = pio.load_chunks(path, "doc", "hit")
    assert spy_typed == [True]
    _same_table(fast, _text_route(monkeypatch, path, "doc", "hit"))
    assert fast.source["metric"] == "score"


def test_a_later_field_that_is_not_a_number_falls_back_to_text(tmp_path, monkeypatch, spy_typed):
    # the sniffer sees numbers in its sample; rows far below hold booleans written as words
    rng = np.random.default_rng(6)
    k = 60_000
    docs = [f"d{i}" for i in rng.integers(0, 300, k)]
    scores = (rng.random(k) < 0.3).astype(int).astype(str).astype(object)
    scores[55_000], scores[55_001] = "true", "False"
    path = tmp_path / "rows.csv"
    _write_csv(path, docs, scores)
    fast = pio.load_chunks(path, "doc", "hit")
    assert spy_typed == [True]
    slow = _text_route(monkeypatch, path, "doc", "hit")
    _same_table(fast, slow)
    assert fast.source["metric"] == "binary"
    assert float(np.sum(fast.s)) == float(np.sum(scores[:55_000] == "1")) + float(np.sum(scores[55_002:] == "1")) + 1


def test_a_later_field_that_is_no_number_at_all_gets_the_text_routes_message(tmp_path, monkeypatch):
    k = 40_000
    scores = np.array(["1", "0"] * (k // 2), dtype=object)
    scores[35_000] = "NA"
    path = tmp_path / "rows.csv"
    _write_csv(path, [f"d{i % 50}" for i in range(k)], scores)
    with pytest.raises(InputError) as fast:
        pio.load_chunks(path, "doc", "hit")
    with pytest.raises(InputError) as slow:
        _text_route(monkeypatch, path, "doc", "hit")
    assert str(fast.value) == str(slow.value)
    assert "non-numeric score (e.g. 'NA')" in str(fast.value)


def test_text_scores_are_read_on_the_text_route(tmp_path, spy_typed):
    path = tmp_path / "rows.csv"
    _write_csv(path, ["a", "a", "b", "b"], ["true", "false", "TRUE", "0"])
    table = pio.load_chunks(path, "doc", "hit")
    assert spy_typed == [False]         # words near the top: not tried as numbers, read as text
    assert list(table.s) == [1.0, 1.0] and table.source["metric"] == "binary"
    _write_csv(path, ["a", "a", "b", "b"], ["1", "0", " 0.5", "1e0"])
    spy_typed.clear()
    assert pio.load_chunks(path, "doc", "hit").K == 2 and spy_typed == [True]   # numbers: tried


@pytest.mark.parametrize("kind", ["int8", "bool", "int64"])
def test_zero_one_scores_known_before_the_pass_give_the_same_table(tmp_path, kind):
    rng = np.random.default_rng(7)
    doc = np.repeat(np.arange(60), rng.integers(1, 30, 60))
    hit = rng.random(doc.size) < 0.35
    col = pa.array(hit) if kind == "bool" else pa.array(hit.astype(kind))
    pq.write_table(pa.table({"doc": pa.array(doc), "hit": col}), tmp_path / "rows.parquet")
    _write_csv(tmp_path / "rows.csv", doc, hit.astype(int))
    par = pio.load_chunks(tmp_path / "rows.parquet", "doc", "hit")
    csv = pio.load_chunks(tmp_path / "rows.csv", "doc", "hit")
    for name in ("n", "s", "q"):
        assert np.array_equal(getattr(par, name), getattr(csv, name)), name
    assert par.source["metric"] == csv.source["metric"] == "binary"


def test_integers_beyond_one_are_summed_squared(tmp_path):
    doc = np.repeat(np.arange(4), 3)
    hit = np.array([0, 1, 2, 1, 1, 1, 0, 0, 0, 3, 1, 0], dtype=np.int8)
    pq.write_table(pa.table({"doc": doc, "hit": hit}), tmp_path / "rows.parquet")
    table = pio.load_chunks(tmp_path / "rows.parquet", "doc", "hit")
    assert list(table.q) == [5.0, 3.0, 0.0, 10.0]
    assert table.source["metric"] == "score"


def test_float_scores_near_one_are_not_taken_for_zero_one(tmp_path):
    # a million ones and one value a hair below 1: the sums of x and x^2 round to the same double,
    # so only a look at the values tells the column is not 0/1
    hit = np.ones(1_000_001)
    hit[17] = 1.0 - 1e-12
    doc = np.zeros(hit.size, dtype=np.int64)
    doc[-1] = 1
    pq.write_table(pa.table({"doc": doc, "hit": hit}), tmp_path / "rows.parquet")
    table = pio.load_chunks(tmp_path / "rows.parquet", "doc", "hit")
    assert table.s[0] == table.q[0]              # the sums cannot tell
    assert table.source["metric"] == "proportion"
    hit[17] = 1.0
    pq.write_table(pa.table({"doc": doc, "hit": hit}), tmp_path / "ones.parquet")
    assert pio.load_chunks(tmp_path / "ones.parquet", "doc", "hit").source["metric"] == "binary"


def test_float_range_from_the_footer_is_the_rows_range(tmp_path, monkeypatch):
    rng = np.random.default_rng(8)
    doc = rng.integers(0, 80, 5000)
    hit = rng.normal(3.0, 2.0, doc.size)
    pq.write_table(pa.table({"doc": doc, "hit": hit}), tmp_path / "rows.parquet")
    fast = pio.load_chunks(tmp_path / "rows.parquet", "doc", "hit")
    with monkeypatch.context() as m:    # no footer: the range aggregated per document
        m.setattr(pio._Source, "footer_range", lambda self, name: None)
        slow = pio.load_chunks(tmp_path / "rows.parquet", "doc", "hit")
    _same_table(fast, slow)
    huge = hit * 2.0 ** 300             # squares beyond the double range: summed rescaled, either way
    pq.write_table(pa.table({"doc": doc, "hit": huge}), tmp_path / "huge.parquet")
    fast = pio.load_chunks(tmp_path / "huge.parquet", "doc", "hit")
    with monkeypatch.context() as m:
        m.setattr(pio._Source, "footer_range", lambda self, name: None)
        slow = pio.load_chunks(tmp_path / "huge.parquet", "doc", "hit")
    _same_table(fast, slow)
    assert fast.scale != 1.0


# ---------------------------------------------------------------------- start-up
def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("docs,ids", [(30, "int"), (6000, "int"), (6000, "text"), (6000, "csv int"),
                                      (6000, "csv text")])
def test_estimate_imports_no_yaml_numpy_ma_or_scipy(tmp_path, docs, ids):
    # (from 4096 documents the diagnostics' quantiles come from buckets, whose code once imported
    # numpy.ma through np.unique; the CSV ids read as integers or keys once fetched a column that is
    # missing on every row, which comes back as a masked array)
    d = np.repeat(np.arange(docs), 5)
    ids_col = d if ids.endswith("int") else np.char.add("doc-", d.astype(str))
    hits = (np.arange(d.size) % 3 == 0).astype(np.int8)
    if ids.startswith("csv"):
        path = tmp_path / "rows.csv"
        path.write_text("d,h\n" + "".join(f"{a},{b}\n" for a, b in zip(ids_col.tolist(), hits.tolist())))
    else:
        path = tmp_path / "rows.parquet"
        pq.write_table(pa.table({"d": ids_col, "h": hits}), path)
    out = _run(
        "import sys, io, contextlib, perdoc.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert perdoc.cli.main(['estimate', {str(path)!r}, '--doc', 'd', '--score', 'h', "
        "'--replicates', '0', '--json']) == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('yaml', 'scipy', 'pandas') "
        "or m in ('numpy.ma', 'numpy.ma.core') or m in ('perdoc.study.multi', 'perdoc.study.sampling')))")
    assert out.strip() == "[]"


def test_messages_dump_to_yaml_whichever_is_imported_first():
    dump = "print(yaml.safe_dump({'caveat': Message('x.y', 'plain words')}).strip())"
    first_perdoc = _run("import perdoc, sys\nassert 'yaml' not in sys.modules\nimport yaml\n"
                        "from perdoc.messages import Message\n" + dump)
    first_yaml = _run("import yaml, perdoc\nfrom perdoc.messages import Message\n" + dump)
    assert first_perdoc.strip() == first_yaml.strip() == "caveat: plain words"


def test_one_commands_parser_lists_every_command_and_builds_its_own_flags():
    from perdoc.cli import COMMANDS, build_parser
    full = build_parser()
    assert len(COMMANDS) == 6
    for command in COMMANDS:
        one = build_parser(command)
        assert one.format_help() == full.format_help()
        choices = one._subparsers._group_actions[0].choices
        whole = full._subparsers._group_actions[0].choices
        assert choices[command].format_help() == whole[command].format_help()
        for other in set(COMMANDS) - {command}:   # listed only: no flags of its own
            assert len(choices[other]._actions) == 1


# ---------------------------------------------------------------------- exact shortcuts
def _loo_by_prefix(x):
    x = np.asarray(x, dtype=float)
    z = np.zeros(x.shape[:-1] + (1,))
    prefix = np.concatenate((z, np.cumsum(x, axis=-1)[..., :-1]), axis=-1)
    suffix = np.concatenate((np.cumsum(x[..., ::-1], axis=-1)[..., ::-1][..., 1:], z), axis=-1)
    return prefix + suffix


def _loo_exact(x):
    from fractions import Fraction
    rows = np.atleast_2d(x)
    out = []
    for row in rows:
        exact = [Fraction(float(v)) for v in row]
        total = sum(exact)
        out.append([float(total - v) for v in exact])
    return np.array(out).reshape(np.shape(x))


@pytest.mark.parametrize("kind", ["sizes", "squares", "batch", "near_2_53", "fractions", "negative", "whole_head",
                                  "one", "two", "batch_fractions", "dominant_fraction", "two_dominant",
                                  "batch_dominant", "infinite"])
def test_leave_one_out_sums(kind):
    # whole numbers: the total minus each, the prefix and suffix sums' numbers exactly; fractions none
    # of which holds half the total, or all but one: the total minus each, within a few units in the
    # last place of the exact sums; negative numbers, or two holding most of the total in turn: the
    # prefix and suffix sums
    from perdoc.methods.micro import _loo
    rng = np.random.default_rng(9)
    n = np.floor(rng.lognormal(3.0, 2.0, 5000)) + 1
    x = {"sizes": n, "squares": n * n, "batch": np.stack([n, n[::-1]]),
         "near_2_53": np.full(1000, 2.0 ** 43), "fractions": n / 7.0, "negative": n - 50.0,
         "whole_head": np.r_[n[:300], 0.5, n[300:]], "one": n[:1], "two": n[:2] / 3.0,
         "batch_fractions": np.stack([n / 3.0, n[::-1]]),
         "dominant_fraction": np.r_[n / 7.0, 10.0 * n.sum()],
         "two_dominant": np.r_[n / 7.0, 10.0 * n.sum(), 100.0 * n.sum()],
         "batch_dominant": np.stack([np.r_[n / 7.0, 10.0 * n.sum()], np.r_[10.0 * n.sum(), n[::-1] / 3.0]]),
         "infinite": np.r_[n / 7.0, np.inf]}[kind]
    got = _loo(x)
    if kind in ("fractions", "whole_head", "batch_fractions", "dominant_fraction", "batch_dominant"):
        exact = _loo_exact(x)
        np.testing.assert_allclose(got, exact, rtol=4e-15, atol=0)
        # at least as close as the prefix and suffix sums
        assert np.max(np.abs(got - exact) / exact) <= np.max(np.abs(_loo_by_prefix(x) - exact) / exact)
    else:
        assert np.array_equal(got, _loo_by_prefix(x))


def test_diagnostic_quantiles_are_numpys():
    from perdoc.methods.diagnostics import QUANTILES, diagnose
    rng = np.random.default_rng(10)
    n = np.floor(rng.lognormal(2.0, 1.5, 301)) + 1
    s = np.floor(n * rng.random(n.size))
    d = diagnose(n, s, s, 1e-4)
    assert list(d.n_quantiles.values()) == [float(v) for v in np.quantile(n, QUANTILES)]
    assert list(d.rate_quantiles.values()) == [float(v) for v in np.quantile(s / n, QUANTILES)]


@pytest.mark.parametrize("size", [1, 2, 3, 4095, 4096, 4097, 20_011, 200_000])
@pytest.mark.parametrize("kind", ["lognormal", "ties", "rates", "wide", "narrow", "negative", "constant",
                                  "one_far", "zeros_and_ones"])
def test_diagnostic_quantiles_by_partial_sort_are_numpys(size, kind):
    # from _PARTITION_MIN elements the order statistics come from np.partition, below from a sort:
    # either way np.quantile's numbers, bit for bit
    from perdoc.methods.diagnostics import _PARTITION_MIN, QUANTILES, _quantiles
    assert 1 < _PARTITION_MIN <= 200_000
    rng = np.random.default_rng([11, size])
    x = {"lognormal": np.floor(rng.lognormal(2.0, 1.5, size)) + 1,
         "ties": rng.integers(0, 3, size).astype(float),
         "rates": rng.random(size) * 1e-300 + rng.integers(0, 2, size),
         # the buckets' range: the whole doubles, a few ulps, below zero, none, one value far off, and
         # most values tied at the two ends
         "wide": np.concatenate([[-8e307, 8e307], rng.standard_normal(size)])[:size],
         "narrow": 1.0 + rng.integers(0, 5, size) * np.finfo(float).eps,
         "negative": -rng.lognormal(0.0, 3.0, size),
         "constant": np.full(size, 0.25),
         "one_far": np.concatenate([[1e12], rng.random(size)])[:size],
         "zeros_and_ones": np.where(rng.random(size) < 0.45, 0.0,
                                    np.where(rng.random(size) < 0.8, 1.0, rng.random(size)))}[kind]
    probs = (*QUANTILES, 0.333, 0.999, 1e-9)
    want = [float(v) for v in np.quantile(x, probs)]
    assert _quantiles(x, probs) == want
    if kind in ("lognormal", "ties"):   # whole numbers: counted when there are enough of them
        assert _quantiles(x, probs, whole=True) == want


def test_diagnostic_size_quantiles_are_counted_only_for_small_whole_sizes():
    from perdoc.methods.diagnostics import _PARTITION_MIN, _small_whole
    n = np.arange(1.0, _PARTITION_MIN + 1)
    assert _small_whole(n)
    assert not _small_whole(n[:-1])                       # too few: sorted
    assert not _small_whole(np.r_[n[:-1], 0.5])           # not whole
    assert not _small_whole(np.r_[n[:-1], 0.0])           # a size below 1
    assert not _small_whole(np.r_[n[:-1], 1e9])           # too large to count


def test_common_text_fields_read_as_the_general_parse_reads_them():
    import math

    import duckdb
    con = duckdb.connect()
    src = pio._Source(con=con, label="t", path=None, fmt="csv", relation="t", columns=["v"], types={"v": "VARCHAR"})
    raw, x, text = src.number("v")
    assert text
    trimmed = "NULLIF(trim(CAST(\"v\" AS VARCHAR)), '')"
    general = (f"COALESCE(TRY_CAST({trimmed} AS DOUBLE), "
               f"CASE lower({trimmed}) WHEN 'true' THEN 1.0 WHEN 'false' THEN 0.0 END)")
    values = [*pio._COMMON_FIELDS, " true", "tRuE", "1.0", "nan", "", None, "  ", "x", "-0", "0 ", " 1"]
    for v in values:
        got_raw, got_x, want_raw, want_x = con.execute(
            f"SELECT {raw}, {x}, {trimmed}, {general} FROM (SELECT ?::VARCHAR AS v)", [v]).fetchone()
        assert got_raw == want_raw, v
        if want_x is None or want_x != want_x:
            assert (got_x is None) == (want_x is None) and (got_x is None or got_x != got_x), v
        else:
            assert got_x == want_x and math.copysign(1.0, got_x) == math.copysign(1.0, want_x), v


# ---------------------------------------------------------------------- integer ids in text order
def _text_reference(v):
    text = v.astype(object).astype(str)
    order = np.argsort(text, kind="stable")
    return order, text[order]


def _assert_text_order(v):
    """_int_text_order of ``v`` is numpy's text sort: the same order, characters and width."""
    from perdoc.reading.io import _int_text_order
    order, text = _int_text_order(v)
    ref_order, ref_text = _text_reference(v)
    assert text.dtype == ref_text.dtype and text.tolist() == ref_text.tolist()
    np.testing.assert_array_equal(order, ref_order)
    # deferred, the same order now and the same text when it is read
    order, deferred = _int_text_order(v, defer=True)
    np.testing.assert_array_equal(order, ref_order)
    text = deferred.build() if hasattr(deferred, "build") else deferred
    assert text.dtype == ref_text.dtype and text.tolist() == ref_text.tolist()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"])
@pytest.mark.parametrize("scale", [1, 10**4, 9_999_999, 99_999_999, 10**8, 10**9, 10**12, 10**17])
def test_integer_ids_sort_as_their_text(dtype, scale):
    """_int_text_order gives the text order and the text numpy gives, for distinct ids of every width
    (its packed keys change with the number of digits and the sign: 32-bit up to 7 digits, or 8 without
    negative ids; 64-bit up to 17; the text itself beyond)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(scale)
    hi = min(int(info.max), scale)
    lo = max(int(info.min), -scale)
    v = np.unique(rng.integers(lo, hi, size=3000, endpoint=True, dtype=dtype))
    v = np.unique(np.concatenate([v, np.array([0, hi, lo, max(lo, -1), min(hi, 9), min(hi, 10)], dtype=dtype)]))
    rng.shuffle(v)
    _assert_text_order(v)


@pytest.mark.parametrize("arrangement", ["ascending", "runs", "descending", "nearly"])
@pytest.mark.parametrize("dtype,lo,hi", [("int64", 0, 10**12), ("int32", -10**9, 2**31 - 1), ("uint64", 0, 10**19)])
def test_integer_ids_in_runs_sort_as_their_text(arrangement, dtype, lo, hi):
    """Ids that come in a few ascending runs (a file sorted by document) are merge-sorted, others
    quick-sorted: the same order and text either way."""
    rng = np.random.default_rng([len(arrangement), hi])
    v = np.unique(rng.integers(lo, hi, size=20_000, dtype=dtype))
    if arrangement == "runs":      # a few hash partitions, each in ascending order
        part = rng.integers(0, 7, v.size)
        v = np.concatenate([v[part == p] for p in range(7)])
    elif arrangement == "descending":
        v = v[::-1].copy()
    elif arrangement == "nearly":   # ascending but for a few swaps
        i = rng.integers(0, v.size - 1, 50)
        v[i], v[i + 1] = v[i + 1], v[i].copy()
    _assert_text_order(v)


def test_monotone_runs_count_ascending_and_descending_stretches():
    from perdoc.reading.io import _monotone_runs
    assert _monotone_runs(np.arange(10)) == _monotone_runs(np.arange(10)[::-1].copy()) == 1
    assert _monotone_runs(np.array([1, 3, 2, 4, 0])) == 4
    assert _monotone_runs(np.array([5, 6, 7, 1, 2, 3, 9, 8, 4])) == 4   # up, (down), up, down
    assert _monotone_runs(np.array([2])) == _monotone_runs(np.array([2, 1])) == 1
    assert _monotone_runs(np.random.default_rng(0).permutation(30_000)) > 30_000 // 16


def test_integer_ids_at_the_ends_of_int64_sort_as_their_text():
    info = np.iinfo(np.int64)
    v = np.array([info.min, info.max, -1, 0, 1, 10**17, 10**18, -10**18, 99_999_999, 100_000_000, 7], dtype=np.int64)
    _assert_text_order(v)


@pytest.mark.parametrize("lo,hi", [(-99, 10**12), (-10**6, 10**6 - 1), (-10**9, -1), (-5, 3), (-10**17, 10**5)])
def test_negative_ids_shorter_or_longer_than_the_others_sort_as_their_text(lo, hi):
    # a "-" moves a negative id's digits one place right: the widest text is a negative id's or not
    rng = np.random.default_rng(abs(lo) + hi)
    v = np.unique(np.concatenate([rng.integers(lo, hi, size=2000, endpoint=True), [lo, hi]]))
    rng.shuffle(v)
    _assert_text_order(v)


def test_text_ids_are_kept_as_given_and_other_ids_become_text():
    # a text array of ids is not copied (as n and s are not): at 10^6 ids a copy was the loaders'
    # peak of memory; ids of other kinds still become text
    from perdoc import DocTable
    doc = np.array(["d1", "d2", "d3"])
    t = DocTable.from_arrays([1.0, 2.0, 3.0], [0.0, 1.0, 1.0], doc=doc)
    assert np.shares_memory(t.doc, doc) and t.doc.dtype == doc.dtype
    t = DocTable.from_arrays([1.0, 2.0, 3.0], [0.0, 1.0, 1.0], doc=np.array([7, 8, 9]))
    assert t.doc.dtype.kind == "U" and t.doc.tolist() == ["7", "8", "9"]


def test_integer_ids_text_is_written_when_first_read(tmp_path):
    """A table read with integer ids holds them unwritten until something reads ``doc``: an
    estimate does not, and reading, copying, pickling, subsetting and replacing give the text of
    the ids in text order, written once."""
    import copy
    import pickle
    from dataclasses import replace

    import pandas as pd

    from perdoc import estimate, load_chunks
    from perdoc.reading.table import DeferredIds
    rng = np.random.default_rng(3)
    ids = rng.permutation(np.arange(-40, 1960))
    df = pd.DataFrame({"doc_id": np.repeat(ids, 3), "hit": rng.integers(0, 2, ids.size * 3).astype("int8")})
    path = tmp_path / "ints.parquet"
    df.to_parquet(path)
    table = load_chunks(path, doc="doc_id", score="hit")
    held = table.__dict__["_doc_ids"]
    assert isinstance(held, DeferredIds) and held.size == ids.size
    est = estimate(table, replicates=0)
    assert table.__dict__["_doc_ids"] is held and held._text is None   # the estimate never read the ids
    expected = sorted(str(i) for i in ids)
    clone = copy.copy(table)
    back = pickle.loads(pickle.dumps(table))
    assert table.doc.tolist() == expected and table.doc.dtype == np.dtype(f"U{max(map(len, expected))}")
    assert table.__dict__["_doc_ids"] is table.doc    # written once, then kept
    assert clone.doc is table.doc and back.doc.tolist() == expected
    assert replace(table, attrs={}).doc is table.doc
    assert table.take([0, 2]).doc.tolist() == expected[0:3:2]
    # the same numbers as a table of the same ids given as text
    same = estimate(load_chunks(df.assign(doc_id=df.doc_id.astype(str)), doc="doc_id", score="hit"),
                    replicates=0)
    assert est.to_dict() == same.to_dict()
    with pytest.raises(InputError, match="one id per document"):
        type(table).from_arrays([1.0, 2.0], [0.0, 1.0], doc=DeferredIds(3, lambda: np.array(["a", "b", "c"])))


@pytest.mark.parametrize("where", [0, 65535, 65536, 200_000 - 1])
def test_table_checks_taken_a_block_at_a_time_see_every_row(where):
    """The counts' and the squares' checks run a block at a time: a fractional count or a sum of
    squares below s^2/n is found in any block, the first, at a block's edges and the last; q given
    as s itself (0/1 scores) is checked as 0 <= s <= n."""
    from perdoc import DocTable
    K = 200_000
    n = np.full(K, 4.0)
    s = np.tile([0.0, 1.0, 2.0, 4.0], K // 4)
    ok = DocTable.from_arrays(n, s, s)
    assert ok.q is ok.s
    frac = n.copy()
    frac[where] = 4.5
    with pytest.raises(InputError, match=r"1 document\(s\) have a non-integer count \(e.g. 4.5\)"):
        DocTable.from_arrays(frac, s, s)
    q = s * s / 4.0    # the smallest sums of squares the sums allow
    DocTable.from_arrays(n, s, q)
    q[where] = s[where] ** 2 / 4.0 * 0.99 if s[where] else -1.0
    with pytest.raises(InputError, match="smaller than s\\^2/n"):
        DocTable.from_arrays(n, s, q)
    over = s.copy()
    over[where] = 5.0   # q = s with a sum above n: a sum of squares below s^2/n
    with pytest.raises(InputError, match="smaller than s\\^2/n"):
        DocTable.from_arrays(n, over, over)


# ---------------------------------------------------------------------- 0/1 scores guessed from the first rows
def _full_pass(monkeypatch, *args, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(pio, "_looks_01", lambda src, score, x: False)
        return pio.load_chunks(*args, **kwargs)


@pytest.mark.parametrize("later", [None, "0.5", "nan", "inf", "-3", "", "true", "abc", "1e0", '"1"'])
@pytest.mark.parametrize("route", ["typed", "text"])
def test_scores_that_look_0_1_give_the_full_passs_table(tmp_path, monkeypatch, later, route):
    # files whose first rows are all 0 or 1 are summed as 0/1 scores with a count of the rows that are
    # not; a later row that is not 0 or 1 (a fraction, NaN, an infinity, a negative number), a missing
    # one or a boolean word leaves the same table, source, exclusions and messages as the full pass
    monkeypatch.setattr(pio, "_LOOK_MIN_BYTES", 0)
    monkeypatch.setattr(pio, "_LOOK_BYTES", 2000)   # about the first 300 rows
    rng = np.random.default_rng(12)
    k = 5000
    docs = [f"d{i}" for i in rng.integers(0, 60, k)]
    scores = [str(v) for v in rng.integers(0, 2, k)]
    if later is not None:
        scores[4321] = later
    path = tmp_path / "rows.csv"
    _write_csv(path, docs, scores)
    calls = []
    real = pio._looks_01
    monkeypatch.setattr(pio, "_looks_01", lambda *a: calls.append(real(*a)) or calls[-1])
    load = (lambda *a: pio.load_chunks(*a)) if route == "typed" else (lambda *a: _text_route(monkeypatch, *a))
    try:
        got = load(path, "doc", "hit")
    except InputError as e:
        with pytest.raises(InputError) as want:
            _full_pass(monkeypatch, path, "doc", "hit")
        assert str(e) == str(want.value)
        return
    assert calls and calls[0] is True
    with monkeypatch.context() as m:
        m.setattr(pio, "_looks_01", lambda src, score, x: False)
        want = load(path, "doc", "hit")
    _same_table(got, want)
    assert got.source["metric"] == ("binary" if later in (None, "", "true") else want.source["metric"])


def test_dataframe_scores_that_look_0_1_and_files_too_small_to_look_at(tmp_path, monkeypatch):
    import pandas as pd
    rng = np.random.default_rng(13)
    df = pd.DataFrame({"doc": [f"d{i}" for i in rng.integers(0, 30, 4000)],
                       "hit": rng.integers(0, 2, 4000).astype(float)})
    calls = []
    real = pio._looks_01
    monkeypatch.setattr(pio, "_looks_01", lambda *a: calls.append(real(*a)) or calls[-1])
    got = pio.load_chunks(df, "doc", "hit")
    assert calls == [True] and got.source["metric"] == "binary"
    _same_table(got, _full_pass(monkeypatch, df, "doc", "hit"))
    df.loc[3999, "hit"] = 0.25     # past the rows looked at: the full pass follows
    monkeypatch.setattr(pio, "_LOOK_ROWS", 100)
    _same_table(pio.load_chunks(df, "doc", "hit"), _full_pass(monkeypatch, df, "doc", "hit"))
    # a file under _LOOK_MIN_BYTES is not looked at
    path = tmp_path / "small.csv"
    _write_csv(path, ["a", "b", "c"], ["1", "0", "1"])
    calls.clear()
    assert pio.load_chunks(path, "doc", "hit").source["metric"] == "binary" and calls == []


def test_a_text_columns_statistics_are_not_read_as_a_range(tmp_path):
    """A score column stored as text in a Parquet file: its footer's smallest and largest values
    compare letters ("05" lies between "0" and "1"), so they say nothing of the numbers' range."""
    path = tmp_path / "text.parquet"
    pq.write_table(pa.table({"doc": ["a", "a", "b", "b"], "hit": ["0", "05", "1", "0"]}), path)
    t = pio.load_chunks(path, "doc", "hit")
    assert t.source["metric"] == "score" and list(t.s) == [5.0, 1.0]
    with pytest.raises(InputError, match=r"1 row\(s\) have a score outside \[0, 1\] \(e.g. 5\)"):
        pio.load_chunks(path, "doc", "hit", metric="proportion")


@pytest.mark.parametrize("case", ["0/1", "fraction later", "nan later", "missing later", "graded", "0/1 in ints"])
def test_parquet_floats_whose_statistics_show_0_and_1_are_looked_at(tmp_path, monkeypatch, case):
    """Scores stored as floats in a Parquet file whose footer gives exactly [0, 1] as their range: when
    the first rows are all 0 or 1, one pass sums them as 0/1 scores (plain sums, no compensated ones,
    no count per document) and one count over the column confirms them; a later row that is not 0 or
    1 (an MRR-like score, NaN, a missing one) gives the full pass's table, source and exclusions.
    Other ranges (and integer columns) are not looked at."""
    monkeypatch.setattr(pio, "_LOOK_MIN_BYTES", 0)
    monkeypatch.setattr(pio, "_LOOK_ROWS", 500)
    rng = np.random.default_rng(len(case))
    rows = 6000
    doc = pa.array([f"d{i}" for i in rng.integers(0, 80, rows)])
    hit = (rng.random(rows) < 0.35).astype(float)
    if case == "graded":
        hit = np.where(hit == 1, 1.0, rng.random(rows) * 0.9)   # min and max not both exactly 0 and 1
    values = hit.tolist()
    late = {"fraction later": 0.5, "nan later": float("nan"), "missing later": None}.get(case, "keep")
    if late != "keep":
        values[5000] = late
    col = pa.array(hit.astype(np.int8)) if case == "0/1 in ints" else pa.array(values, type=pa.float64())
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"doc": doc, "hit": col}), path, row_group_size=2000)
    sqls, looks = [], []
    real_fetch, real_look = pio._Source.fetch, pio._looks_01
    monkeypatch.setattr(pio._Source, "fetch", lambda self, sql, params=None: sqls.append(sql) or real_fetch(self, sql, params))
    monkeypatch.setattr(pio, "_looks_01", lambda *a: looks.append(real_look(*a)) or looks[-1])
    try:
        got = pio.load_chunks(path, "doc", "hit")
    except InputError as e:     # (NaN and missing scores are refused, with the full pass's message)
        with pytest.raises(InputError) as refused:
            _full_pass(monkeypatch, path, "doc", "hit")
        assert case in ("nan later", "missing later") and str(e) == str(refused.value) and looks == [True]
        return
    sent = list(sqls)
    want = _full_pass(monkeypatch, path, "doc", "hit")
    _same_table(got, want)
    assert got.source == want.source and got.exclusions == want.exclusions
    if case == "0/1":
        assert looks == [True] and got.source["metric"] == "binary"
        grouped = [s for s in sent if "GROUP BY" in s]
        confirm = [s for s in sent if "AS k FROM" in s and "LIMIT" not in s]
        assert len(grouped) == 1 and not any("fsum" in s or "AS non01" in s for s in grouped)
        assert len(confirm) == 1 and "GROUP BY" not in confirm[0]
        assert float(np.sum(got.s)) == float(hit.sum())
    elif case in ("graded", "0/1 in ints"):
        assert looks == []        # a range other than [0, 1], or integers: no look
    else:
        assert looks == [True] and any("fsum" in s for s in sent)     # the guess failed: the full pass


# ---------------------------------------------------------------------- text ids kept as bytes
@pytest.mark.parametrize("ids", [
    ["d1", "d2", "d3"],                                  # one length
    ["a", "ab", "abc", "b", "ba", "c"],                  # several lengths (shorter first)
    ["doc-%06d" % i for i in range(0, 300_000, 7)],      # more than a block of bytes
    ["x" * 40, "y", "z" * 3],                            # one long id
    ["a!", "a#", "a~", "a\x7f", "b@", "b[", "b`", "b{"],  # punctuation around the letters' ranges
])
def test_ascii_ids_keep_the_text_and_order(ids):
    """Ids read as Python strings become bytes whose text is the unicode array numpy would make
    (same characters and width), whose order is the text order and whose plain flag says that no
    id holds an upper-case letter or an ASCII space."""
    from perdoc.reading._rows import _ascii_ids
    doc = np.array(ids, dtype=object)
    got = _ascii_ids(doc)
    assert got is not None and got.size == len(ids) and got.plain
    want = doc.astype(f"U{max(map(len, ids))}")
    raw = got.raw
    # bytes compare as the text does
    np.testing.assert_array_equal(np.argsort(raw, kind="stable"), np.argsort(want, kind="stable"))
    assert got.increasing() == bool(np.all(want[1:] > want[:-1]))
    text = got.build()
    assert text.dtype == want.dtype and text.tolist() == ids
    assert got.raw is None and got.build() is text    # the bytes let go, the text kept


@pytest.mark.parametrize("ids,plain", [
    (["a", "B"], False), (["a b", "c"], False), (["a\tb", "c"], False), (["a", "c\x1f"], False),
    (["a", " c"], False), (["az", "@", "[", "`", "{"], True), (["a", "\x7f", "!"], True),
])
def test_ascii_ids_flag_what_the_similar_ids_key_changes(ids, plain):
    from perdoc.reading._rows import _ascii_ids
    got = _ascii_ids(np.array(ids, dtype=object))
    assert got.plain is plain
    assert plain == all(v == v.lower() and v == v.strip() and not any(c in v for c in " \t\x1f") for v in ids)


@pytest.mark.parametrize("ids", [["a", None], ["é", "a"], ["a\x00b", "c"], ["a", 3], [""], []])
def test_ids_that_are_not_plain_ascii_text_stay_python_strings(ids):
    from perdoc.reading._rows import _ascii_ids
    assert _ascii_ids(np.array(ids, dtype=object)) is None


def test_ascii_ids_in_a_table_are_checked_and_pickled_as_text():
    """A table given ASCII ids as bytes refuses repeated ids with the text's message, never needs
    the text for an estimate, and copies, pickles and subsets as the text."""
    import pickle

    from perdoc import DocTable, estimate
    from perdoc.errors import InputError
    from perdoc.reading._rows import _ascii_ids
    from perdoc.reading.table import AsciiIds
    n, s = [3.0, 2.0, 4.0], [1.0, 0.0, 2.0]
    with pytest.raises(InputError, match="document id 'd2' appears 2 times"):
        DocTable.from_arrays([3.0, 2.0, 4.0, 1.0], [1.0, 0.0, 2.0, 1.0],
                             doc=_ascii_ids(np.array(["d1", "d2", "d2", "d3"], dtype=object)))
    t = DocTable.from_arrays(n, s, doc=_ascii_ids(np.array(["d1", "d2", "d3"], dtype=object)))
    held = t.__dict__["_doc_ids"]
    assert isinstance(held, AsciiIds)
    est = estimate(t, replicates=0)
    assert held._text is None
    assert est.to_dict() == estimate(DocTable.from_arrays(n, s, doc=["d1", "d2", "d3"]), replicates=0).to_dict()
    back = pickle.loads(pickle.dumps(t))
    assert back.doc.tolist() == t.doc.tolist() == ["d1", "d2", "d3"] and t.take([2]).doc.tolist() == ["d3"]
    # ids out of text order are kept in the given order, as text
    t = DocTable.from_arrays(n, s, doc=_ascii_ids(np.array(["d3", "d1", "d2"], dtype=object)))
    assert t.doc.tolist() == ["d3", "d1", "d2"]


@pytest.mark.parametrize("kind", ["plain", "mixed case", "similar", "lengths"])
def test_text_ids_read_from_a_file_match_the_text_route(tmp_path, kind):
    """Loading string ids (kept as bytes) gives the table, the similar-id refusal and the estimate
    that the ids as unicode text give."""
    import pandas as pd

    from perdoc import estimate, load_chunks
    from perdoc.errors import InputError
    rng = np.random.default_rng(len(kind))
    ids = np.array([f"doc-{i:05d}" for i in rng.permutation(3000)], dtype=object)
    if kind == "mixed case":
        ids = np.array([v.upper() if i % 3 == 0 else v for i, v in enumerate(ids)], dtype=object)
    elif kind == "similar":
        ids[5] = ids[9].upper()
    elif kind == "lengths":
        ids = np.array([v[: 4 + i % 6] + str(i) for i, v in enumerate(ids)], dtype=object)
    df = pd.DataFrame({"doc_id": np.repeat(ids, 2), "hit": rng.integers(0, 2, ids.size * 2)})
    path = tmp_path / "ids.parquet"
    df.to_parquet(path)
    if kind == "similar":
        with pytest.raises(InputError, match="differ only in surrounding spaces, letter case"):
            load_chunks(path, doc="doc_id", score="hit")
        table = load_chunks(path, doc="doc_id", score="hit", allow_similar_ids=True)
        assert table.source["similar_ids"]["groups"] == 1
    else:
        table = load_chunks(path, doc="doc_id", score="hit")
    expected = sorted(set(ids.tolist()))
    assert table.doc.tolist() == expected and table.doc.dtype == np.dtype(f"U{max(map(len, expected))}")
    counts = df.groupby("doc_id").hit.agg(["size", "sum"]).loc[expected]
    np.testing.assert_array_equal(table.n, counts["size"].to_numpy(float))
    np.testing.assert_array_equal(table.s, counts["sum"].to_numpy(float))


@pytest.mark.parametrize("kind", ["ascii", "lengths", "non-ascii"])
@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_text_ids_of_a_file_sorted_by_them_are_put_in_order_here(tmp_path, kind, order):
    """A Parquet file sorted by its text ids (told by its row groups' bounds) is grouped without
    DuckDB's ORDER BY and the groups put in order here; a shuffled file is ordered by DuckDB. Either
    way the table is the one of the ids' text order, with the right sums."""
    import pandas as pd

    from perdoc import load_chunks
    from perdoc.reading.io import _open_source
    rng = np.random.default_rng([len(kind), len(order)])
    ids = [f"doc-{i:05d}" for i in range(4000)]
    if kind == "lengths":
        ids = [v[: 2 + i % 7] + str(i) for i, v in enumerate(ids)]
    elif kind == "non-ascii":
        ids = [("é" if i % 5 == 0 else "") + v for i, v in enumerate(ids)]
    sizes = rng.integers(1, 6, len(ids))
    df = pd.DataFrame({"doc_id": np.repeat(np.array(ids, dtype=object), sizes),
                       "hit": rng.integers(0, 2, int(sizes.sum())).astype("int8")})
    df = df.sort_values("doc_id", kind="stable") if order == "sorted" else df.sample(frac=1.0, random_state=1)
    path = tmp_path / "ids.parquet"
    df.to_parquet(path, row_group_size=1000)
    with _open_source(str(path), None) as src:
        assert src.sorted_by("doc_id") == (order == "sorted")
        assert not src.sorted_by("hit") or order == "sorted"
    table = load_chunks(path, doc="doc_id", score="hit")
    expected = sorted(set(ids))
    assert table.doc.tolist() == expected
    counts = df.groupby("doc_id").hit.agg(["size", "sum"]).loc[expected]
    np.testing.assert_array_equal(table.n, counts["size"].to_numpy(float))
    np.testing.assert_array_equal(table.s, counts["sum"].to_numpy(float))


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_missing_and_blank_ids_are_counted_wherever_their_groups_come(tmp_path, order):
    """Rows without a document id (missing, or blank in two spellings) are refused with their whole
    count, in a file sorted by id (grouped without ORDER BY) and in a shuffled one."""
    import pandas as pd

    from perdoc import load_chunks
    from perdoc.errors import InputError
    ids = [f"d{i:04d}" for i in range(3000)]
    doc = np.array(ids * 2 + [None] * 3 + [""] * 2 + ["  "] * 4, dtype=object)
    df = pd.DataFrame({"doc_id": doc, "hit": np.arange(doc.size) % 2})
    df = df.sort_values("doc_id", na_position="first") if order == "sorted" else df.sample(frac=1.0, random_state=2)
    path = tmp_path / "ids.parquet"
    df.to_parquet(path, row_group_size=700)
    with pytest.raises(InputError, match=r"column 'doc_id' in .*: 9 of 6009 row\(s\) have no document id"):
        load_chunks(path, doc="doc_id", score="hit")


def test_text_ids_in_order_merges_runs_and_sorts_others():
    from perdoc.reading.io import _text_ids_in_order
    from perdoc.reading.table import AsciiIds
    rng = np.random.default_rng(5)
    ids = np.array(sorted(f"k{v}" for v in rng.choice(10**9, 5000, replace=False)), dtype=object)
    for arrangement in ("runs", "shuffled", "non-ascii"):
        part = rng.integers(0, 5, ids.size)
        if arrangement == "runs":
            perm = np.concatenate([np.flatnonzero(part == p) for p in range(5)])
        else:
            perm = rng.permutation(ids.size)
        doc = ids[perm].copy()
        if arrangement == "non-ascii":
            doc[::7] = np.array([v + "ü" for v in doc[::7]], dtype=object)
        res = _text_ids_in_order({"doc": doc, "n": perm.astype(float), "s": -perm.astype(float)})
        want = np.argsort(doc.astype(str), kind="stable")
        got_doc = res["doc"].build() if isinstance(res["doc"], AsciiIds) else res["doc"]
        assert isinstance(res["doc"], AsciiIds) == (arrangement != "non-ascii")
        assert got_doc.tolist() == doc[want].tolist()
        np.testing.assert_array_equal(res["n"], perm[want].astype(float))
        np.testing.assert_array_equal(res["s"], -perm[want].astype(float))


@pytest.mark.parametrize("bad", [None, "blank", "text", "both"])
def test_csv_text_scores_count_bad_fields_in_a_second_pass_only_when_there_are_some(tmp_path, monkeypatch, bad):
    """A CSV score column read as text (booleans) is grouped once, counting the rows whose score is
    not a number together; only when there are some is it grouped again to count missing and
    non-numeric scores apart, with an example (a field far past the first rows included)."""
    from perdoc import load_chunks
    from perdoc.errors import InputError
    from perdoc.reading import io as pio
    rng = np.random.default_rng(7)
    rows = 40_000
    ids = rng.integers(0, 500, rows)
    hits = np.where(rng.random(rows) < 0.3, "true", "false").astype(object)
    if bad in ("blank", "both"):
        hits[rows - 10] = ""
        hits[rows - 11] = "   "
    if bad in ("text", "both"):
        hits[rows - 5] = "maybe"
    path = tmp_path / "bools.csv"
    path.write_text("doc_id,hit\n" + "".join(f"d{i},{h}\n" for i, h in zip(ids, hits)))
    fetches = []
    original = pio._Source.fetch
    monkeypatch.setattr(pio._Source, "fetch", lambda self, sql, params=None: (
        fetches.append(sql), original(self, sql, params))[1])
    if bad is None:
        table = load_chunks(path, doc="doc_id", score="hit")
        grouped = [q for q in fetches if "GROUP BY g" in q]
        assert len(grouped) == 1 and "n_bad" in grouped[0] and "ex_text" not in grouped[0]
        want = {f"d{i}": (int((ids == i).sum()), int(((ids == i) & (hits == "true")).sum())) for i in np.unique(ids)}
        assert dict(zip(table.doc.tolist(), zip(table.n.astype(int).tolist(), table.s.astype(int).tolist()))) == want
        return
    expected = {"blank": r"2 row\(s\) have a missing score;",
                "text": r"1 row\(s\) have a non-numeric score \(e.g. 'maybe'\);",
                "both": r"2 row\(s\) have a missing score, 1 row\(s\) have a non-numeric score \(e.g. 'maybe'\);"}[bad]
    with pytest.raises(InputError, match=r"column 'hit' in .*: " + expected):
        load_chunks(path, doc="doc_id", score="hit")
    assert sum("GROUP BY g" in q for q in fetches) == 2


def test_ordinary_size_brackets_the_largest_score_by_the_sums():
    from perdoc.reading.io import _ordinary_size
    from perdoc.reading._rows import _scale_for
    rng = np.random.default_rng(9)
    for size in (1.0, 2.0 ** 150, 2.0 ** 199, 2.0 ** 210, 2.0 ** -150, 2.0 ** -199, 2.0 ** -210, 2.0 ** -600):
        x = rng.random(500) * size
        doc = np.repeat(np.arange(50), 10)
        n = np.bincount(doc).astype(float)
        s, q = np.bincount(doc, x), np.bincount(doc, x * x)
        ordinary = _ordinary_size(n, s, q)
        # (never "ordinary" where the scores need another scale; unsure only near 2^+-200)
        assert not ordinary or _scale_for(float(np.max(np.abs(x)))) == 1.0, size
        assert ordinary == (2.0 ** -190 <= size <= 2.0 ** 190), size
    zeros = np.zeros(5)
    assert not _ordinary_size(np.ones(5), zeros, zeros)     # (all 0, or too small to square: look)
    assert not _ordinary_size(np.ones(2), np.array([1.0, np.nan]), np.array([1.0, 1.0]))


@pytest.mark.parametrize("case", ["proportion", "score", "zero-one spelled 0.00", "tiny", "huge"])
@pytest.mark.parametrize("looked", [True, False])
def test_scores_of_unknown_range_get_their_kind_and_scale_from_one_count(tmp_path, monkeypatch, case, looked):
    """A CSV file's float scores: the pass counts those outside [0, 1] instead of finding each
    document's smallest and largest; the kind of metric, the scale and the sums are what the scores
    say."""
    from perdoc import load_chunks
    rng = np.random.default_rng(len(case))
    rows = 60000
    doc = rng.integers(0, 400, rows)
    x = {"proportion": rng.random(rows), "score": rng.normal(0, 2, rows),
         "zero-one spelled 0.00": (rng.random(rows) < 0.3).astype(float),
         "tiny": rng.random(rows) * 1e-250, "huge": rng.random(rows) * 1e250}[case]
    fmt = "{:.2f}" if case == "zero-one spelled 0.00" else "{!r}"
    path = tmp_path / "s.csv"
    with open(path, "w") as fh:
        fh.write("doc_id,y\n" + "".join(f"d{d},{fmt.format(v)}\n" for d, v in zip(doc.tolist(), x.tolist())))
    # a file large enough to be looked at (whose first rows do not look 0/1 here) gets its 0/1 test
    # from the count outside [0, 1] and q = s, confirmed by _only_01; a smaller one counts the scores
    # other than 0 and 1 in the pass
    monkeypatch.setattr(pio, "_LOOK_MIN_BYTES", 1000 if looked else 1 << 40)
    passes = []
    real = pio._Source.fetch
    monkeypatch.setattr(pio._Source, "fetch", lambda self, sql, params=None: passes.append(sql) or real(self, sql, params))
    t = load_chunks(path, "doc_id", "y")
    assert len(passes) == {"zero-one spelled 0.00": 2 if looked else 1, "tiny": 3, "huge": 4}.get(case, 1), passes
    kind = {"proportion": "proportion", "score": "score", "zero-one spelled 0.00": "binary",
            "tiny": "proportion", "huge": "score"}[case]
    assert t.source["metric"] == kind
    order = np.argsort(np.array([f"d{d}" for d in range(400)]))
    scale = t.scale
    assert (scale == 1.0) == (case not in ("tiny", "huge"))
    y = x * scale       # (the sums are kept rescaled, by a power of two)
    np.testing.assert_allclose(t.s, np.bincount(doc, y, minlength=400)[order], rtol=1e-12)
    np.testing.assert_allclose(t.q, np.bincount(doc, y * y, minlength=400)[order], rtol=1e-12)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_zero_one_scores_whose_first_rows_were_not_looked_at_take_one_pass(tmp_path, monkeypatch, fmt):
    """JSON Lines (never looked at) and a CSV file too small to be: their 0/1 scores are told from the
    one pass, which counts the scores other than 0 and 1 (no second pass, whatever the file's size)."""
    from perdoc import load_chunks
    monkeypatch.setattr(pio, "_LOOK_MIN_BYTES", 1000 if fmt == "jsonl" else 1 << 40)
    rng = np.random.default_rng(2)
    doc, hit = rng.integers(0, 50, 3000), (rng.random(3000) < 0.4).astype(float)
    path = tmp_path / f"r.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(f'{{"doc_id": "d{d}", "y": {h!r}}}\n' for d, h in zip(doc.tolist(), hit.tolist())))
    else:
        path.write_text("doc_id,y\n" + "".join(f"d{d},{h!r}\n" for d, h in zip(doc.tolist(), hit.tolist())))
    passes = []
    real = pio._Source.fetch
    monkeypatch.setattr(pio._Source, "fetch", lambda self, sql, params=None: passes.append(sql) or real(self, sql, params))
    t = load_chunks(path, "doc_id", "y")
    assert t.source["metric"] == "binary" and len(passes) == 1
    assert float(np.sum(t.s)) == float(hit.sum())


@pytest.mark.parametrize("case", ["integers", "negative", "zero-padded later", "spaces later", "beyond int64",
                                  "text later", "missing later"])
def test_csv_ids_that_spell_integers_give_the_text_routes_table(tmp_path, monkeypatch, case):
    """A CSV file whose first ids are integers as their text writes them groups each id as the
    integer it spells, and the ids that spell none (or spell one otherwise: "007", " 7") keep their
    text: the table, its order, its refusals and its similar-ids check are the text route's."""
    rng = np.random.default_rng(len(case))
    k, rows = 3000, 20000
    ids = [str(v) for v in rng.choice(10**9, k, replace=False) - (5 * 10**8 if case == "negative" else 0)]
    doc = [ids[i] for i in rng.integers(0, k, rows)]
    late = range(rows - 50, rows)
    for j in late:
        doc[j] = {"zero-padded later": "00" + doc[j], "spaces later": " " + doc[j] + " ",
                  "beyond int64": "9" * 19 + str(j % 7), "text later": f"doc-{j % 9}",
                  "missing later": "" if j % 2 else "  "}.get(case, doc[j])
    path = tmp_path / "ids.csv"
    with open(path, "w") as fh:
        fh.write("doc_id,hit\n" + "".join(f'"{d}",{int(h)}\n' for d, h in zip(doc, rng.random(rows) < 0.3)))
    seen = []
    real = pio._digit_ids
    monkeypatch.setattr(pio, "_digit_ids", lambda src, name: seen.append(real(src, name)) or seen[-1])
    options = {"allow_similar_ids": case == "spaces later"}
    if case == "missing later":
        with pytest.raises(InputError, match=r"column 'doc_id' in .*: 50 of 20000 row\(s\) have no document id"):
            pio.load_chunks(path, "doc_id", "hit", **options)
        assert seen == [True]
        return
    got = pio.load_chunks(path, "doc_id", "hit", **options)
    assert seen == [True]
    monkeypatch.setattr(pio, "_digit_ids", lambda src, name: False)
    want = pio.load_chunks(path, "doc_id", "hit", **options)
    _same_table(got, want)
    if case == "spaces later":
        assert got.source["similar_ids"]


_KEYED_CASES = ["short", "sixteen", "seventeen to thirty-two", "thirty-two", "prefixes", "letter case", "spaces",
                "long later", "non-ascii later", "nul later", "missing later"]


@pytest.mark.parametrize("fmt,case", [("parquet", c) for c in _KEYED_CASES]
                         + [("csv", c) for c in _KEYED_CASES if c != "nul later"])   # (a NUL: Parquet only)
def test_short_ascii_ids_read_as_keys_give_the_text_routes_table(tmp_path, monkeypatch, fmt, case):
    """Text ids whose first ones seen are ASCII of at most 32 bytes come back as integer keys, are
    ordered by DuckDB as integers and laid out here as bytes; an id the keys cannot hold (longer,
    other characters, a NUL, missing) sends the pass back to the text route. Either way the table,
    its order, its refusals and its similar-ids check are the text route's."""
    rng = np.random.default_rng(len(case) + len(fmt))
    k, rows = 3000, 20000
    width = {"sixteen": 16, "seventeen to thirty-two": 17 + int(rng.integers(0, 16)), "thirty-two": 32}.get(case, 9)
    ids = [f"doc-{v:0{width - 4}d}" for v in rng.choice(10 ** min(width - 4, 12), k, replace=False)]
    if case == "seventeen to thirty-two":
        ids = [v[: 17 + i % 16] for i, v in enumerate(ids)]
        ids = list(dict.fromkeys(ids))
    elif case == "prefixes":
        ids = [v[: 1 + i % 9] + ("!" if i % 3 == 0 else "") for i, v in enumerate(ids)]
        ids = list(dict.fromkeys(ids + ["d", "do", "doc", "doc-", "doc-!"]))
    elif case == "letter case":
        ids[7] = ids[8].upper()
    elif case == "spaces":
        ids = [v + " " if i % 5 == 0 else v for i, v in enumerate(ids)]
        ids[7] = " " + ids[8]
    doc = [ids[i] for i in rng.integers(0, len(ids), rows)]
    doc[:len(ids)] = ids        # (every id has a row)
    if fmt == "parquet":
        rng.shuffle(doc)
    late = range(rows - 40, rows)   # (a CSV file's first 256 KiB are seen; a Parquet file's bounds)
    for j in late:
        doc[j] = {"long later": doc[j] + "x" * 40, "non-ascii later": doc[j] + "é",
                  "nul later": doc[j] + "\x00a", "missing later": None if j % 2 else ""}.get(case, doc[j])
    hit = (rng.random(rows) < 0.3).astype(np.int8)
    if fmt == "parquet":
        path = tmp_path / "ids.parquet"
        pq.write_table(pa.table({"doc_id": pa.array(doc, pa.string()), "hit": hit}), path, row_group_size=4000)
    else:
        path = tmp_path / "ids.csv"
        with open(path, "w") as fh:
            fh.write("doc_id,hit\n" + "".join(f'"{"" if d is None else d}",{h}\n' for d, h in zip(doc, hit)))
    routes = []
    real = pio._keyed_ids_in_text_order
    monkeypatch.setattr(pio, "_keyed_ids_in_text_order",
                        lambda res, words: routes.append(words) or (lambda out: routes.append(out is not None) or out)(real(res, words)))
    options = {"allow_similar_ids": case in ("letter case", "spaces")}
    fallback = case.endswith("later")
    if case == "missing later":
        with pytest.raises(InputError, match=r"column 'doc_id' in .*: 40 of 20000 row\(s\) have no document id"):
            pio.load_chunks(path, "doc_id", "hit", **options)
        assert routes == [1, False]
        return
    got = pio.load_chunks(path, "doc_id", "hit", **options)
    assert routes == [1 if width <= 16 else 2, not fallback]
    monkeypatch.setattr(pio, "_id_words", lambda src, name: 0)
    want = pio.load_chunks(path, "doc_id", "hit", **options)
    _same_table(got, want)
    assert list(got.doc) == sorted(set(d for d in doc))
    if case in ("letter case", "spaces"):
        assert got.source["similar_ids"]
        with pytest.raises(InputError, match="differ only in surrounding spaces, letter case"):
            pio.load_chunks(path, "doc_id", "hit")


def test_the_ids_seen_before_the_pass_choose_how_many_words_hold_each(tmp_path):
    from perdoc.reading.io import _id_words, _open_source
    for ids, words in ((["a", "b" * 16], 1), (["a", "b" * 17], 2), (["c" * 32], 2), (["c" * 33], 0),
                       (["doc-é"], 0), (["a\x00b"], 0), ([None, None], 0)):
        path = tmp_path / f"ids{len(str(ids))}.parquet"
        pq.write_table(pa.table({"doc_id": pa.array(ids * 3, pa.string()), "n": pa.array(range(3 * len(ids)))}), path,
                       row_group_size=2)
        with _open_source(str(path), None) as src:
            assert _id_words(src, "doc_id") == words, ids
            assert _id_words(src, "n") == 0


def test_blank_text_scores_in_a_parquet_file_without_nulls_are_missing(tmp_path):
    """A score column stored as text whose footer counts no nulls: its blank fields are still missing
    scores, refused as the CSV of the same rows refuses them (they were counted as rows of score 0)."""
    path = tmp_path / "blank.parquet"
    pq.write_table(pa.table({"doc": ["a", "a", "b", "b"], "score": ["1", "", "1", "  "]}), path)
    csv_path = tmp_path / "blank.csv"
    csv_path.write_text('doc,score\na,1\na,\nb,1\nb,"  "\n')
    for p in (path, csv_path):
        with pytest.raises(InputError, match=r"column 'score' in .*: 2 row\(s\) have a missing score"):
            pio.load_chunks(p, "doc", "score", metric="binary")


def test_a_csv_field_longer_than_the_csv_modules_limit_in_the_first_rows(tmp_path):
    """The first rows are looked at with Python's csv module, whose fields stop at 128 KiB: a longer
    one (a chunk's text) no longer raises its error; the file loads."""
    path = tmp_path / "long.csv"
    path.write_text("doc,score,text\na,1," + "x" * 131073 + "\nb,0,y\n")
    t = pio.load_chunks(path, "doc", "score")
    assert list(t.n) == [1.0, 1.0] and list(t.s) == [1.0, 0.0]


def test_a_dataframe_column_duckdb_cannot_read(tmp_path):
    """A DataFrame column of a type DuckDB cannot read (a period) is left out when perdoc does not
    read it, and named in one line when it does (it was a DuckDB traceback)."""
    import pandas as pd
    base = {"doc": ["a", "a", "b", "b"], "score": [1, 0, 1, 1]}
    t = pio.load_chunks(pd.DataFrame({**base, "m": pd.period_range("2024-01", periods=4, freq="M")}), "doc", "score")
    assert list(t.n) == [2.0, 2.0] and list(t.s) == [1.0, 2.0]
    bad = pd.DataFrame({"doc": base["doc"], "score": pd.period_range("2024-01", periods=4, freq="M")})
    with pytest.raises(InputError, match=r"DuckDB cannot read its column 'score' of type period\[M\]"):
        pio.load_chunks(bad, "doc", "score")


def test_a_score_column_with_no_value_at_all_is_missing_scores():
    """A DataFrame score column holding only None has DuckDB's type NULL: its rows are missing scores,
    refused as a column of NaN is (it was "has type NULL; it must hold numbers")."""
    import pandas as pd
    for values in ([None, None, None], [float("nan")] * 3):
        with pytest.raises(InputError, match=r"column 'score' in the DataFrame: 3 row\(s\) have a missing score"):
            pio.load_chunks(pd.DataFrame({"doc": ["a", "b", "c"], "score": values}), "doc", "score")
