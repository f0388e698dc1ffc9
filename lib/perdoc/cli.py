"""Command line: ``perdoc estimate ...``. It formats what the library computes; it computes nothing.

Bad input prints one line on stderr, nothing on stdout, and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace

from .errors import PerdocError

__all__ = ["main"]

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2, no usage dump
        raise _UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


class _UsageError(Exception):
    pass


#: The commands, in the order ``perdoc --help`` lists them, and the line it gives each.
HELP = {
    "estimate": "estimate the micro and macro means of one system",
    "compare": "compare two systems scored on the same documents (A - B), or several",
    "plan": "how many documents to sample for a target half-width",
    "simulate": "which interval holds its level on your data: coverage by simulation",
    "sample": "draw the documents (and chunks) to label from the frame",
    "report": "render one offline HTML report per params file",
}
COMMANDS = tuple(HELP)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``command`` (one of :data:`COMMANDS`) only that command's
    flags are built; the others are listed with their line of :data:`HELP`, which is all
    ``perdoc --help`` shows of them (one command's start-up does not build the flags of six)."""
    p = _Parser(prog="perdoc", description="Per-document uncertainty for retrieval and RAG evaluation.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    builders = {"estimate": _add_estimate_parser, "compare": _add_compare_parser, "plan": _add_plan_parser,
                "simulate": _add_simulate_parser, "sample": _add_sample_parser, "report": _add_report_parser}
    for name in COMMANDS:
        if command is None or command == name:
            builders[name](sub)
        else:
            sub.add_parser(name, help=HELP[name])
    return p


def _add_sample_parser(sub) -> None:
    from .cli_sample import add_sample_parser
    add_sample_parser(sub, _number, _integer, HELP["sample"])


def _add_estimate_parser(sub) -> None:
    """``perdoc estimate``: one system's micro and macro means from rows or a per-document table."""
    e = sub.add_parser("estimate", help=HELP["estimate"],
                       description="Estimate the micro and macro means of one system from per-chunk "
                                   "(or per-query) rows, or from a per-document table (--n/--s).")
    e.add_argument("data", nargs="?",
                   help="CSV, TSV, Parquet or JSON Lines file, an inspect_ai .eval log (or another --format), "
                        "'-' for standard input (with --format), or use --params")
    e.add_argument("--params", metavar="FILE",
                   help="a params YAML: data, columns, design (srs, census, stratified, two_stage) and intervals")
    e.add_argument("--skip-simulation", action="store_true",
                   help="with --params and a census: do not run the census simulation that chooses the leading "
                        "interval (as perdoc report does); the panel's default then leads, marked not checked")
    e.add_argument("--doc", help="document id column")
    e.add_argument("--score", help="score column of per-chunk rows (0/1 or any number)")
    e.add_argument("--n", dest="n_col", help="pre-aggregated input: column with n_d")
    e.add_argument("--s", dest="s_col", help="pre-aggregated input: column with s_d")
    e.add_argument("--q", dest="q_col", help="pre-aggregated input: column with q_d (sum of squares)")
    e.add_argument("--population-size", type=_number("--population-size"), default=None, metavar="M",
                   help="documents in the population (turns on the finite population correction; default: none)")
    e.add_argument("--frame", metavar="FILE",
                   help="sizes of every population document: a file with the --doc column and a column n "
                        "(chunks); adds the frame-aware micro methods (frame_ratio, frame_loglinear)")
    e.add_argument("--level", type=_number("--level"), default=None, help="confidence level (default 0.95)")
    e.add_argument("--replicates", type=_integer("--replicates"), default=None, metavar="B",
                   help="document bootstrap replicates (default 9999; 0 skips the bootstrap)")
    e.add_argument("--seed", type=_integer("--seed"), default=None, help="bootstrap seed (default 1)")
    e.add_argument("--json", action="store_true", help="print one JSON object")
    e.add_argument("--write-table", metavar="PATH",
                   help="also write the per-document table (.csv or .parquet), its id column named as --doc")
    e.add_argument("--sample", metavar="MANIFEST.csv",
                   help="the manifest of perdoc sample: DATA holds the labelled units (the --doc column, the "
                        "--score column, and the manifest's chunk and draw columns when it has them); the "
                        "design-based estimate of that design is given")
    e.add_argument("--judge", metavar="COL",
                   help="an automatic judge's score column on the same rows as --score (the gold labels): "
                        "judge-assisted (prediction-powered) intervals, by document; needs --judge-file or "
                        "--judge-sample")
    e.add_argument("--judge-file", metavar="FILE",
                   help="with --judge: the judge's scores on every chunk of every population document (the --doc "
                        "and --judge columns); its mean is then known")
    e.add_argument("--judge-sample", metavar="FILE",
                   help="with --judge: the judge's scores on documents that were not labelled, a random sample of "
                        "the population of their own")
    e.add_argument("--nonresponse", action="store_true",
                   help="with --sample: units of the manifest left without a label are counted as nonresponse "
                        "(default: refused)")
    _add_trec_flags(e)
    _add_input_flags(e)


def _add_compare_parser(sub) -> None:
    """``perdoc compare``: two systems scored on the same documents (A - B), or several (every pair)."""
    c = sub.add_parser("compare", help=HELP["compare"],
                       description="Paired comparison of two score columns on the same rows: per-document "
                                   "differences, every interval method, correlation, ties and a "
                                   "document-level sign-flip randomization test. With several systems "
                                   "(--vs B,C,D or --vs-run given more than once): every pair's difference "
                                   "with its leading interval, p-values adjusted by Holm, a simultaneous "
                                   "band and a ranking with rank intervals.")
    c.add_argument("data", nargs="?", help="CSV, TSV, Parquet or JSON Lines file, one row per chunk (or query), "
                                           "or an inspect_ai .eval log (or another --format); '-' for standard "
                                           "input (with --format); none with --backend or --trec-run")
    c.add_argument("--doc", help="document id column (a dotted path with an evaluation-framework --format)")
    c.add_argument("--score", metavar="A", help="score column of system A")
    c.add_argument("--vs", metavar="B[,C,...]",
                   help="score column of system B; several columns separated by commas (B,C,D) compare every "
                        "pair of A, B, C, D (a column whose own name holds commas is taken whole)")
    c.add_argument("--unpaired", action="store_true",
                   help="allow rows scored by one system only (delta-method comparison)")
    c.add_argument("--population-size", type=_number("--population-size"), default=None, metavar="M",
                   help="documents in the population (turns on the finite population correction; default: none)")
    c.add_argument("--level", type=_number("--level"), default=0.95, help="confidence level (default 0.95)")
    c.add_argument("--replicates", type=_integer("--replicates"), default=9999, metavar="B",
                   help="document bootstrap replicates (default 9999; 0 skips the bootstrap)")
    c.add_argument("--seed", type=_integer("--seed"), default=1,
                   help="seed of the bootstrap and the randomization test (default 1)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--judge", metavar="COL", default=None,
                   help="system A's automatic judge column on the same rows (--score holds A's gold labels): a "
                        "judge-assisted paired difference; needs --judge-vs and --judge-file or --judge-sample")
    c.add_argument("--judge-vs", metavar="COL", default=None, help="with --judge: system B's judge column")
    c.add_argument("--judge-file", metavar="FILE", default=None,
                   help="with --judge: both judges' scores on every chunk of every population document")
    c.add_argument("--judge-sample", metavar="FILE", default=None,
                   help="with --judge: both judges' scores on documents that were not labelled")
    c.add_argument("--sample", metavar="MANIFEST.csv", default=None,
                   help="with --judge and --judge-file: the manifest of perdoc sample; DATA holds the labelled "
                        "units with both systems' gold and judge columns, and the difference is design-based")
    c.add_argument("--nonresponse", action="store_true",
                   help="with --sample: units of the manifest left without a label are counted as nonresponse "
                        "(default: refused)")
    _add_trec_flags(c, compare=True)
    _add_input_flags(c)


def _add_plan_parser(sub) -> None:
    """``perdoc plan``: how many documents to sample for a target half-width."""
    pl = sub.add_parser("plan", help=HELP["plan"],
                        description="Smallest number of documents K whose interval half-width reaches the "
                                    "target: t(1-a/2; df) * S / sqrt(K) * sqrt(1 - K/M). Give the spread S "
                                    "(--sd; df = K - 1), or a params file: its census, else its dataset, is "
                                    "the pilot, and the plan follows the report's planning section (micro "
                                    "mean: CR2 with the Bell-McCaffrey df of K documents sized like the "
                                    "pilot's; macro mean: t with K - 1 df). With --vs B it plans the paired "
                                    "difference A - B from the pilot's paired spread.")
    pl.add_argument("--estimand", choices=["macro", "micro"], help="which mean (taken from --params if given)")
    pl.add_argument("--sd", type=_number("--sd"), metavar="S",
                    help="spread: sd of document rates (macro) or sd(u_d)/mean(n_d) (micro)")
    pl.add_argument("--half-width", type=_number("--half-width"), default=None, metavar="H",
                    help="target half-width of the interval (required, except with --frame and --budget)")
    pl.add_argument("--population-size", type=_number("--population-size"), default=None, metavar="M",
                    help="documents in the population (finite population correction; default: the params "
                         "file's design.population_size, else none)")
    pl.add_argument("--level", type=_number("--level"), default=None,
                    help="confidence level (default: the params file's intervals.level, else 0.95)")
    pl.add_argument("--params", metavar="FILE",
                    help="plan as this study's report does: from its census when the params give one, else from "
                         "its dataset as the pilot")
    pl.add_argument("--pilot", choices=["census", "study"], default=None,
                    help="with --params: plan from the census (the default when the params give one) or from the "
                         "study's own dataset")
    pl.add_argument("--df-rule", type=str.lower, choices=["bell-mccaffrey", "k-1"], default=None,
                    help="degrees of freedom (default: the report's rule: bell-mccaffrey for the micro mean with "
                         "--params, the CR2 df of K documents sized like the pilot's; k-1 for the macro mean and "
                         "with --sd); k-1 plans the micro mean with t, K - 1 df and sd(u_d)/mean(n_d)")
    pl.add_argument("--vs", metavar="B", default=None,
                    help="with --params: plan the paired difference A - B of two systems, B being this score column "
                         "of the pilot and A --score (default: the params' data.score); the spread is the pilot's "
                         "paired spread, every pilot row scored by both")
    pl.add_argument("--json", action="store_true", help="print one JSON object")
    pl.add_argument("--judge", metavar="COL", default=None,
                    help="plan a judge-assisted interval: --pilot-data holds labelled rows with the gold (--score) "
                         "and this judge column; with --judge-file (or --judge-sample) the plan takes the pilot's "
                         "spread after the judge's correction")
    pl.add_argument("--judge-file", metavar="FILE", default=None,
                    help="with --judge: the judge's scores on every chunk of every population document")
    pl.add_argument("--judge-sample", metavar="FILE", default=None,
                    help="with --judge: the judge's scores on documents that were not labelled")
    from .cli_sample import add_plan_design_flags
    add_plan_design_flags(pl, _number, _integer)


