"""Security review, issue 15: one rule for document ids in every input (data, census, frame, TREC
document map, sample manifest), YAML anchors and aliases refused in params before anything walks
the value, and stratified estimates that stay O(K log K) in the number of strata."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import pytest

import perdoc
from perdoc import designs
from perdoc.cli import main
from perdoc.errors import InputError
from perdoc.frame import Frame, read_frame
from perdoc.params import OverrideError, ParamsError, _show, load_params

NFD_CAFE = unicodedata.normalize("NFD", "café")   # 'cafe' + combining acute: the same word as 'café'
SIMILAR = "differ only in surrounding spaces, letter case or Unicode form"


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def sample(tmp_path):
    """Chunk rows of 4 documents and a frame of 7 that lists them with their sizes."""
    sizes = {"d0": 3, "d1": 5, "d2": 2, "d3": 7}
    rng = np.random.default_rng(0)
    rows = ["doc_id,hit"] + [f"{d},{int(rng.random() < 0.4)}" for d, k in sizes.items() for _ in range(k)]
    data = _write(tmp_path, "chunks.csv", "\n".join(rows) + "\n")
    frame_rows = ["doc_id,n"] + [f"{d},{k}" for d, k in sizes.items()] + ["d4,1", "d5,40", "d6,2"]
    return data, frame_rows


# ============================================================================ 1. one id rule
@pytest.mark.parametrize("extra", [["D5,40"], ["d5 ,40"], ["café,2", f"{NFD_CAFE},2"]])
def test_frame_ids_that_differ_only_in_form_are_refused(tmp_path, sample, extra):
    """Before: the frame kept 'd5' and 'D5' (or 'd5 ', or the two forms of 'café') as two population
    documents, so M grew and the frame-aware estimates moved."""
    _, rows = sample
    frame = _write(tmp_path, "frame.csv", "\n".join(rows + extra) + "\n")
    with pytest.raises(InputError) as e:
        read_frame(frame, "doc_id")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"column 'doc_id' in the frame {frame}: 1 group(s) of document ids {SIMILAR}")
    assert "--allow-similar-ids" in msg and "data.allow_similar_ids" in msg
    kept = read_frame(frame, "doc_id", allow_similar_ids=True)
    assert kept.M == len(rows) - 1 + len(extra)


def test_frame_rule_is_the_data_rule_word_for_word(tmp_path):
    """The same ids give the same message in the data and in the frame, but for the file's name."""
    data = _write(tmp_path, "data.csv", "doc_id,hit\nd1,1\nD1,0\nd2,1\n")
    frame = _write(tmp_path, "frame.csv", "doc_id,n\nd1,1\nD1,1\nd2,1\n")
    with pytest.raises(InputError) as a:
        perdoc.load_chunks(data, doc="doc_id", score="hit")
    with pytest.raises(InputError) as b:
        read_frame(frame, "doc_id")
    assert str(a.value).split(": ", 1)[1] == str(b.value).split(": ", 1)[1]


def test_frame_from_arrays_applies_the_rule_and_from_table_keeps_a_loaded_census():
    with pytest.raises(InputError, match=f"column 'doc' in the frame: 1 group.*{SIMILAR}"):
        Frame.from_arrays(["a", "A", "b"], [1, 2, 3])
    assert Frame.from_arrays(["a", "A", "b"], [1, 2, 3], allow_similar_ids=True).M == 3
    # a census whose similar ids were knowingly kept at load time stays as loaded
    census = perdoc.DocTable.from_arrays(np.array([1.0, 2, 3]), np.array([1.0, 0, 1]), None,
                                         np.array(["a", "A", "b"], dtype=object))
    assert Frame.from_table(census).M == 3


def test_cli_estimate_frame_refuses_and_allows(capsys, tmp_path, sample):
    data, rows = sample
    frame = _write(tmp_path, "frame.csv", "\n".join(rows + ["D5,40"]) + "\n")
    args = ("estimate", data, "--doc", "doc_id", "--score", "hit", "--frame", frame, "--replicates", "0", "--json")
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "column 'doc_id' in the frame" in err and "'D5' / 'd5'" in err, err
    code, out, err = run(capsys, *args, "--allow-similar-ids")
    assert code == 0, err
    assert json.loads(out)["population_size"] == 8


