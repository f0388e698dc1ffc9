"""Words a reader understands, on the report's first screen (the summary box) and between its charts and
tables:

* each interval of the box is said first in plain words (no CR2, Bell-McCaffrey, logit, atanh, HC2 or
  "se," on that line), with its technical name on the line below;
* every symbol the box uses (K, N, M, df, G*, ...) is defined in the box;
* each warning says whether it matters here, from the study's numbers: the finite population correction
  is negligible at K/M = 20/1300 and matters at K/M = 0.3;
* the every-method table of Intervals shows each method's name on the interval chart, so a chart row
  and a table row can be matched;
* Spanish formulas use one notation (Σ, EE, DE, gl), defined where they are used.

Most tests call the box's functions on the example's analysis; one module fixture renders the example
in English and Spanish for the chart/table check."""

import html
import json
import math
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from perdoc import i18n
from perdoc.params import load_params
from perdoc.report import charts
from perdoc.report._spanish import METHOD_KEYS
from perdoc.report.i18n import translate
from perdoc.report.notebook import (FPC_NEGLIGIBLE, PLAIN_METHOD, box_symbols, fpc_effect, method_label,
                                    plain_method, summary_box, summary_facts, widening_needed)
from perdoc.table import Exclusion

from conftest import shared_report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "params" / "example.yaml"
EXAMPLE_ES = ROOT / "params" / "example_es.yaml"
TECHNICAL_WORDS = ("CR1", "CR2", "CR3", "Bell-McCaffrey", "Imbens", "logit", "atanh", "HC2", "se,", "GREG",
                   "Hajek", "Hájek", "df", "grados de libertad")


def technical(text: str) -> list[str]:
    """The technical words of ``text`` (as words: "tfidf" does not hold "df")."""
    return [w for w in TECHNICAL_WORDS
            if re.search(r"(?<!\w)" + re.escape(w) + (r"(?!\w)" if w[-1].isalnum() else ""), text)]


class _Cells(HTMLParser):
    """Per <dd>: the text of its plain line (div.perdoc-summary-plain) and of its technical line
    (div.perdoc-summary-technical); the text of the symbols paragraph; the rest of the box's text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.symbols, self.text = [], "", []
        self._stack, self._dt = [], None

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class", "")
        self._stack.append((tag, cls))
        if tag == "dd":
            self.rows.append({"dt": self._dt, "plain": "", "technical": "", "all": ""})

    def handle_endtag(self, tag):
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        classes = [c for _, c in self._stack]
        tags = [t for t, _ in self._stack]
        if "perdoc-summary-symbols" in classes:
            self.symbols += data
            return
        self.text.append(data)
        if tags and tags[-1] == "dt":
            self._dt = flat(data)
        if "dd" in tags and self.rows:
            row = self.rows[-1]
            row["all"] += data
            if "perdoc-summary-plain" in classes:
                row["plain"] += data
            if "perdoc-summary-technical" in classes:
                row["technical"] += data


def flat(text: str) -> str:
    """ASCII white space collapsed; the no-break spaces of Spanish numbers ("95\u00a0%") stay."""
    return re.sub(r"[ \t\r\n]+", " ", text).strip()


def cells(markup: str) -> _Cells:
    p = _Cells()
    p.feed(markup)
    for row in p.rows:
        for k in ("plain", "technical", "all"):
            row[k] = flat(row[k])
    p.symbols = flat(p.symbols)
    p.text = flat(" ".join(p.text))
    return p


pytestmark = pytest.mark.usefixtures("english_after")   # both fixtures: tests/conftest.py


def in_language(a, lang):
    """The example's analysis for a report in ``lang`` (Spanish: the why of params/example_es.yaml)."""
    i18n.set_language(lang)
    if lang == "en":
        return a
    es = load_params(EXAMPLE_ES)
    return replace(a, study=replace(a.study, language="es", estimand=es.estimand))


