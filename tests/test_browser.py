"""The example reports in a real browser, in English and in Spanish: headless Chromium (Debian's,
driven by Playwright) opens report.html offline, nothing reaches the network, no script or console
errors, the summary box is whole in the first screen (1280 x 800), nothing makes a phone-width page
(390 px) scroll sideways (wide tables and charts scroll inside their own box), every chart is drawn
and every contents link lands on its heading.

Skips when /usr/bin/chromium or the ``playwright`` package is missing, saying what to install; under
CI (the environment variable CI set, as `.ci/run` does) it fails instead, so CI never passes by
skipping. Playwright's own browser download is never used.
"""

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")


def _missing(why: str):
    if os.environ.get("CI"):
        pytest.fail(f"the browser test cannot run under CI: {why}", pytrace=False)
    pytest.skip(why, allow_module_level=True)


if not CHROMIUM.exists():
    _missing("Chromium not installed: apt-get install chromium")
try:
    from playwright import sync_api
except ImportError:
    _missing("playwright not importable: pip install playwright (no browser download needed)")

from conftest import shared_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {"en": ROOT / "params" / "example.yaml", "es": ROOT / "params" / "example_es.yaml"}
CONTENTS = {"en": "Contents", "es": "Contenido"}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
FIGURES = "figure.perdoc-figure svg"
SUMMARY = "section.perdoc-summary"
FIRST_SCREEN = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def toc_links(lang: str) -> str:
    return f'#{CONTENTS[lang]} ~ ol a[href^="#"]'


@pytest.fixture(scope="module", autouse=True)
def _one_kernel(shared_kernel):
    """The module's reports share one notebook kernel (tests/conftest.py)."""


@pytest.fixture(scope="module")
def reports():
    """Each language's example report, rendered once for the test run (tests/conftest.py)."""
    return {lang: shared_report(params) for lang, params in EXAMPLES.items()}


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@contextmanager
def opened(browser, html_path, viewport=FIRST_SCREEN):
    """Open ``html_path`` with every non-file:// request aborted; yield (page, findings)."""
    found = {"blocked": [], "console_errors": [], "page_errors": []}
    context = browser.new_context(viewport=dict(viewport))
    try:
        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                found["blocked"].append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.on("console", lambda m: m.type == "error" and found["console_errors"].append(m.text))
        page.on("pageerror", lambda e: found["page_errors"].append(str(e)))
        page.goto(Path(html_path).resolve().as_uri(), wait_until="load")
        yield page, found
    finally:
        context.close()


def figure_problems(page):
    """Per chart: drawn (box > 50 px both ways) and non-empty (some path/rect/text)."""
    problems = []
    svgs = page.locator(FIGURES)
    for i in range(svgs.count()):
        svg = svgs.nth(i)
        box = svg.bounding_box()
        if box is None or box["width"] <= 50 or box["height"] <= 50:
            problems.append(f"figure {i}: not drawn, bounding box {box}")
        if svg.locator("path, rect, text").count() == 0:
            problems.append(f"figure {i}: no path/rect/text elements")
    return problems


def toc_problems(page, lang):
    """Contents links that do not land on a heading: each is followed as a reader would (the page's
    :target afterwards is the element the browser scrolled to) and must be an h1-h3 that ends up at
    the top of the window."""
    problems = []
    links = page.locator(toc_links(lang))
    for i in range(links.count()):
        link = links.nth(i)
        href = link.get_attribute("href")
        page.evaluate("window.scrollTo(0, 0)")
        link.click()
        landed = page.evaluate("""() => { const t = document.querySelector(':target');
            return t ? [t.tagName, Math.round(t.getBoundingClientRect().top)] : null; }""")
        if landed is None:
            problems.append(f"{href}: no target")
        elif landed[0] not in ("H1", "H2", "H3"):
            problems.append(f"{href}: lands on a {landed[0]}, not a heading")
        elif abs(landed[1]) > 5 and page.evaluate(
                "window.scrollY + window.innerHeight < document.scrollingElement.scrollHeight - 1"):
            problems.append(f"{href}: heading not scrolled to the top ({landed[1]} px)")
    return problems


def summary_problems(page):
    """The summary box exists once and lies wholly inside the first screen."""
    boxes = page.locator(SUMMARY)
    if boxes.count() != 1:
        return [f"{boxes.count()} summary boxes"]
    page.evaluate("window.scrollTo(0, 0)")
    b = boxes.first.bounding_box()
    view = page.viewport_size
    if b is None:
        return ["summary box not rendered"]
    if b["x"] < 0 or b["y"] < 0 or b["x"] + b["width"] > view["width"] or b["y"] + b["height"] > view["height"]:
        return [f"summary box {b} not inside the first screen {view}"]
    return []


