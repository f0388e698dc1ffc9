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
    """The message keys Babel extracts as `make catalogs` does (pyproject.toml's keywords, input paths and
    mappings): from lib/perdoc's Python files and from the report notebooks' code cells."""
    methods = BABEL.get("extractors", {})
    method_map = [(m["pattern"], methods.get(m["method"], m["method"])) for m in BABEL["mappings"]]
    keys = set()
    for path in BABEL["extract_messages"]["input_paths"]:
        found = extract_from_dir(str(ROOT / path), method_map=method_map, keywords=KEYWORDS)
        keys |= {message for _, _, message, _, _ in found}
    return keys


def test_extraction_finds_the_reports_messages(code_keys):
    assert {"box.summary", "headline.title", "chart.sizes.caption", "input.file", "method.micro.cr2",
            "method.micro.design.stratified", "chart.short.cr2", "chart.role.primary", "reason.flat_rate",
            "section.design.study", "section.checklist.missing"} <= code_keys   # library codes, notebook cells
    assert all(isinstance(k, str) and k == k.strip() and " " not in k for k in code_keys), "keys, not sentences"


def test_no_key_hides_from_extraction(code_keys):
    """Every literal key of a tr / translate / N_ call (f-strings included, where Babel does not look)
    is one Babel extracts."""
    arg = {"tr": 0, "translate": 1, "N_": 0, "Message": 0}
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


def sample_args(text: str) -> dict:
    """An argument for each placeholder of ``text``: a number where the template gives a format spec."""
    return {name: 12345.678 if spec else "x" for _, name, spec, _ in string.Formatter().parse(text)
            if name is not None}


@pytest.mark.parametrize("lang", LANGS)
def test_every_text_formats(lang):
    """Each text is a valid format template: its placeholders filled, no stray brace."""
    for key, m in messages(po(lang)).items():
        assert i18n.translate(lang, key, **sample_args(m.string)), key


def test_numbers_are_written_in_the_language_of_the_text():
    """A number argument is formatted by the template's spec, in the reader's form."""
    assert i18n.translate("en", "note.fpc_applied", factor=0.984615) == \
        "finite population correction applied: variances times 1 - K/M = 0.984615"
    assert i18n.translate("es", "note.fpc_applied", factor=0.984615).endswith("1 - K/M = 0,984615")
    assert i18n.translate("es", "checklist.design.census", K=12345) == "censo: los 12\u202f345 documentos de la población"


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


def _judge_intervals():
    """The judge-assisted rows (perdoc.study.judge.judge_intervals) of a small judged sample."""
    from perdoc.methods.ppi import JudgeScores
    from perdoc.reading.table import DocTable
    from perdoc.study.judge import JudgedSample, estimate_judged, judge_intervals
    n, s, binary, _, _ = _tables()
    f = np.minimum(np.maximum(s + np.array([1, -1, 0] * 8)[: s.size], 0), n)
    sample = JudgedSample(table=binary, f=f, judge=JudgeScores(np.r_[n, n + 2], np.r_[f, f + 1], covers=True))
    judged = estimate_judged(sample)
    return list(judge_intervals(judged, (0.0, 1.0)))


@pytest.fixture(scope="module")
def every_interval():
    return _srs_intervals() + _comparison_intervals() + _design_intervals() + _judge_intervals()


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


# ------------------------------------------------------------------------ the library's own sentences
def _estimates_notes():
    """Estimates whose notes and reasons cover the library's sentences: flat rates, a census, a finite
    population correction, no sums of squares, single measurements, designs."""
    from perdoc.estimate import estimate_design
    n = np.array([3.0, 5, 4, 6, 2, 7, 3, 5])
    flat = perdoc.DocTable.from_arrays(n=n, s=n / 2, q=n / 2)
    ones = perdoc.DocTable.from_arrays(n=np.ones(8), s=np.array([1.0, 0, 1, 1, 0, 1, 0, 1]))
    s = np.array([1.0, 2, 0, 3, 1, 2, 1, 4])
    out = [perdoc.estimate(flat, replicates=99, seed=1), perdoc.estimate(ones, replicates=0),
           perdoc.estimate(perdoc.DocTable.from_arrays(n=n, s=s), replicates=0, population_size=8),
           perdoc.estimate(perdoc.DocTable.from_arrays(n=n, s=1.5 * s), replicates=0, population_size=40),
           estimate_design(perdoc.DocTable.from_arrays(n=n, s=s, q=s), design={
               "sampling": "two_stage", "population_size": 100, "chunks_in_doc": n + 3})]
    return out


