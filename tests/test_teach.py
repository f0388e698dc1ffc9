"""The teaching path (notebooks/teach, in Spanish in notebooks/teach/es) and its helpers (perdoc.teach):
every notebook executes in a fresh kernel and is committed without outputs; each Spanish notebook runs
the English one's code (only comments, printed words and parameter values differ) under Markdown
written in Spanish; running the exercises top to bottom ("Run All") prints no solution, while
teach.show_solution reveals one, right; the coverage lab's callbacks give results that make sense; each
check accepts the right answer, rejects wrong ones and speaks the notebook's language."""

import ast
import math
import re
from pathlib import Path

import nbformat
import numpy as np
import papermill as pm
import pytest
from scipy import stats

from perdoc import ParameterError, i18n, teach
from perdoc.charts import to_svg
from perdoc.checklist import METHOD_SOURCE
from perdoc.methods import micro
from perdoc.simulate import simulate
from perdoc.study.plan import plan_k
from perdoc.report.kernel import KERNEL_ARGS

TEACH = Path(__file__).resolve().parents[1] / "notebooks" / "teach"
NOTEBOOKS_EN = sorted(TEACH.glob("*.ipynb"))
NOTEBOOKS_ES = sorted((TEACH / "es").glob("*.ipynb"))
NOTEBOOKS = NOTEBOOKS_EN + NOTEBOOKS_ES
EXERCISES = {"en": "05_exercises", "es": "es/05_ejercicios"}
LAB = {"en": "04_coverage_lab", "es": "es/04_laboratorio_de_cobertura"}
# small parameters: the whole path runs in well under two minutes per language
FAST = {"replicates": 199, "reps": 60}


def key(path: Path) -> str:
    """A notebook's name in these tests: its path under notebooks/teach without the suffix."""
    return path.relative_to(TEACH).with_suffix("").as_posix()


def read(path):
    return nbformat.read(path, as_version=4)


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def is_parameters(cell) -> bool:
    return "parameters" in cell.get("metadata", {}).get("tags", [])


def is_solution(cell) -> bool:
    return "solution" in cell.get("metadata", {}).get("tags", [])


def parameter_names(nb) -> list[str]:
    names = []
    for c in nb.cells:
        if is_parameters(c):
            for line in c.source.splitlines():
                if "=" in line and not line.lstrip().startswith("#"):
                    names.append(line.split("=", 1)[0].strip())
    return names


