"""Frame-aware micro methods (the size of every population document known): the prediction
estimators against a dense implementation of their definition, estimate and simulate giving the same
bits, the identities (census, equal sizes), the frame's input errors and a seeded coverage check."""

import json

import numpy as np
import pytest

import perdoc
from perdoc import methods as M
from perdoc.cli import main
from perdoc import DocTable, estimate
from perdoc.policy import default_method
from perdoc.errors import InputError, ParameterError
from perdoc.frame import Frame, read_frame
from perdoc.simulate import rep_intervals, simulate
from perdoc.synthetic import synthetic_census

FRAME_METHODS = [f"micro.{m}" for m in M.FRAME_METHODS]


def _census(metric="binary", corr=-0.5, documents=300, seed=3, sigma=1.5):
    return synthetic_census(size_sigma=sigma, size_rate_corr=corr, documents=documents, seed=seed, metric=metric)


def _unbounded(c):
    """The same census on an unbounded score: 3 x - 1 per chunk (sums: 3 s - n, squares 9 q - 6 s + n)."""
    n, s, q = c.n, c.s, c.q
    return perdoc.DocTable.from_arrays(n, 3 * s - n, 9 * q - 6 * s + n, c.doc, source={"metric": "score"})


# ---------------------------------------------------------------------- the definition, densely
def dense(n, s, q, frame_n, trend):
    """``trend``: None, "log" or "rank"."""
    """Prediction estimate, its variance and BM df from the K x K definitions (no closed forms)."""
    K = n.size
    icc = np.clip(np.nan_to_num(perdoc.diagnostics.icc_anova(n, s, q)), 0, 0.99)
    kap = icc / (1 - icc)
    v = n * (1 + kap * n)
    ref = frame_n.min()
    if trend == "log":
        zf = lambda x: np.log(x / ref)  # noqa: E731
    else:  # the share of frame documents no larger, counted one by one
        zf = lambda x: np.array([np.sum(frame_n <= v) / frame_n.size for v in x])  # noqa: E731
    cols = [n] + ([n * zf(n)] if trend else [])
    X = np.stack(cols, axis=1)
    FX = np.stack([frame_n] + ([frame_n * zf(frame_n)] if trend else []), axis=1).sum(0)
    W = np.diag(1 / v)
    P = np.linalg.inv(X.T @ W @ X)
    beta = P @ X.T @ W @ s
    tU = FX - X.sum(0)
    Ntot = frame_n.sum()
    est = (s.sum() + tU @ beta) / Ntot
    H = X @ P @ X.T @ W
    e = s - X @ beta
    h = np.diag(H)
    c = (tU @ P @ X.T @ W)
    vU = (frame_n * (1 + kap * frame_n)).sum() - v.sum()
    a = c ** 2 / (1 - h) + vU / (K * v * (1 - h))
    var = (a * e ** 2).sum() / Ntot ** 2
    IH = np.eye(K) - H
    Sig = np.diag(v)
    D = np.diag(np.sqrt(a)) @ IH @ Sig @ IH.T @ np.diag(np.sqrt(a))
    df = np.trace(D) ** 2 / np.trace(D @ D)
    return est, var, df


