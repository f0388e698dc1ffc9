"""What every adapter shares: dotted paths into nested records, and the projection of records to a
chunk-level table whose left-out rows are counted by reason (never dropped silently)."""

from __future__ import annotations

import contextlib
import difflib
import gc
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass

from ...errors import ColumnError, DataFileError, ParameterError
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
    with no_gc():
        _rows(records, fields, resolve, label, rows, reasons, found)
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


def _rows(records, fields, resolve, label, rows, reasons, found):
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


def check_file(source, what: str) -> str:
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterError(f"{what}: source must be a file path, not {type(source).__name__}")
    path = os.fspath(source)
    if not os.path.exists(path):
        raise DataFileError(f"data file not found: {path}")
    if os.path.isdir(path):
        raise DataFileError(f"{path} is a directory, not a data file")
    return path


#: JSON nested deeper than this is refused before it is parsed (one line, naming the file and the
#: line). It is the limit of DuckDB's JSON reader, which perdoc's plain loader reads JSON with
#: ("JSON exceeds maximum recursion depth of 128"), so every JSON input obeys one rule; Python's own
#: parser would otherwise recurse until a RecursionError (about 1,000 levels) and pydantic-based
#: readers spend minutes and gigabytes on a few hundred kilobytes nested 10^5 deep.
MAX_JSON_DEPTH = 128

_ESCAPE = re.compile(rb"\\.", re.S)


class DepthScan:
    """The nesting depth of JSON text fed to it in pieces (bytes), outside strings, in linear time
    (vectorised: no Python work per character). ``feed`` returns the 1-based line at which the depth
    first exceeds ``limit``, or None. Depth is counted as DuckDB counts it: the outermost array or
    object is level 0, so ``limit`` = 128 lets 129 brackets nest and refuses 130, exactly where the
    plain loader's reader stops. Brackets inside strings do not count; an escaped quote does not end a
    string (escape pairs are dropped before quotes are matched)."""

    def __init__(self, limit: int = MAX_JSON_DEPTH):
        self.limit, self.depth, self.in_string, self.carry, self.lines = limit + 1, 0, False, b"", 0

    def feed(self, data) -> int | None:
        import numpy as np
        data = self.carry + bytes(data) if self.carry else bytes(data)
        self.carry = b""
        if b"\\" in data:
            data = _ESCAPE.sub(b"", data)
            if data.endswith(b"\\"):          # an escape split across pieces: finish it with the next one
                data, self.carry = data[:-1], b"\\"
        a = np.frombuffer(data, dtype=np.uint8)
        opening = (a == 0x5B) | (a == 0x7B)
        brackets = np.flatnonzero(opening | (a == 0x5D) | (a == 0x7D))
        quotes = np.flatnonzero(a == 0x22)
        start = 1 if self.in_string else 0
        if len(brackets):
            outside = brackets[((np.searchsorted(quotes, brackets) + start) & 1) == 0]
            if len(outside):
                depth = self.depth + np.cumsum(np.where(opening[outside], 1, -1))
                over = np.flatnonzero(depth > self.limit)
                if len(over):
                    return self.lines + data.count(b"\n", 0, int(outside[over[0]])) + 1
                self.depth = int(depth[-1])
        self.in_string = bool((len(quotes) + start) & 1)
        self.lines += data.count(b"\n")
        return None


def deeper_than(data, limit: int = MAX_JSON_DEPTH, block: int = 1 << 22) -> int | None:
    """The 1-based line where one complete JSON text (bytes or str) nests deeper than ``limit``, or
    None. Text with at most ``limit`` + 1 brackets cannot, and is passed without a scan; longer text
    is scanned in ``block``-byte pieces, so the scan's own memory stays a few times ``block``."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= limit + 1:
            return None
        data = data.encode("utf-8", "surrogatepass")
    elif data.count(b"[") + data.count(b"{") <= limit + 1:
        return None
    scan, view = DepthScan(limit), memoryview(data)
    for at in range(0, len(view), block):
        line = scan.feed(view[at:at + block])
        if line is not None:
            return line
    return None


def depth_error(label: str, what: str, line: int, limit: int = MAX_JSON_DEPTH) -> DataFileError:
    return DataFileError(f"cannot read {label} as {what}: line {line} nests JSON more than {limit} levels deep "
                         f"(perdoc reads at most {limit} levels, the limit of its plain JSON reader too)")


def check_json_depth(path: str, what: str, limit: int = MAX_JSON_DEPTH, block: int = 1 << 22) -> None:
    """Refuse a JSON (or JSON Lines) file nested deeper than ``limit`` before parsing it: one streaming
    pass in ``block``-byte pieces, so memory stays bounded whatever the file's size."""
    scan = DepthScan(limit)
    try:
        with open(path, "rb") as fh:
            while True:
                piece = fh.read(block)
                if not piece:
                    return
                line = scan.feed(piece)
                if line is not None:
                    raise depth_error(path, what, line, limit)
    except OSError as e:
        raise DataFileError(f"cannot read {path}: {e.strerror or e}") from None


