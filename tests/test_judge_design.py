"""Judge-assisted estimates under a drawn design (``perdoc estimate LABELS --sample MANIFEST --judge COL
--judge-file FILE``): the identities that tie them to the labels-only design estimate (weight 0 is it
bit for bit; a fixed weight is the design estimate of ``y - lambda f`` plus ``lambda F``), the command
line against the Python API, bad input, and design-consistency with a judge biased in long documents."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from perdoc.cli import main
from perdoc.methods.ppi import JudgeScores, lead_ends, ppi_design
from perdoc.methods.survey import design_estimate
from perdoc.reading.frame import Frame
from perdoc.reading.manifest import SampleData, stage_fractions
from perdoc.study.judge import estimate_judged, load_judged_design
from perdoc.study.sampling import draw_sample


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _population(M=240, seed=3):
    """Per document: chunks, and per chunk a gold 0/1 label and a judge's (right on about 85%, more
    often 'relevant' in long documents)."""
    rng = np.random.default_rng(seed)
    n = np.maximum(1, np.round(rng.lognormal(2.0, 0.9, M))).astype(int)
    rows = []
    for d in range(M):
        p = rng.beta(1.5, 3)
        y = (rng.random(n[d]) < p).astype(int)
        flip = rng.random(n[d]) < 0.15 + 0.03 * math.log(n[d])
        rows += [(f"d{d:03d}", c, int(y[c]), int(1 - y[c] if flip[c] else y[c])) for c in range(n[d])]
    return pd.DataFrame(rows, columns=["doc_id", "chunk", "gold", "judge"])


def _drawn(pop, design, k, seed, take=None):
    """SampleData for the gold and the judge's sums g, gg, sg over the labelled chunks of a drawn sample."""
    rng = np.random.default_rng(seed)
    sizes = pop.groupby("doc_id").size()
    frame = Frame.from_arrays(sizes.index.to_numpy(), sizes.to_numpy())
    smp = draw_sample(frame, design=design, k=k, seed=seed, take=take)
    by = {d: g for d, g in pop.groupby("doc_id")}
    m, s, q, g, sg = [], [], [], [], []
    for d, mj in zip(smp.doc.tolist(), (smp.m if hasattr(smp, "m") else [None] * smp.doc.size)):
        rows = by[d]
        if take is not None and len(rows) > take:
            rows = rows.iloc[np.sort(rng.choice(len(rows), take, replace=False))]
        y, x = rows["gold"].to_numpy(float), rows["judge"].to_numpy(float)
        m.append(len(rows)); s.append(y.sum()); q.append((y * y).sum()); g.append(x.sum()); sg.append((y * x).sum())
    f, _ = stage_fractions(smp.stratum, smp.prob, smp.draw)
    data = SampleData(doc=smp.doc.astype(str), draw=smp.draw, stratum=smp.stratum.astype(str), prob=smp.prob,
                      N=sizes.loc[smp.doc].to_numpy(float), m=np.array(m, float), s=np.array(s), q=np.array(q), f=f)
    judge_sums = pop.groupby("doc_id")["judge"].sum()
    judge = JudgeScores(sizes.to_numpy(float), judge_sums.loc[sizes.index].to_numpy(float), covers=True)
    g = np.array(g)
    return data, g, g.copy(), np.array(sg), judge      # a 0/1 judge: gg = g


DESIGNS = [("srs", None), ("pps", None), ("stratified", None), ("pps", 3), ("stratified", 4)]


@pytest.mark.parametrize("design,take", DESIGNS)
def test_weight_zero_is_the_labels_only_design_estimate_bit_for_bit(design, take):
    data, g, gg, sg, judge = _drawn(_population(), design, 24, 7, take)
    est = design_estimate(data, bounded=True)
    for kind in ("micro", "macro"):
        got = ppi_design(data, g, gg, sg, judge, kind, lam=0.0, bounded=True)
        iv = est.interval(kind, "design")
        assert (got["estimate"], got["se"], got["df"]) == (iv.estimate, iv.se, iv.df)
        assert (got["low"], got["high"]) == (iv.ci.low, iv.ci.high)
        logit = est.interval(kind, "logit_design")
        assert (got["logit_low"], got["logit_high"]) == (logit.ci.low, logit.ci.high)


