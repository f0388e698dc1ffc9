"""The sampling manifest: written by ``perdoc sample``, read back with its labels.

In: the manifest (one row per unit to label: document, stratum, inclusion probability, draw, chunk)
and the labelled rows; out: the drawn sample, one row per drawn document with its design and the sums
of its labels (:class:`SampleData`, which :func:`perdoc.methods.survey.design_estimate` estimates
from), or as a per-document table (:func:`as_table`). Both sides are small (a label budget, not the
corpus), so they are read whole into pandas through DuckDB's local readers (CSV, TSV, JSON Lines,
Parquet), on a connection that loads no extension.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DataFileError, InputError, ParameterError
from ..messages import Message

__all__ = ["read_table_file", "write_manifest", "manifest_json_path", "SampleData", "stage_fractions",
           "read_manifest", "load_sample", "as_table", "from_table", "MANIFEST_COLUMNS"]


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


def manifest_meta(path) -> dict:
    """The manifest's sidecar JSON (the design, K, seed, the frame's documents and chunks), or {} when
    there is none or it cannot be read."""
    import json
    try:
        return json.loads(manifest_json_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


#: The sidecar's keys that describe a drawn sample's design (copied into its ``info``).
META_KEYS = ("design", "k", "take", "seed", "documents_in_frame", "chunks_in_frame")


def write_manifest(sample, path, *, doc: str, frame_facts: dict) -> Path:
    """Write the manifest CSV (one row per unit to label: ``doc``, stratum, prob, draw, chunk with a
    take, and n, the document's chunks in the frame) and the JSON beside it (the design, the frame's
    file name and SHA-256, the seed and perdoc's version). Both go to temporary files first: a failed
    write leaves neither half-written."""
    import csv

    from .. import __version__
    from .export import neutralise_csv_cell
    path = Path(os.fspath(path))
    if path.suffix.lower() != ".csv":
        raise ParameterError(f"--out {path}: the manifest is a .csv file")
    if not path.parent.is_dir():
        raise DataFileError(f"--out {path}: folder not found: {path.parent}")
    if path.is_dir():
        raise DataFileError(f"--out {path}: it is a folder")
    if manifest_json_path(path).is_dir():   # (else the manifest would be written and its record not)
        raise DataFileError(f"--out {path}: its record {manifest_json_path(path)} is a folder")
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


# -------------------------------------------------------------------------------- the drawn sample
@dataclass(frozen=True)
class SampleData:
    """One row per drawn document (per draw): the design and the labelled chunks' sums."""

    doc: np.ndarray          # document ids (text)
    draw: np.ndarray         # 1, 2, ... (with replacement), else 1
    stratum: np.ndarray      # stratum labels (text)
    prob: np.ndarray         # inclusion probability pi_j
    N: np.ndarray            # chunks of the document in the frame
    m: np.ndarray            # labelled chunks
    s: np.ndarray            # sum of labels
    q: np.ndarray            # sum of squared labels
    f: np.ndarray            # stage-one sampling fraction of the document's stratum
    notes: tuple = ()
    info: dict = field(default_factory=dict)
    #: other label columns of the same rows (``load_sample(also=...)``): per column its sums ``s``,
    #: sums of squares ``q`` and sums of products with the labels ``sy``, in the rows' order
    also: dict = field(default_factory=dict)

    @property
    def K(self) -> int:
        return int(self.doc.size)


def stage_fractions(stratum, prob, draw) -> tuple[np.ndarray, dict]:
    """Stage-one sampling fraction per drawn document, from the manifest alone: a stratum whose
    probabilities are all 1 is take-all (f = 1); one with equal probabilities below 1 and single
    draws is a simple random sample (f = k_h / M_h = pi); any other (unequal probabilities, repeated
    draws) is treated with the with-replacement form (f = 0). Returns (f, {stratum: kind})."""
    stratum = np.asarray(stratum).astype(str)
    prob = np.asarray(prob, dtype=float)
    draw = np.asarray(draw)
    if not prob.size:
        return np.zeros(0), {}
    # grouped by sorting (O(K log K)), not one pass over the sample per stratum
    names, inverse, order, starts, counts = _strata_of(stratum)
    p = prob[order]
    first = p[starts]                       # each stratum's first probability, in document order
    take_all = np.logical_and.reduceat(p == 1.0, starts)
    srs = (np.logical_and.reduceat(p == np.repeat(first, counts), starts)
           & np.logical_and.reduceat(draw[order] == 1, starts))
    f_h = np.where(take_all, 1.0, np.where(srs, first, 0.0))
    kinds = {str(h): (_TAKE_ALL if t else _SIMPLE_RANDOM if e else _UNEQUAL)
             for h, t, e in zip(names.tolist(), take_all.tolist(), srs.tolist())}
    return f_h[inverse], kinds


def _strata_of(stratum):
    """``(names, inverse, order, starts, counts)`` of the stratum labels: the sorted distinct names,
    each document's position among them, the documents grouped by stratum (stable: document order
    within a stratum), where each stratum's run starts in that order, and its size."""
    names, inverse = np.unique(stratum, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse, minlength=names.size)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
    return names, inverse, order, starts, counts


# -------------------------------------------------------------------------------- reading
#: The kinds of stratum :func:`stage_fractions` tells apart, as the design block of a drawn sample names them.
_TAKE_ALL = Message("stratum_kind.take_all", "take-all")
_SIMPLE_RANDOM = Message("stratum_kind.simple_random", "simple random sample")
_UNEQUAL = Message("stratum_kind.unequal", "unequal probabilities (with-replacement variance)")

MANIFEST_COLUMNS = ("stratum", "prob", "draw")


def read_manifest(path, doc: str, *, allow_similar_ids: bool = False):
    """The manifest of ``perdoc sample`` as a pandas DataFrame with columns doc, stratum, prob, draw,
    chunk (or no chunk column) and n; checked: the columns exist, probabilities lie in (0, 1] (or are
    expected draws for a with-replacement design), draws are whole and positive, no unit twice, and
    no two document ids that differ only in surrounding spaces, letter case or Unicode form (the
    data's rule) unless ``allow_similar_ids``."""
    import pandas as pd
    df = read_table_file(path, "the manifest")
    missing = [c for c in (doc, *MANIFEST_COLUMNS, "n") if c not in df.columns]
    if missing:
        raise InputError(f"the manifest {path} has no column {missing[0]!r}; a perdoc sample manifest has the "
                         f"columns {doc}, stratum, prob, draw, n (and chunk with --take)")
    out = pd.DataFrame({"doc": df[doc].map(_unneutralise).astype(str), "stratum": df["stratum"].astype(str)})
    from ._rows import _similar_ids
    _similar_ids(out["doc"].unique(), doc, f"the manifest {path}", allow_similar_ids)
    for col in ("prob", "draw", "n"):
        v = pd.to_numeric(df[col], errors="coerce")
        if v.isna().any():
            i = int(np.flatnonzero(v.isna().to_numpy())[0])
            raise InputError(f"the manifest {path}: column {col!r} row {i + 2} is not a number ({df[col].iloc[i]!r})")
        out[col] = v.astype(float)
    if ((out["prob"] <= 0) | ~np.isfinite(out["prob"])).any():
        raise InputError(f"the manifest {path}: column 'prob' must be positive (inclusion probabilities)")
    for col in ("draw", "n"):
        if ((out[col] < 1) | (out[col] != np.round(out[col]))).any():
            raise InputError(f"the manifest {path}: column {col!r} must hold whole numbers from 1")
    if "chunk" in df.columns:
        c = pd.to_numeric(df["chunk"], errors="coerce")
        if c.isna().any() or ((c < 0) | (c != np.round(c))).any() or (c >= out["n"]).any():
            raise InputError(f"the manifest {path}: column 'chunk' must hold chunk positions from 0 to n - 1")
        out["chunk"] = c.astype(np.int64)
    key = ["doc", "draw"] + (["chunk"] if "chunk" in out else [])
    dup = out.duplicated(key)
    if dup.any():
        r = out[dup].iloc[0]
        raise InputError(f"the manifest {path} lists the unit {tuple(r[k] for k in key)!r} twice")
    per_doc = out.groupby(["doc", "draw"]).agg(stratum=("stratum", "nunique"), prob=("prob", "nunique"),
                                               n=("n", "nunique"))
    if (per_doc > 1).any().any():
        raise InputError(f"the manifest {path}: a document's stratum, prob and n must be the same on all its rows")
    return out


def _unneutralise(v):
    """A manifest id as written: perdoc's CSV writer put ``'`` before ids a spreadsheet would run."""
    from .export import neutralise_csv_cell
    if isinstance(v, str) and v.startswith("'") and neutralise_csv_cell(v[1:]) == v:
        return v[1:]
    return v


def load_sample(labels, manifest, *, doc: str, score: str, nonresponse: bool = False,
                manifest_path: str = "the manifest", labels_path: str = "the labels",
                also: tuple[str, ...] = ()) -> SampleData:
    """Match the labelled rows (a DataFrame with the ``doc`` and ``score`` columns, and ``chunk`` /
    ``draw`` when the manifest has them) to the manifest (:func:`read_manifest`), and sum them per
    drawn document. A label for a unit not in the manifest, a unit labelled twice, or a unit left
    without a label is refused with one line; with ``nonresponse=True`` unlabelled units are left
    out, counted, and the remaining documents of their stratum reweighted. ``also``: other columns
    of the same rows (a judge's scores), checked as the labels are and summed per drawn document
    into :attr:`SampleData.also` with their squares and their products with the labels."""
    lab, key = _read_labels(labels, manifest, doc=doc, score=score, labels_path=labels_path, also=also)
    _check_labelled_units(lab, manifest, key, manifest_path=manifest_path, labels_path=labels_path)
    psu = _drawn_documents(lab, manifest, labels_path=labels_path, also=len(also))
    psu, info, notes = _nonresponse(psu, nonresponse, labels_path=labels_path)
    f, kinds = stage_fractions(psu["stratum"].to_numpy(), psu["prob"].to_numpy(), psu["draw"].to_numpy())
    # a simple-random stratum's fraction counts the documents drawn, before nonresponse
    info["strata"] = {h: {"kind": kinds[h], "drawn": int((psu["stratum"] == h).sum())} for h in kinds}
    if any(k == "take-all" for k in kinds.values()):
        notes.append(Message("note.take_all_stratum", "documents of the take-all (certainty) stratum add no "
                             "sampling variance between documents (all of them were drawn); only their chunk "
                             "subsampling, if any, adds variance"))
    if any(k.startswith("unequal") for k in kinds.values()):
        notes.append(Message("note.unequal_probabilities", "documents drawn with unequal probabilities: "
                             "with-replacement (Hansen-Hurwitz) variance, exact with replacement and slightly "
                             "conservative without"))
    return SampleData(doc=psu["doc"].to_numpy().astype(str), draw=psu["draw"].to_numpy().astype(np.int64),
                      stratum=psu["stratum"].to_numpy().astype(str), prob=psu["prob"].to_numpy(float),
                      N=psu["n"].to_numpy(float), m=psu["m"].to_numpy(float), s=psu["s"].to_numpy(float),
                      q=psu["q"].to_numpy(float), f=f, notes=tuple(notes), info=info,
                      also={c: {k: psu[f"{k}{i}"].to_numpy(float) for k in ("s", "q", "sy")}
                            for i, c in enumerate(also)})


def _read_labels(labels, manifest, *, doc: str, score: str, labels_path: str, also: tuple[str, ...] = ()):
    """``(lab, key)``: the labelled rows as columns doc, y (and x0, x1, ... for the columns ``also``,
    with their products with y, yx0, ...), draw (and chunk when both sides have it), and the columns
    that name a unit; refuses a missing column or a value that is not a finite number."""
    import pandas as pd
    if doc not in labels.columns:
        raise InputError(f"{labels_path} has no column {doc!r} (--doc)")
    if score not in labels.columns:
        raise InputError(f"{labels_path} has no column {score!r} (--score)")
    for col in also:
        if col not in labels.columns:
            raise InputError(f"{labels_path} has no column {col!r}")
    lab = pd.DataFrame({"doc": labels[doc].astype(str)})
    lab["y"] = _finite_labels(labels, score, labels_path)
    for i, col in enumerate(also):
        lab[f"x{i}"] = _finite_labels(labels, col, labels_path)
        lab[f"yx{i}"] = lab["y"] * lab[f"x{i}"]
        bad = ~np.isfinite(lab[f"yx{i}"].to_numpy())
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise InputError(f"{labels_path}: row {r + 2}: {score!r} times {col!r} is not a finite number "
                             f"({labels[score].iloc[r]!r} x {labels[col].iloc[r]!r})")
    has_chunk = "chunk" in manifest.columns
    lab["draw"] = pd.to_numeric(labels["draw"], errors="coerce") if "draw" in labels.columns else 1.0
    if "draw" not in labels.columns and (manifest["draw"] > 1).any():
        d = manifest.loc[manifest["draw"] > 1, "doc"].iloc[0]
        raise InputError(f"{labels_path} needs the manifest's column 'draw': document {d!r} was drawn more than "
                         "once, and each draw is labelled on its own")
    if has_chunk and "chunk" in labels.columns:
        lab["chunk"] = pd.to_numeric(labels["chunk"], errors="coerce")
        key = ["doc", "draw", "chunk"]
    else:
        key = ["doc", "draw"]
    for col in key[1:]:
        if lab[col].isna().any():
            raise InputError(f"{labels_path}: column {col!r} must hold whole numbers, as in the manifest")
    return lab, key


def _unit(row, key: list[str]) -> str:
    """A labelled unit as its key's values, as the labels file writes them (doc='d1', draw=1, chunk=7),
    not as numpy writes its scalars."""
    parts = []
    for k in key:
        v = row[k]
        v = v.item() if hasattr(v, "item") else v
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        parts.append(f"{k}={v!r}")
    return ", ".join(parts)


def _check_labelled_units(lab, manifest, key: list[str], *, manifest_path: str, labels_path: str) -> None:
    """Refuse a labelled unit the manifest does not list, or a unit labelled twice."""
    units = manifest[key].drop_duplicates() if key != ["doc", "draw"] else manifest[["doc", "draw"]]
    merged = lab.merge(units.assign(_in=True), on=key, how="left")
    extra = merged["_in"].isna()
    if extra.any():
        r = merged[extra].iloc[0]
        from ._rows import _similar_hint
        hint = _similar_hint(merged.loc[extra, "doc"].unique(), manifest["doc"].unique(), manifest_path)
        raise InputError(f"{labels_path}: {int(extra.sum())} labelled row(s) are not in {manifest_path} (e.g. "
                         f"{_unit(r, key)}); label only the units the manifest lists{hint}")
    if key[-1] == "chunk":
        dup = lab.duplicated(key)
        if dup.any():
            r = lab[dup].iloc[0]
            raise InputError(f"{labels_path}: the unit {_unit(r, key)} is labelled "
                             "twice; give one label per unit")


def _finite_labels(labels, col: str, labels_path: str):
    """Column ``col`` of the labels as floats (booleans as 0/1); refuses a value that is not a finite number."""
    import pandas as pd
    y = pd.to_numeric(labels[col], errors="coerce")
    if labels[col].dtype == bool:
        y = labels[col].astype(float)
    bad = y.isna() | ~np.isfinite(y.astype(float))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{labels_path}: column {col!r} row {i + 2} is not a finite number "
                         f"({labels[col].iloc[i]!r}); every drawn unit needs its label")
    return y.astype(float)