def _add_simulate_parser(sub) -> None:
    """``perdoc simulate``: the coverage of every interval method by simulation."""
    sm = sub.add_parser("simulate", help=HELP["simulate"],
                        description="Draw repeated samples of K documents from a census (or a pilot treated as "
                                    "the population), compute every interval method on each, and report per "
                                    "method coverage, its Monte Carlo SE, mean width and RMSE, and the "
                                    "recommended method.")
    sm.add_argument("--census", help="census file, one row per chunk (or query)")
    sm.add_argument("--doc", help="document id column")
    sm.add_argument("--score", help="score column")
    sm.add_argument("--vs", metavar="B", help="simulate the paired comparison of --score against this column")
    sm.add_argument("--k", type=_integer("--k"), help="documents per sample (required without --params; default with it: simulation.k, else the study's K)")
    sm.add_argument("--reps", type=_integer("--reps"), help="number of simulated samples (default: the params file's simulation.reps, else 2000)")
    sm.add_argument("--seed", type=_integer("--seed"), default=None,
                    help="seed of the simulated samples (default: the params file's simulation.seed, else 1)")
    sm.add_argument("--level", type=_number("--level"), default=None,
                    help="nominal level of every interval (default: the params file's intervals.level, else 0.95)")
    sm.add_argument("--replicates", type=_integer("--replicates"), default=None, metavar="B",
                    help="bootstrap replicates and wild draws per sample (default: the params file's "
                         "simulation.replicates, else 999; 0 skips them)")
    sm.add_argument("--params", metavar="FILE",
                    help="take the census, columns, design and defaults from a params file")
    sm.add_argument("--json", action="store_true", help="print one JSON object")
    sm.add_argument("--frame", action="store_true",
                    help="the size of every population document is known (the census is the frame): also "
                         "simulate the frame-aware micro methods (on with the params key design.frame)")
    _add_input_flags(sm, census=True)
    from .cli_sample import add_design_flags
    add_design_flags(sm, _number, _integer)


def _add_report_parser(sub) -> None:
    """``perdoc report``: one offline HTML report per params file."""
    r = sub.add_parser("report", help=HELP["report"],
                       description="Execute the notebooks for each params file and write "
                                   "<out>/<name>/report.html, summary.json and documents.csv. A report "
                                   "replaces the earlier one of the same name; --name keeps variants apart.")
    r.add_argument("params", nargs="+", help="params YAML file(s)")
    r.add_argument("--out", default="reports", help="output folder (default: reports)")
    r.add_argument("--language", choices=("en", "es"), default=None,
                   help="language of the report, en (English) or es (Spanish); overrides report.language "
                        "of every params file, as --set report.language=... (default: the params file's, else en)")
    r.add_argument("--set", dest="overrides", action="append", metavar="KEY=VALUE", default=None,
                   help="override a params key by its dotted name, e.g. intervals.level=0.9, simulation.reps=500, "
                        "report.language=es (repeatable; VALUE read as YAML; checked like the file; recorded "
                        "in summary.json as params_overrides; default: none)")
    r.add_argument("--name", metavar="NAME", default=None,
                   help="name of the report's folder under --out, overriding the params file's name key (one "
                        "params file only; default: that name)")
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="print a line per step and per report section, and a bar while a simulation runs, on "
                        "standard error (default: when standard error is a terminal)")


def _formats():
    from .reading import formats
    return formats


#: The values of --format, from the one registry of formats (perdoc.reading.formats).
FORMATS = _formats().choices()


def _add_trec_flags(p, compare: bool = False) -> None:
    """A TREC run scored against qrels by ir-measures, queries mapped to documents (no DATA then)."""
    p.add_argument("--trec-run", metavar="RUN", help="TREC run file (instead of DATA; with --qrels, --measure, "
                                                     "--doc-map)" + (": system A" if compare else ""))
    if compare:
        p.add_argument("--vs-run", metavar="RUN", action="append",
                       help="TREC run of system B, scored on the same queries; give it again for each further "
                            "system (every pair is compared)")
    p.add_argument("--qrels", metavar="QRELS", help="TREC qrels file (relevance judgments)")
    p.add_argument("--measure", metavar="M", help="ir-measures measure, e.g. nDCG@10, RR, P@5, R@100, AP")
    p.add_argument("--doc-map", metavar="MAP", help="CSV/TSV with two columns: query id, document id")


def _trec_args(args, compare: bool = False) -> bool:
    """Whether --trec-run is given (its companion flags checked); refuses them without it."""
    from .errors import ParameterError
    flags = {"--qrels": args.qrels, "--measure": args.measure, "--doc-map": args.doc_map}
    if compare:
        flags["--vs-run"] = args.vs_run
    if args.trec_run is None:
        given = [f for f, v in flags.items() if v is not None]
        if given:
            raise ParameterError(f"{', '.join(given)} go(es) with --trec-run (a TREC run scored against qrels)")
        return False
    missing = [f for f, v in flags.items() if v is None]
    if missing:
        raise ParameterError(f"--trec-run needs {', '.join(missing)}")
    others = (("--vs", args.vs),) if compare else (("--n", args.n_col), ("--s", args.s_col), ("--q", args.q_col))
    clash = [f for f, v in (("DATA", args.data), ("--doc", args.doc), ("--score", args.score),
                            ("--format", args.format), *others) if v is not None]
    if clash:
        raise ParameterError(f"--trec-run takes the data from the run, qrels and document map; drop {', '.join(clash)}")
    return True


def _adapted_input(args, compare: bool = False):
    """The table (pairs with ``compare``) read by an evaluation-framework adapter or from TREC runs,
    or None when neither --trec-run nor an adapter's format is given (--format, else DATA's extension:
    a .eval file is an inspect_ai log)."""
    from .errors import ParameterError
    opts = {"metric": args.metric, "allow_similar_ids": args.allow_similar_ids}
    if _trec_args(args, compare):
        from .reading import adapted
        if compare:
            if args.unpaired:
                raise ParameterError("--unpaired does not go with --trec-run: both runs are scored on the same "
                                     "judged queries (a query a run does not rank scores 0)")
            return adapted.load_trec_pairs(args.trec_run, args.vs_run, args.qrels, args.measure, args.doc_map, **opts)
        return adapted.load_trec(args.trec_run, args.qrels, args.measure, args.doc_map, **opts)
    fmt = _formats().adapter_for(args.data, args.format)   # --format, else DATA's extension (.eval: inspect)
    if fmt is None:
        return None
    from .reading import adapted    # (the adapters are imported only for their formats)
    what = f"--format {args.format}" if args.format is not None else \
        f"{args.data} (format {fmt}, from its extension)"
    need = (("DATA", args.data), ("--doc", args.doc), ("--score", args.score)) + ((("--vs", args.vs),) if compare
                                                                                  else ())
    missing = [f for f, v in need if v is None]
    if missing:
        raise ParameterError(f"{what} needs {', '.join(missing)} (fields by dotted path, e.g. "
                             "--doc metadata.doc_id --score match)")
    if compare:
        return adapted.load_pairs(args.data, fmt, doc=args.doc, a=args.score, b=args.vs,
                                  unpaired=args.unpaired, **opts)
    if any(v is not None for v in (args.n_col, args.s_col, args.q_col)):
        raise ParameterError(f"{what} reads per-sample results: give --doc and --score, not --n/--s/--q")
    return adapted.load_chunks(args.data, fmt, doc=args.doc, score=args.score, **opts)
METRICS = ("binary", "proportion", "score")


def _add_input_flags(p, census: bool = False) -> None:
    """--format, --metric and --allow-similar-ids: how to read the data and what to check in it."""
    what = "the census" if census else "the data"
    p.add_argument("--format", type=str.lower, choices=FORMATS, default=None,
                   help=f"format of {what} (default: told by the file name's extension: "
                        f"{_formats().extensions()}; needed for '-' and pipes)")
    p.add_argument("--metric", type=str.lower, choices=METRICS, default=None,
                   help="declare the metric: binary (only 0/1), proportion (in [0, 1]) or score (any number); "
                        "values that break it are refused (default: inferred and reported)")
    p.add_argument("--allow-similar-ids", action="store_true",
                   help="keep document ids that differ only in spaces, case or Unicode form as different "
                        "documents (default: refuse them)")
    p.add_argument("--engine", type=str.lower, choices=("duckdb", "spark"), default=None,
                   help=f"what reads and aggregates {what}: duckdb (default, in this process) or spark (a local "
                        "session, or the cluster named by SPARK_REMOTE / spark-submit); needs perdoc[spark]")
    p.add_argument("--backend", metavar="URL", default=None,
                   help="read the table --table of this Ibis backend instead of a file (e.g. "
                        "bigquery://project/dataset, postgres://user@host/db, duckdb://file.ddb); "
                        "the aggregation runs there")
    p.add_argument("--table", metavar="NAME", default=None, help="the table to read with --backend")


def _input_options(args) -> dict:
    return {"fmt": args.format, "metric": args.metric, "allow_similar_ids": args.allow_similar_ids,
            **_engine_options(args)}


def _engine_options(args) -> dict:
    """--engine, or --backend with --table: where the data is read and aggregated."""
    from .errors import ParameterError
    engine, url, table = getattr(args, "engine", None), getattr(args, "backend", None), getattr(args, "table", None)
    if (url is None) != (table is None):
        raise ParameterError("--backend URL and --table NAME go together")
    if url is not None and engine is not None:
        raise ParameterError("give either --engine (how to read the file) or --backend (a table elsewhere), not both")
    files = [flag for flag, v in (("DATA", getattr(args, "data", None)), ("--census", getattr(args, "census", None)))
             if v is not None]
    if url is not None and files:   # (the file would not be read, without a word)
        raise ParameterError(f"--backend reads the table {table!r} where it lives; drop {' and '.join(files)}, "
                             "or drop --backend and --table to read the file")
    return {"engine": engine, "backend": None if url is None else {"url": url, "table": table}}


