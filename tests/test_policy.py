"""The panel-backed defaults (perdoc.policy): which interval leads when no simulation decides."""

import numpy as np

from perdoc import DocTable, estimate
from perdoc.policy import default_method

RNG = np.random.default_rng(2)
N_D = RNG.integers(2, 40, 25).astype(float)


def test_bounded_micro_leads_with_logit_cr2_and_unbounded_with_cr2():
    hits = DocTable.from_arrays(N_D, np.floor(N_D * RNG.beta(2, 5, 25)))
    est = estimate(hits, replicates=0)
    assert est.metric_range == (0.0, 1.0) and default_method(est, "micro") == "logit_cr2"
    mean = RNG.normal(3.0, 1.0, 25)
    scores = DocTable.from_arrays(N_D, N_D * mean, N_D * (mean**2 + 1.0))
    est = estimate(scores, replicates=0)
    assert est.metric_range is None and default_method(est, "micro") == "cr2"


def test_logit_cr2_gives_way_when_it_has_no_interval():
    zeros = DocTable.from_arrays(N_D, np.zeros(25))            # R = 0: no logit interval
    est = estimate(zeros, replicates=0)
    assert default_method(est, "micro") == "cr2"


def test_macro_uses_the_bootstrap_t_when_it_ran():
    t = DocTable.from_arrays(N_D, np.floor(N_D * RNG.beta(2, 5, 25)))
    assert default_method(estimate(t, replicates=199), "macro") == "bootstrap_t"
    assert default_method(estimate(t, replicates=0), "macro") == "t"
    assert default_method(estimate(t, replicates=199), "macro", difference=True) == "t"


def test_json_roles_follow_the_defaults():
    t = DocTable.from_arrays(N_D, np.floor(N_D * RNG.beta(2, 5, 25)))
    d = estimate(t, replicates=199).to_dict()
    primary = {(e, m) for e in ("micro", "macro") for m, v in d[e].items() if isinstance(v, dict) and v.get("role") == "primary"}
    assert primary == {("micro", "logit_cr2"), ("macro", "bootstrap_t")}
    assert d["micro"]["cr2"]["role"] == "alternative" and d["micro"]["wald_iid"]["role"] == "baseline"
    d0 = estimate(t, replicates=0).to_dict()
    assert d0["macro"]["t"]["role"] == "primary"
