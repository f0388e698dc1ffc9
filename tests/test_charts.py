"""Report charts: they build for small and large K, render offline to deterministic SVG, keep titles
and axis titles, and never turn a document id into markup."""

import re

import numpy as np
import pytest

import perdoc
from perdoc import charts
from perdoc.charts import Chart

EVIL = "<script>alert(1)</script>"


def _table(K, seed=0, evil=True):
    rng = np.random.default_rng(seed)
    n = np.maximum(1, np.round(rng.lognormal(3.0, 1.0, K)))
    s = rng.binomial(n.astype(int), rng.beta(1, 3, K)).astype(float)
    doc = np.array([f"doc-{i:06d}" for i in range(K)], dtype=object)
    if evil:
        big = int(np.argmax(n))  # the largest document: its id is drawn as a label
        doc[big] = EVIL
    return perdoc.DocTable.from_arrays(n=n, s=s, q=s.copy(), doc=doc)


@pytest.fixture(scope="module")
def small():
    t = _table(20)
    return t, perdoc.estimate(t, replicates=199, seed=1)


@pytest.fixture(scope="module")
def large():
    t = _table(20_000, seed=3)
    return t, perdoc.estimate(t, replicates=199, seed=1)


def _all(t, e):
    return [charts.size_distribution(t), charts.rate_vs_size(t, e), charts.interval_comparison(e),
            charts.bootstrap_distribution(e, "micro"), charts.bootstrap_distribution(e, "macro")]


def _datasets(chart):
    return chart.chart.to_dict()["datasets"]


@pytest.fixture(scope="module")
def small_svgs(small):
    return [(c, charts.to_svg(c)) for c in _all(*small)]


def test_builders_return_charts_with_title_and_caption(small):
    for c in _all(*small):
        assert isinstance(c, Chart)
        assert c.title and c.caption and "\n" not in c.caption
        spec = c.chart.to_dict()
        assert spec["title"] == c.title


def test_large_K_builds_without_max_rows_error(large):
    t, e = large
    for c in _all(t, e):
        spec = c.chart.to_dict()  # raises MaxRowsError above 5,000 rows
        assert all(len(rows) <= charts.MAX_ROWS for rows in spec["datasets"].values())
    svg = charts.to_svg(charts.rate_vs_size(t, e))
    assert svg.startswith("<svg")


def test_caption_contents(small):
    t, e = small
    k_half = int(np.searchsorted(np.cumsum(np.sort(t.n)[::-1]), t.N / 2) + 1)
    assert f"the {k_half} largest documents" in charts.size_distribution(t).caption
    cap = charts.bootstrap_distribution(e).caption
    assert "199 replicates" in cap and "degenerate" in cap and "bootstrap-t 95% interval" in cap


def test_svg_is_deterministic_and_ids_are_fixed(small, small_svgs):
    for c, svg in small_svgs:
        assert charts.to_svg(c) == svg
        assert c.to_svg() == svg
    # a clipped mark makes Vega number clip paths with a process-wide counter; ids are renamed
    c = charts.interval_comparison(small[1])
    a, b = charts.to_svg(c), charts.to_svg(c)
    assert a == b
    ids = re.findall(r'\bid="([^"]+)"', a)
    assert all(i.startswith("pd") for i in ids)


def test_clip_ids_renamed():
    import altair as alt
    import pandas as pd
    ch = alt.Chart(pd.DataFrame({"x": [1, 2, 3], "y": [1, 3, 2]})).mark_line(clip=True).encode(
        x=alt.X("x", scale=alt.Scale(domain=[1.5, 2.5])), y="y")
    a, b = charts.to_svg(ch), charts.to_svg(ch)
    assert a == b
    (cid,) = set(re.findall(r'\bid="([^"]+)"', a))
    assert f'clip-path="url(#{cid})"' in a


def test_svg_is_offline(small_svgs):
    for _, svg in small_svgs:
        assert not re.search(r'\b(?:src|href|xlink:href)\s*=\s*"\s*(?:https?:)?//', svg)
        assert "<script" not in svg.lower()
        assert "<image" not in svg and "<foreignObject" not in svg


