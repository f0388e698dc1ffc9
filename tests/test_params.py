"""params/*.yaml: schema validation with one-line messages naming the key."""

from pathlib import Path

import pytest
import yaml

from perdoc.params import DEFAULT_OUT_OF_SCOPE, ParamsError, load_params

ROOT = Path(__file__).resolve().parents[1]

BASE = {
    "name": "demo",
    "title": "Demo",
    "data": {"path": "data.csv", "doc": "doc_id", "score": "hit"},
    "design": {"population": "all filings of 2025", "population_size": 1300, "sampling": "srs"},
    "estimand": {"kind": "micro", "why": "a chunk drawn at random"},
    "intervals": {"level": 0.95, "replicates": 999, "seed": 7},
}


def write(tmp_path, doc):
    p = tmp_path / "p.yaml"
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return p


def edit(path, value):
    import copy
    d = copy.deepcopy(BASE)
    keys = path.split(".")
    target = d
    for k in keys[:-1]:
        target = target[k]
    if value is DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value
    return d


DELETE = object()


def test_valid_file(tmp_path):
    s = load_params(write(tmp_path, BASE))
    assert s.name == "demo" and s.data.path == (tmp_path / "data.csv").resolve()
    assert s.design.population_size == 1300 and s.intervals.seed == 7
    assert s.out_of_scope == DEFAULT_OUT_OF_SCOPE and not s.out_of_scope_given
    assert s.to_dict()["data"]["path"] == "data.csv"


def test_defaults(tmp_path):
    d = edit("intervals", DELETE)
    s = load_params(write(tmp_path, d))
    assert (s.intervals.level, s.intervals.replicates, s.intervals.seed) == (0.95, 9999, 1)


@pytest.mark.parametrize("change, message", [
    (("desing", {}), r"unknown key 'desing' \(did you mean 'design'\?\)"),
    (("design.populaton", "x"), r"unknown key 'design.populaton' \(did you mean 'design.population'\?\)"),
    (("design.population", DELETE), r"missing required key 'design.population'"),
    (("name", DELETE), r"missing required key 'name'"),
    (("data.path", DELETE), r"missing required key 'data.path'"),
    (("estimand", DELETE), r"no estimand declared: .*decided from the question before computing"),
    (("estimand.why", DELETE), r"missing required key 'estimand.why'"),
    (("estimand.kind", "median"), r"key 'estimand.kind' must be micro or macro \(got 'median'\)"),
    (("intervals.level", "0.95x"), r"key 'intervals.level' must be a number, got str '0.95x'"),
    (("intervals.level", 1.2), r"key 'intervals.level' must be strictly between 0 and 1"),
    (("intervals.replicates", 2.5), r"key 'intervals.replicates' must be an integer, got float 2.5"),
    (("intervals.replicates", -1), r"key 'intervals.replicates' must be 0 \(no bootstrap\) or at least 2"),
    (("design.population_size", "1300"), r"key 'design.population_size' must be an integer, got str"),
    (("design.sampling", "cluster"), r"key 'design.sampling' must be one of srs, census"),
    (("design.sampling", "stratified"), r"key 'design.strata' is required when design.sampling is stratified"),
    (("design.chunks_in_doc", "N"), r"key 'design.chunks_in_doc' goes with design.sampling: two_stage"),
    (("data", "data.csv"), r"key 'data' must be a mapping of keys, got str"),
    (("out_of_scope", "the index"), r"key 'out_of_scope' must be a list of strings"),
    (("name", "../evil"), r"key 'name' must be a folder name"),
    (("data.n", "n"), r"key 'data' needs either 'score' .* or 'n' and 's'"),
])
def test_schema_errors(tmp_path, change, message):
    with pytest.raises(ParamsError, match=message) as e:
        load_params(write(tmp_path, edit(*change)))
    assert "\n" not in str(e.value)
    assert str(tmp_path / "p.yaml") in str(e.value)


def test_file_errors(tmp_path):
    with pytest.raises(ParamsError, match=r"params file not found"):
        load_params(tmp_path / "nope.yaml")
    with pytest.raises(ParamsError, match=r"not valid YAML at line 3"):
        load_params(write(tmp_path, "name: x\ndata: {path: [\n"))
    with pytest.raises(ParamsError, match=r"the file is empty"):
        load_params(write(tmp_path, ""))
    with pytest.raises(ParamsError, match=r"top level must be a mapping"):
        load_params(write(tmp_path, "- a\n- b\n"))


def test_committed_params_are_valid():
    files = sorted((ROOT / "params").glob("*.yaml"))
    assert files, "params/ holds no params file"
    for f in files:
        s = load_params(f)
        assert s.data.path.exists(), f"{f.name}: data file {s.data.path} missing"
        assert s.name == f.stem


@pytest.mark.parametrize("text, key, line, first", [
    ("intervals: {level: 0.95, level: 0.5}\n", "level", 1, 1),
    ("estimand: {kind: micro, why: a}\nname: x\nestimand: {kind: macro, why: b}\n", "estimand", 3, 1),
    ("data:\n  path: a.csv\n  doc: d\n  doc: e\n", "doc", 4, 3),
])
def test_a_key_given_twice_is_refused(tmp_path, text, key, line, first):
    """YAML keeps the last of two equal keys without a word (a second estimand overrode the first):
    params files refuse it, naming the key and both lines."""
    p = tmp_path / "p.yaml"
    p.write_text(text)
    with pytest.raises(ParamsError, match=rf"line {line}: key '{key}' is given twice \(first at line {first}\)"):
        load_params(p)


def test_keys_are_compared_as_loaded(tmp_path):
    """1 and '1' are two keys; true and yes are one (YAML reads both as True)."""
    from perdoc.study.params import read_yaml
    assert read_yaml("a: {1: x, '1': y}\n") == {"a": {1: "x", "1": "y"}}
    assert read_yaml("a: [{x: 1, y: 2}, {x: 3, y: 4}]\n") == {"a": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}
    p = tmp_path / "p.yaml"
    p.write_text("a: {true: x, yes: y}\n")
    with pytest.raises(ParamsError, match="is given twice"):
        load_params(p)
