"""Concurrent and interrupted report builds (issue 15).

* One build of a report name at a time per output folder: a second waits for the first (bounded, one
  line), never fails with a misleading "not a folder perdoc wrote" nor writes its error page over the
  first one's report.
* The sweeper decides that a temporary folder is a dead build's by a lock nobody holds, never by a
  pid (a build in a container sharing the folder, or on another host, has pids of its own), and only
  for folders of perdoc's shape whose mark is a regular file.
* SIGTERM or SIGINT during a build removes its temporary folder; the command exits 128 + signum.
* A report refuses inputs that are not regular files (a device, a pipe) instead of copying them until
  the disk is full; a stream read by ``perdoc estimate`` has a declared cap.
* A report name is at most 128 characters: one line, not an ``OSError`` traceback.
"""

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

import perdoc.report.build as rep
from perdoc.cli import main
from perdoc.params import ParamsError, check_name, load_params
from perdoc.report.build import (LOCK_PREFIX, OLD_PREFIX, TMP_MARK, TMP_PREFIX, BuildInterrupted, ReportError,
                           _sweep_stale, build_report, perdoc_folder)

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "fixtures" / "tiny"
PERDOC_SUMMARY = '{"versions": {"perdoc": "0"}}'


def _tiny_params(folder: Path, name="tiny", extra: str = "") -> Path:
    shutil.copy(TINY / "tiny.csv", folder / "tiny.csv")
    text = (TINY / "tiny.yaml").read_text(encoding="utf-8").replace("name: tiny", f"name: {name}")
    p = folder / f"{name}.yaml"
    p.write_text(text + extra, encoding="utf-8")
    return p


def _fast_render(monkeypatch):
    """The notebooks are not what these tests are about: render in no time."""
    monkeypatch.setattr(rep, "render", lambda params_file, analysis, **kw: "<html>fast</html>")


def _fake_report(folder: Path) -> dict:
    """A report folder perdoc may replace; returns its files' bytes to compare later."""
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(PERDOC_SUMMARY)
    (folder / "report.html").write_text("the earlier report")
    return _files(folder)


