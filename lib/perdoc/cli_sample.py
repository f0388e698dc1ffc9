"""``perdoc sample`` (draw the documents and chunks to label from the frame) and ``perdoc estimate
LABELS --sample MANIFEST.csv`` (the design-based estimate of a drawn sample). The command line only
formats what :mod:`perdoc.sampling` and :mod:`perdoc.survey` compute."""

from __future__ import annotations

import json

__all__ = ["add_plan_design_flags", "run_plan_designs", "add_sample_parser", "run_sample", "run_estimate_sample", "add_design_flags", "run_simulate_design"]


def add_plan_design_flags(p, number, integer) -> None:
    """``perdoc plan --frame FRAME``: compare the designs on the frame."""
    p.add_argument("--frame", metavar="FILE", default=None,
                   help="plan the design: the frame (one row per population document, --doc and its size) and "
                        "--census (or --pilot-data) compare simple random, size-stratified, PPS and take-all designs "
                        "by simulation")
    p.add_argument("--doc", default=None, help="with --frame: the document id column")
    p.add_argument("--frame-n", default="n", metavar="COL", help="with --frame: the size column (default n)")
    p.add_argument("--census", default=None, metavar="FILE",
                   help="with --frame: a census, one row per chunk (--doc, --score): the designs are simulated on it")
    p.add_argument("--pilot-data", default=None, metavar="FILE",
                   help="with --frame: a labelled pilot, one row per chunk: a planning population over the frame "
                        "takes each document's rate from the pilot document nearest in size (anticipated)")
    p.add_argument("--score", default=None, help="with --census or --pilot-data: the 0/1 score column")
    p.add_argument("--take", type=_takes, default=None, metavar="M[,M...]",
                   help="with --frame: label M chunks of each drawn document; a list (5,20,all) compares takes, "
                        "'all' labelling whole documents (default: whole documents)")
    p.add_argument("--budget", type=number("--budget"), default=None,
                   help="with --frame: what the labels may cost (--cost-doc per document, --cost-chunk per chunk); "
                        "instead of --half-width")
    p.add_argument("--cost-doc", type=number("--cost-doc"), default=0.0, help="cost of one drawn document (default 0)")
    p.add_argument("--cost-chunk", type=number("--cost-chunk"), default=1.0,
                   help="cost of one labelled chunk (default 1: the budget counts labels)")
    p.add_argument("--ks", default="5,10,20,40", help="with --frame: documents per sample to try (default 5,10,20,40)")
    p.add_argument("--designs", default="srs,stratified,pps,certainty",
                   help="with --frame: the designs to compare (default all four)")
    p.add_argument("--reps", type=integer("--reps"), default=400,
                   help="with --frame: simulated samples per design and K (default 400)")
    p.add_argument("--seed", type=integer("--seed"), default=1, help="with --frame: seed of the simulation")


def _takes(text: str) -> tuple:
    """``--take`` of perdoc plan: whole numbers of chunks >= 1, or ``all`` (whole documents), by commas."""
    import argparse
    out = []
    for part in str(text).split(","):
        part = part.strip().lower()
        if part == "all":
            out.append(None)
        elif part.isdigit() and int(part) >= 1:
            out.append(int(part))
        else:
            raise argparse.ArgumentTypeError(f"must be whole numbers of chunks >= 1 or 'all', separated by commas "
                                             f"(got {text!r})")
    return tuple(dict.fromkeys(out))


