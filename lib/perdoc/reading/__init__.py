"""Reading: what comes in (chunk or query rows in files, streams, DataFrames, databases and Spark;
inspect_ai, lm-eval, ragas, DeepEval and TREC outputs; the frame of every population document's size;
a sampling manifest and its labels) and what goes out: a per-document table
(:class:`~perdoc.reading.table.DocTable`: per document ``n``, ``s = sum of scores``, ``q = sum of
squares``, with every excluded row counted), or a paired one for two systems.

Modules: ``io`` (load_chunks, load_docs, load_pairs, write_table), ``engines`` (DuckDB, Ibis, Spark),
``adapters`` (evaluation frameworks, TREC), ``frame``, ``manifest`` (the sampling manifest, its labels),
``table``, ``pairs``, ``export`` (safe CSV and Parquet output), ``_rows`` (id and row rules),
``formats`` (the one registry of the formats read and the extensions that select them).
"""

import importlib as _importlib

_PUBLIC = {
    "DocTable": "table", "Exclusion": "table", "PairTable": "pairs",
    "load_chunks": "io", "load_docs": "io", "load_pairs": "io", "write_table": "io",
    "Frame": "frame", "FrameTotals": "frame", "read_frame": "frame",
    "SampleData": "manifest", "read_manifest": "manifest", "load_sample": "manifest",
    "write_manifest": "manifest", "read_table_file": "manifest",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name):   # lazily: loading DuckDB or pandas only when a reader is used
    if name in _PUBLIC:
        return getattr(_importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