@pytest.mark.parametrize("design,take", DESIGNS)
@pytest.mark.parametrize("lam", [0.4, 1.0])
def test_a_fixed_weight_is_the_design_estimate_of_the_corrected_chunks(design, take, lam):
    data, g, gg, sg, judge = _drawn(_population(), design, 24, 11, take)
    corrected = SampleData(doc=data.doc, draw=data.draw, stratum=data.stratum, prob=data.prob, N=data.N, m=data.m,
                           s=data.s - lam * g, q=data.q - 2 * lam * sg + lam * lam * gg, f=data.f)
    est = design_estimate(corrected, bounded=False)
    for kind, F in (("micro", judge.mean), ("macro", judge.macro_mean)):
        got = ppi_design(data, g, gg, sg, judge, kind, lam=lam)
        iv = est.interval(kind, "design")
        assert got["estimate"] == pytest.approx(iv.estimate + lam * F, abs=1e-13)
        assert got["se"] == pytest.approx(iv.se, rel=1e-10) and got["df"] == iv.df
        assert got["lam"] == pytest.approx(lam, rel=1e-14)


def test_a_judge_equal_to_the_gold_gives_no_interval_on_whole_documents():
    data, g, gg, sg, judge = _drawn(_population(), "pps", 20, 2)
    got = ppi_design(data, data.s, data.q, data.q, judge, "micro", bounded=True)
    assert lead_ends(got) is None and "no spread" in got["reason"]


def test_one_document_in_a_stratum_gives_no_interval_with_the_reason():
    data, g, gg, sg, judge = _drawn(_population(), "srs", 12, 5)
    lone = SampleData(doc=data.doc, draw=data.draw, stratum=np.array(["a"] * 11 + ["b"]), prob=data.prob, N=data.N,
                      m=data.m, s=data.s, q=data.q, f=np.r_[data.f[:11], 0.01])
    got = ppi_design(lone, g, gg, sg, judge, "micro", bounded=True)
    assert lead_ends(got) is None and "one drawn document" in got["reason"]


def test_the_judge_must_cover_the_population():
    data, g, gg, sg, judge = _drawn(_population(), "srs", 12, 5)
    with pytest.raises(ValueError, match="every population document"):
        ppi_design(data, g, gg, sg, JudgeScores(judge.n, judge.f, covers=False))


# ------------------------------------------------------------------------------ command line
@pytest.fixture
def drawn_files(tmp_path, capsys):
    pop = _population()
    sizes = pop.groupby("doc_id").size().rename("chunks").reset_index()
    sizes.to_csv(tmp_path / "frame.csv", index=False)
    pop[["doc_id", "chunk", "judge"]].to_csv(tmp_path / "judge.csv", index=False)
    assert main(["sample", "--frame", str(tmp_path / "frame.csv"), "--doc", "doc_id", "--frame-n", "chunks",
                 "--k", "20", "--design", "pps", "--take", "4", "--seed", "9", "--out", str(tmp_path / "man.csv")]) == 0
    man = pd.read_csv(tmp_path / "man.csv")
    labels = man.merge(pop, on=["doc_id", "chunk"], how="left")[["doc_id", "draw", "chunk", "gold", "judge"]]
    labels.to_csv(tmp_path / "labels.csv", index=False)
    capsys.readouterr()
    return tmp_path


