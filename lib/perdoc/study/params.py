"""Study parameters: one YAML file per dataset (``params/<name>.yaml``), validated up front.

Every problem is reported in one line that names the file and the key::

    params/example.yaml: unknown key 'desing' (did you mean 'design'?)
    params/example.yaml: missing required key 'design.population'
    params/example.yaml: key 'intervals.level' must be a number, got str '0.95x'

No estimand, no report: the estimand (micro or macro, and why) is declared before any number is
computed, because which mean answers the question does not depend on the data.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import numbers
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import PerdocError
from ..messages import Message, register_yaml

register_yaml()   # PyYAML writes perdoc's messages as plain strings

__all__ = ["ParamsError", "OverrideError", "Study", "load_params", "parse_overrides", "apply_overrides", "check_name",
           "DEFAULT_OUT_OF_SCOPE", "SAMPLING_DESIGNS"]

SAMPLING_DESIGNS = ("srs", "census", "stratified", "two_stage", "drawn")
#: The languages a report is written in (params key report.language).
LANGUAGES = {"en": "English", "es": "Español"}
ESTIMANDS = ("micro", "macro")

DEFAULT_OUT_OF_SCOPE = (
    Message("caveat.index", "The index is fixed: chunking, embeddings and index settings are not sampled, so the "
            "intervals say nothing about another index build."),
    Message("caveat.retriever", "The retriever and its configuration are fixed: the intervals do not cover other "
            "retrievers, parameters or versions."),
    Message("caveat.questions", "The questions (queries) are taken as given: the population of questions users "
            "would ask is not sampled, so the intervals do not cover question-to-question variation beyond these."),
)


class ParamsError(PerdocError):
    """A params file is missing, is not valid YAML, or breaks the schema."""


class OverrideError(ParamsError):
    """An override (``perdoc report --set KEY=VALUE``) names an unknown key or gives a value the schema
    refuses, while the params file itself is valid: the command line is wrong, not the file."""


@dataclass(frozen=True)
class TrecSpec:
    """``data.trec``: a TREC run scored against qrels by ir-measures, queries mapped to documents."""

    run: Path               # absolute, resolved against the params file's folder (as are the others)
    qrels: Path
    measure: str            # any measure ir-measures parses: nDCG@10, RR, P@5, R@100, AP, ...
    doc_map: Path           # two columns: query id, document id
    compare_run: Path | None = None


@dataclass(frozen=True)
class DataSpec:
    path: Path | None       # absolute, resolved against the params file's folder (data.trec: the run);
    #                         None for data.backend (a table of a database, not a file)
    doc: str
    score: str | None = None
    n: str | None = None     # pre-aggregated input
    s: str | None = None
    q: str | None = None
    compare_to: str | None = None   # the system compared with data.score (the first of a list)
    format: str | None = None       # a name of perdoc.reading.formats (csv, ..., inspect, ...); None: by the extension
    metric: str | None = None       # declared kind of score: binary, proportion or score (default: inferred)
    allow_similar_ids: bool = False  # keep ids that differ only in spaces, case or Unicode form apart
    trec: TrecSpec | None = None     # a TREC run + qrels instead of a data file (doc and score columns set)
    engine: str | None = None        # duckdb (default) or spark: what reads and aggregates the file
    backend: dict | None = None      # {url, table}: a table of an Ibis backend instead of a file (a relative
    #                                  duckdb:// path resolved against the params file's folder)
    compare_more: tuple[str, ...] = ()  # data.compare_to as a list: the columns after the first
    judge: str | None = None         # an automatic judge's score column on the labelled rows (data.score: the gold)
    judge_file: Path | None = None   # the judge's scores on every chunk of every population document
    judge_sample: Path | None = None  # or on documents that were not labelled (a sample of their own)
    judge_compare_to: str | None = None  # the judge's column for data.compare_to (a judge-assisted comparison)

    @property
    def aggregated(self) -> bool:
        return self.n is not None

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system of the study: data.score, then each column of data.compare_to (just the score
        without a comparison)."""
        compared = () if self.compare_to is None else (self.compare_to, *self.compare_more)
        return (self.score, *compared) if self.score is not None else compared


@dataclass(frozen=True)
class Design:
    population: str
    sampling: str = "srs"
    population_size: int | None = None
    strata_column: str | None = None          # stratified: the column naming each document's stratum
    strata_sizes: dict | None = None          # stratified: {stratum: M_h}
    chunks_in_doc: str | None = None          # two_stage: column with N_d, the chunks in the document
    frame: str | None = None                  # sizes of every population document: a file, or "census"
    sample: str | None = None                 # drawn: the manifest of perdoc sample (as written)
    nonresponse: bool = False                 # drawn: unlabelled units of the manifest counted as nonresponse

    def as_engine_dict(self, table) -> dict:
        """The ``design`` argument of :func:`perdoc.estimate_design` for a loaded table."""
        out = {"sampling": self.sampling, "population_size": self.population_size}
        if self.sampling == "stratified":
            out["strata"] = {"by": table.attrs["stratum"], "population_sizes": dict(self.strata_sizes)}
        if self.sampling == "two_stage":
            out["chunks_in_doc"] = table.attrs["chunks_in_doc"]
        return out


@dataclass(frozen=True)
class Estimand:
    kind: str
    why: str


@dataclass(frozen=True)
class IntervalSpec:
    level: float = 0.95
    replicates: int = 9999
    seed: int = 1


@dataclass(frozen=True)
class Planning:
    half_width: float | None = None
    strata_threshold: float | None = None     # None with strata_k set: search the threshold
    strata_k: int | None = None
    strata_allocation: str = "equal"
    design: "DesignPlanSpec | None" = None     # planning.design: compare drawn designs on the census or frame
    difference_half_width: float | None = None  # target half-width of the paired difference score - compare_to


@dataclass(frozen=True)
class DesignPlanSpec:
    """``planning.design``: which designs the report compares (``perdoc plan --frame``) and at what
    label budget (default: the labels of this study)."""
    budget: float | None = None
    cost_doc: float = 0.0
    cost_chunk: float = 1.0
    designs: tuple = ("srs", "pps")
    takes: tuple = (None,)
    ks: tuple = (5, 10, 20, 40)
    reps: int = 200
    seed: int = 1


@dataclass(frozen=True)
class Simulation:
    k: int | None = None       # None: the study's K
    reps: int = 2000
    seed: int = 1
    replicates: int = 999


