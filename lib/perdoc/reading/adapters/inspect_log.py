"""inspect_ai evaluation logs (``.eval`` and ``.json``): one row per sample and epoch.

Fields are dotted paths into a sample (``id``, ``epoch``, ``target``, ``metadata.<key>``, ...) or
name a scorer: ``match`` (or ``scores.match``) is that scorer's value, mapped to a number as
inspect's own ``value_to_float`` does (C = 1, I = 0, P = 0.5, N = 0, yes/true = 1, no/false = 0,
numbers as they are); ``match.<key>`` takes one key of a scorer whose value is a mapping.

Reading is linear in the log's size and bounded in memory. An ``.eval`` log is a zip (``header.json``
or, while a run is going, ``_journal/start.json``; one ``samples/<id>_epoch_<n>.json`` per sample and
epoch; summaries): its members are read straight from the archive, one at a time, in the order
inspect's own streaming reader yielded them (the header's sample ids, each epoch). That reader opened
the archive again for every sample: 2,000 samples took 21 s, 8,000 took 218 s. A ``.json`` log is
parsed as a stream, sample by sample. The header is validated by inspect_ai's ``EvalLog`` model and
each sample shaped as its ``EvalSample`` model dumps it (see :class:`_Shape`), so the rows are those
inspect's reader gave. Limits, each refused in one line naming the file, the member or line, and the
rule: :data:`MAX_MEMBER_BYTES` per member (or per sample of a ``.json`` log), JSON nesting deeper
than :data:`perdoc.adapters._core.MAX_JSON_DEPTH`, zip members that overlap or disagree with their
headers.
"""

from __future__ import annotations

import json
import math
import os
import struct
import zlib

from ...errors import DataFileError, PerdocError
from ._core import (JsonStream, Missing, check_file, check_json_depth, deeper_than, depth_error, is_missing,
                    known_paths, lookup, no_gc, project)

WHAT = "an inspect_ai log"
MAPPING_NOTE = ("inspect_ai scores mapped to numbers as inspect's value_to_float does: C (correct) = 1, "
                "I (incorrect) = 0, P (partial) = 0.5, N (no answer) = 0, yes/true = 1, no/false = 0, "
                "numbers as they are")
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}

#: The largest member of an ``.eval`` log perdoc decompresses (uncompressed size: the zip header's
#: figure is checked first, then the bytes actually produced, since a header can lie), and the largest
#: single sample (or header field) of a ``.json`` log. A sample holding a 3 x 10^8-character string
#: compresses to ~300 KB; it is refused in microseconds instead of read for minutes. Reading a member
#: holds about twice its size at the peak (its text, then the parsed sample), one member at a time.
MAX_MEMBER_BYTES = 256 * 2**20

#: The sample fields kept (inspect's reader was asked for these: the rest, transcripts above all, is
#: read past and dropped sample by sample).
KEEP = frozenset({"id", "epoch", "target", "metadata", "scores", "error", "input"})
_SAMPLES_DIR = "samples/"
_HEADER = "header.json"
_START = "_journal/start.json"
_LOCAL_HEADER = struct.Struct("<4s22xHH")   # signature ... file name length, extra field length
_ZSTD = 93                                  # zip method id of Zstandard (what inspect_ai writes)


