"""The design, estimand, comparison and checklist sections of a Spanish report read Spanish: no English
sentence left, decimal commas, Spanish table headers and status words; the English report keeps its
text. The bundled example has a paired comparison (data.compare_to), so section 04 is filled."""

import html as html_lib
import json
import re
from pathlib import Path

import pytest

from perdoc import i18n
from perdoc.params import load_params

from conftest import shared_report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "params" / "example.yaml"

# section stem -> (English title, Spanish title)
TITLES = {"01": ("Study design", "Diseño del estudio"), "02": ("Estimand", "Estimando"),
          "04": ("Comparing systems", "Comparación de sistemas"),
          "06": ("Reporting checklist", "Lista de comprobación del informe")}

# Phrases of the English sections (each checked to be there in the English report) that a Spanish
# report must not show.
ENGLISH_MARKERS = {
    "01": ["The declared design", "Documents and their sizes", "Sampling design", "Documents sampled, K",
           "The finite population correction is applied", "The five largest documents", "Half of the documents",
           "Kind of metric", "inferred from the data", "simple random sample of", "This section reads"],
    "02": ["The declared estimand", "Declared estimand:", "question it answers", "Why the two means differ",
           "Micro minus macro", "rate of a chunk drawn at random", "two different averages"],
    "04": ["micro mean:", "Checked by the paired simulation", "documents tied exactly",
           "sign-flip randomization test", "Which comparison method holds its level here", "samples of K =",
           "census difference", "micro difference: recommended", "qualifying", "The usual question",
           "Bell-McCaffrey df", "alternative", "coverage"],
    "06": ["What a reader needs", "Population and sampling design", "What the uncertainty does not cover",
           "not covered by the intervals", "The index is fixed", "[default]", "Approximate:",
           "effective df", "a Wald interval on the effective n", "diagnostics only", "rate quantiles", "replicates"],
}
SPANISH_MARKERS = {
    "01": ["Esta sección lee", "El diseño declarado", "Diseño muestral",
           "muestra aleatoria simple de 20 de 1300 documentos",
           "Se aplica la corrección por población finita", "Los cinco documentos más grandes"],
    "02": ["El estimando declarado", "Estimando declarado: media micro.", "Micro menos macro: +"],
    "04": ["media micro: +", "intervalo de confianza", "documentos con empate exacto", "Diferencia micro:",
           "Comprobado con la simulación pareada"],
    "06": ["qué informar", "en este estudio", "estado", "[por defecto] El índice es fijo", "en el estudio ANEEL",
           "no cubierto por los intervalos"],
}
# common English words; none may be left in a Spanish section once the user's own texts are removed
ENGLISH_WORDS = re.compile(r"\b(the|of|and|with|is|are|was|were|which|this|that|not|by|from|for|each|every|"
                           r"documents|document|interval|mean|samples|given|missing)\b", re.I)


def _visible(h: str) -> str:
    h = re.sub(r"<svg.*?</svg>", " ", h, flags=re.S)
    h = re.sub(r"<style.*?</style>", " ", h, flags=re.S)
    h = re.sub(r"<[^>]+>", " ", h)
    # collapse ASCII white space only: the no-break spaces of Spanish numbers ("95,0\u00a0%") stay
    return re.sub(r"[ \t\r\n]+", " ", html_lib.unescape(h).replace("\u00b6", " ")).strip()


def sections(report_html: str) -> dict:
    """The visible text of each section, keyed by its first heading (the <h1> of each notebook)."""
    body = report_html[report_html.index('<h2 id="Conten'):]
    parts = re.split(r"(<h1 id=\"[^\"]*\">)", body)
    out = {}
    for i in range(1, len(parts), 2):
        text = _visible(parts[i] + parts[i + 1])
        known = [t for pair in TITLES.values() for t in pair if text.startswith(t + " ")]
        out[max(known, key=len) if known else text[:40]] = text
    return out


@pytest.fixture(scope="module")
def built():
    """The example's report in both languages, rendered once for the test run (tests/conftest.py)."""
    es = shared_report(EXAMPLE, "es")
    en = shared_report(EXAMPLE)
    return {"es": es.read_text(encoding="utf-8"), "en": en.read_text(encoding="utf-8"),
            "summary_es": json.loads((es.parent / "summary.json").read_text()),
            "summary_en": json.loads((en.parent / "summary.json").read_text())}


@pytest.fixture(scope="module")
def es(built):
    return sections(built["es"])


@pytest.fixture(scope="module")
def en(built):
    return sections(built["en"])


def user_texts():
    study = load_params(EXAMPLE)
    return [t for t in (study.title, study.description, study.design.population, study.estimand.why) if t]


def without_user_text(text: str) -> str:
    for t in user_texts():
        text = text.replace(" ".join(t.split()), " ")
    return text


