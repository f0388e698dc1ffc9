"""perdoc against golden values from R (clubSandwich, survey, base R).

tests/oracle/make_data.py writes the datasets and cases.json; tests/oracle/oracle.R writes
tests/oracle/golden.json ({case: {"dotted.key.path": value}}); tests/oracle/run.sh does both and
then runs this file. Each (case, key) pair is one test, so a failure names both.
"""

from __future__ import annotations

import filecmp
import functools
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from golden import close, rel, walk

ORACLE = Path(__file__).resolve().parent / "oracle"
GOLDEN_PATH = ORACLE / "golden.json"
CASES_PATH = ORACLE / "cases.json"


# Keys every case must have in golden.json (cr2_ik only for N <= 2000, checked separately).
CONTRACT_KEYS = [
    "K", "N", "level",
    "micro.estimate",
    "micro.cr1.se", "micro.cr1.df", "micro.cr1.ci",
    "micro.cr2.se", "micro.cr2.df", "micro.cr2.ci",
    "micro.cr3.se", "micro.cr3.df", "micro.cr3.ci",
    "micro.wald_iid.se", "micro.wald_iid.ci",
    "micro.wald_eff_n.se", "micro.wald_eff_n.ci",
    "macro.estimate", "macro.t.se", "macro.t.df", "macro.t.ci",
    "diagnostics.icc", "diagnostics.deff", "diagnostics.n_eff", "diagnostics.g_star",
    "diagnostics.max_share", "diagnostics.frac_rate_0", "diagnostics.frac_rate_1",
    "diagnostics.deff_realised",
]


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


GOLDEN = _load(GOLDEN_PATH)
CASES = _load(CASES_PATH)
GOLDEN_PARAMS = [
    pytest.param(case, key, id=f"{case}:{key}")
    for case in sorted(GOLDEN) if not case.startswith("_")
    for key in GOLDEN[case]
]


@functools.lru_cache(maxsize=None)
def _perdoc_result(case: str) -> dict:
    from perdoc import DocTable, estimate

    spec = CASES[case]
    chunks = pd.read_csv(ORACLE / "data" / spec["data"], dtype={"doc": str, "y": float})
    chunks["y2"] = chunks["y"] ** 2
    g = chunks.groupby("doc", sort=True).agg(n=("y", "size"), s=("y", "sum"), q=("y2", "sum"))
    table = DocTable.from_arrays(n=g["n"].to_numpy(), s=g["s"].to_numpy(), q=g["q"].to_numpy(),
                                 doc=g.index.to_numpy())
    res = estimate(table, level=spec["level"], population_size=spec["population_size"], replicates=0)
    return res.to_dict()






@pytest.mark.skipif(not GOLDEN, reason="tests/oracle/golden.json missing: run tests/oracle/run.sh")
@pytest.mark.parametrize("case,key", GOLDEN_PARAMS)
def test_matches_r(case, key):
    want = GOLDEN[case][key]
    result = _perdoc_result(case)
    try:
        got = walk(result, key)
    except KeyError as e:
        pytest.fail(f"{case}: key {key!r} missing from perdoc's to_dict() (at {e.args[0]!r})")
    if isinstance(want, list):
        assert got is not None, f"{case}: {key} is None, R gives {want}"
        got = list(got)
        assert len(got) == len(want), f"{case}: {key} has {len(got)} elements, R gives {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert close(g, w), f"{case}: {key}[{i}] perdoc {g!r} vs R {w!r} (rel diff {rel(g, w):.3g})"
    else:
        assert close(got, want), f"{case}: {key} perdoc {got!r} vs R {want!r} (rel diff {rel(got, want):.3g})"


def test_make_data_is_deterministic(tmp_path):
    script = ORACLE / "make_data.py"
    for run in ("a", "b"):
        subprocess.run([sys.executable, str(script), str(tmp_path / run)], check=True)
    names = sorted(p.name for p in (ORACLE / "data").glob("*.csv"))
    assert names, "tests/oracle/data has no CSV files"
    assert sorted(p.name for p in (tmp_path / "a" / "data").glob("*.csv")) == names
    for name in names:
        for run in ("a", "b"):
            assert filecmp.cmp(tmp_path / run / "data" / name, ORACLE / "data" / name, shallow=False), \
                f"{name}: make_data.py run {run} differs from tests/oracle/data/{name}"
        assert (ORACLE / "data" / name).stat().st_size < 50_000, f"{name} is over 50 KB"
    for run in ("a", "b"):
        assert filecmp.cmp(tmp_path / run / "cases.json", CASES_PATH, shallow=False)


def test_golden_covers_contract():
    assert GOLDEN, "tests/oracle/golden.json missing: run tests/oracle/run.sh"
    cases = [c for c in GOLDEN if not c.startswith("_")]
    assert set(cases) == set(CASES), "golden.json and cases.json list different cases"
    assert len({CASES[c]["data"] for c in cases}) >= 6
    assert any(CASES[c]["population_size"] is not None for c in cases)
    assert any(CASES[c]["population_size"] is None for c in cases)
    assert any(CASES[c]["level"] == 0.90 for c in cases)
    for c in cases:
        missing = [k for k in CONTRACT_KEYS if k not in GOLDEN[c]]
        assert not missing, f"{c}: golden.json lacks {missing}"
        if GOLDEN[c]["N"] <= 2000:
            assert "micro.cr2_ik.df" in GOLDEN[c], f"{c}: golden.json lacks micro.cr2_ik.df"
    versions = GOLDEN.get("_versions", {})
    assert {"R", "clubSandwich", "survey"} <= set(versions)
