"""Tests for perdoc.io: loading chunk-level and per-document data, writing the per-document table."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from perdoc.errors import ColumnError, DataFileError, InputError, ParameterError, PerdocError
from perdoc.io import GROUP_BY_SQL, load_chunks, load_docs, write_table
from perdoc.table import DocTable


# ---------------------------------------------------------------------- helpers
def one_line(err: pytest.ExceptionInfo) -> str:
    msg = str(err.value)
    assert "\n" not in msg and "\r" not in msg, msg
    assert len(msg) < 400, msg
    return msg


def raises(cls, pattern, fn, *args, **kwargs) -> str:
    with pytest.raises(cls, match=pattern) as err:
        fn(*args, **kwargs)
    return one_line(err)


def write_text(path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def random_chunks(seed=0, rows=3000, docs=150) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, docs, size=rows)
    return pd.DataFrame({
        "doc_id": [f"doc-{i:04d}" for i in ids],
        "score": rng.normal(0.5, 0.3, size=rows),
        "other": rng.integers(0, 9, size=rows),
    })


def expected(df: pd.DataFrame, doc="doc_id", score="score") -> pd.DataFrame:
    x = df[score].astype(float)
    g = pd.DataFrame({"doc": df[doc].astype(str), "x": x, "x2": x * x}).groupby("doc", sort=True)
    return pd.DataFrame({"n": g.size(), "s": g["x"].sum(), "q": g["x2"].sum()})


def assert_matches(table: DocTable, exp: pd.DataFrame) -> None:
    assert list(table.doc) == list(exp.index)
    np.testing.assert_array_equal(table.n, exp["n"].to_numpy(float))
    np.testing.assert_allclose(table.s, exp["s"].to_numpy(), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(table.q, exp["q"].to_numpy(), rtol=1e-12, atol=1e-9)


def save(df: pd.DataFrame, tmp_path, fmt: str) -> str:
    if fmt == "csv":
        path = tmp_path / "chunks.csv"
        df.to_csv(path, index=False)
    elif fmt == "tsv.gz":
        path = tmp_path / "chunks.tsv.gz"
        df.to_csv(path, index=False, sep="\t", compression="gzip")
    elif fmt == "parquet":
        path = tmp_path / "chunks.parquet"
        df.to_parquet(path, index=False)
    elif fmt == "jsonl":
        path = tmp_path / "chunks.jsonl"
        df.to_json(path, orient="records", lines=True, double_precision=15)
    else:  # pragma: no cover
        raise AssertionError(fmt)
    return str(path)


# ---------------------------------------------------------------------- aggregation
@pytest.mark.parametrize("fmt", ["csv", "tsv.gz", "parquet", "jsonl", "dataframe"])
def test_aggregation_matches_pandas_groupby(tmp_path, fmt):
    df = random_chunks(seed=1)
    source = df if fmt == "dataframe" else save(df, tmp_path, fmt)
    table = load_chunks(source, "doc_id", "score")
    exp = expected(df)
    if fmt == "jsonl":  # JSON text keeps 15 significant digits
        assert list(table.doc) == list(exp.index)
        np.testing.assert_allclose(table.s, exp["s"], rtol=1e-9)
        np.testing.assert_allclose(table.q, exp["q"], rtol=1e-9)
        np.testing.assert_array_equal(table.n, exp["n"])
    else:
        assert_matches(table, exp)
    assert table.K == exp.shape[0]
    assert table.source["rows"] == len(df)
    assert table.source["format"] == {"tsv.gz": "tsv"}.get(fmt, fmt)
    if fmt == "dataframe":
        assert table.source["path"] is None and table.source["bytes"] is None
    else:
        assert table.source["path"] == source
        assert table.source["bytes"] == os.path.getsize(source)


def test_fmt_overrides_extension(tmp_path):
    df = random_chunks(seed=2, rows=200, docs=20)
    path = tmp_path / "chunks.data"
    df.to_parquet(path, index=False)
    assert_matches(load_chunks(path, "doc_id", "score", fmt="parquet"), expected(df))
    txt = tmp_path / "chunks.txt"
    df.to_csv(txt, index=False)
    assert_matches(load_chunks(str(txt), "doc_id", "score", fmt="csv"), expected(df))


def test_integer_scores_and_binary_q(tmp_path):
    df = pd.DataFrame({"doc_id": ["a", "a", "b", "b", "b", "c"], "score": [1, 0, 1, 1, 0, 0]})
    for fmt in ("csv", "parquet", "jsonl"):
        table = load_chunks(save(df, tmp_path, fmt), "doc_id", "score")
        assert list(table.doc) == ["a", "b", "c"]
        np.testing.assert_array_equal(table.n, [2, 3, 1])
        np.testing.assert_array_equal(table.s, [1, 2, 0])
        np.testing.assert_array_equal(table.q, [1, 2, 0])


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl", "dataframe"])
def test_boolean_scores_count_true_as_one(tmp_path, fmt):
    df = pd.DataFrame({"doc_id": ["a", "a", "b", "b", "b", "c"],
                       "score": [True, False, True, True, False, False]})
    table = load_chunks(df if fmt == "dataframe" else save(df, tmp_path, fmt), "doc_id", "score")
    np.testing.assert_array_equal(table.n, [2, 3, 1])
    np.testing.assert_array_equal(table.s, [1, 2, 0])
    np.testing.assert_array_equal(table.q, [1, 2, 0])


def test_text_booleans_and_spaces_in_csv(tmp_path):
    path = write_text(tmp_path / "c.csv", "doc_id,score\na,true\na,FALSE\nb, 1 \nb,0.5\n")
    table = load_chunks(path, "doc_id", "score")
    np.testing.assert_array_equal(table.s, [1.0, 1.5])
    np.testing.assert_array_equal(table.q, [1.0, 1.25])


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl", "dataframe"])
def test_integer_doc_ids_become_text(tmp_path, fmt):
    df = pd.DataFrame({"doc_id": [10, 2, 2, 10, 33], "score": [1.0, 0.0, 1.0, 0.5, 0.25]})
    table = load_chunks(df if fmt == "dataframe" else save(df, tmp_path, fmt), "doc_id", "score")
    assert list(table.doc) == ["10", "2", "33"]      # sorted as text
    np.testing.assert_array_equal(table.n, [2, 2, 1])
    np.testing.assert_allclose(table.s, [1.5, 1.0, 0.25])


def test_csv_keeps_doc_ids_verbatim(tmp_path):
    path = write_text(tmp_path / "c.csv", 'doc_id,score\n007,1\n7,0\n"x,y",1\n')
    assert list(load_chunks(path, "doc_id", "score").doc) == ["007", "7", "x,y"]


def test_json_array_file(tmp_path):
    rows = [{"doc_id": "a", "score": 1}, {"doc_id": "b", "score": 0}, {"doc_id": "a", "score": 0.5}]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(rows))
    table = load_chunks(path, "doc_id", "score")
    np.testing.assert_array_equal(table.n, [2, 1])
    np.testing.assert_array_equal(table.s, [1.5, 0])


def test_other_columns_may_be_messy(tmp_path):
    path = write_text(tmp_path / "c.csv", "doc_id,score,text\na,1,hello\na,0,\nb,1,\"x,\"\"y\"\"\"\n")
    table = load_chunks(path, "doc_id", "score")
    np.testing.assert_array_equal(table.n, [2, 1])


def test_group_by_sql_is_documented():
    assert GROUP_BY_SQL == ("SELECT doc_id, COUNT(*) AS n, SUM(score) AS s, SUM(score*score) AS q "
                            "FROM results GROUP BY doc_id")


# ---------------------------------------------------------------------- aggregated input
@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_write_table_round_trip(tmp_path, ext):
    df = random_chunks(seed=3)
    table = load_chunks(df, "doc_id", "score")
    path = tmp_path / f"docs.{ext}"
    write_table(table, path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]      # no temp file left behind
    back = load_docs(path, "doc", "n", "s", "q")
    assert list(back.doc) == list(table.doc)
    np.testing.assert_array_equal(back.n, table.n)
    np.testing.assert_array_equal(back.s, table.s)                   # exact: floats round-trip
    np.testing.assert_array_equal(back.q, table.q)
    written = pd.read_csv(path) if ext == "csv" else pd.read_parquet(path)
    assert list(written.columns) == ["doc", "n", "s", "q", "rate"]
    assert written["n"].dtype.kind == "i"
    np.testing.assert_allclose(written["rate"], table.rate)


def test_write_table_without_q_and_overwrite(tmp_path):
    table = DocTable.from_arrays([2, 3], [1.5, 4.0], doc=["a", "b"])
    assert table.q is None
    path = tmp_path / "docs.csv"
    path.write_text("old content\n")
    table.write(path)
    written = pd.read_csv(path)
    assert list(written.columns) == ["doc", "n", "s", "rate"]
    back = load_docs(path, "doc", "n", "s")
    np.testing.assert_array_equal(back.s, [1.5, 4.0])


def test_write_table_bad_paths(tmp_path):
    table = DocTable.from_arrays([2, 3], [1, 2], doc=["a", "b"])
    raises(DataFileError, r"unknown extension '\.xlsx'", write_table, table, tmp_path / "t.xlsx")
    raises(DataFileError, "folder not found", write_table, table, tmp_path / "nope" / "t.csv")


def test_write_failure_leaves_nothing(tmp_path, monkeypatch):
    table = DocTable.from_arrays([2, 3], [1, 2], doc=["a", "b"])
    path = tmp_path / "t.parquet"

    def boom(self, target, **kwargs):
        with open(target, "wb") as fh:
            fh.write(b"PAR1 half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", boom)
    raises(DataFileError, "cannot write .*No space left", write_table, table, path)
    assert list(tmp_path.iterdir()) == []


def test_load_docs_warehouse_output(tmp_path):
    path = write_text(tmp_path / "agg.csv", "doc_id,n_chunks,s,q\nb,3,2,2\na,2,1,1\nc,1,0,0\n")
    table = load_docs(path, "doc_id", "n_chunks", "s", "q")
    assert list(table.doc) == ["a", "b", "c"]
    np.testing.assert_array_equal(table.n, [2, 3, 1])
    np.testing.assert_array_equal(table.s, [1, 2, 0])
    assert table.source["rows"] == 3 and table.source["format"] == "csv"


def test_load_docs_without_q_assumes_binary(tmp_path):
    df = pd.DataFrame({"doc_id": [1, 2, 3], "n": [4, 5, 6], "s": [1, 5, 0]})
    table = load_docs(df, "doc_id", "n", "s")
    assert table.q_assumed_binary
    np.testing.assert_array_equal(table.q, table.s)


def test_load_docs_json_lines(tmp_path):
    path = tmp_path / "agg.jsonl"
    path.write_text('{"d":"a","n":2,"s":1.5,"q":1.25}\n{"d":"b","n":1,"s":0,"q":0}\n')
    table = load_docs(path, "d", "n", "s", "q")
    np.testing.assert_array_equal(table.q, [1.25, 0])


# ---------------------------------------------------------------------- bad input: files
def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.csv")
    msg = raises(DataFileError, "data file not found", load_chunks, path, "doc_id", "score")
    assert msg == f"data file not found: {path}"


def test_directory(tmp_path):
    raises(DataFileError, "is a directory", load_chunks, tmp_path, "doc_id", "score")


def test_unknown_extension(tmp_path):
    path = write_text(tmp_path / "chunks.xlsx", "doc_id,score\na,1\n")
    raises(DataFileError, r"cannot tell the format of .*chunks\.xlsx.*'\.xlsx'.*fmt=", load_chunks,
           path, "doc_id", "score")
    raises(ParameterError, "fmt='excel' is not a known format", load_chunks, path, "doc_id", "score",
           fmt="excel")


def test_not_a_source():
    raises(ParameterError, "file path or a pandas DataFrame", load_chunks, [1, 2, 3], "doc_id", "score")


@pytest.mark.parametrize("ext", ["csv", "parquet", "jsonl"])
def test_empty_file(tmp_path, ext):
    path = tmp_path / f"empty.{ext}"
    path.write_bytes(b"")
    raises(InputError, "has no data rows", load_chunks, path, "doc_id", "score")


def test_header_only(tmp_path):
    path = write_text(tmp_path / "h.csv", "doc_id,score\n")
    raises(InputError, r"h\.csv has no data rows", load_chunks, path, "doc_id", "score")
    pq = tmp_path / "h.parquet"
    pd.DataFrame({"doc_id": pd.Series([], dtype=str), "score": pd.Series([], dtype=float)}).to_parquet(pq)
    raises(InputError, "has no data rows", load_chunks, pq, "doc_id", "score")
    agg = write_text(tmp_path / "agg.csv", "doc,n,s\n")
    raises(InputError, r"agg\.csv has no data rows", load_docs, agg, "doc", "n", "s")
    raises(InputError, "has no data rows", load_chunks, pd.DataFrame({"doc_id": [], "score": []}),
           "doc_id", "score")


@pytest.mark.parametrize("cut", ["half", "tail", "garbage"])
def test_corrupt_parquet(tmp_path, cut):
    good = tmp_path / "good.parquet"
    random_chunks(rows=500).to_parquet(good)
    data = good.read_bytes()
    bad = tmp_path / "bad.parquet"
    bad.write_bytes({"half": data[: len(data) // 2], "tail": data[:-8],
                     "garbage": b"this is not a parquet file at all\n" * 20}[cut])
    raises(DataFileError, r"cannot read .*bad\.parquet as Parquet: .*truncated or not a Parquet file",
           load_chunks, bad, "doc_id", "score")


def test_invalid_json_line(tmp_path):
    lines = ['{"doc_id": "a", "score": 1}'] * 5 + ['{"doc_id": "b", "score": }'] + ['{"doc_id": "c", "score": 0}'] * 5
    path = write_text(tmp_path / "c.jsonl", "\n".join(lines) + "\n")
    raises(DataFileError, r"c\.jsonl: line 6 is not valid JSON", load_chunks, path, "doc_id", "score")


def test_invalid_json_line_after_type_sample(tmp_path):
    lines = ['{"doc_id": "a%d", "score": 1}' % i for i in range(25000)] + ["{oops"]
    path = write_text(tmp_path / "c.jsonl", "\n".join(lines) + "\n")
    raises(DataFileError, r"line 25001 is not valid JSON", load_chunks, path, "doc_id", "score")


def test_json_lines_that_are_not_objects(tmp_path):
    path = write_text(tmp_path / "c.jsonl", '{"doc_id": "a", "score": 1}\n[1, 2]\n')
    raises(DataFileError, "not all JSON objects", load_chunks, path, "doc_id", "score")


def test_csv_not_utf8(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(b"doc_id,score\na,1\nb,\xff\xfe\n")
    raises(DataFileError, r"cannot read .*c\.csv as CSV: line 3: not valid UTF-8", load_chunks, path,
           "doc_id", "score")
    # fixed bytes that are not UTF-8 (random ones sometimes held an early newline after a valid prefix)
    path.write_bytes(bytes(range(0x80, 0xc0)) + b"doc_id,score\xff\n")
    raises(DataFileError, r"as CSV: line 1 \(the header\) is not UTF-8", load_chunks, path, "doc_id", "score")


def test_csv_unterminated_quote(tmp_path):
    path = write_text(tmp_path / "c.csv", 'doc_id,score\na,1\nb,"2\nc,1\n')
    raises(DataFileError, r"c\.csv as CSV: line 3: .*unterminated quote", load_chunks, path, "doc_id", "score")


def test_bad_gzip(tmp_path):
    path = tmp_path / "c.csv.gz"
    path.write_bytes(b"not gzip at all")
    raises(DataFileError, "not a valid gzip file", load_chunks, path, "doc_id", "score")


@pytest.mark.parametrize("line,found,expected", [("b,1,9", 3, 2), ("b", 1, 2)])
def test_ragged_csv_rows(tmp_path, line, found, expected):
    path = write_text(tmp_path / "r.csv", f"doc_id,score\na,1\n{line}\nc,0\n")
    raises(DataFileError, rf"r\.csv: line 3 has {found} field\(s\) but the header has {expected}",
           load_chunks, path, "doc_id", "score")


def test_ragged_row_deep_in_a_big_file(tmp_path):
    body = "".join(f"d{i % 500},{i % 2}\n" for i in range(60000))
    path = write_text(tmp_path / "r.csv", "doc_id,score\n" + body + "x,1,2\n" + body)
    raises(DataFileError, r"line 60002 has 3 field", load_chunks, path, "doc_id", "score")


# ---------------------------------------------------------------------- bad input: columns
def test_misspelled_column(tmp_path):
    df = random_chunks(rows=50)
    for fmt in ("csv", "parquet", "jsonl"):
        path = save(df, tmp_path, fmt)
        msg = raises(ColumnError, r"column 'scroe' not found in .*; did you mean 'score'\? "
                     r"\(columns: doc_id, score, other\)", load_chunks, path, "doc_id", "scroe")
        assert path in msg
    raises(ColumnError, "column 'Doc_ID' not found in the DataFrame; did you mean 'doc_id'",
           load_chunks, df, "Doc_ID", "score")
    raises(ColumnError, r"column 'zzz' not found in .*\(columns: doc_id, score, other\)$",
           load_chunks, df, "zzz", "score")


def test_same_column_twice(tmp_path):
    raises(ColumnError, "doc and score both name column 'doc_id'", load_chunks, random_chunks(rows=20),
           "doc_id", "doc_id")
    raises(ColumnError, "n and s both name column 'n'", load_docs, random_chunks(rows=20), "doc_id", "n", "n")


def test_repeated_header_name(tmp_path):
    path = write_text(tmp_path / "c.csv", "doc_id,score,score\na,1,2\nb,0,1\n")
    raises(ColumnError, "column 'score' appears more than once in the header", load_chunks, path, "doc_id", "score")


def test_score_column_of_unusable_type(tmp_path):
    df = pd.DataFrame({"doc_id": ["a", "b"], "score": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    raises(ColumnError, "column 'score' in the DataFrame has type TIMESTAMP.*numbers or booleans",
           load_chunks, df, "doc_id", "score")


# ---------------------------------------------------------------------- bad input: values
def test_fewer_than_two_documents(tmp_path):
    path = write_text(tmp_path / "one.csv", "doc_id,score\na,1\na,0\n")
    raises(InputError, r"one\.csv: the data have 1 document; need at least 2", load_chunks, path, "doc_id", "score")


def test_missing_document_ids(tmp_path):
    path = write_text(tmp_path / "c.csv", 'doc_id,score\na,1\n,0\n"",1\nb,1\n')
    raises(InputError, r"column 'doc_id' in .*c\.csv: 2 of 4 row\(s\) have no document id", load_chunks,
           path, "doc_id", "score")
    pq = tmp_path / "c.parquet"
    pd.DataFrame({"doc_id": ["a", None, "b"], "score": [1.0, 0.0, 1.0]}).to_parquet(pq)
    raises(InputError, r"1 of 3 row\(s\) have no document id", load_chunks, pq, "doc_id", "score")
    jl = write_text(tmp_path / "c.jsonl", '{"doc_id":"a","score":1}\n{"score":1}\n{"doc_id":null,"score":1}\n')
    raises(InputError, r"2 of 3 row\(s\) have no document id", load_chunks, jl, "doc_id", "score")


def test_missing_scores(tmp_path):
    path = write_text(tmp_path / "c.csv", "doc_id,score\na,1\nb,\nc,0\nc,\n")
    raises(InputError, r"column 'score' in .*c\.csv: 2 row\(s\) have a missing score; every score must be",
           load_chunks, path, "doc_id", "score")
    df = pd.DataFrame({"doc_id": ["a", "b", "c"], "score": [1.0, None, 0.0]})
    raises(InputError, r"column 'score' in the DataFrame: 1 row\(s\) have a missing score", load_chunks,
           df, "doc_id", "score")


def test_non_numeric_scores_are_reported_not_silently_text(tmp_path):
    body = "".join(f"d{i % 50},{i % 2}\n" for i in range(30000))   # well past the type-sniffing sample
    path = write_text(tmp_path / "c.csv", "doc_id,score\n" + body + "zz,n/a\nzz,oops\n")
    raises(InputError, r"column 'score' in .*c\.csv: 2 row\(s\) have a non-numeric score \(e\.g\. '(n/a|oops)'\)",
           load_chunks, path, "doc_id", "score")
    jl = write_text(tmp_path / "c.jsonl", '{"doc_id":"a","score":1}\n{"doc_id":"b","score":"high"}\n')
    raises(InputError, r"1 row\(s\) have a non-numeric score \(e\.g\. 'high'\)", load_chunks, jl, "doc_id", "score")
    df = pd.DataFrame({"doc_id": ["a", "b", "c"], "score": [1, "x", 0.5]})
    raises(InputError, r"1 row\(s\) have a non-numeric score \(e\.g\. 'x'\)", load_chunks, df, "doc_id", "score")


def test_nan_and_infinite_scores(tmp_path):
    path = write_text(tmp_path / "c.csv", "doc_id,score\na,1\nb,nan\nc,inf\nd,-Infinity\ne,0\n")
    raises(InputError, r"column 'score' in .*: 1 row\(s\) have a NaN score, 2 row\(s\) have an infinite score",
           load_chunks, path, "doc_id", "score")
    pq = tmp_path / "c.parquet"
    pd.DataFrame({"doc_id": ["a", "b", "c"], "score": [1.0, np.inf, 0.0]}).to_parquet(pq)
    raises(InputError, r"1 row\(s\) have an infinite score", load_chunks, pq, "doc_id", "score")


def test_all_score_problems_in_one_message(tmp_path):
    path = write_text(tmp_path / "c.csv", "doc_id,score\na,1\nb,\nc,abc\nd,nan\ne,inf\n")
    raises(InputError, r"1 row\(s\) have a missing score, 1 row\(s\) have a non-numeric score \(e\.g\. 'abc'\), "
           r"1 row\(s\) have a NaN score, 1 row\(s\) have an infinite score", load_chunks, path, "doc_id", "score")


def test_load_docs_bad_counts(tmp_path):
    path = write_text(tmp_path / "a.csv", "doc_id,n_chunks,s\na,0,0\nb,-1,0\nc,3,1\nd,0,0\n")
    raises(InputError, r"column 'n_chunks' in .*a\.csv: 3 document\(s\) have n <= 0", load_docs,
           path, "doc_id", "n_chunks", "s")
    path = write_text(tmp_path / "b.csv", "doc_id,n_chunks,s\na,2.5,0\nb,3,1\n")
    raises(InputError, r"column 'n_chunks' in .*b\.csv: 1 document\(s\) have a non-integer count \(e\.g\. 2\.5\)",
           load_docs, path, "doc_id", "n_chunks", "s")
    path = write_text(tmp_path / "c.csv", "doc_id,n_chunks,s\na,two,0\nb,3,1\n")
    raises(InputError, r"column 'n_chunks' in .*: 1 document\(s\) have a non-numeric value \(e\.g\. 'two'\)",
           load_docs, path, "doc_id", "n_chunks", "s")
    path = write_text(tmp_path / "d.csv", "doc_id,n_chunks,s\na,,0\nb,3,1\n")
    raises(InputError, r"column 'n_chunks' in .*: 1 document\(s\) have a missing value", load_docs,
           path, "doc_id", "n_chunks", "s")


def test_load_docs_bad_sums(tmp_path):
    path = write_text(tmp_path / "a.csv", "doc_id,n,sum_score,sq\na,2,inf,1\nb,3,1,1\n")
    raises(InputError, r"column 'sum_score' in .*: 1 document\(s\) have a NaN or infinite score sum",
           load_docs, path, "doc_id", "n", "sum_score", "sq")
    path = write_text(tmp_path / "b.csv", "doc_id,n,sum_score,sq\na,2,1,nan\nb,3,1,1\n")
    raises(InputError, r"column 'sq' in .*: sums of squared scores must be finite", load_docs,
           path, "doc_id", "n", "sum_score", "sq")


def test_load_docs_duplicate_and_missing_ids(tmp_path):
    path = write_text(tmp_path / "a.csv", "doc,n,s\na,2,1\nb,3,1\na,1,0\n")
    raises(InputError, r"column 'doc' in .*a\.csv: document id 'a' appears 2 times", load_docs, path, "doc", "n", "s")
    df = pd.DataFrame({"page": ["a", None, "c"], "n": [1, 2, 3], "s": [1, 1, 1]})
    raises(InputError, r"column 'page' in the DataFrame: 1 document id\(s\) are missing", load_docs,
           df, "page", "n", "s")


def test_load_docs_one_document():
    raises(InputError, "the DataFrame: the data have 1 document; need at least 2", load_docs,
           pd.DataFrame({"doc": ["a"], "n": [3], "s": [1]}), "doc", "n", "s")


def test_bad_column_argument():
    raises(ParameterError, "score must be a column name", load_chunks, random_chunks(rows=10), "doc_id", 3)


def test_every_error_is_a_perdoc_value_error():
    assert issubclass(DataFileError, InputError) and issubclass(ColumnError, InputError)
    assert issubclass(InputError, PerdocError) and issubclass(PerdocError, ValueError)


def test_glob_characters_in_file_name_are_literal(tmp_path):
    df = pd.DataFrame({"doc_id": ["a", "b", "a"], "score": [1, 0, 1]})
    df.to_json(tmp_path / "run*1.jsonl", orient="records", lines=True)
    df.to_json(tmp_path / "run-other-1.jsonl", orient="records", lines=True)   # would match the glob
    table = load_chunks(tmp_path / "run*1.jsonl", "doc_id", "score")
    assert table.source["rows"] == 3
    assert table.source["path"] == str(tmp_path / "run*1.jsonl")


def test_parquet_unit_interval_scores_binary_detection(tmp_path):
    """Parquet statistics say the scores lie in [0, 1]: sums alone then tell a 0/1 metric."""
    import numpy as np
    import pandas as pd
    from perdoc import load_chunks
    rng = np.random.default_rng(5)
    doc = np.repeat([f"d{i}" for i in range(30)], 7)
    hits = pd.DataFrame({"doc": doc, "y": rng.integers(0, 2, doc.size).astype(float)})
    cont = pd.DataFrame({"doc": doc, "y": rng.random(doc.size)})
    for name, df, binary in (("hits", hits, True), ("cont", cont, False)):
        path = tmp_path / f"{name}.parquet"
        df.to_parquet(path, row_group_size=50)
        t = load_chunks(path, doc="doc", score="y")
        g = df.groupby("doc").y
        assert t.binary is binary, name
        np.testing.assert_allclose(t.s, g.sum().to_numpy(), rtol=1e-13)
        np.testing.assert_allclose(t.q, (df.y ** 2).groupby(df.doc).sum().to_numpy(), rtol=1e-13)
