"""The report's message catalogs (perdoc/locale, read by perdoc.i18n): every key the code uses has a
non-empty, non-fuzzy text in English and Spanish, both catalogs hold the same keys with the same
placeholders, the committed template and compiled .mo files are what `make catalogs` gives from the
code and the .po files now, and every interval method perdoc can produce has a name in both languages
from the catalogs (none falls back to the English label)."""

import ast
import io
import re
import string
import tomllib
from pathlib import Path

import numpy as np
import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

import perdoc
from perdoc.report import i18n
from perdoc.report._spanish import METHOD_KEYS, UnknownMethod, method_message, method_name

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "perdoc"
LOCALE = LIB / "locale"
LANGS = ("en", "es")
BABEL = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["babel"]
KEYWORDS = parse_keywords(BABEL["extract_messages"]["keywords"])


@pytest.fixture(autouse=True)
def _english_after():
    yield
    i18n.set_language("en")


def po(lang: str):
    with open(LOCALE / lang / "LC_MESSAGES" / "perdoc.po", "rb") as f:
        return read_po(f, locale=lang)


def messages(catalog) -> dict:
    return {m.id: m for m in catalog if m.id}


def placeholders(text: str) -> set:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.fixture(scope="module")
def code_keys() -> set:
    """The message keys Babel extracts from lib/perdoc, with the keywords `make catalogs` uses."""
    found = extract_from_dir(str(LIB), keywords=KEYWORDS)
    return {message for _, _, message, _, _ in found}


def test_extraction_finds_the_reports_messages(code_keys):
    assert {"box.summary", "headline.title", "chart.sizes.caption", "input.file", "method.micro.cr2",
            "method.micro.design.stratified", "chart.short.cr2", "chart.role.primary"} <= code_keys
    assert all(isinstance(k, str) and k == k.strip() and " " not in k for k in code_keys), "keys, not sentences"


def test_no_key_hides_from_extraction(code_keys):
    """Every literal key of a tr / translate / N_ call (f-strings included, where Babel does not look)
    is one Babel extracts."""
    arg = {"tr": 0, "translate": 1, "N_": 0}
    literal = set()
    for path in LIB.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in arg:
                args = node.args
                i = arg[node.func.id]
                if len(args) > i and isinstance(args[i], ast.Constant) and isinstance(args[i].value, str):
                    literal.add((path.name, args[i].value))
    missed = sorted((name, key) for name, key in literal if key not in code_keys)
    assert len(literal) > 150 and not missed, missed


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_has_a_text(code_keys, lang):
    msgs = messages(po(lang))
    assert sorted(code_keys - set(msgs)) == [], f"keys missing from {lang}.po: run make catalogs, then write them"
    assert sorted(set(msgs) - code_keys) == [], f"keys no code uses left in {lang}.po: run make catalogs"
    empty = sorted(k for k, m in msgs.items() if not m.string or not m.string.strip())
    fuzzy = sorted(k for k, m in msgs.items() if m.fuzzy)
    assert not empty and not fuzzy, (empty, fuzzy)


def test_both_catalogs_hold_the_same_keys_and_placeholders():
    en, es = messages(po("en")), messages(po("es"))
    assert set(en) == set(es)
    differ = {k: (placeholders(en[k].string), placeholders(es[k].string)) for k in en
              if placeholders(en[k].string) != placeholders(es[k].string)}
    assert not differ, differ


@pytest.mark.parametrize("lang", LANGS)
def test_every_text_formats(lang):
    """Each text is a valid format template: its placeholders filled, no stray brace."""
    for key, m in messages(po(lang)).items():
        args = {name: "x" for name in placeholders(m.string)}
        assert i18n.translate(lang, key, **args), key


@pytest.mark.parametrize("lang", LANGS)
def test_compiled_catalog_is_up_to_date(lang):
    buf = io.BytesIO()
    write_mo(buf, po(lang))
    mo = (LOCALE / lang / "LC_MESSAGES" / "perdoc.mo").read_bytes()
    assert mo == buf.getvalue(), f"{lang}/LC_MESSAGES/perdoc.mo is not the compiled perdoc.po: run make catalogs"


def test_template_is_up_to_date(code_keys):
    with open(LOCALE / "perdoc.pot", "rb") as f:
        assert set(messages(read_po(f))) == code_keys, "perdoc.pot is not the code's keys: run make catalogs"


def test_no_text_calls_the_report_a_notebook():
    """As tests/test_reader_words.py checks the sentences written side by side in the notebooks."""
    bad = [(lang, k) for lang in LANGS for k, m in messages(po(lang)).items()
           if re.search(r"\bnotebooks?\b|\bcuadernos?\b", m.string, re.I)]
    assert not bad, bad


def test_a_missing_key_is_an_error_not_its_name():
    for lang in LANGS:
        with pytest.raises(i18n.MissingMessage, match="no.such.key"):
            i18n.translate(lang, "no.such.key")


def test_text_follows_the_current_language_with_arguments():
    assert i18n.tr("box.interval", level="95%") == "95% interval"
    i18n.set_language("es")
    assert i18n.tr("box.interval", level="95 %") == "Intervalo al 95 %"
    assert i18n.tr("estimand.other_mean", kind="x") == "media x"
    # !c: the argument with its first letter in upper case
    assert i18n.tr("chart.bootstrap.x_title", name="media macro").startswith("Media macro de cada réplica")


