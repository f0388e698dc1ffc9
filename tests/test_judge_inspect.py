"""``perdoc estimate --judge`` on inspect_ai logs: a model-graded scorer (the judge) and an exact scorer
(the gold label) that both scored every labelled sample, named by ``--judge`` and ``--score``.

The logs are written in the test by inspect_ai's own log API (``EvalLog``, ``EvalSample``, ``Score``,
``write_eval_log``), as tests/fixtures/frameworks/make_fixtures.py writes the adapter fixtures: the
labelled log (20 documents, both scorers), the judge's log of the population (80 documents, the 20
among them, the judge's scorer only) and a log of the 60 unlabelled documents the judge scored. The
document id is in each sample's metadata (``--doc metadata.doc_id``). An ``.eval`` log is recognised by
its extension; a ``.json`` log is read as an inspect log with ``--format inspect`` (a plain ``.json``
file is a JSON table otherwise)."""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict

import numpy as np
import pytest

from perdoc.cli import main
from perdoc.study.judge import estimate_judged, load_judged

# whether inspect-ai is installed, without importing it (2 s) in every worker that collects this module
if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("needs inspect-ai: pip install inspect-ai (perdoc[frameworks])", allow_module_level=True)

GOLD, JUDGE, DOC = "exact", "model_graded_qa", "metadata.doc_id"
#: inspect's value_to_float: C = 1, I = 0, P = 0.5 (model_graded_qa gives P with partial credit)
VALUE = {"C": 1.0, "I": 0.0, "P": 0.5}


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _rows():
    """(document, sample id, exact value, model_graded_qa value) for 80 documents of 1 to 5 samples;
    the judge agrees with the exact label on about 85% of samples, and gives partial credit now and then."""
    rng = np.random.default_rng(3)
    rows = []
    for d in range(80):
        p = rng.beta(3, 2)
        for c in range(int(rng.integers(1, 6))):
            y = "C" if rng.random() < p else "I"
            j = y if rng.random() < 0.85 else ("P" if rng.random() < 0.3 else {"C": "I", "I": "C"}[y])
            rows.append((f"doc{d:02d}", f"q{d:02d}_{c}", y, j))
    return rows


def _write_log(path, rows, scorers):
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.scorer import Score
    samples = [EvalSample(id=sid, epoch=1, input=f"question {sid}", target="answer", metadata={"doc_id": doc},
                          scores={name: Score(value={GOLD: y, JUDGE: j}[name], answer="a") for name in scorers})
               for doc, sid, y, j in rows]
    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="perdoc_judge", task_id="judge", run_id="run",
                    eval_id="eval", dataset=EvalDataset(name="judge", samples=len(samples),
                                                        sample_ids=[r[1] for r in rows]),
                    model="mockllm/model", config=EvalConfig(epochs=1))
    write_eval_log(EvalLog(version=2, status="success", eval=spec, samples=samples), str(path),
                   format="eval" if str(path).endswith(".eval") else "json")
    return path


@pytest.fixture(scope="module", params=["eval", "json"])
def logs(request, tmp_path_factory):
    """The labelled, population and unlabelled logs (all ``.eval`` or all ``.json``), their rows, and the
    format option each needs (none for ``.eval``)."""
    ext, where = request.param, tmp_path_factory.mktemp(f"judge_{request.param}")
    rows = _rows()
    labelled = [r for r in rows if int(r[0][3:]) % 4 == 0]
    unlabelled = [r for r in rows if int(r[0][3:]) % 4]
    return {"labelled": _write_log(where / f"labelled.{ext}", labelled, (GOLD, JUDGE)),
            "population": _write_log(where / f"population.{ext}", rows, (JUDGE,)),
            "unlabelled": _write_log(where / f"unlabelled.{ext}", unlabelled, (JUDGE,)),
            "rows": rows, "labelled_rows": labelled,
            "flags": [] if ext == "eval" else ["--format", "inspect"], "api": {} if ext == "eval" else {"fmt": "inspect"}}


def _by_hand(rows):
    """{document: (samples, exact sum, model_graded_qa sum)} from the values written to the log."""
    out = defaultdict(lambda: [0, 0.0, 0.0])
    for doc, _, y, j in rows:
        out[doc][0] += 1
        out[doc][1] += VALUE[y]
        out[doc][2] += VALUE[j]
    return {d: tuple(v) for d, v in sorted(out.items())}