# ------------------------------------------------------------------ 1. plain words first
def test_every_method_has_plain_words_in_both_languages():
    names = {key for keys in METHOD_KEYS.values() for key in keys}
    assert set(PLAIN_METHOD) == names, names ^ set(PLAIN_METHOD)
    for key in set(PLAIN_METHOD.values()) | {"box.plain.other"}:
        for lang in ("en", "es"):
            text = translate(lang, key)
            assert text and not technical(text), (lang, key, text)


def test_plain_words_by_family(example):
    i18n.set_language("en")
    iv = {(i.estimand, i.method): i for i in example.estimates.intervals}
    assert plain_method(iv["micro", "logit_cr2"]) == ("an interval that allows for the small number of documents "
                                                      "and stays within 0 and 1")
    assert "small number of documents" in plain_method(iv["micro", "cr2"])
    assert "within 0 and 1" not in plain_method(iv["micro", "cr2"])
    assert "redrawing the sampled documents" in plain_method(iv["micro", "bootstrap_t"])
    assert "treats every measurement as independent" in plain_method(iv["micro", "wald_iid"])
    atanh = example.comparison_headline.interval
    assert atanh.method == "atanh_cr2" and "within -1 and 1" in plain_method(atanh)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_each_interval_is_said_in_plain_words_then_named(example, lang):
    a = in_language(example, lang)
    box = cells(summary_box(a))
    head_dt = i18n.tr("box.interval", level=i18n.pct(0.95, 0))
    intervals = [(r, a.headline.interval) for r in box.rows if r["dt"] == head_dt]
    intervals += [(r, a.comparison_headline.interval) for r in box.rows if r["dt"] == i18n.tr("box.comparison")]
    assert len(intervals) == 2
    for row, iv in intervals:
        assert row["plain"] and row["technical"], row
        assert plain_method(iv) in row["plain"]
        assert not technical(row["plain"]), row["plain"]
        assert method_label(iv) in row["technical"]
        assert row["all"].index(row["plain"][:30]) < row["all"].index(row["technical"][:15])   # plain line first
    head = intervals[0][0]
    lo, hi = a.headline.interval.ci
    assert head["plain"].startswith(i18n.interval(lo, hi, ".4f"))
    df = i18n.num(a.headline.interval.df, ".2f")
    assert (f"df = {df}" if lang == "en" else f"grados de libertad = {df}") in head["technical"]


def test_the_technical_line_is_smaller_in_the_report_style():
    css = (ROOT / "lib" / "perdoc" / "report" / "templates" / "perdoc_report" / "index.html.j2").read_text()
    assert re.search(r"\.perdoc-summary-technical \{[^}]*font-size: 0\.\d+em", css)
    assert ".perdoc-summary-symbols" in css


# ------------------------------------------------------------------ 2. every symbol defined
#: symbol -> (pattern in the box's text, the start of its definition), per language
SYMBOLS = {
    "en": {"K": (r"\bK\b", "K is "), "N": (r"\bN\b", "N is "), "M": (r"\bM\b", "M is "), "H": (r"\bH\b", "H is "),
           "df": (r"\bdf\b", "df are "), "G*": (r"G\*", "G* is "), "SE": (r"\b(se|SE)\b", "se (SE) is "),
           "DEFF": (r"\bDEFF\b", "DEFF is "), "sd": (r"\bsd\b", "sd is "), "logit": (r"\blogit\b", "logit is "),
           "atanh": (r"\batanh\b", "atanh is "), "CR2": (r"\bCR2\b", "CR1, CR2, CR3 are ")},
    "es": {"K": (r"\bK\b", "K es "), "N": (r"\bN\b", "N es "), "M": (r"\bM\b", "M es "), "H": (r"\bH\b", "H es "),
           "gl": (r"\bgl\b", "gl son "), "G*": (r"G\*", "G* es "), "EE": (r"\bEE\b", "EE es "),
           "DEFF": (r"\bDEFF\b", "DEFF es "), "DE": (r"\bDE\b", "DE es "), "logit": (r"\blogit\b", "logit es "),
           "atanh": (r"\batanh\b", "atanh es "), "CR2": (r"\bCR2\b", "CR1, CR2, CR3 son ")},
}