def overflow_problems(page):
    """The page does not scroll sideways, and every element reaching past the window's width sits
    inside a horizontally scrollable box (overflow-x auto or scroll) that itself fits the window."""
    problems = []
    sw, cw = page.evaluate("[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]")
    if sw > cw:
        problems.append(f"page scrolls sideways: scrollWidth {sw} > clientWidth {cw}")
    problems += page.evaluate("""() => {
        const W = document.documentElement.clientWidth, out = [];
        for (const el of document.querySelectorAll('body *')) {
            const r = el.getBoundingClientRect();
            if (r.width === 0 || (r.right <= W + 0.5 && r.left >= -0.5)) continue;
            let p = el.parentElement, held = false;
            while (p && p !== document.body) {
                const s = getComputedStyle(p), pr = p.getBoundingClientRect();
                if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && pr.right <= W + 0.5 && pr.left >= -0.5) {
                    held = true; break;
                }
                p = p.parentElement;
            }
            const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
            if (!held) out.push(`${name} spans ${Math.round(r.left)}..${Math.round(r.right)} px`);
        }
        return out.slice(0, 10);
    }""")
    return problems


@pytest.mark.parametrize("lang", ["en", "es"])
def test_report_renders_offline_in_chromium(browser, reports, lang):
    report = reports[lang]
    with opened(browser, report) as (page, found):
        assert page.evaluate("document.documentElement.innerText").count(CONTENTS[lang]) >= 1
        assert summary_problems(page) == []

        n_figures = page.locator(FIGURES).count()
        assert n_figures >= 4, f"expected >= 4 charts, found {n_figures}"
        assert figure_problems(page) == []

        assert page.locator(toc_links(lang)).count() >= 6
        assert toc_problems(page, lang) == []

        shot = report.parent / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(data) > 20_000, f"screenshot only {len(data)} bytes"

        assert found["blocked"] == [], "report tried to reach the network"
        assert found["console_errors"] == []
        assert found["page_errors"] == []


@pytest.mark.parametrize("lang", ["en", "es"])
def test_report_fits_a_phone(browser, reports, lang):
    with opened(browser, reports[lang], viewport=PHONE) as (page, found):
        assert overflow_problems(page) == []
        assert figure_problems(page) == []
        assert found["console_errors"] == [] and found["page_errors"] == []


def test_summary_box_speaks_the_report_language(browser, reports):
    """The box reads Spanish in the Spanish report (decimal commas, `[a; b]`) and English in the English one."""
    with opened(browser, reports["en"]) as (page, _):
        en = page.locator(SUMMARY).inner_text()
    with opened(browser, reports["es"]) as (page, _):
        es = page.locator(SUMMARY).inner_text()
    assert "Summary" in en and "Estimate" in en and "95% interval" in en
    es = es.replace("\u00a0", " ")
    assert "Resumen" in es and "Estimación" in es and "Intervalo al 95 %" in es
    import re
    assert re.search(r"\[0\.\d{4}, 0\.\d{4}\]", en) and re.search(r"\[0,\d{4}; 0,\d{4}\]", es)


def test_detectors_fire_on_a_broken_copy(browser, reports, tmp_path):
    """The checks above are not vacuous: a remote script, a broken inline script, an empty chart, a
    dangling contents link, a contents link to something that is not a heading, a summary box pushed
    below the first screen and an element too wide for a phone are each caught."""
    html = reports["en"].read_text(encoding="utf-8")
    for needle in ("</head>", 'href="#Study-design"', 'href="#Estimand"', "<svg", 'class="perdoc-summary"'):
        assert needle in html, needle
    html = html.replace("</head>", '<script src="https://example.com/x.js"></script>\n'
                                   "<script>this is not ( valid javascript;</script>\n</head>", 1)
    first_svg = html.index("<svg", html.index('class="perdoc-figure"'))
    end_svg = html.index("</svg>", first_svg) + len("</svg>")
    html = html[:first_svg] + '<svg width="10" height="10"></svg>' + html[end_svg:]
    html = html.replace('href="#Study-design"', 'href="#No-such-section"', 1)
    html = html.replace('href="#Estimand"', 'href="#not-a-heading"', 1)
    box = html.rindex("<section", 0, html.index('class="perdoc-summary"'))
    html = html[:box] + '<p id="not-a-heading" style="height: 700px">pushed</p>' + html[box:]
    body = html.index(">", html.index("<body")) + 1
    html = html[:body] + '<div style="width: 1500px; height: 4px"></div>' + html[body:]
    broken = tmp_path / "report.html"
    broken.write_text(html, encoding="utf-8")

    with opened(browser, broken) as (page, found):
        assert "https://example.com/x.js" in found["blocked"]
        assert found["console_errors"], found
        assert any("SyntaxError" in e or "Unexpected" in e for e in found["page_errors"]), found
        problems = figure_problems(page)
        assert any(p.startswith("figure 0: not drawn") for p in problems), problems
        assert any(p.startswith("figure 0: no path/rect/text") for p in problems), problems
        assert toc_problems(page, "en") == ["#No-such-section: no target",
                                            "#not-a-heading: lands on a P, not a heading"]
        assert summary_problems(page) and "not inside the first screen" in summary_problems(page)[0]
    with opened(browser, broken, viewport=PHONE) as (page, _):
        problems = overflow_problems(page)
        assert any("scrolls sideways" in p for p in problems), problems
        assert any(p.startswith("div spans") for p in problems), problems
