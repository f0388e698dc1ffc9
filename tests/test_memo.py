"""The store of simulation results (PERDOC_MEMO_DIR): a hit is the computed object, the key follows
the values (not the progress callback), and processes that need the same result compute it once."""

import subprocess
import sys
import textwrap

import numpy as np

from perdoc.reading.io import load_chunks
from perdoc.study import memo
from perdoc.study.simulate import simulate


def test_a_hit_is_the_computed_result_and_the_key_follows_the_values(tmp_path, monkeypatch):
    csv = tmp_path / "c.csv"
    rng = np.random.default_rng(1)
    csv.write_text("doc,hit\n" + "".join(f"d{d},{int(rng.random() < 0.3)}\n" for d in range(30)
                                         for _ in range(int(rng.integers(1, 9)))))
    census = load_chunks(str(csv), doc="doc", score="hit")
    monkeypatch.setenv(memo.MEMO_ENV, str(tmp_path / "store"))
    calls = []
    first = simulate(census, k=6, reps=30, seed=2, replicates=19, progress=lambda d, t: calls.append(d))
    assert calls and len(list((tmp_path / "store").glob("*.pickle"))) == 1
    again = simulate(census, k=6, reps=30, seed=2, replicates=19, progress=lambda d, t: calls.append(-1))
    assert -1 not in calls                            # a hit: nothing computed, no progress
    assert again.to_dict() == first.to_dict()
    monkeypatch.delenv(memo.MEMO_ENV)
    assert simulate(census, k=6, reps=30, seed=2, replicates=19).to_dict() == first.to_dict()
    k1 = memo.key_of("f", (census,), {"k": 6})
    assert memo.key_of("f", (census,), {"k": 6, "progress": print}) == k1
    assert memo.key_of("f", (census,), {"k": 7}) != k1
    other = load_chunks(str(csv), doc="doc", score="hit")
    assert memo.key_of("f", (other,), {"k": 6}) == k1  # the same numbers read again: the same key
    assert memo.key_of("g", (census,), {"k": 6}) != k1


SLOW = textwrap.dedent("""
    import sys, time
    from perdoc.study.memo import memoized

    @memoized
    def slow(x):
        with open(sys.argv[1], "a") as f:
            f.write("computed\\n")
        time.sleep(1.5)
        return [x, x * 2.5]

    print(slow(4))
""")


def test_processes_that_need_the_same_result_compute_it_once(tmp_path):
    log = tmp_path / "log.txt"
    env = {**__import__("os").environ, memo.MEMO_ENV: str(tmp_path / "store")}
    procs = [subprocess.Popen([sys.executable, "-c", SLOW, str(log)], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(3)]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs == ["[4, 10.0]"] * 3
    assert log.read_text() == "computed\n"          # one computed it; the others waited and read it


def test_a_stored_chart_is_the_drawn_chart(tmp_path, monkeypatch, table):
    """A chart's SVG is stored under its spec: a hit gives the string vl-convert draws, and a chart
    with other numbers is drawn, not taken from the store."""
    from perdoc.report import charts
    drawn = charts.to_svg(charts.size_distribution(table))
    monkeypatch.setenv(memo.MEMO_ENV, str(tmp_path / "store"))
    stored = charts.to_svg(charts.size_distribution(table))
    assert len(list((tmp_path / "store").glob("*.pickle"))) == 1
    assert charts.to_svg(charts.size_distribution(table)) == stored == drawn
    from conftest import make_table
    other = charts.to_svg(charts.size_distribution(make_table(K=12, seed=5)))
    assert other != drawn and len(list((tmp_path / "store").glob("*.pickle"))) == 2