def _number(flag):
    """An argparse type for ``flag``: a float, else one line saying a number was expected."""
    return _converter(flag, float, "a number")


def _integer(flag):
    """An argparse type for ``flag``: an int, else one line saying an integer was expected."""
    return _converter(flag, int, "an integer")


def _converter(flag, cast, what: str):
    """An argparse type that applies ``cast``, and names ``flag`` and ``what`` it must be when it fails."""
    def conv(x):
        try:
            return cast(x)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {what} (got {x!r})") from None
    return conv


def main(argv=None) -> int:
    from ._imports import skip_slow_optional
    skip_slow_optional()   # seconds of start-up no command needs (see perdoc._imports)
    try:
        return _run(argv)
    except (PerdocError, _UsageError) as err:
        # one line, without secrets (perdoc.redact) and with control characters escaped
        from .redact import safe_line
        print(safe_line(f"perdoc: error: {err}" if isinstance(err, PerdocError) else str(err)), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as err:
        # a report build stopped by SIGTERM or SIGINT (perdoc.report.BuildInterrupted) has cleaned up
        # after itself and says so; the status is the shell's for a signal: 128 + its number
        signum = getattr(err, "signum", 2)
        print(f"perdoc: {err}" if hasattr(err, "signum") else "perdoc: interrupted", file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # e.g. `perdoc estimate ... | head`: the reader left; exit quietly
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


#: The commands that only read, compute and print: once their output is flushed, the ``perdoc``
#: command exits at once (:func:`console`).
QUICK_EXIT = ("estimate", "compare", "plan")


def console() -> None:
    """The ``perdoc`` command: :func:`main` on the command line's arguments, then the process's exit.

    After ``estimate``, ``compare`` and ``plan`` (which only read, compute and print: their files are
    closed and their temporary folders removed when :func:`main` returns) the process exits as soon
    as its output is flushed, without tearing the interpreter down: unloading DuckDB's and numpy's
    modules took about 25 ms of every such command, a tenth of a small study's. Not when another
    Python thread still runs, nor with Spark or Ibis loaded (their connections close at exit).
    The command also lets the C allocator keep freed arrays for reuse (:mod:`perdoc._allocator`)."""
    from . import _allocator
    _allocator.enable()
    code = main()
    argv = sys.argv[1:]
    if argv and argv[0] in QUICK_EXIT and _quiet_process():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):   # (a closed pipe: the ordinary exit says so)
            sys.exit(code)
        import os
        os._exit(code)
    sys.exit(code)


def _quiet_process() -> bool:
    """No other Python thread, and no engine whose connections close at the interpreter's exit."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    return not any(name in sys.modules for name in ("pyspark", "ibis"))


def _run(argv) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv[0] if argv and argv[0] in COMMANDS else None).parse_args(argv)
    if args.version:
        from . import __version__
        print(f"perdoc {__version__}")
        return 0
    commands = {"estimate": _estimate, "compare": _compare, "report": _report, "plan": _plan,
                "simulate": _simulate}
    if args.command in ("estimate", "compare", "simulate"):
        _distinct_columns(args)
    if args.command in commands:
        return commands[args.command](args)
    if args.command == "sample":
        from .cli_sample import run_sample
        return run_sample(args)
    build_parser().print_help(sys.stderr)
    return EXIT_BAD_INPUT


#: The flags that name a column of the data, in the order messages name them (a judge's column has
#: checks of its own, which say what the judge must differ from).
_COLUMN_FLAGS = (("--doc", "doc"), ("--score", "score"), ("--vs", "vs"), ("--n", "n_col"), ("--s", "s_col"),
                 ("--q", "q_col"))


def _distinct_columns(args) -> None:
    """Two column flags naming the same column are refused in one line naming both flags (the
    loaders' own check names their arguments, ``a and b``, which the command line does not have)."""
    from .errors import ColumnError
    seen = {}
    for flag, dest in _COLUMN_FLAGS:
        v = getattr(args, dest, None)
        if isinstance(v, str) and v:
            if v in seen:
                raise ColumnError(f"{seen[v]} and {flag} both name column {v!r}; each must be a different column")
            seen[v] = flag


def _estimate(args) -> int:
    from .study.estimate import DEFAULT_REPLICATES, DEFAULT_SEED, estimate
    from .reading.io import load_chunks, load_docs, write_table

    if args.judge is not None or args.judge_file is not None or args.judge_sample is not None:
        return _estimate_judged(args)
    if args.params is not None:
        return _estimate_params(args)
    if args.skip_simulation:
        from .errors import ParameterError
        raise ParameterError("--skip-simulation goes with --params: only a params file's census is simulated")
    if args.sample is not None:
        from .cli_sample import run_estimate_sample
        return run_estimate_sample(args, format_estimates, _print_text)
    from ._cli_checks import refuse_overwriting_inputs
    refuse_overwriting_inputs("--write-table", args.write_table, args.data, args.frame, args.qrels, args.trec_run,
                              args.doc_map)
    table = _adapted_input(args)
    aggregated = False
    doc_name = args.doc or "doc"
    if table is None:
        table, aggregated = _load_estimate_input(args, load_chunks, load_docs)
    pop = _population_size(args)
    frame = None
    if args.frame is not None:
        from .reading.frame import read_frame
        frame = read_frame(args.frame, doc_name, allow_similar_ids=args.allow_similar_ids)
    result = estimate(table, level=0.95 if args.level is None else args.level, population_size=pop,
                      replicates=DEFAULT_REPLICATES if args.replicates is None else args.replicates,
                      seed=DEFAULT_SEED if args.seed is None else args.seed, frame=frame)
    if args.write_table:
        write_table(table, args.write_table, doc_name=doc_name)
    _print_estimates(args, result, table, aggregated)
    return 0


def _estimate_judged(args) -> int:
    """``perdoc estimate LABELS --doc ID --score GOLD --judge COL --judge-file FILE``: judge-assisted means."""
    from .errors import ParameterError
    from .study.judge import estimate_judged, load_judged
    if args.judge is None:
        raise ParameterError("--judge-file and --judge-sample go with --judge (the judge's score column)")
    clash = [flag for flag, v in (("--n", args.n_col), ("--s", args.s_col), ("--q", args.q_col),
                                  ("--frame", args.frame), ("--trec-run", args.trec_run),
                                  ("--backend", args.backend), ("--write-table", args.write_table),
                                  ("--params", args.params)) if v is not None]
    if clash:
        raise ParameterError(f"--judge reads per-chunk rows with a gold and a judge column; drop {', '.join(clash)}")
    if args.data is None:
        raise ParameterError("give the labelled rows' file (DATA) with --judge")
    if args.doc is None or args.score is None:
        raise ParameterError("--judge needs --doc (the document id column) and --score (the gold labels' column)")
    if args.sample is not None:
        from .study.judge import load_judged_design
        if args.judge_sample is not None or args.population_size is not None:
            flag = "--judge-sample" if args.judge_sample is not None else "--population-size"
            raise ParameterError(f"{flag} does not go with --sample: the manifest carries the design and the frame, "
                                 "and the judge file covers it")
        sample = load_judged_design(args.data, args.sample, args.doc, args.score, args.judge,
                                    judge_file=args.judge_file, nonresponse=args.nonresponse,
                                    **_input_options(args))
    else:
        sample = load_judged(args.data, args.doc, args.score, args.judge, judge_file=args.judge_file,
                             judge_sample=args.judge_sample, **_input_options(args))
    result = estimate_judged(sample, level=0.95 if args.level is None else args.level,
                             population_size=_population_size(args),
                             replicates=0 if args.replicates is None else args.replicates,
                             seed=1 if args.seed is None else args.seed)
    return _print_judged(result, sample, args)


def _print_judged(result, sample, args) -> int:
    """A judge-assisted answer (``perdoc estimate --judge``, ``perdoc compare --judge``): its JSON with
    --json, else :func:`judged_lines`."""
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, allow_nan=False))
        return 0
    for line in judged_lines(result, sample, args):
        _print_text(line)
    return 0


def judged_lines(result, sample, args) -> list[str]:
    """The text of ``perdoc estimate --judge``: what leads for each mean, in words, then the detail."""
    import math
    pct = f"{result.level:.0%}"
    where = ("the judge's scores on every population document" if result.covers
             else f"the judge's scores on {result.judged_documents:,} unlabelled documents (a sample)")
    out = [f"perdoc estimate: {args.data} with the judge {args.judge!r}",
           f"K = {result.K} labelled documents; {where}; level = {result.level:g}"]
    if result.design is not None:
        out.append(f"drawn sample ({result.design.get('design', 'design')} design, manifest {args.sample}): "
                   "design-based estimates, each document weighted by its inverse probability of selection")
    out.append("")
    names = {"micro": "micro mean (rate of a randomly drawn chunk)", "macro": "macro mean (rate in a typical document)"}
    if result.difference is not None:
        a, b = result.difference
        out[0] = f"perdoc compare: {args.data}, {a} - {b} with the judges {args.judge!r} and {args.judge_vs!r}"
        names = {"micro": f"micro difference {a} - {b} (by chunks)", "macro": f"macro difference {a} - {b} (by "
                 "documents)"}
    for kind in ("micro", "macro"):
        h, r = result.lead(kind), result.ppi[kind]
        ends = ("no interval" if h["low"] is None or h["high"] is None or not math.isfinite(h["low"])
                else f"{pct} interval [{h['low']:.4f}, {h['high']:.4f}]")
        out.append(f"answer, {names[kind]}: {h['estimate']:.4f}, {ends}")
        if h["basis"] == "judge":
            out.append(f"  judge-assisted: the judge's mean corrected by its errors on the labelled documents; "
                       f"worth about {r['effective_documents']:.0f} labelled documents without the judge "
                       f"(weight {r['lam']:.2f})")
        elif result.agreement["documents_differing"] == 0:
            out.append("  labels only: the judge agreed with the gold on every labelled document, so its errors "
                       "cannot be measured and the judge-assisted interval has none")
        else:
            why = r.get("reason") or ("the judge-corrected values show no spread (every labelled document has the "
                                      "same corrected rate)")
            out.append(f"  labels only: the judge-assisted estimate has no interval: {why}")
        lab = result.labels_interval(kind)
        ci = "no interval" if lab.ci is None else f"[{lab.ci.low:.4f}, {lab.ci.high:.4f}]"
        out.append(f"  labels only ({lab.method}): {lab.estimate:.4f}, {ci}")
        if result.difference is not None:
            a, b = result.difference
            out.append("  verdict: " + {"a_higher": f"{a} is higher (the interval lies above 0)",
                                        "b_higher": f"{b} is higher (the interval lies below 0)",
                                        "includes_zero": "no difference shown (the interval holds 0)",
                                        "no_interval": "no interval, no verdict"}[result.verdict(kind)])
    a = result.agreement
    out += ["", f"judge against gold on the labelled documents: correlation of document rates "
                f"{a['rate_correlation']:.2f}, judge bias {a['bias']:+.4f}, {a['documents_differing']} of {result.K} "
                "documents where they differ",
            f"judge mean: micro {result.judge_mean['micro']:.4f}, macro {result.judge_mean['macro']:.4f}"]
    out += [f"warning: {w}" for w in result.warnings]
    if sample.judge_exclusions:
        out.append("excluded judge rows: " + "; ".join(f"{e.rows} ({e.reason})" for e in sample.judge_exclusions))
    return out


