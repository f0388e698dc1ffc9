"""Design identities: one stratum is the simple design; a two-stage sample that takes every chunk
is the one-stage design with the finite population correction."""

import numpy as np
import pytest

from perdoc import DocTable, estimate, estimate_design
from perdoc.errors import InputError

from conftest import make_table


def test_one_stratum_equals_simple_design_with_fpc():
    t = make_table(K=15, seed=11)
    one = estimate_design(t, design={"sampling": "stratified",
                                     "strata": {"by": ["all"] * t.K, "population_sizes": {"all": 90}}}).to_dict()
    srs = estimate(t, population_size=90, replicates=0).to_dict()
    assert one["micro"]["estimate"] == pytest.approx(srs["micro"]["estimate"], rel=1e-14)
    assert one["micro"]["design"]["se"] == pytest.approx(srs["micro"]["cr1"]["se"], rel=1e-12)
    assert one["micro"]["design"]["df"] == srs["micro"]["cr1"]["df"]
    assert one["macro"]["design"]["se"] == pytest.approx(srs["macro"]["t"]["se"], rel=1e-12)


def test_two_stage_with_every_chunk_equals_one_stage_with_fpc():
    t = make_table(K=12, seed=12, binary=False)
    two = estimate_design(t, design={"sampling": "two_stage", "population_size": 60,
                                     "chunks_in_doc": t.n}).to_dict()
    one = estimate(t, population_size=60, replicates=0).to_dict()
    assert two["micro"]["estimate"] == pytest.approx(one["micro"]["estimate"], rel=1e-14)
    assert two["micro"]["design"]["se"] == pytest.approx(one["micro"]["cr1"]["se"], rel=1e-12)


def test_stratified_needs_two_documents_per_stratum():
    t = make_table(K=6, seed=13)
    with pytest.raises(InputError, match=r"stratum 'b' has 1 sampled document"):
        estimate_design(t, design={"sampling": "stratified", "strata": {
            "by": ["a"] * 5 + ["b"], "population_sizes": {"a": 50, "b": 10}}})


def test_two_stage_single_chunk_subsample_refused():
    t = DocTable.from_arrays(n=[1, 3, 4], s=[1, 1, 2], q=[1, 1, 2])
    with pytest.raises(InputError, match=r"single sampled chunk"):
        estimate_design(t, design={"sampling": "two_stage", "population_size": 10, "chunks_in_doc": [5, 3, 4]})


def test_stratified_weights_change_the_estimate():
    rng = np.random.default_rng(3)
    n = np.r_[rng.integers(80, 200, 5), rng.integers(1, 20, 5)].astype(float)
    s = np.r_[0.4 * n[:5], 0.1 * n[5:]].round()
    t = DocTable.from_arrays(n=n, s=s)
    d = estimate_design(t, design={"sampling": "stratified", "strata": {
        "by": ["large"] * 5 + ["small"] * 5, "population_sizes": {"large": 10, "small": 1000}}}).to_dict()
    # the small stratum stands for far more documents, so the weighted micro mean moves towards it
    assert d["micro"]["estimate"] < s.sum() / n.sum()