def undefined(box: _Cells, lang: str) -> list[str]:
    return [s for s, (pattern, definition) in SYMBOLS[lang].items()
            if re.search(pattern, box.text) and definition not in box.symbols]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_every_symbol_in_the_box_is_defined_in_the_box(example, lang):
    a = in_language(example, lang)
    box = cells(summary_box(a))
    used = [s for s, (pattern, _) in SYMBOLS[lang].items() if re.search(pattern, box.text)]
    assert {"K", "N", "M", "logit", "atanh", "CR2"} <= set(used), used
    assert ("df" in used) == (lang == "en")   # the Spanish box writes "grados de libertad" in full
    assert not undefined(box, lang), undefined(box, lang)
    # with their values here
    K, N = i18n.integer(a.table.K), i18n.integer(a.table.N)
    here = " here)" if lang == "en" else " aquí)"
    assert f"({K}{here}" in box.symbols and f"({N}{here}" in box.symbols
    assert f"({i18n.integer(1300)}{here}" in box.symbols
    # and nothing is defined that the box does not use
    assert "DEFF" not in box.symbols and "G*" not in box.symbols


@pytest.mark.parametrize("lang, text", [("en", "G* = 3.2, t with K-H df, N/DEFF, sd/sqrt(K)"),
                                        ("es", "G* = 3,2, t con K-H gl, N/DEFF, DE/sqrt(K), EE")])
def test_symbols_beyond_the_example_are_defined(example, lang, text):
    i18n.set_language(lang)
    facts = summary_facts(example)
    defs = "; ".join(box_symbols(text, facts))
    for s, (pattern, definition) in SYMBOLS[lang].items():
        if re.search(pattern, text):
            assert definition in defs, (s, defs)
    assert ("G* is the effective number of documents" if lang == "en" else "G* es el número efectivo") in defs
    assert "sqrt" in defs


def test_no_symbols_paragraph_without_symbols(example):
    i18n.set_language("en")
    assert box_symbols("an estimate of 0.3", summary_facts(example)) == []


# ------------------------------------------------------------------ 3. does each warning matter here
def test_fpc_effect_from_the_numbers():
    small, large = fpc_effect(20, 1300), fpc_effect(20, 66)
    assert small["sampling_fraction"] == pytest.approx(20 / 1300)
    assert small["width_change"] == pytest.approx(1 - math.sqrt(1 - 20 / 1300))
    assert small["negligible"] and not large["negligible"]
    assert large["width_change"] == pytest.approx(1 - math.sqrt(1 - 20 / 66))
    assert fpc_effect(20, None) is None
    # the threshold: a 5% sampling fraction changes the half-width by about 2.5%
    assert fpc_effect(FPC_NEGLIGIBLE * 1000 - 1, 1000)["negligible"] and not fpc_effect(50, 1000)["negligible"]
    assert fpc_effect(49, 1000)["width_change"] < 0.026


def _fpc_warning(a, lang):
    """The finite population correction's warning (facts) and the box's text."""
    i18n.set_language(lang)
    facts = [w for w in summary_facts(a)["warnings"] if w["code"] == "fpc_heuristic"]
    assert len(facts) == 1
    return facts[0], cells(summary_box(a)).text


@pytest.mark.parametrize("lang, negligible", [("en", "narrows the interval by 0.8%: negligible."),
                                              ("es", "estrecha el intervalo un 0,8\u00a0%: despreciable.")])
def test_fpc_warning_is_negligible_at_20_of_1300(example, lang, negligible):
    a = in_language(example, lang)
    fact, box = _fpc_warning(a, lang)
    assert a.estimates.population_size == 1300 and a.table.K == 20
    assert fact["negligible"] is True and fact["sampling_fraction"] == pytest.approx(20 / 1300)
    assert negligible in box
    assert ("K/M = 1.5%" if lang == "en" else "K/M = 1,5\u00a0%") in box