def _squares(v) -> float:
    return float(np.sum(v * v))


def _drawn_documents(lab, manifest, *, labels_path: str, also: int = 0):
    """One row per drawn document (and draw): its design (stratum, prob, n), the units the manifest
    wants labelled and the count ``m``, sum ``s`` and sum of squares ``q`` of its labels (and ``s0``,
    ``q0``, ``sy0``, ... of the ``also`` other columns, :func:`_read_labels`); refuses a document
    with more labels than units."""
    sums = dict(m=("y", "size"), s=("y", "sum"), q=("y", _squares))
    for i in range(also):
        sums.update({f"s{i}": (f"x{i}", "sum"), f"q{i}": (f"x{i}", _squares), f"sy{i}": (f"yx{i}", "sum")})
    per = lab.groupby(["doc", "draw"]).agg(**sums)
    psu = (manifest.groupby(["doc", "draw"], sort=True)
           .agg(stratum=("stratum", "first"), prob=("prob", "first"), n=("n", "first"),
                want=("n", "size")).reset_index())
    if "chunk" not in manifest.columns:
        psu["want"] = psu["n"]
    psu = psu.merge(per.reset_index(), on=["doc", "draw"], how="left")
    psu["m"] = psu["m"].fillna(0)
    over = psu["m"] > psu["want"]
    if over.any():
        r = psu[over].iloc[0]
        raise InputError(f"{labels_path}: document {r['doc']!r} has {int(r['m'])} labelled rows but the manifest "
                         f"lists {int(r['want'])} unit(s) of it; label only the units the manifest lists")
    return psu


