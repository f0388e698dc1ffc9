"""The chunk-level floor of the judge-assisted variance under a drawn design
(:func:`perdoc.methods.ppi._chunk_floor`): its design expectation is the frame's exact sum under
probability proportional to size and unbiased under size strata; it never pushes the interval past
the labels-only one; and, seeded (slow), coverage with a near-perfect judge does not fall as K grows."""

import math

import numpy as np
import pytest

from perdoc.methods import ppi as P
from perdoc.methods.ppi import JudgeScores, lead_ends, ppi_design
from perdoc.reading.frame import Frame
from perdoc.reading.manifest import SampleData, stage_fractions
from perdoc.study.sampling import brewer_probabilities, prepare_design


def _census(M=1500, seed=11, error=0.02):
    """Per document: chunks (many short documents, a few long ones), gold hits (rate about 0.9) and a
    near-perfect judge (each chunk wrong with probability ``error``): judge sum f and gold-and-judge
    sum sf."""
    rng = np.random.default_rng(seed)
    n = np.maximum(1, np.round(rng.lognormal(1.2, 1.3, M))).astype(np.int64)
    s = rng.binomial(n, rng.beta(9, 1, M))
    fn = rng.binomial(s, error)
    fp = rng.binomial(n - s, error)
    return n.astype(float), s.astype(float), (s - fn + fp).astype(float), (s - fn).astype(float)


def _sample(census, prepared, seed):
    n, s, f, sf = census
    smp = prepared.draw(seed)
    idx = smp.doc.astype(np.int64)
    fr, _ = stage_fractions(smp.stratum, smp.prob, smp.draw)
    data = SampleData(doc=smp.doc.astype(str), draw=smp.draw, stratum=smp.stratum.astype(str), prob=smp.prob,
                      N=n[idx], m=n[idx], s=s[idx], q=s[idx], f=fr)
    return data, f[idx], f[idx], sf[idx]


def _prepared(n, design, k):
    return prepare_design(Frame.from_arrays(np.arange(n.size).astype(str), n, allow_similar_ids=True),
                          design=design, k=k)


@pytest.mark.parametrize("kind", ["micro", "macro"])
def test_pps_expectation_is_the_frames_sum(kind):
    """Under PPS with the largest documents taken whole, E sum_S w^2 a^2 / N is sum over the other
    documents of a^2 / (N pi), pi from the frame: computed from the frame, whatever was drawn."""
    census = _census()
    n = census[0]
    k = 60
    pi, certain = brewer_probabilities(n, k)
    a = n if kind == "micro" else np.ones_like(n)
    want = float(np.sum((a * a / (n * pi))[~certain]))
    judge = JudgeScores(n, census[2], covers=True)
    prepared = _prepared(n, "pps", k)
    got = set()
    for seed in (1, 2, 3):
        data = _sample(census, prepared, seed)[0]
        assert np.allclose(data.prob, pi[data.doc.astype(int)])      # the design is the frame's Brewer one
        w = 1.0 / data.prob
        aa = data.N if kind == "micro" else np.ones_like(data.N)
        got.add(round(P._expected_weighted(w, aa, data.m, data.N, data.f, data.stratum.astype(str), judge, kind), 6))
    assert len(got) == 1 and math.isclose(got.pop(), want, rel_tol=1e-9)


def test_size_strata_expectation_is_unbiased():
    """Under size strata (simple random within each) the estimate is Horvitz-Thompson: its mean over
    draws is the stratified design's exact value, sum_h (1 - f_h) sum_{U_h} N / pi_h (micro)."""
    census = _census(M=600)
    n = census[0]
    judge = JudgeScores(n, census[2], covers=True)
    prepared = _prepared(n, "stratified", 40)
    vals = []
    for seed in range(400):
        data = _sample(census, prepared, seed)[0]
        vals.append(P._expected_weighted(1.0 / data.prob, data.N, data.m, data.N, data.f,
                                         data.stratum.astype(str), judge, "micro"))
    # the exact value: each stratum's probability and its documents, from the prepared design
    data = _sample(census, prepared, 0)[0]
    exact = 0.0
    for h in np.unique(data.stratum):
        rows = data.stratum == h
        p = float(data.prob[rows][0])
        if p >= 1.0:
            continue
        members = prepared.info["strata"][str(h)]
        exact += (1.0 - p) * members["chunks"] / p
    assert abs(np.mean(vals) / exact - 1.0) < 0.03
    assert np.std(vals) > 0             # estimated, not read from the frame


