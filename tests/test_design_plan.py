"""Planning the design (perdoc.design_plan): several takes, the budget spent rather than rounded to the
grid, and a take of a continuous metric simulated on real chunk scores (perdoc.design_sim)."""

from __future__ import annotations

import numpy as np
import pytest

from perdoc.design_plan import plan_designs
from perdoc.design_sim import simulate_design
from perdoc.errors import ParameterError
from perdoc.synthetic import CensusSpec, synthetic_census, synthetic_chunk_scores


def _spec(**kw):
    base = dict(size_sigma=1.5, icc=0.2, base_rate=0.3, documents=600, median_size=4, seed=5)
    base.update(kw)
    return CensusSpec(**base)


def test_plan_tries_every_take_and_spends_the_budget():
    c = synthetic_census(_spec())
    budget = 20 * float(np.mean(c.n))
    res = plan_designs(c, ks=(5, 10), designs=("srs", "pps"), takes=(None, 5), budget=budget, cost_doc=0.0,
                       cost_chunk=1.0, reps=40, seed=2)
    keys = {(r["design"], r["take"]) for r in res["rows"]}
    assert keys == {("srs", None), ("srs", 5), ("pps", None), ("pps", 5)}
    assert res["takes"] == [None, 5]
    # a take of 5 affords far more than 10 documents: the largest affordable K is simulated too
    extra = [r for r in res["rows"] if (r["design"], r["take"]) == ("pps", 5) and r["k"] > 10 and not r.get("check")]
    assert extra and all(r["cost"] <= budget * 1.05 for r in extra)
    assert max(r["k"] for r in extra) > 20
    rec = res["recommended"]
    if rec is not None:
        assert rec["cost"] <= budget and "take" in rec
        # it holds at its K and at every K up to twice it, which was simulated (a "check" row if off the grid)
        same = [r for r in res["rows"] if (r["design"], r["take"]) == (rec["design"], rec["take"])
                and rec["k"] <= r["k"] <= 2 * rec["k"]]
        assert all(r["holds"] for r in same) and max(r["k"] for r in same) >= min(2 * rec["k"], c.K - 1)


def test_recommendation_passes_over_a_design_whose_coverage_falls():
    """A candidate that holds at its K but not at twice it is not recommended (the fall of coverage
    with K that a model bias, or a take too small for the documents taken whole, shows)."""
    from perdoc.design_plan import _recommend

    def row(design, k, cov, hw, cost):
        return {"design": design, "take": 5, "k": k, "method": "logit_design", "coverage": cov, "mc_se": 0.01,
                "half_width": hw, "labels": cost, "cost": cost, "holds": cov >= 0.93}
    rows = [row("pps", 10, 0.96, 0.20, 50), row("pps", 40, 0.95, 0.08, 200),
            row("srs", 10, 0.95, 0.25, 50), row("srs", 40, 0.95, 0.12, 200)]
    falls = {("pps", 80): 0.88, ("srs", 80): 0.95}

    def verify(r):
        return row(r["design"], 2 * r["k"], falls.get((r["design"], 2 * r["k"]), 0.95), 0.05, 400)
    rec = _recommend(rows, half_width=None, budget=250, verify=verify)
    assert (rec["design"], rec["k"]) == ("srs", 40)
    assert any(r["design"] == "pps" and r["k"] == 80 and not r["holds"] for r in rows)


def test_plan_refuses_a_bad_take():
    c = synthetic_census(_spec(documents=50))
    with pytest.raises(ParameterError, match="--take"):
        plan_designs(c, ks=(5,), designs=("srs",), takes=(0,), budget=100, reps=20)


def test_take_of_a_continuous_metric_uses_the_chunk_scores():
    spec = _spec(metric="continuous", base_rate=0.8, size_sigma=2.0)
    c = synthetic_census(spec)
    x = synthetic_chunk_scores(spec)
    assert x.size == int(np.sum(c.n))
    with pytest.raises(ParameterError, match="chunk scores"):
        simulate_design(c, design="pps", k=10, reps=5, take=3)
    with pytest.raises(ParameterError, match="add up"):
        simulate_design(c, design="pps", k=10, reps=5, take=3, chunk_scores=x[::-1])
    r = simulate_design(c, design="pps", k=20, reps=300, seed=4, take=3, chunk_scores=x)
    m = r["methods"]["micro.logit_design"]
    assert m["coverage"] >= 0.95 - 3 * m["mc_se"], m
    # 3 labels per drawn document, more in a certainty one (self-weighting), never the whole documents
    assert 3 * 20 * 0.5 < r["labels_mean"] < min(3 * 20 * 1.5, float(np.sort(c.n)[-20:].sum()))
    # a take as large as every document is the whole-document design, sample for sample
    big = int(np.max(c.n))
    a = simulate_design(c, design="srs", k=10, reps=30, seed=9, take=big, chunk_scores=x)
    b = simulate_design(c, design="srs", k=10, reps=30, seed=9)
    assert a["methods"]["micro.design"]["mean_width"] == pytest.approx(b["methods"]["micro.design"]["mean_width"],
                                                                       rel=1e-12)