def run_plan_designs(args, print_text=print) -> int:
    from .study.design_plan import pilot_tail, plan_designs, planning_population, tail_sentence
    from .study.design_sim import load_census
    from .errors import ParameterError
    from .reading.frame import read_frame
    from .reading.io import load_chunks
    from .study.sampling import DESIGNS
    if args.doc is None or args.score is None or (args.census is None) == (args.pilot_data is None):
        raise ParameterError("--frame needs --doc, --score and one of --census or --pilot-data")
    for flag, v in (("--params", args.params), ("--sd", args.sd)):
        if v is not None:
            raise ParameterError(f"{flag} does not go with --frame")
    # the frame gives the population, and the designs' simulations plan the micro mean by their own
    # intervals: these would be passed over without a word
    for flag, v, why in (("--population-size", args.population_size, "the frame gives the population"),
                         ("--estimand macro", None if args.estimand in (None, "micro") else args.estimand,
                          "the designs are planned for the micro mean"),
                         ("--df-rule", args.df_rule, "each design's own interval is simulated"),
                         ("--pilot", args.pilot, "--census or --pilot-data is the pilot")):
        if v is not None:
            raise ParameterError(f"{flag} does not go with --frame: {why}")
    try:
        ks = tuple(int(x) for x in str(args.ks).split(","))
    except ValueError:
        raise ParameterError(f"--ks must be whole numbers separated by commas, got {args.ks!r}") from None
    designs = tuple(x.strip() for x in str(args.designs).split(",") if x.strip())
    bad = [d for d in designs if d not in DESIGNS]
    if bad or not designs:
        raise ParameterError(f"--designs: {bad[0] if bad else '(none)'!r} is not one of {', '.join(DESIGNS)}")
    frame = read_frame(args.frame, args.doc, n_col=args.frame_n)
    takes = args.take or (None,)
    chunk_scores = None
    if args.census is not None:
        # (a take of a continuous score labels real chunks: their scores come from the same read)
        census, chunk_scores = load_census(args.census, doc=args.doc, score=args.score, takes=takes)
        frame.check(census)
        if census.K != frame.M:
            raise ParameterError(f"--census holds {census.K:,} documents but the frame {frame.M:,}: a census scores "
                                 "every document of the frame (give a sample as --pilot-data)")
        basis, tail = "census", None
    else:
        pilot = load_chunks(args.pilot_data, doc=args.doc, score=args.score)
        frame.check(pilot)
        census = planning_population(frame, pilot)
        basis, tail = "pilot", pilot_tail(frame, pilot)
    level = 0.95 if args.level is None else args.level
    res = plan_designs(census, ks=ks, designs=designs, takes=takes, chunk_scores=chunk_scores,
                       half_width=args.half_width, budget=args.budget,
                       cost_doc=args.cost_doc, cost_chunk=args.cost_chunk, reps=args.reps, seed=args.seed,
                       level=level, basis=basis, tail=tail)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    target = (f"half-width {args.half_width:g}" if args.half_width is not None else f"budget {args.budget:g}")
    lines = [f"perdoc plan: designs on the frame {args.frame} ({frame.M:,} documents), simulated on "
             + ("the census" if basis == "census" else "a planning population made from the pilot (anticipated)")
             + f"; {res['reps']} samples per cell; target: {target}",
             f"  {'design':<11} {'take':>5} {'K':>4} {'labels':>8} {'cost':>9} {'half-width':>11} {'coverage':>9}  "]
    for r in res["rows"]:
        take = "all" if r.get("take") is None else str(r["take"])
        if "error" in r:
            lines.append(f"  {r['design']:<11} {take:>5} {r['k']:>4}  not possible: {r['error']}")
            continue
        hw = "" if r["half_width"] is None else f"{r['half_width']:.4f}"
        flag = "" if r["holds"] else f"  <- below {level:.0%}"
        if args.budget is not None and r["cost"] > args.budget:
            flag += "  (over budget)"
        lines.append(f"  {r['design']:<11} {take:>5} {r['k']:>4} {r['labels']:>8.0f} {r['cost']:>9.0f} {hw:>11} "
                     f"{r['coverage']:>9.3f}{flag}")
    if tail is not None and tail["restrict"]:
        lines.append(tail_sentence(tail))
    rec = res["recommended"]
    if rec is None:
        lines.append("no design reaches the target with its coverage holding: try larger K (--ks) or a larger budget"
                     + ("" if tail is None or not tail["restrict"] or "pps" in designs else
                        "; from this pilot only --designs pps can be recommended"))
    else:
        lines.append(f"recommended: --design {rec['design']} --k {rec['k']}"
                     + ("" if rec.get("take") is None else f" --take {rec['take']}")
                     + f" (half-width {rec['half_width']:.4f}, coverage {rec['coverage']:.3f}, about "
                     f"{rec['labels']:.0f} labels)")
    print_text("\n".join(lines))
    return 0