def test_the_floor_never_goes_past_the_labels_only_interval(monkeypatch):
    """The floor lifts the judge-assisted variance to the chunk-level one but never above the
    labels-only variance of the same sample (a useless judge stays as wide as labels alone)."""
    rng = np.random.default_rng(5)
    n, s, f_good, sf_good = _census(seed=5)
    f_bad = rng.binomial(n.astype(np.int64), 0.9).astype(float)          # unrelated to the gold
    lifted = 0
    for census in ((n, s, f_bad, np.minimum(s, f_bad)), (n, s, f_good, sf_good)):
        judge = JudgeScores(n, census[2], covers=True)
        prepared = _prepared(n, "pps", 30)
        for seed in range(40):
            data, g, gg, sg = _sample(census, prepared, seed)
            lab = ppi_design(data, g, gg, sg, judge, "micro", lam=0.0)
            monkeypatch.setattr(P, "CHUNK_FLOOR", False)
            raw = ppi_design(data, g, gg, sg, judge, "micro")
            monkeypatch.setattr(P, "CHUNK_FLOOR", True)
            got = ppi_design(data, g, gg, sg, judge, "micro")
            assert got["se"] >= raw["se"]
            assert got["se"] <= max(raw["se"], lab["se"]) * (1 + 1e-12)
            lifted += got["se"] > raw["se"]
    assert lifted > 0                    # the floor is not inert


def test_a_fixed_weight_gets_no_floor():
    """A weight the user fixes is the design estimate of y - lambda f exactly (the R oracle): no floor."""
    census = _census()
    judge = JudgeScores(census[0], census[2], covers=True)
    data, g, gg, sg = _sample(census, _prepared(census[0], "pps", 40), 3)
    fixed = ppi_design(data, g, gg, sg, judge, "micro", lam=1.0)
    from perdoc.methods.survey import _linearised
    e = data.s / data.m - (g / data.m - judge.mean)
    _, se, _, _ = _linearised(1.0 / data.prob, data.N, e, data.m, data.N, np.zeros(data.m.size), data.f,
                              data.stratum.astype(str))
    assert fixed["se"] == pytest.approx(se, rel=1e-12)


@pytest.mark.slow
def test_coverage_with_a_near_perfect_judge_does_not_fall_as_k_grows():
    """A judge wrong on 2% of chunks, documents drawn in proportion to size: the judge-assisted micro
    interval covers at K = 20 and at K = 80 (seeded, 400 samples each), the K = 80 coverage not below
    the K = 20 one by more than Monte Carlo noise. Without the chunk-level floor it fell with K."""
    census = _census()
    n, s = census[0], census[1]
    truth = s.sum() / n.sum()
    judge = JudgeScores(n, census[2], covers=True)
    cover = {}
    for k in (20, 80):
        prepared = _prepared(n, "pps", k)
        hits = 0
        for seed in range(400):
            data, g, gg, sg = _sample(census, prepared, 10_000 * k + seed)
            ends = lead_ends(ppi_design(data, g, gg, sg, judge, "micro", bounded=True))
            hits += bool(ends and ends[1] <= truth <= ends[2])
        cover[k] = hits / 400
    assert cover[20] >= 0.93 and cover[80] >= 0.93, cover
    assert cover[80] >= cover[20] - 0.03, cover