@dataclass(frozen=True)
class Study:
    """A validated params file."""

    name: str
    title: str
    data: DataSpec
    design: Design
    estimand: Estimand
    intervals: IntervalSpec
    out_of_scope: tuple[str, ...]
    out_of_scope_given: bool
    params_path: Path | None
    raw: dict = field(repr=False, default_factory=dict)
    census: Path | None = None            # the population (or a larger pilot), same columns as data
    planning: Planning = field(default_factory=Planning)
    simulation: Simulation | None = None  # coverage simulation on the census
    description: str | None = None        # free text about the study, shown under the title
    out_of_scope_user: tuple[str, ...] = ()   # the params file's own out_of_scope entries
    out_of_scope_defaults: tuple[str, ...] = DEFAULT_OUT_OF_SCOPE  # the defaults kept (empty: turned off)
    language: str = "en"                  # the report's language (report.language): en or es
    overrides: dict = field(default_factory=dict)  # {dotted key: value} applied over the file (--set)

    def to_dict(self) -> dict[str, Any]:
        """The parameters as written in summary.json (paths as given, relative to the YAML), with any
        overrides applied (the overrides themselves are listed apart, see ``overrides``)."""
        d = asdict(self)
        if d["design"].get("frame") is None:
            d["design"].pop("frame", None)
        if d["design"].get("sample") is None:
            d["design"].pop("sample", None)
            d["design"].pop("nonresponse", None)
        d.pop("raw")
        d.pop("overrides")
        more = d["data"].pop("compare_more", ())
        if more:   # data.compare_to as a list (one column: the name, as before lists were allowed)
            d["data"]["compare_to"] = [self.data.compare_to, *more]
        if d["planning"].get("difference_half_width") is None:
            d["planning"].pop("difference_half_width", None)
        d["data"]["path"] = (None if self.data.path is None else
                             str(self.raw.get("data", {}).get("path", self.data.path)))
        if self.data.backend is not None:   # as written, without its secrets (perdoc.redact)
            from ..redact import redact_url
            written = (self.raw.get("data", {}).get("backend") or {}).get("url", self.data.backend["url"])
            d["data"]["backend"] = {"url": redact_url(written), "table": self.data.backend["table"]}
        if self.data.trec is not None:
            d["data"]["path"] = str(self.raw["data"]["trec"]["run"])
            d["data"]["trec"] = {k: (None if v is None else str(v)) for k, v in self.raw["data"]["trec"].items()}
        d["census"] = None if self.census is None else str(self.raw["census"]["path"])
        for key in ("judge", "judge_file", "judge_sample", "judge_compare_to"):   # as written; absent without
            if d["data"].get(key) is None:
                d["data"].pop(key, None)
            elif key not in ("judge", "judge_compare_to"):
                d["data"][key] = str(self.raw["data"][key]).strip()
        if d["design"].get("frame") is not None:  # as written (a report reads a copy of the file)
            d["design"]["frame"] = str(self.raw["design"]["frame"]).strip()
        if d["design"].get("sample") is not None:  # as written (a report reads a copy of the manifest)
            d["design"]["sample"] = str(self.raw["design"]["sample"]).strip()
        d["params_path"] = None if self.params_path is None else self.params_path.name
        d["out_of_scope"] = list(self.out_of_scope)
        return d


# ---------------------------------------------------------------------------------------- schema
# key -> (type, required); nested dicts are schemas themselves
_STR, _INT, _NUM, _LIST = "a string", "an integer", "a number", "a list of strings"
_BOOL = "true or false"
_STR_OR_LIST = "a string or a list of strings"
SCHEMA: dict[str, Any] = {
    "name": (_STR, True),
    "title": (_STR, False),
    "data": ({
        "path": (_STR, False),   # required unless data.trec is given
        "doc": (_STR, False),    # required unless data.trec is given
        "trec": ({
            "run": (_STR, True),
            "qrels": (_STR, True),
            "measure": (_STR, True),
            "doc_map": (_STR, True),
            "compare_run": (_STR, False),
        }, False),
        "score": (_STR, False),
        "n": (_STR, False),
        "s": (_STR, False),
        "q": (_STR, False),
        "compare_to": (_STR_OR_LIST, False),   # one column, or several (every pair, a leaderboard)
        "judge": (_STR, False),                # an automatic judge's column beside the gold (data.score)
        "judge_file": (_STR, False),           # the judge on every population chunk
        "judge_sample": (_STR, False),         # or on unlabelled documents
        "judge_compare_to": (_STR, False),     # the judge's column for data.compare_to (system B)
        "format": (_STR, False),
        "metric": (_STR, False),
        "allow_similar_ids": ("true or false", False),
        "engine": (_STR, False),
        "backend": ({
            "url": (_STR, True),
            "table": (_STR, True),
        }, False),
    }, True),
    "design": ({
        "population": (_STR, True),
        "population_size": (_INT, False),
        "sampling": (_STR, False),
        "strata": (dict, False),
        "chunks_in_doc": (_STR, False),
        "frame": (_STR, False),
        "sample": (_STR, False),
        "nonresponse": (_BOOL, False),
    }, True),
    "estimand": ({
        "kind": (_STR, True),
        "why": (_STR, True),
    }, True),
    "intervals": ({
        "level": (_NUM, False),
        "replicates": (_INT, False),
        "seed": (_INT, False),
    }, False),
    "out_of_scope": (_LIST, False),
    "out_of_scope_defaults": (_BOOL, False),
    "description": (_STR, False),
    "census": ({
        "path": (_STR, True),
    }, False),
    "planning": ({
        "half_width": (_NUM, False),
        "difference_half_width": (_NUM, False),
        "strata": ({
            "threshold": (_NUM, False),
            "k": (_INT, False),
            "allocation": (_STR, False),
        }, False),
        "design": ({
            "budget": (_NUM, False),
            "cost_doc": (_NUM, False),
            "cost_chunk": (_NUM, False),
            "designs": (_LIST, False),
            "takes": (list, False),
            "ks": (list, False),
            "reps": (_INT, False),
            "seed": (_INT, False),
        }, False),
    }, False),
    "report": ({
        "language": (_STR, False),
    }, False),
    "simulation": ({
        "k": (_INT, False),
        "reps": (_INT, False),
        "seed": (_INT, False),
        "replicates": (_INT, False),
    }, False),
}


#: The rule behind refusing YAML anchors and aliases: a few hundred bytes of nested aliases expand
#: to a value of billions of items for whatever walks it (a repr, a copy, a check of every item).
NO_ALIASES = ("YAML anchors and aliases (&name, *name, <<: *name) are not allowed in params: a few aliases "
              "can stand for billions of values; write each value out")
#: Deeper nesting than any params value needs is refused before Python's recursion limit is reached.
MAX_YAML_DEPTH = 64


