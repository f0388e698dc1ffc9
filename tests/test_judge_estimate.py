"""Judge scores on every chunk: reading the labelled rows and the judge's scores, the judge-assisted
answer (perdoc.study.judge), and ``perdoc estimate --judge`` (one answer with the Python API; bad
input -> one line, exit 2)."""

import json
import math

import numpy as np
import pytest

from perdoc.cli import main
from perdoc.methods.ppi import JudgeScores, ppi_micro
from perdoc.study.judge import estimate_judged, load_judged


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _write(path, header, rows):
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path


@pytest.fixture
def judged(tmp_path):
    """A population of 120 documents with a judge right on 85% of chunks; 20 of them labelled."""
    rng = np.random.default_rng(5)
    pop, lab = [], []
    chosen = set(rng.choice(120, 20, replace=False).tolist())
    for d in range(120):
        p = rng.beta(2, 3)
        for c in range(int(rng.integers(1, 9))):
            y = int(rng.random() < p)
            f = y if rng.random() < 0.85 else 1 - y
            pop.append((f"d{d:03d}", c, f))
            if d in chosen:
                lab.append((f"d{d:03d}", c, y, f))
    labels = _write(tmp_path / "labels.csv", "doc_id,chunk,gold,judge", lab)
    judge = _write(tmp_path / "judge.csv", "doc_id,chunk,judge", pop)
    unlabelled = _write(tmp_path / "unlabelled.csv", "doc_id,chunk,judge",
                        [r for r in pop if int(r[0][1:]) not in chosen])
    return labels, judge, unlabelled


def test_reads_the_labelled_sums_and_the_judges_population(judged):
    labels, judge, _ = judged
    s = load_judged(labels, "doc_id", "gold", "judge", judge_file=judge)
    assert s.table.K == 20 and s.judge.M == 120 and s.judge.covers
    assert s.f.shape == (20,) and np.all(s.f <= s.table.n)
    got = estimate_judged(s)
    assert got.population_size == 120                       # the judge file is the frame
    direct = ppi_micro(s.table.n, s.table.s, s.f, s.judge, fpc=math.sqrt(1 - 20 / 120))
    assert got.ppi["micro"]["estimate"] == direct["estimate"] and got.ppi["micro"]["se"] == direct["se"]
    assert got.lead("micro")["method"] == "micro.logit_ppi"      # a 0/1 metric: the logit scale


def test_cli_leads_with_the_same_interval_as_the_python_api(capsys, judged):
    labels, judge, _ = judged
    code, out, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                         "--judge-file", judge, "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    api = estimate_judged(load_judged(labels, "doc_id", "gold", "judge", judge_file=judge))
    assert d["headline"] == api.to_dict()["headline"]
    assert d["headline"]["method"] == "micro.logit_ppi" and d["judge_covers_population"] is True
    assert {"ppi", "agreement", "labels_only", "headlines"} <= set(d)
    code, out, _ = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", judge)
    h = d["headline"]
    assert code == 0 and f"[{h['low']:.4f}, {h['high']:.4f}]" in out.splitlines()[3]
    assert "worth about" in out and "labels only (logit_cr2)" in out


def test_judge_sample_estimates_the_judges_mean(capsys, judged):
    labels, _, unlabelled = judged
    code, out, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                         "--judge-sample", unlabelled, "--json")
    d = json.loads(out)
    assert code == 0 and d["judge_covers_population"] is False and d["judged_documents"] == 100
    s = load_judged(labels, "doc_id", "gold", "judge", judge_sample=unlabelled)
    sampled = ppi_micro(s.table.n, s.table.s, s.f, s.judge)
    known = ppi_micro(s.table.n, s.table.s, s.f, JudgeScores(s.judge.n, s.judge.f, covers=True))
    assert d["ppi"]["micro"]["estimate"] == sampled["estimate"] and d["ppi"]["micro"]["se"] == sampled["se"]
    assert sampled["se"] > known["se"]          # the judge's own sampling error is counted