def test_cross_sums_are_the_rows_products_per_document(tmp_path):
    """perdoc.reading.io.load_cross_sums: sum of gold times judge per document, as pandas computes it,
    in the table's order, from a DataFrame and from a file; rows with a missing score are left out."""
    import pandas as pd

    from perdoc import load_chunks
    from perdoc.reading.io import load_cross_sums
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"doc": rng.choice(["b", "a", "c10", "c2"], 200), "gold": rng.integers(0, 2, 200).astype(float),
                       "judge": rng.random(200)})
    df.loc[5, "judge"] = np.nan
    want = (df.gold * df.judge).groupby(df.doc).sum()
    for source in (df, tmp_path / "rows.csv"):
        if not isinstance(source, pd.DataFrame):
            df.to_csv(source, index=False)
        table = load_chunks(source, doc="doc", score="gold")
        got = load_cross_sums(source, "doc", "gold", "judge", table)
        assert np.allclose(got, want.loc[list(table.doc)].to_numpy(), rtol=1e-12)


def test_the_labelled_rows_give_the_simple_random_floor_its_sums(tmp_path):
    """perdoc estimate --judge on a table: the judge-assisted interval gets the chunk-level floor (its
    standard error at least the capped chunk-level one), computed from the rows' own products."""
    import pandas as pd

    from perdoc.study.judge import estimate_judged, load_judged
    n, s, f, sf = _census(M=400, seed=4)
    rows, pop = [], []
    for d in range(n.size):
        k = int(n[d])
        y = np.r_[np.ones(int(s[d])), np.zeros(k - int(s[d]))]
        x = np.r_[np.ones(int(sf[d])), np.zeros(int(s[d] - sf[d])), np.ones(int(f[d] - sf[d])),
                  np.zeros(k - int(s[d]) - int(f[d] - sf[d]))]
        pop += [(f"d{d:03d}", xi) for xi in x]
        if d < 40:
            rows += [(f"d{d:03d}", yi, xi) for yi, xi in zip(y, x)]
    labels = pd.DataFrame(rows, columns=["doc", "gold", "judge"])
    frame = pd.DataFrame(pop, columns=["doc", "judge"])
    sample = load_judged(labels, "doc", "gold", "judge", judge_file=frame)
    want_sg = (labels.gold * labels.judge).groupby(labels.doc).sum()
    assert np.array_equal(sample.sg, want_sg.loc[list(sample.table.doc)].to_numpy())
    est = estimate_judged(sample)
    t = sample.table
    gold_s = t.s / t.scale
    with_rows = P.ppi_micro(t.n, gold_s, sample.f, sample.judge, fpc=math.sqrt(1 - t.K / 400), bounded=True,
                            chunks=(gold_s, sample.f, want_sg.loc[list(t.doc)].to_numpy()))
    without = P.ppi_micro(t.n, gold_s, sample.f, sample.judge, fpc=math.sqrt(1 - t.K / 400), bounded=True)
    assert est.ppi["micro"]["se"] == with_rows["se"] >= without["se"]
    # the floor binds on some samples of this census (a near-perfect judge), never beyond labels alone
    judge = JudgeScores(n, f, covers=True)
    bound = 0
    for start in range(0, 400, 20):
        i = np.arange(start, start + 20)
        a = P.ppi_micro(n[i], s[i], f[i], judge, fpc=math.sqrt(1 - 20 / 400), chunks=(s[i], f[i], sf[i]))
        b = P.ppi_micro(n[i], s[i], f[i], judge, fpc=math.sqrt(1 - 20 / 400))
        lab = P.ppi_micro(n[i], s[i], f[i], judge, fpc=math.sqrt(1 - 20 / 400), lam=0.0)
        assert b["se"] <= a["se"] <= max(b["se"], math.hypot(lab["se"], lab["se"] / math.sqrt(4 * 20))) + 1e-15
        bound += a["se"] > b["se"]
    assert bound > 0


