"""The reporting checklist: items filled from the data, statuses for gaps and non-applicable items."""

import re

import numpy as np
import pandas as pd
import pytest

import perdoc
from perdoc import Exclusion
from perdoc.checklist import DEFAULT_OUT_OF_SCOPE, Item, checklist, checklist_frame
from perdoc.errors import ParameterError

KEYS = ["population_design", "estimand", "sample_size", "interval_method", "icc_deff", "rates",
        "out_of_scope", "bootstrap_degenerate", "exclusions"]

DESIGN = {"population": "all 1,300 PDF filings of the regulator in 2024",
          "sampling": "simple random sample of documents without replacement",
          "population_size": 1300}
ESTIMAND = {"name": "micro", "why": "the question is which share of all passages is attributed"}


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(4)
    n = np.maximum(1, np.round(rng.lognormal(3.0, 1.0, 20)))
    s = rng.binomial(n.astype(int), rng.beta(1, 3, 20)).astype(float)
    s[0], s[1] = 0.0, n[1]  # one document at rate 0, one at rate 1
    return perdoc.DocTable.from_arrays(n=n, s=s, q=s.copy(), doc=[f"d{i}" for i in range(20)])


@pytest.fixture(scope="module")
def est(table):
    return perdoc.estimate(table, replicates=199, seed=1)


def by_key(items):
    return {i.key: i for i in items}


def test_all_items_given_and_filled(table, est):
    items = checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=())
    assert [i.key for i in items] == KEYS
    assert all(isinstance(i, Item) and i.status == "given" for i in items)
    d = by_key(items)
    assert "M = 1,300" in d["population_design"].value and f"{20 / 1300:.3g}" in d["population_design"].value
    assert f"{est.micro_estimate:.4f}" in d["estimand"].value and "why:" in d["estimand"].value
    assert "K = 20 documents" in d["sample_size"].value and "median" in d["sample_size"].value
    cr2 = est.interval("micro", "cr2")
    m = d["interval_method"].value
    assert f"effective df = {cr2.df:.2f}" in m and "K = 20 documents" in m
    assert "ICC =" in d["icc_deff"].value and "89%" in d["icc_deff"].value and "74%" in d["icc_deff"].value
    f0, f1 = np.mean(table.s == 0), np.mean(table.s == table.n)
    assert f1 > 0 and f"{f0:.1%} of documents at rate 0, {f1:.1%} at rate 1" in d["rates"].value
    assert all(x in d["out_of_scope"].value for x in DEFAULT_OUT_OF_SCOPE)
    assert "of 199 replicates" in d["bootstrap_degenerate"].value
    assert d["exclusions"].value == "none"


def test_macro_estimand_reports_K_minus_1_df(table, est):
    d = by_key(checklist(table, est, design=DESIGN, estimand={"name": "macro", "why": "typical document",
                                                              "method": "t"},
                         out_of_scope=["the fixed index"], exclusions=()))
    assert "effective df = 19.00" in d["interval_method"].value
    assert d["out_of_scope"].value == "the fixed index"


def test_macro_default_is_the_document_bootstrap_t(table, est):
    # the coverage panel's default for the macro mean when the bootstrap ran (perdoc.policy)
    d = by_key(checklist(table, est, design=DESIGN, estimand={"name": "macro", "why": "typical document"}))
    v = d["interval_method"].value
    assert "bootstrap-t by document" in v and "documents resampled with replacement" in v


def test_missing_population_and_estimand(table, est):
    d = by_key(checklist(table, est, design={"population": "  ", "sampling": None}, estimand={"name": "micro"},
                         out_of_scope=[], exclusions=None))
    assert d["population_design"].status == "missing"
    assert "M not given" in d["population_design"].value
    assert d["estimand"].status == "missing"
    assert d["out_of_scope"].status == "missing"


def test_no_bootstrap_is_not_applicable(table):
    e0 = perdoc.estimate(table, replicates=0)
    d = by_key(checklist(table, e0, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=()))
    assert d["bootstrap_degenerate"].status == "not applicable"


def test_degenerate_fraction_counted():
    t = perdoc.DocTable.from_arrays(n=[4, 6, 10], s=[0, 0, 5])
    e = perdoc.estimate(t, replicates=400, seed=1)
    d = by_key(checklist(t, e, design=DESIGN | {"population_size": None}, estimand=ESTIMAND,
                         out_of_scope=None, exclusions=()))
    n_deg = int(e.bootstrap["draws"].degenerate.sum())
    assert n_deg > 0 and d["bootstrap_degenerate"].value.startswith(f"{n_deg} of 400 replicates")