def _continuous_census(path, seed=1, docs=200):
    import pandas as pd
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(docs):
        n = int(np.ceil(rng.lognormal(1.5, 1.2)))
        mu = rng.beta(2, 2)
        rows += [(f"d{d}", float(np.clip(rng.normal(mu, 0.2), 0, 1))) for _ in range(n)]
    pd.DataFrame(rows, columns=["doc", "score"]).to_csv(path, index=False)
    frame = pd.DataFrame(rows, columns=["doc", "score"]).groupby("doc", sort=False).size().rename("n")
    frame.to_csv(path.with_name("frame.csv"))
    return path


def test_cli_simulates_a_take_of_a_continuous_census(tmp_path, capsys):
    import json
    from perdoc.cli import main
    census = _continuous_census(tmp_path / "census.csv")
    assert main(["simulate", "--census", str(census), "--doc", "doc", "--score", "score", "--k", "10",
                 "--design", "pps", "--take", "3", "--reps", "40", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["take"] == 3 and res["labels_mean"] <= 30 and 0 <= res["methods"]["micro.design"]["coverage"] <= 1


def test_cli_plan_compares_a_list_of_takes(tmp_path, capsys):
    import json
    from perdoc.cli import main
    census = _continuous_census(tmp_path / "census.csv")
    args = ["plan", "--frame", str(tmp_path / "frame.csv"), "--doc", "doc", "--census", str(census), "--score",
            "score", "--budget", "120", "--ks", "5,10", "--designs", "srs,pps", "--reps", "30"]
    assert main([*args, "--take", "all,4", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["takes"] == [None, 4] and {r["take"] for r in res["rows"]} == {None, 4}
    assert main([*args, "--take", "4"]) == 0
    out = capsys.readouterr().out
    assert "take" in out.splitlines()[1] and "recommended" in out or "no design" in out
    assert main([*args, "--take", "0"]) == 2
    assert "--take" in capsys.readouterr().err


@pytest.mark.parametrize("flags, named", [(["--reps", "0"], "reps"), (["--reps", "-1"], "reps"),
                                          (["--reps", "100000000000"], "reps"), (["--seed", "-1"], "seed"),
                                          (["--take", "0"], "--take"), (["--take", "-1"], "--take"),
                                          (["--level", "1"], "level"), (["--level", "1.5"], "level")])
@pytest.mark.parametrize("command", ["simulate", "plan"])
def test_cli_design_simulations_refuse_bad_flags_in_one_line(tmp_path, capsys, command, flags, named):
    """simulate --design and plan --frame refuse repetitions, seeds, takes and levels no simulation can
    take with one line naming them and status 2 (they raised tracebacks, or plan showed every design
    "not possible" and exited 0); plan refuses a negative cost the same way."""
    from perdoc.cli import main
    census = _continuous_census(tmp_path / "census.csv", docs=30)
    if command == "simulate":
        args = ["simulate", "--census", str(census), "--doc", "doc", "--score", "score", "--k", "5",
                "--design", "pps", "--reps", "20"]
    else:
        args = ["plan", "--frame", str(tmp_path / "frame.csv"), "--doc", "doc", "--census", str(census), "--score",
                "score", "--half-width", "0.2", "--ks", "5", "--designs", "srs", "--reps", "20"]
    assert main([*args, *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and named in err
    if command == "plan":
        assert main([*args, "--cost-doc", "-10"]) == 2
        assert "--cost-doc must be a finite number >= 0" in capsys.readouterr().err


def test_planning_population_spreads_tied_pilot_sizes():
    """Pilot documents of one size are tied for every frame document of that size: each takes one of
    them at random, so the population keeps the pilot's spread of rates (taking the first of the ties
    gave every frame document the same rate, and a plan with coverage 0)."""
    from perdoc.design_plan import planning_population
    from perdoc.frame import Frame
    from perdoc.table import DocTable
    pilot = DocTable.from_arrays([4.0] * 20, [float(i % 5) for i in range(20)], [float(i % 5) for i in range(20)])
    frame = Frame.from_arrays([f"d{i}" for i in range(400)], np.full(400, 4.0))
    pop = planning_population(frame, pilot)
    rates = pop.s / pop.n
    assert 0.35 < rates.mean() < 0.65 and rates.std() > 0.2
    assert np.array_equal(planning_population(frame, pilot).s, pop.s)   # seeded


def test_planning_population_does_not_copy_all_hit_documents():
    """Short pilot documents with every chunk a hit (common for hit@k near 0.9) must not make frame
    documents that can never miss: each frame document's rate is drawn from the beta posterior of its
    pilot neighbour, so a 100-chunk frame document near a 4-of-4 pilot document keeps some misses,
    while the pilot's mean carries over."""
    from perdoc.design_plan import _beta_prior, planning_population
    from perdoc.frame import Frame
    from perdoc.table import DocTable
    rng = np.random.default_rng(3)
    n = np.full(20, 4.0)
    s = rng.binomial(4, 0.9, 20).astype(float)                     # a rate of 0.9 and no document effect
    assert np.sum(s == 4) >= 10                                      # over half the pilot: all hits
    pilot = DocTable.from_arrays(n, s, s)
    pop = planning_population(Frame.from_arrays([f"d{i}" for i in range(500)], np.full(500, 100.0)), pilot)
    assert np.mean(pop.s == pop.n) < 0.2                             # copied rates: 15 of 20, three in four
    assert abs(pop.s.sum() / pop.n.sum() - s.sum() / n.sum()) < 0.05
    a, b = _beta_prior(s, n)
    assert 0.0 < a / (a + b) < 1.0 and 0.01 <= 1 / (a + b + 1) <= 0.99
    # the prior recovers the intra-document correlation of beta-binomial data
    est = []
    for r in range(100):
        t = (1 - 0.2) / 0.2
        k = np.maximum(1, np.round(rng.lognormal(2.0, 1.0, 20)))
        hits = rng.binomial(k.astype(int), rng.beta(0.3 * t, 0.7 * t, 20)).astype(float)
        a, b = _beta_prior(hits, k)
        est.append(1 / (a + b + 1))
    assert 0.12 < np.median(est) < 0.28


def test_pilot_tail_measures_what_the_pilot_never_saw():
    """The share of the frame's chunks in documents longer than the pilot's longest, against the
    frame's warning threshold."""
    from perdoc.design_plan import pilot_tail
    from perdoc.frame import TAIL_WARN, Frame
    from perdoc.table import DocTable
    frame = Frame.from_arrays([f"d{i}" for i in range(10)], [1.0] * 8 + [10.0, 30.0])
    pilot = DocTable.from_arrays([1.0, 1.0, 10.0], [1.0, 0.0, 5.0], [1.0, 0.0, 5.0])
    t = pilot_tail(frame, pilot)
    assert t["share"] == pytest.approx(30 / 48) and t["documents_beyond"] == 1 and t["longest_pilot"] == 10
    assert t["restrict"] and t["threshold"] == TAIL_WARN and t["designs"] == ["pps"]
    # a pilot holding the longest document sees the whole frame
    assert pilot_tail(frame, pilot, sizes=[1.0, 1.0, 30.0])["share"] == 0.0
    assert not pilot_tail(frame, pilot, sizes=[1.0, 1.0, 30.0])["restrict"]


def test_plan_from_a_pilot_blind_to_the_long_documents_recommends_only_self_weighting_designs():
    """From a pilot that never saw the documents holding much of the frame's chunks, only a design in
    which every chunk has the same chance of being labelled (PPS) may be recommended: the others'
    coverage rests on rates the pilot borrowed for those documents. They are still simulated and
    shown; without the restriction the same plan recommends another design."""
    from perdoc.design_plan import _recommend

    def row(design, k, hw):
        return {"design": design, "take": 5, "k": k, "method": "logit_design", "coverage": 0.95, "mc_se": 0.01,
                "half_width": hw, "labels": 5 * k, "cost": 5 * k, "holds": True}
    rows = [row("stratified", 20, 0.05), row("stratified", 40, 0.03), row("pps", 20, 0.07), row("pps", 40, 0.04)]
    assert _recommend([dict(r) for r in rows], half_width=None, budget=200)["design"] == "stratified"
    assert _recommend([dict(r) for r in rows], half_width=None, budget=200, allowed={"pps"})["design"] == "pps"
    assert _recommend([dict(r) for r in rows if r["design"] != "pps"], half_width=None, budget=200,
                      allowed={"pps"}) is None
    c = synthetic_census(_spec())
    tail = {"share": 0.5, "documents_beyond": 30, "longest_pilot": 12.0, "threshold": 0.15, "restrict": True,
            "designs": ["pps"]}
    res = plan_designs(c, ks=(10, 20), designs=("srs", "pps"), takes=(5,), budget=20 * float(np.mean(c.n)),
                       cost_doc=0.0, cost_chunk=1.0, reps=40, seed=2, basis="pilot", tail=tail)
    assert res["pilot_tail"] == tail and {r["design"] for r in res["rows"]} >= {"srs", "pps"}
    assert res["recommended"] is None or res["recommended"]["design"] == "pps"


def test_cli_plan_from_a_pilot_says_what_it_never_saw(tmp_path, capsys):
    """perdoc plan --pilot-data: a pilot of short documents from a frame with long ones says so in one
    line, and recommends nothing but PPS (the JSON carries the measure)."""
    import json
    import pandas as pd
    from perdoc.cli import main
    rng = np.random.default_rng(4)
    sizes = np.concatenate([rng.integers(1, 6, 300), [60, 80, 120, 150, 200]])
    pd.DataFrame({"doc": [f"d{i}" for i in range(sizes.size)], "n": sizes}).to_csv(tmp_path / "frame.csv",
                                                                                  index=False)
    rows = [(f"d{i}", int(rng.random() < 0.7)) for i in range(20) for _ in range(int(sizes[i]))]
    pd.DataFrame(rows, columns=["doc", "hit"]).to_csv(tmp_path / "pilot.csv", index=False)
    args = ["plan", "--frame", str(tmp_path / "frame.csv"), "--doc", "doc", "--pilot-data", str(tmp_path / "pilot.csv"),
            "--score", "hit", "--budget", "150", "--ks", "10", "--designs", "srs,certainty,pps", "--take", "5",
            "--reps", "20"]
    assert main([*args, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    tail = res["pilot_tail"]
    assert tail["restrict"] and tail["share"] > 0.3 and tail["documents_beyond"] == 5
    assert res["recommended"] is None or res["recommended"]["design"] == "pps"
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "never saw" in out and "(pps) are recommended" in out
    assert main([*args[:-6], "--designs", "srs", "--take", "5", "--reps", "20"]) == 0
    assert "only --designs pps can be recommended" in capsys.readouterr().out


def test_report_plan_from_the_study_as_pilot_carries_the_tail(tmp_path):
    """planning.design with design.frame and no census: this study's labels make the planning
    population; the plan carries what the study never saw (pilot_tail), honours it, and the report's
    planning section says so."""
    import json
    import re
    from pathlib import Path
    from perdoc.report.build import build_report
    root = Path(__file__).resolve().parents[1] / "data" / "example"
    p = tmp_path / "p.yaml"
    p.write_text(f"name: p\ndata: {{path: {root / 'sample.csv'}, doc: doc_id, score: bm25}}\n"
                 f"design: {{population: x, sampling: srs, frame: {root / 'frame.csv'}}}\n"
                 "estimand: {kind: micro, why: y}\nintervals: {level: 0.95, replicates: 199, seed: 1}\n"
                 "planning: {design: {designs: [srs, pps], takes: [5], ks: [10, 20], reps: 20}}\n", encoding="utf-8")
    html = build_report(p, tmp_path / "out").read_text(encoding="utf-8")
    res = json.loads((tmp_path / "out" / "p" / "summary.json").read_text())["planning_design"]
    tail = res["pilot_tail"]
    # the example's 20 documents: the longest has 177 chunks, 42 of the frame's 1,300 are longer
    assert res["basis"] == "pilot" and tail["longest_pilot"] == 177 and tail["documents_beyond"] == 42
    assert tail["restrict"] and tail["share"] > tail["threshold"]
    assert res["recommended"] is None or res["recommended"]["design"] == "pps"
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "42 longer documents it never saw" in text and "Traceback" not in html


@pytest.mark.parametrize("flags", [["--population-size", "1000"], ["--estimand", "macro"], ["--df-rule", "k-1"],
                                   ["--pilot", "study"]])
def test_cli_plan_with_a_frame_refuses_flags_it_would_pass_over(tmp_path, capsys, flags):
    from perdoc.cli import main
    census = _continuous_census(tmp_path / "census.csv", docs=30)
    args = ["plan", "--frame", str(tmp_path / "frame.csv"), "--doc", "doc", "--census", str(census), "--score",
            "score", "--half-width", "0.2", "--ks", "5", "--designs", "srs", "--reps", "20"]
    assert main([*args, *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not go with --frame" in err and flags[0] in err
    assert main([*args, "--estimand", "micro"]) == 0    # (what it plans anyway)


@pytest.mark.parametrize("flags, design", [(["--take", "3"], None), (["--with-replacement"], None),
                                           (["--replicates", "9"], "pps"), (["--frame"], "srs"),
                                           (["--with-replacement"], "srs")])
def test_cli_simulate_refuses_flags_of_the_other_kind_of_simulation(tmp_path, capsys, flags, design):
    """simulate without --design draws whole documents at random and bootstraps; with it, the
    design-based intervals without a bootstrap: a flag of the other kind is refused, not passed over."""
    from perdoc.cli import main
    census = _continuous_census(tmp_path / "census.csv", docs=30)
    args = ["simulate", "--census", str(census), "--doc", "doc", "--score", "score", "--k", "5", "--reps", "5"]
    assert main([*args, *(["--design", design] if design else []), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and flags[0] in err and "Traceback" not in err