def _files(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


#: Holds a lock in another process until its standard input closes: flock on a file (the mark of a
#: build folder), or perdoc's own lock of a report name.
_HOLD_FILE = ("import fcntl, os, sys\n"
              "fd = os.open(sys.argv[1], os.O_RDWR)\n"
              "fcntl.flock(fd, fcntl.LOCK_EX)\n"
              "print('held', flush=True)\n"
              "sys.stdin.read()\n")
_HOLD_NAME = ("import sys\n"
              "from pathlib import Path\n"
              "import perdoc.report.build as r\n"
              "with r._name_lock(Path(sys.argv[1]), sys.argv[2]):\n"
              "    print('held', flush=True)\n"
              "    sys.stdin.read()\n")


@contextmanager
def _held(*args):
    code = _HOLD_NAME if len(args) == 2 else _HOLD_FILE
    proc = subprocess.Popen([sys.executable, "-c", code, *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


# ------------------------------------------------------------------------------ one build per name
_PAUSED_BUILD = """
import sys, time
from pathlib import Path
import perdoc.report.build as rep
params, out, flag, go = sys.argv[1:5]

def paused(params_file, analysis, **kw):
    Path(flag).touch()                      # between the check and the move: the race window
    deadline = time.time() + 60
    while not Path(go).exists() and time.time() < deadline:
        time.sleep(0.02)
    return "<html>first</html>"
rep.render = paused
rep.build_report(params, out, notify=lambda line: None)
print("ok", flush=True)
"""


def test_a_second_build_of_the_name_waits_for_the_first(tmp_path, monkeypatch):
    """Before the lock, the second build checked and renamed while the first was between its check
    and its rename: 5 of 300 concurrent builds failed with "not a folder perdoc wrote" (or "holds
    files perdoc did not write") and the loser's error page replaced the winner's report."""
    params = _tiny_params(tmp_path)
    out = tmp_path / "out"
    flag, go = tmp_path / "rendering", tmp_path / "go"
    first = subprocess.Popen([sys.executable, "-c", _PAUSED_BUILD, str(params), str(out), str(flag), str(go)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while not flag.exists() and time.time() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert flag.exists(), first.communicate()[1]
        _fast_render(monkeypatch)
        said = []

        def notify(line):
            said.append(line)
            if line.startswith("waiting"):
                assert not (out / "tiny").exists()      # nothing replaced while the first one builds
                go.touch()                             # let the first one finish
        build_report(params, out, notify=notify)
    finally:
        go.touch()
        stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == 0 and stdout.strip() == "ok", stderr
    assert said and said[0].startswith("waiting for another build of tiny in ")
    assert "(pid " in said[0] and "on host" in said[0]
    # the second build ran after the first: its report is the one standing, complete
    assert sorted(p.name for p in out.iterdir()) == ["tiny"]      # no temporary folder, no lock file
    assert (out / "tiny" / "report.html").read_text() == "<html>fast</html>"
    assert sorted(p.name for p in (out / "tiny").iterdir()) == ["documents.csv", "report.html", "summary.json"]


def test_the_wait_is_bounded_and_the_other_report_untouched(tmp_path, monkeypatch, capsys):
    params = _tiny_params(tmp_path)
    out = tmp_path / "out"
    before = _fake_report(out / "tiny")
    _fast_render(monkeypatch)
    monkeypatch.setenv("PERDOC_LOCK_WAIT", "0.5")
    with _held(out, "tiny"):
        assert main(["report", str(params), "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("perdoc: waiting for another build of tiny")
    assert "another build of tiny is running in" in err[1] and "waited 0.5 s" in err[1]
    assert "(pid " in err[1]
    assert _files(out / "tiny") == before        # no error page over the other build's report
    assert sorted(p.name for p in out.iterdir()) == ["tiny"]


def test_schema_failure_error_page_waits_for_the_lock_too(tmp_path, monkeypatch, capsys):
    params = tmp_path / "broken.yaml"
    params.write_text("name: tiny\ndata: {path: x.csv}\n")
    out = tmp_path / "out"
    before = _fake_report(out / "tiny")
    monkeypatch.setenv("PERDOC_LOCK_WAIT", "0")
    with _held(out, "tiny"):
        assert main(["report", str(params), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "another build of tiny is running" in err and err.count("\n") == 1
    assert _files(out / "tiny") == before


def test_lock_file_that_is_not_perdocs_is_refused_untouched(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("mine")
    lock = out / f"{LOCK_PREFIX}tiny"
    lock.symlink_to(target)
    with pytest.raises(ReportError, match="symbolic link"):
        with rep._name_lock(out, "tiny"):
            pass
    assert lock.is_symlink() and target.read_text() == "mine"
    lock.unlink()
    lock.mkdir()
    with pytest.raises(ReportError, match="it is a folder"):
        with rep._name_lock(out, "tiny"):
            pass
    lock.rmdir()
    lock.write_text("my notes")
    with pytest.raises(ReportError, match="not a lock file perdoc wrote"):
        with rep._name_lock(out, "tiny"):
            pass
    assert lock.read_text() == "my notes"


def test_lock_files_in_the_replace_rule_and_the_sweep(tmp_path):
    out = tmp_path / "out"
    with rep._name_lock(out, "tiny"):
        lock = out / f"{LOCK_PREFIX}tiny"
        assert lock.read_text().startswith("perdoc lock: pid ")
        with rep._name_lock(out, "tiny"):         # re-entrant: the error page under the build's lock
            pass
        assert lock.exists()
        assert _sweep_stale(out) == [] and lock.exists()
    assert not lock.exists()                      # the holder removes it
    # a killed build's lock file left in a report folder (its --out) is perdoc's, not the user's
    report = out / "r"
    _fake_report(report)
    stale = report / f"{LOCK_PREFIX}x"
    stale.write_text("perdoc lock: pid 1 on host h\n")
    assert perdoc_folder(report) is None
    with _held(stale):
        assert "did not write" in perdoc_folder(report)     # while a build holds it: not replaced
    assert _sweep_stale(out) == [] and stale.exists()        # the sweeper leaves lock files alone


# ------------------------------------------------------------------------------ sweeping by lock
def _build_folder(out: Path, name: str, mark_pid: int) -> Path:
    folder = out / f"{TMP_PREFIX}{name}-{mark_pid}-abc123_x"
    folder.mkdir(parents=True)
    (folder / TMP_MARK).write_text(f"{mark_pid}\nsome-host\n")
    (folder / "input").mkdir()
    (folder / "input" / "copy.csv").write_text("a copy of the data")
    return folder


def test_sweep_trusts_a_held_lock_not_a_pid(tmp_path):
    dead = _dead_pid()
    other_namespace = _build_folder(tmp_path, "live", dead)   # its pid means nothing here
    killed = _build_folder(tmp_path, "killed", dead)
    with _held(other_namespace / TMP_MARK):
        removed = _sweep_stale(tmp_path)
        assert removed == [killed] and not killed.exists()
        assert (other_namespace / "input" / "copy.csv").exists()
    assert _sweep_stale(tmp_path) == [other_namespace]       # its build is gone now


def test_sweep_never_trusts_a_mark_that_is_a_link_or_a_folder(tmp_path):
    dead = _dead_pid()
    outside = tmp_path / "outside"
    outside.write_text(f"{dead}\n")
    out = tmp_path / "out"
    linked = _build_folder(out, "linked", dead)
    (linked / TMP_MARK).unlink()
    (linked / TMP_MARK).symlink_to(outside)
    folder_mark = _build_folder(out, "foldermark", dead)
    (folder_mark / TMP_MARK).unlink()
    (folder_mark / TMP_MARK).mkdir()
    (folder_mark / TMP_MARK / "x").write_text(f"{dead}\n")
    unmarked = _build_folder(out, "unmarked", dead)
    (unmarked / TMP_MARK).write_text("not a pid\n")
    odd = out / f"{TMP_PREFIX}no-shape"          # not .perdoc-tmp-<name>-<pid>-<random>
    odd.mkdir()
    (odd / TMP_MARK).write_text(f"{dead}\n")
    assert _sweep_stale(out) == []
    assert all(p.exists() for p in (linked, folder_mark, unmarked, odd))
    assert outside.read_text() == f"{dead}\n"


def test_sweep_of_trash_folders_waits_for_their_names_lock(tmp_path):
    dead = _dead_pid()
    trash = tmp_path / f"{OLD_PREFIX}r-{dead}"
    _fake_report(trash)
    mine = tmp_path / f"{OLD_PREFIX}u-{dead}"
    mine.mkdir()
    (mine / "thesis.tex").write_text("mine")
    with _held(tmp_path, "r"):                  # a build of r is moving its report right now
        assert _sweep_stale(tmp_path) == [] and trash.exists()
    assert _sweep_stale(tmp_path) == [trash]
    assert (mine / "thesis.tex").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name]    # no lock file left behind


def test_a_build_folder_is_locked_for_its_whole_life(tmp_path):
    with rep._build_dir(tmp_path, "tiny") as folder:
        assert (folder / TMP_MARK).is_file()
        assert _sweep_stale(tmp_path) == []
        # another process (another PID namespace, another host) cannot take the lock either
        probe = subprocess.run([sys.executable, "-c", "import fcntl, os, sys\n"
                                "fd = os.open(sys.argv[1], os.O_RDWR)\n"
                                "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
                                "except BlockingIOError:\n    print('held')\n", str(folder / TMP_MARK)],
                               capture_output=True, text=True, timeout=30)
        assert probe.stdout.strip() == "held"
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ signals
def _raise_if_called(signum, frame):
    raise RuntimeError("perdoc left the signal to the caller's handler during its build")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_build_cleans_up(tmp_path, monkeypatch, signum):
    params = _tiny_params(tmp_path)
    out = tmp_path / "out"
    before = _fake_report(out / "tiny")
    seen = {}

    def render(params_file, analysis, **kw):
        seen["build"] = Path(os.environ["PERDOC_CACHE_DIR"]).parent    # the build's temporary folder
        os.kill(os.getpid(), signum)
        time.sleep(10)
        return "<html>never</html>"
    monkeypatch.setattr(rep, "render", render)
    previous = signal.signal(signum, _raise_if_called)
    try:
        with pytest.raises(BuildInterrupted) as caught:
            build_report(params, out, notify=lambda line: None)
        assert signal.getsignal(signum) is _raise_if_called     # the caller's handler is back
    finally:
        signal.signal(signum, previous)
    assert caught.value.signum == signum
    assert not seen["build"].exists()
    assert sorted(p.name for p in out.iterdir()) == ["tiny"]    # no temporary folder, no lock file
    assert _files(out / "tiny") == before                       # the earlier report, untouched


def test_a_signal_during_the_final_move_is_acted_on_after_it(tmp_path, monkeypatch):
    params = _tiny_params(tmp_path)
    out = tmp_path / "out"
    _fake_report(out / "tiny")
    _fast_render(monkeypatch)
    real_replace = os.replace

    def replace(src, dst, **kw):
        if Path(dst).name.startswith(OLD_PREFIX):     # the earlier report is being moved away
            os.kill(os.getpid(), signal.SIGTERM)
        return real_replace(src, dst, **kw)
    monkeypatch.setattr(os, "replace", replace)
    previous = signal.signal(signal.SIGTERM, _raise_if_called)
    try:
        with pytest.raises(BuildInterrupted):
            build_report(params, out, notify=lambda line: None)
    finally:
        signal.signal(signal.SIGTERM, previous)
    # never neither report: the move finished, then the build stopped
    assert sorted(p.name for p in out.iterdir()) == ["tiny"]
    assert (out / "tiny" / "report.html").read_text() == "<html>fast</html>"
    assert json.loads((out / "tiny" / "summary.json").read_text())["K"] == 5


def test_sigterm_mid_build_removes_the_temporary_folder(tmp_path):
    params = _tiny_params(tmp_path)
    out = tmp_path / "out"
    before = _fake_report(out / "tiny")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    perdoc = Path(sys.executable).with_name("perdoc")
    proc = subprocess.Popen([str(perdoc), "report", str(params), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp), "JUPYTER_RUNTIME_DIR": str(tmp)})
    deadline = time.time() + 120
    building = []
    while time.time() < deadline and proc.poll() is None:
        # the kernel has started (its connection file) and the input is copied: both in the build folder
        building = [p for p in out.glob(f"{TMP_PREFIX}*") if (p / "runtime").exists()
                    and any((p / "runtime").iterdir()) and (p / "input").exists()]
        if building:
            break
        time.sleep(0.05)
    assert building, "the build never reached its kernel and its copy of the input"
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.splitlines()[-1] == "perdoc: stopped by SIGTERM: the build's temporary folder was removed"
    assert sorted(p.name for p in out.iterdir()) == ["tiny"]
    assert _files(out / "tiny") == before
    assert list(tmp.iterdir()) == []


# ------------------------------------------------------------------------------ non-regular inputs
def _snapshot_in_time(study, folder: Path, unblock: Path | None = None, seconds: float = 20.0):
    """``_snapshot`` in a thread; an error it raised, or AssertionError when it still copies after
    ``seconds`` (opening a named pipe for writing then ends the copy)."""
    done = {}

    def run():
        try:
            done["value"] = rep._snapshot(study, folder)
        except BaseException as err:  # noqa: BLE001 - handed to the test
            done["error"] = err
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive() and unblock is not None:
        try:
            os.close(os.open(unblock, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        t.join(10)
    return done


@pytest.mark.parametrize("key, yaml, source", [
    ("data.path", "data: {path: SOURCE, doc: doc_id, score: hit}\n", "/dev/null"),
    ("census.path", "data: {path: tiny.csv, doc: doc_id, score: hit}\ncensus: {path: SOURCE}\n", "fifo"),
    ("design.frame", "data: {path: tiny.csv, doc: doc_id, score: hit}\n", "fifo"),
])
def test_a_snapshot_refuses_what_is_not_a_regular_file(tmp_path, key, yaml, source):
    shutil.copy(TINY / "tiny.csv", tmp_path / "tiny.csv")
    if source == "fifo":
        os.mkfifo(tmp_path / "fifo")
    design = ("design: {population: x, sampling: srs" + (", frame: fifo" if key == "design.frame" else "")
              + "}\n")
    params = tmp_path / "p.yaml"
    params.write_text("name: p\n" + yaml.replace("SOURCE", source) + design
                      + "estimand: {kind: macro, why: y}\n")
    study = load_params(params)
    done = _snapshot_in_time(study, tmp_path / "snap", unblock=tmp_path / "fifo" if source == "fifo" else None)
    err = done.get("error")
    assert isinstance(err, ReportError), done
    msg = str(err)
    assert f"key '{key}'" in msg and "regular files only" in msg and "\n" not in msg
    assert ("a named pipe" if source == "fifo" else "a character device") in msg
    copy = tmp_path / "snap" / {"data.path": "data", "census.path": "census", "design.frame": "frame"}[key]
    assert not copy.exists()                      # nothing was copied from it


def test_report_of_a_device_is_one_line(tmp_path, capsys, monkeypatch):
    params = _tiny_params(tmp_path)
    params.write_text(params.read_text().replace("path: tiny.csv", "path: /dev/null"))
    _fast_render(monkeypatch)
    assert main(["report", str(params), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "key 'data.path' names /dev/null, a character device" in err


def test_a_stream_has_a_declared_cap(monkeypatch, capsys):
    rows = "doc,hit\n" + "".join(f"d{i % 50},{i % 2}\n" for i in range(20000))
    monkeypatch.setenv("PERDOC_STREAM_LIMIT", "10K")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(rows.encode())))
    assert main(["estimate", "-", "--format", "csv", "--doc", "doc", "--score", "hit"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "longer than 10,240 bytes" in err and "PERDOC_STREAM_LIMIT" in err
    monkeypatch.setenv("PERDOC_STREAM_LIMIT", "1M")             # under the cap: read as before
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(rows.encode())))
    assert main(["estimate", "-", "--format", "csv", "--doc", "doc", "--score", "hit"]) == 0


# ------------------------------------------------------------------------------ name length
def test_name_length_is_checked(tmp_path, capsys):
    assert check_name("a" * 128) == "a" * 128
    with pytest.raises(ParamsError, match="at most 128 characters"):
        check_name("a" * 129, "--name")
    params = _tiny_params(tmp_path)
    out = tmp_path / "out"
    assert main(["report", str(params), "--name", "a" * 300, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--name must be at most 128 characters" in err
    long = tmp_path / "long.yaml"
    long.write_text(params.read_text().replace("name: tiny", "name: " + "b" * 300))
    assert main(["report", str(long), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "key 'name' must be at most 128 characters" in err
    assert not out.exists() or list(out.iterdir()) == []


def test_duckdb_is_imported_before_the_signal_handlers_are_set():
    # DuckDB's extension aborts the process (status -6, nothing cleaned up) when a signal's exception
    # interrupts its initialisation, so a build imports it before SIGTERM raises
    code = ("import sys, signal\n"
            "from perdoc.report.build import _interruptible, _on_signal\n"
            "assert 'duckdb' not in sys.modules\n"
            "seen = _interruptible(lambda: ('duckdb' in sys.modules, signal.getsignal(signal.SIGTERM) is _on_signal))()\n"
            "print(seen)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "(True, True)"