def _population_size(args):
    """--population-size as an int when it is a whole number, else as given (None when not given)."""
    pop = args.population_size
    if pop is not None and float(pop).is_integer():
        pop = int(pop)
    return pop


def _load_estimate_input(args, load_chunks, load_docs):
    """``perdoc estimate``'s table from DATA (or --backend) and the column flags: (table, aggregated)."""
    from .errors import ParameterError
    if args.data is None and args.backend is None:
        raise ParameterError("give a data file (or --params FILE)")
    if args.doc is None:
        raise ParameterError("missing --doc (the document id column)")
    aggregated = args.n_col is not None or args.s_col is not None
    if aggregated:
        if args.score is not None:
            raise ParameterError("give either --score (per-chunk rows) or --n and --s (per-document table), not both")
        if args.n_col is None or args.s_col is None:
            raise ParameterError("a per-document table needs both --n and --s")
        table = load_docs(args.data, doc=args.doc, n=args.n_col, s=args.s_col, q=args.q_col,
                          **_input_options(args))
    else:
        if args.score is None:
            raise ParameterError("missing --score (or --n and --s for a per-document table)")
        if args.q_col is not None:
            raise ParameterError("--q goes with --n and --s (per-document table)")
        table = load_chunks(args.data, doc=args.doc, score=args.score, **_input_options(args))
    return table, aggregated


def _estimate_params(args) -> int:
    """``perdoc estimate --params FILE``: data, columns, design and intervals from the params file."""
    from .errors import ParameterError
    from .reading.io import write_table
    from .study.params import load_params
    from .study.run import estimate_study, load_study_table

    clash = [flag for flag, v in (("DATA", args.data), ("--doc", args.doc), ("--score", args.score),
                                  ("--n", args.n_col), ("--s", args.s_col), ("--q", args.q_col),
                                  ("--population-size", args.population_size), ("--format", args.format),
                                  ("--metric", args.metric), ("--trec-run", args.trec_run),
                                  ("--qrels", args.qrels), ("--measure", args.measure), ("--doc-map", args.doc_map),
                                  ("--allow-similar-ids", args.allow_similar_ids or None),
                                  ("--backend", args.backend), ("--table", args.table),
                                  ("--frame (use design.frame)", args.frame)) if v is not None]
    if clash:
        raise ParameterError(f"--params takes the data, columns and design from the file; drop {', '.join(clash)}")
    study = load_params(args.params)
    from ._cli_checks import refuse_overwriting_inputs
    from .study.run import frame_path
    refuse_overwriting_inputs("--write-table", args.write_table, args.params, study.data.path, study.census,
                              frame_path(study), study.data.judge_file)
    if args.engine is not None:  # the params' data, read by the engine named on the command line
        study = replace(study, data=replace(study.data, engine=args.engine))
    iv = study.intervals
    study = replace(study, intervals=replace(
        iv, level=iv.level if args.level is None else args.level,
        replicates=iv.replicates if args.replicates is None else args.replicates,
        seed=iv.seed if args.seed is None else args.seed))
    judged = None
    if study.data.judge is not None:   # the judge file may be the frame (population size), as in the report
        from .study.run import judge_frame_study, load_study_judged
        judged = load_study_judged(study)
        study = judge_frame_study(study, judged)
    table = load_study_table(study)
    result = estimate_study(study, table)
    if judged is not None:   # the judge-assisted rows, which lead as in the report
        from .study.judge import with_judge
        from .study.run import estimate_study_judged
        result = with_judge(result, estimate_study_judged(study, judged, result))
    simulation = None if args.skip_simulation else _study_simulation(study, table)
    if args.write_table:   # (after the census simulation: a study that fails there writes nothing)
        write_table(table, args.write_table, doc_name=study.data.doc)
    from .study.policy import lead, mark_leads
    kind = study.estimand.kind
    h = lead(result, kind, simulation)
    result = mark_leads(result, simulation)
    _print_estimates(args, result, table, study.data.aggregated, {kind: h})
    return 0


def _study_simulation(study, table):
    """The census simulation a report of ``study`` runs (None without a census), with a line on
    standard error while it runs: the CLI leads with what it supports, as the report does."""
    from .study.run import simulate_study
    if study.census is None or study.simulation is None:
        return None
    print(f"perdoc estimate: checking the intervals on the census ({study.simulation.reps:,} simulated samples; "
          "--skip-simulation leaves them unchecked)...", file=sys.stderr, flush=True)
    simulation, _ = simulate_study(study, table, paired=False)
    return simulation


def _print_estimates(args, result, table, aggregated, headlines: dict | None = None) -> None:
    """``headlines``: {kind: Headline} of :func:`perdoc.policy.lead` (default: both means, not checked);
    the first of them is the JSON's ``headline``, all of them its ``headlines``."""
    from .study.policy import lead
    if headlines is None:
        headlines = {kind: lead(result, kind) for kind in ("micro", "macro")}
    if args.json:
        out = result.to_dict()
        out["headline"] = next(iter(headlines.values())).to_dict()
        out["headlines"] = {kind: h.to_dict() for kind, h in headlines.items()}
        out["input"] = {k: v for k, v in table.source.items()}
        out["input"]["aggregated"] = aggregated
        out["input"]["exclusions"] = [{"rows": x.rows, "reason": x.reason} for x in table.exclusions]
        print(json.dumps(out, indent=2, sort_keys=False))
    else:
        _print_text(format_estimates(result, table, headlines))


def _compare(args) -> int:
    from .errors import ColumnError
    if any(v is not None for v in (args.judge, args.judge_vs, args.judge_file, args.judge_sample, args.sample)):
        return _compare_judged(args)
    runs = args.vs_run or []
    if len(runs) > 1:
        return _compare_many(args, [args.trec_run, *runs], trec=True)
    from ._cli_checks import same_file
    if len(runs) == 1 and args.trec_run is not None and same_file(args.trec_run, runs[0]):
        from .errors import ParameterError   # (a run against itself: a difference of 0, no interval)
        raise ParameterError(f"--vs-run {runs[0]} is the --trec-run file itself: compare two different runs")
    args = argparse.Namespace(**{**vars(args), "vs_run": runs[0] if runs else None})
    try:
        pairs, exclusions = _load_compare_pairs(args)
    except ColumnError as err:
        systems = _several_vs(args, err)
        if systems is None:
            raise
        return _compare_many(args, systems)
    return _compare_pairs(args, pairs, exclusions=exclusions)


def _compare_judged(args) -> int:
    """``perdoc compare DATA --doc ID --score A --vs B --judge JA --judge-vs JB --judge-file FILE``: the
    judge-assisted paired difference A - B, beside the labels-only one ``perdoc compare`` leads with."""
    from .errors import ParameterError
    from .study.judge import estimate_judged, load_judged_pair
    if args.judge is None:
        raise ParameterError("--judge-vs, --judge-file, --judge-sample and --sample go with --judge (system A's judge "
                             "column): perdoc compare reads a drawn sample with both systems' judges")
    clash = [f for f, v in (("--unpaired", args.unpaired or None), ("--trec-run", args.trec_run),
                            ("--vs-run", args.vs_run or None), ("--backend", args.backend)) if v is not None]
    if clash:
        raise ParameterError(f"--judge compares two systems' per-chunk rows, paired; drop {', '.join(clash)}")
    missing = [f for f, v in (("DATA", args.data), ("--doc", args.doc), ("--score", args.score), ("--vs", args.vs),
                              ("--judge-vs", args.judge_vs)) if v is None]
    if missing:
        raise ParameterError(f"--judge needs {', '.join(missing)} (A's and B's gold columns and judge columns)")
    if args.sample is not None:
        from .study.judge import load_judged_design_pair
        if args.judge_sample is not None or args.population_size is not None:
            flag = "--judge-sample" if args.judge_sample is not None else "--population-size"
            raise ParameterError(f"{flag} does not go with --sample: the manifest carries the design and the frame, "
                                 "and the judge file covers it")
        sample = load_judged_design_pair(args.data, args.sample, args.doc, args.score, args.vs, args.judge,
                                         args.judge_vs, judge_file=args.judge_file, nonresponse=args.nonresponse,
                                         **_input_options(args))
    else:
        sample = load_judged_pair(args.data, args.doc, args.score, args.vs, args.judge, args.judge_vs,
                                  judge_file=args.judge_file, judge_sample=args.judge_sample, **_input_options(args))
    result = estimate_judged(sample, level=args.level, population_size=_population_size(args),
                             replicates=args.replicates, seed=args.seed)
    return _print_judged(result, sample, args)


def _load_compare_pairs(args):
    """``(pairs, exclusions)``: the pair table of --score and --vs (or of --trec-run and one --vs-run),
    and whether the JSON lists the rows left out (the adapters' route)."""
    from .reading.io import load_pairs
    adapted = _adapted_input(args, compare=True)
    if adapted is not None:
        return adapted, True
    missing = [f for f, v in (("--doc", args.doc), ("--score", args.score), ("--vs", args.vs)) if v is None]
    if missing:
        from .errors import ParameterError
        raise ParameterError(f"missing {', '.join(missing)} (or compare TREC runs: --trec-run A --vs-run B "
                             "--qrels QRELS --measure M --doc-map MAP)")
    if args.data is None and args.backend is None:
        from .errors import ParameterError
        raise ParameterError("give a data file (or --backend URL --table NAME)")
    return load_pairs(args.data, doc=args.doc, a=args.score, b=args.vs, unpaired=args.unpaired,
                      **_input_options(args)), False