def estimate(capsys, logs, *args, score=GOLD, judge=JUDGE):
    """``perdoc estimate`` on the labelled log (with the format flag a ``.json`` log needs)."""
    return run(capsys, "estimate", logs["labelled"], *logs["flags"], "--doc", DOC, "--score", score, "--judge", judge,
               *args)


def api(logs, **judge):
    """The Python API's answer on the same logs."""
    return estimate_judged(load_judged(logs["labelled"], DOC, GOLD, JUDGE, **judge, **logs["api"]))


def _mean(sums, k):
    return sum(v[k] for v in sums.values()) / sum(v[0] for v in sums.values())


def test_reads_the_gold_and_the_judge_scorer_per_document(logs):
    s = load_judged(logs["labelled"], DOC, GOLD, JUDGE, judge_file=logs["population"], **logs["api"])
    lab, pop = _by_hand(logs["labelled_rows"]), _by_hand(logs["rows"])
    assert list(s.table.doc) == list(lab) and s.table.source["format"] == "inspect"
    assert s.table.n.tolist() == [v[0] for v in lab.values()]
    assert (s.table.s / s.table.scale).tolist() == [v[1] for v in lab.values()]
    assert s.f.tolist() == [v[2] for v in lab.values()]
    assert s.judge.covers and s.judge.M == 80
    assert s.judge.n.tolist() == [v[0] for v in pop.values()] and s.judge.f.tolist() == [v[2] for v in pop.values()]
    assert any(j == "P" for *_, j in logs["labelled_rows"]) and not np.all(s.f == np.round(s.f))  # P = 0.5 read


def test_cli_judge_file_gives_the_python_apis_answer(capsys, logs):
    code, out, err = estimate(capsys, logs, "--judge-file", logs["population"], "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["headline"] == api(logs, judge_file=logs["population"]).to_dict()["headline"]
    assert d["headline"]["basis"] == "judge" and d["headline"]["method"] == "micro.logit_ppi"
    assert d["K"] == 20 and d["judged_documents"] == 80 and d["judge_covers_population"] is True
    lab, pop = _by_hand(logs["labelled_rows"]), _by_hand(logs["rows"])
    assert d["labels_only"]["N"] == sum(v[0] for v in lab.values())
    assert d["labels_only"]["micro"]["estimate"] == pytest.approx(_mean(lab, 1), rel=1e-12)
    assert d["judge_mean"]["micro"] == pytest.approx(_mean(pop, 2), rel=1e-12)
    if not logs["flags"]:   # an .eval log is recognised by its extension: naming the format changes nothing
        code, again, _ = estimate(capsys, logs, "--judge-file", logs["population"], "--format", "inspect", "--json")
        assert code == 0 and json.loads(again)["headline"] == d["headline"]


def test_the_judge_is_read_with_its_own_kind_of_score(capsys, logs):
    """--metric binary declares the gold (C/I); the judge's partial credit (P = 0.5) is not refused by it."""
    code, out, err = estimate(capsys, logs, "--judge-file", logs["population"], "--metric", "binary", "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["headline"] == api(logs, judge_file=logs["population"]).to_dict()["headline"]


def test_cli_judge_sample_of_unlabelled_logged_samples(capsys, logs):
    code, out, err = estimate(capsys, logs, "--judge-sample", logs["unlabelled"], "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["headline"] == api(logs, judge_sample=logs["unlabelled"]).to_dict()["headline"]
    assert d["judge_covers_population"] is False and d["judged_documents"] == 60
    unl = _by_hand([r for r in logs["rows"] if r not in logs["labelled_rows"]])
    assert d["judge_mean"]["micro"] == pytest.approx(_mean(unl, 2), rel=1e-12)


@pytest.mark.parametrize("score, judge", [(GOLD, "nosuch"),
                                          (JUDGE, GOLD)])   # the population log holds the judge's scorer only
def test_a_scorer_the_log_lacks_is_one_line_and_exit_2(capsys, logs, score, judge):
    code, out, err = estimate(capsys, logs, "--judge-file", logs["population"], score=score, judge=judge)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"'{judge}'" in err and "Traceback" not in err
