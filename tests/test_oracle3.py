"""Design-based estimates of drawn samples (perdoc.survey) against R's survey package.

tests/oracle/make_data3.py writes the manifests (drawn by perdoc.sampling) and labels of
tests/oracle/data3/ and cases3.json; tests/oracle/oracle3.R writes golden3.json with svymean /
svyratio on the matching svydesign; tests/oracle/run.sh runs all three. Each case covers one design:
PPS with and without replacement, take-all strata, size strata, SRS, one and two stages.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perdoc.errors import InputError
from perdoc.methods.survey import design_estimate
from perdoc.reading.manifest import load_sample, read_manifest

ORACLE = Path(__file__).parent / "oracle"
CASES = json.loads((ORACLE / "cases3.json").read_text(encoding="utf-8"))
GOLDEN = json.loads((ORACLE / "golden3.json").read_text(encoding="utf-8"))


def _estimates(case):
    cs = CASES[case]
    manifest = read_manifest(ORACLE / cs["manifest"], "doc")
    labels = pd.read_csv(ORACLE / cs["labels"], dtype={"doc": str})
    data = load_sample(labels[["doc", "y", "chunk", "draw"]], manifest, doc="doc", score="y")
    return data, design_estimate(data, level=cs["level"])


SAMPLES = sorted(c for c in CASES if "greg" not in CASES[c])
GREG = sorted(c for c in CASES if "greg" in CASES[c])


@pytest.mark.parametrize("case", GREG)
def test_greg_matches_r_survey_calibrate(case):
    """micro.greg of perdoc.estimate with a frame against svyratio on the calibrated design."""
    from perdoc import estimate, load_docs
    from perdoc.frame import read_frame
    cs = CASES[case]
    table = load_docs(ORACLE / cs["greg"], doc="doc", n="n", s="s")
    frame = read_frame(ORACLE / cs["frame_sizes"], "doc")
    assert frame.M == cs["M"] and frame.N == cs["N"]
    est = estimate(table, level=cs["level"], replicates=0, frame=frame)
    gold = GOLDEN[case]
    for method in ("greg", "logit_greg"):
        if method == "logit_greg" and est.metric_range != (0.0, 1.0):
            continue
        iv = est.interval("micro", method)
        assert iv.estimate == pytest.approx(gold["micro.estimate"], rel=1e-10)
        assert iv.se == pytest.approx(gold["micro.se"], rel=1e-10)
        assert iv.df == table.K - 2


@pytest.mark.parametrize("case", SAMPLES)
def test_design_estimates_match_r_survey(case):
    data, est = _estimates(case)
    gold = GOLDEN[case]
    # an fpc of 1e15 stands for "with replacement" in R where a take-all stratum forces fpc on every stratum
    tol = 1e-9
    for kind in ("micro", "macro"):
        iv = est.interval(kind, "design")
        assert iv.estimate == pytest.approx(gold[f"{kind}.estimate"], rel=tol, abs=1e-14)
        assert iv.se == pytest.approx(gold[f"{kind}.se"], rel=tol)
    # perdoc's df leaves the take-all documents out (they add no variance between documents); survey's
    # degf counts them: the two differ by exactly (take-all documents - take-all strata)
    takeall = data.f >= 1.0
    extra = int(takeall.sum()) - len(set(data.stratum[takeall]))
    assert est.interval("micro", "design").df == gold["degf"] - extra


def test_golden_covers_every_design():
    """The cases hold one and two stages, a document drawn twice, and every kind of stratum."""
    from perdoc.survey import stage_fractions
    stages, repeated, kinds = set(), False, set()
    for case in SAMPLES:
        m = pd.read_csv(ORACLE / CASES[case]["manifest"])
        assert case in GOLDEN
        stages.add("chunk" in m)
        repeated |= bool((m["draw"] > 1).any())
        kinds |= set(stage_fractions(m["stratum"], m["prob"], m["draw"])[1].values())
    assert stages == {True, False} and repeated
    assert {"take-all", "simple random sample"} <= kinds and any(k.startswith("unequal") for k in kinds)


@pytest.mark.parametrize("case", SAMPLES)
def test_judge_assisted_design_estimates_with_a_fixed_weight_match_r_survey(case):
    """perdoc.methods.ppi.ppi_design with a fixed weight: the design mean of ``y - lambda x`` (R's
    svymean / svyratio of it) plus lambda times the judge's population mean."""
    from perdoc.methods.ppi import JudgeScores, ppi_design
    cs = CASES[case]
    lam = cs["judge_lambda"]
    manifest = read_manifest(ORACLE / cs["manifest"], "doc")
    labels = pd.read_csv(ORACLE / cs["labels"], dtype={"doc": str})
    # the gold labels and the judge's scores matched to the manifest once (load_sample's also)
    gold = load_sample(labels[["doc", "y", "x", "chunk", "draw"]], manifest, doc="doc", score="y", also=("x",))
    judged = gold.also["x"]
    judge = JudgeScores([3.0, 5.0], [1.2, 2.8], covers=True)      # any population: F = 0.5, macro 0.48
    g = GOLDEN[case]
    for kind, F in (("micro", judge.mean), ("macro", judge.macro_mean)):
        got = ppi_design(gold, judged["s"], judged["q"], judged["sy"], judge, kind, lam=lam)
        assert got["estimate"] - lam * F == pytest.approx(g[f"judge.{kind}.estimate"], rel=1e-9, abs=1e-13)
        assert got["se"] == pytest.approx(g[f"judge.{kind}.se"], rel=1e-9)


@pytest.mark.parametrize("case", [c for c in SAMPLES if "judge_lambda" in CASES[c]])
def test_other_label_columns_sum_as_their_own_samples_do(case):
    """load_sample(also=...): the judge's per-document sums, sums of squares and sums of products
    with the labels are those of separate samples of the judge's column and of the products, to the
    bit, and the labels' own sample is unchanged."""
    cs = CASES[case]
    manifest = read_manifest(ORACLE / cs["manifest"], "doc")
    labels = pd.read_csv(ORACLE / cs["labels"], dtype={"doc": str})
    read = lambda col: load_sample(labels.assign(v=col)[["doc", "v", "chunk", "draw"]], manifest,  # noqa: E731
                                   doc="doc", score="v")
    both = load_sample(labels, manifest, doc="doc", score="y", also=("x",))
    gold, judged, cross = read(labels["y"]), read(labels["x"]), read(labels["y"] * labels["x"])
    for field in ("doc", "draw", "stratum", "prob", "N", "m", "s", "q", "f"):
        assert np.array_equal(getattr(both, field), getattr(gold, field)), field
    got = both.also["x"]
    assert np.array_equal(got["s"], judged.s) and np.array_equal(got["q"], judged.q)
    assert np.array_equal(got["sy"], cross.s)
    # a judge's score that is not a finite number is refused as a label is, naming its column
    bad = labels.assign(x=labels["x"].where(labels.index != 3, np.nan))
    with pytest.raises(InputError, match=r"the labels: column 'x' row 5 is not a finite number"):
        load_sample(bad, manifest, doc="doc", score="y", also=("x",))
    huge = labels.assign(y=labels["y"] + 1e200, x=labels["x"] + 1e200)
    with pytest.raises(InputError, match=r"row 2: 'y' times 'x' is not a finite number"):
        load_sample(huge, manifest, doc="doc", score="y", also=("x",))
