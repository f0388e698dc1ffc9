"""One answer: the headline interval follows the report's own simulation evidence."""

import re

import numpy as np
import pytest

from perdoc import DocTable, estimate
from perdoc.pseudo import pseudo_check, pseudo_population
from perdoc.report.build import choose_headline
from perdoc.simulate import SimulationResult

RNG = np.random.default_rng(5)
N_D = RNG.integers(1, 30, 20).astype(float)
S_D = np.floor(N_D * RNG.beta(1, 3, 20))
EST = estimate(DocTable.from_arrays(N_D, S_D), replicates=199, seed=1)


def sim(methods, recommended=None, level=0.95):
    full = {m: {"coverage": c, "mc_se": se, "mean_width": w, "rmse": 0.1, "no_interval": 0.0, "infinite": inf,
                "n": 2000} for m, (c, se, w, inf) in methods.items()}
    return SimulationResult(methods=full, truth={"micro": 0.2, "macro": 0.2}, k=20, reps=2000, seed=1, level=level,
                            design={"sampling": "srs"}, recommended={"micro": recommended, "macro": None})


def test_recommended_method_leads_and_is_verified():
    s = sim({"micro.cr2": (0.93, 0.005, 0.2, 0), "micro.cr3": (0.951, 0.005, 0.25, 0)}, recommended="micro.cr3")
    h = choose_headline(EST, s, "micro", basis="census", default=EST.interval("micro", "cr2"))
    assert h.interval.method == "cr3" and h.verified and not h.approximate and h.coverage == 0.951


def test_no_method_reaches_the_level_gives_approximate_closest():
    s = sim({"micro.cr2": (0.90, 0.005, 0.2, 0), "micro.cr3": (0.92, 0.005, 0.25, 0),
             "micro.wald_iid": (0.99, 0.001, 0.01, 0)})        # a baseline never leads
    h = choose_headline(EST, s, "micro", basis="census", default=EST.interval("micro", "cr2"))
    assert h.interval.method == "cr3" and h.approximate and not h.verified
    assert "came closest" in h.reason and h.to_dict()["approximate"] is True


def test_out_of_range_interval_never_leads_when_another_qualifies():
    # a rare 0/1 metric: two hits in twelve documents, so CR2 reaches below 0
    n = np.array([3 + (d * 7) % 11 for d in range(12)], float)
    s = np.array([1.0 if d in (0, 5) else 0.0 for d in range(12)])
    est = estimate(DocTable.from_arrays(n, s), replicates=0)
    ivs = {i.method: i for i in est.intervals if i.estimand == "micro"}
    assert ivs["cr2"].out_of_range and not ivs["korn_graubard"].out_of_range
    s = sim({"micro.cr2": (0.95, 0.005, 0.1, 0), "micro.korn_graubard": (0.95, 0.005, 0.3, 0)},
            recommended="micro.cr2")
    h = choose_headline(est, s, "micro", basis="census", default=est.interval("micro", "cr2"))
    assert h.interval.method == "korn_graubard" and not h.interval.out_of_range and h.verified
    s = sim({"micro.cr2": (0.93, 0.005, 0.1, 0), "micro.korn_graubard": (0.90, 0.005, 0.3, 0)})
    h = choose_headline(est, s, "micro", basis="census", default=est.interval("micro", "cr2"))
    assert h.interval.method == "korn_graubard" and h.approximate


def test_without_simulation_the_default_leads_unchecked():
    h = choose_headline(EST, None, "micro", basis="none", default=EST.interval("micro", "cr2"))
    assert h.interval.method == "cr2" and h.basis == "none" and not h.verified and not h.approximate


def test_pseudo_population_replicates_the_sample():
    t = DocTable.from_arrays(N_D, S_D)
    pop = pseudo_population(t, 210, seed=3)
    assert pop.K == 210 and len(set(pop.doc)) == 210
    counts = np.unique([d.split("#")[0] for d in pop.doc], return_counts=True)[1]
    assert set(counts) <= {10, 11} and counts.sum() == 210
    # replicated evenly, the pseudo-population's rates are the sample's
    even = pseudo_population(t, 200, seed=3)
    assert even.s.sum() / even.n.sum() == pytest.approx(t.s.sum() / t.n.sum(), rel=1e-12)


def test_pseudo_check_runs_and_declines_when_it_cannot_help():
    t = DocTable.from_arrays(N_D, S_D)
    res = pseudo_check(t, population_size=None, level=0.95, seed=1, reps=60, replicates=0)
    assert res.k == 20 and res.reps == 60 and "micro.cr2" in res.methods
    flat = DocTable.from_arrays([3, 4, 5], [0, 0, 0])
    assert pseudo_check(flat, population_size=None, level=0.95, seed=1) is None


def test_headline_names_a_heuristic_finite_population_correction():
    """The JSON marks the finite population correction of CR2 as a heuristic; the headline says so."""
    from perdoc import i18n
    from perdoc.estimate import FPC_HEURISTIC
    from perdoc.notebook import headline_sentences
    t = DocTable.from_arrays(N_D, S_D)
    with_m = estimate(t, population_size=200, replicates=0)
    cr2 = with_m.interval("micro", "cr2")
    assert FPC_HEURISTIC in cr2.to_dict()["notes"]
    h = choose_headline(with_m, None, "micro", basis="none", default=cr2)
    title, evidence = headline_sentences(h, with_m, "micro")
    assert "heuristic" in title and "heuristic" in evidence
    cr1 = with_m.interval("micro", "cr1")                 # derived for it: no heuristic
    assert FPC_HEURISTIC not in cr1.notes
    title, evidence = headline_sentences(choose_headline(with_m, None, "micro", basis="none", default=cr1),
                                         with_m, "micro")
    assert "heuristic" not in title + evidence
    without_m = estimate(t, replicates=0)                  # no population size: no correction at all
    title, evidence = headline_sentences(choose_headline(without_m, None, "micro", basis="none",
                                                         default=without_m.interval("micro", "cr2")), without_m, "micro")
    assert "heuristic" not in title + evidence
    i18n.set_language("es")
    try:
        title, evidence = headline_sentences(h, with_m, "micro")
    finally:
        i18n.set_language("en")
    assert "heurística" in title and "intervalo de confianza" in title and "grados de libertad" in title
    lo, hi = cr2.ci
    assert i18n.interval(lo, hi, ".4f", lang="es") in title and "Sin comprobar por simulación" in evidence
    assert not re.search(r"\d\.\d", title + evidence)


def test_spanish_headline_of_a_verified_method():
    from perdoc import i18n
    from perdoc.notebook import headline_sentences
    s = sim({"micro.cr2": (0.93, 0.005, 0.2, 0), "micro.cr3": (0.951, 0.005, 0.25, 0)}, recommended="micro.cr3")
    h = choose_headline(EST, s, "micro", basis="census", default=EST.interval("micro", "cr2"))
    i18n.set_language("es")
    try:
        title, evidence = headline_sentences(h, EST, "micro")
    finally:
        i18n.set_language("en")
    assert "recomendado por la simulación" in evidence and "0,951" in evidence and "sobre el censo" in evidence
    assert "CR3 (jackknife), t con K-1 grados de libertad" in title
