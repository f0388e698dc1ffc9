import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from perdoc import DocTable
from perdoc._imports import skip_slow_optional

# as perdoc's command line and report kernel do (perdoc._imports): every worker imports the test
# modules, Altair among them, and jsonschema's optional IRI checker costs 2 s of that import
skip_slow_optional()


def make_table(K=20, seed=0, binary=True, size_mean=3.0, size_sigma=1.0):
    rng = np.random.default_rng(seed)
    n = np.maximum(1, np.round(rng.lognormal(size_mean, size_sigma, K))).astype(float)
    p = rng.beta(1, 3, K)
    if binary:
        s = rng.binomial(n.astype(int), p).astype(float)
        q = s.copy()
    else:
        s = np.zeros(K)
        q = np.zeros(K)
        for d in range(K):
            y = rng.beta(2, 5, int(n[d])) * p[d] * 2
            s[d], q[d] = y.sum(), (y * y).sum()
    return DocTable.from_arrays(n=n, s=s, q=q)


@pytest.fixture
def table():
    return make_table()


@pytest.fixture
def fast_render(monkeypatch):
    """Builds whose notebooks are not what the test is about: the render step returns at once
    (everything else of a build, its files, locks, error pages and moves, runs as it is)."""
    import perdoc.report.build as rep
    monkeypatch.setattr(rep, "render", lambda params_file, analysis, **kw: "<html>fast</html>")


@pytest.fixture
def english_after():
    """The report's language back to English after a test that changes it."""
    yield
    from perdoc.report import i18n
    i18n.set_language("en")


@pytest.fixture(scope="module")
def example():
    """The analysis of params/example.yaml (its simulations come from the run's store)."""
    from pathlib import Path

    from perdoc.report import analyse
    return analyse(Path(__file__).resolve().parents[1] / "params" / "example.yaml")


def pytest_configure(config):
    """One store of simulation results for the whole run (perdoc.study.memo), shared by the parallel
    workers (they inherit the environment): the example's census simulation, which a dozen tests
    render, is computed once. Results are keyed by their inputs and perdoc's source, so a hit is the
    same object a computation gives; a run that sets PERDOC_MEMO_DIR itself keeps its own. Also one
    folder of this run's shared reports (:func:`shared_report`), always new."""
    if hasattr(config, "workerinput"):
        return
    # the Spark tests' JVMs (a local session, a Spark Connect server) on small data: the quick
    # compiler only and one garbage-collector thread start them sooner and leave the other worker its
    # core (test_engines.py alone: 66 s -> 50 s); the same results, as compilation changes no semantics
    os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    shared = tempfile.mkdtemp(prefix="perdoc-test-reports-")
    os.environ["PERDOC_TEST_REPORTS"] = shared
    config._perdoc_shared = shared
    if os.environ.get("PERDOC_MEMO_DIR"):
        return
    folder = tempfile.mkdtemp(prefix="perdoc-test-memo-")
    os.environ["PERDOC_MEMO_DIR"] = folder
    config._perdoc_memo = folder


def pytest_unconfigure(config):
    for name in ("_perdoc_memo", "_perdoc_shared"):
        folder = getattr(config, name, None)
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def shared_report(params, language: str | None = None) -> Path:
    """``report.html`` of ``params`` (``language``: as ``build_report``'s, None for the file's own, an
    override otherwise, which the report records), rendered once for the whole test run and read by
    every test module that only reads it (a report is byte-identical for the same parameters, so one
    render stands for all). The first worker to ask renders it under a lock; the others wait and read.
    Tests must not change the files; modules that check how a build behaves render their own."""
    import fcntl
    root = Path(os.environ["PERDOC_TEST_REPORTS"]) / f"{Path(params).stem}-{language or 'own'}"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / ".done"
        if done.exists():
            return Path(done.read_text(encoding="utf-8"))
        from perdoc.report import build_report, i18n
        try:
            path = build_report(params, root / "out", language=language)
        finally:
            i18n.set_language("en")
        done.write_text(str(path), encoding="utf-8")
        return path


@pytest.fixture(scope="module")
def shared_kernel(tmp_path_factory):
    """One notebook kernel for every report a test module renders in this process.

    A build starts a kernel of its own (:class:`perdoc.report.kernel.EarlyKernel`); its start-up
    (a Python process importing pandas, altair, perdoc and the chart renderer) is most of what a
    report costs the tests beyond its analysis. Modules that render several reports use this fixture:
    the builds get one kernel, made as a fresh one would be before each build -- its namespace
    emptied, its working folder the build's, and its environment this process's as it is at that
    moment (the build's cache, runtime and temporary folders), which is what a new kernel inherits.
    Tests about the kernel itself (progress, interruption, shutdown) do not use it."""
    import json
    from perdoc.report import kernel as kernel_module
    from perdoc.report.build import notebook_dir
    runtime = tmp_path_factory.mktemp("shared-kernel")
    patch = pytest.MonkeyPatch()
    with patch.context() as start:   # its connection file outside every build folder
        start.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
        real = kernel_module.EarlyKernel(notebook_dir()).__enter__()
    from jupyter_client import BlockingKernelClient
    client = BlockingKernelClient()
    client.load_connection_info(real.manager.get_connection_info())
    # this client is not the manager's, so it judges the kernel alive by its heartbeat: a kernel still
    # starting on a loaded machine can miss the default 1 s and be taken for dead
    client.hb_channel.time_to_dead = 10.0
    client.start_channels()
    client.wait_for_ready(timeout=120)

    class SharedKernel:
        def __init__(self, cwd, kernel_name="python3"):
            self.cwd = Path(cwd)
            self.manager = real.manager

        def __enter__(self):
            code = ("get_ipython().run_line_magic('reset', '-f')\n"
                    "import json as _json, os as _os, tempfile as _tempfile\n"
                    f"_os.environ.clear(); _os.environ.update(_json.loads({json.dumps(json.dumps(dict(os.environ)))}))\n"
                    f"_tempfile.tempdir = None; _os.chdir({str(self.cwd)!r})\n"
                    "del _json, _os, _tempfile\n")
            reply = client.execute_interactive(code, store_history=False, timeout=60,
                                               output_hook=lambda msg: None)
            assert reply["content"]["status"] == "ok", reply["content"]
            return self

        def __exit__(self, *exc):
            return False

        def close(self):
            pass

    patch.setattr(kernel_module, "EarlyKernel", SharedKernel)
    try:
        yield real
    finally:
        patch.undo()
        client.stop_channels()
        real.close()


def example_params(tmp_path, *, data_extra: str = "", extra: str = "", name: str = "p") -> Path:
    """A params file ``<name>.yaml`` in ``tmp_path`` for the bundled example's labelled rows (score
    bm25, a simple random sample of 1,300 documents), ``data_extra`` added inside ``data`` and
    ``extra`` after the keys (several test modules check one answer on it)."""
    sample = Path(__file__).resolve().parents[1] / "data" / "example" / "sample.csv"
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"name: {name}\ndata: {{path: {sample}, doc: doc_id, score: bm25{data_extra}}}\n"
                 "design: {population: x, population_size: 1300, sampling: srs}\n"
                 "estimand: {kind: micro, why: y}\nintervals: {level: 0.95, replicates: 199, seed: 1}\n" + extra,
                 encoding="utf-8")
    return p


def cli_json(capsys, args):
    """The JSON ``perdoc ARGS --json`` prints (it must exit 0)."""
    import json

    from perdoc.cli import main
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)