def _several_vs(args, err) -> list[str] | None:
    """--score and the columns of ``--vs B,C,...`` when the data has no column named the whole value
    (``err``, the loader's ColumnError, says so); None otherwise."""
    vs = args.vs
    if vs is None or "," not in vs or args.score is None or \
            not str(err).startswith((f"column '{vs}' not found", f"field '{vs}' not found")):
        return None
    return [args.score, *(name.strip() for name in vs.split(","))]


def _compare_many(args, systems: list[str], trec: bool = False) -> int:
    """Compare every pair of several systems (columns, or TREC runs with ``trec``) and print the pairs,
    their Holm p-values and simultaneous band, and the ranking."""
    import itertools
    from .errors import ParameterError
    from .study.multi import compare_many
    flag = "--vs-run" if trec else "--vs"
    names = _many_names(systems, flag, trec)
    if args.unpaired:
        raise ParameterError(f"--unpaired does not go with several {flag} systems: they are compared paired")
    if not trec and args.data is not None and (args.data == "-" or not _regular_file(args.data)):
        raise ParameterError(f"several {flag} systems read DATA once per pair: give a file, not standard input "
                             "or a pipe")
    tables = {(names[i], names[j]): _many_pair(args, systems[i], systems[j], flag if i else "--score", flag, trec)
              for i, j in itertools.combinations(range(len(systems)), 2)}
    result = compare_many(tables, names, level=args.level, population_size=_population_size(args),
                          replicates=args.replicates, seed=args.seed)
    source, exclusions = _many_input(tables)
    if args.json:
        out = result.to_dict()
        out["input"] = dict(source)
        out["input"]["exclusions"] = [{"rows": x.rows, "reason": x.reason} for x in exclusions]
        print(json.dumps(out, indent=2))
    else:
        _print_text(format_many(result, source, exclusions))
    return 0


def _many_input(tables: dict) -> tuple[dict, list]:
    """What the pairs' loaders said, once: the first pair's source with every pair's notes (each once),
    the metric when all pairs agree on it, and every exclusion (each once)."""
    first = next(iter(tables.values()))
    source = dict(first.source)
    notes, exclusions = [], []
    for t in tables.values():
        notes += [n for n in t.source.get("notes") or () if n not in notes]
        exclusions += [x for x in t.exclusions if x not in exclusions]
    metrics = {(a, b): t.source.get("metric") for (a, b), t in tables.items()}
    if len(set(metrics.values())) > 1:
        for key in ("metric", "metric_reason", "metric_declared"):
            source.pop(key, None)
        notes.append("the pairs' metrics differ: " + ", ".join(f"{a} - {b} {m}" for (a, b), m in metrics.items()))
    source["notes"] = notes
    return source, exclusions


def _many_names(systems: list, flag: str, trec: bool) -> list[str]:
    """The systems' names (a TREC run is named after its file, without the extension), checked: none
    empty, none twice, at least two."""
    import os
    from .errors import ParameterError
    names = [os.path.splitext(os.path.basename(str(s)))[0] if trec else s for s in systems]
    if any(not n for n in names) or (trec and any(n in ("query", "doc") for n in names)):
        raise ParameterError(f"{flag}: every system needs a name " + ("(a run file named other than 'query' or "
                                                                      "'doc')" if trec else
                                                                      "(an empty one was given: list them as B,C,D)"))
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        first = "--trec-run" if trec else "--score"
        raise ParameterError(f"{flag}: duplicate system '{dup}' (each system once, {first} included"
                             + ("; runs are named after their files)" if trec else ")"))
    if len(names) < 2:
        raise ParameterError(f"{flag}: need at least 2 systems to compare (got {len(names)})")
    return names


def _regular_file(path) -> bool:
    import os
    return os.path.isfile(path) or not os.path.exists(path)


def _many_pair(args, a: str, b: str, flag_a: str, flag_b: str, trec: bool):
    """The pair table of systems ``a`` and ``b`` read as the two-system compare reads them; a missing
    column is reported with the flag that named it."""
    from .errors import ColumnError
    change = {"trec_run": a, "vs_run": b} if trec else {"score": a, "vs": b}
    try:
        return _load_compare_pairs(argparse.Namespace(**{**vars(args), **change}))[0]
    except ColumnError as err:
        named = [f for f, name in ((flag_a, a), (flag_b, b))
                 if str(err).startswith((f"column '{name}' ", f"field '{name}' "))]
        if named:
            raise ColumnError(f"{named[0]}: {err}") from None
        raise


def _compare_pairs(args, pairs, exclusions: bool = True) -> int:
    """Compare an already loaded pair table and print it; with ``exclusions`` (the adapters' route) the
    JSON's input also lists the rows left out."""
    from .study.compare import compare, verdict
    result = compare(pairs, level=args.level, population_size=_population_size(args), replicates=args.replicates,
                     seed=args.seed)
    headlines = comparison_headlines(result)
    if args.json:
        out = result.to_dict()
        if headlines:
            out["headline"] = headlines["micro"].to_dict()
            out["headlines"] = {kind: h.to_dict() for kind, h in headlines.items()}
            for kind, h in headlines.items():
                out["headlines"][kind]["verdict"] = verdict(h.interval)
            out["headline"]["verdict"] = out["headlines"]["micro"]["verdict"]
        out["input"] = dict(pairs.source)
        if exclusions:
            out["input"]["exclusions"] = [{"rows": x.rows, "reason": x.reason} for x in pairs.exclusions]
        print(json.dumps(out, indent=2))
    else:
        _print_text(format_comparison(result, pairs))
    return 0


def comparison_headlines(result) -> dict:
    """{kind: Headline} of a paired comparison's difference (:func:`perdoc.policy.lead`, the interval a
    report of the same pairs leads its comparison with); {} for an unpaired one."""
    from .study.policy import lead
    if not result.paired or result.difference is None:
        return {}
    return {kind: lead(result.difference, kind, difference=True) for kind in ("micro", "macro")}


#: Why a difference's row is left out of the table: the method does not apply to a difference.
_NOT_FOR_A_DIFFERENCE = "defined for a binary (0/1) metric only"


def format_comparison(result, pairs) -> str:
    a, b = result.names
    d = result.to_dict()
    headlines = comparison_headlines(result)
    lines = [f"perdoc compare: {_source_name(pairs.source)}",
             f"{a} - {b}; K = {result.K} documents, N = {result.N:g} measurements, level = {result.level:g}; "
             + ("paired" if result.paired else "unpaired (delta method)"), ""]
    lines += _comparison_answer(headlines, a, b, result.level)
    for estimand in ("micro", "macro"):
        block = d["difference"][estimand]
        lines.append(f"{estimand} difference: {block['estimate']:+.6g}   "
                     f"({a} {d['systems']['a'][estimand]['estimate']:.6g}, "
                     f"{b} {d['systems']['b'][estimand]['estimate']:.6g})")
        hidden = []
        for method, v in block.items():
            if not isinstance(v, dict) or "ci" not in v:
                continue
            if not v["ci"] and str(v.get("reason") or "").startswith(_NOT_FOR_A_DIFFERENCE):
                hidden.append(method)
                continue
            se = "" if v.get("se") is None else f"{v['se']:.4g}"
            df = "" if v.get("df") is None else f"{v['df']:.3g}"
            ci = (f"[{_bound(v['ci'][0], '+')}, {_bound(v['ci'][1], '+')}]" if v["ci"]
                  else f"no interval: {v['reason']}")
            tag = "  <- baseline, shown to warn" if v.get("role") == "baseline" else ""
            if v.get("pieces") and len(v["pieces"]) > 1:
                ci = " U ".join(f"[{_bound(lo, '+')}, {_bound(hi, '+')}]" for lo, hi in v["pieces"])
                tag += "  <- not an interval: the set has several pieces"
            if v.get("out_of_range"):
                tag += "  <- OUT OF RANGE"
            h = headlines.get(estimand)
            if h is not None and h.interval.method == method:
                tag += "  <- leads" + ("" if h.basis == "census" else " (the default the coverage panel supports)")
            lines.append(f"  {method:<12} {v.get('label', ''):<46} {se:>9} {df:>7}  {ci}{tag}")
        if hidden:
            lines.append(f"  (not shown: {', '.join(hidden)}, {_NOT_FOR_A_DIFFERENCE}; a difference is not)")
        lines.append("")
    corr = d["correlation"]
    lines.append(f"correlation of the systems across documents: micro {_fmt(corr['micro'])}, "
                 f"macro {_fmt(corr['macro'])}; documents tied exactly: {result.ties_fraction:.1%}")
    rz = d["randomization"]
    if rz.get("p_value") is not None:
        kind = f"exact over {rz['patterns']:,} sign patterns" if rz["exact"] else \
            f"Monte Carlo, {rz['replicates']:,} sign patterns"
        lines.append(f"sign-flip randomization test by document: p = {rz['p_value']:.4g} ({kind})")
    for note in d["notes"]:
        lines.append(f"note: {note}")
    lines += _input_notes(pairs.source)
    lines += _exclusion_lines(pairs.exclusions)
    return "\n".join(lines)


def format_many(result, source: dict, exclusions=()) -> str:
    """Plain text of a comparison of several systems: one line per pair (difference, leading interval,
    p, Holm p, simultaneous interval), then the ranking, then what the loaders said (``source``, the
    rows left out)."""
    d = result.to_dict()
    band = d["band"]
    how = (f"exact over {band['patterns']:,} sign patterns" if band["exact"] else
           f"Monte Carlo, {band['draws']:,} sign patterns" if band["draws"] else "no pair to widen")
    methods = sorted({f"{p.interval.method}: {p.interval.label}" for p in result.pairs})
    lines = [f"perdoc compare: {_source_name(source)}",
             f"{len(result.systems)} systems: {', '.join(result.systems)}; K = {result.K} documents, "
             f"N = {result.N:g} measurements, level = {result.level:g}; paired", "",
             f"every pair A - B: the micro difference, its leading interval ({', '.join(methods)}), the t test's p,",
             f"Holm's p over the {len(result.pairs)} pairs, and the simultaneous band: critical value "
             f"{_fmt_num(d['critical_value'])} (pointwise {_fmt_num(d['pointwise_critical_value'])}),",
             f"max-|t| over the pairs with the same sign multipliers by document, {how}", ""]
    width = max(len("pair"), *(len(p["label"]) for p in d["pairs"]))
    pct = f"{result.level:.0%}"
    lines.append(f"  {'pair':<{width}}  {'difference':>10}  {pct + ' interval':<20}  {'p':>8}  {'Holm p':>8}  "
                 f"simultaneous {pct}")
    for p in d["pairs"]:
        lines.append(f"  {p['label']:<{width}}  {_bound(p['difference'], '+'):>10}  {_pair_ci(p['interval']):<20}  "
                     f"{_fmt_p(p['p_value']):>8}  {_fmt_p(p['p_holm']):>8}  {_pair_ci(p['simultaneous'])}")
    lines += ["", "ranking by micro mean (rank 1 = highest; ranks: those the simultaneous band allows)"]
    width = max(len("system"), *(len(r["system"]) for r in d["ranking"]))
    lines.append(f"  {'rank':>4}  {'system':<{width}}  {'micro':>10}  ranks")
    for r in d["ranking"]:
        lo, hi = r["rank_interval"]
        lines.append(f"  {r['rank']:>4}  {r['system']:<{width}}  {_bound(r['micro']):>10}  "
                     + (f"{lo}" if lo == hi else f"{lo}-{hi}"))
    lines += [f"note: {note}" for note in d["notes"]]
    lines += _input_notes(source)
    lines += _exclusion_lines(exclusions)
    return "\n".join(lines)


