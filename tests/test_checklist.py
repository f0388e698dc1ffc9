"""The reporting checklist: items filled from the data, statuses for gaps and non-applicable items."""

import numpy as np
import pandas as pd
import pytest

import perdoc
from perdoc import Exclusion
from perdoc.checklist import DEFAULT_OUT_OF_SCOPE, Item, checklist, checklist_frame
from perdoc.errors import ParameterError

KEYS = ["population_design", "estimand", "sample_size", "interval_method", "icc_deff", "rates",
        "out_of_scope", "bootstrap_degenerate", "exclusions"]

DESIGN = {"population": "all 1,300 PDF filings of the regulator in 2024",
          "sampling": "simple random sample of documents without replacement",
          "population_size": 1300}
ESTIMAND = {"name": "micro", "why": "the question is which share of all passages is attributed"}


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(4)
    n = np.maximum(1, np.round(rng.lognormal(3.0, 1.0, 20)))
    s = rng.binomial(n.astype(int), rng.beta(1, 3, 20)).astype(float)
    s[0], s[1] = 0.0, n[1]  # one document at rate 0, one at rate 1
    return perdoc.DocTable.from_arrays(n=n, s=s, q=s.copy(), doc=[f"d{i}" for i in range(20)])


@pytest.fixture(scope="module")
def est(table):
    return perdoc.estimate(table, replicates=199, seed=1)


def by_key(items):
    return {i.key: i for i in items}


def test_all_items_given_and_filled(table, est):
    items = checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=())
    assert [i.key for i in items] == KEYS
    assert all(isinstance(i, Item) and i.status == "given" for i in items)
    d = by_key(items)
    assert "M = 1,300" in d["population_design"].value and f"{20 / 1300:.3g}" in d["population_design"].value
    assert f"{est.micro_estimate:.4f}" in d["estimand"].value and "why:" in d["estimand"].value
    assert "K = 20 documents" in d["sample_size"].value and "median" in d["sample_size"].value
    cr2 = est.interval("micro", "cr2")
    m = d["interval_method"].value
    assert f"effective df = {cr2.df:.2f}" in m and "K = 20 documents" in m
    assert "ICC =" in d["icc_deff"].value and "89%" in d["icc_deff"].value and "74%" in d["icc_deff"].value
    f0, f1 = np.mean(table.s == 0), np.mean(table.s == table.n)
    assert f1 > 0 and f"{f0:.1%} of documents at rate 0, {f1:.1%} at rate 1" in d["rates"].value
    assert all(x in d["out_of_scope"].value for x in DEFAULT_OUT_OF_SCOPE)
    assert "of 199 replicates" in d["bootstrap_degenerate"].value
    assert d["exclusions"].value == "none"


def test_macro_estimand_reports_K_minus_1_df(table, est):
    d = by_key(checklist(table, est, design=DESIGN, estimand={"name": "macro", "why": "typical document",
                                                              "method": "t"},
                         out_of_scope=["the fixed index"], exclusions=()))
    assert "effective df = 19.00" in d["interval_method"].value
    assert d["out_of_scope"].value == "the fixed index"


def test_macro_default_is_the_document_bootstrap_t(table, est):
    # the coverage panel's default for the macro mean when the bootstrap ran (perdoc.policy)
    d = by_key(checklist(table, est, design=DESIGN, estimand={"name": "macro", "why": "typical document"}))
    v = d["interval_method"].value
    assert "bootstrap-t by document" in v and "documents resampled with replacement" in v


def test_missing_population_and_estimand(table, est):
    d = by_key(checklist(table, est, design={"population": "  ", "sampling": None}, estimand={"name": "micro"},
                         out_of_scope=[], exclusions=None))
    assert d["population_design"].status == "missing"
    assert "M not given" in d["population_design"].value
    assert d["estimand"].status == "missing"
    assert d["out_of_scope"].status == "missing"


def test_no_bootstrap_is_not_applicable(table):
    e0 = perdoc.estimate(table, replicates=0)
    d = by_key(checklist(table, e0, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=()))
    assert d["bootstrap_degenerate"].status == "not applicable"


def test_degenerate_fraction_counted():
    t = perdoc.DocTable.from_arrays(n=[4, 6, 10], s=[0, 0, 5])
    e = perdoc.estimate(t, replicates=400, seed=1)
    d = by_key(checklist(t, e, design=DESIGN | {"population_size": None}, estimand=ESTIMAND,
                         out_of_scope=None, exclusions=()))
    n_deg = int(e.bootstrap["draws"].degenerate.sum())
    assert n_deg > 0 and d["bootstrap_degenerate"].value.startswith(f"{n_deg} of 400 replicates")


def test_exclusions_counted(table, est):
    ex = (Exclusion(12, "empty chunk text"), Exclusion(3, "document id missing"))
    d = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=ex))
    v = d["exclusions"].value
    assert d["exclusions"].status == "given"
    assert v.startswith("15 rows excluded") and "12 (empty chunk text)" in v and "3 (document id missing)" in v
    # None takes the table's own exclusions; an exclusion without a reason is a gap
    t = perdoc.DocTable.from_arrays(n=table.n, s=table.s, q=table.q, exclusions=(Exclusion(2, ""),))
    d = by_key(checklist(t, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=None))
    assert d["exclusions"].status == "missing" and d["exclusions"].value.startswith("2 rows excluded")


def test_no_q_non_binary_makes_icc_missing():
    t = perdoc.DocTable.from_arrays(n=[3, 5, 8, 13, 2], s=[0.5, 2.5, 1.2, 9.0, -0.3])
    e = perdoc.estimate(t, replicates=0)
    d = by_key(checklist(t, e, design=DESIGN | {"population_size": None}, estimand=ESTIMAND,
                         out_of_scope=None, exclusions=()))
    assert d["icc_deff"].status == "missing" and "q" in d["icc_deff"].value


def test_bad_parameters(table, est):
    with pytest.raises(ParameterError):
        checklist(table, est, design={"populaton": "typo"}, estimand=ESTIMAND, exclusions=())
    with pytest.raises(ParameterError):
        checklist(table, est, design=DESIGN, estimand={"name": "median", "why": "x"}, exclusions=())
    with pytest.raises(ParameterError):
        checklist(table, est, design=DESIGN | {"population_size": 10}, estimand=ESTIMAND, exclusions=())
    with pytest.raises(ValueError):
        Item("k", "i", "v", "unknown")


def test_checklist_frame(table, est):
    items = checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=())
    df = checklist_frame(items)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["key", "item", "value", "status"]
    assert list(df["key"]) == KEYS
    assert set(df["status"]) <= {"given", "missing", "not applicable"}