def _nonresponse(psu, nonresponse: bool, *, labels_path: str):
    """``(psu, info, notes)``: documents with units left unlabelled are refused, or with ``nonresponse``
    counted as nonresponse, the documents without any label dropped and the others of their stratum
    reweighted."""
    short = psu["m"] < psu["want"]
    notes = []
    info = {}
    if short.any():
        missing_units = int((psu["want"] - psu["m"])[short].sum())
        if not nonresponse:
            r = psu[short].iloc[0]
            raise InputError(f"{labels_path}: {missing_units} unit(s) of the manifest have no label (e.g. document "
                             f"{r['doc']!r}: {int(r['m'])} of {int(r['want'])}); label them, or pass --nonresponse "
                             "to count them as nonresponse")
        gone = psu["m"] == 0
        info["nonresponse"] = {"units": missing_units, "documents": int(gone.sum())}
        notes.append(Message("note.nonresponse", "nonresponse: {units} unit(s) of the manifest have no label "
                             "({documents} whole document(s)); missing chunks are treated as missing at random within "
                             "their document, missing documents within their stratum (the others' weights are raised "
                             "to make up)", units=missing_units, documents=int(gone.sum())))
        if gone.any():
            k_h = psu.groupby("stratum")["doc"].transform("size")
            r_h = psu.assign(r=~gone).groupby("stratum")["r"].transform("sum")
            if (r_h[~gone] == 0).any():
                raise InputError("nonresponse: a stratum has no labelled document left")
            psu.loc[~gone, "prob"] = psu.loc[~gone, "prob"] * r_h[~gone] / k_h[~gone]
            psu = psu[~gone].reset_index(drop=True)
    return psu, info, notes



