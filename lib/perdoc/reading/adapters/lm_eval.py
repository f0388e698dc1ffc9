"""lm-evaluation-harness ``--log_samples`` output: one JSON object per document and filter
(doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics and one key per metric).

Fields are dotted paths into a record (``doc.source_id``, ``acc``, ``exact_match``). A task with
several filters (e.g. gsm8k's ``strict-match`` and ``flexible-extract``) writes one record per filter:
name the filter as lm-eval's results do, ``exact_match,strict-match``; the other filters' records
are set aside (they are the same samples scored another way, not measurements left out).
"""

from __future__ import annotations

import json
import os

from ...errors import ParameterError
from ._core import check_file, deeper_than, known_paths, lookup, project, read_json, read_json_lines

WHAT = "lm-evaluation-harness samples"


def _records(path: str) -> list:
    """JSON Lines (what --log_samples writes), or one JSON document: a list of records, or (older
    harness versions) an object holding one list."""
    with open(path, "rb") as fh:
        line = fh.readline()
        while line and not line.strip():
            line = fh.readline()
    line = line.strip().lstrip(b"\xef\xbb\xbf")
    one_document = line.startswith(b"[")
    if not one_document and line.startswith(b"{") and deeper_than(line) is None:  # a deep line: JSON Lines refuse it
        try:
            json.loads(line)
        except ValueError:  # the first line is not a whole object: a pretty-printed JSON document
            one_document = True
    if one_document:
        raw = read_json(path, WHAT)
        if isinstance(raw, dict):  # older harness versions: {task: [records]}
            lists = [v for v in raw.values() if isinstance(v, list)]
            raw = lists[0] if len(lists) == 1 else raw
        if not isinstance(raw, list):
            raise ParameterError(f"{path}: expected a list of lm-eval sample records (or JSON Lines)")
        return raw
    return read_json_lines(path, WHAT)


def read(source, fields: list[str]):
    path = check_file(source, WHAT)
    records = [r for r in _records(path) if isinstance(r, dict)]
    metric_keys = set()
    for r in records[:1000]:
        listed = r.get("metrics")
        metric_keys.update(m for m in (listed if isinstance(listed, (list, dict)) else []) if isinstance(m, str))
    filters = sorted({str(r.get("filter")) for r in records if "filter" in r})
    chosen = set()
    plain = {}
    for f in fields:
        name, sep, flt = f.rpartition(",")
        if sep and (name in metric_keys or any(name in r for r in records[:50])) and flt in filters:
            chosen.add(flt)
            plain[f] = name
    if len(chosen) > 1:
        raise ParameterError(f"{path}: the fields name different lm-eval filters ({', '.join(sorted(chosen))}); "
                             "compare scores of one filter")
    notes = []
    used = records
    if chosen:
        flt = chosen.pop()
        used = [r for r in records if str(r.get("filter")) == flt]
        others = len(records) - len(used)
        notes.append(f"lm-eval filter '{flt}': {len(used)} record(s) used; {others} record(s) of the other "
                     f"filter(s) ({', '.join(x for x in filters if x != flt)}) set aside (the same samples "
                     "scored another way)" if others else f"lm-eval filter '{flt}'")
    elif len(filters) > 1:
        metrics = [f for f in fields if f in metric_keys] or [f for f in fields if f not in ("doc_id",)][-1:]
        example = f"{metrics[0]},{filters[0]}" if metrics else f"METRIC,{filters[0]}"
        raise ParameterError(f"{path}: the samples were scored under {len(filters)} lm-eval filters "
                             f"({', '.join(filters)}), one record per filter; name one in the score field the "
                             f"way lm-eval's results do, e.g. '{example}'")

    def resolve(rec, field):
        v = lookup(rec, plain.get(field, field))
        if isinstance(v, bool):
            return float(v)
        return v

    df, exclusions = project(used, fields, resolve, path, paths=known_paths(used) + sorted(metric_keys))
    docs = {r.get("doc_id") for r in used}
    notes.insert(0, f"lm-evaluation-harness samples {os.path.basename(path)}: {len(used)} record(s), "
                    f"{len(docs)} distinct doc_id(s); metric values true/false count 1/0")
    notes.append("each lm-eval sample (doc_id) is one measurement of the document its document field names")
    return df, exclusions, notes