def _pair_ci(ci) -> str:
    return "no interval" if not ci else f"[{_bound(ci[0], '+')}, {_bound(ci[1], '+')}]"


def _fmt_p(p) -> str:
    return "—" if p is None else f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def _fmt_num(x) -> str:
    return "—" if x is None else f"{x:.3f}"


def _comparison_answer(headlines: dict, a: str, b: str, level: float) -> list[str]:
    """The answer first: for each estimand, the difference's leading interval, the verdict in words
    (as the report's summary box words it) and what chose the interval."""
    from .study.compare import verdict
    words = {"a_higher": f"the interval lies above 0: {a} scores higher than {b} on the population",
             "b_higher": f"the interval lies below 0: {b} scores higher than {a} on the population",
             "includes_zero": "the interval includes 0: these documents do not show which system is better",
             "no_interval": "no interval, so neither system can be called better"}
    return _answer_lines(headlines, level, {kind: f"{kind} difference {a} - {b}" for kind in headlines}, sign="+",
                         verdict=lambda iv: words[verdict(iv)])


def _bound(x, sign: str = "") -> str:
    """An interval end: four decimals for values of ordinary size, else six significant digits
    (scores may lie anywhere in the double range)."""
    if x is None:
        return "—"
    x = float(x)
    if x == 0 or 1e-4 <= abs(x) < 1e9:
        return f"{x:{sign}.4f}"
    return f"{x:{sign}.6g}"


def _fmt(x):
    return "undefined" if x is None else f"{x:.3f}"


def _plan(args) -> int:
    from .errors import ParameterError
    if args.judge is not None or args.judge_file is not None or args.judge_sample is not None:
        return _plan_judged(args)
    if args.frame is not None:
        if args.vs is not None:
            raise ParameterError("--vs does not go with --frame: --vs plans the paired difference of two systems "
                                 "from a pilot (--params)")
        from .cli_sample import run_plan_designs
        return run_plan_designs(args, _print_text)
    if args.half_width is None:
        raise ParameterError("missing --half-width (the target half-width of the interval)")
    from .study.plan import df_rule_key, plan_k
    inputs = _PlanInputs(estimand=args.estimand, sd=args.sd, M=args.population_size, level=args.level,
                         rule=df_rule_key(args.df_rule))
    if args.params is None and args.pilot is not None:
        raise ParameterError("--pilot goes with --params (the study whose census or dataset is the pilot)")
    if args.vs is not None:
        plan, inputs = _plan_vs(args, inputs)
    else:
        if args.params is not None:
            inputs = _plan_pilot(args, inputs)
        inputs = _checked_plan_inputs(inputs)
        plan = plan_k(inputs.sd, args.half_width, level=0.95 if inputs.level is None else inputs.level,
                      population_size=inputs.M, estimand=inputs.estimand, sizes=inputs.sizes)
    if args.json:
        print(json.dumps(_plan_json(plan, inputs), indent=2))
    else:
        _print_text(_plan_text(plan, inputs))
    return 0


def _plan_judged(args) -> int:
    """``perdoc plan --pilot-data LABELS --doc ID --score GOLD --judge COL --judge-file FILE --half-width H``:
    documents to label for a judge-assisted interval, beside the labels-only plan."""
    from .errors import ParameterError
    from .study.judge import load_judged, plan_judged
    if args.judge is None:
        raise ParameterError("--judge-file and --judge-sample go with --judge (the judge's score column)")
    clash = [f for f, v in (("--frame", args.frame), ("--params", args.params), ("--sd", args.sd),
                            ("--vs", args.vs), ("--census", args.census)) if v is not None]
    if clash:
        raise ParameterError(f"--judge plans from a labelled pilot (--pilot-data); drop {', '.join(clash)}")
    if args.pilot_data is None or args.doc is None or args.score is None:
        raise ParameterError("--judge needs --pilot-data (labelled rows), --doc and --score (the gold labels' column)")
    if args.half_width is None:
        raise ParameterError("missing --half-width (the target half-width of the interval)")
    if args.df_rule is not None:
        raise ParameterError("--df-rule does not go with --judge: the plan follows the judge-assisted interval's rule")
    sample = load_judged(args.pilot_data, args.doc, args.score, args.judge, judge_file=args.judge_file,
                         judge_sample=args.judge_sample)
    res = plan_judged(sample, args.half_width, estimand=args.estimand or "micro",
                      level=0.95 if args.level is None else args.level, population_size=_population_size(args))
    pj, pl = res["judge"], res["labels_only"]
    if args.json:
        print(json.dumps({"estimand": res["estimand"], "pilot_k": res["pilot_k"], "judge": pj.to_dict(),
                          "labels_only": pl.to_dict(), "notes": res["notes"]}, indent=2))
        return 0
    lines = [f"perdoc plan: {res['estimand']} mean with the judge {args.judge!r}, pilot of {res['pilot_k']} "
             f"labelled documents, level {pj.level:g}",
             f"with the judge: K = {pj.K} labelled documents give a half-width of {pj.half_width:.4g} "
             f"(target {pj.target:g}; spread after the judge's correction S = {pj.sd:.4g})",
             f"labels only: K = {pl.K} (spread S = {pl.sd:.4g})"]
    if pj.K < pl.K:
        lines.append(f"the judge saves about {pl.K - pj.K} labelled documents ({1 - pj.K / pl.K:.0%})")
    else:
        lines.append("the judge saves no labelled documents at this pilot's agreement")
    if pj.population_size:
        lines.append(f"M = {pj.population_size:,} documents (finite population correction)")
    lines += [f"note: {n}" for n in (*pj.notes, *res["notes"])]
    lines.append("note: an approximation from the pilot's spread, planned on the t scale (it ignores skewness): "
                 "check the planned sample by simulation")
    _print_text("\n".join(lines))
    return 0


@dataclass(frozen=True)
class _PlanInputs:
    """What ``perdoc plan`` plans from: the flags, and with --params the pilot (its census or dataset)."""

    estimand: str | None
    sd: float | None
    M: float | None
    level: float | None
    rule: str
    source: str = "given"
    sizes: object = None
    spread_rule: str = "given"
    pilot: str | None = None
    pilot_k: int | None = None
    design_note: str | None = None


def _plan_pilot(args, inputs: _PlanInputs) -> _PlanInputs:
    """The plan's inputs taken from the params file's pilot: its census (when it names one), else its dataset."""
    from .errors import ParameterError
    from .study.params import load_params
    from .study.plan import pilot_inputs, spread_problem
    from .study.run import load_study_census, load_study_table
    if inputs.sd is not None:
        raise ParameterError("give --sd or --params (the pilot), not both")
    study = load_params(args.params)
    table = load_study_table(study)
    census = load_study_census(study) if _census_is_pilot(args, study) else None
    inputs = _pilot_context(inputs, study, table, census)
    pilot = census if census is not None else table
    sd, sizes, rule, spread_rule = pilot_inputs(pilot, inputs.estimand, own_sample=census is None,
                                                df_rule=inputs.rule)
    problem = spread_problem(pilot, inputs.estimand, sd, source="census" if census is not None else "pilot")
    if problem:
        raise ParameterError(problem)
    return replace(inputs, sd=sd, rule=rule, sizes=sizes, spread_rule=spread_rule)


def _census_is_pilot(args, study) -> bool:
    """Whether the pilot is the params' census: the default when they name one; --pilot chooses."""
    from .errors import ParameterError
    if args.pilot == "census" and study.census is None:
        raise ParameterError(f"--pilot census: {args.params} names no census (params key census.path)")
    return args.pilot != "study" and study.census is not None


def _pilot_context(inputs: _PlanInputs, study, table, census) -> _PlanInputs:
    """What the params' pilot fixes besides its spread: the estimand, M (as the report's planning
    section takes it), the level, which pilot it is and its size. ``table`` is the study's own table,
    ``census`` the census when it is the pilot, else None."""
    pilot = census if census is not None else table
    M, design_note = inputs.M, None
    if M is not None and not isinstance(M, bool) and M < table.K:   # (the study's documents are the population's)
        from .errors import ParameterError
        raise ParameterError(f"--population-size M = {M:g} is below the number of sampled documents K = {table.K} "
                             f"of {study.name}; M must be at least K")
    if M is None:
        M = _plan_population_size(study, table, census)
        if study.design.sampling not in ("srs", "census"):
            design_note = (f"a plan for a simple random sample of documents ({study.name}'s design is "
                           f"{study.design.sampling.replace('_', '-')}), without the finite population "
                           "correction, as in the report; --population-size M adds it")
    return replace(inputs, estimand=inputs.estimand or study.estimand.kind, M=M,
                   level=inputs.level if inputs.level is not None else study.intervals.level,
                   pilot="census" if census is not None else "study", pilot_k=pilot.K,
                   source=f"{'census' if census is not None else 'pilot'}: {study.name} "
                          f"(K = {pilot.K:,} documents)", design_note=design_note)