@pytest.mark.parametrize("lang, matters", [("en", "narrows the interval by 16.5%: that matters"),
                                           ("es", "estrecha el intervalo un 16,5\u00a0%: eso importa")])
def test_fpc_warning_matters_at_a_large_sampling_fraction(example, lang, matters):
    """The same study drawn from a population of 66 documents: K/M = 0.30."""
    a = in_language(example, lang)
    a = replace(a, estimates=replace(a.estimates, population_size=66))
    fact, box = _fpc_warning(a, lang)
    assert fact["negligible"] is False and fact["sampling_fraction"] == pytest.approx(20 / 66)
    assert matters in box and "negligible" not in box and "despreciable" not in box


def test_approximate_warning_says_how_much_wider():
    assert widening_needed(0.95, 0.95) == 0.0
    assert widening_needed(0.928, 0.95) == pytest.approx(1.959964 / 1.799118 - 1, rel=1e-3)
    assert widening_needed(None, 0.95) is None


def test_example_warnings_say_whether_they_matter(example):
    i18n.set_language("en")
    facts = {w["code"]: w for w in summary_facts(example)["warnings"]}
    w = facts["approximate"]
    assert w["widening"] == pytest.approx(widening_needed(example.headline.coverage, 0.95))
    box = cells(summary_box(example)).text
    wider = i18n.pct(w["widening"], 1)
    assert f"it would need to be about {wider} wider: " + ("a small shortfall" if w["small"] else "that matters") in box


def test_excluded_rows_say_whether_they_matter(example):
    i18n.set_language("en")
    few = replace(example, table=replace(example.table, exclusions=(Exclusion(3, "errored cases"),)))
    many = replace(example, table=replace(example.table, exclusions=(Exclusion(400, "errored cases"),)))
    w_few = [w for w in summary_facts(few)["warnings"] if w["code"] == "excluded_rows"][0]
    w_many = [w for w in summary_facts(many)["warnings"] if w["code"] == "excluded_rows"][0]
    N = float(example.table.N)
    assert w_few["share"] == pytest.approx(3 / (3 + N)) and w_few["bound"] == pytest.approx(3 / (3 + N))
    assert w_few["negligible"] is True and w_many["negligible"] is False
    assert "negligible here" in cells(summary_box(few)).text
    assert "that may matter here" in cells(summary_box(many)).text


# ------------------------------------------------------------------ 4. chart names in the table
def test_the_logit_short_name_says_what_the_method_is():
    for lang in ("en", "es"):
        short = translate(lang, "chart.short.logit")
        assert "effective" not in short and "efectivo" not in short
    i18n.set_language("en")
    assert translate("en", "chart.short.logit") == translate("en", "method.micro.logit")


def test_the_every_method_table_has_the_chart_names():
    cells_03 = json.loads((ROOT / "notebooks" / "03_intervals.ipynb").read_text(encoding="utf-8"))["cells"]
    code = next("".join(c["source"]) for c in cells_03 if c.get("id") == "03-09")
    assert 't["chart"] = [charts.short_label(i) for i in est.intervals]' in code
    assert '"chart": tr(charts.SHORT_LABEL_COLUMN)' in code and '"chart", "estimate"' in code


@pytest.fixture(scope="module")
def rendered():
    """The example's report in both languages, rendered once for the test run (tests/conftest.py)."""
    return {lang: shared_report(EXAMPLE, lang).read_text(encoding="utf-8") for lang in ("en", "es")}