def test_cli_leads_with_the_python_apis_design_based_judge_interval(capsys, drawn_files):
    t = drawn_files
    code, out, err = run(capsys, "estimate", t / "labels.csv", "--doc", "doc_id", "--score", "gold", "--judge",
                         "judge", "--judge-file", t / "judge.csv", "--sample", t / "man.csv", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    api = estimate_judged(load_judged_design(t / "labels.csv", t / "man.csv", "doc_id", "gold", "judge",
                                             judge_file=t / "judge.csv"))
    assert d["headline"] == api.to_dict()["headline"] and d["headline"]["basis"] == "judge"
    assert d["design"]["design"] == "pps" and d["labels_only"]["design"]["sampling"] == "drawn"
    # the labels-only block is perdoc estimate --sample's answer
    code, plain, _ = run(capsys, "estimate", t / "labels.csv", "--doc", "doc_id", "--score", "gold", "--sample",
                         t / "man.csv", "--json")
    plain = json.loads(plain)
    assert (plain["micro"], plain["macro"]) == (d["labels_only"]["micro"], d["labels_only"]["macro"])
    code, text, _ = run(capsys, "estimate", t / "labels.csv", "--doc", "doc_id", "--score", "gold", "--judge",
                        "judge", "--judge-file", t / "judge.csv", "--sample", t / "man.csv")
    h = d["headline"]
    assert code == 0 and "design-based" in text and f"[{h['low']:.4f}, {h['high']:.4f}]" in text


@pytest.mark.parametrize("change,message", [
    (lambda j: j[j.doc_id != j.doc_id.iloc[0]], "judge file"),                   # a frame document missing
    (lambda j: pd.concat([j, j.iloc[:1].assign(chunk=999)]), "chunks in the manifest"),
])
def test_a_judge_file_that_is_not_the_frame_is_one_line_and_exit_2(capsys, drawn_files, change, message):
    t = drawn_files
    man = pd.read_csv(t / "man.csv")
    j = pd.read_csv(t / "judge.csv")
    # make the change touch a drawn document
    first = man.doc_id.iloc[0]
    j = pd.concat([j[j.doc_id == first], j[j.doc_id != first]])
    change(j).to_csv(t / "judge2.csv", index=False)
    code, out, err = run(capsys, "estimate", t / "labels.csv", "--doc", "doc_id", "--score", "gold", "--judge",
                         "judge", "--judge-file", t / "judge2.csv", "--sample", t / "man.csv")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err and "Traceback" not in err


def test_judge_sample_does_not_go_with_a_drawn_sample(capsys, drawn_files):
    t = drawn_files
    code, _, err = run(capsys, "estimate", t / "labels.csv", "--doc", "doc_id", "--score", "gold", "--judge",
                       "judge", "--judge-sample", t / "judge.csv", "--sample", t / "man.csv")
    assert code == 2 and "--judge-sample" in err and "--sample" in err


def test_a_missing_judge_column_is_named(capsys, drawn_files):
    t = drawn_files
    code, _, err = run(capsys, "estimate", t / "labels.csv", "--doc", "doc_id", "--score", "gold", "--judge",
                       "grader", "--judge-file", t / "judge.csv", "--sample", t / "man.csv")
    assert code == 2 and "'grader'" in err


# ------------------------------------------------------------------------------ design-consistency
@pytest.mark.slow
def test_pps_covers_a_judge_biased_in_long_documents():
    """A judge that errs more in long documents: with documents drawn in proportion to their size the
    judge-assisted micro interval covers (seeded; 400 samples, K = 30)."""
    pop = _population(M=400, seed=8)
    y = pop.groupby("doc_id")["gold"].sum() / pop.groupby("doc_id").size()
    truth = pop["gold"].mean()
    hits = 0
    reps = 400
    for r in range(reps):
        data, g, gg, sg, judge = _drawn(pop, "pps", 30, 1000 + r)
        ends = lead_ends(ppi_design(data, g, gg, sg, judge, "micro", bounded=True))
        hits += bool(ends and ends[1] <= truth <= ends[2])
    assert y.size == 400 and hits / reps >= 0.92


@pytest.fixture
def drawn_pair(tmp_path, capsys):
    """A drawn sample (PPS with a take) of two systems' gold labels, each with its own judge, and both
    judges on every chunk of the frame."""
    pop = _population()
    rng = np.random.default_rng(21)
    pop = pop.rename(columns={"gold": "gold_a", "judge": "judge_a"})
    pop["gold_b"] = np.where(rng.random(len(pop)) < 0.2, 1 - pop["gold_a"], pop["gold_a"])
    pop["judge_b"] = np.where(rng.random(len(pop)) < 0.1, 1 - pop["gold_b"], pop["gold_b"])
    sizes = pop.groupby("doc_id").size().rename("chunks").reset_index()
    sizes.to_csv(tmp_path / "frame.csv", index=False)
    pop[["doc_id", "chunk", "judge_a", "judge_b"]].to_csv(tmp_path / "judges.csv", index=False)
    assert main(["sample", "--frame", str(tmp_path / "frame.csv"), "--doc", "doc_id", "--frame-n", "chunks",
                 "--k", "24", "--design", "pps", "--take", "4", "--seed", "5", "--out", str(tmp_path / "man.csv")]) == 0
    man = pd.read_csv(tmp_path / "man.csv")
    labels = man.merge(pop, on=["doc_id", "chunk"], how="left")
    labels[["doc_id", "draw", "chunk", "gold_a", "gold_b", "judge_a", "judge_b"]].to_csv(tmp_path / "labels.csv",
                                                                                        index=False)
    capsys.readouterr()
    return tmp_path


def test_compare_with_a_drawn_sample_is_the_python_apis_design_based_difference(capsys, drawn_pair):
    from perdoc.study.judge import load_judged_design_pair
    t = drawn_pair
    code, out, err = run(capsys, "compare", t / "labels.csv", "--doc", "doc_id", "--score", "gold_a", "--vs",
                         "gold_b", "--judge", "judge_a", "--judge-vs", "judge_b", "--judge-file", t / "judges.csv",
                         "--sample", t / "man.csv", "--json")
    assert code == 0, err
    got = json.loads(out)
    sample = load_judged_design_pair(t / "labels.csv", t / "man.csv", "doc_id", "gold_a", "gold_b", "judge_a",
                                     "judge_b", judge_file=t / "judges.csv")
    want = estimate_judged(sample).to_dict()
    assert got["headline"] == want["headline"] and got["difference"] == ["gold_a", "gold_b"]
    assert want["design"]["sampling"] == "drawn"
    code, text, _ = run(capsys, "compare", t / "labels.csv", "--doc", "doc_id", "--score", "gold_a", "--vs",
                        "gold_b", "--judge", "judge_a", "--judge-vs", "judge_b", "--judge-file", t / "judges.csv",
                        "--sample", t / "man.csv")
    assert code == 0 and "micro difference gold_a - gold_b" in text and "drawn sample (pps design" in text


@pytest.mark.parametrize("kind", ["micro", "macro"])
def test_a_drawn_difference_with_fixed_weights_is_the_difference_of_the_systems(drawn_pair, kind):
    """The Hajek ratio is linear in the corrected values: with one fixed weight the difference's
    judge-assisted estimate is A's minus B's (each with its own judge), and with weight 0 it is the
    labels-only design estimate of the difference."""
    from perdoc.study.judge import load_judged_design_pair
    t = drawn_pair
    pair = load_judged_design_pair(t / "labels.csv", t / "man.csv", "doc_id", "gold_a", "gold_b", "judge_a",
                                   "judge_b", judge_file=t / "judges.csv")
    one = {s: load_judged_design(t / "labels.csv", t / "man.csv", "doc_id", f"gold_{s}", f"judge_{s}",
                                 judge_file=t / "judges.csv") for s in "ab"}
    est = {s: ppi_design(d.data, d.g, d.gg, d.sg, d.judge, kind, lam=0.7)["estimate"] for s, d in one.items()}
    diff = ppi_design(pair.data, pair.g, pair.gg, pair.sg, pair.judge, kind, lam=0.7)
    assert diff["estimate"] == pytest.approx(est["a"] - est["b"], abs=1e-13)
    zero = ppi_design(pair.data, pair.g, pair.gg, pair.sg, pair.judge, kind, lam=0.0)
    iv = design_estimate(pair.data, bounded=False).interval(kind, "design")
    assert (zero["estimate"], zero["se"]) == (iv.estimate, iv.se)


def test_compare_sample_needs_both_judges_one_line_exit_2(capsys, drawn_pair):
    t = drawn_pair
    code, out, err = run(capsys, "compare", t / "labels.csv", "--doc", "doc_id", "--score", "gold_a", "--vs",
                         "gold_b", "--sample", t / "man.csv")
    assert code == 2 and "--sample go with --judge" in err and "Traceback" not in err
    code, out, err = run(capsys, "compare", t / "labels.csv", "--doc", "doc_id", "--score", "gold_a", "--vs",
                         "gold_b", "--judge", "judge_a", "--judge-vs", "judge_c", "--judge-file", t / "judges.csv",
                         "--sample", t / "man.csv")
    assert code == 2 and "'judge_c' (--judge-vs)" in err and len(err.strip().splitlines()) == 1
