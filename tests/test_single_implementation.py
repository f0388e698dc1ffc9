"""Each interval method is implemented once: the same batch functions serve perdoc.estimate (a batch
of one sample) and the coverage simulation (a block of samples), so a sample gives the same bits
alone or in a batch, and the simulation's repetition i is exactly perdoc.estimate on sample i. Also:
no import cycle among the modules of the package."""

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from perdoc import DocTable, estimate, macro, micro
from perdoc.methods import intervals as methods
from perdoc import simulate as sim
from perdoc.bootstrap import bootstrap_batch, document_bootstrap
from perdoc.compare import PairTable, compare
from perdoc.diagnostics import icc_anova
from perdoc.wild import wild_batch, wild_interval

from conftest import make_table

LIB = Path(__file__).resolve().parents[1] / "lib" / "perdoc"


def batch(rows=7, K=9, seed=0, binary=True):
    tabs = [make_table(K=K, seed=seed + i, binary=binary) for i in range(rows)]
    return (np.stack([t.n for t in tabs]), np.stack([t.s for t in tabs]), np.stack([t.q for t in tabs]), tabs)


# ====================================================================== batch = one sample, bit for bit
@pytest.mark.parametrize("binary", [True, False])
def test_estimators_batch_equals_one_sample(binary):
    n, s, q, _ = batch(binary=binary)
    funcs = {
        "ratio": lambda n, s, q: micro.ratio(n, s),
        "var_cr1": lambda n, s, q: micro.var_cr1(n, s),
        "var_cr2": lambda n, s, q: micro.var_cr2(n, s),
        "var_cr3": lambda n, s, q: micro.var_cr3(n, s),
        "df_bm": lambda n, s, q: micro.df_bell_mccaffrey(n),
        "df_ik": lambda n, s, q: micro.df_imbens_kolesar(n, s, q),
        "jackknife": lambda n, s, q: micro.jackknife_bc(n, s)[0],
        "jackknife_se": lambda n, s, q: micro.jackknife_bc(n, s)[1],
        "macro_mean": lambda n, s, q: macro.macro_mean(n, s),
        "var_macro": lambda n, s, q: macro.var_macro(n, s),
        "icc": lambda n, s, q: icc_anova(n, s, q),
    }
    for name, f in funcs.items():
        b = f(n, s, q)
        assert isinstance(b, np.ndarray) and b.shape == (n.shape[0],), name
        for i in range(n.shape[0]):
            one = f(n[i], s[i], q[i])
            assert isinstance(one, float), name
            assert one == b[i] or (math.isnan(one) and math.isnan(b[i])), name


def _same(a, b):
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


@pytest.mark.parametrize("B", [0, 99])
def test_srs_methods_batch_equals_each_row(B):
    n, s, q, tabs = batch(rows=5, K=7, seed=3)
    seeds = [11, 12, 13, 14, 15]
    kw = dict(fpc=math.sqrt(1 - 7 / 50), level=0.9, replicates=B, k=0, binary=True, bounded=np.ones(5, bool))
    res, _ = methods.srs_methods(n, s, q, seeds=seeds, **kw)
    for i in range(5):
        one, _ = methods.srs_methods(n[i:i + 1], s[i:i + 1], q[i:i + 1], seeds=seeds[i:i + 1],
                                     **{**kw, "bounded": kw["bounded"][i:i + 1]})
        assert set(one) == set(res)
        for name, r in res.items():
            o = one[name]
            for a in ("estimate", "low", "high", "code", "se", "df"):
                if getattr(r, a) is not None:
                    assert _same(getattr(r, a)[i], getattr(o, a)[0]), (name, a)
            if name == "micro.wild":
                rows, lo, hi = r.extra["pieces"]
                _, lo1, hi1 = o.extra["pieces"]
                assert _same(lo[rows == i], lo1) and _same(hi[rows == i], hi1)
        # the CR1 variance the diagnostics take from the batch is micro.var_cr1's, to the bit
        assert res["micro.cr1"].extra["variance"][i] == micro.var_cr1(n[i], s[i])


