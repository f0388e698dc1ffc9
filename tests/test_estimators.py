"""Identities, properties and dense cross-checks of the single-system estimators."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import perdoc
from perdoc import DocTable, ParameterError, estimate
from perdoc import micro

from conftest import make_table


def dense_bm_df(n):
    """The K x K form of the Bell-McCaffrey df (trace(M)^2 / ||M||_F^2)."""
    N = n.sum()
    h = n / N
    a = 1 / np.sqrt(1 - h)
    M = -np.outer(a * n, a * n) / N
    M[np.diag_indices(n.size)] += a**2 * n
    return np.trace(M) ** 2 / np.sum(M * M)


def dense_ik_df(n, y_by_doc):
    """Literal Imbens-Kolesar df: chunk-level G, Moulton Omega, eigen-free trace formula."""
    y = np.concatenate(y_by_doc)
    Nn = y.size
    doc = np.repeat(np.arange(n.size), n.astype(int))
    u = y - y.mean()
    ssr = np.sum(u**2)
    ud = np.bincount(doc, weights=u)
    den = np.sum(n**2) - Nn
    rho = (np.sum(ud**2) - ssr) / den if den > 0 else 0.0
    sig = max(ssr / Nn - rho, 0.0)
    Omega = sig * np.eye(Nn) + rho * (doc[:, None] == doc[None, :])
    H = np.full((Nn, Nn), 1.0 / Nn)
    IH = np.eye(Nn) - H
    G = np.zeros((Nn, n.size))
    for d in range(n.size):
        rows = doc == d
        Hdd = H[np.ix_(rows, rows)]
        w, V = np.linalg.eigh(np.eye(rows.sum()) - Hdd)
        A = V @ np.diag(w**-0.5) @ V.T
        G[:, d] = IH[:, rows] @ A @ np.ones(rows.sum()) / Nn
    P = G.T @ Omega @ G
    return np.trace(P) ** 2 / np.sum(P * P)


def test_bm_df_matches_dense_form():
    for seed in range(5):
        t = make_table(K=15, seed=seed)
        assert micro.df_bell_mccaffrey(t.n) == pytest.approx(dense_bm_df(t.n), rel=1e-10)


def _bm_df_exact(n):
    N = Fraction(int(n.sum()))
    q = [Fraction(int(x)) ** 2 / (N - int(x)) for x in n]
    total = sum(q)
    cross = total * total - sum(x * x for x in q)
    return float(N * N / (sum(Fraction(int(x)) ** 2 for x in n) + cross))


@pytest.mark.parametrize("giants", [(), (10**6,), (10**7,), (10**7, 10**5), (10**8, 10**7)])
def test_bm_df_at_many_documents_with_giants(giants, monkeypatch):
    # thousands of documents (past micro._PEEL_MIN), none, one or two far longer than the others:
    # the identity, the split at the giant, and the sorted sums all give the exact df to 1e-12
    rng = np.random.default_rng(len(giants))
    n = np.floor(rng.lognormal(3.0, 1.0, 5000)) + 1
    n[: len(giants)] = giants
    rng.shuffle(n)
    want = _bm_df_exact(n)
    assert micro.df_bell_mccaffrey(n) == pytest.approx(want, rel=1e-12)
    equal = np.full(n.size, 5.0)       # a batch: each row its own way
    np.testing.assert_allclose(micro.df_bell_mccaffrey(np.stack([n, equal, n[::-1]])), [want, n.size - 1, want],
                               rtol=1e-12)
    monkeypatch.setattr(micro, "_PEEL_MIN", 10**9)     # the sorted sums
    assert micro.df_bell_mccaffrey(n) == pytest.approx(want, rel=1e-12)


def test_bm_df_stable_when_one_document_dominates():
    # exact rational arithmetic as the reference; the naive dense form loses digits here
    n = np.array([1e7, 1, 2, 1, 3, 1], dtype=float)
    N = Fraction(int(n.sum()))
    q = [Fraction(int(x)) ** 2 / (N - int(x)) for x in n]
    cross = sum(q) ** 2 - sum(x * x for x in q)
    exact = float(N * N / (sum(Fraction(int(x)) ** 2 for x in n) + cross))
    assert micro.df_bell_mccaffrey(n) == pytest.approx(exact, rel=1e-12)
    assert 1.0 <= micro.df_bell_mccaffrey(n) <= n.size - 1


@pytest.mark.parametrize("seed", range(4))
def test_ik_df_matches_dense_definition(seed):
    rng = np.random.default_rng(seed)
    K = 7
    n = rng.integers(1, 12, K).astype(float)
    ys = [rng.random(int(m)) * rng.random() for m in n]
    s = np.array([y.sum() for y in ys])
    q = np.array([(y * y).sum() for y in ys])
    assert micro.df_imbens_kolesar(n, s, q) == pytest.approx(dense_ik_df(n, ys), rel=1e-9)


@pytest.mark.parametrize("kind", ["lognormal", "equal", "few sizes", "one dominant", "two long", "beyond 8K",
                                  "fractional", "graded scores"])
def test_ik_df_taken_by_size_equals_the_per_document_sums(kind):
    """From 4,096 documents the Imbens-Kolesar df sums each distinct size once (weighted by its
    count): the per-document computation's number to the last bits (rel 1e-13); where one document
    holds most of a leave-one-out total, or the sizes are not small whole numbers, it is the
    per-document computation itself. A batch gives each row's own number."""
    rng = np.random.default_rng(len(kind))
    K = 6000
    n = np.floor(rng.lognormal(2.5, 1.1, K)) + 1.0
    if kind == "equal":
        n = np.full(K, 40.0)
    elif kind == "few sizes":
        n = rng.choice([1.0, 7.0, 300.0], K)
    elif kind == "one dominant":
        n[17] = 8 * K
    elif kind == "two long":
        n[17], n[18] = 8 * K, 4 * K
    elif kind == "beyond 8K":
        n[17] = 8 * K + 1
    elif kind == "fractional":
        n[17] += 0.5
    p = rng.beta(2, 5, K)
    s = rng.binomial(np.floor(n).astype(np.int64), p).astype(float)
    q = s.copy()
    if kind == "graded scores":
        s = s * 0.37 + rng.random(K)
        q = s * s / n + rng.random(K)
    sig, rho = micro.normalise_moments(*map(np.asarray, micro.moulton(n, s, q)))
    each = float(micro._df_ik_each(n, sig, rho))
    by_size = micro._size_groups(n)
    got = micro.df_imbens_kolesar(n, s, q)
    if kind in ("beyond 8K", "fractional"):
        assert by_size is None and got == each
    elif kind == "two long":   # (the longer holds most of a total, the other most of what is left)
        assert by_size is not None and micro._df_imbens_kolesar_by_size(*by_size, float(sig), float(rho)) is None
        assert got == each
    else:
        direct = micro._df_imbens_kolesar_by_size(*by_size, float(sig), float(rho))
        assert direct is not None
        assert got == (each if direct is None else direct)
        assert got == pytest.approx(each, rel=1e-13)
    batch = micro.df_imbens_kolesar(np.vstack([n, n[::-1]]), np.vstack([s, s[::-1]]), np.vstack([q, q[::-1]]))
    assert batch[0] == got and batch[1] == micro.df_imbens_kolesar(n[::-1].copy(), s[::-1].copy(), q[::-1].copy())
    small = micro.df_imbens_kolesar(n[:K // 2], s[:K // 2], q[:K // 2])   # (below 4,096: per document)
    assert small == float(micro._df_ik_each(n[:K // 2], *micro.normalise_moments(
        *map(np.asarray, micro.moulton(n[:K // 2], s[:K // 2], q[:K // 2])))))


def test_ik_df_reduces_to_bm_without_within_document_correlation():
    # every chunk equals its document's mean: rho > 0 ... instead force rho = 0 via one chunk per doc
    n = np.ones(9)
    s = np.linspace(0, 1, 9)
    assert micro.df_imbens_kolesar(n, s, s * s) == pytest.approx(micro.df_bell_mccaffrey(n), rel=1e-12)


def test_cr_ordering_and_equal_sizes():
    t = make_table(K=12, seed=3)
    v0 = np.sum(micro.residuals(t.n, t.s) ** 2) / t.N**2
    assert v0 <= micro.var_cr2(t.n, t.s) <= micro.var_cr3(t.n, t.s)
    n = np.full(10, 15.0)
    s = np.arange(10.0)
    assert micro.var_cr1(n, s) == pytest.approx(micro.var_cr2(n, s), rel=1e-12)
    assert micro.df_bell_mccaffrey(n) == pytest.approx(9.0, rel=1e-12)


def test_jackknife_identity():
    # R_(-d) - R = -u_d / (N - n_d) and V_JK = (K-1)/K * V_CR3
    t = make_table(K=9, seed=4)
    R = micro.ratio(t.n, t.s)
    loo = np.array([micro.ratio(np.delete(t.n, d), np.delete(t.s, d)) for d in range(t.K)])
    u = micro.residuals(t.n, t.s)
    np.testing.assert_allclose(loo - R, -u / (t.N - t.n), rtol=1e-10)
    vjk = (t.K - 1) / t.K * np.sum((loo - loo.mean()) ** 2)
    # jackknife around the mean of pseudo-values differs; around R it equals (K-1)/K V_CR3
    vjk_R = (t.K - 1) / t.K * np.sum((loo - R) ** 2)
    assert vjk_R == pytest.approx((t.K - 1) / t.K * micro.var_cr3(t.n, t.s), rel=1e-10)
    assert vjk <= vjk_R + 1e-15


sizes = st.lists(st.integers(1, 60), min_size=2, max_size=25)


@settings(max_examples=60, deadline=None)
@given(sizes, st.integers(0, 2**31 - 1))
def test_properties_of_df(ns, seed):
    n = np.array(ns, dtype=float)
    df = micro.df_bell_mccaffrey(n)
    assert 1.0 - 1e-9 <= df <= n.size - 1 + 1e-9
    if n.size == 2:
        assert df == pytest.approx(1.0, rel=1e-12)
    if np.all(n == n[0]):
        assert df == pytest.approx(n.size - 1, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(sizes, st.integers(0, 2**31 - 1), st.floats(0.01, 100))
def test_order_invariance_and_scale_equivariance(ns, seed, c):
    rng = np.random.default_rng(seed)
    n = np.array(ns, dtype=float)
    s = rng.binomial(n.astype(int), rng.random(n.size)).astype(float)
    t = DocTable.from_arrays(n=n, s=s, q=s.copy())
    base = estimate(t, replicates=0).to_dict()
    perm = rng.permutation(n.size)
    shuffled = estimate(t.take(perm), replicates=0).to_dict()
    scaled = estimate(DocTable.from_arrays(n=n, s=c * s, q=c * c * s), replicates=0).to_dict()
    for est in ("micro", "macro"):
        assert shuffled[est]["estimate"] == pytest.approx(base[est]["estimate"], rel=1e-10, abs=1e-14)
        assert scaled[est]["estimate"] == pytest.approx(c * base[est]["estimate"], rel=1e-10, abs=1e-14)
    for m in ("cr1", "cr2", "cr3"):
        b, sh, sc = base["micro"][m], shuffled["micro"][m], scaled["micro"][m]
        assert sh["se"] == pytest.approx(b["se"], rel=1e-9, abs=1e-14)
        assert sh["df"] == pytest.approx(b["df"], rel=1e-9)
        assert sc["se"] == pytest.approx(c * b["se"], rel=1e-9, abs=1e-14)
        assert sc["df"] == pytest.approx(b["df"], rel=1e-9)
        if b["ci"] is not None:
            assert sc["ci"][0] == pytest.approx(c * b["ci"][0], rel=1e-9, abs=1e-12)
            assert b["ci"][0] <= base["micro"]["estimate"] <= b["ci"][1]
        else:
            assert b["reason"] and sc["ci"] is None


def test_fpc_scales_every_se():
    t = make_table(K=20, seed=5)
    a = estimate(t, replicates=200, seed=3).to_dict()
    b = estimate(t, replicates=200, seed=3, population_size=80).to_dict()
    f = np.sqrt(1 - 20 / 80)
    for est, m in [("micro", "cr1"), ("micro", "cr2"), ("micro", "cr3"), ("micro", "wald_iid"),
                   ("micro", "wald_eff_n"), ("macro", "t"), ("micro", "bootstrap_t"), ("macro", "bootstrap_t")]:
        assert b[est][m]["se"] == pytest.approx(f * a[est][m]["se"], rel=1e-12)
        wa = a[est][m]["ci"][1] - a[est][m]["ci"][0]
        wb = b[est][m]["ci"][1] - b[est][m]["ci"][0]
        assert wb == pytest.approx(f * wa, rel=1e-9)
    assert b["fpc"] == pytest.approx(0.75)


def test_census_has_no_sampling_error():
    t = make_table(K=10, seed=6)
    d = estimate(t, replicates=50, population_size=10).to_dict()
    assert d["micro"]["cr2"]["se"] == 0.0
    assert d["micro"]["cr2"]["ci"] == [d["micro"]["estimate"]] * 2
    assert any("census" in n for n in d["notes"])


def test_every_document_at_same_rate_gives_no_interval():
    n = np.array([4.0, 10, 6, 20])
    s = n * 0.25
    d = estimate(DocTable.from_arrays(n=n, s=s, q=s * 0 + n * 0.0625), replicates=100).to_dict()
    for est, m in [("micro", "cr1"), ("micro", "cr2"), ("micro", "cr3"), ("macro", "t"),
                   ("micro", "bootstrap_t"), ("macro", "bootstrap_t"), ("micro", "percentile")]:
        assert d[est][m]["ci"] is None
        assert "same rate" in d[est][m]["reason"]


def test_wald_iid_binary_formula():
    t = make_table(K=20, seed=7)
    d = estimate(t, replicates=0).to_dict()
    p = d["micro"]["estimate"]
    assert d["micro"]["wald_iid"]["se"] == pytest.approx(np.sqrt(p * (1 - p) / t.N), rel=1e-12)
    assert d["micro"]["wald_iid"]["role"] == "baseline"


def test_aggregated_without_q_assumes_binary_only_when_possible():
    t = DocTable.from_arrays(n=[3, 4, 5], s=[1, 2, 5])
    assert t.q_assumed_binary and np.array_equal(t.q, t.s)
    t2 = DocTable.from_arrays(n=[3, 4, 5], s=[1.5, 7.0, 2.0])
    assert t2.q is None
    d = estimate(t2, replicates=0).to_dict()
    assert d["micro"]["wald_iid"]["ci"] is None and "q" in d["micro"]["wald_iid"]["reason"]
    assert "cr2_ik" not in d["micro"]
    assert d["micro"]["cr2"]["ci"] is not None


@pytest.mark.parametrize("kwargs, match", [
    ({"level": 1.0}, r"level must be a number strictly between 0 and 1"),
    ({"level": 0}, r"level must be a number strictly between 0 and 1"),
    ({"level": "0.9"}, r"level must be a number"),
    ({"replicates": -1}, r"replicates must be a non-negative integer"),
    ({"replicates": 2.5}, r"replicates must be a non-negative integer"),
    ({"replicates": 1}, r"replicates must be 0 \(no bootstrap\) or at least 2"),
    ({"seed": -3}, r"seed must be a non-negative integer"),
    ({"population_size": 5}, r"population size M = 5 is below the number of sampled documents K = 20"),
    ({"population_size": 30.5}, r"population size must be a whole number"),
])
def test_parameter_errors(table, kwargs, match):
    with pytest.raises(ParameterError, match=match):
        estimate(table, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"n": [3], "s": [1]}, r"the data have 1 document; need at least 2"),
    ({"n": [], "s": []}, r"no rows"),
    ({"n": [3, 0], "s": [1, 0]}, r"column n: 1 document\(s\) have n <= 0"),
    ({"n": [3, 2], "s": [1, np.nan]}, r"column s: 1 document\(s\) have a NaN or infinite"),
    ({"n": [3, 2], "s": [1, 1], "doc": ["a", "a"]}, r"document id 'a' appears 2 times"),
    ({"n": [3, 2], "s": [1, 1], "doc": ["a", None]}, r"1 document id\(s\) are missing"),
    ({"n": [3, 2], "s": [1, 1], "q": [0.1, 1]}, r"column q: a sum of squared scores is smaller"),
])
def test_table_errors(kwargs, match):
    with pytest.raises(perdoc.InputError, match=match):
        DocTable.from_arrays(**kwargs)
