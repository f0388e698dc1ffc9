"""Tests for the SYNTHETIC example corpus (data/example/make_corpus.py and the files it writes):
byte-identical regeneration, the calibration targets on the committed census, and the sample."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example"
SCRIPT = EXAMPLE / "make_corpus.py"
OUTPUTS = ("census.csv", "sample.csv", "README.md")
COLUMNS = ["doc_id", "chunk_id", "bm25", "tfidf"]


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    return pd.read_csv(EXAMPLE / "census.csv", dtype={"doc_id": str})


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return pd.read_csv(EXAMPLE / "sample.csv", dtype={"doc_id": str})


def per_doc(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby("doc_id", sort=True).agg(n=("bm25", "size"), s=("bm25", "sum"), t=("tfidf", "sum"))
    g["r"] = g.s / g.n
    return g


def test_regenerates_byte_identical(tmp_path):
    subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], check=True, capture_output=True)
    for name in OUTPUTS:
        assert (tmp_path / name).read_bytes() == (EXAMPLE / name).read_bytes(), name


def test_files_say_synthetic():
    doc = ast.get_docstring(ast.parse(SCRIPT.read_text(encoding="utf-8")))
    assert "SYNTHETIC" in doc
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    assert "SYNTHETIC" in text.splitlines()[0]
    assert "python data/example/make_corpus.py" in text
    assert "population_size 1300" in text
    total = sum((EXAMPLE / name).stat().st_size for name in OUTPUTS) + SCRIPT.stat().st_size
    assert total < 3_000_000


def test_census_shape(census):
    assert list(census.columns) == COLUMNS
    assert census.bm25.isin([0, 1]).all() and census.tfidf.isin([0, 1]).all()
    g = per_doc(census)
    assert len(g) == 1300
    assert 40_000 <= len(census) <= 60_000
    # chunk_id runs 1..n within each document, one row per chunk
    assert not census.duplicated(["doc_id", "chunk_id"]).any()
    assert (census.groupby("doc_id").chunk_id.max() == g.n).all()
    assert (census.groupby("doc_id").chunk_id.min() == 1).all()


def test_calibration_targets(census):
    g = per_doc(census)
    N = g.n.sum()
    big = g.n > 76
    assert big.sum() == 129
    assert abs(g.n[big].sum() / N - 0.59) <= 0.005
    assert abs(g.s.sum() / N - 0.1846) <= 0.0005  # BM25 micro
    assert abs(g.r.mean() - 0.1596) <= 0.0005  # BM25 macro
    assert abs((g.s == g.t).mean() - 0.70) <= 0.01  # exact ties of per-document sums
    assert abs((g.s - g.t).sum() / N - 0.0062) <= 0.0005  # BM25 - TF-IDF, micro
    assert abs(((g.s - g.t) / g.n).mean() - 0.0027) <= 0.0003  # BM25 - TF-IDF, macro


def test_realistic_features(census):
    g = per_doc(census)
    N, K = g.n.sum(), len(g)
    assert 0.30 <= (g.s == 0).mean() <= 0.45
    assert (g.s == g.n).mean() <= 0.05
    # heavy-tailed sizes: median small, a few very long documents
    assert g.n.median() <= 20 and g.n.max() >= 500
    # larger documents hit somewhat more often (micro > macro)
    big = g.n > 76
    assert g.s[big].sum() / g.n[big].sum() > g.s[~big].sum() / g.n[~big].sum()
    assert g.r[big].mean() > g.r[~big].mean()
    # one-way ANOVA intraclass correlation well above 0
    p = g.s.sum() / N
    n0 = (N - (g.n**2).sum() / N) / (K - 1)
    msb = (g.n * (g.r - p) ** 2).sum() / (K - 1)
    msw = (g.s - g.n * g.r**2).sum() / (N - K)
    assert (msb - msw) / (msb + (n0 - 1) * msw) > 0.05


def test_sample_is_srs_rows_of_census(census, sample):
    assert list(sample.columns) == COLUMNS
    docs = sample.doc_id.unique()
    assert len(docs) == 20
    assert set(docs) <= set(census.doc_id)
    assert 500 <= len(sample) <= 1000
    expected = census[census.doc_id.isin(docs)].reset_index(drop=True)
    pd.testing.assert_frame_equal(sample.reset_index(drop=True), expected)
    g = per_doc(sample)
    assert 0 < g.s.sum() / g.n.sum() < 1 and np.isfinite(g.r.mean())
