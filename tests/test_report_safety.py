"""perdoc report never loses a user's files and never lets user text become live markup.

* It only replaces or deletes folders it wrote itself; anything else is refused, one line, exit 2.
* A params file that does not read writes no folder; one that breaks the schema replaces the
  report of the name it declares with an error page (a stale report never stands for the current).
* Every piece of user text (params and data) is shown as text: no live link, no remote image, no
  script anywhere in a report built from hostile params and data (tests/fixtures/hostile).
* One report, one reading of the data; temporaries of killed builds are swept, and only those.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from perdoc.cli import main
from perdoc.report.build import (ERROR_MARK, OLD_PREFIX, TMP_MARK, TMP_PREFIX, _sweep_stale, build_report,
                           markdown_literal, perdoc_folder)

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "fixtures" / "tiny"
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"


# ------------------------------------------------------------------------------ markup inspection
class _Markup(HTMLParser):
    """Collects every tag and every attribute that could load or link anything."""

    LOADING = {"src", "href", "xlink:href", "srcset", "action", "formaction", "data", "poster",
               "background", "ping", "lowsrc", "dynsrc", "manifest", "codebase", "cite"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.links = []
        self.styles = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k.lower() in self.LOADING:
                self.links.append((tag, k, (v or "").strip()))
            if k.lower() == "style" or k.lower().startswith("on"):
                self.styles.append((tag, k, v or ""))

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        if self.lasttag == "style":
            self.styles.append(("style", "", data))


def assert_inert(html: str) -> None:
    p = _Markup()
    p.feed(html)
    for bad in ("script", "iframe", "object", "embed", "img", "link", "base", "form", "meta-refresh"):
        assert bad not in p.tags, f"<{bad}> in the report"
    for tag, attr, value in p.links:
        low = value.lower().replace("\\", "/")
        assert not low.startswith(("javascript:", "vbscript:", "data:text/html")), (tag, attr, value)
        assert not low.startswith(("http:", "https:", "//", "ftp:", "file:")), (tag, attr, value)
        if tag == "a":
            assert low.startswith("#"), (tag, attr, value)
    for tag, attr, value in p.styles:
        assert not attr.lower().startswith("on"), (tag, attr, value)
        assert "url(http" not in value.replace(" ", "").lower() and "@import" not in value.lower(), value


# ------------------------------------------------------------------------------ injection
@pytest.fixture(scope="module", autouse=True)
def _one_kernel(shared_kernel):
    """The module's in-process reports share one notebook kernel (tests/conftest.py); the build that
    is killed runs in a process of its own, with its own kernel."""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile-reports")
    folder = tmp_path_factory.mktemp("hostile-input")
    # file names with newlines and Markdown reach the report's subtitle
    data_name = "data\n\n[f](javascript:alert(10)) ![i](https:evil.example.png).csv"
    shutil.copy(HOSTILE / "hostile.csv", folder / data_name)
    params = (HOSTILE / "hostile.yaml").read_text(encoding="utf-8").replace("path: hostile.csv",
                                                                            f"path: {json.dumps(data_name)}")
    named = folder / "p\n\n![n](https:evil.example.png) <script>x.yaml"
    named.write_text(params.replace("name: hostile", "name: hostile_names"), encoding="utf-8")
    built = {}
    for pf in (HOSTILE / "hostile.yaml", HOSTILE / "hostile_strata.yaml", named):
        built[pf] = build_report(pf, out)
    return out, built


def test_hostile_reports_hold_no_live_markup(hostile):
    out, built = hostile
    assert sorted(p.name for p in out.iterdir()) == ["hostile", "hostile_names", "hostile_strata"]
    for path in built.values():
        html = path.read_text(encoding="utf-8")
        assert_inert(html)
        assert "Traceback" not in html


def test_hostile_text_is_shown_as_text(hostile):
    out, _ = hostile
    html = (out / "hostile" / "report.html").read_text(encoding="utf-8")
    # the title: its Markdown shown literally in the heading, never parsed
    assert "[x](javascript:alert(1)) ![p](https://evil.example/pixel.png) &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(6)&lt;/script&gt;" in html           # population
    assert "[why](javascript:alert(7))" in html                       # estimand.why
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html           # a document id
    names = (out / "hostile_names" / "report.html").read_text(encoding="utf-8")
    assert "[f](javascript:alert(10))" in names                        # the data file's name, as text


def test_markdown_literal_is_inert():
    text = "a\n\n[x](javascript:alert(1)) ![p](https://h/p.png) <b>*em*</b> `c` # h"
    lit = markdown_literal(text)
    assert "\n" not in lit
    import re
    assert re.fullmatch(r"(?:[A-Za-z0-9 ]|&#\d+;)*", lit)
    import html as _html
    assert _html.unescape(lit) == " ".join(text.split())


def test_documents_csv_cells_cannot_run_as_formulas(hostile):
    import csv
    out, _ = hostile
    with open(out / "hostile" / "documents.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    ids = [r[0] for r in rows[1:]]
    assert len(ids) == 12
    assert not [i for i in ids if i[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'=HYPERLINK(\"https://evil.example/x\",\"click\")" in ids and "'@SUM(1)" in ids
    s = json.loads((out / "hostile" / "summary.json").read_text(encoding="utf-8"))
    assert s["K"] == 12


def test_summary_json_keeps_exact_text(hostile):
    out, _ = hostile
    s = json.loads((out / "hostile" / "summary.json").read_text(encoding="utf-8"))
    assert s["params"]["title"].startswith("A title\n\n[x](javascript:alert(1))")


# ------------------------------------------------------------------------------ data loss
def _tiny_params(folder: Path, name="tiny", **over) -> Path:
    shutil.copy(TINY / "tiny.csv", folder / "tiny.csv")
    text = (TINY / "tiny.yaml").read_text(encoding="utf-8").replace("name: tiny", f"name: {name}")
    for k, v in over.items():
        text = text.replace(k, v)
    p = folder / f"{name}.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def test_a_folder_passed_as_params_deletes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "results.csv").write_text("doc,hit\na,1\n")
    before = _tree(tmp_path)
    assert main(["report", "data", "--out", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "directory" in err and "Traceback" not in err
    assert _tree(tmp_path) == before


def test_unreadable_params_writes_no_folder_and_keeps_user_files(tmp_path, capsys):
    out = tmp_path / "reports"
    (out / "typo").mkdir(parents=True)
    (out / "typo" / "analysis.xlsx").write_bytes(b"precious")
    before = _tree(tmp_path)
    assert main(["report", str(tmp_path / "typo.yml"), "--out", str(out)]) == 2        # missing file
    (tmp_path / "typo.yml").write_text("name: typo\ndata: [unclosed\n")                  # not YAML
    before = _tree(tmp_path)
    assert main(["report", str(tmp_path / "typo.yml"), "--out", str(out)]) == 2
    assert _tree(tmp_path) == before
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.usefixtures("fast_render")   # about files and folders, not the notebooks
def test_foreign_folder_under_the_name_is_refused_untouched(tmp_path, capsys):
    params = _tiny_params(tmp_path)
    other = _tiny_params(tmp_path, name="other")
    out = tmp_path / "reports"
    (out / "tiny").mkdir(parents=True)
    (out / "tiny" / "analysis.xlsx").write_bytes(b"precious")
    (out / "tiny" / "report.html").write_text("mine")
    before = _tree(out / "tiny")
    assert main(["report", str(params), str(other), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "refusing to replace" in err and "analysis.xlsx" in err and err.count("\n") == 1
    assert _tree(out / "tiny") == before
    assert (out / "other" / "summary.json").exists()          # the rest of the batch still renders


@pytest.mark.usefixtures("fast_render")   # about files and folders, not the notebooks
def test_schema_failure_replaces_the_stale_report_of_its_name(tmp_path, capsys):
    params = _tiny_params(tmp_path, name="study")
    out = tmp_path / "reports"
    assert main(["report", str(params), "--out", str(out)]) == 0
    assert (out / "study" / "summary.json").exists()
    # the same study, now with a broken key: the old good report must not stay standing
    params.write_text(params.read_text().replace("level: 0.9", "level: 1.9"))
    renamed = tmp_path / "renamed.yaml"
    params.rename(renamed)
    capsys.readouterr()
    assert main(["report", str(renamed), "--out", str(out)]) == 2
    assert "intervals.level" in capsys.readouterr().err
    assert sorted(p.name for p in (out / "study").iterdir()) == ["error.txt", "report.html"]
    assert (out / "study" / "error.txt").read_text().splitlines()[0] == ERROR_MARK
    assert "Report failed" in (out / "study" / "report.html").read_text()
    assert not (out / "renamed").exists()
    # and the next good run replaces the error page (perdoc wrote it)
    renamed.write_text(renamed.read_text().replace("level: 1.9", "level: 0.9"))
    assert main(["report", str(renamed), "--out", str(out)]) == 0
    assert (out / "study" / "summary.json").exists() and not (out / "study" / "error.txt").exists()


@pytest.mark.usefixtures("fast_render")   # about files and folders, not the notebooks
def test_dotted_params_names_do_not_crash_the_batch(tmp_path, capsys):
    good = _tiny_params(tmp_path, name="good")
    out = tmp_path / "reports"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    dots = tmp_path / "..yaml"
    dots.write_text("not: [valid")
    three = tmp_path / "...yaml"
    three.write_text((tmp_path / "good.yaml").read_text().replace("name: good", "name: dots"))
    code = main(["report", str(dots), str(three), str(good), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert (out / "keep.txt").read_text() == "mine"
    assert (out / "dots" / "summary.json").exists() and (out / "good" / "summary.json").exists()


def test_out_that_is_a_file(tmp_path, capsys):
    params = _tiny_params(tmp_path)
    target = tmp_path / "out.txt"
    target.write_text("mine")
    assert main(["report", str(params), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not a folder" in err and err.count("\n") == 1
    assert target.read_text() == "mine"


def test_out_not_writable(tmp_path, capsys, monkeypatch):
    params = _tiny_params(tmp_path)
    other = _tiny_params(tmp_path, name="other")
    out = tmp_path / "ro"
    out.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == out else real_access(p, mode, **kw))
    assert main(["report", str(params), str(other), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "not writable" in err
    assert list(out.iterdir()) == []


def test_write_failure_is_one_line(tmp_path, capsys, monkeypatch):
    params = _tiny_params(tmp_path)
    import tempfile

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    assert main(["report", str(params), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "Permission denied" in err and err.count("\n") == 1


def test_perdoc_folder_rules(tmp_path):
    f = tmp_path / "r"
    assert perdoc_folder(f) is None                       # missing
    f.mkdir()
    assert perdoc_folder(f) is None                       # empty
    (f / "report.html").write_text("x")
    assert "does not hold a perdoc report" in perdoc_folder(f)
    (f / "summary.json").write_text('{"versions": {"perdoc": "1"}}')
    assert perdoc_folder(f) is None
    (f / "notes.md").write_text("mine")
    assert "notes.md" in perdoc_folder(f)
    (f / "notes.md").unlink()
    (f / "documents.csv").mkdir()                          # a folder where perdoc writes a file
    assert perdoc_folder(f) is not None
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert perdoc_folder(link) is not None


# ------------------------------------------------------------------------------ one snapshot
def test_data_replaced_while_rendering(tmp_path, monkeypatch):
    import perdoc.report.build as rep
    data = tmp_path / "d.csv"
    data.write_text("doc,hit\n" + "".join(f"d{i},{int(i < 5)}\n" for i in range(16)))   # micro 0.3125
    params = tmp_path / "snap.yaml"
    params.write_text("name: snap\ndata: {path: d.csv, doc: doc, score: hit}\ndesign: {population: x}\n"
                      "estimand: {kind: micro, why: y}\nintervals: {replicates: 0}\n")
    original = data.read_bytes()
    real_render = rep.render

    def swap_then_render(*a, **k):
        data.write_text("doc,hit\n" + "".join(f"d{i},{int(i < 15)}\n" for i in range(16)))  # 0.9375
        return real_render(*a, **k)
    monkeypatch.setattr(rep, "render", swap_then_render)
    html = build_report(params, tmp_path / "out").read_text()
    s = json.loads((tmp_path / "out" / "snap" / "summary.json").read_text())
    assert s["micro"]["estimate"] == 0.3125
    assert s["input"]["sha256"] == hashlib.sha256(original).hexdigest()
    assert "micro R = 0.312" in html and "0.938" not in html and "0.9375" not in html


# ------------------------------------------------------------------------------ stale temporaries
def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_sweep_removes_only_perdoc_temporaries_of_dead_builds(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / f"{TMP_PREFIX}x-{dead}-abc"
    stale.mkdir()
    (stale / TMP_MARK).write_text(f"{dead}\n")
    (stale / "cache").mkdir()
    alive = tmp_path / f"{TMP_PREFIX}y-{os.getppid()}-abc"
    alive.mkdir()
    (alive / TMP_MARK).write_text(f"{os.getppid()}\n")
    unmarked = tmp_path / f"{TMP_PREFIX}z"
    unmarked.mkdir()
    old = tmp_path / f"{OLD_PREFIX}r-{dead}"
    old.mkdir()
    (old / "summary.json").write_text('{"versions": {"perdoc": "1"}}')
    foreign_old = tmp_path / f"{OLD_PREFIX}u-{dead}"
    foreign_old.mkdir()
    (foreign_old / "thesis.tex").write_text("mine")
    user = tmp_path / ".tmp-user-1"
    user.mkdir()
    import fcntl
    held = os.open(alive / TMP_MARK, os.O_RDWR)     # a live build holds its mark's lock (the pid is not trusted)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        removed = _sweep_stale(tmp_path)
    finally:
        os.close(held)
    assert sorted(p.name for p in removed) == sorted([stale.name, old.name])
    assert not stale.exists() and not old.exists()
    assert alive.exists() and unmarked.exists() and foreign_old.exists() and user.exists()


def test_killed_build_is_swept_by_the_next(tmp_path, monkeypatch):
    params = _tiny_params(tmp_path)
    out = tmp_path / "out"
    tmp = tmp_path / "tmp"           # the process's own temporary folder: must stay clean
    tmp.mkdir()
    perdoc = Path(sys.executable).with_name("perdoc")
    proc = subprocess.Popen([str(perdoc), "report", str(params), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(tmp), "JUPYTER_RUNTIME_DIR": str(tmp)})
    deadline = time.time() + 120
    leftovers = []
    while time.time() < deadline and proc.poll() is None:
        leftovers = [p for p in out.glob(f"{TMP_PREFIX}*") if (p / "runtime").exists()
                     and any((p / "runtime").iterdir())]
        if leftovers:
            break
        time.sleep(0.05)
    assert leftovers, "the build never reached its kernel"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.0)
    assert [p for p in out.glob(f"{TMP_PREFIX}*")], "nothing left behind to sweep"
    assert list(tmp.iterdir()) == []            # the kernel's connection file lived in the build folder
    import perdoc.report.build as rep            # the next build (in this process) need not run the notebooks
    monkeypatch.setattr(rep, "render", lambda params_file, analysis, **kw: "<html>fast</html>")
    assert main(["report", str(params), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["tiny"]
