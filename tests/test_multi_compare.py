"""Several systems compared at once (perdoc.compare_many, perdoc compare --vs B,C,D): every pair as the
two-system compare gives it, Holm's p-values, the simultaneous band, the ranking, the CLI contract and
bad input; Comparison.tidy; the README's example."""

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import perdoc
from perdoc.cli import main
from perdoc.methods._dist import t_ppf
from perdoc.study.compare import compare
from perdoc.study.multi import holm, max_t_critical
from perdoc.study.policy import lead

ROOT = Path(__file__).resolve().parents[1]
F = ROOT / "tests" / "fixtures" / "frameworks"
SYSTEMS = ["a", "b", "c", "d"]


def many_rows(K=12, seed=0, shifts=(0.0, 0.05, -0.08, 0.12)) -> pd.DataFrame:
    """0/1 scores of four systems on the same chunks of K documents of unequal sizes."""
    rng = np.random.default_rng(seed)
    out = []
    for d in range(K):
        n = int(rng.integers(2, 30))
        p = rng.beta(2, 3)
        u = rng.random(n)
        scores = [(u < np.clip(p + s + rng.normal(0, 0.05), 0, 1)).astype(float) for s in shifts]
        out += [(f"d{d:02d}", *row) for row in zip(*scores)]
    return pd.DataFrame(out, columns=["doc", *SYSTEMS])


@pytest.fixture(scope="module")
def rows():
    return many_rows()


@pytest.fixture(scope="module")
def result(rows):
    return perdoc.compare_many(rows, SYSTEMS, doc="doc", replicates=0, seed=1)


@pytest.fixture
def csv(tmp_path, rows):
    p = tmp_path / "many.csv"
    rows.to_csv(p, index=False)
    return p


# ---------------------------------------------------------------------------- Holm
def test_holm_matches_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(7)
    for m in (1, 2, 3, 6, 10):
        p = rng.random(m) ** 3
        p[rng.random(m) < 0.3] = p[0]                  # ties
        expected = multitest.multipletests(p, method="holm")[1]
        assert holm(list(p)) == pytest.approx(list(expected), abs=1e-15)
    assert holm([0.01, None, 0.04]) == [0.02, None, 0.04]  # a missing p-value is not a test


def test_pairs_holm_p_values_are_statsmodels_holm(result):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = [pair.p_value for pair in result.pairs]
    assert all(x is not None for x in p)
    expected = multitest.multipletests(p, method="holm")[1]
    assert [pair.p_holm for pair in result.pairs] == pytest.approx(list(expected), abs=1e-15)
    d = result.to_dict()
    assert [q["p_holm"] for q in d["pairs"]] == pytest.approx(list(expected), abs=1e-15)


# ---------------------------------------------------------------------------- two systems
def test_two_systems_equal_the_two_system_compare(rows):
    many = perdoc.compare_many(rows, ["a", "b"], doc="doc", replicates=0)
    one = compare(perdoc.load_pairs(rows, doc="doc", a="a", b="b"), replicates=0)
    iv = lead(one.difference, "micro", difference=True).interval
    (pair,) = many.pairs
    assert (pair.a, pair.b) == ("a", "b") and pair.interval.method == iv.method == "cr2"
    assert pair.interval.estimate == iv.estimate and tuple(pair.interval.ci) == tuple(iv.ci)
    assert pair.comparison.to_dict() == one.to_dict()
    # one pair: Holm changes nothing and the band is the pointwise interval
    assert pair.p_holm == pair.p_value
    assert many.critical_value == pytest.approx(many.pointwise_critical_value, rel=1e-12)
    assert tuple(pair.simultaneous.ci) == pytest.approx(tuple(iv.ci), rel=1e-12)
    # the p-value is the t test the interval inverts: at p = 1 - level the interval touches 0
    t = abs(iv.estimate) / iv.se
    assert pair.p_value == pytest.approx(2 * stats.t.sf(t, iv.df), rel=1e-10)