def as_table(data: SampleData, *, source: dict | None = None):
    """The drawn sample as a :class:`perdoc.table.DocTable` (one row per drawn document, ``doc#draw``
    when a document was drawn more than once), the design in its attributes, so the report's sections
    (diagnostics, documents.csv) read it as any other table and :func:`from_table` gets it back."""
    from .table import DocTable
    repeated = bool(np.any(data.draw > 1))
    ids = [f"{d}#{r}" if repeated else str(d) for d, r in zip(data.doc, data.draw)]
    attrs = {"stratum": data.stratum.astype(str), "prob": data.prob, "chunks_in_doc": data.N,
             "draw": data.draw, "frame_doc": data.doc.astype(str), "stage_fraction": data.f}
    table = DocTable.from_arrays(data.m, data.s, data.q, doc=np.asarray(ids, dtype=object), attrs=attrs,
                                 source=dict(source or {}), assume_binary=False)
    table.source["drawn_sample"] = {"notes": list(data.notes), "info": dict(data.info)}
    return table


def from_table(table) -> SampleData:
    """The :class:`SampleData` of a table made by :func:`as_table`."""
    a = table.attrs
    extra = table.source.get("drawn_sample", {})
    return SampleData(doc=np.asarray(a["frame_doc"]).astype(str), draw=np.asarray(a["draw"]),
                      stratum=np.asarray(a["stratum"]).astype(str), prob=np.asarray(a["prob"], dtype=float),
                      N=np.asarray(a["chunks_in_doc"], dtype=float), m=np.asarray(table.n, dtype=float),
                      s=np.asarray(table.s, dtype=float) / table.scale,
                      q=np.asarray(table.q, dtype=float) / table.scale ** 2,
                      f=np.asarray(a["stage_fraction"], dtype=float), notes=tuple(extra.get("notes", ())),
                      info=dict(extra.get("info", {})))