def test_bootstrap_batch_equals_document_bootstrap():
    n, s, _, _ = batch(rows=4, K=8, seed=5)
    seeds = [3, 1, 4, 1]
    d = bootstrap_batch(n, s, seeds, 257)
    for i in range(4):
        one = document_bootstrap(n[i], s[i], 257, seeds[i])
        for key, v in d.items():
            assert _same(v[i], getattr(one, key)), key


def test_bootstrap_batch_split_over_samples_gives_the_same_bits():
    """A large batch is reduced a few samples at a time (at most ``block_elems`` cells): the split
    changes neither the draws nor a bit of the statistics."""
    n, s, _, _ = batch(rows=9, K=8, seed=6)
    seeds = list(range(20, 29))
    whole = bootstrap_batch(n, s, seeds, 99, block_elems=10**9)
    for cells in (8 * 99 * 2, 8 * 99 * 4 + 5, 8 * 40):   # 2 samples, 4 samples, part of one sample
        split = bootstrap_batch(n, s, seeds, 99, block_elems=cells)
        for key, v in whole.items():
            assert _same(v, split[key]), (cells, key)


@pytest.mark.parametrize("K, weights", [(6, "rademacher"), (6, "auto"), (11, "auto")])  # enumerated; Webb and
                                                                                          # Rademacher drawn
def test_wild_draw_sums_split_over_samples_gives_the_same_bits(monkeypatch, K, weights):
    import perdoc.methods.wild as wild
    n, s, _, _ = batch(rows=7, K=K, seed=9)
    seeds = list(range(30, 37))
    whole = wild.draw_sums(n, s, seeds, B=199, weights=weights)
    draws = whole.draws                                       # 64 enumerated patterns, else 199
    monkeypatch.setattr(wild, "BLOCK_ELEMS", K * draws * 3)  # three samples at a time
    split = wild.draw_sums(n, s, seeds, B=199, weights=weights)
    for key in ("P", "Q", "a0", "a1", "a2", "varies", "const"):
        assert _same(getattr(whole, key), getattr(split, key)), key
    assert whole.draws == split.draws and whole.P.shape[0] == 7


def test_wild_batch_equals_wild_interval():
    n, s, _, _ = batch(rows=4, K=11, seed=8)
    seeds = [5, 6, 7, 8]
    w = wild_batch(n, s, seeds, B=499, level=0.95)
    rows, lo, hi = w.pieces
    for i in range(4):
        one = wild_interval(n[i], s[i], level=0.95, B=499, seed=seeds[i])
        assert one.pieces == [(a, b) for a, b in zip(lo[rows == i], hi[rows == i])]
        assert (one.low, one.high) == (w.low[i], w.high[i]) and one.min_p == w.min_p[i]


def test_estimate_runs_the_batch_implementation(monkeypatch):
    calls = []
    real = methods.srs_methods

    def spy(n, s, q, **kw):
        calls.append(n.shape)
        return real(n, s, q, **kw)

    monkeypatch.setattr(methods, "srs_methods", spy)
    estimate(make_table(K=6), replicates=19)
    assert calls == [(1, 6)]
    calls.clear()
    sim.simulate(make_table(K=60, seed=2), k=5, reps=12, seed=1, replicates=19)
    assert calls and all(c[1] == 5 for c in calls) and sum(c[0] for c in calls) == 12


def test_simulate_holds_no_copy_of_the_formulas():
    src = (LIB / "study" / "simulate.py").read_text()
    tree = ast.parse(src)
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    for gone in ("_loo", "_df_bell_mccaffrey", "_df_imbens_kolesar", "_icc_anova", "_t_ci", "_z_ci", "_expit",
                 "_bounded", "_quantile_pair", "_bootstrap_block", "_wild_block"):
        assert gone not in defined, gone
    imported = {a.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for a in node.names}
    assert "special" not in imported and "scipy" not in src.replace("scipy.special", "")