def add_design_flags(p, number, integer) -> None:
    """``perdoc simulate --design ...``: simulate a drawn design on the census instead of simple random
    sampling."""
    from .study.sampling import DESIGNS
    p.add_argument("--design", choices=DESIGNS, default=None,
                   help="simulate drawing the documents with this design (as perdoc sample does) and its "
                        "design-based interval, with the census as the frame")
    p.add_argument("--take", type=integer("--take"), default=None, metavar="M",
                   help="with --design: label M chunks of each drawn document (a 0/1 metric)")
    p.add_argument("--with-replacement", action="store_true", help="with --design pps: draws with replacement")
    p.add_argument("--strata", type=integer("--strata"), default=4, metavar="H",
                   help="with --design stratified: size strata (default 4)")
    p.add_argument("--remainder", choices=["srs", "pps"], default="srs",
                   help="with --design certainty: how the rest is drawn (default srs)")


def add_sample_parser(sub, number, integer, help: str) -> None:
    from .study.sampling import ALLOCATIONS, DESIGNS
    p = sub.add_parser("sample", help=help,
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
                   help="label M chunks of each drawn document, drawn at random (all when it has fewer; "
                        "under pps a certainty document gets proportionally more, so that every chunk has the "
                        "same chance); default: every chunk")
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
    p.add_argument("--allow-similar-ids", action="store_true",
                   help="keep frame ids that differ only in spaces, case or Unicode form as different "
                        "documents (default: refuse them)")


def run_sample(args) -> int:
    from .reading.frame import read_frame_hashed
    from .reading.manifest import manifest_json_path, write_manifest
    from .study.sampling import DEFAULT_ICC, draw_sample
    from pathlib import Path

    from ._cli_checks import refuse_overwriting_inputs
    from .errors import ParameterError
    # options of other designs are refused, not passed over (the record would say they were not used)
    for flag, given, designs in (("--with-replacement", args.with_replacement, ("pps",)),
                                 ("--certainty-size", args.certainty_size is not None, ("pps", "certainty")),
                                 ("--allocation", args.allocation is not None, ("stratified",))):
        if given and args.design not in designs:
            raise ParameterError(f"{flag} goes with --design {' or '.join(designs)}, not {args.design}")
    if args.out:   # (the manifest and the record beside it)
        refuse_overwriting_inputs("--out", args.out, args.frame)
        refuse_overwriting_inputs(f"--out {args.out}: its record", manifest_json_path(Path(args.out)), args.frame)
    # a plain CSV or TSV frame is read and hashed from one read of its bytes (else hashed below)
    frame, digest = read_frame_hashed(args.frame, args.doc, n_col=args.frame_n,
                                      allow_similar_ids=args.allow_similar_ids)
    allocation = args.allocation or ("cost" if (args.cost_doc is not None or args.cost_chunk is not None)
                                     else "neyman")
    sample = draw_sample(frame, design=args.design, k=args.k, seed=args.seed, take=args.take, strata=args.strata,
                         allocation=allocation, with_replacement=args.with_replacement, remainder=args.remainder,
                         certainty_size=args.certainty_size,
                         cost_doc=1.0 if args.cost_doc is None else args.cost_doc,
                         cost_chunk=0.0 if args.cost_chunk is None else args.cost_chunk,
                         icc=DEFAULT_ICC if args.icc is None else args.icc)
    facts = _file_facts(args.frame) if digest is None else {"file": _file_name(args.frame), **digest}
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


def _file_name(path) -> str:
    from pathlib import Path
    return Path(path).name


def _file_facts(path) -> dict:
    import hashlib
    from pathlib import Path
    import stat
    p = Path(path)
    try:
        regular = stat.S_ISREG(p.stat().st_mode)
    except OSError:
        regular = False
    if not regular:   # a pipe or device was read once already; it cannot be hashed again
        return {"file": p.name, "bytes": None, "sha256": None, "note": "not a regular file: not hashed"}
    h = hashlib.sha256()
    size = 0
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return {"file": p.name, "bytes": size, "sha256": h.hexdigest()}