def test_titles_and_axis_titles_in_svg(small_svgs):
    expected_axes = [
        ["per document, n_d (log scale)", "Documents"],
        ["per document, n_d (log scale)", "Document rate, r_d = s_d / n_d"],
        ["Estimate and 95% interval"],
        ["Replicate micro mean R", "Replicates"],
        ["Replicate macro mean", "Replicates"],
    ]
    for (c, svg), axes in zip(small_svgs, expected_axes):
        assert c.title in svg
        for a in axes:
            assert a in svg


def test_document_id_is_escaped(small, small_svgs):
    t, _ = small
    rate_svg = small_svgs[1][1]
    assert EVIL not in rate_svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rate_svg  # shown, as text
    for _, svg in small_svgs:
        assert "<script" not in svg


def test_interval_comparison_marks_baselines_and_missing_intervals():
    # q absent and non-binary scores: the Wald baselines have no interval and give a reason
    t = perdoc.DocTable.from_arrays(n=[3, 5, 8, 13, 2], s=[0.5, 2.5, 1.2, 9.0, -0.3])
    e = perdoc.estimate(t, replicates=0)
    c = charts.interval_comparison(e)
    rows = [r for d in _datasets(c).values() for r in d]
    notes = {r["method"]: r["note"] for r in rows if r.get("note")}
    assert notes["wald_iid"].startswith("no interval: needs the sums of squared scores")
    svg = charts.to_svg(c)
    assert "no interval: needs the sums of squared scores" in svg

    t2 = _table(20, evil=False)
    c2 = charts.interval_comparison(perdoc.estimate(t2, replicates=199, seed=1))
    svg2 = charts.to_svg(c2)
    assert svg2.count(charts.BASELINE_TEXT) >= 2  # both Wald baselines labelled
    assert "#d1495b" in svg2  # warning colour


def test_bootstrap_distribution_none_without_bootstrap(small):
    t, _ = small
    assert charts.bootstrap_distribution(perdoc.estimate(t, replicates=0)) is None
    with pytest.raises(ValueError):
        charts.bootstrap_distribution(small[1], "median")


def test_flat_rates_do_not_break_charts():
    t = perdoc.DocTable.from_arrays(n=[4, 4, 4, 4], s=[2, 2, 2, 2])
    e = perdoc.estimate(t, replicates=50, seed=1)
    for c in _all(t, e):
        assert charts.to_svg(c).startswith("<svg")
    assert "no interval: zero variance" in charts.to_svg(charts.interval_comparison(e))


# ------------------------------------------------------------------ language, counts, labels, clipping
from perdoc import i18n  # noqa: E402


@pytest.fixture
def spanish():
    i18n.set_language("es")
    yield
    i18n.set_language("en")


def _texts(svg):
    import html
    return [html.unescape(t) for t in re.findall(r"<text\b[^>]*(?<!/)>(.*?)</text>", svg, re.S)]


def test_effective_n_wald_is_labelled_n_over_deff_not_chunks(small):
    rows = {r["method"]: r for d in _datasets(charts.interval_comparison(small[1])).values() for r in d}
    assert rows["wald_iid"]["note"] == "baseline: chunks as cases"
    assert rows["wald_eff_n"]["note"] == "baseline: N/DEFF as cases"
    assert "chunks" not in rows["wald_eff_n"]["label"] and "chunks" not in rows["wald_eff_n"]["note"]
    texts = _texts(charts.to_svg(charts.interval_comparison(small[1])))
    assert sum("chunks as cases" in t for t in texts) == 2     # the iid Wald's label and note only


def test_counts_have_whole_number_ticks():
    # three documents and a few replicates: without tickMinStep Vega would tick 0.5, 1.5, ...
    t = perdoc.DocTable.from_arrays(n=[2, 3, 40], s=[1, 2, 9])
    e = perdoc.estimate(t, replicates=7, seed=1)
    for c, axis in ((charts.size_distribution(t), "y"), (charts.bootstrap_distribution(e, "micro"), "y")):
        spec = c.chart.to_dict()
        enc = (spec.get("layer") or [spec])[0]["encoding"][axis]
        assert enc["axis"]["format"] == "d" and enc["axis"]["tickMinStep"] == 1
    svg = charts.to_svg(charts.size_distribution(t))     # both axes hold whole numbers (counts, log sizes)
    counts = [x for x in _texts(svg) if re.fullmatch(r"[\d.,]+", x)]
    assert counts and not [x for x in counts if re.search(r"\d[.,]\d", x)]