def test_params_design_frame_follows_data_allow_similar_ids(capsys, tmp_path, sample):
    _, rows = sample
    _write(tmp_path, "frame.csv", "\n".join(rows + ["D5,40"]) + "\n")
    base = ("name: t\ndata: {path: chunks.csv, doc: doc_id, score: hit%s}\n"
            "design: {population: x, frame: frame.csv}\nestimand: {kind: micro, why: chunks}\n"
            "intervals: {replicates: 0}\n")
    p = _write(tmp_path, "p.yaml", base % "")
    code, out, err = run(capsys, "estimate", "--params", p, "--json")
    assert code == 2 and "column 'doc_id' in the frame" in err and SIMILAR in err, err
    p = _write(tmp_path, "q.yaml", base % ", allow_similar_ids: true")
    code, out, err = run(capsys, "estimate", "--params", p, "--json")
    assert code == 0, err
    assert json.loads(out)["population_size"] == 8


def test_sampled_id_that_matches_a_frame_id_only_after_normalisation_is_named(tmp_path):
    data = _write(tmp_path, "data.csv", "doc_id,hit\nD1,1\nD1,0\nd2,1\n")
    frame = _write(tmp_path, "frame.csv", "doc_id,n\nd1,2\nd2,1\nd3,4\n")
    table = perdoc.load_chunks(data, doc="doc_id", score="hit")
    with pytest.raises(InputError) as e:
        read_frame(frame, "doc_id").check(table)
    msg = str(e.value)
    assert "1 sampled document(s) are missing from the frame" in msg
    assert "'D1' matches 'd1' of the frame" in msg and "letter case" in msg and "\n" not in msg
    # an id missing outright gets no hint
    with pytest.raises(InputError) as e:
        Frame.from_arrays(["x", "y"], [2, 1]).check(table)
    assert "matches" not in str(e.value)


def test_census_ids_follow_the_same_rule(tmp_path):
    """The census is read by the data's loader with the data's options (guard: keep it that way)."""
    from perdoc.study.run import load_study_census
    _write(tmp_path, "chunks.csv", "doc_id,hit\nd1,1\nd2,0\nd3,1\n")
    _write(tmp_path, "census.csv", "doc_id,hit\nd1,1\nD1,0\nd2,1\nd3,0\n")
    base = ("name: t\ndata: {path: chunks.csv, doc: doc_id, score: hit%s}\n"
            "design: {population: x}\nestimand: {kind: micro, why: chunks}\ncensus: {path: census.csv}\n")
    study = load_params(_write(tmp_path, "p.yaml", base % ""))
    with pytest.raises(InputError, match=f"column 'doc_id' in .*census.csv: 1 group.*{SIMILAR}"):
        load_study_census(study)
    study = load_params(_write(tmp_path, "q.yaml", base % ", allow_similar_ids: true"))
    assert load_study_census(study).K == 4


@pytest.fixture
def ir_measures():
    return pytest.importorskip("ir_measures")


def test_trec_doc_map_document_column_follows_the_rule(ir_measures, tmp_path):
    from pathlib import Path

    from perdoc.reading import adapted as adapters
    F = Path(__file__).parent / "fixtures" / "frameworks"
    m = _write(tmp_path, "map.csv", "query_id,doc_id\nq1,docA\nq2,DOCA\nq3,docB\nq4,docB\nq5,docC\n")
    with pytest.raises(InputError) as e:
        adapters.read_trec(F / "run_a.trec", F / "qrels.txt", "P@5", m)
    msg = str(e.value)
    assert msg.startswith(f"column 'doc_id' in the document map {m}: 1 group(s) of document ids {SIMILAR}")
    assert "'DOCA' / 'docA'" in msg and "\n" not in msg
    with pytest.raises(InputError, match="in the document map"):
        adapters.load_trec(F / "run_a.trec", F / "qrels.txt", "P@5", m)
    t = adapters.load_trec(F / "run_a.trec", F / "qrels.txt", "P@5", m, allow_similar_ids=True)
    assert "docA" in t.doc.tolist() and "DOCA" in t.doc.tolist()
    # a map without a header names the column by its position
    m2 = _write(tmp_path, "map.tsv", "q1\tdocA\nq2\tDOCA\nq3\tdocB\n")
    with pytest.raises(InputError, match=r"column '2' in the document map"):
        adapters.read_trec(F / "run_a.trec", F / "qrels.txt", "P@5", m2)