def test_exclusions_counted(table, est):
    ex = (Exclusion(12, "empty chunk text"), Exclusion(3, "document id missing"))
    d = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=ex))
    v = d["exclusions"].value
    assert d["exclusions"].status == "given"
    assert v.startswith("15 rows excluded") and "12 (empty chunk text)" in v and "3 (document id missing)" in v
    # None takes the table's own exclusions; an exclusion without a reason is a gap
    t = perdoc.DocTable.from_arrays(n=table.n, s=table.s, q=table.q, exclusions=(Exclusion(2, ""),))
    d = by_key(checklist(t, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=None))
    assert d["exclusions"].status == "missing" and d["exclusions"].value.startswith("2 rows excluded")


def test_no_q_non_binary_makes_icc_missing():
    t = perdoc.DocTable.from_arrays(n=[3, 5, 8, 13, 2], s=[0.5, 2.5, 1.2, 9.0, -0.3])
    e = perdoc.estimate(t, replicates=0)
    d = by_key(checklist(t, e, design=DESIGN | {"population_size": None}, estimand=ESTIMAND,
                         out_of_scope=None, exclusions=()))
    assert d["icc_deff"].status == "missing" and "q" in d["icc_deff"].value


def test_bad_parameters(table, est):
    with pytest.raises(ParameterError):
        checklist(table, est, design={"populaton": "typo"}, estimand=ESTIMAND, exclusions=())
    with pytest.raises(ParameterError):
        checklist(table, est, design=DESIGN, estimand={"name": "median", "why": "x"}, exclusions=())
    with pytest.raises(ParameterError):
        checklist(table, est, design=DESIGN | {"population_size": 10}, estimand=ESTIMAND, exclusions=())
    with pytest.raises(ValueError):
        Item("k", "i", "v", "unknown")


def test_checklist_frame(table, est):
    items = checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=())
    df = checklist_frame(items)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["key", "item", "value", "status"]
    assert list(df["key"]) == KEYS
    assert set(df["status"]) <= {"given", "missing", "not applicable"}


# ---------------------------------------------------------------------------------- the seven points, two languages
from types import SimpleNamespace  # noqa: E402

from perdoc import i18n  # noqa: E402
from perdoc.checklist import (STATUSES, checklist_table, design_text, method_label, out_of_scope_text,  # noqa: E402
                              reason_text, signed, source_text, status_label)
from perdoc.messages import Message  # noqa: E402
from perdoc.params import DEFAULT_OUT_OF_SCOPE as PARAMS_OUT_OF_SCOPE  # noqa: E402

SEVEN = KEYS[:7]   # the points a report must disclose, in the order the method's source lists them

# what each of the seven points must name, in each language: (title words, value words)
POINTS_ES = [
    (["Población", "diseño muestral", "qué se sorteó", "niveles", "fracción"], ["población:", "diseño muestral:",
                                                                                 "fracción de muestreo"]),
    (["Estimando", "micro", "macro", "por qué"], ["media micro", "por qué:"]),
    (["K, N", "n_d", "mediciones por documento"], ["K = 20 documentos", "mediciones", "cuantiles de n_d", "mediana"]),
    (["Método del intervalo", "unidad de remuestreo", "grados de libertad efectivos"],
     ["grados de libertad efectivos = ", "conglomerado = documento", "K = 20 documentos"]),
    (["Correlación intraclase", "efecto de diseño", "diagnóstico", "no como sustituto"],
     ["CCI = ", "efecto de diseño DEFF = ", "n efectivo = N/DEFF", "solo como diagnóstico"]),
    (["tasa 0 o 1", "distribución de las tasas por documento"],
     ["con tasa 0", "con tasa 1", "cuantiles de las tasas"]),
    (["Qué queda fuera", "índice", "recuperador", "población de preguntas"],
     ["el índice", "recuperador", "población de preguntas"]),
]
POINTS_EN = [
    ["population:", "sampling:", "sampling fraction K/M"],
    ["micro mean", "why:"],
    ["K = 20 documents", "measurements", "n_d quantiles", "median"],
    ["effective df = ", "cluster = document", "K = 20 documents"],
    ["ICC = ", "design effect DEFF = ", "effective n = N/DEFF", "diagnostics only, not a substitute"],
    ["of documents at rate 0", "at rate 1", "rate quantiles"],
    ["the index", "retriever", "population of questions"],
]