@pytest.mark.parametrize("stem", sorted(TITLES))
def test_each_language_has_its_own_section_title(built, es, en, stem):
    title_en, title_es = TITLES[stem]
    assert title_es in es and title_en not in es
    assert title_en in en and title_es not in en
    toc_es = built["es"][built["es"].index("Contenido"):built["es"].index("Contenido") + 3000]
    assert f">{title_es}</a>" in toc_es


@pytest.mark.parametrize("stem", sorted(TITLES))
def test_no_english_left_in_spanish_sections(es, en, stem):
    title_en, title_es = TITLES[stem]
    for phrase in ENGLISH_MARKERS[stem]:
        assert phrase in en[title_en], f"marker {phrase!r} is not in the English section: fix the marker"
        assert phrase not in es[title_es], f"English {phrase!r} left in Spanish section {title_es!r}"
    for phrase in SPANISH_MARKERS[stem]:
        assert phrase in es[title_es], phrase
        assert phrase not in en[title_en], phrase
    left = ENGLISH_WORDS.findall(without_user_text(es[title_es]))
    assert not left, f"English words in {title_es!r}: {sorted(set(left))}"


@pytest.mark.parametrize("stem", sorted(TITLES))
def test_spanish_numbers_have_decimal_commas(es, stem):
    text = without_user_text(es[TITLES[stem][1]])
    english = re.findall(r"(?<![\w.,\-+])[-+]?\d+\.\d+(?![\w.])", text)
    assert not english, f"English-form numbers in {stem}: {english[:5]}"
    assert re.search(r"\d,\d", text), "no decimal comma at all"


def test_spanish_numbers_are_the_engine_numbers(built, es):
    s = built["summary_es"]
    assert s["micro"]["estimate"] == built["summary_en"]["micro"]["estimate"]     # same analysis
    dot2comma = lambda x, spec: format(x, spec).replace(".", ",")  # noqa: E731
    assert dot2comma(s["micro"]["estimate"], ".4f") in es["Estimando"]
    assert dot2comma(s["macro"]["estimate"], ".4f") in es["Estimando"]
    assert f"1 - K/M = {dot2comma(1 - s['K'] / 1300, '.4f')}" in es["Diseño del estudio"]
    assert "1,54\u00a0%" in es["Diseño del estudio"]
    diff = s["comparison"]["difference"]["micro"]["estimate"]
    assert f"media micro: {dot2comma(diff, '+.4f')}" in es["Comparación de sistemas"]
    lo, hi = s["comparison_headline"]["ci"]
    assert f"[{i18n.num(lo, '+.4f', lang='es')}; {i18n.num(hi, '+.4f', lang='es')}]" in es["Comparación de sistemas"]
    assert f"{lo:+.4f}".replace(".", ",") in es["Comparación de sistemas"]
    items = es["Lista de comprobación del informe"]
    assert f"K/M = {dot2comma(s['K'] / 1300, '.3g')}" in items


def test_spanish_checklist_shows_the_seven_points_and_spanish_statuses(built, es):
    text = es["Lista de comprobación del informe"]
    starts = ["1 Población y diseño muestral", "2 Estimando (media micro o macro)", "3 K, N y distribución de n_d",
              "4 Método del intervalo, unidad de remuestreo", "5 Correlación intraclase y efecto de diseño",
              "6 Fracción de documentos con tasa 0 o 1", "7 Qué queda fuera de la incertidumbre"]
    positions = [text.index(s) for s in starts]
    assert positions == sorted(positions)
    assert re.search(r"\b(aproximado|indicado)\b", text)
    assert not re.search(r"\b(given|approximate|not applicable|unavailable)\b", text)
    # the JSON keeps the English statuses and keys
    assert built["summary_es"]["headline"] == built["summary_en"]["headline"]


def test_english_report_unchanged_in_substance(en, built):
    d, e, c, k = (en[TITLES[s][0]] for s in ("01", "02", "04", "06"))
    s = built["summary_en"]
    assert "simple random sample of 20 of 1,300 documents, without replacement (sampling fraction 1.54%)" in d
    assert "Declared estimand: micro mean." in e and f"{s['micro']['estimate']:.4f}" in e
    assert f"micro mean: {s['comparison']['difference']['micro']['estimate']:+.4f}" in c
    assert "documents tied exactly" in c and "sign-flip randomization test by document, p" in c
    assert "population_design" in k and "[default] The index is fixed" in k
    for word in ("Diseño", "media micro", "por defecto", "Comprobado", "indicado"):
        assert word not in d + e + c + k


def test_checklist_section_cites_the_method_source(es, en):
    from perdoc.report.checklist import METHOD_SOURCE, method_source
    for text, lang in ((en["Reporting checklist"], "en"), (es["Lista de comprobación del informe"], "es")):
        assert METHOD_SOURCE["author"] in text and METHOD_SOURCE["title"] in text
        assert method_source(lang) in text
    assert "(in Spanish)" in en["Reporting checklist"]
    assert "(in Spanish)" not in es["Lista de comprobación del informe"]
