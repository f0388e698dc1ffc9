"""Several systems in a report: ``data.compare_to`` as a list adds a leaderboard to the comparison
section (every pair with its interval, Holm p-value and simultaneous interval, the ranking, an offline
chart), ``planning.difference_half_width`` adds the plan of the paired difference to the planning
section (the numbers of ``perdoc plan --params P --vs B --json``), and the stratified design is said
to fall short of its level when the simulation shows it. Two renders: one English, one Spanish, of
the example's sample with a third system; one compare_to column gives no leaderboard."""

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perdoc
from perdoc.cli import main
from perdoc.report import i18n
from perdoc.report.build import build_report
from perdoc.study.params import ParamsError, load_params

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "example" / "sample.csv"
CENSUS = ROOT / "data" / "example" / "census.csv"
SYSTEMS = ["bm25", "tfidf", "dense"]
LEVEL, REPLICATES, SEED, M = 0.95, 999, 1, 1300
DIFF_HW = 0.02

PARAMS = """\
name: {name}
title: "Three systems on the example's sample"
data: {{path: sample3.csv, doc: doc_id, score: bm25, compare_to: {compare_to}}}
design:
  population: "SYNTHETIC: 1,300 regulatory documents"
  population_size: 1300
  sampling: srs
estimand: {{kind: micro, why: "Every chunk a user could land on counts once."}}
intervals: {{level: 0.95, replicates: 999, seed: 1}}
census: {{path: '{census}'}}
planning:
  half_width: 0.05
  difference_half_width: {diff_hw}
  strata: {{threshold: 76, k: 20, allocation: equal}}
simulation: {{reps: 400, seed: 1, replicates: 0}}
report: {{language: {language}}}
"""


def write_params(folder: Path, name: str, compare_to: str = "[tfidf, dense]", language: str = "en",
                 diff_hw=DIFF_HW) -> Path:
    text = PARAMS.format(name=name, compare_to=compare_to, census=CENSUS, language=language, diff_hw=diff_hw)
    if diff_hw is None:
        text = text.replace("  difference_half_width: None\n", "")
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def with_third_system(folder: Path) -> Path:
    """The example's sample with a third system, dense: a hit wherever bm25 hits, and on every third
    chunk of the even-numbered documents."""
    rows = pd.read_csv(SAMPLE)
    even = rows["doc_id"].str[3:].astype(int) % 2 == 0
    rows["dense"] = np.maximum(rows["bm25"], ((rows["chunk_id"] % 3 == 0) & even).astype(int))
    path = folder / "sample3.csv"
    rows.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module", autouse=True)