def outputs_text(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        if o.get("output_type") == "error":
            parts.append("\n".join([o.get("ename", ""), o.get("evalue", ""), *o.get("traceback", [])]))
        for value in o.get("data", {}).values():
            parts.append(str(value))
    return "\n".join(parts)


def all_outputs(nb) -> str:
    return "\n".join(outputs_text(c) for c in code_cells(nb))


@pytest.fixture(autouse=True)
def english():
    """Every test starts in English and leaves the language as it found it."""
    before = i18n.get_language()
    i18n.set_language("en")
    yield
    i18n.set_language(before)


@pytest.fixture
def spanish():
    i18n.set_language("es")


# ====================================================================== the notebooks
def test_the_path_is_there():
    stems = [p.stem for p in NOTEBOOKS_EN]
    assert len(stems) >= 4 and stems == sorted(stems)
    assert "04_coverage_lab" in stems and "05_exercises" in stems
    es = [p.stem for p in NOTEBOOKS_ES]
    assert [s[:3] for s in es] == [s[:3] for s in stems]    # one Spanish notebook per English one, same order
    assert "04_laboratorio_de_cobertura" in es and "05_ejercicios" in es


@pytest.mark.parametrize("path", NOTEBOOKS, ids=key)
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
    """Every notebook of the path, in both languages, run top to bottom by papermill in one kernel
    (started as a report's is), each after ``%reset -f`` and a change to the notebook's folder, so it
    starts from an empty namespace where a reader's Jupyter would start it; small parameters. The
    lab's widgets cell is left out: a headless run moves no slider, and nbclient, which stands in
    for the browser's widget manager, now and then never sees the end of a cell whose Output widget
    captures a display, so the run waited forever; the cell only wires sliders to
    perdoc.teach.coverage_lab and show_lab, which run in the cell before it and are tested directly
    below."""
    from perdoc.report.kernel import EarlyKernel
    out = tmp_path_factory.mktemp("teach")
    done = {}
    with EarlyKernel(NOTEBOOKS[0].parent) as kernel:
        for path in NOTEBOOKS:
            nb = read(path)
            nb.cells = [c for c in nb.cells if not (c.cell_type == "code" and "ipywidgets" in c.source)]
            nb.cells.insert(0, nbformat.v4.new_code_cell(f"%reset -f\nimport os\nos.chdir({str(path.parent)!r})"))
            params = {k: v for k, v in FAST.items() if k in parameter_names(nb)}
            target = out / key(path).replace("/", "_")
            executed_nb = pm.execute_notebook(nb, str(target) + ".ipynb", parameters=params, kernel_name="python3",
                                              cwd=str(path.parent), progress_bar=False, execution_timeout=900,
                                              km=kernel.manager)
            # the namespace reset is ours, not the notebook's
            executed_nb.cells = [c for c in executed_nb.cells if not c.source.startswith("%reset -f")]
            done[key(path)] = executed_nb
    return done


@pytest.mark.parametrize("name", [key(p) for p in NOTEBOOKS])
def test_notebook_executes_without_error(executed, name):
    nb = executed[name]
    ran = code_cells(nb)
    assert ran and all(c.execution_count is not None for c in ran)
    for c in ran:
        for o in c.get("outputs", []):
            assert o.get("output_type") != "error", (name, o.get("ename"), o.get("evalue"))
            assert not (o.get("output_type") == "stream" and o.get("name") == "stderr"), (name, o.get("text"))


@pytest.mark.parametrize("paths", [NOTEBOOKS_EN, NOTEBOOKS_ES], ids=["en", "es"])
def test_by_hand_notebooks_compare_with_perdoc(paths):
    """Notebooks 1 to 3 put a hand computation next to perdoc's and assert that they agree."""
    for path in paths[:3]:
        src = "\n".join(c.source for c in code_cells(read(path)))
        assert src.count("assert") >= 5, path.name
        assert "import perdoc" in src


@pytest.mark.parametrize("lang", ["en", "es"])
def test_lab_notebook_shows_a_result_without_widgets(executed, lang):
    """A static render reads well: a plain cell runs the lab with the default values and shows the chart
    (static SVG) and the table; the widgets cell only wires controls to perdoc.teach."""
    source = code_cells(read(next(p for p in NOTEBOOKS if key(p) == LAB[lang])))
    widget_cells = [c for c in source if "ipywidgets" in c.source]
    assert len(widget_cells) == 1 and "teach.coverage_lab(" in widget_cells[0].source
    first = next(i for i, c in enumerate(source) if "teach.show_lab(" in c.source and "ipywidgets" not in c.source)
    assert first < source.index(widget_cells[0])
    code = code_cells(executed[LAB[lang]])
    first_lab = next(c for c in code if c.source == source[first].source)
    shown = outputs_text(first_lab)
    assert "<svg" in shown and "micro.wald_iid" in shown and "micro.logit_cr2" in shown
    assert "def " not in "\n".join(c.source for c in code if c is not widget_cells[0])
    words = {"en": ("Census:", "Coverage (nominal 95%)", "holds the nominal"),
             "es": ("Censo:", "Cobertura (nominal", "alcanza el", "amplitud media")}[lang]
    for w in words:
        assert w in shown, (lang, w)
    if lang == "es":
        assert "Census:" not in shown and "Mean width" not in shown


# ====================================================================== the Spanish notebooks
def _prose(value) -> bool:
    """A string literal that is words for a reader (it holds a space), not a name the code uses."""
    return isinstance(value, str) and any(ch.isspace() for ch in value)


class _Shape(ast.NodeTransformer):
    """Code with the wording of its sentences removed: prose literals become one placeholder, and the
    prose parts of f-strings go (their expressions and format specs stay)."""

    def visit_Constant(self, node):
        return ast.Constant(value="<text>") if _prose(node.value) else node

    def visit_JoinedStr(self, node):
        kept = [v if isinstance(v, ast.Constant) else self.visit(v) for v in node.values
                if not (isinstance(v, ast.Constant) and _prose(v.value))]
        return ast.JoinedStr(values=kept)


def code_shape(source: str) -> str:
    """What a cell computes: its syntax tree without comments and without the words it prints."""
    return ast.dump(_Shape().visit(ast.parse(source)))


def test_code_shape_ignores_comments_and_words_only():
    a = 'x = f(y, "micro")  # a comment\nprint(f"the mean {x:.4f} of {n} documents")'
    b = 'x = f(y, "micro")  # un comentario\nprint(f"la media {x:.4f} de {n} documentos")'
    assert code_shape(a) == code_shape(b)
    for changed in ('x = f(y, "macro")\nprint(f"the mean {x:.4f} of {n} documents")',   # a name the code uses
                    'x = f(y, "micro")\nprint(f"the mean {x:.3f} of {n} documents")',   # a format
                    'x = f(y, "micro")\nprint(f"the mean {n} of {x:.4f} documents")',   # the numbers shown
                    'x = g(y, "micro")\nprint(f"the mean {x:.4f} of {n} documents")'):
        assert code_shape(changed) != code_shape(a), changed


@pytest.mark.parametrize("en, es", list(zip(NOTEBOOKS_EN, NOTEBOOKS_ES)), ids=[p.stem for p in NOTEBOOKS_ES])
def test_spanish_notebook_runs_the_english_code(en, es):
    """Same cells in the same order, and the same code: apart from comments, the words of the sentences
    it prints (string literals holding a space) and the parameters' values (a data path one folder
    deeper, language = "es")."""
    a, b = read(en), read(es)
    assert [c.cell_type for c in a.cells] == [c.cell_type for c in b.cells]
    assert [c.metadata.get("tags", []) for c in a.cells] == [c.metadata.get("tags", []) for c in b.cells]
    assert parameter_names(a) == parameter_names(b)
    for ca, cb in zip(code_cells(a), code_cells(b)):
        if is_parameters(ca):
            continue
        assert code_shape(ca.source) == code_shape(cb.source), (es.name, ca.source[:200], cb.source[:200])
    params = "\n".join(c.source for c in code_cells(b) if is_parameters(c))
    assert "language" not in parameter_names(a) or 'language = "es"' in params
    assert '"../../data/' not in params    # the Spanish notebooks are one folder deeper


ENGLISH_WORDS = re.compile(r"\b(the|which|and|with|of|is|are|this|that|from|for|to|when|each|it)\b", re.I)
SPANISH_WORDS = re.compile(r"\b(el|la|los|las|de|del|que|un|una|y|en|con|por|para|es|son)\b")
CODE_SPAN = re.compile(r"`[^`]*`")


def markdown_prose(path: Path) -> list[str]:
    return [CODE_SPAN.sub(" ", c.source) for c in read(path).cells if c.cell_type == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS_ES, ids=lambda p: p.stem)
def test_spanish_markdown_is_spanish(path):
    for text in markdown_prose(path):
        leftover = ENGLISH_WORDS.findall(text)
        assert not leftover, (path.name, leftover, text[:200])
        if len(text.split()) >= 8:
            assert len(SPANISH_WORDS.findall(text)) >= 2, (path.name, text[:200])
    joined = "\n".join(markdown_prose(path))
    for word in ("documento", "fragmento"):
        assert word in joined, (path.name, word)
    assert re.search(r"[áéíóúñ]", joined)


def test_the_language_checks_catch_english():
    assert ENGLISH_WORDS.search("The documents are the sampling unit, which matters.")
    assert not ENGLISH_WORDS.search("Los documentos son la unidad de muestreo, y eso importa.")


def test_spanish_speaks_of_amplitud_and_intervalo():
    text = "\n".join("\n".join(markdown_prose(p)) for p in NOTEBOOKS_ES)
    for term in ("intervalo", "grados de libertad", "error estándar", "semiamplitud", "cobertura",
                 "corrección por población finita", "efecto de diseño", "correlación intraclase"):
        assert term in text, term
    assert not re.search(r"\b(chunks?|leverage|width)\b", text, re.I)


@pytest.mark.parametrize("path", NOTEBOOKS_ES, ids=lambda p: p.stem)
def test_spanish_notebooks_cite_the_source_in_their_introduction(path):
    first = " ".join(read(path).cells[0].source.split())
    assert METHOD_SOURCE["author"] in first and METHOD_SOURCE["title"] in first
    assert METHOD_SOURCE["series"] in first and "11 de octubre de 2026" in first
    assert "(in Spanish)" not in first


def test_spanish_notebooks_link_to_each_other():
    names = {p.name for p in NOTEBOOKS_ES}
    for path in NOTEBOOKS_ES:
        for link in re.findall(r"`(\d\d_\w+\.ipynb)`", "\n".join(c.source for c in read(path).cells)):
            assert link in names or (TEACH.parent / link).exists(), (path.name, link)   # or a report section


def test_spanish_notebooks_print_spanish(executed):
    lab = all_outputs(executed[LAB["es"]])
    assert "Censo:" in lab and "Census:" not in lab
    exercises = all_outputs(executed[EXERCISES["es"]])
    assert "Todavía no" in exercises and "Not yet" not in exercises
    assert "¿Con qué frecuencia" in exercises    # the questions of exercise 2
    first = all_outputs(executed["es/01_de_fragmentos_a_documentos"])
    assert "fragmentos" in first and "escala logit" in first    # perdoc's method label, in Spanish
    second = all_outputs(executed["es/02_intervalos_a_mano"])
    assert "corrección por población finita" in second          # perdoc's note, in Spanish


# ====================================================================== solutions: hidden from Run All
def answer_forms() -> dict[str, list[str]]:
    """What would give each exercise's answer away, as it could be printed: the numbers in both
    languages' forms, and for exercise 2 the explanations printed for right answers."""
    e = teach.PLAN_EXERCISE
    K = plan_k(e["sd"], e["half_width"], level=e["level"], population_size=e["population_size"]).K
    n, s = np.asarray(teach.CR2_EXERCISE["n"]), np.asarray(teach.CR2_EXERCISE["s"])
    se, df = math.sqrt(micro.var_cr2(n, s)), micro.df_bell_mccaffrey(n)
    forms = {"1": [rf"\b{K}\b"],
             "3": [re.escape(f"{se:.{d}f}").replace(r"\.", "[.,]") for d in (3, 4, 5)],
             "4": [re.escape(f"{df:.{d}f}").replace(r"\.", "[.,]") for d in (2, 3, 4)],
             "2": [re.escape(why) for q in (teach.ESTIMAND_QUESTIONS, teach.ESTIMAND_QUESTIONS_ES)
                   for _, _, why in q.values()]}
    forms["2"] += [re.escape("All right."), re.escape("Todo correcto.")]
    return forms


def solution_lines(code: str) -> list[str]:
    """A solution's lines of code, without comments, that are long enough to recognise."""
    lines = [line.split("#", 1)[0].strip() for line in code.splitlines()]
    return [line for line in lines if len(line) >= 12]


def revealed(capsys, exercise, lang: str, **kw) -> str:
    i18n.set_language(lang)
    try:
        capsys.readouterr()
        teach.show_solution(exercise, **kw)
        return capsys.readouterr().out
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_show_solution_reveals_a_right_solution(capsys, lang):
    forms = answer_forms()
    assert sorted(teach.SOLUTIONS) == ["1", "2", "3", "4"]
    right = {"en": "Right.", "es": "Correcto."}[lang]
    for exercise in teach.SOLUTIONS:
        out = revealed(capsys, int(exercise), lang)
        code = teach.solution_code(exercise, lang)
        assert code.rstrip().splitlines()[-1].startswith("teach.check_"), exercise   # the check confirms it
        for line in solution_lines(code):
            assert line in out, (exercise, line)
        assert any(re.search(f, out) for f in forms[exercise]), (exercise, out[-300:])
        if exercise == "2":
            assert out.rstrip().endswith({"en": "All right.", "es": "Todo correcto."}[lang])
        else:
            assert right in out, out[-300:]
        assert "Not yet" not in out and "Todavía no" not in out
    assert revealed(capsys, "3", lang) == revealed(capsys, 3, lang)


def test_show_solution_without_running_shows_the_code_only(capsys):
    out = revealed(capsys, 3, "en", run=False)
    assert "se_cr2 = np.sqrt(np.sum(u ** 2 / (1 - h))) / N" in out
    assert "Right." not in out and not any(re.search(f, out) for f in answer_forms()["3"])


@pytest.mark.parametrize("bad", [0, 5, "five", None, 1.0, True])
def test_show_solution_names_the_exercises(bad):
    with pytest.raises(ParameterError) as err:
        teach.show_solution(bad)
    assert str(err.value).startswith("exercise must be one of 1, 2, 3, 4")


def test_solutions_are_the_same_code_in_both_languages():
    for exercise, versions in teach.SOLUTIONS.items():
        assert code_shape(versions["en"]) == code_shape(versions["es"]), exercise
        assert versions["en"] != versions["es"]    # the comments are translated
        assert re.search(r"[áéíóúñ¿]", versions["es"]), exercise


def test_show_solution_leaves_the_learners_variables_alone(capsys):
    answer = None
    teach.show_solution(1)
    capsys.readouterr()
    assert answer is None and "k" not in globals() and "half_width" not in globals()


@pytest.mark.parametrize("lang", ["en", "es"])
def test_exercise_notebook_holds_no_solution(lang):
    """The solution cells only say how to call teach.show_solution: they run no code, and no cell of the
    notebook holds a solution's code or answer."""
    nb = read(TEACH / f"{EXERCISES[lang]}.ipynb")
    solutions = [c for c in nb.cells if is_solution(c)]
    checks = [name for name in teach.__all__ if name.startswith("check_")]
    assert len(solutions) == len(checks) == len(teach.SOLUTIONS) >= 4
    for number, cell in enumerate(solutions, start=1):
        assert cell.cell_type == "code"
        assert ast.parse(cell.source).body == [], cell.source     # comments only: nothing runs
        assert f"# teach.show_solution({number})" in cell.source
    source = "\n".join(c.source for c in nb.cells)
    for exercise, code in teach.SOLUTIONS.items():
        shown = [line for line in solution_lines(code[lang]) if line in source]
        assert len(shown) <= 1, (exercise, shown)     # at most a shared line such as teach.exercise_table()
        for form in answer_forms()[exercise]:
            if exercise != "1":
                assert not re.search(form, source), (exercise, form)
    for name in checks:
        # each check is called for the student's answer, in a cell that is no solution cell
        asked = [c for c in code_cells(nb) if f"teach.{name}(" in c.source]
        assert asked and not any(is_solution(c) for c in asked), name


@pytest.mark.parametrize("lang", ["en", "es"])
def test_run_all_prints_no_solution(executed, lang, capsys):
    """Running the exercises top to bottom, unanswered, shows no solution's code, no answer (in either
    language's number format) and no explanation of a right answer."""
    nb = executed[EXERCISES[lang]]
    text = all_outputs(nb)
    assert text.strip()      # the questions, the table and the checks' "not yet" do print
    for exercise, forms in answer_forms().items():
        for form in forms:
            assert not re.search(form, text), (lang, exercise, form)
        for other in ("en", "es"):
            for line in solution_lines(teach.solution_code(exercise, other)):
                assert line not in text, (lang, exercise, line)
        shown = revealed(capsys, exercise, lang)
        body = shown.split("\n", 1)[1]       # what show_solution prints, below its title
        assert body.strip() not in text
    for verdict in ("Right.", "Correcto.", "All right.", "Todo correcto.", "Solution of exercise",
                    "Solución del ejercicio"):
        assert verdict not in text, (lang, verdict)
    for c in code_cells(nb):
        if is_solution(c):
            assert not c.get("outputs"), (lang, c.source)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_student_cells_start_unanswered(executed, lang):
    """Before the student writes anything, the exercise cells say "not yet" (and do not fail)."""
    nb = executed[EXERCISES[lang]]
    student = [c for c in code_cells(nb) if "teach.check_" in c.source and not is_solution(c)]
    assert len(student) == 4
    not_yet = {"en": ("Not yet", "Not all right yet"), "es": ("Todavía no",)}[lang]
    for c in student:
        assert "None" in c.source
        assert any(w in outputs_text(c) for w in not_yet), outputs_text(c)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_placeholders_are_not_yet(capsys, lang):
    """A learner who leaves a `...` placeholder (or None) gets "not yet", never an error."""
    i18n.set_language(lang)
    not_yet = {"en": "Not yet.", "es": "Todavía no."}[lang]
    for check in (teach.check_documents_needed, teach.check_cr2_se, teach.check_bm_df, teach.check_estimand):
        for placeholder in (..., None):
            assert check(placeholder) is False
            assert capsys.readouterr().out.startswith(not_yet)
    assert teach.check_estimand({"a": ..., "b": None, "c": "micro", "d": ...}) is False
    out = capsys.readouterr().out
    assert out.count({"en": "no answer yet", "es": "todavía sin respuesta"}[lang]) == 3


# ====================================================================== the helpers in Spanish
def test_checks_speak_spanish(capsys, spanish):
    e = teach.PLAN_EXERCISE
    plan = plan_k(e["sd"], e["half_width"], level=e["level"], population_size=e["population_size"])
    assert teach.check_documents_needed(plan.K) is True
    out = capsys.readouterr().out
    assert out.startswith("Correcto. Con K = ") and "semiamplitud" in out
    assert f"{plan.half_width:.4f}".replace(".", ",") in out
    assert teach.check_documents_needed(plan.K_without_fpc) is False
    out = capsys.readouterr().out
    assert out.startswith("Todavía no.") and "corrección por población finita" in out
    n, s = np.asarray(teach.CR2_EXERCISE["n"]), np.asarray(teach.CR2_EXERCISE["s"])
    assert teach.check_cr2_se(math.sqrt(micro.var_cr1(n, s))) is False
    out = capsys.readouterr().out
    assert out.startswith("Todavía no. Ese es el error estándar CR1")
    assert teach.check_bm_df(n.size - 1) is False and "grados de libertad" in capsys.readouterr().out
    right = {k: answer for k, (_, answer, _) in teach.ESTIMAND_QUESTIONS.items()}
    assert teach.check_estimand(right) is True
    out = capsys.readouterr().out
    assert out.rstrip().endswith("Todo correcto.") and out.count("correcto:") == len(right)
    for wrong in (plan.K + 5, 0.5, "muchos"):
        teach.check_documents_needed(wrong)
    said = capsys.readouterr().out
    assert not ENGLISH_WORDS.search(said.replace("answer", "")), said


def test_estimand_questions_follow_the_language(spanish):
    es = teach.estimand_questions()
    assert es is teach.ESTIMAND_QUESTIONS_ES
    assert list(es) == list(teach.ESTIMAND_QUESTIONS)
    assert [v[1] for v in es.values()] == [v[1] for v in teach.ESTIMAND_QUESTIONS.values()]
    i18n.set_language("en")
    assert teach.estimand_questions() is teach.ESTIMAND_QUESTIONS


def test_lab_speaks_spanish(spanish):
    df = teach.coverage_lab(k=10, reps=100, seed=1)
    assert list(df.label) == [teach.LAB_METHODS_ES[m] for m in df.method]
    assert set(df.verdict) <= {"holds", "falls short"}          # the data keep English values
    for line, row in zip(teach.lab_summary(df).splitlines(), df.itertuples()):
        assert line.startswith(row.label) and "cubrió el valor del censo" in line
        assert ("alcanza el 95" in line) == (row.verdict == "holds")
    assert teach.census_line(df.attrs["census"]).startswith("Censo: 1000 documentos")
    svg = to_svg(teach.coverage_chart(df))
    assert "Amplitud media" in svg and "Cobertura (nominal" in svg and "Mean width" not in svg
    assert set(teach.LAB_METHODS_ES) == set(teach.LAB_METHODS)


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
