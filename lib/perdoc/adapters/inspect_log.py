"""inspect_ai evaluation logs (``.eval`` and ``.json``): one row per sample and epoch.

Fields are dotted paths into a sample (``id``, ``epoch``, ``target``, ``metadata.<key>``, ...) or
name a scorer: ``match`` (or ``scores.match``) is that scorer's value, mapped to a number as
inspect's own ``value_to_float`` does (C = 1, I = 0, P = 0.5, N = 0, yes/true = 1, no/false = 0,
numbers as they are); ``match.<key>`` takes one key of a scorer whose value is a mapping.
"""

from __future__ import annotations

import math
import os

from ..errors import DataFileError
from ._core import Missing, check_file, is_missing, known_paths, lookup, project, read_json

WHAT = "an inspect_ai log"
MAPPING_NOTE = ("inspect_ai scores mapped to numbers as inspect's value_to_float does: C (correct) = 1, "
                "I (incorrect) = 0, P (partial) = 0.5, N (no answer) = 0, yes/true = 1, no/false = 0, "
                "numbers as they are")
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


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


def _samples(path: str) -> tuple[list[dict], dict]:
    """The samples as plain dicts, and the log's header (task, model, epochs)."""
    keep = {"id", "epoch", "target", "metadata", "scores", "error", "input"}
    try:
        from inspect_ai.log import read_eval_log, read_eval_log_samples
    except ImportError:
        read_eval_log = None
    if read_eval_log is not None:
        try:
            log = read_eval_log(path, header_only=True)
            # stream the samples, without the transcripts (events, messages) a large log is made of
            heavy = {"events", "messages", "attachments", "store", "output"}
            try:
                try:
                    stream = read_eval_log_samples(path, all_samples_required=False, exclude_fields=heavy)
                except TypeError:  # older inspect_ai: no exclude_fields
                    stream = read_eval_log_samples(path, all_samples_required=False)
                samples = [s.model_dump(mode="json", include=keep) for s in stream]
            except Exception:  # a header without sample ids cannot be streamed: read the whole log
                samples = [s.model_dump(mode="json", include=keep) for s in (read_eval_log(path).samples or [])]
        except Exception as e:  # a broken or foreign file: one line, naming it
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise DataFileError(f"cannot read {path} as {WHAT}: {first[:200]}") from None
        head = {"task": log.eval.task, "model": log.eval.model, "epochs": log.eval.config.epochs,
                "status": log.status, "version": log.version}
        return samples, head
    if path.lower().endswith(".eval"):
        raise DataFileError(f"cannot read {path}: the .eval log format needs inspect_ai; pip install inspect-ai "
                            "(or perdoc[frameworks]), or write the log as .json (inspect log convert)")
    raw = read_json(path, WHAT)
    if not isinstance(raw, dict) or "eval" not in raw:
        raise DataFileError(f"cannot read {path} as {WHAT}: no 'eval' header (is it an inspect_ai .json log?)")
    spec = raw.get("eval") or {}
    samples = [{k: v for k, v in s.items() if k in keep} for s in (raw.get("samples") or [])]
    head = {"task": spec.get("task"), "model": spec.get("model"), "epochs": (spec.get("config") or {}).get("epochs"),
            "status": raw.get("status"), "version": raw.get("version")}
    return samples, head


def read(source, fields: list[str]):
    path = check_file(source, WHAT)
    samples, head = _samples(path)
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
