"""ragas and DeepEval per-sample result exports.

ragas: ``EvaluationResult.to_pandas()`` saved as CSV/TSV/Parquet/JSON Lines, or JSON records, one
per sample, with a column per metric (``faithfulness``, ``answer_relevancy``, ...); nested JSON
fields are named by dotted path (``metrics.faithfulness``). A NaN or missing score is a metric that
failed on that sample (ragas writes NaN): the row is left out and counted.

DeepEval: an ``EvaluationResult`` as JSON (``{"test_results": [...]}`` or the list itself), one test
case each, with ``metrics_data`` entries (``name``, ``score``, ``error``). A field that names a
metric (``Faithfulness``, or ``metrics.Faithfulness``) is its score; a metric that errored on a
test case leaves that case out, counted. Other fields are dotted paths into the test case
(``additional_metadata.doc``, ``name``).
"""

from __future__ import annotations

import os

from ...errors import DataFileError
from ._core import Missing, check_file, is_missing, known_paths, lookup, project, read_json, read_json_lines

_LIST_KEYS = ("test_results", "results", "scores", "samples", "data", "records")


def _records_from_file(path: str, what: str) -> list:
    low = path.lower()
    stem = low[:-3] if low.endswith(".gz") else low
    if stem.endswith((".csv", ".tsv", ".parquet", ".pq")):
        import pandas as pd
        try:
            if stem.endswith((".parquet", ".pq")):
                df = pd.read_parquet(path)
            else:
                df = pd.read_csv(path, sep="\t" if stem.endswith(".tsv") else ",", keep_default_na=True)
        except Exception as e:
            raise DataFileError(f"cannot read {path} as {what}: {str(e).strip().splitlines()[0][:200]}") from None
        return df.to_dict("records")
    if stem.endswith((".jsonl", ".ndjson")):
        return read_json_lines(path, what)
    raw = read_json(path, what)
    if isinstance(raw, dict):
        for key in _LIST_KEYS:
            if isinstance(raw.get(key), list):
                return raw[key]
        raise DataFileError(f"cannot read {path} as {what}: a JSON object without a list of results "
                            f"(looked for {', '.join(_LIST_KEYS)})")
    if not isinstance(raw, list):
        raise DataFileError(f"cannot read {path} as {what}: expected a list of records")
    return raw


def _records(source, what: str) -> tuple[list, str]:
    import pandas as pd
    if isinstance(source, pd.DataFrame):
        return source.to_dict("records"), "the DataFrame"
    path = check_file(source, what)
    return [r for r in _records_from_file(path, what) if isinstance(r, dict)], path


def read_ragas(source, fields: list[str]):
    records, label = _records(source, "a ragas export")

    def resolve(rec, field):
        v = lookup(rec, field)
        if isinstance(v, float) and v != v:
            return Missing(f"no score for '{field}' (NaN: the metric failed on the sample)")
        if v is None:
            return Missing(f"no value for '{field}'")
        return float(v) if isinstance(v, bool) else v

    df, exclusions = project(records, fields, resolve, label)
    notes = [f"ragas export {os.path.basename(label)}: {len(records)} sample(s), one row each",
             "ragas writes NaN where a metric failed on a sample; such samples are left out and counted "
             "(a failure that depends on the sample's score would bias the estimate: check the count)"]
    return df, exclusions, notes


def read_deepeval(source, fields: list[str]):
    records, label = _records(source, "a DeepEval export")
    names = {}
    for r in records:
        for m in _metrics_data(r):
            if isinstance(m, dict) and isinstance(m.get("name"), str):
                names.setdefault(m["name"], None)
    folded = {n.lower(): n for n in names}

    def metric_of(field):
        """The metric a field names: exactly, or ignoring case, with or without 'metrics.'."""
        for f in (field, *(field[len(p):] for p in ("metrics_data.", "metrics.") if field.startswith(p))):
            if f in names:
                return f
            if f.lower() in folded:
                return folded[f.lower()]
        return None

    def resolve(rec, field):
        v = lookup(rec, field)
        name = metric_of(field)
        if not isinstance(v, Missing) and name is None:
            return float(v) if isinstance(v, bool) else v
        if name is None:
            return v
        entry = next((m for m in _metrics_data(rec) if isinstance(m, dict) and m.get("name") == name), None)
        if entry is None:
            return Missing(f"metric '{name}' not run on the test case")
        if entry.get("error"):
            return Missing(f"metric '{name}' errored (e.g. {str(entry['error']).splitlines()[0][:80]})")
        score = entry.get("score")
        if is_missing(score):
            return Missing(f"metric '{name}' has no score")
        return float(score) if isinstance(score, bool) else score

    df, exclusions = project(records, fields, resolve, label, paths=known_paths(records) + list(names))
    notes = [f"DeepEval results {os.path.basename(label)}: {len(records)} test case(s), one row each; "
             f"metrics found: {', '.join(names) or 'none'}",
             "a metric that errored on a test case leaves the case out, counted (check the count: failures that "
             "depend on the score bias the estimate)"]
    return df, exclusions, notes


def _metrics_data(record: dict) -> list:
    """A test case's metrics_data entries (a case whose metrics_data is not a list has none)."""
    data = record.get("metrics_data")
    return data if isinstance(data, list) else []