def _manifest(tmp_path, ids):
    rows = ["doc_id,stratum,prob,draw,n"] + [f"{d},all,0.5,1,2" for d in ids]
    return _write(tmp_path, "manifest.csv", "\n".join(rows) + "\n")


def test_manifest_ids_follow_the_rule_and_labels_get_the_hint(capsys, tmp_path):
    from perdoc.reading.manifest import load_sample, read_manifest
    from perdoc.sample_io import read_table_file
    m = _manifest(tmp_path, ["d1", "D1", "d2", "d3"])
    with pytest.raises(InputError, match=f"column 'doc_id' in the manifest {m}: 1 group.*{SIMILAR}"):
        read_manifest(m, "doc_id")
    assert len(read_manifest(m, "doc_id", allow_similar_ids=True)) == 4
    # the CLI takes --allow-similar-ids for the manifest as for the data
    rows = "".join(f"{d},1\n{d},0\n" for d in ("d1", "D1", "d2", "d3"))
    labels = _write(tmp_path, "labels.csv", "doc_id,hit\n" + rows)
    code, out, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "hit", "--sample", m)
    assert code == 2 and "in the manifest" in err and SIMILAR in err, err
    code, out, err = run(capsys, "estimate", labels, "--doc", "doc_id", "--score", "hit", "--sample", m,
                         "--allow-similar-ids", "--json")
    assert code == 0, err
    # a label whose id matches a manifest id only after normalisation is named as such
    m = _manifest(tmp_path, ["d1", "d2", "d3"])
    labels = _write(tmp_path, "labels.csv", "doc_id,hit\nD1,1\nD1,0\nd2,1\nd2,1\nd3,0\nd3,0\n")
    with pytest.raises(InputError) as e:
        load_sample(read_table_file(labels, "the labels"), read_manifest(m, "doc_id"), doc="doc_id",
                    score="hit", manifest_path=str(m))
    assert "not in" in str(e.value) and f"'D1' matches 'd1' of {m}" in str(e.value)


def test_sample_frame_follows_the_rule(capsys, tmp_path):
    rows = ["doc_id,n"] + [f"d{i},{1 + i % 5}" for i in range(40)] + ["D7,3"]
    frame = _write(tmp_path, "frame.csv", "\n".join(rows) + "\n")
    args = ("sample", "--frame", frame, "--doc", "doc_id", "--k", "5", "--design", "srs", "--seed", "1",
            "--out", tmp_path / "m.csv")
    code, out, err = run(capsys, *args)
    assert code == 2 and "column 'doc_id' in the frame" in err and "'D7' / 'd7'" in err, err
    code, out, err = run(capsys, *args, "--allow-similar-ids")
    assert code == 0, err