# ====================================================================== simulation = estimate, exactly
def assert_exact(ri, i, e):
    seen = 0
    for iv in e.intervals:
        name = f"{iv.estimand}.{iv.method}"
        if name not in ri.low:
            continue
        seen += 1
        lo, hi = ri.low[name][i], ri.high[name][i]
        assert ri.estimate[name][i] == iv.estimate, name
        if iv.ci is None:
            if "whole real line" in (iv.reason or "") or "unbounded" in (iv.reason or ""):
                assert np.isinf(lo) or np.isinf(hi), name
            else:
                assert np.isnan(lo) and np.isnan(hi), (name, iv.reason)
        else:
            assert (lo, hi) == (iv.ci.low, iv.ci.high), name
        if name in ri.pieces and iv.ci is not None:
            assert ri.pieces_of(name, i) == iv.pieces, name
    assert seen == len(ri.low)


@pytest.mark.parametrize("census, k, B, level", [
    (make_table(K=300, seed=11), 12, 199, 0.95),
    (make_table(K=300, seed=11), 4, 99, 0.9),
    (make_table(K=150, seed=3, binary=False), 8, 99, 0.95),
    (make_table(K=300, seed=4), 15, 0, 0.95),
])
def test_every_method_bit_identical_to_estimate(census, k, B, level):
    ri = sim.rep_intervals(census, k=k, reps=6, seed=5, level=level, replicates=B)
    for i in range(6):
        e = estimate(census.take(ri.index[i]), population_size=census.K, replicates=B, seed=int(ri.seeds[i]),
                     level=level)
        assert_exact(ri, i, e)


@pytest.mark.parametrize("census, k, B", [
    (make_table(K=300, seed=11), 12, 99),
    (make_table(K=150, seed=3, binary=False), 8, 0),
    (DocTable.from_arrays(n=np.full(200, 5.0), s=np.r_[[1.0, 2, 1, 3, 1, 5], np.zeros(194)]), 5, 0),
])
def test_every_method_bit_identical_to_estimate_with_a_frame(census, k, B):
    # the census is the frame of its samples: the frame-aware methods too, bit for bit
    from perdoc.frame import Frame
    ri = sim.rep_intervals(census, k=k, reps=8, seed=5, replicates=B, frame=True)
    assert "micro.frame_loglinear" in ri.low
    frame = Frame.from_table(census)
    for i in range(8):
        e = estimate(census.take(ri.index[i]), replicates=B, seed=int(ri.seeds[i]), frame=frame)
        assert e.population_size == census.K
        assert_exact(ri, i, e)


def test_paired_every_method_bit_identical_to_compare():
    rng = np.random.default_rng(4)
    M = 90
    n = np.maximum(2, np.round(rng.lognormal(2.0, 0.8, M))).astype(float)
    s_b = rng.binomial(n.astype(int), rng.beta(1, 3, M)).astype(float)
    s_a = np.minimum(n, s_b + rng.binomial(n.astype(int), 0.1))
    pairs = PairTable.build(doc=[f"d{i}" for i in range(M)], n_a=n, s_a=s_a, q_a=s_a, n_b=n, s_b=s_b, q_b=s_b,
                            q_d=s_a - s_b)
    ri = sim.rep_intervals(pairs, k=7, reps=4, seed=1, replicates=49)
    for i in range(4):
        idx = ri.index[i]
        sub = PairTable.build(doc=pairs.doc[idx], n_a=n[idx], s_a=s_a[idx], q_a=s_a[idx], n_b=n[idx],
                              s_b=s_b[idx], q_b=s_b[idx], q_d=(s_a - s_b)[idx])
        assert_exact(ri, i, compare(sub, population_size=M, replicates=49, seed=int(ri.seeds[i])).difference)


