"""The one registry of the formats perdoc reads: their names (``fmt=`` in Python, ``--format`` on
the command line, ``data.format`` in a params file), the file-name extensions that select them
without a name, and how messages list them.

Plain tables (CSV, TSV, JSON Lines, JSON, Parquet; the text formats gzip-compressed too) are read by
:mod:`perdoc.reading.io`; evaluation-framework outputs (inspect_ai logs, lm-eval samples, ragas and
DeepEval exports) by :mod:`perdoc.reading.adapters`; a TREC run by its own flags (``--trec-run``,
``data.trec``). A file's format comes from ``fmt`` when given, else from its extension
(:func:`from_file_name`): ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson``, ``.json``, ``.parquet``/``.pq``,
``.eval`` (inspect_ai's own log extension, a zip archive), each text extension optionally followed
by ``.gz``.
Every list of formats in perdoc's messages, the ``--format`` choices and the params check is built
from :data:`FORMATS`, so a format added here appears in all of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["Format", "FORMATS", "by_name", "from_file_name", "adapter_for", "choices", "names", "extensions",
           "listing", "plain_listing", "pass_format"]


@dataclass(frozen=True)
class Format:
    name: str                         # canonical: table.source["format"], the adapter's name
    what: str                         # in words, for messages
    extensions: tuple[str, ...] = ()  # file-name endings (lower case) that select it without a name
    aliases: tuple[str, ...] = ()     # other names every door accepts (listed among --format's choices)
    spellings: tuple[str, ...] = ()   # other names fmt= and data.format accept (not listed)
    gzip: bool = False                # its files may end in .gz (gzip-compressed text)
    adapter: bool = False             # read by perdoc.reading.adapters into rows, then loaded as a table
    flag: str | None = None           # chosen by this flag instead of a format name (a TREC run)
    key: str | None = None            # ... and by this key of a params file


#: Every format perdoc reads, in the order messages list them.
FORMATS: tuple[Format, ...] = (
    Format("csv", "CSV", (".csv",), gzip=True),
    Format("tsv", "TSV", (".tsv",), gzip=True),
    Format("jsonl", "JSON Lines", (".jsonl", ".ndjson"), aliases=("ndjson",), gzip=True),
    Format("json", "JSON", (".json",), gzip=True),
    Format("parquet", "Parquet", (".parquet", ".pq"), aliases=("pq",)),
    Format("inspect", "an inspect_ai log", (".eval",), spellings=("inspect-ai", "inspect_ai"), adapter=True),
    Format("lm-eval", "lm-evaluation-harness --log_samples JSON Lines",
           spellings=("lm_eval", "lmeval", "lm-eval-harness"), adapter=True),
    Format("ragas", "a ragas per-sample export", adapter=True),
    Format("deepeval", "a DeepEval EvaluationResult JSON", adapter=True),
    Format("trec", "a TREC run", adapter=True, flag="--trec-run",
           key="data.trec"),
)

_NAMED = tuple(f for f in FORMATS if f.flag is None)   # chosen by a name (fmt=, --format, data.format)
_BY_NAME = {n: f for f in _NAMED for n in (f.name, *f.aliases, *f.spellings)}
_BY_EXTENSION = {e: f for f in _NAMED for e in f.extensions}


def by_name(fmt) -> Format | None:
    """The format ``fmt`` names (any case, a leading dot allowed: ``".CSV"``), or None."""
    if not isinstance(fmt, str):
        return None
    return _BY_NAME.get(fmt.strip().lower().lstrip("."))


def from_file_name(path) -> tuple[Format | None, bool, str]:
    """``(format or None, gzip-compressed, extension)`` told by the file name alone: its last
    extension, or the one before a final ``.gz`` (then ``gz`` is True). The format is None when no
    registered extension matches; the extension is ``""`` when the name has none."""
    name = os.path.basename(os.fsdecode(os.fspath(path))).lower()
    gz = name.endswith(".gz")
    stem = name[:-3] if gz else name
    ext = os.path.splitext(stem)[1]
    return _BY_EXTENSION.get(ext), gz, ext


def adapter_for(path, fmt=None) -> str | None:
    """The canonical name of the evaluation-framework adapter that reads ``path``: the one ``fmt``
    names, else (no ``fmt``) the one its extension selects (``.eval``: inspect); None when the data is
    a plain table, a DataFrame or a stream without a name. inspect_ai writes ``.eval`` logs as zip
    archives and never gzip-compresses them: ``x.eval.gz`` selects nothing (the loaders then refuse
    it, naming every format)."""
    if fmt is not None:
        f = by_name(fmt)
        return f.name if f is not None and f.adapter else None
    if not isinstance(path, (str, bytes, os.PathLike)) or os.fspath(path) in ("-", b"-"):
        return None
    f, gz, _ext = from_file_name(path)
    return f.name if f is not None and f.adapter and not gz else None   # .eval.gz: no format (refused)


def choices() -> tuple[str, ...]:
    """The values of ``--format``: every named format and its aliases."""
    return tuple(n for f in _NAMED for n in (f.name, *f.aliases))


def names(*, adapter: bool | None = None) -> tuple[str, ...]:
    """The canonical names of the named formats (only the adapters', or only the plain ones)."""
    return tuple(f.name for f in _NAMED if adapter is None or f.adapter == adapter)


def extensions() -> str:
    """The extensions that tell a format without naming it, for help texts:
    ``.csv, .tsv, .jsonl/.ndjson, .json, .parquet/.pq, .eval for inspect; csv, tsv, jsonl and json
    files may also end in .gz``."""
    shown = ", ".join("/".join(f.extensions) + (f" for {f.name}" if f.adapter else "")
                      for f in _NAMED if f.extensions)
    gz = [f.name for f in _NAMED if f.gzip]
    if gz:
        shown += f"; {_and(gz)} files may also end in .gz"
    return shown


def _and(items) -> str:
    return f"{', '.join(items[:-1])} and {items[-1]}" if len(items) > 1 else "".join(items)


def _gzip_text() -> str:
    gz = [f.name for f in _NAMED if f.gzip]
    return f"{'/'.join(gz)} may be gzipped, .gz" if gz else ""


def _flagged_text() -> str:
    flagged = [f"{f.flag}" + (f" ({f.key})" if f.key else "") + f" for {f.what}" for f in FORMATS if f.flag is not None]
    return f", or {', '.join(flagged)}" if flagged else ""


def listing() -> str:
    """Every format perdoc reads, in one short line: the names ``fmt=``/``--format``/``data.format``
    take (in the registry's order), which may be gzip-compressed, and the formats chosen by their own
    flags (a TREC run): ``csv, tsv, ..., deepeval (csv/tsv/jsonl/json may be gzipped, .gz), or
    --trec-run (data.trec) for a TREC run``."""
    gz = _gzip_text()
    return f"{', '.join(names())}" + (f" ({gz})" if gz else "") + _flagged_text()


def plain_listing() -> str:
    """The plain table formats (read without an adapter), with their extensions."""
    return ", ".join(f"{f.name} ({', '.join(f.extensions)})" for f in _NAMED if not f.adapter)


def pass_format() -> str:
    """The rule every "cannot tell the format" message ends with: the parameter in each door, and
    every format perdoc reads (:func:`listing`'s, as ``--format`` takes them)."""
    gz = _gzip_text()
    return (f"pass --format {'|'.join(names())} (fmt= in Python, data.format in a params file"
            + (f"; {gz}" if gz else "") + ")" + _flagged_text())