def _text(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


@pytest.mark.parametrize("lang", ["en", "es"])
def test_chart_short_names_match_the_table(rendered, lang):
    doc = rendered[lang]
    header = translate(lang, "chart.short.column")
    tables = [t for t in re.findall(r"<table.*?</table>", doc, re.S) if f">{header}<" in t]
    assert len(tables) == 1
    table = tables[0]
    heads = [_text(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table, re.S)]
    col = heads.index(header)
    body = table.split("</thead>", 1)[-1]
    rows = [r for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S) if "<td" in r]
    names = [_text(re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)[col]) for r in rows]
    assert len(names) >= 10
    # the interval chart comes after the table; every name in the table is a row label on it
    svg = re.findall(r"<svg.*?</svg>", doc[doc.index(table):], re.S)[0]
    labels = {" ".join(html.unescape(t).split()) for t in re.findall(r"<text\b[^>]*(?<!/)>(.*?)</text>", svg, re.S)}
    missing = [n for n in names if " ".join(n.split()) not in labels]
    assert not missing, (missing, sorted(labels)[:20])


@pytest.mark.parametrize("lang", ["en", "es"])
def test_rendered_box_has_plain_words_technical_names_and_symbols(rendered, lang):
    doc = rendered[lang]
    start = doc.rindex("<section", 0, doc.index('class="perdoc-summary"'))
    box = cells(doc[start:doc.index("</section>", start) + len("</section>")])
    first = [r for r in box.rows if r["technical"]]
    assert len(first) == 2 and all(not technical(r["plain"]) for r in first)
    assert box.symbols.startswith("Symbols: K is" if lang == "en" else "Símbolos: K es")
    assert not undefined(box, lang)


# ------------------------------------------------------------------ 5. one Spanish notation
def _report_spanish_texts():
    """The Spanish texts of the report: Markdown cells tagged lang-es in the report notebooks, and the
    Spanish catalog's texts (the teaching notebooks' keys aside), where the notebooks' code cells keep theirs."""
    from babel.messages.pofile import read_po
    out = []
    for path in sorted((ROOT / "notebooks").glob("0*.ipynb")):
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            src = "".join(c["source"])
            if c["cell_type"] == "markdown" and "lang-es" in c.get("metadata", {}).get("tags", []):
                out.append((path.name, src))
    with open(ROOT / "lib" / "perdoc" / "locale" / "es" / "LC_MESSAGES" / "perdoc.po", "rb") as f:
        for m in read_po(f, locale="es"):
            if m.id and isinstance(m.string, str) and not m.id.startswith("teach."):
                out.append((m.id, re.sub(r"\{[^}]*\}", " ", m.string)))
    return out


def test_spanish_formulas_use_one_notation():
    """Σ for sums, EE and DE for standard error and deviation, gl for degrees of freedom: never the
    English sum, se, sd, nor suma(...)."""
    english = re.compile(r"\bsum\b|\bsuma\(|\bsuma de [a-z]_|\bsd\s*[(/]|\bse\s*=|\*\s*se\b")
    texts = _report_spanish_texts()
    assert len(texts) > 300
    bad = [(where, m.group(0), t[max(0, m.start() - 30):m.end() + 20]) for where, t in texts
           for m in english.finditer(t)]
    assert not bad, bad[:5]
    joined = " ".join(t for _, t in texts)
    assert "Σ" in joined and "EE = sqrt(" in joined and "DE(r_d)" in joined and "; gl)" in joined


def test_spanish_intervals_section_defines_its_notation():
    cells_03 = json.loads((ROOT / "notebooks" / "03_intervals.ipynb").read_text(encoding="utf-8"))["cells"]
    es = next("".join(c["source"]) for c in cells_03 if c.get("id") == "03-01")
    en = next("".join(c["source"]) for c in cells_03 if c.get("id") == "03-00")
    flat = " ".join(es.split())
    for symbol in ("`Σ` es la suma", "`EE`, el error estándar", "`DE`, la desviación estándar",
                   "`gl`, los grados de libertad", "`sqrt`, la raíz cuadrada"):
        assert symbol in flat, symbol
    flat_en = " ".join(en.split())
    for symbol in ("`sum` is the sum", "`se` a standard error", "`sd` a standard deviation", "`df` the degrees"):
        assert symbol in flat_en, symbol
