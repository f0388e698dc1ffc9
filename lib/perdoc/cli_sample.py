"""``perdoc sample`` (draw the documents and chunks to label from the frame) and ``perdoc estimate
LABELS --sample MANIFEST.csv`` (the design-based estimate of a drawn sample). The command line only
formats what :mod:`perdoc.sampling` and :mod:`perdoc.survey` compute."""

from __future__ import annotations

import json

__all__ = ["add_sample_parser", "run_sample", "run_estimate_sample"]


def add_sample_parser(sub, number, integer) -> None:
    from .sampling import ALLOCATIONS, DESIGNS
    p = sub.add_parser("sample", help="draw the documents (and chunks) to label from the frame",
                       description="Draw a probability sample of documents from the frame (one row per population "
                                   "document with its number of chunks: the index already knows it) and write "
                                   "the manifest of units to label, with each document's inclusion probability, "
                                   "and a JSON beside it recording the design, the frame's SHA-256 and the seed. "
                                   "Label the units, then run perdoc estimate LABELS --sample MANIFEST.csv.")
    p.add_argument("--frame", required=True, metavar="FILE",
                   help="one row per population document: the --doc column and its size (--frame-n, default n)")
    p.add_argument("--doc", required=True, help="document id column of the frame")
    p.add_argument("--frame-n", default="n", metavar="COL", help="the frame's column of chunks per document (default n)")
    p.add_argument("--k", type=integer("--k"), required=True, help="documents to draw (draws, with replacement)")
    p.add_argument("--design", choices=DESIGNS, required=True,
                   help="srs (simple random), stratified (size strata, optimal allocation), pps (probability "
                        "proportional to size; the largest documents certain when their probability reaches 1), "
                        "certainty (a take-all stratum of the largest documents, then SRS or PPS of the rest)")
    p.add_argument("--take", type=integer("--take"), default=None, metavar="M",
                   help="label M chunks of each drawn document, drawn at random (all when it has fewer); "
                        "default: every chunk")
    p.add_argument("--seed", type=integer("--seed"), required=True, help="seed of the draw")
    p.add_argument("--out", required=True, metavar="MANIFEST.csv",
                   help="the manifest to write (a .json with the same stem is written beside it)")
    p.add_argument("--with-replacement", action="store_true",
                   help="pps: K independent draws proportional to size (a document may be drawn more than once)")
    p.add_argument("--strata", type=integer("--strata"), default=4, metavar="H",
                   help="stratified: number of size strata (default 4; fewer when K or the sizes do not allow it)")
    p.add_argument("--allocation", choices=ALLOCATIONS, default=None,
                   help="stratified: neyman (default), proportional, or cost (cost-optimal with --cost-doc and "
                        "--cost-chunk; the default when a cost is given)")
    p.add_argument("--remainder", choices=["srs", "pps"], default="srs",
                   help="certainty: how the documents outside the take-all stratum are drawn (default srs)")
    p.add_argument("--certainty-size", type=number("--certainty-size"), default=None, metavar="CHUNKS",
                   help="certainty: documents with at least this many chunks are taken whole (default: the size "
                        "that minimises the anticipated variance)")
    p.add_argument("--cost-doc", type=number("--cost-doc"), default=None, help="cost of opening one document")
    p.add_argument("--cost-chunk", type=number("--cost-chunk"), default=None, help="cost of labelling one chunk")
    p.add_argument("--icc", type=number("--icc"), default=None,
                   help="anticipated intra-document correlation used to size strata and the certainty cut "
                        "(default 0.1)")
    p.add_argument("--json", action="store_true", help="print the design summary as one JSON object")


def run_sample(args) -> int:
    from .frame import read_frame
    from .sample_io import manifest_json_path, write_manifest
    from .sampling import DEFAULT_ICC, draw_sample
    frame = read_frame(args.frame, args.doc, n_col=args.frame_n)
    allocation = args.allocation or ("cost" if (args.cost_doc is not None or args.cost_chunk is not None)
                                     else "neyman")
    sample = draw_sample(frame, design=args.design, k=args.k, seed=args.seed, take=args.take, strata=args.strata,
                         allocation=allocation, with_replacement=args.with_replacement, remainder=args.remainder,
                         certainty_size=args.certainty_size,
                         cost_doc=1.0 if args.cost_doc is None else args.cost_doc,
                         cost_chunk=0.0 if args.cost_chunk is None else args.cost_chunk,
                         icc=DEFAULT_ICC if args.icc is None else args.icc)
    facts = _file_facts(args.frame)
    facts.update({"doc_column": args.doc, "size_column": args.frame_n, "documents": frame.M,
                  "chunks": int(frame.N)})
    path = write_manifest(sample, args.out, doc=args.doc, frame_facts=facts)
    if args.json:
        print(manifest_json_path(path).read_text(encoding="utf-8"), end="")
        return 0
    info = sample.info
    print(f"perdoc sample: {args.design} design, {info['documents_drawn']} documents "
          f"({info['k']} draws) of {frame.M:,}, {sample.doc.size:,} unit(s) to label ({info['labels']:,} chunks)")
    for name, st in info["strata"].items():
        print(f"  stratum {name}: {st['drawn']} of {st['documents']:,} documents ({st['selection']})")
    print(f"wrote {path} and {manifest_json_path(path).name}")
    return 0


def _file_facts(path) -> dict:
    import hashlib
    from pathlib import Path
    p = Path(path)
    h = hashlib.sha256()
    size = 0
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return {"file": p.name, "bytes": size, "sha256": h.hexdigest()}


def run_estimate_sample(args) -> int:
    """``perdoc estimate LABELS --doc ID --score COL --sample MANIFEST.csv``."""
    from .errors import ParameterError
    from .estimate import check_level
    from .sample_io import read_table_file
    from .survey import design_estimate, load_sample, read_manifest
    if args.data is None or args.doc is None or args.score is None:
        raise ParameterError("--sample needs the labels file, --doc and --score")
    for flag, v in (("--frame", args.frame), ("--population-size", args.population_size), ("--n", args.n_col),
                    ("--s", args.s_col), ("--q", args.q_col)):
        if v is not None:
            raise ParameterError(f"{flag} does not go with --sample: the manifest carries the design, the "
                                 "population and the sizes")
    level = check_level(0.95 if args.level is None else args.level)
    manifest = read_manifest(args.sample, args.doc)
    labels = read_table_file(args.data, "the labels")
    data = load_sample(labels, manifest, doc=args.doc, score=args.score, nonresponse=args.nonresponse,
                       manifest_path=str(args.sample), labels_path=f"the labels {args.data}")
    meta = _manifest_meta(args.sample)
    if meta:
        data.info.update({k: meta[k] for k in ("design", "k", "take", "seed", "documents_in_frame",
                                               "chunks_in_frame") if k in meta})
    result = design_estimate(data, level=level)
    if args.json:
        out = result.to_dict()
        out["input"] = {"labels": _file_facts(args.data), "manifest": _file_facts(args.sample),
                        "units_labelled": int(data.m.sum()), "documents": data.K}
        print(json.dumps(out, indent=2))
        return 0
    from .cli import format_estimates
    from .table import DocTable
    table = DocTable.from_arrays(data.m, data.s, data.q, doc=[f"{d}#{r}" for d, r in zip(data.doc, data.draw)],
                                 source={"path": f"{args.data} (manifest {args.sample})"})
    print(format_estimates(result, table))
    return 0


def _manifest_meta(path) -> dict:
    from .sample_io import manifest_json_path
    p = manifest_json_path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