# ------------------------------------------------------------------------ interval method names
def _tables():
    rng = np.random.default_rng(7)
    n = rng.integers(2, 40, 24).astype(float)
    s = rng.binomial(n.astype(int), 0.3).astype(float)
    binary = perdoc.DocTable.from_arrays(n=n, s=s, q=s)
    scores = perdoc.DocTable.from_arrays(n=n, s=2.5 * s, q=6.25 * s)   # a score outside [0, 1]
    no_q = perdoc.DocTable.from_arrays(n=n, s=s)
    return n, s, binary, scores, no_q


def _srs_intervals():
    from perdoc.frame import Frame
    n, s, binary, scores, no_q = _tables()
    kw = dict(replicates=99, seed=1)
    out = []
    for table in (binary, scores):
        out += perdoc.estimate(table, population_size=1300, **kw).intervals
    out += perdoc.estimate(no_q, **kw).intervals
    frame = Frame.from_arrays(doc=np.concatenate([binary.doc, [f"extra{i}" for i in range(40)]]),
                              n=np.concatenate([n, np.arange(40) % 30 + 1.0]))
    out += perdoc.estimate(binary, frame=frame, **kw).intervals
    return out


def _comparison_intervals():
    from perdoc.pairs import PairTable
    rng = np.random.default_rng(3)
    doc = np.repeat([f"d{i}" for i in range(15)], 6)
    a = rng.binomial(1, 0.5, doc.size).astype(float)
    b = rng.binomial(1, 0.4, doc.size).astype(float)
    paired = perdoc.compare(PairTable.from_rows(doc, a, b), replicates=99, seed=1)
    n_a, n_b = rng.integers(1, 9, 15).astype(float), rng.integers(1, 9, 15).astype(float)
    s_a, s_b = np.floor(n_a / 2), np.floor(n_b / 3)
    unpaired = perdoc.compare(PairTable.build(doc=[f"d{i}" for i in range(15)], n_a=n_a, s_a=s_a, q_a=s_a,
                                              n_b=n_b, s_b=s_b, q_b=s_b, paired=False), replicates=99, seed=1)
    assert unpaired.unpaired
    return list(paired.difference.intervals) + list(unpaired.unpaired)


def _design_intervals():
    from perdoc.estimate import estimate_design
    from perdoc.survey import SampleData, design_estimate
    n, s, binary, _, _ = _tables()
    by = np.array(["a", "b", "c"] * 8)
    stratified = estimate_design(binary, design={"sampling": "stratified",
                                                 "strata": {"by": by, "population_sizes": {"a": 90, "b": 80, "c": 70}}})
    two_stage = estimate_design(binary, design={"sampling": "two_stage", "population_size": 500,
                                                "chunks_in_doc": n + 5})
    k = 12
    drawn = design_estimate(SampleData(doc=np.array([f"d{i}" for i in range(k)]), draw=np.ones(k, int),
                                       stratum=np.array(["x"] * k), prob=np.full(k, 0.1), N=n[:k] + 3, m=n[:k],
                                       s=s[:k], q=s[:k], f=np.full(k, 0.1)))
    return list(stratified.intervals) + list(two_stage.intervals) + list(drawn.intervals)


@pytest.fixture(scope="module")
def every_interval():
    return _srs_intervals() + _comparison_intervals() + _design_intervals()


def test_every_interval_method_has_a_name_in_both_languages(every_interval):
    used = set()
    for iv in every_interval:
        key, args = method_message(iv)
        used.add(key)
        assert method_name(iv, "en") == iv.label, (key, iv.label)       # the English text is the label
        es = method_name(iv, "es")
        assert es.strip() and es != iv.label, (key, es)
    every_key = {key for keys in METHOD_KEYS.values() for key in keys}
    assert used == every_key, f"names no interval produced here: {sorted(every_key - used)}"


def test_variable_parts_are_arguments(every_interval):
    wild = next(iv for iv in every_interval if iv.method == "wild")
    assert method_message(wild) == ("method.micro.wild", {"weights": wild.extra["weights"]})
    assert method_name(wild, "es") == f"bootstrap salvaje por conglomerados ({wild.extra['weights']})"
    strat = next(iv for iv in every_interval if iv.method == "design" and "strata" in iv.label)
    assert method_message(strat)[1] == {"strata": "3"}
    assert "(3 estratos)" in method_name(strat, "es")


def test_report_helpers_use_the_catalog_names(every_interval):
    from perdoc.report.charts import short_label
    from perdoc.report.checklist import method_label as checklist_label
    from perdoc.report.notebook import method_label
    i18n.set_language("es")
    for iv in every_interval:
        assert method_label(iv) == checklist_label(iv) == checklist_label(iv.label) == method_name(iv, "es")
        assert short_label(iv)


def test_unknown_method_or_changed_label_fails():
    from dataclasses import replace
    iv = _srs_intervals()[0]
    with pytest.raises(UnknownMethod, match="micro.no_such_method"):
        method_name(replace(iv, method="no_such_method"), "es")
    with pytest.raises(UnknownMethod, match="not the English text"):
        method_name(replace(iv, label=iv.label + ", reworded"), "es")