def test_sparse_census_with_flat_samples_bit_identical():
    n = np.full(200, 5.0)
    s = np.zeros(200)
    s[:6] = [1, 2, 1, 3, 1, 5]
    sparse = DocTable.from_arrays(n=n, s=s)
    ri = sim.rep_intervals(sparse, k=5, reps=12, seed=1, replicates=49)
    for i in range(12):
        assert_exact(ri, i, estimate(sparse.take(ri.index[i]), population_size=200, replicates=49,
                                     seed=int(ri.seeds[i])))


# ====================================================================== imports
def _module_name(path: Path) -> str:
    """``reading.io`` for lib/perdoc/reading/io.py, ``reading.adapters`` for its package, ``__init__``
    for the package itself."""
    parts = list(path.relative_to(LIB).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or "__init__"


def module_graph() -> dict[str, set[str]]:
    """Edges module -> modules of perdoc it imports, at the top or inside functions, with relative
    imports of any level resolved (the package itself is ``__init__``, a subpackage its dotted name)."""
    files = {_module_name(p): p for p in LIB.rglob("*.py") if "__pycache__" not in p.parts}
    mods = set(files)

    def known(dotted: str) -> str | None:
        return (dotted or "__init__") if (dotted or "__init__") in mods else None

    graph = {}
    for m, path in files.items():
        tree = ast.parse(path.read_text())
        package = [] if m == "__init__" else m.split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif node.module and node.module.split(".")[0] == "perdoc":
                    target = ".".join(node.module.split(".")[1:])
                else:
                    continue
                for a in node.names:   # from .x import y: the module x.y when it is one, else x
                    sub = known(f"{target}.{a.name}" if target else a.name)
                    deps.add(sub or known(target) or target)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    if parts[0] == "perdoc":
                        deps.add(known(".".join(parts[1:])) or ".".join(parts[1:]))
        graph[m] = {d for d in deps if d in mods and d != m}
    return graph


#: The steps in the data's order: a module may import from its own step and the ones before it only.
STEPS = ("reading", "methods", "study", "report")


def _step(module: str) -> int | None:
    head = module.split(".")[0]
    return STEPS.index(head) if head in STEPS else None


def find_cycle(graph):
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_import_cycle_among_modules():
    graph = module_graph()
    assert {"study.estimate", "study.compare", "reading.io", "reading.table", "reading.pairs",
            "methods.intervals"} <= set(graph)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
    # io (and the helpers it shares with the engines, _rows) take PairTable from pairs, never compare
    loaders = graph["reading.io"] | graph.get("reading._rows", set())
    assert "study.compare" not in loaders and "reading.pairs" in loaders
    assert "reading.io" not in graph.get("reading.engines", set())
    assert "reading.io" not in graph["reading.table"]


def test_every_module_imports_only_from_its_step_and_earlier_ones():
    """reading -> methods -> study -> report: no module imports from a later step, and none imports the
    command line (only the package's own __init__ reaches into every step, for its public names)."""
    graph = module_graph()
    assert {m.split(".")[0] for m in graph} >= set(STEPS)
    later, cli = [], []
    for m, deps in graph.items():
        for d in deps:
            if d.split(".")[0] in ("cli", "cli_sample") and m not in ("cli", "cli_sample"):
                cli.append(f"{m} -> {d}")
            here, there = _step(m), _step(d)
            if here is not None and there is not None and there > here:
                later.append(f"{m} -> {d}")
    assert not cli, cli
    assert not later, later


def test_module_graph_sees_deep_relative_imports(tmp_path, monkeypatch):
    """The graph follows ``from ..x import y`` and ``from . import y`` inside subpackages (a circle
    through a subpackage's __init__ was once invisible to it)."""
    root = tmp_path / "perdoc"
    (root / "reading" / "adapters").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "reading" / "__init__.py").write_text("")
    (root / "reading" / "io.py").write_text("def f():\n    from . import adapters\n")
    (root / "reading" / "adapters" / "__init__.py").write_text("from ..io import f\n")
    monkeypatch.setattr(__import__(__name__), "LIB", root)
    graph = module_graph()
    assert graph["reading.io"] == {"reading.adapters"} and graph["reading.adapters"] == {"reading.io"}
    assert find_cycle(graph) is not None


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_pair_table_one_class():
    import perdoc
    from perdoc import pairs
    assert perdoc.PairTable is PairTable is pairs.PairTable