def run_estimate_sample(args, format_estimates, print_text=print) -> int:
    """``perdoc estimate LABELS --doc ID --score COL --sample MANIFEST.csv``; ``format_estimates`` and
    ``print_text`` are the command line's own (passed in, so this module does not import it)."""
    from .errors import ParameterError
    from .study.estimate import check_level
    from .reading.manifest import read_table_file
    from .methods.survey import design_estimate
    from .reading.manifest import load_sample, read_manifest
    if args.data is None or args.doc is None or args.score is None:
        raise ParameterError("--sample needs the labels file, --doc and --score")
    for flag, v in (("--frame", args.frame), ("--population-size", args.population_size), ("--n", args.n_col),
                    ("--s", args.s_col), ("--q", args.q_col)):
        if v is not None:
            raise ParameterError(f"{flag} does not go with --sample: the manifest carries the design, the "
                                 "population and the sizes")
    # what the design-based estimate does not use is refused, not passed over (an output file that
    # is never written, a bootstrap that never runs, a declared metric that is never checked)
    from ._cli_checks import refuse_flags
    refuse_flags((("--write-table", args.write_table), ("--replicates", args.replicates), ("--seed", args.seed),
                  ("--metric", args.metric), ("--format", args.format), ("--engine", args.engine),
                  ("--backend", args.backend), ("--table", args.table), ("--trec-run", args.trec_run),
                  ("--qrels", args.qrels), ("--measure", args.measure), ("--doc-map", args.doc_map)),
                 "go with --sample: the labels are read as a CSV/TSV/Parquet table and estimated by the "
                 "manifest's design (no bootstrap)")
    level = check_level(0.95 if args.level is None else args.level)
    manifest = read_manifest(args.sample, args.doc, allow_similar_ids=args.allow_similar_ids)
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
    from .reading.table import DocTable
    table = DocTable.from_arrays(data.m, data.s, data.q, doc=[f"{d}#{r}" for d, r in zip(data.doc, data.draw)],
                                 source={"path": f"{args.data} (manifest {args.sample})"})
    print_text(format_estimates(result, table))
    return 0


def run_simulate_design(args, print_text=print) -> int:
    """``perdoc simulate --census FILE --doc ID --score COL --k K --design D [--take M]``."""
    from .study.design_sim import load_census, simulate_design
    from .errors import ParameterError
    if args.params is not None or args.vs is not None:
        raise ParameterError("--design simulates one system from --census, --doc and --score (not --params or --vs)")
    if args.census is None or args.doc is None or args.score is None or args.k is None:
        raise ParameterError("--design needs --census, --doc, --score and --k")
    from ._cli_checks import refuse_flags
    refuse_flags((("--replicates", args.replicates), ("--frame", args.frame), ("--engine", args.engine),
                  ("--backend", args.backend), ("--table", args.table)),
                 "go with --design: it simulates the design-based intervals (no bootstrap) on the census file")
    if args.with_replacement and args.design != "pps":
        raise ParameterError(f"--with-replacement goes with --design pps (the {args.design} design draws "
                             "without replacement)")
    # a take of a continuous score labels real chunks: their scores come from the same read
    census, chunk_scores = load_census(args.census, doc=args.doc, score=args.score, takes=(args.take,),
                                       fmt=args.format, metric=args.metric, allow_similar_ids=args.allow_similar_ids)
    res = simulate_design(census, design=args.design, k=args.k, reps=2000 if args.reps is None else args.reps,
                          chunk_scores=chunk_scores,
                          seed=1 if args.seed is None else args.seed, level=0.95 if args.level is None else args.level,
                          take=args.take, with_replacement=args.with_replacement, strata=args.strata,
                          remainder=args.remainder)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    lines = [f"perdoc simulate: {args.design} design, K = {args.k}" + (f", {args.take} chunks each" if args.take else "")
             + f", {res['reps']} samples of {args.census}; census micro mean {res['truth']:.6g}",
             f"  {'method':<20} {'coverage':>9} {'MC SE':>7} {'mean width':>11} {'miss low':>9} {'miss high':>9}"]
    for m, v in res["methods"].items():
        w = "" if v["mean_width"] is None else f"{v['mean_width']:.4g}"
        lines.append(f"  {m:<20} {v['coverage']:>9.3f} {v['mc_se']:>7.3f} {w:>11} "
                     f"{v['miss_low']:>9.3f} {v['miss_high']:>9.3f}")
    print_text("\n".join(lines))
    return 0


def _manifest_meta(path) -> dict:
    from .reading.manifest import manifest_meta
    return manifest_meta(path)