def test_a_judge_right_on_every_labelled_document_leaves_the_labels_only_interval(capsys, tmp_path, judged):
    labels, judge, _ = judged
    rows = [line.split(",") for line in labels.read_text().splitlines()[1:]]
    same = _write(tmp_path / "same.csv", "doc_id,chunk,gold,judge", [(a, b, c, c) for a, b, c, _ in rows])
    pop = {(a, b): c for a, b, c, _ in rows}
    prow = [line.split(",") for line in judge.read_text().splitlines()[1:]]
    jf = _write(tmp_path / "judge_same.csv", "doc_id,chunk,judge", [(a, b, pop.get((a, b), f)) for a, b, f in prow])
    code, out, _ = run(capsys, "estimate", same, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", jf, "--json")
    d = json.loads(out)
    assert code == 0 and d["headline"]["basis"] == "labels only" and d["headline"]["method"] == "micro.logit_cr2"
    assert d["ppi"]["micro"]["low"] is None and d["agreement"]["documents_differing"] == 0
    code, out, _ = run(capsys, "estimate", same, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", jf)
    assert "cannot be measured" in out


@pytest.mark.parametrize("extra, message", [
    ([], "--judge-file (every population document) or --judge-sample"),
    (["--judge-file", "JUDGE", "--judge-sample", "UNLAB"], "one of them"),
    (["--judge-file", "UNLAB"], "has no judge score 'judge' in the judge file"),
    (["--judge-sample", "JUDGE"], "is both labelled and in --judge-sample"),
])
def test_bad_judge_input_is_one_line_and_exit_2(capsys, judged, extra, message):
    labels, judge, unlabelled = judged
    extra = [{"JUDGE": judge, "UNLAB": unlabelled}.get(x, x) for x in extra]
    code, out, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge", *extra)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_judge_column_must_differ_from_the_gold(capsys, judged):
    labels, judge, _ = judged
    code, _, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "gold",
                       "--judge-file", judge)
    assert code == 2 and "another column than --score" in err


def test_labelled_chunk_without_a_judge_score_is_named(capsys, tmp_path, judged):
    labels, judge, _ = judged
    lines = labels.read_text().splitlines()
    head, first = lines[0], lines[1].split(",")
    broken = tmp_path / "broken.csv"
    broken.write_text("\n".join([head, ",".join(first[:3] + [""])] + lines[2:]) + "\n")
    code, _, err = run(capsys, "estimate", broken, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", judge)
    assert code == 2 and "'judge'" in err and len(err.strip().splitlines()) == 1


def test_judge_flags_without_judge_are_refused(capsys, judged):
    labels, judge, _ = judged
    code, _, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge-file", judge)
    assert code == 2 and "go with --judge" in err


def test_text_says_no_interval_when_the_labels_only_lead_has_none(capsys, tmp_path):
    """Gold and judge 0 on every labelled chunk: no judge-assisted interval, and the labels-only one
    (a rate of 0) has none either: the text says so instead of failing."""
    lab = [(f"d{d}", c, 0, 0) for d in range(6) for c in range(3)]
    pop = [(f"d{d}", c, 0 if d < 6 else int(c == 0)) for d in range(40) for c in range(3)]
    labels = _write(tmp_path / "l.csv", "doc_id,chunk,gold,judge", lab)
    judge = _write(tmp_path / "j.csv", "doc_id,chunk,judge", pop)
    code, out, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                         "--judge-file", judge)
    assert code == 0 and err == "" and "no interval" in out.splitlines()[3]


def test_judge_sums_must_match_between_the_labels_and_the_judge_file(capsys, tmp_path, judged):
    labels, judge, _ = judged
    rows = [line.split(",") for line in judge.read_text().splitlines()[1:]]
    first_labelled = labels.read_text().splitlines()[1].split(",")[0]
    other = _write(tmp_path / "other.csv", "doc_id,chunk,judge",
                   [(a, b, (1 - int(f)) if a == first_labelled else f) for a, b, f in rows])
    code, _, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", other)
    assert code == 2 and first_labelled in err and "same judge" in err


@pytest.mark.parametrize("flag", [["--params", "params/example.yaml"], ["--write-table", "t.csv"]])
def test_judge_with_flags_it_cannot_honour_is_refused(capsys, judged, flag):
    labels, judge, _ = judged
    code, _, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", judge, *flag)
    assert code == 2 and flag[0] in err


# ------------------------------------------------------------------------------ planning with a judge
@pytest.mark.parametrize("estimand", ["micro", "macro"])
def test_the_plan_at_the_pilots_own_k_is_its_judge_assisted_half_width(judged, estimand):
    """The plan is plan_k on the judge-corrected pilot (with the interval's small-sample floor): at the
    pilot's own K it reproduces the pilot's realised judge-assisted t interval (same spread, df and
    finite population factor)."""
    from perdoc.methods.ppi import ppi_macro
    from perdoc.study.judge import corrected_table, plan_judged
    from perdoc.study.plan import half_width, pilot_inputs
    labels, judge, _ = judged
    s = load_judged(labels, "doc_id", "gold", "judge", judge_file=judge)
    fpc = math.sqrt(1 - 20 / 120)
    ppi = (ppi_micro if estimand == "micro" else ppi_macro)(s.table.n, s.table.s, s.f, s.judge, fpc=fpc)
    _, sizes, _, _ = pilot_inputs(corrected_table(s, estimand), estimand, own_sample=True)
    res = plan_judged(s, (ppi["high"] - ppi["low"]) / 2 * 1.000001, estimand=estimand)
    assert half_width(20, res["judge"].sd, 0.95, 120, sizes) == pytest.approx((ppi["high"] - ppi["low"]) / 2,
                                                                           rel=1e-12)
    assert res["judge"].K == 20 and res["judge"].population_size == 120
    assert res["labels_only"].K > res["judge"].K          # a judge right on 85% of chunks saves labels


def test_cli_plans_the_labels_a_judge_saves(capsys, judged):
    from perdoc.study.judge import plan_judged
    labels, judge, _ = judged
    code, out, err = run(capsys, "plan", "--pilot-data", labels, "--doc", "doc_id", "--score", "gold", "--judge",
                         "judge", "--judge-file", judge, "--half-width", "0.05", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    api = plan_judged(load_judged(labels, "doc_id", "gold", "judge", judge_file=judge), 0.05)
    assert d["judge"] == api["judge"].to_dict() and d["labels_only"] == api["labels_only"].to_dict()
    assert d["judge"]["K"] < d["labels_only"]["K"]
    code, out, _ = run(capsys, "plan", "--pilot-data", labels, "--doc", "doc_id", "--score", "gold", "--judge",
                       "judge", "--judge-file", judge, "--half-width", "0.05")
    assert code == 0 and f"K = {d['judge']['K']} labelled documents" in out and "saves about" in out


@pytest.mark.parametrize("extra,message", [
    (["--params", "params/example.yaml"], "--params"),
    (["--sd", "0.2"], "--sd"),
    (["--df-rule", "k-1"], "--df-rule"),
])
def test_judge_plan_refuses_flags_it_cannot_honour(capsys, judged, extra, message):
    labels, judge, _ = judged
    code, _, err = run(capsys, "plan", "--pilot-data", labels, "--doc", "doc_id", "--score", "gold", "--judge",
                       "judge", "--judge-file", judge, "--half-width", "0.05", *extra)
    assert code == 2 and message in err and err.count("\n") == 1


# ------------------------------------------------------------------------------ paired difference of two systems
@pytest.fixture
def judged_pair(tmp_path):
    """Two systems A and B on the same 20 labelled documents of 120 (A better by about 0.1), each with
    its own judge (right on 85% of chunks) over every chunk of the population."""
    rng = np.random.default_rng(8)
    pop, lab = [], []
    chosen = set(rng.choice(120, 20, replace=False).tolist())
    for d in range(120):
        p = rng.beta(2, 3)
        for c in range(int(rng.integers(1, 9))):
            ya = int(rng.random() < min(p + 0.1, 1))
            yb = int(rng.random() < p)
            fa = ya if rng.random() < 0.85 else 1 - ya
            fb = yb if rng.random() < 0.85 else 1 - yb
            pop.append((f"d{d:03d}", c, fa, fb))
            if d in chosen:
                lab.append((f"d{d:03d}", c, ya, yb, fa, fb))
    labels = _write(tmp_path / "pair.csv", "doc_id,chunk,gold_a,gold_b,judge_a,judge_b", lab)
    judge = _write(tmp_path / "pair_judge.csv", "doc_id,chunk,judge_a,judge_b", pop)
    return labels, judge


def test_paired_difference_is_the_ppi_estimator_on_the_differences(capsys, judged_pair):
    from perdoc.study.judge import load_judged_pair
    labels, judge = judged_pair
    pair = load_judged_pair(labels, "doc_id", "gold_a", "gold_b", "judge_a", "judge_b", judge_file=judge)
    a = load_judged(labels, "doc_id", "gold_a", "judge_a", judge_file=judge)
    b = load_judged(labels, "doc_id", "gold_b", "judge_b", judge_file=judge)
    assert np.array_equal(pair.table.s, a.table.s - b.table.s) and np.array_equal(pair.f, a.f - b.f)
    assert np.array_equal(pair.judge.f, a.judge.f - b.judge.f) and pair.judge.covers
    got = estimate_judged(pair, replicates=0)
    direct = ppi_micro(pair.table.n, pair.table.s, pair.f, pair.judge, fpc=math.sqrt(1 - 20 / 120),
                       chunks=(pair.q, pair.gg, pair.sg))
    assert got.ppi["micro"]["estimate"] == direct["estimate"] and got.ppi["micro"]["se"] == direct["se"]
    assert "logit_code" not in got.ppi["micro"]           # a difference is not a rate in [0, 1]
    assert got.lead("micro")["method"] == "micro.ppi"
    # labels only: what perdoc compare leads the same pairs with
    code, out, _ = run(capsys, "compare", labels, "--doc", "doc_id", "--score", "gold_a", "--vs", "gold_b",
                       "--population-size", 120, "--replicates", 0, "--json")
    plain = json.loads(out)
    lab = got.labels_interval("micro")
    assert plain["headline"]["method"] == lab.method and plain["headline"]["ci"] == pytest.approx([lab.ci.low, lab.ci.high])


def test_cli_compare_with_judges_leads_with_the_python_apis_interval(capsys, judged_pair):
    from perdoc.study.judge import load_judged_pair
    labels, judge = judged_pair
    args = ["compare", labels, "--doc", "doc_id", "--score", "gold_a", "--vs", "gold_b", "--judge", "judge_a",
            "--judge-vs", "judge_b", "--judge-file", judge]
    code, out, err = run(capsys, *args, "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    api = estimate_judged(load_judged_pair(labels, "doc_id", "gold_a", "gold_b", "judge_a", "judge_b",
                                           judge_file=judge))
    assert d["headline"] == api.to_dict()["headline"] and d["difference"] == ["gold_a", "gold_b"]
    code, text, _ = run(capsys, *args)
    h = d["headline"]
    assert code == 0 and "gold_a - gold_b" in text and f"[{h['low']:.4f}, {h['high']:.4f}]" in text


@pytest.mark.parametrize("drop,message", [("--judge-vs", "--judge-vs"), ("--vs", "--vs")])
def test_compare_with_a_judge_needs_both_systems(capsys, judged_pair, drop, message):
    labels, judge = judged_pair
    args = {"--doc": "doc_id", "--score": "gold_a", "--vs": "gold_b", "--judge": "judge_a", "--judge-vs": "judge_b",
            "--judge-file": judge}
    del args[drop]
    code, _, err = run(capsys, "compare", labels, *[x for kv in args.items() for x in kv])
    assert code == 2 and message in err and err.count("\n") == 1


# ------------------------------------------------------------------------------ a judge whose errors follow size
def test_a_judge_whose_errors_grow_with_document_size_is_warned_about(capsys, tmp_path):
    """The judge says 'relevant' wrongly in long documents only: the size check flags it, the text and
    the JSON carry the warning; the judge of the fixture above (errors unrelated to size) is not flagged."""
    from judge_data import write_size_biased
    from perdoc.methods.ppi import size_bias
    labels, judge = write_size_biased(tmp_path)
    s = load_judged(labels, "doc_id", "gold", "judge", judge_file=judge)
    sb = size_bias(s.table.n, s.table.s, s.f)
    assert sb["flag"] and sb["correlation"] > 0.5
    code, out, _ = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", judge, "--json")
    d = json.loads(out)
    assert code == 0 and len(d["warnings"]) == 1 and "--design pps" in d["warnings"][0]
    assert d["agreement"]["size_p_value"] < 0.05
    code, out, _ = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "gold", "--judge", "judge",
                       "--judge-file", judge)
    assert "warning: the judge's error rate follows document size" in out