def score_to_float(value):
    """inspect's default value_to_float, except that a value it cannot convert stays as it is (and is
    refused by the loader as non-numeric) instead of silently becoming 0."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        low = value.strip().lower()
        if low in ("yes", "true"):
            return 1.0
        if low in ("no", "false"):
            return 0.0
        try:
            x = float(low)
        except ValueError:
            return value
        return x if math.isfinite(x) else value
    return value


def _models():
    """inspect_ai's log models (None without inspect_ai): the header is validated by them, and the
    kept sample fields are shaped as their ``model_dump(mode="json")`` gives them."""
    try:
        from inspect_ai.log import EvalLog, EvalSample
        from inspect_ai.scorer import Score
    except ImportError:
        return None
    try:
        from inspect_ai._util.constants import LOG_SCHEMA_VERSION, get_deserializing_context
    except ImportError:  # a layout this code was not written against: no version check, no context
        LOG_SCHEMA_VERSION, get_deserializing_context = None, dict
    try:
        from inspect_ai.log._log import SCORER_PLACEHOLDER
    except ImportError:
        SCORER_PLACEHOLDER = "88F74D2C"
    return {"EvalLog": EvalLog, "EvalSample": EvalSample, "Score": Score, "version": LOG_SCHEMA_VERSION,
            "context": get_deserializing_context, "placeholder": SCORER_PLACEHOLDER}


class _Shape:
    """One sample's kept fields, from its raw JSON, in linear time (no pydantic per sample).

    With inspect_ai's models this is what ``EvalSample.model_validate(raw).model_dump(mode="json",
    include=KEEP)`` gives for the fields perdoc reads: the fields in the model's order, absent optional
    ones at their defaults, each score with every ``Score`` field (None where the log omits it), a
    legacy single ``score`` as inspect migrates it. Without inspect_ai, the raw fields as they are.
    ``input`` and ``target`` are kept only when a requested field names them: otherwise an empty
    placeholder, so the prompts of 10^5 samples are not held in memory.
    """

    def __init__(self, fields, models):
        heads = {f.split(".", 1)[0] for f in fields} | set(fields)
        self.light = {k for k in ("input", "target") if k not in heads}
        self.models = models
        if models is not None:
            # (name, required, default) in the models' field order; a default is never mutated here, so
            # one default object (an empty dict or list) can stand in every sample
            self.fields = [(k, f.is_required(), None if f.is_required() else f.get_default(call_default_factory=True))
                           for k, f in models["EvalSample"].model_fields.items() if k in KEEP]
            self.score_fields = [(k, None if f.is_required() else f.get_default(call_default_factory=True))
                                 for k, f in models["Score"].model_fields.items()]

    def sample(self, raw: dict, label: str, where: str) -> dict:
        if self.models is None:
            out = {k: v for k, v in raw.items() if k in KEEP}
            sid, epoch = out.get("id"), out.get("epoch")
            if isinstance(sid, (dict, list)) or not (epoch is None or type(epoch) is int):
                raise DataFileError(f"cannot read {label} as {WHAT}: {where} has an id or epoch of the wrong type "
                                    f"(id {_brief(sid)}, epoch {_brief(epoch)})")
        else:
            if "score" in raw and "scores" not in raw:
                raw = {**raw, "scores": {self.models["placeholder"]: raw["score"]}}
            out = {}
            for k, required, default in self.fields:
                if k in raw:
                    out[k] = raw[k]
                elif required:
                    raise DataFileError(f"cannot read {label} as {WHAT}: {where} has no '{k}' (every inspect_ai "
                                        "sample has one)")
                else:
                    out[k] = default
            if not isinstance(out["id"], (int, str)) or isinstance(out["id"], bool) \
                    or not isinstance(out["epoch"], int) or isinstance(out["epoch"], bool):
                raise DataFileError(f"cannot read {label} as {WHAT}: {where} has an id or epoch of the wrong type "
                                    f"(id {_brief(out['id'])}, epoch {_brief(out['epoch'])})")
            scores = out.get("scores")
            if isinstance(scores, dict):
                out["scores"] = {name: self._score(sc) for name, sc in scores.items()}
            if "input" not in self.light and isinstance(out.get("input"), list):
                out["input"] = self._messages(out["input"])
        for k in ("scores", "error"):   # read below as mappings: anything else is refused here, in one line
            if out.get(k) is not None and not isinstance(out[k], dict):
                raise DataFileError(f"cannot read {label} as {WHAT}: {where} has a '{k}' that is not a mapping "
                                    f"({_brief(out[k])})")
        for k in self.light:
            if k in out:
                out[k] = ""
        return out

    def _messages(self, messages: list) -> list:
        """Chat messages as inspect dumps them (only when a field names ``input``: pydantic per sample)."""
        if not hasattr(self, "_chat"):
            from pydantic import TypeAdapter
            from inspect_ai.model import ChatMessage
            self._chat = TypeAdapter(list[ChatMessage])
        try:
            return self._chat.dump_python(self._chat.validate_python(messages, context=self.models["context"]()),
                                          mode="json")
        except Exception:  # not messages inspect knows: as written
            return messages

    def _score(self, sc):
        if not isinstance(sc, dict):
            return sc
        out = {k: sc[k] if k in sc else default for k, default in self.score_fields}
        meta = out.get("metadata")
        if "reason" in out and out["reason"] is None and isinstance(meta, dict) \
                and meta.get("unscored_reason") is not None:
            out["reason"] = meta["unscored_reason"]   # inspect's Score._lift_unscored_reason
        return out


def _brief(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _first_line(e: BaseException) -> str:
    return ((str(e).strip().splitlines() or [type(e).__name__])[0])[:200]


class _Zip:
    """The members of an ``.eval`` log (a zip), read directly: each one's compressed bytes from its
    offset, decompressed in one call with the output bounded by the header's size, checked against
    the header (size and CRC) and :data:`MAX_MEMBER_BYTES`. Linear in the log's size: inspect's sample
    streamer re-reads the archive per sample (quadratic: 8,000 samples took 218 s)."""

    def __init__(self, fh, path: str):
        import zipfile
        self.fh, self.path = fh, path
        try:
            self.zf = zipfile.ZipFile(fh)
        except Exception as e:  # not a zip, truncated, ...: one line
            raise DataFileError(f"cannot read {path} as {WHAT}: {_first_line(e)}") from None
        infos = self.zf.infolist()
        # name -> member; a name written twice (a re-logged sample) is its last entry, as zipfile's and
        # inspect's readers resolve it
        self.by_name = {i.filename: i for i in infos}
        # member data may not overlap: an 'overlapping files' zip bomb points many entries at one
        # compressed block, so that a small file decompresses to N times the cap
        self.bound = {}
        end = getattr(self.zf, "start_dir", None)
        if end is None:
            end = os.fstat(fh.fileno()).st_size
        for info in sorted(infos, key=lambda i: i.header_offset, reverse=True):
            if info.header_offset + _LOCAL_HEADER.size + info.compress_size > end:
                raise DataFileError(f"cannot read {path} as {WHAT}: its zip members overlap or run past the end "
                                    f"of the archive (member {info.filename}); the file is corrupt or crafted")
            self.bound[info.header_offset] = end
            end = info.header_offset
        try:
            import zstandard
            self.zstd = zstandard
            self.dctx = zstandard.ZstdDecompressor()
        except ImportError:  # Python 3.14+ decompresses zstd through zipfile itself
            self.zstd = None
        try:   # members are sliced from a memory map (no system call per member); a plain read otherwise
            import mmap
            self.view = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (ImportError, OSError, ValueError):
            self.view = None

    def _bytes(self, offset: int, length: int) -> bytes:
        if self.view is not None:
            return self.view[offset:offset + length]
        self.fh.seek(offset)
        return self.fh.read(length)

    def close(self):
        if self.view is not None:
            self.view.close()

    def _corrupt(self, name: str, why: str) -> DataFileError:
        return DataFileError(f"cannot read {self.path} as {WHAT}: member {name} {why}; the file is corrupt or was "
                             "altered")

    def read(self, name: str) -> bytes:
        info = self.by_name[name]
        size = info.file_size
        if size > MAX_MEMBER_BYTES:
            raise _too_big(self.path, name, _size(size))
        if info.flag_bits & 0x1:
            raise DataFileError(f"cannot read {self.path} as {WHAT}: member {name} is encrypted")
        head = self._bytes(info.header_offset, _LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
            raise self._corrupt(name, "has no zip header where the archive's directory puts it")
        n, m = _LOCAL_HEADER.unpack(head)[1:]
        start = info.header_offset + _LOCAL_HEADER.size + n + m
        if start + info.compress_size > self.bound[info.header_offset]:
            raise self._corrupt(name, "runs into the next member")
        raw = self._bytes(start, info.compress_size)
        data = None
        try:
            if info.compress_type == 0:
                data = raw
            elif info.compress_type == 8:
                d = zlib.decompressobj(-15)
                data = d.decompress(raw, size + 1)   # bounded: one byte past the header's size tells a lie
            elif info.compress_type == _ZSTD and self.zstd is not None and size > 0:
                declared = self.zstd.frame_content_size(raw)
                if declared not in (-1, size):   # the frame states its own size: it must be the header's
                    raise self._corrupt(name, f"says {declared} bytes in its zstd frame and {size} in its zip header")
                data = self.dctx.decompress(raw, max_output_size=size)
                if len(data) != size:   # several zstd frames (inspect writes them past 200 MiB): zipfile reads them
                    data = None
        except PerdocError:
            raise
        except Exception:  # zlib.error, ZstdError ("did not decompress full frame": more than the header says)
            raise self._corrupt(name, f"does not decompress to the {size} bytes its zip header declares") from None
        if data is None:
            data = self._read_through_zipfile(info, name)
        if len(data) != size:
            raise self._corrupt(name, f"decompresses to {'more' if len(data) > size else 'fewer'} than the {size} "
                                      "bytes its zip header declares")
        if zlib.crc32(data) != info.CRC:
            raise self._corrupt(name, "fails its CRC-32 check")
        return data

    def _read_through_zipfile(self, info, name: str) -> bytes:
        """Any other method (bzip2, lzma, multi-frame zstd), read by zipfile in bounded pieces: never more
        than MAX_MEMBER_BYTES + 1 bytes, whatever the header says."""
        out, total = [], 0
        try:
            with self.zf.open(info) as f:
                while True:
                    piece = f.read(1 << 20)
                    if not piece:
                        break
                    total += len(piece)
                    if total > MAX_MEMBER_BYTES:
                        raise _too_big(self.path, name, "more than its zip header says")
                    out.append(piece)
        except PerdocError:
            raise
        except Exception as e:
            raise self._corrupt(name, f"cannot be decompressed ({_first_line(e)})") from None
        return b"".join(out)

    def json(self, name: str):
        data = self.read(name)
        label = f"{self.path} (member {name})"
        line = deeper_than(data)
        if line is not None:
            raise depth_error(label, WHAT, line)
        try:
            # decoded first and the bytes let go, so a large member is held twice (text, then its parse)
            # rather than three times; the encoding detected as json.loads(bytes) detects it
            text = data.decode(json.detect_encoding(data))
            del data
            return json.loads(text)
        except UnicodeDecodeError:
            raise DataFileError(f"cannot read {label} as {WHAT}: it is not UTF-8 text") from None
        except json.JSONDecodeError as e:
            raise DataFileError(f"cannot read {label} as {WHAT}: invalid JSON at line {e.lineno} ({e.msg})") from None
        except RecursionError:
            raise depth_error(label, WHAT, 1) from None


def _size(n: int) -> str:
    if n < 2**20:
        return f"{n:,} bytes"
    return f"{n >> 20} MiB" if n % 2**20 == 0 else f"{n / 2**20:.1f} MiB"


def _too_big(path: str, name: str, size: str) -> DataFileError:
    return DataFileError(f"cannot read {path} as {WHAT}: member {name} is {size} uncompressed, over perdoc's limit "
                         f"of {_size(MAX_MEMBER_BYTES)} for one member of an .eval log")


def _header(log: dict, models, path: str) -> dict:
    """task, model, epochs, status, version and the dataset's sample ids, from the log's header fields
    (validated by inspect_ai's ``EvalLog`` when it is installed, as inspect's reader did)."""
    if models is not None:
        version = log.get("version")
        newest = models["version"]
        if newest is not None and isinstance(version, int) and not isinstance(version, bool) and version > newest:
            raise DataFileError(f"cannot read {path} as {WHAT}: it is log format version {version}; the installed "
                                f"inspect_ai reads up to version {newest} (pip install -U inspect-ai)")
        ev = models["EvalLog"].model_validate(log, context=models["context"]())
        return {"task": ev.eval.task, "model": ev.eval.model, "epochs": ev.eval.config.epochs,
                "status": ev.status, "version": ev.version, "sample_ids": ev.eval.dataset.sample_ids}
    if "eval" not in log:
        raise DataFileError(f"cannot read {path} as {WHAT}: no 'eval' header (is it an inspect_ai .json log?)")
    spec = log.get("eval") or {}
    spec = spec if isinstance(spec, dict) else {}
    config = spec.get("config") or {}
    return {"task": spec.get("task"), "model": spec.get("model"),
            "epochs": config.get("epochs") if isinstance(config, dict) else None,
            "status": log.get("status"), "version": log.get("version"), "sample_ids": None}


def _in_order(records: dict, head: dict) -> list:
    """The samples in the order inspect's streaming reader yielded them: each dataset sample id, each
    epoch 1..epochs, those present (a sample id is matched in string form, as inspect matches it)."""
    epochs = head.get("epochs") or 1
    return [records[(str(sid), e)] for sid in head["sample_ids"] for e in range(1, epochs + 1)
            if (str(sid), e) in records]


def _read_eval(path: str, shape: _Shape, models) -> tuple[list[dict], dict]:
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise DataFileError(f"cannot read {path}: {e.strerror or e}") from None
    with fh:
        z = _Zip(fh, path)
        try:
            return _read_members(z, path, shape, models)
        finally:
            z.close()


def _read_members(z: _Zip, path: str, shape: _Shape, models) -> tuple[list[dict], dict]:
    names = z.by_name
    if _HEADER in names:
        head = _header(z.json(_HEADER), models, path)
    elif _START in names:   # a log still being written (or one whose run crashed): the journal's start
        start = z.json(_START)
        start = start if isinstance(start, dict) else {}
        head = _header({k: start[k] for k in ("version", "eval", "plan") if k in start}, models, path)
        head["status"] = "started" if head["status"] is None else head["status"]
    else:
        raise DataFileError(f"cannot read {path} as {WHAT}: it has neither {_HEADER} nor {_START} (is it an "
                            "inspect_ai .eval log?)")

    def sample(name):
        raw = z.json(name)
        if not isinstance(raw, dict):
            raise DataFileError(f"cannot read {path} as {WHAT}: member {name} is not a JSON object")
        return shape.sample(raw, path, f"member {name}")

    if head["sample_ids"] is not None:
        epochs = head.get("epochs") or 1
        wanted = (f"{_SAMPLES_DIR}{sid}_epoch_{e}.json" for sid in head["sample_ids"] for e in range(1, epochs + 1))
        samples = [sample(name) for name in wanted if name in names]
    else:   # no sample ids in the header: every sample member, sorted as inspect sorts them
        samples = [sample(name) for name in names if name.startswith(_SAMPLES_DIR) and name.endswith(".json")]
        samples.sort(key=lambda s: (s["epoch"], s["id"] if isinstance(s["id"], str) else str(s["id"]).zfill(20)))
    return samples, head


def _read_json_log(path: str, shape: _Shape, models) -> tuple[list[dict], dict]:
    check_json_depth(path, WHAT)
    log, samples = {}, []
    try:
        with open(path, encoding="utf-8-sig") as fh:
            st = JsonStream(fh, path, WHAT, MAX_MEMBER_BYTES)
            if st.peek() != "{":
                raise DataFileError(f"cannot read {path} as {WHAT}: no 'eval' header (is it an inspect_ai .json log?)")
            for key in st.keys():
                if key == "samples" and st.peek() == "[":
                    for k, raw in enumerate(st.items(), start=1):
                        if not isinstance(raw, dict):
                            raise DataFileError(f"cannot read {path} as {WHAT}: sample {k} is not a JSON object")
                        samples.append(shape.sample(raw, path, f"sample {k}"))
                else:
                    log[key] = st.value()
            st.end()
    except UnicodeDecodeError:
        raise DataFileError(f"cannot read {path} as {WHAT}: it is not UTF-8 text") from None
    except OSError as e:
        raise DataFileError(f"cannot read {path}: {e.strerror or e}") from None
    if log.pop("samples", None) is not None:
        raise DataFileError(f"cannot read {path} as {WHAT}: its 'samples' is not a list")
    head = _header(log, models, path)
    if head["sample_ids"] is not None:
        first = {}
        for s in samples:
            first.setdefault((str(s.get("id")), s.get("epoch")), s)
        samples = _in_order(first, head)
    return samples, head


def _samples(path: str, fields=()) -> tuple[list[dict], dict]:
    """The samples as plain dicts (their kept fields), and the log's header (task, model, epochs)."""
    models = _models()
    if models is None and path.lower().endswith(".eval"):
        raise DataFileError(f"cannot read {path}: the .eval log format needs inspect_ai; pip install inspect-ai "
                            "(or perdoc[frameworks]), or write the log as .json (inspect log convert)")
    shape = _Shape(fields, models)
    reader = _read_eval if path.lower().endswith(".eval") else _read_json_log
    try:
        with no_gc():
            return reader(path, shape, models)
    except PerdocError:
        raise
    except Exception as e:  # a broken or foreign file (a header inspect_ai's models reject, ...): one line
        raise DataFileError(f"cannot read {path} as {WHAT}: {_first_line(e)}") from None