@pytest.fixture
def spanish():
    yield
    i18n.set_language("en")


def test_spanish_checklist_has_the_seven_points_in_order(table, est):
    items = checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=(), language="es")
    assert [i.key for i in items][:7] == SEVEN and [i.key for i in items] == KEYS
    for item, (title_words, value_words) in zip(items, POINTS_ES):
        assert all(w in item.item for w in title_words), (item.key, item.item)
        assert all(w in item.value for w in value_words), (item.key, item.value)
    assert [i.status for i in items] == ["given"] * len(KEYS)    # statuses stay English (JSON values)


def test_english_checklist_covers_the_same_seven_points(table, est):
    items = checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=())
    for item, words in zip(items[:7], POINTS_EN):
        assert all(w in item.value for w in words), (item.key, item.value)
    es = checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=(), language="es")
    assert [i.item for i in items] != [i.item for i in es] and [i.key for i in items] == [i.key for i in es]


def test_current_language_is_the_default(table, est, spanish):
    i18n.set_language("es")
    d = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=()))
    assert d["estimand"].value.startswith("media micro")
    i18n.set_language("en")
    d = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=()))
    assert d["estimand"].value.startswith("micro mean")
    with pytest.raises(perdoc.PerdocError, match="language"):
        checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=(), language="fr")


def test_spanish_numbers_use_decimal_commas(table, est):
    d = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, out_of_scope=None, exclusions=(),
                         language="es"))
    assert f"{est.micro_estimate:.4f}".replace(".", ",") in d["estimand"].value
    assert f"{est.micro_estimate:.4f}" not in d["estimand"].value
    assert "M = 1300 documentos" in d["population_design"].value          # four digits: no group separator
    assert f"{20 / 1300:.3g}".replace(".", ",") in d["population_design"].value
    iv = est.interval("micro", "logit_cr2")
    assert f"[{iv.ci.low:.4f}; {iv.ci.high:.4f}]".replace(".", ",") in d["interval_method"].value
    assert f"de {199} réplicas" in d["bootstrap_degenerate"].value
    for item in d.values():   # no English-form decimal number left in a Spanish value
        assert not re.search(r"(?<![\w.])\d+\.\d+(?![\w])", item.value), item.value


def test_statuses_translated_for_readers_only(table):
    assert [status_label(s, "en") for s in STATUSES] == list(STATUSES)
    es = [status_label(s, "es") for s in STATUSES]
    assert es == ["indicado", "falta", "no aplica", "no disponible", "aproximado"]
    e0 = perdoc.estimate(table, replicates=0)
    items = checklist(table, e0, design={"population": None, "sampling": "s"}, estimand=ESTIMAND, out_of_scope=[],
                      exclusions=(), language="es")
    assert {i.status for i in items} == {"given", "missing", "not applicable"}    # JSON keeps English
    shown = checklist_table(items, "es")
    assert list(shown.columns) == ["n.º", "qué informar", "en este estudio", "estado"]
    assert list(shown["n.º"]) == [str(k) for k in range(1, len(KEYS) + 1)]
    assert set(shown["estado"]) == {"indicado", "falta", "no aplica"}
    assert checklist_table(items, "en").equals(checklist_frame(items))


def test_reference_study_named_with_its_numbers(table, est):
    for lang, cov in (("en", ("89%", "74%", "95%")), ("es", ("89\u00a0%", "74\u00a0%", "95\u00a0%"))):
        v = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=(), language=lang))["icc_deff"]
        assert "ANEEL\u2013TAESA" in v.value and "reference study" not in v.value
        assert all(c in v.value for c in cov) and "K = 20" in v.value and "K = 5" in v.value
        assert ("1,300" if lang == "en" else "1300") in v.value            # the study's census size
    # this report's own simulation is quoted beside it when there is one
    sim = SimpleNamespace(methods={"micro.wald_eff_n": {"coverage": 0.5864}}, k=20, reps=2000)
    v = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=(), simulation=sim))["icc_deff"]
    assert "in this report's own simulation (2,000 samples of K = 20 documents) the same interval covered 58.6%" \
        in v.value
    v = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=(), simulation=sim,
                         language="es"))["icc_deff"]
    assert "2000 muestras de K = 20 documentos" in v.value and "cubrió el 58,6\u00a0%" in v.value


