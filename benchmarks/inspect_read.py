"""Reading an inspect_ai ``.eval`` log with 10^5 samples, against the same sample records as JSON Lines.

    python benchmarks/inspect_read.py [--samples 100000] [--runs 3] [--scaling 10000,30000]
                                      [--reference 2000,8000]

Writes into ``benchmarks/data/inspect/`` (git-ignored):

* ``log_<n>.eval``: an inspect_ai log in its own layout: ``header.json`` (made and dumped by
  inspect_ai's ``EvalLog`` model, with the dataset's sample ids), one zstd-compressed member
  ``samples/<id>_epoch_1.json`` per sample (the JSON inspect writes for a sample without a transcript:
  ``id, epoch, input, target, messages, output, scores, metadata, store, events, ...``),
  ``summaries.json`` and ``_journal/start.json``. It is written directly with ``zipfile`` and
  inspect_ai's compression settings: inspect's own ``write_eval_log`` took 93 s for 10^4 samples. The
  script checks that inspect_ai reads it (its header, the first and the last sample).
* ``log_<n>.jsonl``: the same sample records, one JSON object per line.

Times, each in a fresh process (median of ``--runs``; imports excluded from the read time, which is
taken around the call alone; the process's wall time and max RSS are printed too):

* ``eval``: ``perdoc.adapters.read(log.eval, "inspect", ["metadata.source_doc", "match"])``;
* ``jsonl``: ``perdoc.adapters.read(log.jsonl, "ragas", ["metadata.source_doc", "scores.match.value"])``,
  the adapters' JSON Lines path (one ``json.loads`` per line, then the same projection). The score
  values are numbers, so both give the same table (checked).

Target: the ``.eval`` read within 3x the JSON Lines read. ``--scaling`` adds the ``.eval`` read at
smaller sizes (time per sample should stay flat: linear). ``--reference`` times inspect_ai's own
streaming reader (``read_eval_log_samples``, what perdoc called before) at those sizes, for the record:
it re-reads the archive for every sample (quadratic), so keep them small.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "inspect"
sys.path.insert(0, str(HERE))
FIELDS = ["metadata.source_doc", "match"]
JSONL_FIELDS = ["metadata.source_doc", "scores.match.value"]


def sample_record(i: int) -> dict:
    """One sample as inspect_ai writes it (no transcript), a numeric 'match' score."""
    return {"id": f"s{i}", "epoch": 1, "input": f"question {i}: what does the passage say about item {i % 97}?",
            "target": "x", "messages": [], "output": {"model": "", "choices": [], "completion": ""},
            "scores": {"match": {"value": float(i % 3 == 0), "answer": "x", "history": []},
                       "f1": {"value": (i % 10) / 10, "history": []}},
            "metadata": {"source_doc": f"doc{i % 5000}", "topic": f"t{i % 7}"},
            "store": {}, "events": [], "model_usage": {}, "role_usage": {}, "attachments": {},
            "events_data": {"messages": [], "calls": []}}


def write_log(n: int) -> tuple[Path, Path]:
    from inspect_ai._util.zipfile import zipfile_compress_kwargs
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec
    OUT.mkdir(parents=True, exist_ok=True)
    ev, jl = OUT / f"log_{n}.eval", OUT / f"log_{n}.jsonl"
    if ev.exists() and jl.exists():
        return ev, jl
    ids = [f"s{i}" for i in range(n)]
    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="bench", task_id="bench", run_id="run", eval_id="ev",
                    dataset=EvalDataset(name="bench", samples=n, sample_ids=ids), model="mockllm/model",
                    config=EvalConfig(epochs=1))
    header = EvalLog(version=2, status="success", eval=spec).model_dump_json(exclude_none=True)
    start = json.dumps({"version": 2, "eval": json.loads(header)["eval"], "plan": json.loads(header)["plan"]})
    summaries = []
    tmp_ev, tmp_jl = ev.with_suffix(".eval.tmp"), jl.with_suffix(".jsonl.tmp")
    with zipfile.ZipFile(tmp_ev, "w", **zipfile_compress_kwargs) as zf, open(tmp_jl, "w", encoding="utf-8") as fh:
        zf.writestr("_journal/start.json", start)
        for i in range(n):
            rec = sample_record(i)
            text = json.dumps(rec, separators=(",", ":"))
            zf.writestr(f"samples/{rec['id']}_epoch_1.json", text)
            fh.write(text + "\n")
            summaries.append({"id": rec["id"], "epoch": 1, "input": rec["input"], "target": rec["target"],
                              "scores": rec["scores"], "metadata": rec["metadata"]})
        zf.writestr("summaries.json", json.dumps(summaries, separators=(",", ":")))
        zf.writestr("header.json", header)
    os.replace(tmp_ev, ev)
    os.replace(tmp_jl, jl)
    from inspect_ai.log import read_eval_log, read_eval_log_sample   # inspect_ai reads what was written
    log = read_eval_log(str(ev), header_only=True)
    assert log.eval.dataset.sample_ids == ids
    for sid in (ids[0], ids[-1]):
        assert read_eval_log_sample(str(ev), id=sid, epoch=1).metadata["source_doc"] == sample_record(int(sid[1:]))[
            "metadata"]["source_doc"]
    return ev, jl


CHILD = r"""
import json, sys, time
kind, path = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
from perdoc import adapters
if kind == "eval":
    import inspect_ai.log  # imported before the clock starts, as for a second log in the same process