def _library_messages(every_interval) -> list:
    from perdoc.params import DEFAULT_OUT_OF_SCOPE
    from perdoc.reading.io import _docs_metric
    from perdoc.report.checklist import DEFAULT_OUT_OF_SCOPE as CHECKLIST_OUT_OF_SCOPE
    from perdoc.simulate import recommend
    from perdoc.study.policy import NOT_CHECKED
    found = [NOT_CHECKED, *DEFAULT_OUT_OF_SCOPE, *CHECKLIST_OUT_OF_SCOPE]
    for iv in every_interval:
        found += [iv.reason, *iv.notes]
    for est in _estimates_notes():
        found += [*est.notes, *est.diagnostics.notes, *(iv.reason for iv in est.intervals)]
    row = {"coverage": 0.95, "mc_se": 0.005, "mean_width": 0.05, "infinite": 0.0, "no_interval": 0.0}
    for methods in ({"micro.cr2": row, "micro.cr1": {**row, "out_of_range": 0.01}, "macro.t": {**row, "coverage": 0.9}},
                    {"micro.cr2": {**row, "out_of_range": 0.02}, "macro.t": {**row, "coverage": 0.5, "no_interval": 0.7}},
                    {"micro.wald_iid": row}):
        found += list(recommend(methods, 0.95)[1].values())
    for q in (None, np.array([1.0, 2.0])):
        for s in (np.array([1.0, 2.0]), np.array([0.5, 1.5]), np.array([-1.0, 2.0])):
            found.append(_docs_metric(np.array([2.0, 3.0]), s, q if q is None or s[0] >= 0 else None, {}, "t", None)[1])
    return [m for m in found if m is not None and m != ""]


def test_the_librarys_sentences_have_codes_and_both_languages(every_interval):
    from perdoc.messages import Message
    seen = set()
    for m in _library_messages(every_interval):
        assert isinstance(m, Message), f"the library wrote {m!r} without a message code"
        assert i18n.message_text(m, "en") == m, m.code             # the catalogs' English is the library's
        es = i18n.message_text(m, "es")
        assert es.strip() and es != m, (m.code, es)
        assert not re.search(r"(?<![\w.])\d+\.\d+(?![\w])", es), es   # numbers in Spanish form
        seen.add(m.code)
    assert len(seen) >= 30 and {"reason.flat_rate", "note.census", "note.fpc_applied", "recommendation.qualifies",
                               "recommendation.not_reached", "choice.not_checked", "caveat.index"} <= seen


def test_a_sentence_without_a_code_or_reworded_is_an_error():
    from perdoc.messages import Message
    with pytest.raises(i18n.UnknownMessage, match="plain string"):
        i18n.message_text("zero standard error: no interval", "es")
    with pytest.raises(i18n.UnknownMessage, match="not in the catalogs"):
        i18n.message_text(Message("reason.no_such_code", "a new sentence"), "es")
    with pytest.raises(i18n.UnknownMessage, match="is not the library's"):
        i18n.message_text(Message("reason.zero_se", "zero standard error, so no interval"), "es")
    assert i18n.message_text(Message("reason.zero_se", "zero standard error: no interval"), "es") == \
        "error estándar nulo: sin intervalo"


def test_codes_survive_pickling_and_copying():
    """A report's kernel reads the analysis frozen by pickle (perdoc.report.build)."""
    import copy
    import pickle
    from perdoc.messages import Message
    m = Message("recommendation.not_reached", "x {why}", why=Message("recommendation.why.too_narrow", "y"))
    for back in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert isinstance(back, Message) and back == m and back.code == m.code
        assert isinstance(back.args["why"], Message) and back.args["why"].code == "recommendation.why.too_narrow"