def test_cli_two_systems_through_the_list_equal_the_cli_headline(csv, capsys):
    assert main(["compare", str(csv), "--doc", "doc", "--score", "a", "--vs", "b", "--replicates", "0",
                 "--json"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert "pairs" not in two and two["difference"]["label"] == "a - b"    # one --vs: as before
    many = perdoc.compare_many(pd.read_csv(csv), ["a", "b"], doc="doc", replicates=0).to_dict()
    (pair,) = many["pairs"]
    assert pair["interval"] == two["headline"]["ci"] and pair["difference"] == two["headline"]["estimate"]
    assert pair["verdict"] == two["headline"]["verdict"]


# ---------------------------------------------------------------------------- properties
def test_simultaneous_band_contains_each_interval_and_c_is_at_least_pointwise(result):
    assert len(result.pairs) == 6
    assert [(p.a, p.b) for p in result.pairs] == list(itertools.combinations(SYSTEMS, 2))
    df = result.band["df"]
    assert result.pointwise_critical_value == pytest.approx(t_ppf(0.975, df), rel=1e-12)
    assert result.critical_value >= result.pointwise_critical_value
    for p in result.pairs:
        lo, hi = p.interval.ci
        slo, shi = p.simultaneous.ci
        assert slo <= lo and shi >= hi
        assert (shi - slo) / (hi - lo) == pytest.approx(result.critical_value / result.pointwise_critical_value,
                                                        rel=1e-9)
        assert p.p_holm >= p.p_value


def test_critical_value_follows_the_dependence_between_pairs():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(400, 1))
    same = np.hstack([z] * 4)                      # four copies of one pair: no multiplicity
    apart = rng.normal(size=(400, 4))              # four unrelated pairs: about Sidak's tail
    c_same, point, info_same = max_t_critical(same, 0.95, 30.0, draws=20000, seed=1)
    c_apart, _, info_apart = max_t_critical(apart, 0.95, 30.0, draws=20000, seed=1)
    assert point == pytest.approx(t_ppf(0.975, 30.0))
    assert c_same == pytest.approx(point, rel=0.02)
    assert info_apart["pair_tail"] == pytest.approx(1 - 0.95 ** 0.25, abs=0.003)
    assert c_apart == pytest.approx(t_ppf(1 - (1 - 0.95 ** 0.25) / 2, 30.0), rel=0.03)
    assert info_apart["exact"] is False and info_apart["draws"] == 20000


def test_ranks_are_deterministic_and_hold_the_point_rank():
    rows = many_rows(K=24, seed=5)                 # K > 20: the band's sign patterns are drawn
    kw = dict(doc="doc", replicates=0)
    one = perdoc.compare_many(rows, SYSTEMS, seed=11, **kw)
    assert one.band["exact"] is False and one.band["draws"] >= 9999
    assert perdoc.compare_many(rows, SYSTEMS, seed=11, **kw).to_dict() == one.to_dict()
    means = {r.system: r.micro for r in one.ranking}
    assert [r.system for r in one.ranking] == sorted(SYSTEMS, key=lambda s: -means[s])
    for r in one.ranking:
        assert 1 <= r.low <= r.rank <= r.high <= len(SYSTEMS)
        assert r.micro == pytest.approx(rows.groupby("doc")[r.system].sum().sum() / len(rows), rel=1e-12)
    # a system the band shows is below another cannot rank first
    for p in one.pairs:
        if p.simultaneous.ci.low > 0:
            assert next(r for r in one.ranking if r.system == p.b).low >= 2


def test_permuting_the_systems_permutes_the_output(rows):
    order = ["c", "a", "d", "b"]
    base = perdoc.compare_many(rows, SYSTEMS, doc="doc", replicates=0, seed=2)
    other = perdoc.compare_many(rows, order, doc="doc", replicates=0, seed=2)
    assert other.critical_value == pytest.approx(base.critical_value, rel=1e-12)
    assert [(p.a, p.b) for p in other.pairs] == list(itertools.combinations(order, 2))
    for p in other.pairs:
        flip = (p.a, p.b) not in {(q.a, q.b) for q in base.pairs}
        q = base.pair(p.b, p.a) if flip else base.pair(p.a, p.b)
        sign = -1 if flip else 1
        assert p.interval.estimate == pytest.approx(sign * q.interval.estimate, rel=1e-12, abs=1e-15)
        lo, hi = q.simultaneous.ci if not flip else (-q.simultaneous.ci.high, -q.simultaneous.ci.low)
        assert tuple(p.simultaneous.ci) == pytest.approx((lo, hi), rel=1e-10, abs=1e-14)
        assert p.p_value == pytest.approx(q.p_value, rel=1e-10)
        assert p.p_holm == pytest.approx(q.p_holm, rel=1e-10)
    assert {r.system: (r.rank, r.low, r.high) for r in other.ranking} == \
        {r.system: (r.rank, r.low, r.high) for r in base.ranking}


def test_pair_tables_in_any_order_give_the_same_result(rows, result):
    tables = [perdoc.load_pairs(rows, doc="doc", a=b, b=a) for a, b in itertools.combinations(SYSTEMS, 2)]
    again = perdoc.compare_many(tables, SYSTEMS, replicates=0, seed=1)
    assert again.to_dict() == result.to_dict()


def test_tidy_one_row_per_pair(result):
    t = result.tidy()
    assert list(t.comparison) == [f"{a} - {b}" for a, b in itertools.combinations(SYSTEMS, 2)]
    assert {"estimate", "low", "high", "p_value", "p_holm", "sim_low", "sim_high"} <= set(t.columns)
    assert (t.sim_low <= t.low).all() and (t.sim_high >= t.high).all()
    assert list(result.ranks().columns) == ["system", "micro", "rank", "rank_low", "rank_high"]


def test_library_bad_input(rows):
    with pytest.raises(perdoc.ParameterError, match="at least 2 systems"):
        perdoc.compare_many(rows, ["a"], doc="doc")
    with pytest.raises(perdoc.ParameterError, match="duplicate system 'b'"):
        perdoc.compare_many(rows, ["a", "b", "b"], doc="doc")
    with pytest.raises(perdoc.ParameterError, match="doc is required"):
        perdoc.compare_many(rows, ["a", "b"])
    with pytest.raises(perdoc.ColumnError, match="column 'zz' not found"):
        perdoc.compare_many(rows, ["a", "zz"], doc="doc")
    ab = perdoc.load_pairs(rows, doc="doc", a="a", b="b")
    with pytest.raises(perdoc.ParameterError, match="no table compares 'a' with 'c'"):
        perdoc.compare_many([ab], ["a", "b", "c"])


# ---------------------------------------------------------------------------- Comparison.tidy
def test_comparison_tidy_is_the_difference_tidy_with_the_label(rows):
    c = compare(perdoc.load_pairs(rows, doc="doc", a="a", b="c"), replicates=0)
    t = c.tidy()
    assert list(t.columns) == ["comparison", *c.difference.tidy().columns]
    assert set(t.comparison) == {"a - c"} and len(t) == len(c.difference.intervals)
    pd.testing.assert_frame_equal(t.drop(columns="comparison"), c.difference.tidy())
    d = c.to_dict()["difference"]["micro"]["cr2"]
    row = t[(t.estimand == "micro") & (t.method == "cr2")].iloc[0]
    assert [row.low, row.high] == d["ci"]


def test_comparison_tidy_unpaired(rows):
    df = rows[["doc", "a", "b"]].copy()
    df.loc[df.index[::5], "b"] = np.nan
    c = compare(perdoc.load_pairs(df, doc="doc", a="a", b="b", unpaired=True), replicates=0)
    t = c.tidy()
    assert list(t.columns) == ["comparison", *c.systems[0].tidy().columns]
    assert list(zip(t.estimand, t.method)) == [("micro", "cr1"), ("macro", "t")]
    assert t.estimate.iloc[0] == pytest.approx(c.micro_difference)


# ---------------------------------------------------------------------------- CLI
def test_cli_text_one_line_per_pair_and_a_ranking(csv, capsys):
    assert main(["compare", str(csv), "--doc", "doc", "--score", "a", "--vs", "b,c,d", "--replicates", "0"]) == 0
    out = capsys.readouterr().out
    for a, b in itertools.combinations(SYSTEMS, 2):
        line = next(x for x in out.splitlines() if x.strip().startswith(f"{a} - {b} "))
        assert len(re.findall(r"\[[-+]\d\.\d{4}, [-+]\d\.\d{4}\]", line)) == 2
    assert "ranking by micro mean" in out and "Holm" in out and "critical value" in out


def test_cli_json_keys(csv, capsys):
    assert main(["compare", str(csv), "--doc", "doc", "--score", "a", "--vs", "b, c,d", "--replicates", "0",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"systems", "pairs", "ranking", "critical_value", "level", "K"} <= set(d)
    assert d["systems"] == SYSTEMS and d["level"] == 0.95 and d["K"] == 12
    assert len(d["pairs"]) == 6
    for p in d["pairs"]:
        assert {"a", "b", "difference", "interval", "p_value", "p_holm", "simultaneous"} <= set(p)
    assert {r["system"] for r in d["ranking"]} == set(SYSTEMS)
    assert d["input"]["path"] == str(csv)
    lib = perdoc.compare_many(pd.read_csv(csv), SYSTEMS, doc="doc", replicates=0).to_dict()
    assert d["pairs"] == lib["pairs"] and d["ranking"] == lib["ranking"]


def test_cli_a_column_named_with_commas_is_one_system(tmp_path, rows, capsys):
    p = tmp_path / "comma.csv"
    rows.rename(columns={"b": "acc,strict"}).to_csv(p, index=False)
    assert main(["compare", str(p), "--doc", "doc", "--score", "a", "--vs", "acc,strict", "--replicates", "0",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["difference"]["label"] == "a - acc,strict" and "pairs" not in d


@pytest.mark.parametrize("vs, extra, message", [
    ("b,nope", [], "--vs: column 'nope' not found"),
    ("b,a", [], "--vs: duplicate system 'a'"),
    ("b,c,b", [], "--vs: duplicate system 'b'"),
    ("b,", [], "--vs: every system needs a name"),
    ("b,c", ["--unpaired"], "--unpaired does not go with several --vs systems"),
])
def test_cli_bad_input_one_line_status_2(csv, capsys, vs, extra, message):
    assert main(["compare", str(csv), "--doc", "doc", "--score", "a", "--vs", vs, "--replicates", "0", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_standard_input_is_refused_for_several_systems(csv, capsys, monkeypatch):
    import io
    import sys
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(csv.read_bytes())))
    assert main(["compare", "-", "--format", "csv", "--doc", "doc", "--score", "a", "--vs", "b,c"]) == 2
    err = capsys.readouterr().err
    assert "give a file, not standard input" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------- TREC runs
@pytest.fixture
def ir_measures():
    return pytest.importorskip("ir_measures", reason="pip install ir-measures")


def _trec_flags():
    return ["--qrels", str(F / "qrels.txt"), "--measure", "RR", "--doc-map", str(F / "doc_map.csv")]


def test_cli_several_trec_runs(ir_measures, tmp_path, capsys):
    run_c = tmp_path / "run_c.trec"
    lines = (F / "run_b.trec").read_text().splitlines()
    run_c.write_text("\n".join(" ".join(x.split()[:4] + [str(-float(x.split()[4])), "run_c"]) for x in lines) + "\n")
    argv = ["compare", "--trec-run", str(F / "run_a.trec"), "--vs-run", str(F / "run_b.trec"), "--vs-run",
            str(run_c), *_trec_flags(), "--replicates", "0"]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["systems"] == ["run_a", "run_b", "run_c"] and [(p["a"], p["b"]) for p in d["pairs"]] == \
        [("run_a", "run_b"), ("run_a", "run_c"), ("run_b", "run_c")]
    assert d["input"]["format"] == "trec"
    # the pair run_a - run_b is the two-run comparison's headline
    assert main(["compare", "--trec-run", str(F / "run_a.trec"), "--vs-run", str(F / "run_b.trec"), *_trec_flags(),
                 "--replicates", "0", "--json"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert d["pairs"][0]["interval"] == two["headline"]["ci"]
    assert main([*argv[:6], str(F / "run_b.trec"), *argv[7:]]) == 2
    err = capsys.readouterr().err
    assert "--vs-run: duplicate system 'run_b'" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------- ranx
def test_p_value_is_ranx_paired_t_test_with_one_query_per_document():
    """One query per document: the document-level CR2 t test is the paired t test on the queries, as
    ranx's comparison (stat_test="student") computes it from per-query scores."""
    ranx_tests = pytest.importorskip("ranx.statistical_tests")
    rng = np.random.default_rng(0)
    queries = [f"q{i:02d}" for i in range(15)]
    # reciprocal ranks: 1/rank of the first relevant result, 0 when none was found
    scores = {name: np.where(rng.random(15) < 0.2, 0.0, 1.0 / rng.integers(1, 11, 15)) for name in ("r1", "r2", "r3")}
    ranx_p = ranx_tests.compute_statistical_significance(list(scores), {k: {"mrr": v} for k, v in scores.items()},
                                                         stat_test="student", max_p=0.05)
    many = perdoc.compare_many(pd.DataFrame({"doc": queries, **scores}), list(scores), doc="doc", replicates=0)
    for p in many.pairs:
        assert p.interval.df == pytest.approx(len(queries) - 1, rel=1e-10)
        assert p.p_value == pytest.approx(float(ranx_p[frozenset({p.a, p.b})]["mrr"]["p_value"]), rel=1e-8)


# ---------------------------------------------------------------------------- README
def test_readme_compare_example_runs(monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = next(m.group(1) for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M)
                if "perdoc.compare(pairs).tidy()" in m.group(1))
    monkeypatch.chdir(ROOT)
    ns = {}
    exec(compile(code, "README.md", "exec"), ns)
    tidy = perdoc.compare(ns["pairs"], replicates=0).tidy()
    assert set(tidy.comparison) == {"bm25 - tfidf"}
    many = ns["many"]
    assert many.systems == ("bm25", "tfidf", "union") and len(many.tidy()) == 3
    assert math.isfinite(many.critical_value) and len(many.ranks()) == 3