elif kind == "reference":
    from inspect_ai.log import read_eval_log, read_eval_log_samples
t1 = time.perf_counter()
if kind == "eval":
    df = adapters.read(path, "inspect", %(fields)r)[0]
elif kind == "jsonl":
    df = adapters.read(path, "ragas", %(jfields)r)[0]
else:  # what perdoc 0.1 called: inspect's streaming reader, without the transcripts
    keep = {"id", "epoch", "target", "metadata", "scores", "error", "input"}
    heavy = {"events", "messages", "attachments", "store", "output"}
    read_eval_log(path, header_only=True)
    df = [s.model_dump(mode="json", include=keep)
          for s in read_eval_log_samples(path, all_samples_required=False, exclude_fields=heavy)]
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "read_s": t2 - t1, "rows": len(df),
                  "digest": None if isinstance(df, list) else
                  [round(float(df.iloc[:, 1].sum()), 6), df.iloc[:, 0].nunique(), df.iloc[:, 0].iloc[-1]]}))
""" % {"fields": FIELDS, "jfields": JSONL_FIELDS}


def measure(kind: str, path: Path, timeout: float = 1800.0) -> dict:
    from _bench import run_measured
    out = OUT / f".child.{os.getpid()}.json"
    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "lib") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = run_measured([sys.executable, "-c", CHILD, kind, str(path)], stdout_path=out, env=env, timeout=timeout)
    try:
        child = json.loads(out.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        raise SystemExit(f"{kind} {path.name} failed: {res['stderr'][-800:]}")
    finally:
        out.unlink(missing_ok=True)
    return {**child, "wall_s": res["wall_s"], "maxrss_mib": res["maxrss_mib"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scaling", default="10000,30000", help="smaller sizes for the .eval read ('' for none)")
    ap.add_argument("--reference", default="", help="sizes for inspect_ai's own streaming reader, e.g. 2000,8000")
    args = ap.parse_args(argv)
    print(f"load before start: {open('/proc/loadavg').read().split()[:3]}")
    t = time.perf_counter()
    ev, jl = write_log(args.samples)
    print(f"log of {args.samples:,} samples: {ev.stat().st_size / 2**20:.1f} MiB .eval, "
          f"{jl.stat().st_size / 2**20:.1f} MiB .jsonl (written/checked in {time.perf_counter() - t:.1f} s)")
    runs = {"eval": [], "jsonl": []}
    for _ in range(args.runs):   # alternating, so drifting load hits both sides alike
        runs["eval"].append(measure("eval", ev))
        runs["jsonl"].append(measure("jsonl", jl))
    a, b = runs["eval"], runs["jsonl"]
    assert a[0]["rows"] == b[0]["rows"] == args.samples and a[0]["digest"] == b[0]["digest"], (a[0], b[0])
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("read_s", "wall_s", "maxrss_mib", "import_s")}
           for k, v in runs.items()}
    ratio = med["eval"]["read_s"] / med["jsonl"]["read_s"]
    for k in ("eval", "jsonl"):
        m = med[k]
        print(f"{k:6s} read {m['read_s']:.2f} s ({1e6 * m['read_s'] / args.samples:.1f} us/sample), process "
              f"{m['wall_s']:.2f} s (imports {m['import_s']:.2f} s), max RSS {m['maxrss_mib']:.0f} MiB "
              f"[reads: {', '.join('%.2f' % r['read_s'] for r in runs[k])}]")
    print(f".eval / JSON Lines read time: {ratio:.2f}x (target <= 3x): {'pass' if ratio <= 3 else 'FAIL'}")
    for n in [int(x) for x in args.scaling.split(",") if x.strip()]:
        r = measure("eval", write_log(n)[0])
        print(f"eval   n={n:>7,}: read {r['read_s']:.2f} s ({1e6 * r['read_s'] / n:.1f} us/sample), "
              f"max RSS {r['maxrss_mib']:.0f} MiB")
    for n in [int(x) for x in args.reference.split(",") if x.strip()]:
        r = measure("reference", write_log(n)[0])
        print(f"inspect_ai read_eval_log_samples n={n:>6,}: {r['read_s']:.1f} s ({1e3 * r['read_s'] / n:.2f} "
              f"ms/sample), max RSS {r['maxrss_mib']:.0f} MiB")
    print(f"load at end: {open('/proc/loadavg').read().split()[:3]}")
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