class YamlAliasError(yaml.YAMLError):
    """An anchor or alias met while composing params YAML (``where``: the key path; ``line``: 1-based)."""

    def __init__(self, where: str, line: int):
        super().__init__(f"line {line}: {where or 'the document'}")
        self.where, self.line = where, line


class YamlDepthError(yaml.YAMLError):
    """Params YAML nested deeper than :data:`MAX_YAML_DEPTH` (``line``: 1-based, where it got too deep)."""

    def __init__(self, line: int):
        super().__init__(f"line {line}: nested deeper than {MAX_YAML_DEPTH} levels")
        self.line = line


class YamlDuplicateKeyError(yaml.YAMLError):
    """A key given twice in one mapping of params YAML (YAML would keep the last one silently)."""

    def __init__(self, key: str, line: int, first: int):
        super().__init__(f"line {line}: key {key!r} is given twice (first at line {first})")
        self.key, self.line, self.first = key, line, first


class _ParamsLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader that refuses anchors and aliases, and nesting deeper than MAX_YAML_DEPTH,
    while composing: before any value is built, so nothing can walk an expanded value."""

    def __init__(self, stream):
        super().__init__(stream)
        self._where: list[str] = []

    def compose_node(self, parent, index):
        if isinstance(index, yaml.ScalarNode):
            part = "." + index.value
        elif isinstance(index, int) and not isinstance(index, bool):
            part = f"[{index}]"
        else:  # a mapping key, or the document itself
            part = ""
        self._where.append(part)
        try:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                where = "".join(self._where).lstrip(".")
                raise YamlAliasError(_brief(where, 60, quote=False), event.start_mark.line + 1)
            if len(self._where) > MAX_YAML_DEPTH:
                raise YamlDepthError(event.start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._where.pop()

    #: Whether a key given twice in a mapping is refused (:class:`YamlDuplicateKeyError`).
    unique_keys = True

    def construct_mapping(self, node, deep=False):
        if self.unique_keys and isinstance(node, yaml.MappingNode):
            seen = {}
            for key_node, _ in node.value:   # (keys as loaded: 1 and '1' differ, true and yes do not)
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node, deep=False)
                try:
                    first = seen.get(key)
                except TypeError:
                    continue
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise YamlDuplicateKeyError(str(key_node.value), line, first)
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_yaml(text: str):
    """``text`` read as params YAML: safe types only, no anchors or aliases (:class:`YamlAliasError`),
    no nesting deeper than :data:`MAX_YAML_DEPTH` (:class:`YamlDepthError`); other problems raise
    ``yaml.YAMLError`` or ValueError (a value YAML reads but Python cannot hold, e.g. a 5000-digit
    integer or the date 2025-13-45)."""
    loader = _ParamsLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_params(path, overrides=None) -> Study:
    """Read and validate a params YAML file; relative data paths resolve against its folder.

    ``overrides`` changes keys of the file before it is validated: a mapping ``{dotted key: value}``
    (``{"intervals.level": 0.9}``) or a list of ``"KEY=VALUE"`` texts as ``perdoc report --set`` takes
    them (see :func:`parse_overrides`). The result is validated by the same schema as the file; an
    unknown key, or a value the schema refuses while the file alone is valid, raises
    :class:`OverrideError`. The study records the overrides (``Study.overrides``).
    """
    path = Path(path)
    label = str(path)
    if not path.exists():
        raise ParamsError(f"params file not found: {label}")
    if path.is_dir():
        raise ParamsError(f"{label} is a directory, not a params file")
    try:
        raw = read_yaml(path.read_text(encoding="utf-8"))
    except YamlAliasError as e:
        where = f", key '{e.where}'" if e.where else ""
        raise ParamsError(f"{label}: line {e.line}{where}: {NO_ALIASES}") from None
    except YamlDepthError as e:
        raise ParamsError(f"{label}: not valid params YAML at line {e.line}: nested deeper than "
                          f"{MAX_YAML_DEPTH} levels") from None
    except YamlDuplicateKeyError as e:
        raise ParamsError(f"{label}: line {e.line}: key '{_brief(e.key, 60, quote=False)}' is given twice (first "
                          f"at line {e.first}); give each key once (YAML would keep the last one silently)") from None
    except ValueError as e:
        raise ParamsError(f"{label}: not valid YAML: {_brief(str(e).split(';')[0], 120, quote=False)}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or "invalid YAML"
        raise ParamsError(f"{label}: not valid YAML{where}: {problem}") from None
    except UnicodeDecodeError:
        raise ParamsError(f"{label}: not UTF-8 text") from None
    base = path.resolve().parent
    if not overrides:
        return parse_params(raw, base=base, label=label, params_path=path)
    changes = parse_overrides(overrides)
    try:
        study = parse_params(apply_overrides(raw, changes), base=base, label=label, params_path=path)
    except ParamsError as err:
        try:
            parse_params(raw, base=base, label=label, params_path=path)
        except ParamsError:
            raise err from None  # the file itself is invalid: its own problem comes first
        shown = ", ".join(f"--set {k}={_brief(_scalar_text(v), 60, quote=False)}" for k, v in changes.items())
        raise OverrideError(str(err).replace(f"{label}: ", f"{label} with {shown}: ", 1)) from None
    return dataclasses.replace(study, overrides=changes)


def parse_overrides(overrides) -> dict[str, Any]:
    """``{dotted key: value}`` from a mapping or from ``"KEY=VALUE"`` texts, every key checked against
    the schema (an unknown key: :class:`OverrideError` naming it, with the closest known key).

    A text VALUE is read as a YAML scalar (``0.9``, ``500``, ``true``, ``null``, ``"quoted"``, a flow
    list ``[a, b]``); for a key whose schema type is a string the text is taken as written when YAML
    would read something else (``--set title=2026`` is the title "2026"). A later override of the
    same key replaces an earlier one.
    """
    pairs = []
    if isinstance(overrides, dict):
        pairs = [(str(k).strip(), v, False) for k, v in overrides.items()]
    else:
        for text in overrides:
            if not isinstance(text, str) or "=" not in text:
                raise OverrideError(f"--set {text!r}: expected KEY=VALUE, a dotted params key and its value "
                                    "(e.g. --set intervals.level=0.9)")
            key, value = text.split("=", 1)
            pairs.append((key.strip(), value, True))
    out: dict[str, Any] = {}
    for key, value, is_text in pairs:
        kind = _schema_kind(key)
        if is_text:
            value = _read_value(key, value, kind)
        out.pop(key, None)
        out[key] = value
    return out


def apply_overrides(raw, changes: dict[str, Any]):
    """A copy of the raw params mapping with each ``{dotted key: value}`` set (missing mappings on the
    way are created). A raw document that is not a mapping is returned as it is (the file's own
    error is then reported)."""
    if not isinstance(raw, dict):
        return raw
    out = copy.deepcopy(raw)
    for key, value in changes.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            if node.get(part) is None:
                node[part] = {}
            node = node[part]
            if not isinstance(node, dict):
                break  # the file's own value there is not a mapping: parse_params names it
        else:
            node[parts[-1]] = value
    return out


def _schema_kind(key: str):
    """The schema type of a dotted key (None under a free-form mapping such as design.strata); an
    unknown key or a key below a plain value is an :class:`OverrideError` naming it."""
    if not key or any(not part for part in key.split(".")):
        raise OverrideError(f"--set {key!r}=...: the key must be a dotted params key such as intervals.level")
    schema: Any = SCHEMA
    parts = key.split(".")
    for i, part in enumerate(parts):
        prefix = ".".join(parts[:i])
        if schema is None:          # inside a free-form mapping: the schema check after applying decides
            continue
        if part not in schema:
            close = difflib.get_close_matches(part, list(schema), n=1)
            where = f"{prefix}." if prefix else ""
            hint = f" (did you mean '{where}{close[0]}'?)" if close else \
                f" (known keys: {', '.join(where + k for k in schema)})"
            raise OverrideError(f"--set {key}: unknown key '{where}{part}'{hint}")
        kind = schema[part][0]
        if i < len(parts) - 1 and not isinstance(kind, dict) and kind is not dict:
            raise OverrideError(f"--set {key}: key '{'.'.join(parts[:i + 1])}' is {kind}, not a mapping of keys")
        schema = kind if isinstance(kind, dict) else None
    return kind


def _read_value(key: str, text: str, kind):
    """The value of ``--set KEY=TEXT``: TEXT read as YAML; string keys keep the text as written."""
    try:
        value = read_yaml(text)
    except (yaml.YAMLError, ValueError) as e:
        if kind in (_STR, _STR_OR_LIST):
            return text.strip()
        shown = _brief(text, 40, quote=False)
        if isinstance(e, YamlAliasError):
            raise OverrideError(f"--set {key}={shown}: {NO_ALIASES}") from None
        if isinstance(e, YamlDepthError):
            raise OverrideError(f"--set {key}={shown}: the value is nested deeper than {MAX_YAML_DEPTH} levels") \
                from None
        raise OverrideError(f"--set {key}={shown}: the value is not valid YAML") from None
    if kind in (_STR, _STR_OR_LIST) and value is not None and not isinstance(value, (str, dict, list)):
        return text.strip()
    return value


def _scalar_text(value) -> str:
    """An override's value as it would be typed on the command line."""
    if isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True, width=1 << 16).strip().removesuffix("\n...").strip()


NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
#: The longest report name, in bytes (ASCII: characters): a file name may have 255 bytes, and perdoc's
#: temporary folder ``.perdoc-tmp-<name>-<pid>-<random>`` and lock file add up to 40 to the name.
NAME_MAX = 128


def check_name(name, label: str = "name") -> str:
    """``name`` if it is a valid report folder name (params ``name:``, ``perdoc report --name``), else a
    one-line :class:`ParamsError` naming ``label``."""
    if not isinstance(name, str) or not re.fullmatch(NAME_PATTERN, name):
        raise ParamsError(f"{label} must be a folder name of letters, digits, '_', '-' or '.' (got {name!r})")
    if len(name.encode("utf-8")) > NAME_MAX:
        raise ParamsError(f"{label} must be at most {NAME_MAX} characters: it names a folder, and file names "
                          f"are limited in length (got {len(name)} characters: {name[:24]}...)")
    return name


def _engine_keys(d: dict, label: str, base: Path | None = None) -> dict:
    """``data.engine`` (duckdb or spark) and ``data.backend`` ({url, table}), checked; a relative
    database file in a ``duckdb://`` URL is resolved against ``base`` (the params file's folder)."""
    engine = d.get("engine")
    if engine is not None and engine.lower() not in ("duckdb", "spark"):
        raise ParamsError(f"{label}: key 'data.engine' must be duckdb or spark (got {engine!r})")
    backend = d.get("backend")
    if backend is not None and engine is not None:
        raise ParamsError(f"{label}: give either 'data.engine' (how to read data.path) or 'data.backend' "
                          "(a table elsewhere), not both")
    if backend is not None and d.get("format") is not None:
        raise ParamsError(f"{label}: key 'data.format' names a file's format; data.backend reads a table")
    url = None
    if backend is not None:
        from ..reading.engines import resolve_backend_url
        url = resolve_backend_url(backend["url"], base)
    return {"engine": None if engine is None else engine.lower(),
            "backend": None if backend is None else {"url": url, "table": backend["table"]}}


def parse_params(raw, *, base: Path, label: str = "params", params_path: Path | None = None) -> Study:
    """Validate an already parsed params mapping (``base`` resolves relative data paths)."""
    _check_top(raw, label)
    name = check_name(raw["name"], f"{label}: key 'name'")
    data = _data_spec(raw["data"], base, label)
    design = _design_spec(raw, data, label)
    estimand = _estimand_spec(raw["estimand"], design, label)
    intervals = _interval_spec(raw.get("intervals") or {}, label)
    census = _census_path(raw, data, base, label)
    planning = _planning_spec(raw.get("planning") or {}, label, census is not None,
                              census is not None or design.frame is not None, data.compare_to is not None)
    simulation = _simulation_spec(raw.get("simulation"), census is not None, label)

    user = _texts(raw.get("out_of_scope") or ())
    defaults = DEFAULT_OUT_OF_SCOPE if raw.get("out_of_scope_defaults", True) is not False else ()
    user = tuple(t for t in user if t not in defaults)  # a default repeated in the file is listed once
    description = " ".join(str(raw.get("description") or "").split()) or None
    language = (raw.get("report") or {}).get("language", "en")
    if language not in LANGUAGES:
        raise ParamsError(f"{label}: key 'report.language' must be one of {', '.join(LANGUAGES)} "
                          f"(got {_show(language)})")
    return Study(
        name=name, title=raw.get("title") or name, data=data, design=design, estimand=estimand,
        intervals=intervals, out_of_scope=defaults + user, out_of_scope_given=bool(user),
        params_path=params_path, raw=raw, census=census, planning=planning, simulation=simulation,
        description=description, out_of_scope_user=user, out_of_scope_defaults=defaults,
        language=language,
    )