def test_default_caveats_in_spanish_english_untouched(table, est):
    assert all(isinstance(t, Message) for t in PARAMS_OUT_OF_SCOPE + DEFAULT_OUT_OF_SCOPE)   # codes, not words
    for text in PARAMS_OUT_OF_SCOPE + DEFAULT_OUT_OF_SCOPE:
        assert out_of_scope_text(text, "en") == text
        es = out_of_scope_text(text, "es")
        assert es != text and not re.search(r"\b(the|is|are|not|of)\b", es)
    assert out_of_scope_text("Labels by one annotator.", "es") == "Labels by one annotator."   # the analyst's own
    oos = list(PARAMS_OUT_OF_SCOPE) + ["Labels by one annotator."]
    src = ["default"] * 3 + ["from the params file"]
    v = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=(), out_of_scope=oos,
                         out_of_scope_sources=src, language="es"))["out_of_scope"].value
    assert v.count("[por defecto] ") == 3 and "[del archivo de parámetros] Labels by one annotator." in v
    assert "El índice es fijo" in v and "The index is fixed" not in v
    v = by_key(checklist(table, est, design=DESIGN, estimand=ESTIMAND, exclusions=(), language="es"))["out_of_scope"]
    assert v.value.endswith("(por defecto)") and "the index" not in v.value
    assert source_text("default", "es") == "por defecto" and source_text("default", "en") == "default"


def test_every_method_label_and_reason_has_spanish(table, est):
    t01 = perdoc.DocTable.from_arrays(n=table.n, s=table.s, q=table.q)
    for e in (est, perdoc.estimate(t01, replicates=99, seed=1, population_size=1300)):
        for iv in e.intervals:
            assert method_label(iv.label, "en") == iv.label
            es = method_label(iv.label, "es")
            assert es != iv.label and not re.search(r"\b(with|on|by|in|scale|df|se)\b", es), (iv.label, es)
            if iv.reason:
                assert reason_text(iv.reason, "es") != iv.reason, iv.reason
    from perdoc.estimate import _Ctx   # every batch method's label, those needing a frame too
    for label in _Ctx._LABELS.values():
        assert method_label(label, "es") != label, label
    assert method_label("wild cluster bootstrap (webb)", "es") == "bootstrap salvaje por conglomerados (webb)"
    assert method_label("combined ratio, stratified (3 strata), t with K-H df", "es").startswith(
        "razón combinada estratificada (3 estratos)")
    assert method_label("a method not known here", "es") == "a method not known here"


def test_recommendation_notes_in_spanish():
    from perdoc.simulate import recommend
    methods = {"micro.cr2": {"coverage": 0.949, "mc_se": 0.005, "mean_width": 0.0554, "infinite": 0.0},
               "micro.cr1": {"coverage": 0.90, "mc_se": 0.006, "mean_width": 0.04, "infinite": 0.0},
               "macro.t": {"coverage": 0.90, "mc_se": 0.004, "mean_width": 0.05, "infinite": 0.0,
                           "no_interval": 0.0}}
    rec, notes = recommend(methods, 0.95)
    assert rec == {"micro": "micro.cr2", "macro": None}
    micro, macro = reason_text(notes["micro"], "es"), reason_text(notes["macro"], "es")
    assert micro.startswith("micro.cr2: su cobertura, 0,949") and "único método micro que cumple" in micro
    assert macro.startswith("ningún método macro alcanza el nivel nominal 0,95 ") and "0,900" in macro
    for text in (micro, macro):
        assert not re.search(r"\b(coverage|qualifying|within|method)\b", text), text
    assert reason_text(notes["micro"], "en") == notes["micro"]


def test_signed_differences_keep_their_plus():
    assert signed(0.0084, ".4f", "en") == "+0.0084" and signed(0.0084, ".4f", "es") == "+0,0084"
    assert signed(-0.0036, ".4f", "es") == "-0,0036" and signed(None, ".4f", "es") == "—"


