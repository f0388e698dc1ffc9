"""The summary box that opens every report (:func:`perdoc.notebook.summary_box`): it states the same
headline as the Intervals section, names the method, K and N and the simulation's coverage, says
"no interval" and why on degenerate data, gives the comparison's verdict, lists every warning that
applies, reads Spanish in a Spanish report, and shows user text as text."""

import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from perdoc import i18n
from perdoc.notebook import headline_sentences, method_label, summary_box, summary_facts
from perdoc.params import load_params
from perdoc.report.build import analyse, combined_notebook, summary
from perdoc.table import Exclusion

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "params" / "example.yaml"
EXAMPLE_ES = ROOT / "params" / "example_es.yaml"
DEGENERATE = ROOT / "tests" / "fixtures" / "degenerate"
HOSTILE = ROOT / "tests" / "fixtures" / "hostile" / "hostile.yaml"
ALLOWED_TAGS = {"section", "p", "dl", "dt", "dd", "strong", "span", "div", "ul", "li"}


class _Box(HTMLParser):
    """The box's rows (dt -> dd text), its warnings (li texts), and every tag and attribute seen."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.warnings, self.tags, self.attrs = {}, [], [], []
        self._in, self._dt, self._buf = None, None, []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [k for k, _ in attrs]
        if tag in ("dt", "dd", "li"):
            self._in, self._buf = tag, []

    def handle_endtag(self, tag):
        if tag != self._in:
            return
        text = " ".join("".join(self._buf).split())
        if tag == "dt":
            self._dt = text
        elif tag == "dd":
            self.rows[self._dt] = text
        else:
            self.warnings.append(text)
        self._in = None

    def handle_data(self, data):
        if self._in:
            self._buf.append(data)


def parse(markup: str) -> _Box:
    p = _Box()
    p.feed(markup)
    return p


pytestmark = pytest.mark.usefixtures("english_after")   # both fixtures: tests/conftest.py


def test_example_box_states_the_headline(example):
    a = example
    i18n.set_language("en")
    box = parse(summary_box(a))
    h, est = a.headline, a.estimates
    p = h.interval
    assert box.rows["Estimate"] == f"{p.estimate:.4f}"
    interval_row = box.rows["95% interval"]
    assert interval_row.startswith(f"[{p.ci.low:.4f}, {p.ci.high:.4f}]")
    assert method_label(p) in interval_row and f"df = {p.df:.2f}" in interval_row
    # the same interval, method and df as the Headline section of Intervals
    title, _ = headline_sentences(h, est, a.study.estimand.kind)
    assert f"[{p.ci.low:.4f}, {p.ci.high:.4f}]" in title and method_label(p) in title
    assert ("approximate" in interval_row) == h.approximate == ("APPROXIMATE" in title)
    assert box.rows["Estimated"].startswith("micro mean: the rate of a chunk")
    assert a.study.estimand.why in box.rows["Estimated"]
    assert f"K = {a.table.K} documents, N = {a.table.N:,.0f} measurements" in box.rows["Sample"]
    assert "1,300" in box.rows["Sample"]
    check = box.rows["Checked by simulation"]
    assert check.startswith("yes, on the census")
    assert f"{h.coverage:.3f} (Monte Carlo SE {h.mc_se:.3f}) of {h.reps:,} samples of K = {h.k}" in check
    # the example's warnings: no method reached the level; its FPC is a heuristic (the interval's notes say so)
    assert any(w.startswith("Approximate: no method reached 95%") for w in box.warnings) == h.approximate
    assert any(w.startswith("Heuristic finite population correction") for w in box.warnings)
    assert [w["code"] for w in summary_facts(a)["warnings"]] == ["approximate", "fpc_heuristic"]


def test_example_comparison_verdict(example):
    a = example
    i18n.set_language("en")
    ch = a.comparison_headline
    row = parse(summary_box(a)).rows["Comparison"]
    lo, hi = ch.interval.ci
    assert row.startswith(f"bm25 - tfidf, micro mean: {example.comparison.difference.micro_estimate:+.4f}, ")
    assert f"[{lo:+.4f}, {hi:+.4f}]" in row and method_label(ch.interval) in row
    assert (lo <= 0 <= hi) and "the interval includes 0: these documents do not show which system is better" in row
    assert f"(coverage {ch.coverage:.3f})" in row
    assert summary_facts(a)["comparison"]["verdict"] == "includes_zero"


def _pair_study(tmp_path, a_rate, b_rate):
    """A paired study of 12 documents where system a scores ``a_rate`` and b ``b_rate`` (roughly)."""
    rows = ["doc_id,a,b"]
    for d in range(12):
        for c in range(5 + d):
            rows.append(f"d{d},{int((c * 7 + d) % 10 < a_rate * 10)},{int((c * 3 + d) % 10 < b_rate * 10)}")
    (tmp_path / "pairs.csv").write_text("\n".join(rows) + "\n")
    params = tmp_path / "pairs.yaml"
    params.write_text("name: pairs\ndata: {path: pairs.csv, doc: doc_id, score: a, compare_to: b}\n"
                      "design: {population: made-up documents, sampling: srs}\n"
                      "estimand: {kind: micro, why: every chunk counts}\nintervals: {replicates: 99, seed: 1}\n")
    return analyse(params)


@pytest.mark.parametrize("a_rate, b_rate, verdict, words", [
    (0.8, 0.2, "a_higher", "the interval lies above 0: a scores higher than b"),
    (0.2, 0.8, "b_higher", "the interval lies below 0: b scores higher than a"),
])
def test_comparison_verdict_names_the_better_system(tmp_path, a_rate, b_rate, verdict, words):
    a = _pair_study(tmp_path, a_rate, b_rate)
    lo, hi = a.comparison_headline.interval.ci
    assert (lo > 0) if verdict == "a_higher" else (hi < 0)
    assert summary_facts(a)["comparison"]["verdict"] == verdict
    row = parse(summary_box(a)).rows["Comparison"]
    assert words in row and "Not checked by simulation." in row


def test_degenerate_study_says_no_interval_and_why():
    a = analyse(DEGENERATE / "all_half.yaml")
    i18n.set_language("en")
    box = parse(summary_box(a))
    p = a.headline.interval
    assert p.ci is None
    assert box.rows["95% interval"].startswith("no interval: ")
    assert "every document has the same rate (0.5)" in box.rows["95% interval"]
    # the technical name of the method that gave no interval, on the line below (no df without an interval)
    assert box.rows["95% interval"].endswith(f"Technical name: {method_label(p)}.")
    assert box.rows["Estimate"] == "0.5000"
    assert box.rows["Checked by simulation"].startswith("no: no census was given")
    assert box.warnings[0].startswith("No interval: zero variance")
    assert not any(w.startswith("Approximate") for w in box.warnings)


def test_degenerate_paired_study_with_census():
    a = analyse(DEGENERATE / "paired_identical.yaml")
    i18n.set_language("en")
    box = parse(summary_box(a))
    assert box.rows["95% interval"].startswith("no interval")
    # the simulation ran, but no checked method gave this sample an interval: no coverage is claimed
    assert box.rows["Checked by simulation"] == ("yes, on the census: no method checked by the simulation gave "
                                                  "this sample an interval.")
    assert "no interval" in box.rows["Comparison"] and "neither system can be called better" in box.rows["Comparison"]
    assert summary_facts(a)["comparison"]["verdict"] == "no_interval"


def test_census_and_pseudo_population():
    a = analyse(DEGENERATE / "census_same.yaml")
    facts = summary_facts(a)
    assert "census" in [w["code"] for w in facts["warnings"]]
    assert "a census: every document of the population" in parse(summary_box(a)).rows["Sample"]
    b = analyse(DEGENERATE / "one_big.yaml")
    # the pseudo-population check qualifies the default; it never chooses the headline (perdoc.policy.lead)
    assert b.headline.basis == "none" and b.pseudo_simulation is not None
    row = parse(summary_box(b)).rows["Checked by simulation"]
    assert row.startswith("no: no census was given") and "On a pseudo-population built from this sample" in row
    ps = summary_facts(b)["check"]["pseudo_population"]
    assert ps["reps"] == b.pseudo_simulation.reps and 0.0 <= ps["coverage"] <= 1.0


@pytest.mark.parametrize("params, words", [("stratified.yaml", "a stratified sample (2 strata)"),
                                           ("two_stage.yaml", "a two-stage sample")])
def test_designs(params, words):
    a = analyse(ROOT / "params" / params)
    i18n.set_language("en")
    box = parse(summary_box(a))
    p = a.headline.interval
    assert p.method == "design" and words in box.rows["Sample"]
    assert box.rows["95% interval"].startswith(f"[{p.ci.low:.4f}, {p.ci.high:.4f}]")
    if a.comparison is not None:
        assert "ignores the design" in box.rows["Comparison"]


def test_spanish_example_is_the_example_in_spanish():
    en, es = load_params(EXAMPLE), load_params(EXAMPLE_ES)
    assert (es.name, es.language, en.language) == ("example_es", "es", "en")
    assert es.data == en.data and es.census == en.census and es.intervals == en.intervals
    assert es.design.sampling == en.design.sampling and es.estimand.kind == en.estimand.kind
    assert es.to_dict()["simulation"] == en.to_dict()["simulation"]
    assert es.to_dict()["planning"] == en.to_dict()["planning"]
    assert es.design.population_size == en.design.population_size
    assert es.title != en.title and es.estimand.why != en.estimand.why


def test_spanish_box_reads_spanish(example):
    # the example's analysis written for a Spanish report (the same numbers as params/example_es.yaml)
    es = load_params(EXAMPLE_ES)
    a = replace(example, study=replace(example.study, language="es", estimand=es.estimand))
    i18n.set_language("es")
    markup = summary_box(a)
    box = parse(markup)
    p, h = a.headline.interval, a.headline
    comma = lambda x, spec=".4f": format(x, spec).replace(".", ",")  # noqa: E731
    assert box.rows["Estimación"] == comma(p.estimate)
    row = box.rows["Intervalo al 95 %"]   # (the no-break space before % is collapsed by the parser)
    assert row.startswith(f"[{comma(p.ci.low)}; {comma(p.ci.high)}]")
    assert f"grados de libertad = {comma(p.df, '.2f')}" in row and "escala logit" in row
    assert box.rows["Qué se estima"].startswith("media micro: la tasa de un fragmento")
    assert a.study.estimand.why in box.rows["Qué se estima"]
    assert "K = 20 documentos, N = 716 mediciones" in box.rows["Muestra"]
    assert f"cobertura de {comma(h.coverage, '.3f')}" in box.rows["Comprobado por simulación"]
    diff = comma(example.comparison.difference.micro_estimate, "+.4f")   # the sign kept, as in section 04
    assert box.rows["Comparación"].startswith(f"bm25 - tfidf, media micro: {diff}, intervalo ")
    assert "el intervalo incluye el 0" in box.rows["Comparación"]
    assert any(w.startswith("Aproximado:") for w in box.warnings)
    assert any(w.startswith("Corrección por población finita aplicada como heurística") for w in box.warnings)
    # no English-form decimal anywhere in the box's text
    text = " ".join(list(box.rows.values()) + box.warnings)
    assert not re.search(r"\d\.\d", text), text
    # the Spanish headline of Intervals says the same interval
    title, _ = headline_sentences(h, a.estimates, "micro")
    assert f"[{comma(p.ci.low)}; {comma(p.ci.high)}]" in title


def test_spanish_report_has_the_box_before_the_contents():
    nb = combined_notebook(language="es", title="t")
    tags = [c.get("metadata", {}).get("tags", []) for c in nb.cells]
    first_toc = next(i for i, t in enumerate(tags) if "toc" in t)
    assert "title" in tags[0]
    assert any("summary-box" in t for t in tags[:first_toc])
    assert nb.cells[first_toc].source.startswith("## Contenido")
    # the summary notebook's own prose is for reading it alone; it is not a section of the contents
    assert not any("notebook-only" in t for t in tags)
    assert "Resumen" not in nb.cells[first_toc].source


def test_hostile_text_is_escaped():
    a = analyse(HOSTILE)
    i18n.set_language("en")
    markup = summary_box(a)
    box = parse(markup)
    assert set(box.tags) <= ALLOWED_TAGS, set(box.tags) - ALLOWED_TAGS
    assert set(box.attrs) <= {"class", "aria-label"}
    assert "<iframe" not in markup and "&lt;iframe src=https://evil.example/&gt;&lt;/iframe&gt;" in markup
    assert "[why](javascript:alert(7))" in box.rows["Estimated"]
    assert "![b](https://evil.example/b.png)" in box.rows["Comparison"]   # the second system's name, as text


def test_exclusions_and_similar_ids_are_warned(tmp_path, example):
    a = replace(example, table=replace(example.table, exclusions=(
        Exclusion(3, "errored <b>cases</b>"), Exclusion(1, "no document id"))))
    i18n.set_language("en")
    markup = summary_box(a)
    warnings = parse(markup).warnings
    three = [w for w in warnings if w.startswith("Rows excluded: 3 (errored <b>cases</b>). Counted as measurements")]
    one = [w for w in warnings if w.startswith("Rows excluded: 1 (no document id). Counted as measurements")]
    assert len(three) == len(one) == 1 and three[0].endswith("negligible here.")   # whether they matter, too
    assert "<b>" not in markup
    rows = ["doc_id,hit"] + [f"{d},{i % 2}" for d in ("d1", "D1 ", "d2", "d3", "d4") for i in range(4)]
    (tmp_path / "ids.csv").write_text("\n".join(rows) + "\n")
    params = tmp_path / "ids.yaml"
    params.write_text("name: ids\ndata: {path: ids.csv, doc: doc_id, score: hit, allow_similar_ids: true}\n"
                      "design: {population: made-up documents, sampling: srs}\n"
                      "estimand: {kind: macro, why: every document counts}\nintervals: {replicates: 0}\n")
    b = analyse(params)
    similar = [w for w in summary_facts(b)["warnings"] if w["code"] == "similar_ids"]
    assert similar and similar[0]["groups"] == 1
    text = [w for w in parse(summary_box(b)).warnings if w.startswith("Similar document ids allowed")]
    assert text and "'d1'" in text[0] and "'D1 '" in text[0]


def test_summary_json_keeps_the_box_facts(example):
    out = summary(example)
    assert out["summary_box"] == json.loads(json.dumps(summary_facts(example), allow_nan=False))
    assert out["headline"] == example.headline.to_dict()   # the existing key is unchanged
    assert out["summary_box"]["estimate"] == out["headline"]["estimate"]
    assert out["summary_box"]["interval"]["ci"] == out["headline"]["ci"]
    assert out["summary_box"]["comparison"]["ci"] == out["comparison_headline"]["ci"]


def test_out_of_range_interval_is_warned(monkeypatch, example):
    """A headline interval that leaves the metric's range [0, 1] is flagged in the box, in both languages."""
    from perdoc.report.build import Analysis
    from perdoc.results import ConfidenceInterval
    real = example.headline
    assert not real.interval.out_of_range and real.interval.metric_range == (0.0, 1.0)
    leaving = replace(real, interval=replace(real.interval, ci=ConfidenceInterval(-0.05, 0.62)))
    monkeypatch.setattr(Analysis, "headline", property(lambda self: leaving))
    assert "out_of_range" in [w["code"] for w in summary_facts(example)["warnings"]]
    i18n.set_language("en")
    box = parse(summary_box(example))
    assert box.rows["95% interval"].startswith("[-0.0500, 0.6200]")
    assert any(w.startswith("Out of range: the interval leaves [0, 1], the range the metric cannot leave. That matters")
               for w in box.warnings)
    i18n.set_language("es")
    assert any(w.startswith("Fuera de rango: el intervalo sale de [0; 1], el rango del que la métrica no puede salir. "
                            "Eso importa") for w in parse(summary_box(example)).warnings)
