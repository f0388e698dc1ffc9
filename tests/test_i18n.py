"""The report's languages: number formatting through Babel, the message catalogs and the text
chooser, cell selection, and the params/CLI plumbing of report.language (tests/test_catalogs.py checks
the catalogs themselves)."""

import pytest

from perdoc import i18n
from perdoc.errors import PerdocError
from perdoc.params import ParamsError, parse_params


@pytest.fixture(autouse=True)
def _english_after():
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("value, spec, en, es", [
    (0.1234, ".4f", "0.1234", "0,1234"),
    (12345.6, ",.1f", "12,345.6", "12\u202f345,6"),
    (1234, ",.0f", "1,234", "1234"),               # Spanish groups only from five digits on
    (1234567, ",.0f", "1,234,567", "1\u202f234\u202f567"),
    (0.95, ".1%", "95.0%", "95,0\u00a0%"),
    (-0.0123, ".3g", "-0.0123", "-0,0123"),
])
def test_numbers_in_both_languages(value, spec, en, es):
    assert i18n.num(value, spec, lang="en") == en == format(value, spec)
    assert i18n.num(value, spec, lang="es") == es


def test_spanish_symbols_come_from_babel():
    from babel.numbers import get_decimal_symbol
    assert get_decimal_symbol("es_ES") in i18n.num(0.5, ".2f", lang="es")


def test_missing_values_and_intervals():
    assert i18n.num(None) == i18n.num(float("nan")) == i18n.num(float("inf")) == "—"
    assert i18n.interval(0.1, 0.25, ".2f", lang="en") == "[0.10, 0.25]"
    assert i18n.interval(0.1, 0.25, ".2f", lang="es") == "[0,10; 0,25]"   # the comma is the decimal sign
    assert i18n.integer(12345, lang="es") == "12\u202f345"


def test_text_follows_the_current_language():
    i18n.set_language("es")
    assert i18n.numbers_in("df = 12.5, K = 20, 12,345 rows") == "df = 12,5, K = 20, 12\u202f345 rows"
    i18n.set_language("en")
    with pytest.raises(PerdocError, match="fr"):
        i18n.set_language("fr")


def test_catalog_messages_follow_the_current_language():
    assert i18n.tr("box.summary") == "Summary" and i18n.translate("es", "box.summary") == "Resumen"
    i18n.set_language("es")
    assert i18n.tr("box.summary") == "Resumen" and i18n.translate("en", "box.summary") == "Summary"
    assert i18n.tr("box.warning.no_interval", why="x") == "Sin intervalo: x."
    assert i18n.tr("headline.title_no_interval", name="media micro", estimate="0,5", label="CR2", reason="r",
                   fpc="") == "Media micro = 0,5: sin intervalo (CR2): r."     # {name!c}: first letter up
    with pytest.raises(i18n.MissingMessage):
        i18n.tr("no.such.key")


def test_cells_of_the_other_language_are_left_out():
    assert i18n.keep_cell(["lang-es"], "es") and not i18n.keep_cell(["lang-es"], "en")
    assert i18n.keep_cell([], "es") and i18n.keep_cell(["parameters"], "en")


def _raw(**report):
    raw = {"name": "x", "data": {"path": "d.csv", "doc": "doc", "score": "hit"},
           "design": {"population": "docs"}, "estimand": {"kind": "micro", "why": "chunks"}}
    if report:
        raw["report"] = report
    return raw


def test_params_report_language(tmp_path):
    assert parse_params(_raw(), base=tmp_path).language == "en"
    assert parse_params(_raw(language="es"), base=tmp_path).language == "es"
    with pytest.raises(ParamsError, match=r"report\.language.*en, es"):
        parse_params(_raw(language="fr"), base=tmp_path)


def test_combined_notebook_keeps_one_language():
    from perdoc.report.build import combined_notebook
    for lang in ("en", "es"):
        nb = combined_notebook(language=lang)
        other = "lang-es" if lang == "en" else "lang-en"
        assert not [c for c in nb.cells if other in c.get("metadata", {}).get("tags", [])]