# ============================================================================ 2. YAML aliases
def _bomb(levels: int) -> str:
    parts = ["&a0 [x,x,x,x,x,x,x,x,x,x]"]
    parts += [f"&a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


PARAMS = ("name: t\ntitle: T\ndata: {path: data.csv, doc: doc_id, score: hit}\n"
          "design: {population: all filings, population_size: 1300}\nestimand: {kind: micro, why: chunks}\n")


def test_set_value_with_aliases_is_refused_before_it_is_walked(tmp_path):
    """Before: the message's repr walked the expanded value (7 levels, 10^7 strings from 300 bytes:
    2 s and 150 MB; 8 levels: 20 s and 1.1 GB); now the composer refuses the first anchor."""
    p = _write(tmp_path, "p.yaml", PARAMS)
    with pytest.raises(OverrideError) as e:
        load_params(p, overrides=[f"out_of_scope={_bomb(7)}"])
    msg = str(e.value)
    assert msg.startswith("--set out_of_scope=[&a0 [x,")
    assert "anchors and aliases" in msg and len(msg) < 300 and "\n" not in msg
    # a string key keeps the text as written (nothing is expanded)
    assert load_params(p, overrides=["title=&x *y"]).title == "&x *y"


@pytest.mark.parametrize("text, where", [
    ("base: &b {a: 1}\n", "line 6, key 'base'"),
    ("out_of_scope: [&s x, *s]\n", "line 6, key 'out_of_scope[0]'"),
    ("design2:\n  <<: *nothing\n", "line 7, key 'design2.<<'"),
])
def test_params_file_with_anchor_or_alias_is_refused(tmp_path, text, where):
    p = _write(tmp_path, "p.yaml", PARAMS + text)
    with pytest.raises(ParamsError) as e:
        load_params(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: {where}: YAML anchors and aliases"), msg
    assert "\n" not in msg


def test_params_file_bomb_is_refused_quickly(tmp_path):
    p = _write(tmp_path, "p.yaml", PARAMS + f"out_of_scope: {_bomb(7)}\n")
    with pytest.raises(ParamsError, match="line 6, key 'out_of_scope\\[0\\]': YAML anchors"):
        load_params(p)


@pytest.mark.parametrize("tail, message", [
    ("x: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 64 levels"),
    ("intervals: {seed: " + "1" * 5000 + "}\n", "not valid YAML: Exceeds the limit"),
    ("when: 2025-13-45\n", "not valid YAML: month must be in 1..12"),
])
def test_params_yaml_that_python_cannot_hold_is_one_line(tmp_path, tail, message):
    """Before: a RecursionError or ValueError traceback."""
    p = _write(tmp_path, "p.yaml", PARAMS + tail)
    with pytest.raises(ParamsError, match=message):
        load_params(p)


def test_set_value_nested_too_deep_is_one_line(tmp_path):
    p = _write(tmp_path, "p.yaml", PARAMS)
    with pytest.raises(OverrideError, match="nested deeper than 64 levels"):
        load_params(p, overrides=["out_of_scope=" + "[" * 5000 + "]" * 5000])


def test_show_is_bounded_whatever_the_value():
    """Before: ``_show`` built the whole repr (a RecursionError on deep nesting, gigabytes on shared
    sub-lists)."""
    deep = []
    cur = deep
    for _ in range(100_000):
        cur.append([])
        cur = cur[0]
    assert _show(deep) == "list " + "[" * 37 + "..."
    wide = ["x"] * 10
    for _ in range(9):
        wide = [wide] * 10           # 10^10 strings through shared lists
    text = _show(wide)
    assert text.startswith("list [[[[[[[[[['x', 'x'") and len(text) == len("list ") + 40
    assert _show("0.95x") == "str '0.95x'" and _show(7) == "int 7"
    assert _show({"a": [1, 2]}) == "dict {'a': [1, 2]}"
    assert _show("y" * 100) == "str '" + "y" * 36 + "..."


def test_report_declared_name_reads_params_as_load_params_does(tmp_path):
    from perdoc.report.build import _declared_name
    assert _declared_name(_write(tmp_path, "a.yaml", "name: good\n")) == "good"
    assert _declared_name(_write(tmp_path, "b.yaml", "n: &n good\nname: *n\n")) is None
    assert _declared_name(_write(tmp_path, "c.yaml", "name: x\ny: " + "[" * 5000 + "]" * 5000 + "\n")) is None


# ============================================================================ 3. many strata
def _brute_stratified(n, s, strata, sizes, level=0.95):
    """The stratified estimator straight from its definition, one stratum at a time."""
    names = sorted(set(map(str, strata)))
    strata = np.array([str(x) for x in strata], dtype=object)
    w = np.empty(n.size)
    for h in names:
        idx = strata == h
        w[idx] = sizes[h] / idx.sum()
    X = np.sum(w * n)
    R = np.sum(w * s) / X
    u = s - R * n
    r = s / n
    Mtot = float(sum(sizes[h] for h in names))
    v_mi = v_ma = macro = 0.0
    for h in names:
        idx = strata == h
        k, M = int(idx.sum()), sizes[h]
        v_mi += M * M * (1 - k / M) * np.var(u[idx], ddof=1) / k
        v_ma += (M / Mtot) ** 2 * (1 - k / M) * np.var(r[idx], ddof=1) / k
        macro += M / Mtot * r[idx].mean()
    return R, np.sqrt(v_mi) / X, macro, np.sqrt(v_ma), n.size - len(names)


def _strata_case(H, seed, k_max=6):
    rng = np.random.default_rng(seed)
    k = rng.integers(2, k_max + 1, H)
    labels = np.repeat(np.array([f"h{h}" for h in range(H)], dtype=object), k)
    perm = rng.permutation(labels.size)
    n = rng.integers(1, 30, labels.size).astype(float)
    s = rng.binomial(n.astype(int), rng.uniform(0.1, 0.9, labels.size)).astype(float)
    sizes = {f"h{h}": int(k[h] + rng.integers(0, 50)) for h in range(H)}
    return n[perm], s[perm], labels[perm], sizes


@pytest.mark.parametrize("H, k_max", [(1, 40), (3, 200), (17, 6), (60, 3)])
def test_stratified_matches_the_definition(H, k_max):
    n, s, labels, sizes = _strata_case(H, seed=H, k_max=k_max)
    micro, macro, summary = designs.stratified(n, s, labels, sizes)
    R, se, mac, se_mac, df = _brute_stratified(n, s, labels, sizes)
    assert micro.estimate == pytest.approx(R, rel=1e-13) and micro.se == pytest.approx(se, rel=1e-12)
    assert macro.estimate == pytest.approx(mac, rel=1e-13) and macro.se == pytest.approx(se_mac, rel=1e-12)
    assert micro.df == macro.df == df
    assert list(summary) == sorted(sizes)
    assert all(summary[h]["n"] == n[labels == h].sum() for h in sizes)


def test_stratified_batch_matches_row_by_row():
    n, s, labels, sizes = _strata_case(25, seed=5, k_max=9)
    names = sorted(sizes)
    groups = [(sizes[h], np.flatnonzero(labels == h)) for h in names]
    rng = np.random.default_rng(1)
    nb = np.stack([n, n[::-1], n + 1])
    sb = np.minimum(nb, np.stack([s, s[::-1], s + rng.integers(0, 2, s.size)]))
    batch = designs.stratified_batch(nb, sb, groups)
    for i in range(3):
        row = designs.stratified_batch(nb[i], sb[i], groups)
        for got, want in zip(batch[:4], row[:4]):
            assert got[i] == pytest.approx(want, rel=1e-14)
        R, se, mac, se_mac, _ = _brute_stratified(nb[i], sb[i], labels, sizes)
        assert batch[0][i] == pytest.approx(R, rel=1e-13) and batch[1][i] == pytest.approx(se, rel=1e-12)


def test_hundred_thousand_strata_finish():
    """10^5 strata, K = 2 x 10^5: was O(K x H) (killed after 400 s); now O(K log K)."""
    H = 100_000
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(H), 2).astype(str)
    rng.shuffle(labels)
    n = rng.integers(1, 20, 2 * H).astype(float)
    s = rng.binomial(n.astype(int), 0.3).astype(float)
    sizes = {str(h): 5 for h in range(H)}
    micro, macro, summary = designs.stratified(n, s, labels, sizes)
    assert len(summary) == H and micro.df == H
    assert micro.estimate == pytest.approx(s.sum() / n.sum(), rel=1e-12)  # equal weights: the plain ratio
    assert 0 < micro.se < 0.01 and 0 < macro.se < 0.01
    # a stratum missing from population_sizes: one short line, not 10^5 names
    del sizes["99999"]
    with pytest.raises(InputError) as e:
        designs.stratified(n, s, labels, sizes)
    assert "'99999'" in str(e.value) and "more)" in str(e.value) and len(str(e.value)) < 300


def test_simulate_with_many_strata_sets_up_by_sorting():
    """The simulation's stratified setup grouped the census one stratum at a time (O(M x H))."""
    from perdoc.simulate import simulate
    H = 20_000
    rng = np.random.default_rng(2)
    n = rng.integers(1, 20, 3 * H).astype(float)
    s = rng.binomial(n.astype(int), 0.3).astype(float)
    census = perdoc.DocTable.from_arrays(n, s, s, np.array([f"d{i}" for i in range(3 * H)], dtype=object))
    labels = np.repeat(np.arange(H), 3).astype(str)
    res = simulate(census, k=2 * H, reps=1, seed=1, replicates=0,
                   design={"sampling": "stratified", "strata": {"by": labels, "k": {str(h): 2 for h in range(H)}}})
    assert len(res.design["strata"]) == H and res.reps == 1


def test_simulate_stratified_matches_small_brute_force():
    """The simulated intervals of a small stratified design equal designs.stratified on each sample."""
    from perdoc.simulate import rep_intervals
    rng = np.random.default_rng(4)
    M = 60
    n = rng.integers(1, 20, M).astype(float)
    s = rng.binomial(n.astype(int), 0.4).astype(float)
    census = perdoc.DocTable.from_arrays(n, s, s, np.array([f"d{i}" for i in range(M)], dtype=object))
    labels = np.array([f"h{i % 4}" for i in range(M)], dtype=object)
    design = {"sampling": "stratified", "strata": {"by": labels, "k": {f"h{i}": 3 for i in range(4)}}}
    reps = rep_intervals(census, k=12, reps=5, seed=3, design=design, replicates=0)
    sizes = {f"h{i}": 15 for i in range(4)}
    for r in range(5):
        idx = reps.index[r]
        micro, macro, _ = designs.stratified(n[idx], s[idx], labels[idx], sizes)
        assert reps.estimate["micro.design"][r] == micro.estimate
        assert reps.low["micro.design"][r] == micro.ci.low and reps.high["macro.design"][r] == macro.ci.high


def _brute_survey(w, a, ybar, stratum, prob, draw):
    """stage fractions and the stratified between-document variance, one stratum at a time."""
    stratum = np.asarray(stratum).astype(str)
    f = np.zeros(prob.size)
    for h in np.unique(stratum):
        sel = stratum == h
        p = prob[sel]
        f[sel] = 1.0 if np.all(p == 1) else (p[0] if np.all(p == p[0]) and np.all(draw[sel] == 1) else 0.0)
    X = np.sum(w * a)
    theta = np.sum(w * a * ybar) / X
    z = w * a * (ybar - theta) / X
    v1 = 0.0
    for h in np.unique(stratum):
        sel = stratum == h
        k, fh = int(sel.sum()), f[sel][0]
        if fh < 1:
            v1 += (1 - fh) * k / (k - 1) * np.sum((z[sel] - z[sel].mean()) ** 2)
    return f, v1


def _survey_case(H, seed, k_max):
    rng = np.random.default_rng(seed)
    k = rng.integers(2, k_max + 1, H)
    K = int(k.sum())
    idx = np.repeat(np.arange(H), k)[rng.permutation(K)]
    stratum = np.array([f"s{h}" for h in range(H)])[idx]
    kind = rng.integers(0, 3, H)[idx]        # take-all, SRS, unequal probabilities
    prob = np.where(kind == 0, 1.0, np.where(kind == 1, rng.uniform(0.05, 0.9, H)[idx], rng.uniform(0.05, 0.9, K)))
    draw = np.ones(K, dtype=int)
    a = rng.integers(1, 30, K).astype(float)
    return stratum, prob, draw, 1 / prob, a, rng.uniform(0, 1, K)


@pytest.mark.parametrize("H, k_max", [(1, 30), (5, 200), (40, 4)])
def test_survey_strata_match_the_definition(H, k_max):
    from perdoc import survey
    stratum, prob, draw, w, a, ybar = _survey_case(H, H, k_max)
    f, kinds = survey.stage_fractions(stratum, prob, draw)
    f0, v1 = _brute_survey(w, a, ybar, stratum, prob, draw)
    assert np.array_equal(f, f0) and list(kinds) == sorted(set(stratum.tolist()))
    theta, se, df, reason = survey._linearised(w, a, ybar, a, a, np.zeros(a.size), f, stratum)
    live = [h for h in kinds if kinds[h] != "take-all"]
    if live:
        assert se == pytest.approx(np.sqrt(v1), rel=1e-12) and reason is None
        assert df == max(sum(int((stratum == h).sum()) for h in live) - len(live), 1)


def test_survey_stratum_with_one_document_is_named_as_text():
    from perdoc import survey
    stratum = np.array(["a", "a", "b"])
    f, _ = survey.stage_fractions(stratum, np.full(3, 0.5), np.ones(3))
    reason = survey._linearised(np.full(3, 2.0), np.ones(3), np.array([0.1, 0.5, 0.9]), np.ones(3), np.ones(3),
                                np.zeros(3), f, stratum)[3]
    assert reason.startswith("stratum 'b' has one drawn document")     # was "stratum np.str_('b') ..."


def test_survey_with_hundred_thousand_strata_finishes():
    """perdoc estimate --sample on a manifest of 10^5 strata: was O(K x H) in the stage fractions and
    the variance (one pass over the sample per stratum)."""
    from perdoc import survey
    H = 100_000
    stratum, prob, draw, w, a, ybar = _survey_case(H, 0, 2)
    f, kinds = survey.stage_fractions(stratum, prob, draw)
    assert len(kinds) == H
    theta, se, df, reason = survey._linearised(w, a, ybar, a, a, np.zeros(a.size), f, stratum)
    assert reason is None and se > 0 and theta == pytest.approx(np.sum(w * a * ybar) / np.sum(w * a))