def _check_top(raw, label: str) -> None:
    """The whole document checked against the schema: a mapping, no unknown key, an estimand declared,
    every value of its schema type."""
    if raw is None:
        raise ParamsError(f"{label}: the file is empty; it needs at least name, data, design and estimand")
    if not isinstance(raw, dict):
        raise ParamsError(f"{label}: the top level must be a mapping of keys (name, data, design, ...)")
    _check_unknown(raw, SCHEMA, label, prefix="")  # a misspelt key is named before anything it hides
    if "estimand" not in raw or raw.get("estimand") in (None, {}, ""):
        raise ParamsError(f"{label}: no estimand declared: add estimand.kind (micro or macro) and "
                          "estimand.why; the estimand is decided from the question before computing, "
                          "never after seeing the numbers")
    _check(raw, SCHEMA, label, prefix="")


def _data_spec(d: dict, base: Path, label: str) -> DataSpec:
    """``data``: where the scores are (a file, a TREC run or a database table) and which columns hold them."""
    trec = None
    if d.get("trec") is not None:
        trec, d = _trec_data(d, base, label)
    if d.get("backend") is not None and d.get("path") is not None:
        raise ParamsError(f"{label}: give either 'data.path' (a file) or 'data.backend' (a table of a database), "
                          "not both")
    for key in ("path", "doc") if d.get("backend") is None else ("doc",):
        if d.get(key) is None:
            raise ParamsError(f"{label}: missing required key 'data.{key}'")
    has_score, has_agg = "score" in d, ("n" in d or "s" in d)
    if has_score == has_agg:
        raise ParamsError(f"{label}: key 'data' needs either 'score' (one row per chunk) or 'n' and 's' "
                          "(one row per document), not both and not neither")
    if has_agg and not ("n" in d and "s" in d):
        raise ParamsError(f"{label}: key 'data' with a per-document table needs both 'n' and 's'")
    if "compare_to" in d and not has_score:
        raise ParamsError(f"{label}: key 'data.compare_to' needs per-chunk rows ('data.score')")
    data_path = None   # data.backend: a table of a database, no file
    if d.get("backend") is None:
        data_path = Path(d["path"])
        if not data_path.is_absolute():
            data_path = (base / data_path).resolve()
    data_format = _data_format(d, label)
    metric = d.get("metric")
    if metric is not None and metric not in ("binary", "proportion", "score"):
        raise ParamsError(f"{label}: key 'data.metric' must be binary, proportion or score (got {metric!r})")
    similar = d.get("allow_similar_ids")
    if similar is not None and not isinstance(similar, bool):
        raise ParamsError(f"{label}: key 'data.allow_similar_ids' must be true or false, got {_show(similar)}")
    compared = _compare_columns(d.get("compare_to"), d.get("score"), label)
    return DataSpec(path=data_path, doc=d["doc"], score=d.get("score"), n=d.get("n"), s=d.get("s"),
                    q=d.get("q"), compare_to=compared[0] if compared else None, compare_more=compared[1:],
                    format=data_format, metric=metric, allow_similar_ids=bool(similar), trec=trec,
                    **_engine_keys(d, label, base), **_judge_keys(d, base, label, trec))


def _judge_keys(d: dict, base: Path, label: str, trec) -> dict:
    """``data.judge`` with ``data.judge_file`` or ``data.judge_sample`` (paths resolved against the
    params file's folder), checked: one of the two files, a judge column other than the gold's, and
    per-chunk rows of a file (the judge-assisted estimate reads the labelled chunks)."""
    judge, jf, js = d.get("judge"), d.get("judge_file"), d.get("judge_sample")
    jvs = d.get("judge_compare_to")
    if judge is None:
        if jf is not None or js is not None or jvs is not None:
            key = "judge_file" if jf is not None else "judge_sample" if js is not None else "judge_compare_to"
            raise ParamsError(f"{label}: key 'data.{key}' goes with 'data.judge' (the judge's score column)")
        return {}
    if jvs is not None:
        compared = d.get("compare_to")
        if compared is None or isinstance(compared, list) and len(compared) != 1:
            raise ParamsError(f"{label}: key 'data.judge_compare_to' needs one column in 'data.compare_to' (the system "
                              "it judges)")
        if jvs == judge or jvs in (d.get("score"), compared if isinstance(compared, str) else compared[0]):
            raise ParamsError(f"{label}: key 'data.judge_compare_to' must name another column than 'data.judge', "
                              "'data.score' and 'data.compare_to'")
    if (jf is None) == (js is None):
        raise ParamsError(f"{label}: key 'data.judge' needs one of 'data.judge_file' (the judge on every population "
                          "chunk) or 'data.judge_sample' (the judge on unlabelled documents)")
    if d.get("score") is None or judge == d.get("score"):
        raise ParamsError(f"{label}: key 'data.judge' must name another column than 'data.score' (the gold labels)")
    for key in ("trec", "backend", "n"):
        if (trec if key == "trec" else d.get(key)) is not None:
            raise ParamsError(f"{label}: key 'data.judge' reads per-chunk rows of a file, not 'data.{key}'")

    def path(v):
        p = Path(v)
        return p if p.is_absolute() else (base / p).resolve()
    return {"judge": judge, "judge_file": None if jf is None else path(jf),
            "judge_sample": None if js is None else path(js), "judge_compare_to": jvs}


def _compare_columns(value, score: str | None, label: str) -> tuple[str, ...]:
    """``data.compare_to`` as a tuple of columns (empty without it): one column, or a list of them
    (each named once, none of them data.score; a list of one column is that column)."""
    if value is None:
        return ()
    columns = [value] if isinstance(value, str) else list(value)
    if not columns:
        raise ParamsError(f"{label}: key 'data.compare_to' is an empty list: name at least one score column")
    if len(columns) == 1:
        return tuple(columns)   # one column, checked as before lists were allowed
    for c in columns:
        if not c.strip():
            raise ParamsError(f"{label}: key 'data.compare_to' names an empty column")
        if c == score:
            raise ParamsError(f"{label}: key 'data.compare_to' names the data.score column '{c}': every system of "
                              "the leaderboard is named once")
    dup = next((c for i, c in enumerate(columns) if c in columns[:i]), None)
    if dup is not None:
        raise ParamsError(f"{label}: key 'data.compare_to' names the column '{dup}' twice: every system of the "
                          "leaderboard is named once")
    return tuple(columns)


