"""The census is read once: the per-document table and, when a simulated take of a continuous metric
needs them, every chunk's score come from one read of the file (perdoc.design_sim.load_census,
perdoc.io.load_chunks_and_scores); and the rule "a take of a continuous metric needs the census's chunk
scores" lives in one place (perdoc.design_sim.needs_chunk_scores / require_chunk_scores)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perdoc.errors import ParameterError

LIB = Path(__file__).resolve().parents[1] / "lib" / "perdoc"


def _census(path: Path, seed=1, docs=60, shuffle=True):
    """A continuous census, its rows interleaved across documents (the chunk scores must come back in
    the census's order of documents, each document's rows in their order in the file)."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(docs):
        n = int(np.ceil(rng.lognormal(1.5, 1.0)))
        mu = rng.beta(2, 2)
        rows += [(f"d{d}", float(np.clip(rng.normal(mu, 0.2), 0, 1))) for _ in range(n)]
    df = pd.DataFrame(rows, columns=["doc", "score"])
    if shuffle:
        df = df.iloc[rng.permutation(len(df))]
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    df.groupby("doc", sort=False).size().rename("n").to_csv(path.with_name("frame.csv"))
    return path


@pytest.fixture
def opens(monkeypatch):
    """Every source perdoc.io opens, and read_table_file refused (the second read it used to be)."""
    import perdoc.reading.io as io
    import perdoc.reading.manifest as manifest
    seen = []
    real = io._open_source

    def spy(source, fmt):
        seen.append(str(source))
        return real(source, fmt)

    def refuse(path, label):
        raise AssertionError(f"{label} {path} read a second time")

    monkeypatch.setattr(io, "_open_source", spy)
    monkeypatch.setattr(manifest, "read_table_file", refuse)
    return seen


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_one_read_gives_the_table_and_the_chunk_scores(tmp_path, suffix):
    from perdoc.design_sim import census_chunk_scores, load_census
    from perdoc.io import load_chunks
    path = _census(tmp_path / f"census{suffix}")
    expected = census_chunk_scores(load_chunks(path, doc="doc", score="score"), path, doc="doc", score="score")
    import perdoc.reading.io as io
    import perdoc.reading.manifest as manifest
    with pytest.MonkeyPatch.context() as mp:
        seen = []
        real = io._open_source
        mp.setattr(io, "_open_source", lambda source, fmt: (seen.append(source), real(source, fmt))[1])
        mp.setattr(manifest, "read_table_file", lambda *a: (_ for _ in ()).throw(AssertionError("read twice")))
        census, x = load_census(path, doc="doc", score="score", takes=(None, 3))
    assert len(seen) == 1
    assert np.array_equal(x, expected)
    assert x.size == int(census.n.sum())
    same = load_chunks(path, doc="doc", score="score")
    assert np.array_equal(census.s, same.s) and np.array_equal(census.doc, same.doc) and census.source == same.source
    # without a take, or with a 0/1 census, no chunk scores
    assert load_census(path, doc="doc", score="score", takes=(None,))[1] is None
    binary = tmp_path / "binary.csv"
    pd.DataFrame({"doc": ["a", "a", "b", "b", "b"], "score": [0, 1, 1, 1, 0]}).to_csv(binary, index=False)
    assert load_census(binary, doc="doc", score="score", takes=(3,))[1] is None


def test_cli_simulate_with_a_take_reads_the_census_once(tmp_path, capsys, opens):
    from perdoc.cli import main
    census = _census(tmp_path / "census.csv")
    assert main(["simulate", "--census", str(census), "--doc", "doc", "--score", "score", "--k", "8",
                 "--design", "pps", "--take", "3", "--reps", "20", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["take"] == 3
    assert opens.count(str(census)) == 1


def test_cli_plan_with_a_take_reads_the_census_once(tmp_path, capsys, opens):
    from perdoc.cli import main
    census = _census(tmp_path / "census.csv")
    assert main(["plan", "--frame", str(tmp_path / "frame.csv"), "--doc", "doc", "--census", str(census),
                 "--score", "score", "--budget", "60", "--ks", "5", "--designs", "srs,pps", "--reps", "10",
                 "--take", "all,3", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert {r["take"] for r in res["rows"]} == {None, 3}
    assert opens.count(str(census)) == 1


def test_the_take_rule_has_one_home():
    """needs_chunk_scores decides and require_chunk_scores says it, with the one message; the command
    line and the study's route ask design_sim rather than judging 0/1 themselves."""
    from perdoc.design_sim import NEEDS_CHUNK_SCORES, needs_chunk_scores, require_chunk_scores, simulate_design
    from perdoc.table import DocTable
    cont = DocTable.from_arrays([3.0, 4.0, 2.0], [1.5, 2.0, 0.5], [1.0, 1.5, 0.2], doc=["a", "b", "c"])
    binary = DocTable.from_arrays([3.0, 4.0, 2.0], [1.0, 2.0, 0.0], [1.0, 2.0, 0.0], doc=["a", "b", "c"])
    assert needs_chunk_scores(cont, (None, 3)) and not needs_chunk_scores(cont, (None,))
    assert not needs_chunk_scores(binary, (3,))
    with pytest.raises(ParameterError) as e:
        require_chunk_scores(cont, 2, None)
    assert str(e.value) == NEEDS_CHUNK_SCORES
    with pytest.raises(ParameterError) as e:
        simulate_design(cont, design="srs", k=2, reps=2, take=2)
    assert str(e.value) == NEEDS_CHUNK_SCORES
    assert "needs the census's chunk scores" in NEEDS_CHUNK_SCORES
    hits = [p.relative_to(LIB).as_posix() for p in LIB.rglob("*.py")
            if "needs the census's chunk" in p.read_text(encoding="utf-8")]
    assert hits == ["study/design_sim.py"]
    for name in ("cli_sample.py", "study/run.py"):
        text = (LIB / name).read_text(encoding="utf-8")
        assert "census.binary" not in text and "array_equal(np.asarray(census.q)" not in text, name