def test_row_checks_of_the_metric_range_equal_the_tables():
    from perdoc.estimate import metric_range, working_table
    rng = np.random.default_rng(2)
    for i in range(30):
        K = int(rng.integers(2, 8))
        n = rng.integers(1, 6, K).astype(float)
        kind = i % 3
        if kind == 0:
            s = rng.binomial(n.astype(int), 0.4).astype(float)
            q = s.copy()
        elif kind == 1:
            y = [rng.uniform(0, 1.2 if i % 2 else 1.0, int(m)) for m in n]
            s, q = np.array([v.sum() for v in y]), np.array([(v * v).sum() for v in y])
        else:
            s = rng.integers(0, 3, K) * n / 2
            q = s * s / n + rng.integers(0, 2, K)
        t = DocTable.from_arrays(n=n, s=s, q=q)
        assert bool(methods.binary_by_sums(t.n, t.s, t.q)) == t.binary
        wn, ws, wq, k = working_table(t)
        assert bool(methods.binary_by_sums(t.n, t.s, t.q) | methods.bounded_by_sums(wn, ws, wq, k)) == \
            (metric_range(t) == (0.0, 1.0))


@pytest.mark.parametrize("K,dominant", [(9, False), (70_000, False), (70_000, True)])
def test_srs_methods_shares_its_pieces_without_changing_a_bit(K, dominant):
    """srs_methods computes N - n_d once for CR2, CR3, the Bell-McCaffrey df and the jackknife, and the CR1-3
    variances from one array of residuals: each equals the public function's own number, bit for
    bit (also past one block of the whole-number check, and with one document holding most of the
    chunks). The estimate's diagnostics take the ICC srs_methods computed: the same as diagnose's own."""
    from perdoc.diagnostics import diagnose
    from perdoc.study.estimate import working_table
    rng = np.random.default_rng(K + dominant)
    n = np.floor(rng.lognormal(2.0, 1.0, K)) + 1.0
    if dominant:
        n[K // 3] = 50.0 * n.sum()
    s = rng.binomial(n.astype(np.int64), rng.beta(2, 5, K)).astype(float)
    fpc = math.sqrt(1 - K / (4 * K))
    res, _ = methods.srs_methods(n[None], s[None], s[None], seeds=[1], fpc=fpc, level=0.95, k=0, binary=True,
                                 bounded=np.ones(1, bool))
    assert res["micro.cr1"].se[0] == np.sqrt(micro.var_cr1(n, s)) * fpc
    assert res["micro.cr2"].se[0] == np.sqrt(micro.var_cr2(n, s)) * fpc
    assert res["micro.cr3"].se[0] == np.sqrt(micro.var_cr3(n, s)) * fpc
    assert res["micro.cr2"].df[0] == micro.df_bell_mccaffrey(n)
    assert _same(res["micro.cr2_ik"].df[0], micro.df_imbens_kolesar(n, s, s))
    R_J, se_J = micro.jackknife_bc(n, s)
    assert res["micro.jackknife_bc"].estimate[0] == R_J and res["micro.jackknife_bc"].se[0] == se_J * fpc
    table = DocTable.from_arrays(n, s, s)
    wn, ws, wq, k = working_table(table)
    assert estimate(table, replicates=0).diagnostics == diagnose(wn, ws, wq, micro.var_cr1(wn, ws), unit_exp=k)