def _plan_vs(args, inputs: _PlanInputs):
    """``perdoc plan --vs B``: ``(plan, inputs)`` of the paired difference A - B, planned from the
    params' pilot (census, else dataset) read as pairs, by the rules of a single system's plan."""
    from .errors import ParameterError
    from .study.params import load_params
    from .study.plan import difference_problem, plan_difference
    from .study.run import load_study_table
    if args.params is None or inputs.sd is not None:
        raise ParameterError("--vs plans from the paired spread of a pilot scored by both systems: give --params "
                             "FILE (its census, else its dataset, is the pilot)"
                             + ("" if inputs.sd is None else ", not --sd"))
    study = load_params(args.params)
    from_census = _census_is_pilot(args, study)
    pairs = _pilot_pairs(args, study, census=from_census)
    # the study's own table fixes M of a census design; the census read as pairs is the pilot
    table = load_study_table(study) if from_census else pairs.system("a")
    inputs = _whole_population(_pilot_context(inputs, study, table, pairs.system("a") if from_census else None))
    problem = difference_problem(pairs, inputs.estimand, source="census" if from_census else "pilot")
    if problem:
        raise ParameterError(f"--vs {args.vs}: {problem}")
    plan = plan_difference(pairs, args.half_width, estimand=inputs.estimand, level=inputs.level,
                           population_size=inputs.M, own_sample=not from_census, df_rule=inputs.rule)
    return plan, replace(inputs, sd=plan.sd, rule=plan.df_rule, spread_rule=plan.spread_rule,
                         sizes=None if plan.df_rule == "K-1" else pairs.n_a)


def _pilot_pairs(args, study, *, census: bool):
    """The pilot (the params' census, else their dataset) read as pairs of --score (default: the
    params' data.score) and --vs, every row scored by both; a refusal names the flag and its rule."""
    from .errors import ColumnError, InputError, ParameterError
    from .study.run import load_study_pairs
    d, b = study.data, args.vs
    a, a_flag = (args.score, "--score") if args.score is not None else (d.score, "data.score")
    if d.trec is not None or d.score is None:
        raise ParameterError(f"--vs {b} names a score column of per-chunk rows, and {args.params}'s data are "
                             + ("a TREC run" if d.trec is not None else "a per-document table (data.n, data.s)"))
    if a == b:
        raise ParameterError(f"--vs {b} is the {a_flag} column: a plan for a difference needs two different "
                             "score columns")
    data = replace(d, score=a, compare_to=b)
    if census:
        data = replace(data, path=study.census, backend=None)
    try:
        return load_study_pairs(replace(study, data=data))
    except ColumnError as err:
        flag = f"--vs {b}" if str(err).startswith(f"column '{b}'") else f"{a_flag} {a}"
        raise ParameterError(f"{flag} must name a score column of the pilot: {err}") from None
    except InputError as err:
        raise ParameterError(f"--vs {b}: the pilot cannot be read as pairs of {a} and {b} (a plan for the difference "
                             f"needs at least 2 documents, every row scored by both): {err}") from None


def _checked_plan_inputs(inputs: _PlanInputs) -> _PlanInputs:
    """The inputs with every one the plan needs present, and M a whole number of documents."""
    from .errors import ParameterError
    if inputs.estimand is None:
        raise ParameterError("missing --estimand (macro or micro)")
    if inputs.sd is None:
        raise ParameterError("missing --sd (the spread S) or --params (a pilot dataset)")
    if inputs.sizes is None and inputs.rule == "bell-mccaffrey":
        raise ParameterError("--df-rule bell-mccaffrey needs the document sizes of a pilot or census: give --params "
                             "(with --sd the degrees of freedom are K - 1)")
    return _whole_population(inputs)


def _whole_population(inputs: _PlanInputs) -> _PlanInputs:
    """The inputs with M (when given) a whole number of documents."""
    from .errors import ParameterError
    if inputs.M is None:
        return inputs
    if not float(inputs.M).is_integer():
        raise ParameterError(f"--population-size must be a whole number of documents (got {inputs.M:g})")
    return replace(inputs, M=int(inputs.M))


def _plan_json(plan, inputs: _PlanInputs) -> dict:
    """``perdoc plan --json``: the plan and where its spread and degrees of freedom came from."""
    from .study.plan import DF_RULES, SPREAD_RULES
    out = plan.to_dict()
    out["sd_source"] = inputs.source
    out["df_rule_text"] = DF_RULES[plan.df_rule]
    out["spread_rule"] = inputs.spread_rule
    out["spread_rule_text"] = SPREAD_RULES.get(inputs.spread_rule, "given (--sd)")
    out["pilot"] = inputs.pilot
    out["pilot_K"] = inputs.pilot_k
    return out


def _plan_text(plan, inputs: _PlanInputs) -> str:
    """``perdoc plan`` as plain text: the plan, its rule and the notes that qualify it."""
    from .study.plan import SPREAD_RULES
    pilot, pilot_k = inputs.pilot, inputs.pilot_k
    rule_text = (f"CR2 with the Bell-McCaffrey df of K documents sized like the "
                 f"{'census' if pilot == 'census' else 'pilot'}'s" if plan.df_rule == "bell-mccaffrey"
                 else "t with K - 1 df")
    rule_text += ", spread " + SPREAD_RULES.get(inputs.spread_rule, "given (--sd)").split(",")[0]
    paired = getattr(plan, "unpaired_k", None) is not None   # a DifferencePlan (perdoc plan --vs)
    if paired:
        rule_text += " of the per-document differences A - B"
    if pilot is not None:
        default_rule = (plan.df_rule == "bell-mccaffrey") == (inputs.estimand == "micro")
        rule_text += (" (the report's rule)" if default_rule else
                      " (--df-rule k-1; the report's rule: CR2 with Bell-McCaffrey df)")
    subject = (f"{inputs.estimand} difference {plan.a} - {plan.b}, paired spread" if paired
               else f"{inputs.estimand} mean, spread")
    lines = [f"perdoc plan: {subject} S = {plan.sd:.4g} ({inputs.source}), level {plan.level:g}",
             f"rule: {rule_text}",
             f"K = {plan.K} documents give a half-width of {plan.half_width:.4g} (target {plan.target:g})"
             + (f" with M = {plan.population_size:,}" if plan.population_size else "") + f", df {plan.df:.4g}"]
    if plan.K_without_fpc is not None:
        lines.append(f"without the finite population correction: K = {plan.K_without_fpc}")
    lines += _plan_pairing_lines(plan) if paired else []
    lines += [f"note: {n}" for n in plan.notes]
    if pilot == "study" and plan.df_rule == "bell-mccaffrey" and pilot_k > 2:
        from .study.plan import planned_df
        df_own = planned_df(pilot_k, inputs.sizes)
        if df_own < (pilot_k - 1) / 4:
            lines.append(f"note: a few documents carry most of the weight: at the pilot's K = {pilot_k} the "
                         f"Bell-McCaffrey df are {df_own:.3g}, far below K - 1 = {pilot_k - 1}, so the pilot's "
                         "spread rests on very few documents and the plan is optimistic; check it by "
                         "simulation, or plan from a census")
    if inputs.design_note:
        lines.append(f"note: {inputs.design_note}")
    lines.append("note: an approximation (it ignores skewness): check the planned design by simulation")
    return "\n".join(lines)


def _plan_pairing_lines(plan) -> list[str]:
    """What pairing buys in a plan of the difference A - B: each system's own spread, their
    correlation across documents, and the K that independent samples of each system would need."""
    weights = " (each document weighted by its size, as the micro spread weighs it)" if plan.estimand == "micro" else ""
    corr = ("undefined (a system's spread is 0)" if plan.correlation is None else f"{plan.correlation:.4f}")
    census = " (the whole population)" if plan.population_size and plan.unpaired_k >= plan.population_size else ""
    return [f"pairing: alone, {plan.a} has spread {plan.sd_a:.4g} and {plan.b} {plan.sd_b:.4g}; the correlation of "
            f"their document rates{weights} is {corr}, so the paired spread sqrt(S_A^2 + S_B^2 - 2 r S_A S_B) "
            f"is {plan.sd:.4g}",
            f"unpaired: independent samples of each system (var_A + var_B, spread {plan.unpaired_sd:.4g}) would "
            f"need K = {plan.unpaired_k} documents for each system{census}, against {plan.K} paired"]


def _plan_population_size(study, table, census):
    """M of the report's planning section (:func:`perdoc.study.run.plan_population_size`, which the
    report calls too)."""
    from .study.run import plan_population_size
    return plan_population_size(study, table, census)


def _simulate(args) -> int:
    from .errors import ParameterError
    from .reading.io import load_chunks, load_pairs
    from .study.simulate import simulate, simulate_pairs

    if args.design is not None:
        from .cli_sample import run_simulate_design
        return run_simulate_design(args, _print_text)
    design_only = [flag for flag, v in (("--take", args.take), ("--with-replacement", args.with_replacement or None))
                   if v is not None]
    if design_only:   # (a simple random sample of whole documents: they would be passed over)
        raise ParameterError(f"{' and '.join(design_only)} {'goes' if len(design_only) == 1 else 'go'} with --design")
    from .progress import NO_PROGRESS, Progress
    shown = Progress("simulate") if sys.stderr.isatty() else NO_PROGRESS
    progress = shown.bar("simulating")
    if args.params is not None:
        from pathlib import Path

        from .study.params import Simulation, load_params
        from .study.run import load_study_census, load_study_table, simulation_design
        study = load_params(args.params)
        census_path = args.census or (None if study.census is None else str(study.census))
        if census_path is None:
            raise ParameterError(f"{args.params}: no census: give --census or the params key census.path")
        doc, score = args.doc or study.data.doc, args.score or study.data.score
        sim = study.simulation or Simulation()
        sim = replace(sim, k=args.k if args.k is not None else sim.k,
                      reps=args.reps if args.reps is not None else sim.reps,
                      seed=args.seed if args.seed is not None else sim.seed,
                      replicates=args.replicates if args.replicates is not None else sim.replicates)
        data = study.data
        data = replace(data, format=args.format or data.format, metric=args.metric or data.metric,
                       allow_similar_ids=args.allow_similar_ids or data.allow_similar_ids)
        study = replace(study, data=data, census=Path(census_path), simulation=sim)
        options = {"fmt": data.format, "metric": data.metric, "allow_similar_ids": data.allow_similar_ids,
                   **_engine_options(args)}
        if options["engine"] is None and options["backend"] is None:
            options["engine"] = getattr(data, "engine", None)
        data = replace(data, engine=options["engine"])
        study = replace(study, data=data)
        table = load_study_table(study)
        design, k = simulation_design(study, table)
        level = args.level if args.level is not None else study.intervals.level
        vs = args.vs or study.data.compare_to
    else:
        if (args.census is None and args.backend is None) or args.doc is None or args.score is None:
            raise ParameterError("give --census, --doc and --score (or --params FILE)")
        if args.k is None:
            raise ParameterError("missing --k (documents per simulated sample)")
        census_path, doc, score, vs, design, k = args.census, args.doc, args.score, args.vs, None, args.k
        level = 0.95 if args.level is None else args.level
        sim = None
        options = _input_options(args)
    reps = args.reps if args.reps is not None else (sim.reps if sim else 2000)
    seed = args.seed if args.seed is not None else (sim.seed if sim else 1)
    replicates = args.replicates if args.replicates is not None else (sim.replicates if sim else 999)
    if args.vs is not None or (args.params is None and vs is not None):
        if design is not None:
            raise ParameterError("the paired simulation draws a simple random sample of documents")
        pairs = load_pairs(census_path, doc=doc, a=score, b=vs, **options)
        result = simulate_pairs(pairs, k=k, reps=reps, seed=seed, level=level, replicates=replicates,
                                progress=progress)
    else:
        if design is not None and design["sampling"] == "stratified":
            census = load_study_census(study)
            design = {"sampling": "stratified", "strata": {"by": census.attrs["stratum"], "k": design["k"]}}
        else:
            census = load_chunks(census_path, doc=doc, score=score, **options)
        frame = bool(args.frame or (args.params is not None and getattr(study.design, "frame", None) is not None))
        result = simulate(census, k=k, reps=reps, seed=seed, level=level, design=design, replicates=replicates,
                          progress=progress, frame=frame and (design is None or design["sampling"] == "srs"))
    shown.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        _print_text(format_simulation(result))
    return 0