@contextlib.contextmanager
def no_gc():
    """The cyclic garbage collector paused while records are parsed: parsed JSON holds no reference
    cycles, yet each collection walks every record built so far, which made reading 10^5 records 2-4x
    slower. Restored on exit (only if it was on)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def json_error(label: str, what: str, e: json.JSONDecodeError, line0: int = 1) -> DataFileError:
    return DataFileError(f"cannot read {label} as {what}: invalid JSON at line {e.lineno + line0 - 1} ({e.msg})")


def read_json(path: str, what: str):
    check_json_depth(path, what)
    try:
        with open(path, encoding="utf-8-sig") as fh, no_gc():
            return json.load(fh)
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as {what}: it is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise json_error(path, what, e) from None
    except RecursionError:  # not reached below MAX_JSON_DEPTH; kept so no input can end in a traceback
        raise DataFileError(f"cannot read {path} as {what}: JSON nested too deeply") from None


def loads_line(text, label: str, what: str, number: int):
    """One JSON Lines record: depth-checked, then parsed (a deep line refused with its number)."""
    line = deeper_than(text)
    if line is not None:
        raise DataFileError(f"{label}: line {number} nests JSON more than {MAX_JSON_DEPTH} levels deep (perdoc "
                            f"reads at most {MAX_JSON_DEPTH} levels, the limit of its plain JSON reader too)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataFileError(f"{label}: line {number} is not valid JSON ({e.msg}); {what} has one JSON "
                            "object per line") from None
    except RecursionError:
        raise DataFileError(f"{label}: line {number} nests JSON too deeply") from None


def read_json_lines(path: str, what: str) -> list:
    out = []
    try:
        with open(path, encoding="utf-8-sig") as fh, no_gc():
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                out.append(loads_line(line, path, what, number))
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as {what}: it is not UTF-8 text") from None
    return out


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class JsonStream:
    """One JSON document read value by value from a text file, so a large array (an inspect log's
    samples) is never held whole: ``keys()`` walks an object, ``items()`` an array, ``value()`` parses
    the next value with Python's own decoder (NaN and Infinity accepted, as ``json.load`` does).

    Memory is one value plus a read block; time is linear (a value cut by the end of the buffer is
    parsed again after the buffer doubles, so the repeated work sums to at most the value's size). A
    single value of more than ``max_chars`` characters is refused, naming the file, the line and the
    limit, the buffer never growing far past it. Check the depth first (:func:`check_json_depth`).
    """

    def __init__(self, fh, label: str, what: str, max_chars: int, block: int = 1 << 20):
        self.fh, self.label, self.what, self.max_chars, self.block = fh, label, what, max_chars, block
        self.buf, self.pos, self.eof, self.line0 = "", 0, False, 1   # line0: the line buf[0] is on

    def _more(self, want: int = 0) -> bool:
        if self.pos > self.block and 2 * self.pos > len(self.buf):   # drop what was consumed
            self.line0 += self.buf.count("\n", 0, self.pos)
            self.buf, self.pos = self.buf[self.pos:], 0
        piece = self.fh.read(max(want, self.block))
        if not piece:
            self.eof = True
            return False
        self.buf += piece
        return True

    def line(self) -> int:
        return self.line0 + self.buf.count("\n", 0, self.pos)

    def error(self, msg: str) -> DataFileError:
        return DataFileError(f"cannot read {self.label} as {self.what}: invalid JSON at line {self.line()} ({msg})")

    def peek(self) -> str:
        """The next character that is not white space ('' at the end), not consumed."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof or not self._more():
                return ""

    def value(self):
        if self.peek() == "":
            raise self.error("Expecting value")
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                # a value cut by the end of the buffer fails at the buffer's end (or in an unterminated
                # string); any other failure is the file's own error
                cut = e.pos >= len(self.buf) - 6 or e.msg.startswith("Unterminated string")
                if self.eof or not cut:
                    raise DataFileError(f"cannot read {self.label} as {self.what}: invalid JSON at line "
                                        f"{self.line0 + e.lineno - 1} ({e.msg})") from None
                self._grow()
                continue
            except RecursionError:
                raise DataFileError(f"cannot read {self.label} as {self.what}: JSON nested too deeply "
                                    f"(line {self.line()})") from None
            if end == len(self.buf) and not self.eof:   # a number may go on in the next block
                self._grow()
                continue
            if end - self.pos > self.max_chars:
                raise self._too_big()
            self.pos = end
            return obj

    def _grow(self):
        held = len(self.buf) - self.pos
        if held > self.max_chars:
            raise self._too_big()
        self._more(min(held, self.max_chars + 1 - held))   # doubling, but never far past the limit

    def _too_big(self) -> DataFileError:
        n = self.max_chars
        size = f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n:,} characters"
        return DataFileError(f"cannot read {self.label} as {self.what}: the JSON value at line {self.line()} is over "
                             f"{size}, perdoc's limit for one record (or one header field) of the file")

    def _expect(self, ch: str, msg: str):
        if self.peek() != ch:
            raise self.error(msg)
        self.pos += 1

    def _opens_empty(self, opening: str, closing: str) -> bool:
        """Read the ``opening`` bracket of an array or object; True when ``closing`` follows at once
        (an empty one, read whole)."""
        self._expect(opening, f"Expecting '{opening}'")
        if self.peek() == closing:
            self.pos += 1
            return True
        return False

    def _closes(self, closing: str) -> bool:
        """Read what follows a member of an array or object: True at its ``closing`` bracket, False
        at a comma (another member follows)."""
        c = self.peek()
        self.pos += 1
        if c == closing:
            return True
        if c != ",":
            self.pos -= 1
            raise self.error("Expecting ',' delimiter")
        return False

    def items(self):
        """The values of the array that comes next, one at a time."""
        if self._opens_empty("[", "]"):
            return
        while True:
            yield self.value()
            if self._closes("]"):
                return

    def keys(self):
        """The keys of the object that comes next; the caller reads each key's value (``value()`` or
        ``items()``) before asking for the next key."""
        if self._opens_empty("{", "}"):
            return
        while True:
            if self.peek() != '"':
                raise self.error("Expecting property name enclosed in double quotes")
            key = self.value()
            self._expect(":", "Expecting ':' delimiter")
            yield key
            if self._closes("}"):
                return

    def end(self):
        if self.peek() != "":
            raise self.error("Extra data")


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
