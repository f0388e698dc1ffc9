"""Words a reader understands: the method's source is cited where a learner looks (README, the report's
checklist, the teaching notebooks); the report speaks of itself as a report, not a notebook; boolean
cells read yes/no (sí/no), never Python's True/False; and Spanish calls a mean width "amplitud media"
everywhere. Fast: no report is built (tests/test_spanish_sections.py checks the built sections)."""

import ast
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perdoc import DocTable, i18n
from perdoc import simulate as sim
from perdoc.report import notebook
from perdoc.report.checklist import METHOD_SOURCE, method_source, reason_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
REPORT_NOTEBOOKS = sorted(NOTEBOOKS.glob("0*.ipynb"))
TEACH_NOTEBOOKS = sorted((NOTEBOOKS / "teach").glob("*.ipynb"))
REPORT_CODE = sorted(p for p in (ROOT / "lib" / "perdoc" / "report").glob("*.py") if p.name != "teach.py")
AUTHOR, TITLE = METHOD_SOURCE["author"], METHOD_SOURCE["title"]


@pytest.fixture
def spanish():
    i18n.set_language("es")
    yield
    i18n.set_language("en")


def flat(text: str) -> str:
    """White space collapsed, so a citation wrapped over two lines still matches."""
    return " ".join(text.split())


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def report_markdown(path: Path) -> list[str]:
    """The Markdown cells of a report notebook that reach the report (not those tagged notebook-only)."""
    return [source(c) for c in cells(path) if c["cell_type"] == "markdown"
            and "notebook-only" not in c.get("metadata", {}).get("tags", [])]


