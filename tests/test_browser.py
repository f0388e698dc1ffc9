"""The example report in a real browser: headless Chromium (Debian's, driven by Playwright) opens
report.html offline, nothing reaches the network, no script errors, every chart is drawn and the
contents links land somewhere.

Skips when /usr/bin/chromium or the ``playwright`` package is missing; Playwright's own browser
download is never used.
"""

from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Chromium not installed: apt-get install chromium", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright not importable: pip install playwright (no browser download needed)")

from perdoc.report import build_report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "params" / "example.yaml"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
FIGURES = "figure.perdoc-figure svg"
TOC_LINKS = '#Contents ~ ol a[href^="#"]'


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    return build_report(EXAMPLE, out)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@contextmanager
def opened(browser, html_path):
    """Open ``html_path`` with every non-file:// request aborted; yield (page, findings)."""
    found = {"blocked": [], "console_errors": [], "page_errors": []}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
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


def toc_problems(page):
    """Contents links whose target id does not exist."""
    targets = page.locator(TOC_LINKS).evaluate_all(
        "links => links.map(a => [a.getAttribute('href'),"
        " !!document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1)))])")
    return [href for href, ok in targets if not ok]


def test_report_renders_offline_in_chromium(browser, report):
    with opened(browser, report) as (page, found):
        assert found["blocked"] == [], "report tried to reach the network"
        assert found["console_errors"] == []
        assert found["page_errors"] == []

        n_figures = page.locator(FIGURES).count()
        assert n_figures >= 4, f"expected >= 4 charts, found {n_figures}"
        assert figure_problems(page) == []

        assert page.locator(TOC_LINKS).count() >= 6
        assert toc_problems(page) == []

        shot = report.parent / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(data) > 20_000, f"screenshot only {len(data)} bytes"


def test_detectors_fire_on_a_broken_copy(browser, report, tmp_path):
    """The checks above are not vacuous: a remote script, a broken inline script, an empty chart and
    a dangling contents link in a copy of the report are each caught."""
    html = report.read_text(encoding="utf-8")
    assert "</head>" in html and 'href="#Study-design"' in html and "<svg" in html
    html = html.replace("</head>", '<script src="https://example.com/x.js"></script>\n'
                                   "<script>this is not ( valid javascript;</script>\n</head>", 1)
    first_svg = html.index("<svg", html.index('class="perdoc-figure"'))
    end_svg = html.index("</svg>", first_svg) + len("</svg>")
    html = html[:first_svg] + '<svg width="10" height="10"></svg>' + html[end_svg:]
    html = html.replace('href="#Study-design"', 'href="#No-such-section"', 1)
    broken = tmp_path / "report.html"
    broken.write_text(html, encoding="utf-8")

    with opened(browser, broken) as (page, found):
        assert "https://example.com/x.js" in found["blocked"]
        assert found["console_errors"], found
        assert any("SyntaxError" in e or "Unexpected" in e for e in found["page_errors"]), found
        problems = figure_problems(page)
        assert any(p.startswith("figure 0: not drawn") for p in problems), problems
        assert any(p.startswith("figure 0: no path/rect/text") for p in problems), problems
        assert toc_problems(page) == ["#No-such-section"]