@pytest.mark.parametrize("sampling", ["srs", "census", "stratified", "two_stage"])
def test_design_text_in_spanish_has_the_english_numbers(sampling):
    info = {"stratified": {"strata": {"large": {"k_h": 10, "M_h": 129, "fraction": 10 / 129},
                                      "small": {"k_h": 10, "M_h": 1171, "fraction": 10 / 1171}}},
            "two_stage": {"M": 1300, "f1": 20 / 1300, "chunks_sampled": 450.0, "chunks_in_population": 12345.0,
                          "f2_min": 0.25, "f2_max": 1.0, "f2_mean": 0.6, "documents_fully_enumerated": 3}}
    a = SimpleNamespace(study=SimpleNamespace(design=SimpleNamespace(sampling=sampling, strata_column="size")),
                        estimates=SimpleNamespace(population_size=20 if sampling == "census" else 1300,
                                                  design=info.get(sampling)),
                        table=SimpleNamespace(K=20))
    en, es = design_text(a, "en"), design_text(a, "es")
    from perdoc.report.build import design_description
    assert en == design_description(a)
    assert not re.search(r"\b(of|documents|sample|drawn|stratum|chunks|whole)\b", es), es
    for number in re.findall(r"\d[\d,]*(?:\.\d+)?%?", en):   # every number of the English text, in Spanish form
        assert i18n.numbers_in(number, "es").replace("\u00a0", "") in es.replace("\u00a0", ""), (number, es)


@pytest.mark.parametrize("with_replacement", [False, True])
def test_design_text_of_a_drawn_sample_in_both_languages(with_replacement):
    """A sample drawn by perdoc sample (design.sample): its design in words in English (as the report's
    design_description) and in Spanish (this used to fail: no Spanish text for the drawn design)."""
    from perdoc.reading.manifest import stage_fractions
    _, kinds = stage_fractions(np.array(["big", "big", "rest", "rest", "rest"]),
                               np.array([1.0, 1.0, 0.2, 0.3, 0.5]), np.array([1, 1, 1, 1, 1]))
    info = {"sampling": "drawn", "design": "pps", "with_replacement": with_replacement, "documents_in_frame": 12345,
            "take": 10, "seed": 7, "strata": {h: {"kind": k, "drawn": 2 if h == "big" else 3} for h, k in kinds.items()}}
    a = SimpleNamespace(study=SimpleNamespace(design=SimpleNamespace(sampling="drawn", strata_column=None)),
                        estimates=SimpleNamespace(population_size=None, design=info), table=SimpleNamespace(K=5))
    en, es = design_text(a, "en"), design_text(a, "es")
    from perdoc.report.build import design_description
    assert en == design_description(a)
    assert "probability proportional to size" in en and "take-all" in en
    assert "probabilidad proporcional al tamaño" in es and "inclusión forzosa" in es
    assert ("con reemplazo" if with_replacement else "sin reemplazo, método de Brewer") in es
    assert "12\u202f345" in es and "semilla 7" in es and "10 fragmentos" in es
    assert not re.search(r"\b(of|documents|drawn|stratum|chunks|whole|probabilit\w+)\b", es), es
    # the checklist of a drawn sample: M from the frame, one extraction per draw, in Spanish throughout
    from perdoc.report.notebook import library_text
    from perdoc.survey import SampleData, design_estimate
    k = 12
    n = np.arange(k) % 5 + 3.0
    s = np.floor(n / 2)
    data = SampleData(doc=np.array([f"d{i}" for i in range(k)]), draw=np.ones(k, int), stratum=np.array(["x"] * k),
                      prob=np.linspace(0.05, 0.2, k), N=n + 3, m=n, s=s, q=s, f=np.zeros(k))
    drawn = design_estimate(data)
    drawn = type(drawn)(**{**drawn.__dict__, "design": {**drawn.design, "documents_in_frame": 400}})
    table = perdoc.DocTable.from_arrays(n=n, s=s, q=s)
    items = by_key(checklist(table, drawn, design={"population": "p", "sampling": es},
                             estimand={**ESTIMAND, "method": "logit_design"},
                             exclusions=(), language="es"))
    assert "M = 400 documentos en el marco, 12 extracciones de documentos" in items["population_design"].value
    i18n.set_language("es")
    try:
        notes = [library_text(x) for x in drawn.notes]
    finally:
        i18n.set_language("en")
    assert "los métodos del muestreo aleatorio simple (CR2, remuestreo, ...) ignoran este diseño y no se muestran" \
        in notes and all(x != y for x, y in zip(notes, drawn.notes))
