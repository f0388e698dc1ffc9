"""Paired comparison: identities, the randomization test, unmatched rows, the CLI contract."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest

import perdoc
from perdoc.cli import main
from perdoc.compare import PairTable, compare, sign_flip_test


def rows(K=15, seed=0, tie_share=0.6):
    rng = np.random.default_rng(seed)
    out = []
    for d in range(K):
        n = int(rng.integers(2, 40))
        p = rng.beta(1, 3)
        a = (rng.random(n) < p).astype(float)
        b = a.copy()
        if rng.random() > tie_share:
            flip = rng.random(n) < 0.2
            b[flip] = 1 - b[flip]
        out += [(f"d{d:02d}", x, y) for x, y in zip(a, b)]
    return pd.DataFrame(out, columns=["doc", "a", "b"])


@pytest.fixture
def df():
    return rows()


def test_difference_of_estimates_and_variance_identity(df):
    pairs = perdoc.load_pairs(df, doc="doc", a="a", b="b")
    c = compare(pairs, replicates=0)
    d = c.to_dict()
    sa, sb = c.systems
    assert d["difference"]["micro"]["estimate"] == pytest.approx(sa.micro_estimate - sb.micro_estimate, abs=1e-14)
    assert d["difference"]["macro"]["estimate"] == pytest.approx(sa.macro_estimate - sb.macro_estimate, abs=1e-14)
    cov = d["covariance"]["micro"]
    var_d = d["difference"]["micro"]["cr1"]["se"] ** 2
    assert var_d == pytest.approx(cov["var_a"] + cov["var_b"] - 2 * cov["cov"], rel=1e-10)
    assert cov["var_a"] == pytest.approx(sa.interval("micro", "cr1").se ** 2, rel=1e-12)
    mc = d["covariance"]["macro"]
    assert d["difference"]["macro"]["t"]["se"] ** 2 == pytest.approx(mc["var_a"] + mc["var_b"] - 2 * mc["cov"], rel=1e-10)
    # the CR2 degrees of freedom depend on the sizes only
    assert d["difference"]["micro"]["cr2"]["df"] == pytest.approx(sa.interval("micro", "cr2").df, rel=1e-12)
    g = df.groupby("doc")
    ties = np.mean(g.a.sum().to_numpy() == g.b.sum().to_numpy())
    assert d["ties_fraction"] == pytest.approx(ties)
    assert -1 <= d["correlation"]["micro"] <= 1


def test_from_rows_equals_load_pairs(df):
    a = perdoc.load_pairs(df, doc="doc", a="a", b="b")
    b = PairTable.from_rows(df.doc, df.a, df.b)
    assert compare(a, replicates=0).to_dict()["difference"] == compare(b, replicates=0).to_dict()["difference"]


@pytest.mark.parametrize("K", [1, 2, 5, 9])
def test_sign_flip_exact_matches_brute_force(K):
    rng = np.random.default_rng(K)
    D = rng.integers(-3, 4, K).astype(float)
    got = sign_flip_test(D)
    t = abs(D.sum())
    brute = np.mean([abs(np.dot(e, D)) >= t - 1e-9 for e in itertools.product([1, -1], repeat=K)])
    assert got["exact"] and got["p_value"] == pytest.approx(brute) and got["patterns"] == 2**K


def test_sign_flip_minimum_p_and_monte_carlo():
    D = np.full(10, 2.0)
    assert sign_flip_test(D)["p_value"] == pytest.approx(2 / 2**10)
    rng = np.random.default_rng(0)
    D = rng.normal(0.3, 1, 30)
    a = sign_flip_test(D, replicates=4000, seed=3)
    b = sign_flip_test(D, replicates=4000, seed=3)
    assert a == b and not a["exact"] and a["replicates"] == 4000
    exact_mim = sign_flip_test(D, exact_max_k=30)  # meet-in-the-middle handles 2^30 patterns
    assert abs(a["p_value"] - exact_mim["p_value"]) < 4 * np.sqrt(0.25 / 4000) + 1e-3


def test_unmatched_rows_refused_with_counts(df):
    bad = df.copy()
    bad.loc[[0, 1, 2], "b"] = np.nan
    bad.loc[5, "a"] = np.nan
    with pytest.raises(perdoc.InputError, match=r"3 row\(s\) have a score for 'a' but not for 'b', 1 for 'b' but not"):
        perdoc.load_pairs(bad, doc="doc", a="a", b="b")
    pairs = perdoc.load_pairs(bad, doc="doc", a="a", b="b", unpaired=True)
    d = compare(pairs, replicates=0).to_dict()
    assert d["paired"] is False and d["difference"]["micro"]["cr1"]["ci"] is not None
    assert d["randomization"]["p_value"] is None


def test_unpaired_delta_equals_paired_when_rows_match(df):
    paired = compare(perdoc.load_pairs(df, doc="doc", a="a", b="b"), replicates=0).to_dict()
    unp = compare(perdoc.load_pairs(df, doc="doc", a="a", b="b", unpaired=True), replicates=0).to_dict()
    assert unp["difference"]["micro"]["cr1"]["se"] == pytest.approx(paired["difference"]["micro"]["cr1"]["se"], rel=1e-10)
    assert unp["difference"]["macro"]["t"]["se"] == pytest.approx(paired["difference"]["macro"]["t"]["se"], rel=1e-10)


def test_all_tied_gives_no_interval():
    df = rows(K=6, tie_share=1.0)
    d = compare(perdoc.load_pairs(df, doc="doc", a="a", b="b"), replicates=50).to_dict()
    assert d["ties_fraction"] == 1.0
    assert d["difference"]["micro"]["cr2"]["ci"] is None and d["difference"]["micro"]["cr2"]["reason"]
    assert d["randomization"]["p_value"] == 1.0


def test_cli_compare_json_contract(tmp_path, capsys, df):
    p = tmp_path / "pairs.csv"
    df.to_csv(p, index=False)
    assert main(["compare", str(p), "--doc", "doc", "--score", "a", "--vs", "b", "--replicates", "200", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("cr1", "cr2", "cr3", "bootstrap_t", "percentile"):
        assert set(d["difference"]["micro"][k]) >= {"ci"}
    assert set(d["difference"]["macro"]) >= {"estimate", "t", "bootstrap_t"}
    assert set(d["systems"]["a"]) >= {"micro", "macro", "name"} and d["systems"]["b"]["name"] == "b"
    assert set(d["correlation"]) == {"micro", "macro"}
    assert 0 <= d["ties_fraction"] <= 1 and set(d["randomization"]) >= {"p_value", "exact"}
    assert main(["compare", str(p), "--doc", "doc", "--score", "a", "--vs", "b", "--replicates", "0"]) == 0
    assert "sign-flip randomization test" in capsys.readouterr().out


def test_cli_compare_bad_input(tmp_path, capsys):
    p = tmp_path / "pairs.csv"
    p.write_text("doc,a,b\nx,1,\ny,0,1\nz,1,1\n")
    code = main(["compare", str(p), "--doc", "doc", "--score", "a", "--vs", "bb"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "did you mean 'b'" in err
    code = main(["compare", str(p), "--doc", "doc", "--score", "a", "--vs", "b"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "1 row(s) have a score for 'a' but not for 'b'" in err
    assert err.count("\n") == 1


def test_difference_is_never_treated_as_a_binary_metric():
    doc = np.repeat(list("abcde"), 4)
    b = np.random.default_rng(0).integers(0, 2, 20).astype(float)
    a = b.copy()
    a[[0, 5, 9]] = 1
    d = compare(PairTable.from_rows(doc, a, b), replicates=0).to_dict()["difference"]["micro"]
    assert d["korn_graubard"]["ci"] is None and "binary" in d["korn_graubard"]["reason"]


def test_population_smaller_than_documents_refused(df):
    pairs = perdoc.load_pairs(df, doc="doc", a="a", b="b")
    with pytest.raises(perdoc.ParameterError, match=r"population size M = 10 is below .* K = 15"):
        compare(pairs, population_size=10, replicates=0)