def _data_format(d: dict, label: str) -> str | None:
    """``data.format`` in its canonical spelling (lower case, no dot, an adapter's usual name; a plain
    format's alias such as ``pq`` kept), or None: then the format is told by ``data.path``'s extension
    when the data is read (:mod:`perdoc.reading.formats`; ``.eval`` is an inspect_ai log)."""
    data_format = d.get("format")
    if data_format is None:
        return None
    from ..reading import formats
    f = formats.by_name(data_format)
    if f is None:
        raise ParamsError(f"{label}: key 'data.format' must be one of {formats.listing()} (got {d['format']!r}); "
                          "leave it out to tell the format by data.path's extension")
    return f.name if f.adapter else data_format.strip().lower().lstrip(".")


def _design_spec(raw: dict, data: DataSpec, label: str) -> Design:
    """``design``: the sampling design, its population and sizes, checked against the data it goes with."""
    g = raw["design"]
    sampling = g.get("sampling", "srs")
    if sampling not in SAMPLING_DESIGNS:
        raise ParamsError(f"{label}: key 'design.sampling' must be one of {', '.join(SAMPLING_DESIGNS)} "
                          f"(got {sampling!r})")
    M = g.get("population_size")
    if M is not None and M < 2:
        raise ParamsError(f"{label}: key 'design.population_size' must be at least 2 (got {M})")
    if not g["population"].strip():
        raise ParamsError(f"{label}: key 'design.population' is empty: say what the documents are a sample of")
    strata_column = strata_sizes = chunks_col = None
    if sampling == "stratified":
        strata_column, strata_sizes, M = _strata(g, M, label)
    elif "strata" in g:
        raise ParamsError(f"{label}: key 'design.strata' goes with design.sampling: stratified")
    if sampling == "two_stage":
        if M is None:
            raise ParamsError(f"{label}: key 'design.population_size' is required when design.sampling is two_stage")
        if "chunks_in_doc" not in g:
            raise ParamsError(f"{label}: key 'design.chunks_in_doc' is required when design.sampling is two_stage "
                              "(the column with the number of chunks in each document)")
        chunks_col = g["chunks_in_doc"]
    elif "chunks_in_doc" in g:
        raise ParamsError(f"{label}: key 'design.chunks_in_doc' goes with design.sampling: two_stage")
    if sampling in ("stratified", "two_stage") and data.trec is not None:
        raise ParamsError(f"{label}: the {sampling} design needs document columns that data.trec does not give; "
                          "write the per-query table (query, doc, score and the design's columns) and use data.path")
    if sampling in ("stratified", "two_stage") and "n" in raw["data"]:
        raise ParamsError(f"{label}: the {sampling} design needs per-chunk rows ('data.score'), not a "
                          "per-document table")
    frame = _frame_key(g, sampling, raw, label)
    sample, sampling = _sample_key(g, sampling, data, label)
    if data.judge is not None:
        if sampling in ("stratified", "two_stage"):
            raise ParamsError(f"{label}: key 'data.judge' goes with a simple random sample of documents or a drawn "
                              f"sample (design.sample), not design.sampling: {sampling} (draw it with perdoc sample)")
        if sampling == "drawn" and data.judge_file is None:
            raise ParamsError(f"{label}: a drawn sample (design.sample) with 'data.judge' needs 'data.judge_file' (the "
                              "judge on every chunk of the frame)")
        if frame is not None:
            raise ParamsError(f"{label}: key 'data.judge' does not go with 'design.frame': the judge file is the frame")
        if sampling == "drawn" and data.judge_compare_to is not None:
            raise ParamsError(f"{label}: key 'data.judge_compare_to' goes with a simple random sample of documents; for "
                              "a drawn sample use perdoc compare LABELS --sample MANIFEST --judge ... --judge-vs ...")
    return Design(population=g["population"].strip(), sampling=sampling, population_size=M,
                  strata_column=strata_column, strata_sizes=strata_sizes, chunks_in_doc=chunks_col,
                  frame=None if frame is None else frame.strip(),
                  sample=None if sample is None else sample.strip(), nonresponse=bool(g.get("nonresponse", False)))


def _strata(g: dict, M, label: str) -> tuple[str, dict, int]:
    """``design.strata`` of a stratified design: ``(column, {stratum: M_h}, M)``, M the sum of the M_h
    (and equal to ``design.population_size`` when that is given)."""
    st = g.get("strata")
    if st is None:
        raise ParamsError(f"{label}: key 'design.strata' is required when design.sampling is stratified "
                          "({column: COL, population_sizes: {NAME: M_h, ...}})")
    _check(st, {"column": (_STR, True), "population_sizes": (dict, True)}, label, prefix="design.strata.")
    sizes = st["population_sizes"]
    for k, v in sizes.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ParamsError(f"{label}: key 'design.strata.population_sizes.{k}' must be a positive integer, "
                              f"got {_show(v)}")
    if len(sizes) < 1:
        raise ParamsError(f"{label}: key 'design.strata.population_sizes' names no stratum")
    total = sum(sizes.values())
    if M is not None and M != total:
        raise ParamsError(f"{label}: key 'design.population_size' = {M} differs from the sum of the strata's "
                          f"population sizes ({total})")
    return st["column"], {str(k): int(v) for k, v in sizes.items()}, total


def _frame_key(g: dict, sampling: str, raw: dict, label: str) -> str | None:
    """``design.frame`` as written (a file or ``census``), checked against the design and the census."""
    frame = g.get("frame")
    if frame is not None:
        if sampling not in ("srs", "census"):
            raise ParamsError(f"{label}: key 'design.frame' goes with design.sampling srs or census (got {sampling})")
        if not frame.strip():
            raise ParamsError(f"{label}: key 'design.frame' is empty: give a file (document id and n per population "
                              "document) or 'census'")
        if frame.strip() == "census" and not raw.get("census"):
            raise ParamsError(f"{label}: key 'design.frame: census' needs a census (key 'census.path')")
    return frame


def _sample_key(g: dict, sampling: str, data: DataSpec, label: str) -> tuple[str | None, str]:
    """``(design.sample as written, the sampling design)``: a manifest of perdoc sample makes the design
    ``drawn``, which carries its own population and sizes and needs labelled chunk rows."""
    sample = g.get("sample")
    if sample is not None:
        if "sampling" in g and sampling != "drawn":
            raise ParamsError(f"{label}: key 'design.sample' (a manifest of perdoc sample) sets the design; leave "
                              f"'design.sampling' out or write drawn (got {sampling})")
        if not sample.strip():
            raise ParamsError(f"{label}: key 'design.sample' is empty: give the manifest perdoc sample wrote")
        sampling = "drawn"
    elif sampling == "drawn":
        raise ParamsError(f"{label}: design.sampling drawn needs key 'design.sample' (the manifest of perdoc sample)")
    if "nonresponse" in g and sample is None:
        raise ParamsError(f"{label}: key 'design.nonresponse' goes with design.sample")
    if sampling == "drawn":
        for key in ("population_size", "frame"):
            if key in g:
                raise ParamsError(f"{label}: key 'design.{key}' does not go with design.sample: the manifest carries "
                                  "the design, the population and the sizes")
        if data.trec is not None or data.aggregated or data.score is None:
            raise ParamsError(f"{label}: design.sample needs the labelled chunk rows ('data.path' with 'data.doc' and "
                              "'data.score')")
    return sample, sampling