def read(source, fields: list[str]):
    path = check_file(source, WHAT)
    samples, head = _samples(path, fields)
    label = path
    if not samples:
        raise DataFileError(f"{path}: the inspect_ai log holds no samples (status: {head.get('status')}); "
                            "was it written with samples (log_samples)?")
    scorers = {}
    for s in samples:
        for name in (s.get("scores") or {}):
            scorers.setdefault(name, None)
    errored = [s for s in samples if s.get("error")]
    ok = [s for s in samples if not s.get("error")]

    def resolve(rec, field):
        v = lookup(rec, field)
        if not isinstance(v, Missing) and not field.startswith("scores."):
            return v
        name, rest = _scorer_of(field, scorers)
        if name is None:
            return v
        sc = (rec.get("scores") or {}).get(name)
        if sc is None:
            return Missing(f"no score from scorer '{name}'")
        value = sc.get("value") if isinstance(sc, dict) else sc
        if rest:
            value = lookup(value, rest) if isinstance(value, dict) else Missing(f"no '{field}'")
            if isinstance(value, Missing):
                return Missing(f"no '{rest}' in the value of scorer '{name}'")
        if is_missing(value):
            return Missing(f"no score from scorer '{name}'")
        return score_to_float(value)

    paths = known_paths(samples) + [n for n in scorers]
    df, exclusions = project(ok, fields, resolve, label, paths=paths)
    if errored:
        from ..table import Exclusion
        first = str((errored[0].get("error") or {}).get("message", "")).strip().splitlines()
        why = f" (e.g. {first[0][:80]})" if first else ""
        exclusions.insert(0, Exclusion(len(errored), f"sample errored in inspect_ai{why}"))
    epochs = sorted({s.get("epoch") for s in samples if s.get("epoch") is not None})
    ids = {s.get("id") for s in samples}
    notes = [
        f"inspect_ai log {os.path.basename(path)}: task {head.get('task')}, model {head.get('model')}, "
        f"{len(ids)} sample(s) x {len(epochs) or 1} epoch(s), {len(samples)} sample-epoch record(s)",
    ]
    used = [f for f in fields if _scorer_of(f, scorers)[0] is not None and isinstance(lookup(ok[0] if ok else {}, f), Missing)]
    if used or any(f.startswith("scores.") for f in fields):
        notes.append(MAPPING_NOTE)
    if head.get("status") not in (None, "success"):
        notes.append(f"the log's status is {head.get('status')}: the run did not finish, so samples it never "
                     "reached are absent (neither measured nor counted as excluded)")
    if len(epochs) > 1:
        notes.append(f"one row per sample and epoch: each of the {len(epochs)} epochs is a measurement of the "
                     "document (epochs are not averaged per sample first)")
    notes.append("samples (and epochs within a sample) are a further stage of sampling inside each document; "
                 "that clustering is not modelled separately: the intervals cluster on documents, which "
                 "already allows any correlation within a document (conservative, as documents are the "
                 "sampled units)")
    return df, exclusions, notes


def _scorer_of(field: str, scorers: dict):
    """(scorer name, key inside its value) a field names, or (None, None)."""
    f = field[len("scores."):] if field.startswith("scores.") else field
    if f in scorers:
        return f, ""
    head, _, rest = f.partition(".")
    if head in scorers:
        return head, rest
    return None, None