def _one_kernel(shared_kernel):
    """The module's reports share one notebook kernel (tests/conftest.py)."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    f = tmp_path_factory.mktemp("leaderboard")
    with_third_system(f)
    return f


@pytest.fixture(scope="module")
def built(folder):
    """One English and one Spanish report of three systems (the only renders of this module)."""
    out = {}
    for lang in ("en", "es"):
        params = write_params(folder, f"three_{lang}", language=lang)
        page = build_report(params, folder / "reports")
        out[lang] = {"params": params, "html": page.read_text(encoding="utf-8"),
                     "summary": json.loads((page.parent / "summary.json").read_text(encoding="utf-8"))}
    i18n.set_language("en")
    return out


@pytest.fixture(scope="module")
def many(folder):
    """What perdoc.compare_many gives for the same systems and settings, straight from the rows."""
    return perdoc.compare_many(folder / "sample3.csv", SYSTEMS, doc="doc_id", level=LEVEL, population_size=M,
                               replicates=REPLICATES, seed=SEED)


# ------------------------------------------------------------------------------- reading the page
class _Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts (header row first)."""

    def __init__(self):
        super().__init__()
        self.tables, self._row, self._cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(page: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(page)
    return parser.tables


def table_with(page: str, header: str) -> list[list[str]]:
    found = [t for t in tables(page) if t and header in t[0]]
    assert len(found) == 1, f"{len(found)} tables with the column {header!r}"
    return found[0]


def table_with_row(page: str, label: str) -> list[list[str]]:
    found = [t for t in tables(page) if any(row and row[0] == label for row in t)]
    assert len(found) == 1, f"{len(found)} tables with the row {label!r}"
    return found[0]


def text_of(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def number(cell: str, lang: str = "en") -> float:
    if lang == "es":
        cell = cell.replace("\u202f", "").replace(",", ".").replace("\u2212", "-")
    return float(cell)


def bounds(cell: str, lang: str = "en") -> tuple[float, float]:
    low, high = cell.strip("[]").split("; " if lang == "es" else ", ")
    return number(low, lang), number(high, lang)


# ------------------------------------------------------------------------------------ leaderboard
def test_summary_holds_compare_many(built, many):
    assert built["en"]["summary"]["comparison_many"] == json.loads(json.dumps(many.to_dict()))
    assert built["en"]["summary"]["params"]["data"]["compare_to"] == ["tfidf", "dense"]
    # the two-system comparison still shows the first pair, score against the first compare_to column
    assert built["en"]["summary"]["summary_box"]["comparison"]["systems"] == ["bm25", "tfidf"]
    assert "Comparing systems" in built["en"]["html"] and "bm25 - tfidf, micro mean" in text_of(built["en"]["html"])


@pytest.mark.parametrize("lang, holm", [("en", "Holm p-value"), ("es", "valor p de Holm")])
def test_leaderboard_table_equals_compare_many(built, many, lang, holm):
    rows = table_with(built[lang]["html"], holm)
    assert [r[0] for r in rows[1:]] == [p.label for p in many.pairs]
    for row, p in zip(rows[1:], many.pairs):
        assert abs(number(row[1], lang) - p.interval.estimate) <= 0.5e-4
        for got, want in zip(bounds(row[2], lang), (p.interval.ci.low, p.interval.ci.high)):
            assert abs(got - want) <= 0.5e-4
        assert number(row[3], lang) == pytest.approx(p.p_value, rel=5e-3)
        assert number(row[4], lang) == pytest.approx(p.p_holm, rel=5e-3)
        for got, want in zip(bounds(row[5], lang), (p.simultaneous.ci.low, p.simultaneous.ci.high)):
            assert abs(got - want) <= 0.5e-4


def test_ranking_table_equals_compare_many(built, many):
    rows = table_with(built["en"]["html"], "ranks the band allows")
    assert [r[1] for r in rows[1:]] == [r.system for r in many.ranking]
    for row, r in zip(rows[1:], many.ranking):
        assert int(row[0]) == r.rank and abs(float(row[2]) - r.micro) <= 0.5e-4
        assert row[3] == (str(r.low) if r.low == r.high else f"[{r.low}, {r.high}]")


def test_leaderboard_sentences_hold_for_the_numbers(built, many):
    text = text_of(built["en"]["html"])
    separated = [p.label for p in many.pairs if p.simultaneous.ci.low > 0 or p.simultaneous.ci.high < 0]
    holm = sum(p.p_holm < 1 - LEVEL for p in many.pairs)
    assert f"The simultaneous band separates {len(separated)} of the 3 pairs ({'; '.join(separated)})" in text
    assert f"Holm's adjusted p-value is below 0.05 for {holm} of the 3 pairs." in text
    disagree = [p.label for p in many.pairs if (p.label in separated) != (p.p_holm < 1 - LEVEL)]
    assert ("The simultaneous band and Holm's p-values disagree on " + "; ".join(disagree) + ":" in text) == \
        bool(disagree)
    assert f"critical value ({many.critical_value:.3f}, against {many.pointwise_critical_value:.3f}" in text
    top = many.ranking[0]
    settled = top.low == top.high == 1
    assert (f"{top.system} has the highest micro mean ({top.micro:.4f})" in text) and \
        (("the band puts it first" in text) == settled)
    assert f"and {len(separated)} of the 3 simultaneous intervals exclude it." in text   # the chart's caption


@pytest.mark.parametrize("lang", ["en", "es"])
def test_leaderboard_chart_is_inline_svg_without_network(built, lang):
    page = built[lang]["html"]
    title = "Leaderboard: micro means" if lang == "en" else "Clasificación: medias micro"
    figures = re.findall(r'<figure[^>]*aria-label="' + re.escape(title) + r'[^>]*>.*?</figure>', page, flags=re.S)
    assert len(figures) == 1
    figure = figures[0]
    assert "<svg" in figure and "</svg>" in figure
    assert not re.search(r'\b(?:src|href|xlink:href)\s*=\s*"\s*(?:https?:)?//', figure)
    assert not re.search(r"<(?:script|img|link|iframe|object)\b", figure, flags=re.I)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", figure)


def test_spanish_leaderboard_is_spanish(built):
    text = text_of(built["es"]["html"])
    assert "Clasificación: cada par de los 3 sistemas" in text
    assert "La banda simultánea" in text and "El valor p ajustado por Holm" in text
    assert "Leaderboard" not in text and "simultaneous band" not in text


# ------------------------------------------------------------------------- the difference's plan
def _cli_plan(params: Path, capsys) -> dict:
    assert main(["plan", "--params", str(params), "--vs", "tfidf", "--half-width", str(DIFF_HW), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_difference_plan_equals_the_cli(built, capsys):
    cli = _cli_plan(built["en"]["params"], capsys)
    report = built["en"]["summary"]["planning_difference"]
    for key in ("K", "half_width", "target_half_width", "sd", "level", "population_size", "estimand",
                "K_without_fpc", "df", "df_rule", "comparison", "pilot", "pilot_K"):
        assert report[key] == cli[key], key
    rows = {r[0]: r[1] for r in table_with_row(built["en"]["html"], "paired spread S_D (per-document differences)")}
    c = cli["comparison"]
    assert rows["documents needed, each scored by both systems, K"] == str(cli["K"])
    assert rows["half-width at K"] == f"{cli['half_width']:.4f}"
    assert rows["degrees of freedom at K"] == f"{cli['df']:.2f}"
    assert rows["K without the finite population correction"] == str(cli["K_without_fpc"])
    assert rows["paired spread S_D (per-document differences)"] == f"{c['paired_sd']:.4f}"
    assert rows["spread of bm25 alone"] == f"{c['sd_a']:.4f}"
    assert rows["spread of tfidf alone"] == f"{c['sd_b']:.4f}"
    assert rows["correlation of the systems across documents"] == f"{c['correlation']:.4f}"
    assert rows["documents needed per system with two independent samples"] == f"{c['unpaired_k']:,}"
    text = text_of(built["en"]["html"])
    assert f"K = {cli['K']} documents scored by both systems give a half-width of {cli['half_width']:.4f}" in text
    assert f"would need {c['unpaired_k']:,} documents for each system" in text


def test_spanish_difference_plan(built, capsys):
    cli = _cli_plan(built["es"]["params"], capsys)
    text = text_of(built["es"]["html"])
    assert "Cuántos documentos para comparar bm25 con tfidf" in text
    assert f"K = {cli['K']} documentos evaluados por ambos sistemas" in text
    assert f"{cli['half_width']:.4f}".replace(".", ",") in text


# ----------------------------------------------------------------------------- the strata sentence
def _coverages(summary: dict):
    s = summary["planning_strata"]["simulation"]["methods"]["micro.design"]
    c = summary["simulation"]["methods"]["micro.cr2"]
    return s, c


def test_strata_shortfall_is_said_with_the_numbers(built):
    summary = built["en"]["summary"]
    s, c = _coverages(summary)
    # the precondition of the sentence: neither design holds 95% beyond Monte Carlo error
    assert s["coverage"] < LEVEL - 2 * s["mc_se"] and c["coverage"] < LEVEL - 2 * c["mc_se"]
    assert s["mean_width"] < c["mean_width"]
    text = text_of(built["en"]["html"])
    assert (f"Stratifying narrows the interval (mean width {s['mean_width']:.4f} against {c['mean_width']:.4f} for a "
            f"simple random sample with CR2) but neither design holds 95% at K = 20: stratified "
            f"{s['coverage']:.3f}, simple random sample with CR2 {c['coverage']:.3f}") in text
    assert "it makes each one count" not in text
    es = text_of(built["es"]["html"])
    assert (f"ningún diseño mantiene el 95 % con K = 20: estratificado {s['coverage']:.3f}".replace(".", ",")
            in es)   # (text_of writes the no-break space before % as a space)
    assert "hace que cada uno cuente" not in es


def test_strata_sentence_cases():
    """Each case of the sentence, from made-up simulation results (no render)."""
    from types import SimpleNamespace as NS
    from perdoc.report.notebook import strata_coverage_text
    plan = NS(sd=0.3, sd_srs=0.5)

    def sim(k, cov, se, width):
        return NS(k=k, level=0.95, methods={"micro.design": dict(coverage=cov, mc_se=se, mean_width=width),
                                            "micro.cr2": dict(coverage=cov, mc_se=se, mean_width=width)})
    assert strata_coverage_text(plan, sim(20, 0.95, 0.005, 0.1), sim(20, 0.94, 0.005, 0.2)) is None
    text, serious = strata_coverage_text(plan, sim(20, 0.90, 0.005, 0.1), sim(20, 0.95, 0.005, 0.2))
    assert serious and "but the stratified interval does not hold 95% at K = 20: it covered 0.900" in text
    text, serious = strata_coverage_text(plan, sim(20, 0.945, 0.005, 0.1), sim(20, 0.95, 0.005, 0.2))
    assert not serious and "holds 95% within Monte Carlo error" in text and "covered more (0.950)" in text
    assert "a gap within Monte Carlo error" in text
    text, _ = strata_coverage_text(plan, sim(20, 0.90, 0.005, 0.3), sim(30, 0.89, 0.005, 0.2))
    assert text.startswith("Stratifying lowers the expected SD (0.3000 against 0.5000")
    assert "at K = 20 (stratified) and K = 30 (simple random sample)" in text
    text, _ = strata_coverage_text(NS(sd=0.5, sd_srs=0.4), sim(20, 0.90, 0.005, 0.3), sim(20, 0.89, 0.005, 0.2))
    assert text.startswith("Stratifying does not narrow the interval (mean width 0.3000 against 0.2000") \
        and " and neither design holds" in text


# --------------------------------------------------------------------------- one column, and params
def test_one_compare_to_column_gives_no_leaderboard(folder):
    from unittest import mock

    from perdoc.report import notebook
    from perdoc.report.build import _compute_analysis, summary
    for compare_to in ("tfidf", "[tfidf]"):
        study = load_params(write_params(folder, "one", compare_to=compare_to, diff_hw=None))
        assert study.data.compare_more == () and study.data.compare_to == "tfidf"
        d = study.to_dict()
        assert d["data"]["compare_to"] == "tfidf" and "compare_more" not in d["data"]
        assert "difference_half_width" not in d["planning"]
    a = _compute_analysis(study)
    assert a.comparison is not None and a.comparison_many is None and a.difference_plan is None
    s = summary(a)
    assert "comparison_many" not in s and "planning_difference" not in s
    shown = []
    with mock.patch.object(notebook, "_display_html", shown.append):
        notebook.show_leaderboard(a)
        notebook.show_difference_plan(a)
    assert shown == []


@pytest.mark.parametrize("compare_to, diff_hw, message", [
    ("[tfidf, tfidf]", DIFF_HW, "names the column 'tfidf' twice"),
    ("[tfidf, bm25]", DIFF_HW, "names the data.score column 'bm25'"),
    ("[]", DIFF_HW, "is an empty list"),
    ("[tfidf, 3]", DIFF_HW, "must be a string or a list of strings"),
    ("[tfidf, dense]", -0.1, "'planning.difference_half_width' must be positive"),
])
def test_bad_compare_to_or_difference_target_is_one_line(folder, compare_to, diff_hw, message):
    with pytest.raises(ParamsError) as err:
        load_params(write_params(folder, "bad", compare_to=compare_to, diff_hw=diff_hw))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_difference_target_needs_a_comparison(folder):
    path = write_params(folder, "alone")
    path.write_text(path.read_text().replace(", compare_to: [tfidf, dense]", ""))
    with pytest.raises(ParamsError, match="planning.difference_half_width' plans the difference of two systems"):
        load_params(path)


def test_compare_to_list_by_override(folder):
    study = load_params(write_params(folder, "over", compare_to="tfidf"), overrides=["data.compare_to=[tfidf,dense]"])
    assert study.data.systems == ("bm25", "tfidf", "dense")
    assert study.to_dict()["data"]["compare_to"] == ["tfidf", "dense"]


def test_cli_params_paths_take_the_first_compare_to_column(folder, capsys):
    """perdoc estimate --params reads data.score only and perdoc plan --params --vs plans against the
    column named: a list in compare_to changes neither."""
    params = write_params(folder, "cli")
    assert main(["estimate", "--params", str(params), "--skip-simulation", "--json", "--replicates", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["K"] == 20
    # (the census has no dense column: the study's own rows are the pilot)
    assert main(["plan", "--params", str(params), "--vs", "dense", "--pilot", "study", "--half-width", "0.05",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"]["b"] == "dense"