def _estimand_spec(e: dict, design: Design, label: str) -> Estimand:
    """``estimand``: micro or macro, and why (micro only under a two-stage design)."""
    if e["kind"] not in ESTIMANDS:
        raise ParamsError(f"{label}: key 'estimand.kind' must be micro or macro (got {e['kind']!r})")
    if not e["why"].strip():
        raise ParamsError(f"{label}: key 'estimand.why' is empty: say why this mean answers the question")
    estimand = Estimand(kind=e["kind"], why=e["why"].strip())
    if design.sampling == "two_stage" and estimand.kind != "micro":
        raise ParamsError(f"{label}: key 'estimand.kind' must be micro for a two-stage design: perdoc's two-stage "
                          "estimator is the chunk-level (micro) ratio to size")
    return estimand


def _interval_spec(iv: dict, label: str) -> IntervalSpec:
    """``intervals``: the confidence level, bootstrap replicates and seed, with their defaults."""
    level = float(iv.get("level", 0.95))
    if not 0.0 < level < 1.0:
        raise ParamsError(f"{label}: key 'intervals.level' must be strictly between 0 and 1 (got {level:g})")
    replicates = iv.get("replicates", 9999)
    if replicates < 0 or replicates == 1:
        raise ParamsError(f"{label}: key 'intervals.replicates' must be 0 (no bootstrap) or at least 2 "
                          f"(got {replicates})")
    seed = iv.get("seed", 1)
    if seed < 0:
        raise ParamsError(f"{label}: key 'intervals.seed' must be a non-negative integer (got {seed})")
    return IntervalSpec(level=level, replicates=int(replicates), seed=int(seed))


def _census_path(raw: dict, data: DataSpec, base: Path, label: str) -> Path | None:
    """``census.path`` made absolute, or None; a census needs per-chunk rows in a data file."""
    if not raw.get("census"):
        return None
    census = Path(raw["census"]["path"])
    if not census.is_absolute():
        census = (base / census).resolve()
    if data.aggregated:
        raise ParamsError(f"{label}: key 'census' needs per-chunk rows in 'data' (the same columns)")
    if data.trec is not None:
        raise ParamsError(f"{label}: key 'census' cannot go with data.trec (give the census as a per-query "
                          "table: data.path with doc and score columns)")
    return census


def _planning_spec(pl: dict, label: str, has_census: bool, has_frame: bool, has_comparison: bool = False) -> Planning:
    """``planning``: the target half-width, that of the paired difference (it needs a comparison), the
    size strata to plan (they need a census) and the designs to compare (they need the population's
    document sizes)."""
    hw = pl.get("half_width")
    if hw is not None and hw <= 0:
        raise ParamsError(f"{label}: key 'planning.half_width' must be positive (got {hw:g})")
    dhw = pl.get("difference_half_width")
    if dhw is not None and not (math.isfinite(dhw) and dhw > 0):
        raise ParamsError(f"{label}: key 'planning.difference_half_width' must be positive (got {dhw:g})")
    if dhw is not None and not has_comparison:
        raise ParamsError(f"{label}: key 'planning.difference_half_width' plans the difference of two systems: it "
                          "needs a comparison (key 'data.compare_to')")
    st = pl.get("strata") or {}
    alloc = st.get("allocation", "equal")
    if alloc not in ("equal", "proportional", "neyman"):
        raise ParamsError(f"{label}: key 'planning.strata.allocation' must be equal, proportional or neyman "
                          f"(got {alloc!r})")
    if st and not has_census:
        raise ParamsError(f"{label}: key 'planning.strata' needs a census (key 'census.path')")
    return Planning(half_width=hw, strata_threshold=st.get("threshold"),
                    strata_k=st.get("k", 20) if st else None, strata_allocation=alloc,
                    design=_design_plan(pl, label, has_frame),
                    difference_half_width=None if dhw is None else float(dhw))


def _simulation_spec(sim: dict | None, has_census: bool, label: str) -> Simulation | None:
    """``simulation``: the coverage simulation on the census (None when not asked for)."""
    if sim is None:
        return None
    if not has_census:
        raise ParamsError(f"{label}: key 'simulation' needs a census to draw samples from (key 'census.path')")
    for key, low in (("reps", 10), ("k", 2), ("replicates", 0)):
        if key in sim and sim[key] < low:
            raise ParamsError(f"{label}: key 'simulation.{key}' must be at least {low} (got {sim[key]})")
    return Simulation(k=sim.get("k"), reps=sim.get("reps", 2000), seed=sim.get("seed", 1),
                      replicates=sim.get("replicates", 999))


def _design_plan(pl: dict, label: str, has_frame: bool) -> DesignPlanSpec | None:
    """``planning.design`` checked: numbers positive, designs known, takes whole numbers or null."""
    if "design" not in pl:
        return None
    dp = pl.get("design") or {}
    key = "planning.design"
    if not has_frame:
        raise ParamsError(f"{label}: key '{key}' needs the population's document sizes: a census (key 'census.path') "
                          "or a frame (key 'design.frame')")
    from .sampling import DESIGNS
    for name in ("budget", "cost_doc", "cost_chunk"):
        v = dp.get(name)
        if v is not None and not (math.isfinite(v) and (v > 0 if name == "budget" else v >= 0)):
            rule = "positive" if name == "budget" else "zero or positive"
            raise ParamsError(f"{label}: key '{key}.{name}' must be {rule} (got {_show(v)})")
    if dp.get("cost_doc", 0.0) == 0 and dp.get("cost_chunk", 1.0) == 0:
        raise ParamsError(f"{label}: keys '{key}.cost_doc' and '{key}.cost_chunk' cannot both be 0")
    designs = tuple(dp.get("designs") or DesignPlanSpec.designs)
    bad = [d for d in designs if d not in DESIGNS]
    if bad:
        raise ParamsError(f"{label}: key '{key}.designs': {bad[0]!r} is not one of {', '.join(DESIGNS)}")
    takes = tuple(dp.get("takes") or (None,))
    for m in takes:
        if m is not None and (isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1):
            raise ParamsError(f"{label}: key '{key}.takes' must list whole numbers of chunks >= 1 or null "
                              f"(whole documents), got {_show(m)}")
    ks = tuple(dp.get("ks") or DesignPlanSpec.ks)
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
            raise ParamsError(f"{label}: key '{key}.ks' must list whole numbers of documents >= 2, got {_show(k)}")
    reps = dp.get("reps", DesignPlanSpec.reps)
    if reps < 20:
        raise ParamsError(f"{label}: key '{key}.reps' must be at least 20 (got {reps})")
    return DesignPlanSpec(budget=None if dp.get("budget") is None else float(dp["budget"]),
                          cost_doc=float(dp.get("cost_doc", 0.0)), cost_chunk=float(dp.get("cost_chunk", 1.0)),
                          designs=designs, takes=tuple(None if m is None else int(m) for m in takes),
                          ks=tuple(int(k) for k in ks), reps=int(reps), seed=int(dp.get("seed", 1)))