def format_simulation(result) -> str:
    d = result.to_dict()
    lines = [f"perdoc simulate: {d['reps']:,} samples of K = {d['k']} documents, level {d['level']:g}, "
             f"seed {d['seed']}; census values: micro {_bound(d['truth']['micro'])}, "
             f"macro {_bound(d['truth']['macro'])}",
             f"  {'method':<22} {'coverage':>8} {'MC SE':>7} {'mean width':>10} {'RMSE':>7} {'no interval':>11}"]
    for name, m in d["methods"].items():
        f = lambda v, p=3: "—" if v is None else f"{v:.{p}f}"  # noqa: E731
        tag = "  <- recommended" if name in d["recommended"].values() else ""
        lines.append(f"  {name:<22} {f(m['coverage']):>8} {f(m['mc_se']):>7} {f(m['mean_width'], 4):>10} "
                     f"{f(m['rmse'], 4):>7} {f(m['no_interval']):>11}{tag}")
    for est in ("micro", "macro"):
        if d["recommendation_notes"].get(est):
            lines.append(f"{est}: {d['recommendation_notes'][est]}")
    return "\n".join(lines)


def _report(args) -> int:
    from .report.build import build_reports
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    results = build_reports(args.params, args.out, language=args.language, overrides=args.overrides,
                            name=args.name, progress=progress)
    failed = 0
    for params_file, ok, message in results:
        if ok:
            _print_text(f"{params_file}: wrote {message}")
        else:
            failed += 1
            _print_text(f"perdoc: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT if failed else 0


def _print_text(text: str, file=None) -> None:
    """Print plain-text output line by line, each without secrets and with control characters escaped
    (a column name or id holding a terminal escape sequence is shown, not run)."""
    from .redact import safe_line
    print("\n".join(safe_line(line) for line in str(text).split("\n")), file=file or sys.stdout)


def _source_name(source: dict) -> str:
    """What the data were: the file, or the table and the URL (without secrets) of a backend."""
    if source.get("path"):
        return str(source["path"])
    if source.get("table"):
        from .redact import redact_url
        url = source.get("url")
        return f"table {source['table']} at {redact_url(url)}" if url else f"table {source['table']}"
    return "<data>"


def format_estimates(result, table, headlines: dict | None = None) -> str:
    """A readable plain-text table of every estimate and interval, led by the interval of
    :func:`perdoc.policy.lead` for each estimand in ``headlines`` ({kind: Headline}; default: both
    means, not checked by simulation)."""
    from .study.policy import JUDGE_METHODS, lead
    if headlines is None:
        headlines = {kind: lead(result, kind) for kind in ("micro", "macro")}
    lines = []
    lines.append(f"perdoc estimate: {_source_name(table.source)}")
    lines.append(f"K = {result.K} documents, N = {result.N:g} measurements, level = {result.level:g}"
                 + (f", population M = {result.population_size}" if result.population_size else ""))
    lines.append("")
    lines += headline_lines(headlines, result.level)
    for estimand, est in (("micro", result.micro_estimate), ("macro", result.macro_estimate)):
        title = ("micro mean (rate of a randomly drawn chunk)" if estimand == "micro"
                 else "macro mean (rate in a typical document)")
        lines.append(f"{title}: {est:.6g}")
        lines.append(f"  {'method':<14} {'':<46} {'se':>9} {'df':>7}  interval")
        for iv in result.intervals:
            if iv.estimand != estimand:
                continue
            se = "" if iv.se is None else f"{iv.se:.4g}"
            df = "" if iv.df is None else f"{iv.df:.3g}"
            pieces = iv.pieces or []
            if len(pieces) > 1:
                ci = " U ".join(f"[{_bound(lo)}, {_bound(hi)}]" for lo, hi in pieces)
            else:
                ci = (f"[{_bound(iv.ci.low)}, {_bound(iv.ci.high)}]" if iv.ci is not None
                      else f"no interval: {iv.reason}")
            extra = ""
            if iv.role == "baseline":
                extra = "  <- baseline, shown to warn"
            elif iv.extra.get("degenerate_fraction"):
                extra = f"  ({iv.extra['degenerate_fraction']:.1%} degenerate replicates dropped)"
            h = headlines.get(estimand)
            if h is not None and (h.interval.estimand, h.interval.method) == (iv.estimand, iv.method):
                extra += "  <- leads" + ("" if h.basis == "census" else " (judge-assisted)"
                                         if iv.method in JUDGE_METHODS else
                                         " (the default the coverage panel supports)")
            if len(pieces) > 1:
                extra += "  <- not an interval: the set has several pieces"
            if iv.out_of_range:
                extra += f"  <- OUT OF RANGE [{iv.metric_range[0]:g}, {iv.metric_range[1]:g}]"
            if iv.estimate is not None and est is not None and abs(iv.estimate - est) > 1e-12 * max(1.0, abs(est)):
                extra += f"  (its own estimate {iv.estimate:.6g})"
            lines.append(f"  {iv.method:<14} {iv.label:<46} {se:>9} {df:>7}  {ci}{extra}")
        lines.append("")
    d = result.diagnostics
    lines.append("diagnostics (explain the problem; not a substitute for the intervals):")
    lines.append(f"  ICC {d.icc:.4g}   design effect {d.deff:.4g}   effective n {d.n_eff:.4g}   "
                 f"G* {d.g_star:.4g}   largest share {d.max_share:.3g}")
    lines.append(f"  documents at rate 0: {d.frac_rate_0:.1%}   at rate 1: {d.frac_rate_1:.1%}")
    for note in result.notes:
        lines.append(f"note: {note}")
    tail = getattr(result, "frame_tail", None)
    if tail and tail.get("warn"):
        from .reading.frame import tail_warning
        lines.append(f"warning: {tail_warning(tail, result.K)}")
    lines += _input_notes(table.source)
    lines += _exclusion_lines(table.exclusions)
    return "\n".join(lines)


def headline_lines(headlines: dict, level: float) -> list[str]:
    """The answer first, in words: for each estimand, the leading interval (:func:`perdoc.policy.lead`)
    and what chose it -- the same interval and reason a report of the same inputs leads with."""
    names = {"micro": "micro mean (rate of a randomly drawn chunk)", "macro": "macro mean (rate in a typical document)"}
    return _answer_lines(headlines, level, {kind: names.get(kind, kind) for kind in headlines})


def _answer_lines(headlines: dict, level: float, subjects: dict, *, sign: str = "", verdict=None) -> list[str]:
    """Per estimand: ``answer, <subject>: <estimate>, <interval>`` (approximate when it is), then the
    verdict in words when ``verdict`` (a function of the interval) is given, the method and what chose
    it; a blank line after the block. One wording for ``estimate`` and ``compare``."""
    out = []
    for kind, h in headlines.items():
        iv = h.interval
        est = "" if iv.estimate is None else f"{iv.estimate:{sign}.4g}, "
        ci = (f"{level:.0%} interval [{_bound(iv.ci.low, sign)}, {_bound(iv.ci.high, sign)}]" if iv.ci is not None
              else f"no interval: {iv.reason}")
        out.append(f"answer, {subjects[kind]}: {est}{ci}" + ("  (approximate)" if h.approximate else ""))
        if verdict is not None:
            out.append(f"  verdict: {verdict(iv)}")
        out.append(f"  by {iv.method}: {iv.label}")
        out.append(f"  why this interval: {headline_reason(h)}")
    return out + ([""] if out else [])


def headline_reason(h) -> str:
    """What chose the leading interval, in one plain sentence (the CLI's wording of a Headline)."""
    from .study.policy import JUDGE_METHODS
    if h.basis == "none" and h.interval.method in JUDGE_METHODS:
        return ("judge-assisted: the judge's mean corrected by its errors on the labelled documents; it leads "
                "wherever it gives an interval (its coverage was measured on the judge panel, not by a simulation "
                "of this study)")
    if h.basis == "none":
        return ("the default the coverage panel supports for this kind of metric; not checked by a simulation of "
                "this study (a params file with a census checks it: perdoc estimate --params, perdoc report)")
    sim = (f"{h.coverage:.1%} of {h.reps:,} simulated samples of K = {h.k} from the census covered the census value"
           if h.coverage is not None and h.reps else "")
    if h.approximate:
        return f"approximate: {h.reason}" + (f" ({sim})" if sim else "")
    return h.reason + (f": {sim}" if sim else "")


def _input_notes(source: dict) -> list[str]:
    """What the loader inferred or accepted about the input: the kind of metric, similar ids."""
    out = []
    if source.get("metric"):
        why = source.get("metric_reason", "")
        why = why if source.get("metric_declared") else f"inferred: {why}"
        out.append(f"note: metric {source['metric']} ({why})")
    similar = source.get("similar_ids")
    if similar:
        shown = "; ".join(" / ".join(repr(v) for v in g) for g in similar.get("examples", []))
        out.append(f"note: {similar['groups']} group(s) of document ids differ only in spaces, letter case or "
                   f"Unicode form and are kept as different documents ({shown})")
    out += [f"note: {n}" for n in source.get("notes") or ()]
    return out


def _exclusion_lines(exclusions) -> list[str]:
    """Rows left out of the analysis (by an evaluation-framework adapter or the loader), and why."""
    return [f"excluded: {e.rows:,} row(s): {e.reason}" for e in exclusions]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