@pytest.mark.parametrize("kind,low,high", [("symmetric", 0.0, 0.08), ("long-biased", 0.25, 1.0)])
def test_the_size_check_fires_at_its_level_for_a_judge_unrelated_to_size(kind, low, high):
    """Over 400 seeded samples of 20 documents (sizes 1 to 60, gold rates unrelated to size): a judge
    with symmetric flips (15%) is flagged at about the test's 5% level (0.05 here); a judge whose false
    'relevant' rate grows from 2% in one-chunk documents to 32% in 60-chunk ones is flagged far more
    often (0.34 here: a warning, not a guarantee, at K = 20)."""
    from perdoc.methods.ppi import size_bias
    rng = np.random.default_rng(11)
    fired = 0
    for _ in range(400):
        n = rng.integers(1, 61, 20).astype(float)
        p = rng.beta(2, 3, 20)
        s = rng.binomial(n.astype(int), p)
        if kind == "symmetric":
            f = rng.binomial(s, 0.85) + rng.binomial(n.astype(int) - s, 0.15)
        else:
            fpr = 0.02 + 0.3 * (np.log(n) / np.log(60))
            f = s + rng.binomial(n.astype(int) - s, fpr)
        fired += size_bias(n, s, f)["flag"]
    assert low <= fired / 400 <= high


def test_a_population_size_beside_a_covering_judge_file_must_be_its_count(tmp_path, capsys):
    """The judge file covers the population, so it gives M (as a frame does): a different
    --population-size is refused in one line (it was taken, and made the labelled documents a census
    with a zero-width interval); the judge file's own count is accepted."""
    from perdoc.cli import main
    lab = tmp_path / "lab.csv"
    lab.write_text("doc,gold,judge\nd1,1,1\nd1,1,1\nd2,1,1\nd2,0,0\nd3,0,0\nd3,0,1\nd4,1,1\nd4,0,1\n")
    jud = tmp_path / "jud.csv"
    jud.write_text("doc,judge\nd1,1\nd1,1\nd2,1\nd2,0\nd3,0\nd3,1\nd4,1\nd4,1\nd5,1\nd5,0\nd6,0\nd6,0\nd7,1\nd8,0\n")
    args = ["estimate", str(lab), "--doc", "doc", "--score", "gold", "--judge", "judge", "--judge-file", str(jud)]
    assert main([*args, "--population-size", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "M = 4 differs from the 8 documents of the judge file" in err
    assert main([*args, "--population-size", "8", "--json"]) == 0
    with_m = capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    assert capsys.readouterr().out == with_m