def _trec_data(d: dict, base: Path, label: str):
    """``data.trec`` -> (TrecSpec with absolute paths, the data block it stands for: path = the run,
    doc = 'doc', score (and compare_to) = the score columns the TREC adapter writes)."""
    from ..reading.adapters import trec_column_names
    clash = [k for k in ("path", "doc", "score", "n", "s", "q", "compare_to", "format", "backend")
             if d.get(k) is not None]
    if clash:
        raise ParamsError(f"{label}: key 'data.trec' sets the data itself; drop data.{', data.'.join(clash)}")
    t = d["trec"]

    def where(key):
        p = Path(t[key])
        return p if p.is_absolute() else (base / p).resolve()

    spec = TrecSpec(run=where("run"), qrels=where("qrels"), measure=t["measure"].strip(), doc_map=where("doc_map"),
                    compare_run=where("compare_run") if t.get("compare_run") else None)
    if not spec.measure:
        raise ParamsError(f"{label}: key 'data.trec.measure' is empty (e.g. nDCG@10, RR, P@5)")
    a, b = trec_column_names(spec.run, spec.measure, spec.compare_run)
    block = {k: v for k, v in d.items() if k != "trec"}
    block.update({"path": str(spec.run), "doc": "doc", "score": a})
    if b is not None:
        block["compare_to"] = b
    return spec, block


def _texts(items) -> tuple[str, ...]:
    """Whitespace-normalised, non-blank, without repeats, in the order given."""
    out = []
    for x in items:
        t = " ".join(str(x).split())
        if t and t not in out:
            out.append(t)
    return tuple(out)


def _check_unknown(mapping: dict, schema: dict, label: str, prefix: str) -> None:
    """The first key not in the schema, named with the closest known key."""
    for key in mapping:
        if not isinstance(key, str) or key not in schema:
            close = difflib.get_close_matches(str(key), list(schema), n=1)
            hint = f" (did you mean '{prefix}{close[0]}'?)" if close else \
                f" (known keys: {', '.join(prefix + k for k in schema)})"
            raise ParamsError(f"{label}: unknown key '{prefix}{key}'{hint}")


def _check(mapping: dict, schema: dict, label: str, prefix: str) -> None:
    _check_unknown(mapping, schema, label, prefix)
    for key, (kind, required) in schema.items():
        full = prefix + key
        if key not in mapping or mapping[key] is None:
            if required:
                raise ParamsError(f"{label}: missing required key '{full}'")
            continue
        value = mapping[key]
        if isinstance(kind, dict):
            if not isinstance(value, dict):
                raise ParamsError(f"{label}: key '{full}' must be a mapping of keys, got {_show(value)}")
            _check(value, kind, label, prefix=full + ".")
        elif kind is dict:
            if not isinstance(value, dict):
                raise ParamsError(f"{label}: key '{full}' must be a mapping, got {_show(value)}")
        elif kind is list:
            if not isinstance(value, list):
                raise ParamsError(f"{label}: key '{full}' must be a list, got {_show(value)}")
        elif kind == _STR:
            if not isinstance(value, str):
                raise ParamsError(f"{label}: key '{full}' must be a string, got {_show(value)}")
        elif kind == _INT:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ParamsError(f"{label}: key '{full}' must be an integer, got {_show(value)}")
        elif kind == _NUM:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ParamsError(f"{label}: key '{full}' must be a number, got {_show(value)}")
        elif kind == _BOOL:
            if not isinstance(value, bool):
                raise ParamsError(f"{label}: key '{full}' must be true or false, got {_show(value)}")
        elif kind == _LIST:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ParamsError(f"{label}: key '{full}' must be a list of strings, got {_show(value)}")
        elif kind == _STR_OR_LIST:
            if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
                raise ParamsError(f"{label}: key '{full}' must be a string or a list of strings, got {_show(value)}")


def _show(value) -> str:
    """``type repr`` of a value for a message, the repr cut at 40 characters (built piece by piece and
    stopped there: a huge or deeply nested value is never walked whole)."""
    return f"{type(value).__name__} {_brief(value, 40)}"


def _brief(value, limit: int, *, quote: bool = True) -> str:
    """At most ``limit`` characters of ``repr(value)`` (of ``value`` itself when ``quote`` is false and it
    is a string), ending in "..." when cut. Only about ``limit`` pieces of the value are visited."""
    if not quote and isinstance(value, str):
        return value if len(value) <= limit else value[:limit - 3] + "..."
    out, size = [], 0
    for piece in _repr_pieces(value, limit + 1):
        out.append(piece)
        size += len(piece)
        if size > limit:
            break
    text = "".join(out)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _repr_pieces(value, budget: int):
    """The repr of ``value`` as a stream of short pieces (containers walked lazily, strings and numbers
    cut to ``budget`` characters); whoever reads it stops when it has enough."""
    if isinstance(value, str):
        yield repr(value[:budget])[:-1] if len(value) > budget else repr(value)
    elif isinstance(value, (list, tuple, set, frozenset, dict)):
        opening, closing = {list: "[]", tuple: "()", dict: "{}"}.get(type(value), "{}")
        if isinstance(value, (set, frozenset)) and not value:
            yield f"{type(value).__name__}()"
            return
        yield opening
        for i, item in enumerate(value.items() if isinstance(value, dict) else value):
            if i:
                yield ", "
            if isinstance(value, dict):
                yield from _repr_pieces(item[0], budget)
                yield ": "
                item = item[1]
            yield from _repr_pieces(item, budget)
        yield ("," if isinstance(value, tuple) and len(value) == 1 else "") + closing
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * budget:
        yield f"<a {value.bit_length()}-bit integer>"
    else:
        yield repr(value)[:budget]
