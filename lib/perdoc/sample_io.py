"""Reading small tables (manifests, labels) and writing the manifest of ``perdoc sample``.

Both sides are small (a label budget, not the corpus), so they are read whole into pandas through
DuckDB's local readers (CSV, TSV, JSON Lines, Parquet), on a connection that loads no extension.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from pathlib import Path

import numpy as np

from .errors import DataFileError, ParameterError

__all__ = ["read_table_file", "write_manifest", "manifest_json_path"]


def read_table_file(path, label: str):
    """The whole table at ``path`` as a pandas DataFrame (every column as read; ids as text)."""
    import duckdb

    from .io import _sql_str
    p = Path(os.fspath(path))
    if not p.exists():
        raise DataFileError(f"{label} {p}: file not found")
    if not p.is_file():
        raise DataFileError(f"{label} {p}: not a regular file")
    ext = p.suffix.lower()
    lit = _sql_str(str(p))
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        if ext in (".parquet", ".pq"):
            rel = f"read_parquet({lit})"
        elif ext in (".jsonl", ".ndjson", ".json"):
            rel = f"read_json({lit}, format='newline_delimited')"
        elif ext in (".csv", ".tsv", ".txt"):
            delim = "\t" if ext == ".tsv" else ","
            rel = f"read_csv({lit}, header=true, delim={_sql_str(delim)}, all_varchar=true)"
        else:
            raise DataFileError(f"{label} {p}: unknown extension {ext or '(none)'!r}; use .csv, .tsv, .jsonl "
                                "or .parquet")
        try:
            return con.execute(f"SELECT * FROM {rel}").df()
        except duckdb.Error as e:
            raise DataFileError(f"{label} {p}: cannot be read ({str(e).splitlines()[0][:200]})") from None
    finally:
        con.close()


def manifest_json_path(path) -> Path:
    p = Path(os.fspath(path))
    return p.with_name(p.stem + ".json")


def write_manifest(sample, path, *, doc: str, frame_facts: dict) -> Path:
    """Write the manifest CSV (one row per unit to label: ``doc``, stratum, prob, draw, chunk with a
    take, and n, the document's chunks in the frame) and the JSON beside it (the design, the frame's
    file name and SHA-256, the seed and perdoc's version). Both go to temporary files first: a failed
    write leaves neither half-written."""
    import csv

    from . import __version__
    from .export import neutralise_csv_cell
    path = Path(os.fspath(path))
    if path.suffix.lower() != ".csv":
        raise ParameterError(f"--out {path}: the manifest is a .csv file")
    if not path.parent.is_dir():
        raise DataFileError(f"--out {path}: folder not found: {path.parent}")
    if path.is_dir():
        raise DataFileError(f"--out {path}: it is a folder")
    if doc in ("stratum", "prob", "draw", "chunk", "n"):
        raise ParameterError(f"--doc {doc!r} clashes with a manifest column (stratum, prob, draw, chunk, n); "
                             "rename the frame's id column")
    side = manifest_json_path(path)
    tag = uuid.uuid4().hex[:12]
    tmp_csv = path.with_name(f".{path.name}.{tag}.tmp")
    tmp_json = side.with_name(f".{side.name}.{tag}.tmp")
    header = [neutralise_csv_cell(doc), "stratum", "prob", "draw"] + (["chunk"] if sample.chunk is not None else []) + ["n"]
    sizes = sample.n
    # the manifest's text is made in memory, then hashed and written: its SHA-256 without reading it back
    text = io.StringIO(newline="")
    w = csv.writer(text, lineterminator="\n")
    w.writerow(header)
    chunk = sample.chunk
    for i in range(sample.doc.size):
        row = [neutralise_csv_cell(str(sample.doc[i])), neutralise_csv_cell(str(sample.stratum[i])),
               repr(float(sample.prob[i])), int(sample.draw[i])]
        if chunk is not None:
            row.append(int(chunk[i]))
        row.append(int(sizes[i]))
        w.writerow(row)
    data = text.getvalue().encode("utf-8")
    try:
        with open(tmp_csv, "wb") as f:
            f.write(data)
        info = {k: v for k, v in sample.info.items() if not k.startswith("_")}
        meta = {"perdoc_sample": 1, "manifest": path.name, "manifest_sha256": hashlib.sha256(data).hexdigest(),
                "rows": int(sample.doc.size), "doc_column": doc, "frame": frame_facts, **info,
                "versions": {"perdoc": __version__, "numpy": np.__version__}}
        with open(tmp_json, "w", encoding="utf-8") as f:
            f.write(json.dumps(meta, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        os.replace(tmp_csv, path)
        os.replace(tmp_json, side)
    except OSError as e:
        raise DataFileError(f"--out {path}: cannot write the manifest: {e.strerror or e}") from None
    finally:
        for t in (tmp_csv, tmp_json):
            if t.exists():
                t.unlink()
    return path
