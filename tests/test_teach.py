"""The teaching path (notebooks/teach) and its helpers (perdoc.teach): every notebook executes in a fresh
kernel, is committed without outputs, its exercises have collapsed solutions that the checks accept;
the coverage lab's callbacks give results that make sense; each check accepts the right answer and
rejects wrong ones."""

import math
from pathlib import Path

import nbformat
import numpy as np
import papermill as pm
import pytest
from scipy import stats

from perdoc import ParameterError, teach
from perdoc.charts import to_svg
from perdoc.simulate import simulate

TEACH = Path(__file__).resolve().parents[1] / "notebooks" / "teach"
NOTEBOOKS = sorted(TEACH.glob("*.ipynb"))
# small parameters: the whole path runs in well under two minutes
FAST = {"replicates": 199, "reps": 60}


def read(path):
    return nbformat.read(path, as_version=4)


def parameter_names(nb) -> set[str]:
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    names = set()
    for c in cells:
        for line in c.source.splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                names.add(line.split("=", 1)[0].strip())
    return names


def outputs_text(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        for key in ("text/plain", "text/html"):
            if key in o.get("data", {}):
                parts.append(str(o["data"][key]))
    return "\n".join(parts)


# ====================================================================== the notebooks
def test_the_path_is_there():
    stems = [p.stem for p in NOTEBOOKS]
    assert len(stems) >= 4 and stems == sorted(stems)
    assert "04_coverage_lab" in stems and "05_exercises" in stems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    nb = read(path)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    for c in nb.cells:
        if c.cell_type == "code":
            assert not c.outputs and c.execution_count is None, (path.name, c.source[:60])
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    assert "widgets" not in nb.metadata  # no saved widget state either


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every notebook of the path run top to bottom by papermill: a fresh kernel each, cwd = the
    notebook's folder, small parameters."""
    out = tmp_path_factory.mktemp("teach")
    done = {}
    for path in NOTEBOOKS:
        nb = read(path)
        params = {k: v for k, v in FAST.items() if k in parameter_names(nb)}
        target = out / path.name
        pm.execute_notebook(str(path), str(target), parameters=params, kernel_name="python3", cwd=str(TEACH),
                            progress_bar=False)
        done[path.stem] = read(target)
    return done


@pytest.mark.parametrize("stem", [p.stem for p in NOTEBOOKS])
def test_notebook_executes_without_error(executed, stem):
    nb = executed[stem]
    ran = [c for c in nb.cells if c.cell_type == "code"]
    assert ran and all(c.execution_count is not None for c in ran)
    for c in ran:
        for o in c.get("outputs", []):
            assert o.get("output_type") != "error", (stem, o.get("ename"), o.get("evalue"))
            assert not (o.get("output_type") == "stream" and o.get("name") == "stderr"), (stem, o.get("text"))


def test_by_hand_notebooks_compare_with_perdoc():
    """Notebooks 1 to 3 put a hand computation next to perdoc's and assert that they agree."""
    for path in NOTEBOOKS[:3]:
        src = "\n".join(c.source for c in read(path).cells if c.cell_type == "code")
        assert src.count("assert") >= 5, path.name
        assert "import perdoc" in src


def test_lab_notebook_shows_a_result_without_widgets(executed):
    """A static render reads well: a plain cell runs the lab with the default values and shows the chart
    (static SVG) and the table; the widgets cell only wires controls to perdoc.teach."""
    nb = executed["04_coverage_lab"]
    code = [c for c in nb.cells if c.cell_type == "code"]
    widget_cells = [c for c in code if "ipywidgets" in c.source]
    assert len(widget_cells) == 1 and "teach.coverage_lab(" in widget_cells[0].source
    first_lab = next(c for c in code if "teach.show_lab(" in c.source and "ipywidgets" not in c.source)
    assert code.index(first_lab) < code.index(widget_cells[0])
    shown = outputs_text(first_lab)
    assert "<svg" in shown and "micro.wald_iid" in shown and "micro.logit_cr2" in shown
    assert "def " not in "\n".join(c.source for c in code if c is not widget_cells[0])


def test_solutions_are_collapsed_and_right(executed):
    nb = executed["05_exercises"]
    solutions = [c for c in nb.cells if "solution" in c.get("metadata", {}).get("tags", [])]
    checks = [name for name in teach.__all__ if name.startswith("check_")]
    assert len(solutions) == len(checks) >= 4
    for c in solutions:
        assert c.cell_type == "code"
        assert c.metadata.get("jupyter", {}).get("source_hidden") is True
        text = outputs_text(c)
        assert "Right." in text or "All right." in text, c.source[:80]
        assert "Not yet" not in text and "not yet" not in text
    for name in checks:
        # each check is called once for the student's answer (outside the solution) and once in a solution
        asked = [c for c in nb.cells if c.cell_type == "code" and f"teach.{name}(" in c.source]
        assert any(c in solutions for c in asked) and any(c not in solutions for c in asked), name


def test_committed_solution_cells_are_collapsed():
    for path in NOTEBOOKS:
        for c in read(path).cells:
            if "solution" in c.get("metadata", {}).get("tags", []):
                assert c.metadata["jupyter"]["source_hidden"] is True, path.name


def test_student_cells_start_unanswered(executed):
    """Before the student writes anything, the exercise cells say "not yet" (and do not fail)."""
    nb = executed["05_exercises"]
    student = [c for c in nb.cells if c.cell_type == "code" and "teach.check_" in c.source
               and "solution" not in c.get("metadata", {}).get("tags", [])]
    assert student
    for c in student:
        assert "None" in c.source
        assert "Not yet" in outputs_text(c) or "Not all right yet" in outputs_text(c)


# ====================================================================== the coverage lab's callbacks
@pytest.fixture(scope="module")
def hard_case():
    """K = 10, strongly unequal sizes, ICC 0.3, base rate 0.2: enough samples for stable shares."""
    return teach.coverage_lab(k=10, sigma=1.5, icc=0.3, base_rate=0.2, reps=3000, seed=1)


def test_lab_iid_and_cr1_fail_where_the_default_holds(hard_case):
    cov = dict(zip(hard_case.method, hard_case.coverage))
    verdict = dict(zip(hard_case.method, hard_case.verdict))
    assert list(hard_case.method) == list(teach.DEFAULT_METHODS)
    assert cov["micro.wald_iid"] < 0.6                 # chunks as cases: most intervals miss
    assert cov["micro.cr1"] < 0.85                     # documents, but no leverage correction, K - 1 df
    assert cov["micro.cr2"] > cov["micro.cr1"] + 0.08  # CR2 with Bell-McCaffrey df repairs most of it
    assert cov["micro.cr2"] > 0.85
    assert cov["micro.logit_cr2"] >= 0.93              # perdoc's default for a 0/1 metric holds
    assert verdict["micro.wald_iid"] == verdict["micro.cr1"] == "falls short"
    assert verdict["micro.logit_cr2"] == "holds"
    widths = dict(zip(hard_case.method, hard_case.mean_width))
    assert widths["micro.wald_iid"] < widths["micro.cr1"] < widths["micro.cr2"]


def test_lab_is_perdocs_simulation(hard_case):
    """The lab's numbers are perdoc.simulate's on the lab census, not a copy of the method."""
    census = teach.lab_census(1.5, 0.3, 0.2, seed=1)
    sim = simulate(census, k=10, reps=3000, seed=1, replicates=0)
    for row in hard_case.itertuples():
        m = sim.methods[row.method]
        assert (row.coverage, row.mc_se, row.mean_width, row.miss_low, row.miss_high) == \
            (m["coverage"], m["mc_se"], m["mean_width"], m["miss_low"], m["miss_high"])
    a = hard_case.attrs
    assert a["truth"]["micro"] == pytest.approx(census.s.sum() / census.N, rel=1e-12)
    assert a["census"]["documents"] == 1000 and 0.45 < a["census"]["top10_share"] < 0.8
    assert a["replicates"] == 0  # no bootstrap method chosen: none drawn


def test_lab_rows_add_up(hard_case):
    for row in hard_case.itertuples():
        assert row.coverage + row.miss_low + row.miss_high + row.no_interval == pytest.approx(1.0, abs=1e-12)
        assert row.mc_se == pytest.approx(math.sqrt(row.coverage * (1 - row.coverage) / 3000))


def test_lab_equal_sizes_cr1_is_cr2():
    """Every leverage 1/K and Bell-McCaffrey df K - 1: CR1 and CR2 are the same interval."""
    df = teach.coverage_lab(k=8, sigma=0.0, icc=0.3, base_rate=0.3, methods=["cr1", "cr2"], reps=400, seed=2)
    a, b = df.iloc[0], df.iloc[1]
    assert a.coverage == b.coverage
    assert a.mean_width == pytest.approx(b.mean_width, rel=1e-12)


def test_lab_iid_wald_fails_because_of_the_icc():
    near_independent = teach.coverage_lab(k=10, sigma=0.0, icc=0.01, methods=["wald_iid"], reps=3000, seed=1)
    clustered = teach.coverage_lab(k=10, sigma=0.0, icc=0.5, methods=["wald_iid"], reps=3000, seed=1)
    assert near_independent.coverage[0] > 0.88
    assert clustered.coverage[0] < 0.72


def test_lab_method_names_and_bootstrap():
    df = teach.coverage_lab(k=6, methods=["cr2", "micro.wald_iid", "t", "bootstrap_t", "cr2"], reps=40,
                            seed=3, replicates=49)
    assert list(df.method) == ["micro.cr2", "micro.wald_iid", "macro.t", "micro.bootstrap_t"]
    assert list(df.estimand) == ["micro", "micro", "macro", "micro"]
    assert list(df.baseline) == [False, True, False, False]
    assert df.attrs["replicates"] == 49
    assert df.attrs["truth"]["macro"] == pytest.approx(df.attrs["census"]["macro"])


@pytest.mark.parametrize("kwargs, name", [
    ({"k": 1}, "k"), ({"k": 2.5}, "k"), ({"k": 1000}, "k"), ({"sigma": -0.1}, "sigma"),
    ({"sigma": "wide"}, "sigma"), ({"icc": 0.0}, "icc"), ({"icc": 1.0}, "icc"), ({"base_rate": 1.5}, "base_rate"),
    ({"base_rate": float("nan")}, "base_rate"), ({"methods": []}, "methods"), ({"methods": ["cr9"]}, "methods"),
    ({"reps": 0}, "reps"), ({"reps": True}, "reps"), ({"reps": 10**7}, "reps"), ({"level": 1.0}, "level"),
    ({"methods": ["bootstrap_t"], "replicates": 5}, "replicates"), ({"documents": 2}, "documents"),
])
def test_lab_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(ParameterError) as err:
        teach.coverage_lab(**{"reps": 20, **kwargs})
    msg = str(err.value)
    assert msg.startswith(name + " ") or msg.startswith(name + ":"), msg
    assert "\n" not in msg


def test_coverage_chart_and_show_lab(monkeypatch):
    import IPython.display
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    df = teach.coverage_lab(k=10, reps=100, seed=1)
    chart = teach.coverage_chart(df)
    spec = chart.to_dict()
    assert "hconcat" in spec
    svg = to_svg(chart)
    assert svg.startswith("<svg") and "Mean width" in svg and "Coverage (nominal 95%)" in svg
    assert to_svg(teach.coverage_chart(df)) == svg      # deterministic
    teach.show_lab(df)
    html = "\n".join(o.data for o in shown)
    assert "<svg" in html and "<table" in html and "Census: 1,000 documents" in html
    for m in df.method:
        assert m in html


def test_lab_summary_follows_the_verdicts(hard_case):
    lines = teach.lab_summary(hard_case).splitlines()
    assert len(lines) == len(hard_case)
    for line, row in zip(lines, hard_case.itertuples()):
        assert line.startswith(row.label)
        assert ("holds the nominal 95%" in line) == (row.verdict == "holds")
        assert f"{row.coverage:.1%}" in line


# ====================================================================== the exercises' checks
def _said(capsys) -> str:
    return capsys.readouterr().out


def test_check_documents_needed(capsys):
    e = teach.PLAN_EXERCISE
    S, H, M, level = e["sd"], e["half_width"], e["population_size"], e["level"]

    def hw(k, fpc=True):
        return stats.t.ppf(1 - (1 - level) / 2, k - 1) * S / math.sqrt(k) * (math.sqrt(1 - k / M) if fpc else 1.0)

    k = 2
    while hw(k) > H:
        k += 1
    k_inf = 2
    while hw(k_inf, fpc=False) > H:
        k_inf += 1
    assert teach.check_documents_needed(k) is True and _said(capsys).startswith("Right.")
    assert teach.check_documents_needed(float(k)) is True
    _said(capsys)
    for wrong in (k - 1, k + 1, k_inf, 5000, 10, None, "many", k + 0.5, True):
        assert teach.check_documents_needed(wrong) is False, wrong
        assert _said(capsys).startswith("Not yet."), wrong
    teach.check_documents_needed(k_inf)
    assert "finite population correction" in _said(capsys)
    k_z = math.ceil((stats.norm.ppf(1 - (1 - level) / 2) * S / H) ** 2)   # 1.96 and no correction
    assert teach.check_documents_needed(k_z) is False and "normal" in _said(capsys)


def test_check_estimand(capsys):
    right = {key: answer for key, (_, answer, _) in teach.ESTIMAND_QUESTIONS.items()}
    assert set(right.values()) == {"micro", "macro"}
    assert teach.check_estimand(right) is True
    assert _said(capsys).rstrip().endswith("All right.")
    assert teach.check_estimand({k: v.upper() for k, v in right.items()}) is True
    for key in right:
        flipped = dict(right, **{key: "macro" if right[key] == "micro" else "micro"})
        assert teach.check_estimand(flipped) is False
        out = _said(capsys)
        assert f"({key}) not yet" in out and out.rstrip().endswith("Not all right yet.")
    assert teach.check_estimand({"a": right["a"]}) is False
    assert teach.check_estimand(None) is False
    assert teach.check_estimand("micro") is False


def test_check_cr2_se(capsys):
    t = teach.exercise_table()
    n, s = t.n.to_numpy(float), t.s.to_numpy(float)
    N, K = n.sum(), n.size
    u = s - s.sum() / N * n
    se_cr2 = math.sqrt(np.sum(u ** 2 / (1 - n / N))) / N
    se_cr1 = math.sqrt(K / (K - 1) * np.sum(u ** 2)) / N
    assert teach.check_cr2_se(se_cr2) is True and _said(capsys).startswith("Right.")
    assert teach.check_cr2_se(round(se_cr2, 4)) is True  # four decimals are enough
    _said(capsys)
    assert teach.check_cr2_se(se_cr1) is False and "CR1" in _said(capsys)
    assert teach.check_cr2_se(se_cr2 ** 2) is False and "square root" in _said(capsys)
    for wrong in (se_cr2 * 1.05, 0.0, -se_cr2, None, "0.07", float("nan")):
        assert teach.check_cr2_se(wrong) is False, wrong
        assert _said(capsys).startswith("Not yet."), wrong


def test_check_bm_df(capsys):
    n = teach.exercise_table().n.to_numpy(float)
    N = n.sum()
    # the definition: trace(P)^2 / trace(P^2) with P = G'G (chunk-level matrix G, one column per document)
    doc = np.repeat(np.arange(n.size), n.astype(int))
    h = n / N
    G = np.stack([((doc == d).astype(float) - h[d]) / math.sqrt(1 - h[d]) / N for d in range(n.size)], axis=1)
    P = G.T @ G
    df = np.trace(P) ** 2 / np.trace(P @ P)
    assert 1 < df < n.size - 1
    assert teach.check_bm_df(df) is True and _said(capsys).startswith("Right.")
    assert teach.check_bm_df(n.size - 1) is False and "K - 1" in _said(capsys)
    for wrong in (df * 1.1, 1.0, n.size, 10.0, None, "df"):
        assert teach.check_bm_df(wrong) is False, wrong
        assert _said(capsys).startswith("Not yet."), wrong
