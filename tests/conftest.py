import os
import shutil
import tempfile

import numpy as np
import pytest

from perdoc import DocTable


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
    same object a computation gives; a run that sets PERDOC_MEMO_DIR itself keeps its own."""
    if hasattr(config, "workerinput") or os.environ.get("PERDOC_MEMO_DIR"):
        return
    folder = tempfile.mkdtemp(prefix="perdoc-test-memo-")
    os.environ["PERDOC_MEMO_DIR"] = folder
    config._perdoc_memo = folder


def pytest_unconfigure(config):
    folder = getattr(config, "_perdoc_memo", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
