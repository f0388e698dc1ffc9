"""What every adapter shares: dotted paths into nested records, and the projection of records to a
chunk-level table whose left-out rows are counted by reason (never dropped silently)."""

from __future__ import annotations

import difflib
import json
import math
import os
from collections import Counter
from dataclasses import dataclass

from ..errors import ColumnError, DataFileError, ParameterError
from ..table import Exclusion


@dataclass(frozen=True)
class Missing:
    """A field a record does not give a usable value for; ``reason`` says why (the exclusion)."""

    reason: str


def lookup(record, path: str):
    """The value at a dotted ``path`` in nested dicts/lists (a literal key ``path`` wins, so a flat
    column named ``metrics.faithfulness`` is found too); :class:`Missing` when absent."""
    if isinstance(record, dict) and path in record:
        return record[path]
    cur = record
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return Missing(f"no '{path}'")
    return cur


def is_missing(value) -> bool:
    return value is None or isinstance(value, Missing) or (isinstance(value, float) and math.isnan(value))


def known_paths(records, limit: int = 200, depth: int = 3) -> list[str]:
    """Dotted paths seen in the first records (for 'did you mean' messages)."""
    seen: dict[str, None] = {}

    def walk(obj, prefix, d):
        if not isinstance(obj, dict) or d > depth:
            return
        for k, v in obj.items():
            p = f"{prefix}{k}"
            seen.setdefault(p, None)
            walk(v, p + ".", d + 1)

    for r in records[:50]:
        walk(r, "", 1)
        if len(seen) > limit:
            break
    return list(seen)


def not_found(field: str, paths: list[str], label: str) -> ColumnError:
    guess = difflib.get_close_matches(field, paths, n=1)
    hint = f"; did you mean '{guess[0]}'?" if guess else ""
    shown = ", ".join(paths[:25]) + (f", ... ({len(paths) - 25} more)" if len(paths) > 25 else "")
    return ColumnError(f"field '{field}' not found in any record of {label}{hint} (fields: {shown or 'none'})")


def project(records: list, fields: list[str], resolve, label: str, paths=None):
    """One row per record with the ``fields`` (columns named exactly so), rows lacking any of them
    left out and counted by reason. ``resolve(record, field)`` gives a value or :class:`Missing`.

    A field found in no record at all is a typo, not missing data: it raises, naming the fields seen.
    """
    import pandas as pd
    rows, reasons = [], Counter()
    found = {f: False for f in fields}
    for rec in records:
        row, why = [], None
        for f in fields:
            v = resolve(rec, f)
            if isinstance(v, Missing):
                if not v.reason.startswith("no '"):
                    found[f] = True     # present but unusable (an error, a NaN): data, not a typo
                why = why or v.reason
                continue
            found[f] = True
            if is_missing(v):
                why = why or f"no value (null or NaN) for '{f}'"
                continue
            if isinstance(v, (dict, list)):
                raise ColumnError(f"field '{f}' in {label} holds a {'mapping' if isinstance(v, dict) else 'list'} "
                                  f"({_short(json.dumps(v, default=str))}), not a single value; name a field "
                                  "inside it with a dotted path")
            row.append(v)
        if why is None:
            rows.append(row)
        else:
            reasons[why] += 1
    for f, ok in found.items():
        if not ok and records:
            raise not_found(f, paths if paths is not None else known_paths(records), label)
    if not records:
        raise DataFileError(f"{label} holds no records")
    df = pd.DataFrame(rows, columns=list(fields))
    if fields and len(set(fields)) != len(fields):
        raise ParameterError(f"the fields {fields} repeat a name; each must be a different field")
    exclusions = [Exclusion(k, reason) for reason, k in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
    return df, exclusions


def check_file(source, what: str) -> str:
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterError(f"{what}: source must be a file path, not {type(source).__name__}")
    path = os.fspath(source)
    if not os.path.exists(path):
        raise DataFileError(f"data file not found: {path}")
    if os.path.isdir(path):
        raise DataFileError(f"{path} is a directory, not a data file")
    return path


def read_json(path: str, what: str):
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return json.load(fh)
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as {what}: it is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise DataFileError(f"cannot read {path} as {what}: invalid JSON at line {e.lineno} ({e.msg})") from None


def read_json_lines(path: str, what: str) -> list:
    out = []
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise DataFileError(f"{path}: line {number} is not valid JSON ({e.msg}); {what} has one JSON "
                                        "object per line") from None
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as {what}: it is not UTF-8 text") from None
    return out


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