@pytest.mark.parametrize("kind", ["micro", "macro"])
def test_a_census_gives_the_gold_mean_whatever_the_judge(kind):
    """Every document drawn (all taken whole): the judge-assisted estimate with fitted weights is the
    gold mean itself. Weights that differ between documents taken whole, each corrected against the
    judge's population mean, would leave a bias there that no sample size removes."""
    n, s, _, _ = _census(M=150, seed=9)
    rng = np.random.default_rng(1)
    shift = 0.7 * (np.log(n) - np.median(np.log(n)))                  # errs more in long documents
    err = 1 / (1 + np.exp(-(math.log(0.05 / 0.95) + shift)))
    fn, fp = rng.binomial(s.astype(np.int64), err), rng.binomial((n - s).astype(np.int64), err)
    f, sf = (s - fn + fp).astype(float), (s - fn).astype(float)
    judge = JudgeScores(n, f, covers=True)
    data, g, gg, sg = _sample((n, s, f, sf), _prepared(n, "pps", n.size), 1)
    assert np.all(data.f >= 1.0)
    got = ppi_design(data, g, gg, sg, judge, kind)
    truth = s.sum() / n.sum() if kind == "micro" else float(np.mean(s / n))
    assert got["estimate"] == pytest.approx(truth, abs=1e-12)
    assert got["lam"] > 0                                                # the weights were fitted, not 0


def test_a_document_taken_whole_and_subsampled_needs_its_judge_row():
    """Under a take, a document taken whole at the first stage has only some chunks labelled: its own
    judge mean comes from the judge's scores (judge_rows); without them the call says what is missing."""
    n, s, f, sf = _census(M=300, seed=3)
    judge = JudgeScores(n, f, covers=True)
    data, g, gg, sg = _sample((n, s, f, sf), _prepared(n, "pps", 40), 2)
    whole = np.flatnonzero(data.f >= 1.0)
    assert whole.size
    i = whole[np.argmax(data.N[whole])]
    m = data.m.copy()
    m[i] = 2.0                                                           # two of its chunks labelled
    from dataclasses import replace
    sub = replace(data, m=m, s=np.minimum(data.s, 2.0) * (np.arange(m.size) == i) + data.s * (np.arange(m.size) != i),
                  q=np.minimum(data.q, 2.0) * (np.arange(m.size) == i) + data.q * (np.arange(m.size) != i))
    g2 = np.where(np.arange(m.size) == i, np.minimum(g, 2.0), g)
    with pytest.raises(ValueError, match="judge_rows"):
        ppi_design(sub, g2, g2, np.minimum(sub.s, g2), judge, "micro")
    got = ppi_design(sub, g2, g2, np.minimum(sub.s, g2), judge, "micro", judge_rows=sub.doc.astype(int))
    assert math.isfinite(got["estimate"])


def test_a_paired_difference_gets_the_chunk_floors_sums_from_the_rows(tmp_path):
    """load_judged_pair: the differences' sums of squares and cross products, as the rows give them."""
    import pandas as pd

    from perdoc.study.judge import load_judged_pair
    rng = np.random.default_rng(8)
    rows = 400
    df = pd.DataFrame({"doc": rng.choice([f"d{i}" for i in range(30)], rows), "ya": rng.integers(0, 2, rows),
                       "yb": rng.integers(0, 2, rows)})
    df["ga"] = np.where(rng.random(rows) < 0.1, 1 - df.ya, df.ya)
    df["gb"] = np.where(rng.random(rows) < 0.1, 1 - df.yb, df.yb)
    frame = df[["doc", "ga", "gb"]]
    got = load_judged_pair(df, "doc", "ya", "yb", "ga", "gb", judge_file=frame)
    y, g = df.ya - df.yb, df.ga - df.gb
    by = lambda v: v.groupby(df.doc).sum().loc[list(got.table.doc)].to_numpy(float)   # noqa: E731
    assert np.array_equal(got.q, by(y * y)) and np.array_equal(got.gg, by(g * g)) and np.array_equal(got.sg, by(y * g))