@pytest.mark.parametrize("trend", [None, "log", "rank"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_prediction_matches_dense_definition(trend, seed):
    c = _unbounded(_census(seed=seed))
    rng = np.random.default_rng(seed)
    idx = rng.choice(c.K, 15, replace=False)
    n, s, q = c.n[idx], c.s[idx], c.q[idx]
    r = M.frame_prediction(n[None], s[None], q[None], M.FrameTotals(c.n), trend=trend, alpha=0.05)
    e_est, e_var, e_df = dense(n, s, q, c.n, trend)
    assert r["code"][0] == M.OK
    assert r["logit_code"][0] == M.NOT_APPLICABLE   # bounded not given: no logit interval
    assert r["estimate"][0] == pytest.approx(e_est, rel=1e-10)
    assert r["se"][0] ** 2 == pytest.approx(e_var, rel=1e-9)
    assert r["df"][0] == pytest.approx(e_df, rel=1e-9)
    t = perdoc._dist.special().stdtrit(r["df"][0], 0.975)
    assert r["low"][0] == pytest.approx(r["estimate"][0] - t * r["se"][0], rel=1e-12)


def test_one_sample_same_bits_alone_or_in_a_batch():
    c = _census()
    rng = np.random.default_rng(5)
    idx = np.stack([rng.choice(c.K, 12, replace=False) for _ in range(7)])
    tot = M.FrameTotals(c.n)
    batch = M.frame_methods(c.n[idx], c.s[idx], c.q[idx], tot, alpha=0.05, bounded=True)
    for i in range(7):
        one = M.frame_methods(c.n[idx[i]][None], c.s[idx[i]][None], c.q[idx[i]][None], tot, alpha=0.05, bounded=True)
        for m in FRAME_METHODS:
            assert np.array_equal(batch[m].low[i:i + 1], one[m].low, equal_nan=True)
            assert np.array_equal(batch[m].high[i:i + 1], one[m].high, equal_nan=True)


# ---------------------------------------------------------------------- estimate == simulate
@pytest.mark.parametrize("kind", ["binary", "continuous", "unbounded"])
def test_estimate_and_simulate_agree_exactly(kind):
    c = _census("binary" if kind == "binary" else "continuous")
    if kind == "unbounded":
        c = _unbounded(c)
    frame = Frame.from_table(c)
    ri = rep_intervals(c, k=10, reps=25, seed=4, replicates=0, frame=True)
    checked = 0
    simulated = [m for m in FRAME_METHODS if m in ri.low]
    assert len(simulated) == (4 if kind == "unbounded" else 8)
    for i in range(25):
        est = perdoc.estimate(c.take(ri.index[i]), replicates=0, frame=frame)
        assert est.population_size == c.K
        for m in simulated:
            iv = est.interval("micro", m.split(".")[1])
            lo, hi = ri.low[m][i], ri.high[m][i]
            assert iv.estimate == ri.estimate[m][i]
            if iv.ci is None:
                assert np.isnan(lo) and np.isnan(hi)
            else:
                assert (iv.ci.low, iv.ci.high) == (lo, hi)
                checked += 1
    assert checked > 15 * len(simulated)
    assert est.interval("micro", "frame_loglinear").label.endswith("Bell-McCaffrey df")
    logit = est.interval("micro", "logit_frame_loglinear")
    if kind == "unbounded":
        assert logit.ci is None and "bounded in [0, 1]" in logit.reason
    else:
        assert "logit" in logit.label


def test_simulate_lists_frame_methods_only_with_a_frame():
    c = _census(documents=120)
    without = simulate(c, k=8, reps=20, replicates=0)
    with_frame = simulate(c, k=8, reps=20, replicates=0, frame=True)
    assert not any(m in without.methods for m in FRAME_METHODS)
    assert all(m in with_frame.methods for m in FRAME_METHODS)
    assert with_frame.design.get("frame") is True
    with pytest.raises(ParameterError, match="frame must be true or false"):
        simulate(c, k=8, reps=20, replicates=0, frame="yes")


# ---------------------------------------------------------------------- identities
@pytest.mark.parametrize("trend", [None, "log", "rank"])
def test_every_population_document_sampled_gives_the_census_value_and_zero_variance(trend):
    c = _census(documents=40)
    r = M.frame_prediction(c.n[None], c.s[None], c.q[None], M.FrameTotals(c.n), trend=trend, alpha=0.05,
                           bounded=True)
    assert r["estimate"][0] == pytest.approx(c.s.sum() / c.n.sum(), rel=1e-14)
    assert r["se"][0] == 0.0
    assert r["code"][0] == r["logit_code"][0] == M.ZERO_SE   # no sampling error: no interval from the method
    res = perdoc.estimate(c, replicates=0, frame=Frame.from_table(c))
    for m in M.FRAME_METHODS:
        iv = res.interval("micro", m)
        assert iv.ci.low == iv.ci.high == iv.estimate
        assert iv.estimate == pytest.approx(c.s.sum() / c.n.sum(), rel=1e-14)


@pytest.mark.parametrize("trend", [None, "log", "rank"])
def test_equal_sizes_reduce_to_the_ratio_estimator(trend):
    rng = np.random.default_rng(2)
    Mdocs = 200
    n = np.full(Mdocs, 6.0)
    s = rng.binomial(6, rng.beta(2, 5, Mdocs)).astype(float)
    idx = rng.choice(Mdocs, 15, replace=False)
    r = M.frame_prediction(n[idx][None], s[idx][None], s[idx][None], M.FrameTotals(n), trend=trend, alpha=0.05,
                           bounded=True)
    R = s[idx].sum() / n[idx].sum()
    assert r["estimate"][0] == pytest.approx(R, rel=1e-14)
    assert r["code"][0] == r["logit_code"][0] == M.OK
    assert np.isnan(r["slope"][0])


def test_trend_not_identified_when_every_sampled_size_is_equal():
    n = np.array([1.0, 2, 4, 4, 4, 4, 8, 16])
    s = np.array([0.0, 1, 1, 2, 3, 1, 4, 9])
    idx = np.array([2, 3, 4, 5])
    r = M.frame_prediction(n[idx][None], s[idx][None], s[idx][None], M.FrameTotals(n), trend="log", alpha=0.05,
                           bounded=True)
    assert r["code"][0] == r["logit_code"][0] == M.NOT_IDENTIFIED and np.isnan(r["low"][0])
    t = perdoc.DocTable.from_arrays(n[idx], s[idx], s[idx], np.array(["c", "d", "e", "f"]))
    fr = Frame.from_arrays(list("abcdefgh"), n)
    iv = perdoc.estimate(t, replicates=0, frame=fr).interval("micro", "frame_loglinear")
    assert iv.ci is None and "same size" in iv.reason


# ---------------------------------------------------------------------- the frame's input
def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def sample_and_frame(tmp_path):
    rows = ["doc_id,hit"]
    sizes = {"d0": 3, "d1": 5, "d2": 2, "d3": 7}
    rng = np.random.default_rng(0)
    for d, k in sizes.items():
        rows += [f"{d},{int(rng.random() < 0.4)}" for _ in range(k)]
    data = _write(tmp_path, "chunks.csv", "\n".join(rows) + "\n")
    frame_rows = ["doc_id,n"] + [f"{d},{k}" for d, k in sizes.items()] + ["d4,1", "d5,40", "d6,2"]
    frame = _write(tmp_path, "frame.csv", "\n".join(frame_rows) + "\n")
    return data, frame, frame_rows


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_frame_adds_the_methods(capsys, sample_and_frame):
    data, frame, _ = sample_and_frame
    code, out, err = run(capsys, "estimate", data, "--doc", "doc_id", "--score", "hit", "--frame", frame,
                         "--replicates", "0", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["population_size"] == 7
    assert all(m.split(".")[1] in d["micro"] for m in FRAME_METHODS)
    lib = perdoc.estimate(perdoc.load_chunks(data, doc="doc_id", score="hit"), replicates=0,
                          frame=read_frame(frame, "doc_id"))
    # a prediction has its own point estimate, in the JSON (the ratio model's equals the ratio here:
    # the sample's ICC is not positive, so its weights are those of the ratio)
    m = "frame_loglinear"
    assert d["micro"][m]["estimate"] == lib.interval("micro", m).estimate != d["micro"]["estimate"]
    assert lib.interval("micro", "frame_ratio").estimate == pytest.approx(d["micro"]["estimate"], rel=1e-14)
    assert "estimate" not in d["micro"]["cr2"]
    code, out, _ = run(capsys, "estimate", data, "--doc", "doc_id", "--score", "hit", "--replicates", "0", "--json")
    assert "frame_ratio" not in json.loads(out)["micro"]


@pytest.mark.parametrize("rows, message", [
    (["doc_id,n", "d0,3", "d1,5", "d2,2", "d9,7"], "sampled document(s) are missing from the frame"),
    (["doc_id,n", "d0,3", "d1,5", "d2,2", "d3,7", "d1,5"], "appear more than once"),
    (["doc_id,n", "d0,3", "d1,5", "d2,2", "d3,8"], "size that differs from the frame"),
    (["doc_id,size", "d0,3", "d1,5", "d2,2", "d3,7"], "'n'"),
    (["doc_id,n", "d0,3", "d1,5", "d2,0", "d3,7"], "sizes must be whole numbers"),
    (["doc_id,n", "d0,3", "d1,5", "d2,2.5", "d3,7"], "sizes must be whole numbers"),
    (["doc_id,n", "d0,3", "d1,five", "d2,2", "d3,7"], "not numbers"),
])
def test_cli_frame_errors_are_one_line(capsys, tmp_path, sample_and_frame, rows, message):
    data, _, _ = sample_and_frame
    bad = _write(tmp_path, "bad_frame.csv", "\n".join(rows) + "\n")
    code, out, err = run(capsys, "estimate", data, "--doc", "doc_id", "--score", "hit", "--frame", bad,
                         "--replicates", "0")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err, err


def test_frame_population_size_must_agree(sample_and_frame):
    data, frame, _ = sample_and_frame
    t = perdoc.load_chunks(data, doc="doc_id", score="hit")
    fr = read_frame(frame, "doc_id")
    with pytest.raises(ParameterError, match="differs from the 7 documents"):
        perdoc.estimate(t, replicates=0, frame=fr, population_size=9)
    assert perdoc.estimate(t, replicates=0, frame=fr, population_size=7).population_size == 7
    with pytest.raises(ParameterError, match="perdoc.frame.Frame"):
        perdoc.estimate(t, replicates=0, frame=[1, 2, 3])


def test_frame_from_arrays_rules():
    with pytest.raises(InputError, match="at least 2"):
        Frame.from_arrays(["a"], [3])
    with pytest.raises(InputError, match="one id per size"):
        Frame.from_arrays(["a", "b"], [3, 4, 5])
    fr = Frame.from_arrays(["a", "b", "c"], [1, 2, 3])
    assert (fr.M, fr.N) == (3, 6.0)


def test_params_design_frame(tmp_path, sample_and_frame, capsys):
    data, frame, _ = sample_and_frame
    base = ("name: t\ndata: {path: chunks.csv, doc: doc_id, score: hit}\n"
            "design: {population: x, %s}\nestimand: {kind: micro, why: chunks}\nintervals: {replicates: 0}\n")
    p = _write(tmp_path, "p.yaml", base % "frame: frame.csv")
    code, out, err = run(capsys, "estimate", "--params", p, "--json")
    assert code == 0, err
    assert "frame_loglinear" in json.loads(out)["micro"]
    p = _write(tmp_path, "q.yaml", base % "frame: census")
    code, out, err = run(capsys, "estimate", "--params", p, "--json")
    assert code == 2 and "needs a census" in err
    p = _write(tmp_path, "r.yaml", base % "frame: frame.csv")
    code, out, err = run(capsys, "estimate", "--params", p, "--frame", frame)
    assert code == 2 and "--frame" in err


# ---------------------------------------------------------------------- coverage (seeded, slow)
@pytest.mark.slow
def test_size_trend_covers_where_sample_only_intervals_miss():
    """A census whose long documents score higher (size-rate correlation +0.5): CR2 misses on one side;
    the predictions with a trend in size (log size, rank in the frame) hold the nominal level within
    Monte Carlo error, and the ratio model, blind to the trend, does not."""
    c = synthetic_census(size_sigma=1.5, icc=0.2, base_rate=0.3, size_rate_corr=0.5, documents=1000,
                         median_size=4, seed=11)
    res = simulate(c, k=20, reps=1500, seed=7, replicates=0, frame=True)
    cr2 = res.methods["micro.cr2"]
    assert cr2["coverage"] < 0.9 and cr2["miss_low"] > 5 * cr2["miss_high"]
    for m in ("micro.logit_frame_loglinear", "micro.logit_frame_rank"):
        assert res.methods[m]["coverage"] >= 0.95 - 2 * res.methods[m]["mc_se"], m
    assert res.methods["micro.logit_frame_ratio"]["coverage"] < 0.85
    assert res.recommended["micro"] in ("micro.frame_loglinear", "micro.logit_frame_loglinear", "micro.frame_rank",
                                        "micro.logit_frame_rank")


def test_cli_simulate_frame_flag(capsys, tmp_path):
    rng = np.random.default_rng(3)
    rows = ["doc_id,hit"]
    for d in range(40):
        k = int(rng.integers(1, 30))
        p = 0.1 + 0.6 * (k > 15)
        rows += [f"d{d},{int(rng.random() < p)}" for _ in range(k)]
    census = _write(tmp_path, "census.csv", "\n".join(rows) + "\n")
    args = ["simulate", "--census", census, "--doc", "doc_id", "--score", "hit", "--k", "8", "--reps", "40",
            "--replicates", "0", "--json"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "micro.frame_loglinear" not in json.loads(out)["methods"]
    code, out, err = run(capsys, *args, "--frame")
    assert code == 0, err
    d = json.loads(out)
    assert set(FRAME_METHODS) <= set(d["methods"]) and d["design"]["frame"] is True


def test_report_reads_the_frame_once_from_its_copy(tmp_path, sample_and_frame):
    import hashlib
    from perdoc.report import build as report
    from perdoc.params import load_params
    data, frame, rows = sample_and_frame
    p = _write(tmp_path, "p.yaml", "name: t\ndata: {path: chunks.csv, doc: doc_id, score: hit}\n"
               "design: {population: x, frame: frame.csv}\nestimand: {kind: micro, why: chunks}\n"
               "intervals: {replicates: 0}\n")
    study = load_params(p)
    snap, shown = report._snapshot(study, tmp_path / "snap")
    assert snap.design.frame != study.design.frame and (tmp_path / "snap" / "frame" / "frame.csv").exists()
    frame.write_text("doc_id,n\nzz,1\n")   # the user's file changes after the copy: the report reads the copy
    analysis = report._compute_analysis(snap, shown)
    info = analysis.input["frame"]
    expected = hashlib.sha256(("\n".join(rows) + "\n").encode()).hexdigest()
    assert info["file"] == "frame.csv" and info["sha256"] == expected and info["documents"] == 7
    assert analysis.estimates.interval("micro", "frame_loglinear").estimate is not None
    assert snap.to_dict()["design"]["frame"] == "frame.csv"


def test_policy_with_a_frame_only_design_consistent_methods_lead():
    """A frame adds alternatives and a warning, never a model-based headline: the prediction methods'
    coverage falls as K grows where their model is wrong, so logit CR2 (the sample ratio) leads."""
    c = synthetic_census(size_sigma=1.5, size_rate_corr=0.5, documents=300, seed=4)
    frame = Frame.from_table(c)
    rng = np.random.default_rng(1)
    big = c.take(rng.choice(c.K, 15, replace=False))
    est = estimate(big, replicates=0, frame=frame)
    assert default_method(est, "micro") == "logit_cr2"
    d = est.to_dict()
    assert d["micro"]["logit_cr2"]["role"] == "primary"
    for m in ("logit_frame_rank", "frame_rank", "greg", "logit_greg"):
        assert d["micro"][m]["role"] == "alternative"
    u = DocTable.from_arrays(big.n, 3 * big.s - big.n, 9 * big.q - 6 * big.s + big.n, big.doc,
                             source={"metric": "score"})
    assert default_method(estimate(u, replicates=0, frame=frame), "micro") == "cr2"


def test_frame_tail_warning_follows_the_expected_unseen_share():
    from perdoc.frame import TAIL_WARN, expected_tail_share
    equal = synthetic_census(size_sigma=0.0, documents=300, seed=4)
    skewed = synthetic_census(size_sigma=2.0, documents=300, seed=4)
    rng = np.random.default_rng(3)
    for c, warn in ((equal, False), (skewed, True)):
        frame = Frame.from_table(c)
        est = estimate(c.take(rng.choice(c.K, 20, replace=False)), replicates=0, frame=frame)
        tail = est.to_dict()["frame_tail"]
        assert tail["warn"] is warn
        assert tail["expected"] == pytest.approx(expected_tail_share(c.n, 20))
        assert (tail["expected"] > TAIL_WARN) is warn
    assert estimate(equal.take(np.arange(20)), replicates=0).frame_tail is None   # no frame, no tail


def test_expected_tail_share_matches_simulation():
    from perdoc.frame import expected_tail_share
    rng = np.random.default_rng(0)
    n = np.ceil(4 * rng.lognormal(0, 1.5, 400))
    shares = []
    for _ in range(3000):
        i = rng.choice(n.size, 10, replace=False)
        shares.append(n[n > n[i].max()].sum() / n.sum())
    assert expected_tail_share(n, 10) == pytest.approx(np.mean(shares), abs=4 * np.std(shares) / np.sqrt(3000))
    assert expected_tail_share(np.full(50, 3.0), 10) == 0.0


def test_policy_frame_rank_gives_way_when_it_has_no_interval():
    n = np.r_[np.full(12, 4.0), np.arange(1.0, 30.0)]
    s = np.zeros(n.size)
    frame = Frame.from_arrays([f"d{i}" for i in range(n.size)], n)
    t = DocTable.from_arrays(n[:12], s[:12], s[:12], np.array([f"d{i}" for i in range(12)]))
    est = estimate(t, replicates=0, frame=frame)    # every sampled document has the same size (and rate 0)
    assert est.interval("micro", "logit_frame_rank").ci is None
    assert default_method(est, "micro") == "cr2"


def test_with_a_frame_the_micro_headline_is_design_consistent(tmp_path):
    """With a frame and no census the micro headline is no longer a prediction: the frame-aware
    methods are alternatives, and the pseudo-population check runs as it does without a frame (shown
    beside the headline; it never chooses it: perdoc.policy.lead)."""
    from perdoc.report import build as report
    from perdoc.params import load_params
    c = synthetic_census(size_sigma=1.5, size_rate_corr=-0.5, documents=120, seed=5)
    rng = np.random.default_rng(2)
    take = np.sort(rng.choice(c.K, 15, replace=False))
    rows, frame_rows = ["doc_id,hit"], ["doc_id,n"]
    for i in range(c.K):
        frame_rows.append(f"{c.doc[i]},{int(c.n[i])}")
    for i in take:
        hits = int(c.s[i])
        rows += [f"{c.doc[i]},{int(j < hits)}" for j in range(int(c.n[i]))]
    _write(tmp_path, "chunks.csv", "\n".join(rows) + "\n")
    _write(tmp_path, "frame.csv", "\n".join(frame_rows) + "\n")
    for kind in ("micro", "macro"):
        p = _write(tmp_path, f"{kind}.yaml", f"name: {kind}\ndata: {{path: chunks.csv, doc: doc_id, score: hit}}\n"
                   "design: {population: x, frame: frame.csv}\n"
                   f"estimand: {{kind: {kind}, why: the question}}\nintervals: {{replicates: 0}}\n")
        a = report._compute_analysis(load_params(p))
        assert not report.frame_leads(a.estimates, kind)
        assert not a.headline.interval.method.startswith(("frame_", "logit_frame_"))
        assert a.pseudo_simulation is not None and a.headline.basis == "none"
        from perdoc.policy import default_method
        assert a.headline.interval.method == default_method(a.estimates, kind)


def test_frame_logit_interval_of_a_single_sample_with_a_scale_exponent():
    """A single sample (1-D arrays) whose sums were scaled by 2^k gets the same logit interval as the
    same sample in a batch of one (the inside-(0, 1) test once ran on a Python bool, where ~True is -2)."""
    import perdoc.methods as M
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 40, size=300).astype(float)
    n = sizes[:25]
    s = np.floor(n * 0.3)
    one = M.greg(n, s * 8, M.FrameTotals(sizes), alpha=0.05, bounded=True, k=3)
    batch = M.greg(n[None], s[None] * 8, M.FrameTotals(sizes), alpha=0.05, bounded=True, k=3)
    assert int(one["logit_code"]) == int(batch["logit_code"][0]) == 0
    assert float(one["logit_low"]) == float(batch["logit_low"][0])