def test_no_label_is_cut(small):
    """Axis labels, legends and notes are never shortened with an ellipsis, in either language."""
    t, e = small
    census = perdoc.DocTable.from_arrays(n=t.n, s=t.s)
    from perdoc.plan import curve, spread
    S = spread(census, "micro")
    extra = [charts.planning_curve({"M = 1,300 (with the correction)": curve(S, population_size=1300, sizes=t.n),
                                    "without the correction": curve(S, sizes=t.n)}, target=0.05, current_k=20,
                                   realised=0.2)]
    for lang in ("en", "es"):
        i18n.set_language(lang)
        try:
            for c in _all(t, e)[2:] + extra:
                svg = charts.to_svg(c)
                assert not [x for x in _texts(svg) if "\u2026" in x], (lang, c.title)
                width = float(re.search(r'<svg[^>]*\bwidth="([\d.]+)"', svg).group(1))
                assert width <= 900, (lang, c.title, width)      # fits the report's 62rem column
        finally:
            i18n.set_language("en")


def test_spanish_charts(small, spanish):
    t, e = small
    built = _all(t, e)
    svgs = [charts.to_svg(c) for c in built]
    assert svgs == [charts.to_svg(c) for c in _all(t, e)]        # byte-identical on rerun
    expected = [["Documentos", "(escala logarítmica)"], ["Tasa del documento"],
                ["Estimación e intervalo de confianza al 95\u00a0%"], ["Réplicas"], ["Réplicas"]]
    for c, svg, axes in zip(built, svgs, expected):
        assert c.title in svg and "\n" not in c.caption
        for a in axes:
            assert a in svg, a
        texts = _texts(svg)
        assert not [x for x in texts if re.search(r"\d\.\d", x)], c.title           # no decimal point
        assert not re.search(r"\d\.\d", c.caption.replace("r\u0304", "")), c.caption
    ticks = [x for svg in svgs for x in _texts(svg) if re.fullmatch(r"-?\d+,\d+", x)]
    assert ticks                                                                   # decimal comma ticks
    assert "referencia: N/DEFF como casos" in svgs[2] and "referencia: fragmentos como casos" in svgs[2]
    i18n.set_language("en")
    assert charts.to_svg(charts.interval_comparison(e)) != svgs[2]


def test_every_builder_gives_a_valid_vega_lite_spec(small):
    """to_svg renders without validating (it is a third of a report's chart time), so every chart the
    report draws is validated against the Vega-Lite schema here, each builder at least once."""
    import pandas as pd

    from perdoc.plan import curve, spread
    from perdoc.reading.io import load_pairs
    from perdoc.study.simulate import simulate
    t, e = small
    rng = np.random.default_rng(4)
    census = perdoc.DocTable.from_arrays(n=t.n, s=t.s)
    frame = simulate(census, k=8, reps=30, seed=1, replicates=19).to_frame()
    S = spread(census, "micro")
    rows = pd.DataFrame([(f"d{d}", x, y, z) for d in range(12) for x, y, z in rng.random((5, 3)) > 0.5],
                        columns=["doc", "x", "y", "z"]).astype({"x": float, "y": float, "z": float})
    pairs = load_pairs(rows, doc="doc", a="x", b="y")
    built = _all(t, e) + [
        charts.paired_differences(pairs, perdoc.compare(pairs, replicates=0)),
        charts.planning_curve({"without the correction": curve(S, sizes=t.n)}, target=0.05, current_k=20),
        charts.coverage_chart(frame, level=0.95),
        charts.leaderboard_chart(perdoc.compare_many(rows, ["x", "y", "z"], doc="doc", replicates=0, seed=1)),
    ]
    for c in built:
        c.chart.to_dict(validate=True)           # raises on a spec the schema refuses
    with pytest.raises(Exception):               # and validation is on: a broken spec is refused
        charts.interval_comparison(e).chart.properties(width="wide").to_dict(validate=True)