def translated_strings(code: str, names=("L", "T")) -> list[str]:
    """Every string literal (f-strings' literal parts too) inside a call of L(...) or T(...)."""
    out = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            for arg in node.args:
                out += [n.value for n in ast.walk(arg) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return out


def catalog_texts() -> list[tuple[str, str]]:
    """The texts of both message catalogs, where the report's sentences are (the teaching notebooks'
    keys aside)."""
    from babel.messages.pofile import read_po
    found = []
    for lang in ("en", "es"):
        with open(ROOT / "lib" / "perdoc" / "locale" / lang / "LC_MESSAGES" / "perdoc.po", "rb") as f:
            found += [(m.id, m.string) for m in read_po(f, locale=lang)
                      if m.id and isinstance(m.string, str) and not m.id.startswith("teach.")]
    return found


def report_code_strings() -> list[tuple[str, str]]:
    found = catalog_texts()
    for path in REPORT_NOTEBOOKS:
        for c in cells(path):
            if c["cell_type"] == "code":
                found += [(path.name, s) for s in translated_strings(source(c))]
    for path in REPORT_CODE:
        found += [(path.name, s) for s in translated_strings(path.read_text(encoding="utf-8"))]
    return found


# ====================================================================== 1. the method's source
@pytest.mark.parametrize("lang", ["en", "es"])
def test_checklist_cites_the_method_source(lang):
    text = method_source(lang)
    assert AUTHOR in text and TITLE in text and METHOD_SOURCE["series"] in text
    assert ("(in Spanish)" in text and "11 October 2026" in text) if lang == "en" else \
        ("11 de octubre de 2026" in text and "(in Spanish)" not in text)


def test_checklist_source_follows_the_current_language(spanish):
    assert method_source() == method_source("es") != method_source("en")


def test_checklist_section_shows_the_source():
    code = "\n".join(source(c) for c in cells(NOTEBOOKS / "06_checklist.ipynb") if c["cell_type"] == "code")
    assert "show_text(cl.method_source())" in code


def test_readme_cites_the_method_source():
    text = flat((ROOT / "README.md").read_text(encoding="utf-8"))
    assert f"{AUTHOR}, “{TITLE}”" in text and "(in Spanish)" in text and "## Source" in text
    assert text.index(AUTHOR) < text.index("## Quick start")    # where the method is introduced, too


@pytest.mark.parametrize("path", TEACH_NOTEBOOKS, ids=lambda p: p.stem)
def test_every_teaching_notebook_cites_the_source_in_its_introduction(path):
    first = []
    for c in cells(path):
        if c["cell_type"] != "markdown":
            break
        first.append(source(c))
    text = flat("\n".join(first))
    assert AUTHOR in text and TITLE in text and "(in Spanish)" in text, path.name


# ====================================================================== 2. a report, not a notebook
SELF_AS_NOTEBOOK = re.compile(r"\bnotebooks?\b|\bcuadernos?\b", re.I)


@pytest.mark.parametrize("path", REPORT_NOTEBOOKS, ids=lambda p: p.stem)
def test_report_markdown_does_not_call_itself_a_notebook(path):
    for text in report_markdown(path):
        assert not SELF_AS_NOTEBOOK.search(text), (path.name, text[:120])


def test_report_sentences_do_not_call_the_report_a_notebook():
    strings = report_code_strings()
    assert len(strings) > 100    # the scan does find the report's sentences
    bad = [(name, s) for name, s in strings if SELF_AS_NOTEBOOK.search(s)]
    assert not bad, bad[:5]


def test_the_scan_catches_the_words():
    assert translated_strings('L(f"This notebook reads {x}", "Este cuaderno lee")') == \
        ["This notebook reads ", "Este cuaderno lee"]
    assert all(SELF_AS_NOTEBOOK.search(w) for w in ("This notebook", "este cuaderno", "the notebook reads"))


# ====================================================================== 3. yes/no, not True/False
def shown_html(df: pd.DataFrame, monkeypatch, **kw) -> str:
    shown = []
    monkeypatch.setattr(notebook, "_display_html", shown.append)
    notebook.show_table(df, **kw)
    return "".join(shown)


@pytest.fixture(scope="module")
def sim_frame():
    """A real simulation's table (baseline and recommended are booleans), as sections 03 and 04 show it."""
    rng = np.random.default_rng(11)
    n = np.maximum(1, np.round(rng.lognormal(2.5, 1.0, 200)))
    s = rng.binomial(n.astype(int), rng.beta(0.8, 3.0, 200)).astype(float)
    census = DocTable.from_arrays(n=n, s=s, doc=[f"d{i}" for i in range(200)])
    frame = sim.simulate(census, k=6, reps=20, seed=1, replicates=0).to_frame()
    assert frame["baseline"].dtype == bool and frame["baseline"].any() and not frame["baseline"].all()
    return frame[["method", "coverage", "mc_se", "mean_width", "baseline", "recommended"]]


def test_yes_no_words():
    assert (notebook.yes_no(True), notebook.yes_no(False), notebook.yes_no(np.bool_(True))) == ("yes", "no", "yes")


def test_yes_no_words_spanish(spanish):
    assert (notebook.yes_no(True), notebook.yes_no(False)) == ("sí", "no")


def test_simulation_table_reads_yes_no(sim_frame, monkeypatch):
    markup = shown_html(sim_frame, monkeypatch, formats={"coverage": ".3f"})
    assert "<td>yes</td>" in markup and "<td>no</td>" in markup
    assert not re.search(r">\s*(True|False)\s*<", markup)


def test_simulation_table_reads_si_no(sim_frame, monkeypatch, spanish):
    markup = shown_html(sim_frame, monkeypatch)
    assert "<td>sí</td>" in markup and "<td>no</td>" in markup
    assert not re.search(r">\s*(True|False|yes)\s*<", markup)


def test_booleans_beside_missing_values_read_yes_no(monkeypatch):
    df = pd.DataFrame({"method": ["a", "b", "c"], "holds": [True, False, None]})
    assert df["holds"].dtype == object
    markup = shown_html(df, monkeypatch)
    assert "<td>yes</td>" in markup and "<td>no</td>" in markup and "<td>—</td>" in markup
    assert "True" not in markup and "False" not in markup


def test_report_notebooks_write_no_booleans_of_their_own():
    """Sections build their tables through show_table (and so yes_no), not with str(bool(...))."""
    for path in REPORT_NOTEBOOKS:
        code = "\n".join(source(c) for c in cells(path) if c["cell_type"] == "code")
        assert not re.search(r"str\(bool\(|yes_no\s*=\s*lambda", code), path.name


# ====================================================================== 4. one Spanish word for a width
def test_spanish_says_amplitud_not_anchura():
    files = [*NOTEBOOKS.rglob("*.ipynb"), *(ROOT / "lib" / "perdoc" / "report").rglob("*.py")]
    bad = [p.name for p in files if re.search(r"\banchuras?\b", p.read_text(encoding="utf-8"), re.I)]
    assert not bad, bad


@pytest.mark.parametrize("n_ok", [2, 1])
def test_recommendation_reason_says_amplitud_media(n_ok):
    from perdoc.simulate import recommend
    row = {"coverage": 0.949, "mc_se": 0.005, "mean_width": 0.0554, "infinite": 0.0}
    methods = {"micro.cr2": row, "micro.cr1": {**row, "coverage": 0.95 if n_ok == 2 else 0.5, "mean_width": 0.06}}
    en = recommend(methods, 0.95)[1]["micro"]
    assert en.startswith("micro.cr2: coverage 0.949") and f"smallest of the {n_ok} qualifying" in en
    es = reason_text(en, "es")
    assert "amplitud media" in es and "0,0554" in es and "anchura" not in es


def test_mean_width_headers_say_amplitud_media():
    seen = 0
    for path in REPORT_NOTEBOOKS:
        code = "\n".join(source(c) for c in cells(path) if c["cell_type"] == "code")
        for key in re.findall(r'"mean_width": tr\("([^"]+)"\)', code):
            assert (i18n.translate("en", key), i18n.translate("es", key)) == ("mean width", "amplitud media"), \
                (path.name, key)
            seen += 1
    assert seen >= 2    # sections 03 and 04
