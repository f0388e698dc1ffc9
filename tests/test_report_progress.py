"""What a report build prints while it works (one line per step and per section, a bar on each
simulation), that printing it changes nothing in the report, and that the kernel started early is
always shut down."""

import io
import re
from pathlib import Path

import numpy as np
import pytest

from perdoc.cli import main
from perdoc.report.build import notebook_dir
from perdoc.progress import Progress
from perdoc.report.kernel import EarlyKernel


def _write_study(folder: Path) -> Path:
    rng = np.random.default_rng(3)
    rows = []
    for d in range(40):
        p = rng.beta(2, 2)
        for _ in range(int(rng.integers(2, 25))):
            a = int(rng.random() < p)
            rows.append(f"d{d:02d},{a},{int(rng.random() < min(1.0, p + 0.1))}\n")
    census = folder / "census.csv"
    census.write_text("doc,a,b\n" + "".join(rows))
    docs = sorted({r.split(",")[0] for r in rows})[:12]
    (folder / "sample.csv").write_text("doc,a,b\n" + "".join(r for r in rows if r.split(",")[0] in docs))
    params = folder / "study.yaml"
    params.write_text("name: progress\ndata: {path: sample.csv, doc: doc, score: a, compare_to: b}\n"
                      "design: {population: forty documents, population_size: 40, sampling: srs}\n"
                      "estimand: {kind: micro, why: every chunk counts once}\n"
                      "intervals: {replicates: 199, seed: 1}\ncensus: {path: census.csv}\n"
                      "simulation: {reps: 40, seed: 1, replicates: 19}\n")
    return params


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The same study built twice, with and without --progress: (stderr of each, report folders)."""
    folder = tmp_path_factory.mktemp("progress")
    params = _write_study(folder)
    out = {}
    for flag in ("--progress", "--no-progress"):
        import contextlib
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert main(["report", str(params), "--out", str(folder / flag.strip("-")), flag]) == 0
        out[flag] = (err.getvalue(), folder / flag.strip("-") / "progress")
    return out


def test_a_line_per_step_and_per_section_in_order(built):
    text, _ = built["--progress"]
    lines = text.splitlines()
    assert all(re.match(r"perdoc: progress \[ *\d+\.\d s\] ", ln) for ln in lines), lines
    steps = [re.sub(r"^perdoc: progress \[ *\d+\.\d s\] ", "", ln) for ln in lines]
    expected = ["reading the data", "estimates and intervals (12 documents)", "comparing the systems", "planning",
                "summary box", "Study design", "Estimand", "Intervals", "Comparing systems",
                "Planning the next sample", "Reporting checklist", "writing the HTML"]
    at = [next(i for i, s in enumerate(steps) if s.startswith(e)) for e in expected]
    assert at == sorted(at), list(zip(expected, at))
    for e in expected:   # each step and section once
        assert sum(s == e or s.startswith(e + " (") for s in steps) == 1, e
    assert steps[-1].startswith("done: ") and steps[-1].endswith("report.html")
    # both simulations show a bar that ends full, with the repetitions counted
    for what in ("simulating the design on the census", "simulating the comparison on the census"):
        bars = [s for s in steps if s.startswith(what)]
        assert bars and bars[-1].endswith("[" + "#" * 30 + "] 40/40"), bars
        assert len(bars) <= 5     # a file, not a terminal: a line at each quarter, not one per block


def test_without_progress_nothing_is_printed_and_the_report_is_the_same(built):
    quiet, folder = built["--no-progress"]
    assert quiet == ""
    _, loud = built["--progress"]
    assert (folder / "report.html").read_bytes() == (loud / "report.html").read_bytes()
    assert (folder / "summary.json").read_bytes() == (loud / "summary.json").read_bytes()


def test_progress_bar_redraws_in_place_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    stream = Tty()
    p = Progress("x", stream)
    bar = p.bar("simulating")
    for done in (10, 20, 30, 40):
        bar(done, 40)
    p.step("next")
    text = stream.getvalue()
    assert text.count("\r") == 4 and text.count("\n") == 2     # the bar's line is ended before the next step
    assert "] 40/40\n" in text and text.rstrip().endswith("next")


def test_section_hook_prints_each_section_once():
    stream = io.StringIO()
    hook = Progress("x", stream).section_hook({"03_intervals": "Intervals"})
    for section in ("03_intervals", "03_intervals", None, "04_other"):
        hook(cell={"metadata": {} if section is None else {"perdoc_section": section}}, cell_index=0)
    steps = [ln.split("] ", 1)[1] for ln in stream.getvalue().splitlines()]
    assert steps == ["Intervals", "04_other"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_early_kernel_is_shut_down_whatever_happens():
    with EarlyKernel(notebook_dir()) as kernel:
        pid = kernel.manager.provisioner.pid
        assert _alive(pid)
    assert not _alive(pid) and kernel.manager is None
    with pytest.raises(RuntimeError), EarlyKernel(notebook_dir()) as kernel:
        pid = kernel.manager.provisioner.pid
        raise RuntimeError("the analysis failed")
    assert not _alive(pid)


@pytest.mark.usefixtures("fast_render")   # the analysis's lines are the point here, not the notebooks'
def test_the_pseudo_population_check_has_a_bar_too(tmp_path):
    """Without a census, the check on a pseudo-population of the study's documents (a simulation of
    1,000 samples) shows a bar like the census simulations."""
    import contextlib
    params = _write_study(tmp_path)
    params.write_text(params.read_text().replace("census: {path: census.csv}\n", "")
                      .replace("simulation: {reps: 40, seed: 1, replicates: 19}\n", ""))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["report", str(params), "--out", str(tmp_path / "out"), "--progress"]) == 0
    bars = [ln.split("] ", 1)[1] for ln in err.getvalue().splitlines()
            if "checking the intervals on a pseudo-population" in ln]
    assert bars and bars[-1].endswith("[" + "#" * 30 + "] 1,000/1,000"), bars
    assert not any("simulating the design on the census" in ln for ln in err.getvalue().splitlines())
