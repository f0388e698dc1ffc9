"""The report kit: params file in, one self-contained offline HTML report out.

``build_report(params_file, out_dir)`` validates the params, computes the analysis, executes the
notebooks (the summary box, then six sections; as one notebook, in one kernel) with papermill,
renders them with nbconvert into ``<out>/<name>/report.html`` and writes ``summary.json`` and
``documents.csv`` beside it. Everything is built in a temporary folder and moved into place at the
end; a dataset that fails leaves an error page saying what failed instead of a report that looks
complete.
"""

from __future__ import annotations

import copy
import errno
import hashlib
import html
import json
import os
import platform
import re
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ..errors import PerdocError
from ..study.estimate import estimate
from ..study.params import Study, load_params
from ..study.policy import Headline, choose_headline, lead  # noqa: F401  (one policy for every interface)
from ..methods.results import Estimates
from ..reading.table import DocTable

__all__ = ["Analysis", "analyse", "summary", "design_description", "build_report", "build_reports", "ReportError",
           "NOTEBOOKS", "notebook_dir"]

NOTEBOOKS = ("00_summary", "01_design", "02_estimand", "03_intervals", "04_comparison", "05_planning",
             "06_checklist")
#: The notebook whose output opens the report, between the title and the contents: the answer first.
SUMMARY_NOTEBOOK = "00_summary"
#: Cells with this tag are for reading a notebook on its own and are left out of the report.
NOTEBOOK_ONLY = "notebook-only"
PACKAGES = ("perdoc", "numpy", "scipy", "pandas", "duckdb", "pyarrow", "altair", "vl-convert-python",
            "papermill", "nbconvert")
TEMPLATE_DIR = Path(__file__).with_name("templates")
#: Bootstrap replicates per simulated sample in the pseudo-population check (at most the study's own).
PSEUDO_REPLICATES = 199


class ReportError(PerdocError):
    """A report could not be built (the message says which step failed)."""


@dataclass(frozen=True)
class Analysis:
    """Everything a report shows, computed once from a validated params file."""

    study: Study
    table: DocTable
    estimates: Estimates
    input: dict
    comparison: object = None  # perdoc.compare.Comparison when data.compare_to is set
    census: DocTable | None = None      # the population (or larger pilot) of the params' census key
    simulation: object = None           # perdoc.simulate.SimulationResult on the census
    pair_simulation: object = None      # the same for the paired difference
    strata: tuple | None = None         # (StrataPlan, SimulationResult or None) of planning.strata
    pseudo_simulation: object = None    # SimulationResult on a pseudo-population built from the sample
    design_plan: dict | None = None     # planning.design: the drawn designs compared (perdoc.design_plan)
    comparison_many: object = None      # perdoc.MultiComparison when data.compare_to lists 2+ columns
    difference_plan: dict | None = None  # planning.difference_half_width (perdoc.study.run.difference_plan_study)
    judge: object = None                # perdoc.study.judge.JudgeEstimates when data.judge is set
    judged: object = None               # its judged sample (JudgedSample or JudgedDesign: per-document sums)
    judge_pair: object = None           # JudgeEstimates of the paired difference when data.judge_compare_to is set

    @property
    def default_interval(self):
        """The interval the declared estimand leads with when no simulation decides
        (:func:`perdoc.policy.default_interval`)."""
        from ..study.policy import default_interval
        return default_interval(self.estimates, self.study.estimand.kind)

    @property
    def headline(self) -> "Headline":
        """The one interval this report leads with, and the evidence behind it: :func:`perdoc.policy.lead`,
        which the CLI and the Python API call too. A pseudo-population check, when one ran, is shown
        beside it and never chooses it."""
        return lead(self.estimates, self.study.estimand.kind, self.simulation)

    @property
    def primary(self):
        """The headline interval (every section of a report uses this one)."""
        return self.headline.interval

    @property
    def comparison_headline(self) -> "Headline | None":
        """The paired comparison's headline interval, chosen like :attr:`headline` from the paired
        simulation (None without a paired comparison)."""
        cmp = self.comparison
        if cmp is None or not cmp.paired or cmp.difference is None:
            return None
        return lead(cmp.difference, self.study.estimand.kind, self.pair_simulation, difference=True)


def frame_leads(estimates, kind: str) -> bool:
    """Whether a frame-aware interval leads ``kind`` (a frame was given, see :mod:`perdoc.policy`).

    Then no pseudo-population check is run: the frame-aware interval draws its strength from the
    sizes of every population document, long ones the sample missed included, and a pseudo-population
    built from the sample holds only documents like the sampled ones, so it could neither confirm nor
    refute it (and on it the ratio-model prediction, which fails exactly when long documents score
    differently, would look best). Only a census checks it."""
    from ..study.policy import default_method
    return estimates.design is None and default_method(estimates, kind).startswith(("frame_", "logit_frame_"))


def notebook_dir() -> Path:
    """The folder of the report's notebooks (the repository's ``notebooks/``)."""
    env = os.environ.get("PERDOC_NOTEBOOKS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "notebooks"


def analyse(params_file) -> Analysis:
    """Validate the params, load the data and compute every estimate (cached per file state).

    A relative ``params_file`` that does not exist relative to the working directory is looked up
    relative to the notebooks folder (:func:`notebook_dir`), so the notebooks' default
    ``../params/example.yaml`` works wherever a notebook is run from.

    Inside a report build the notebook kernel gets the analysis the build computed from its one
    snapshot of the inputs (see :func:`build_report`), so every number and hash in a report folder
    comes from a single reading of the data, even if a file changes while the report renders.
    """
    from .i18n import set_language
    path = _params_path(params_file).resolve()
    analysis = _frozen_analysis(path)
    if analysis is None:
        study = load_params(path)
        stamp = (_mtime(path), _mtime(study.data.path) if study.data.path is not None else _backend_stamp(study),
                 _mtime(study.census) if study.census else None,
                 tuple(_mtime(p) for p in (study.data.judge_file, study.data.judge_sample) if p is not None))
        analysis = _analyse_cached(str(path), stamp)
    set_language(analysis.study.language)   # the notebooks' text follows the study's report.language
    return analysis


def _backend_stamp(study: Study):
    """The state of a database input for the cache: its file's when it is a local database file."""
    from ..reading.engines import _file_database, duckdb_database
    url = (study.data.backend or {}).get("url")
    if url and _file_database(url) and duckdb_database(url):
        return _mtime(Path(duckdb_database(url)))
    return None


def _params_path(params_file) -> Path:
    """``params_file`` as given when it exists (or is absolute), else relative to the notebooks folder;
    when neither exists, one line naming both places tried."""
    given = Path(os.fspath(params_file))
    if given.is_absolute() or given.exists():
        return given
    beside = notebook_dir() / given
    if beside.exists():
        return beside
    from ..study.params import ParamsError
    raise ParamsError(f"params file not found: {given} (looked in the working directory {Path.cwd()} "
                      f"and in the notebooks folder {notebook_dir()})")


@lru_cache(maxsize=8)
def _analyse_cached(path: str, stamp) -> Analysis:
    study = load_params(path)
    return _compute_analysis(study)


def _compute_analysis(study: Study, shown: dict | None = None, progress=None) -> Analysis:
    """Every estimate of ``study``. ``shown`` maps a data path actually read (a snapshot) to the file
    it is a copy of, with its size and SHA-256, so the report names the user's file. ``progress`` (a
    :class:`perdoc.progress.Progress`) gets a line per step and the simulations' bars."""
    from ..progress import NO_PROGRESS
    from ..study.policy import mark_comparison_leads, mark_leads
    from ..study.run import (compare_study_systems, design_plan_study, difference_plan_study, estimate_study,
                             estimate_study_judged, load_study_census_and_scores, load_study_judged,
                             load_study_pairs, load_study_table, simulate_study, strata_experiment)
    shown = shown or {}
    progress = progress or NO_PROGRESS
    step = progress.step
    with _user_paths(shown):
        judge = judged = None
        if study.data.judge is not None:   # the judge file may be the frame (population size)
            from ..study.run import judge_frame_study
            judged = load_study_judged(study)
            study = judge_frame_study(study, judged)
        table = load_study_table(study)
        step(f"estimates and intervals ({table.K:,} documents)")
        est = estimate_study(study, table)
        if judged is not None:
            step("judge-assisted estimates")
            from ..study.judge import with_judge
            judge = estimate_study_judged(study, judged, est)
            est = with_judge(est, judge)   # the judge-assisted rows lead wherever they give an interval
        comparison = None
        pairs = load_study_pairs(study)
        compare_size = est.population_size if study.design.sampling in ("srs", "census") else None
        if pairs is not None:
            step("comparing the systems")
            from ..study.compare import compare
            iv = study.intervals
            comparison = compare(pairs, level=iv.level, population_size=compare_size,
                                 replicates=iv.replicates, seed=iv.seed)
        judge_pair = None
        if comparison is not None and comparison.paired and comparison.difference is not None \
                and study.data.judge_compare_to is not None:
            step("judge-assisted comparison")
            from ..study.judge import estimate_judged, with_judge
            from ..study.run import load_study_judged_pair
            judge_pair = estimate_judged(load_study_judged_pair(study), level=study.intervals.level,
                                         population_size=compare_size)
            # the judge-assisted rows lead the difference wherever they give an interval (as perdoc compare --judge)
            from dataclasses import replace as _replace
            comparison = _replace(comparison, difference=with_judge(comparison.difference, judge_pair))
        many = compare_study_systems(study, compare_size, first=pairs)
        step("planning")
        difference_plan = difference_plan_study(study, table)
        # (the chunk scores a simulated take of a continuous metric needs come from the same read)
        census, chunk_scores = load_study_census_and_scores(study, table)
        simulation = pair_simulation = strata = pseudo = None
        if census is not None:
            bars = (progress.bar("simulating the design on the census"),
                    progress.bar("simulating the comparison on the census"))
            simulation, pair_simulation = simulate_study(study, table, census, chunk_scores, progress=bars)
            step("stratification experiment")
            strata = strata_experiment(study, census)
        elif (study.design.sampling == "srs" and est.population_size != table.K
              and not frame_leads(est, study.estimand.kind) and judge is None):
            from ..study.pseudo import pseudo_check
            iv = study.intervals
            pseudo = pseudo_check(table, population_size=est.population_size, level=iv.level, seed=iv.seed,
                                  replicates=min(iv.replicates, PSEUDO_REPLICATES),
                                  progress=progress.bar("checking the intervals on a pseudo-population of the "
                                                        "study's documents"))
        if study.planning.design is not None:
            step("comparing sampling designs by simulation")
        design_plan = design_plan_study(study, table, census, chunk_scores)
    # every table marks the interval each headline uses (the CLI marks its tables the same way)
    est = mark_leads(est, simulation)
    comparison = mark_comparison_leads(comparison, pair_simulation)
    info = _input_info(study, table, est, census, shown)
    return Analysis(study=study, table=table, estimates=est, input=info, comparison=comparison,
                    census=census, simulation=simulation, pair_simulation=pair_simulation, strata=strata,
                    pseudo_simulation=pseudo, design_plan=design_plan, comparison_many=many,
                    difference_plan=difference_plan, judge=judge, judged=judged, judge_pair=judge_pair)


def _file_facts(p: Path, shown: dict) -> dict:
    """The name, size and SHA-256 of the file ``p`` stands for (the user's file when ``p`` is a snapshot)."""
    if str(p) in shown:
        return dict(shown[str(p)])
    return {"file": p.name, "bytes": p.stat().st_size, "sha256": _sha256_file(p)}


def _input_info(study: Study, table: DocTable, est: Estimates, census, shown: dict) -> dict:
    """What the report records of its inputs: the data (or database table), census, frame, sample, TREC files."""
    d = study.data
    if d.path is None:   # data.backend: a table of a database, no file to name or hash
        data_facts = {"file": None, "bytes": None, "sha256": None}
    else:
        data_facts = _file_facts(d.path, shown)
    info = {
        "file": data_facts["file"],
        "bytes": data_facts["bytes"],
        "sha256": data_facts["sha256"],
        "format": table.source.get("format"),
        "rows": table.source.get("rows"),
        "aggregated": d.aggregated,
        "columns": {k: v for k, v in (("doc", d.doc), ("score", d.score), ("n", d.n), ("s", d.s),
                                      ("q", d.q)) if v is not None},
    }
    if d.path is None and d.backend is not None:
        # where the rows came from (the URL as written, without its secrets) and, for the record of
        # what was read, the SHA-256 of the per-document table aggregated from it (= documents.csv's)
        from ..redact import redact_url
        written = ((study.raw.get("data") or {}).get("backend") or {}).get("url", d.backend["url"])
        info["backend"] = {"url": redact_url(written), "table": d.backend["table"]}
        info["documents_sha256"] = _table_sha256(table)
    if census is not None:
        c = _file_facts(study.census, shown)
        info["census"] = {"file": c["file"], "bytes": c["bytes"], "sha256": c["sha256"], "documents": census.K}
    if getattr(study.design, "frame", None) is not None:
        from ..study.run import frame_path
        fp = frame_path(study)
        info["frame"] = ({"file": "census"} if fp is None else
                         {k: v for k, v in _file_facts(fp, shown).items() if k in ("file", "bytes", "sha256")})
        info["frame"]["documents"] = est.population_size
    if getattr(study.design, "sample", None) is not None:
        from ..study.run import sample_path
        f = _file_facts(sample_path(study), shown)
        info["sample"] = {"manifest": f["file"], "bytes": f["bytes"], "sha256": f["sha256"],
                          "design": (est.design or {}).get("design"), "k": (est.design or {}).get("k"),
                          "take": (est.design or {}).get("take"), "seed": (est.design or {}).get("seed"),
                          "documents_in_frame": (est.design or {}).get("documents_in_frame")}
    for key in ("judge_file", "judge_sample"):
        p = getattr(d, key, None)
        if p is not None:
            f = _file_facts(p, shown)
            info[key] = {"file": f["file"], "bytes": f["bytes"], "sha256": f["sha256"], "column": d.judge}
    if d.trec is not None:
        info["trec"] = {"measure": d.trec.measure}
        for key in ("qrels", "doc_map", "compare_run"):
            p = getattr(d.trec, key)
            if p is not None:
                f = _file_facts(p, shown)
                info["trec"][key] = {"file": f["file"], "bytes": f["bytes"], "sha256": f["sha256"]}
    return info


def _table_sha256(table: DocTable) -> str:
    """The SHA-256 of ``table`` written as documents.csv (the same bytes a report folder holds)."""
    folder = Path(tempfile.mkdtemp(prefix="perdoc-table-"))
    try:
        table.write(folder / "documents.csv")
        return _sha256_file(folder / "documents.csv")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def input_name(info: dict, language: str = "en") -> str:
    """How the report's subtitle names its input: the file and the start of its SHA-256, or the table,
    the URL (without secrets) and the start of the per-document table's SHA-256."""
    b = info.get("backend")
    if b:
        sha = (info.get("documents_sha256") or "")[:12]
        if language == "es":
            return f"tabla {b['table']} en {b['url']} (SHA-256 de la tabla por documento {sha}...)"
        return f"table {b['table']} at {b['url']} (SHA-256 of the per-document table {sha}...)"
    return f"{info['file']} (SHA-256 {info['sha256'][:12]}...)"


class _user_paths:
    """Errors raised while reading a snapshot name the user's file, not the snapshot."""

    def __init__(self, shown: dict):
        self.shown = {k: v["path"] for k, v in shown.items()}

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if isinstance(err, PerdocError) and self.shown:
            msg = str(err)
            for snap, orig in self.shown.items():
                msg = msg.replace(snap, orig)
            if msg != str(err):
                raise type(err)(msg) from None
        return False


FROZEN = "analysis.pickle"


def _frozen_analysis(params_path: Path):
    """The analysis a running report build computed for ``params_path``, if this is its kernel."""
    import pickle
    folder = os.environ.get(CACHE_ENV)
    if not folder:
        return None
    target = Path(folder) / FROZEN
    if not target.exists():
        return None
    with open(target, "rb") as f:
        frozen_path, analysis = pickle.load(f)
    return analysis if frozen_path == str(params_path) else None


def _freeze(params_path: Path, analysis: Analysis) -> None:
    import pickle
    folder = os.environ.get(CACHE_ENV)
    if folder:
        with open(Path(folder) / FROZEN, "wb") as f:
            pickle.dump((str(params_path), _without_secrets(analysis)), f)


def _without_secrets(analysis: Analysis) -> Analysis:
    """The analysis as the kernel needs it, without the secrets of a connection URL (the frozen copy
    is a file in the build folder, which a killed build leaves behind; the kernel reads no data)."""
    from dataclasses import replace

    from ..redact import redact_url, redact_value
    study = analysis.study
    if study.data.backend is None:
        return analysis
    data = replace(study.data, backend={**study.data.backend, "url": redact_url(study.data.backend["url"])})
    return replace(analysis, study=replace(study, data=data, raw=redact_value(study.raw),
                                           overrides=redact_value(study.overrides)))


CACHE_ENV = "PERDOC_CACHE_DIR"


def summary(analysis: Analysis, table_sha256: str | None = None) -> dict:
    """summary.json: the ``perdoc estimate --json`` contract plus params, input and provenance."""
    out = analysis.estimates.to_dict()
    out["estimand"] = {"kind": analysis.study.estimand.kind, "why": analysis.study.estimand.why}
    # no secrets of a connection URL (perdoc.redact): in the params, the overrides or the input
    from ..redact import redact_value
    out["params"] = redact_value(analysis.study.to_dict())
    out["params_overrides"] = redact_value(dict(analysis.study.overrides))   # --set / --name / --language
    out["input"] = redact_value(dict(analysis.input))
    out["documents_table"] = {"file": "documents.csv", "sha256": table_sha256}
    if analysis.comparison is not None:
        out["comparison"] = analysis.comparison.to_dict()
    if analysis.judge_pair is not None:
        out["judge_comparison"] = analysis.judge_pair.to_dict()
    if analysis.comparison_many is not None:
        out["comparison_many"] = analysis.comparison_many.to_dict()
    out["headline"] = analysis.headline.to_dict()
    if analysis.judge is not None:
        out["judge"] = analysis.judge.to_dict()
    from .notebook import summary_facts
    out["summary_box"] = summary_facts(analysis)   # what the report's summary box states
    if analysis.simulation is not None:
        out["simulation"] = analysis.simulation.to_dict()
        out["recommended"] = dict(analysis.simulation.recommended)
    if analysis.pseudo_simulation is not None:
        out["simulation_pseudo_population"] = analysis.pseudo_simulation.to_dict()
    if analysis.comparison_headline is not None:
        out["comparison_headline"] = analysis.comparison_headline.to_dict()
    if analysis.pair_simulation is not None:
        out["simulation_paired"] = analysis.pair_simulation.to_dict()
    if analysis.strata is not None:
        plan, sim = analysis.strata
        out["planning_strata"] = {"plan": plan.to_dict(), "simulation": None if sim is None else sim.to_dict()}
    if analysis.design_plan is not None:
        out["planning_design"] = analysis.design_plan
    if analysis.difference_plan is not None:
        dp = analysis.difference_plan
        out["planning_difference"] = {**({} if dp["plan"] is None else dp["plan"].to_dict()),
                                      "target_half_width": dp["target"], "pilot": dp["pilot"],
                                      "pilot_K": dp["pilot_K"], "problem": dp["problem"]}
    out["exclusions"] = [{"rows": e.rows, "reason": e.reason} for e in analysis.table.exclusions]
    out["versions"] = package_versions()
    return out


def drawn_description(info: dict, K: int) -> str:
    """A drawn sample's design in words (from the manifest and its JSON)."""
    names = {"srs": "simple random sample", "stratified": "size-stratified sample",
             "pps": "sample with probability proportional to size" + (" (with replacement)"
                                                                     if info.get("with_replacement") else
                                                                     " (without replacement, Brewer's method)"),
             "certainty": "take-all stratum of the longest documents plus a sample of the rest"}
    what = names.get(info.get("design"), "drawn sample")
    M = info.get("documents_in_frame")
    head = f"{what} drawn by perdoc sample: {K:,} document draws" + (f" of {M:,} in the frame" if M else "")
    if info.get("take"):
        head += f", {info['take']} chunks labelled in each (all of a shorter one)"
    if info.get("seed") is not None:
        head += f", seed {info['seed']}"
    strata = info.get("strata") or {}
    if strata:
        head += "; strata: " + "; ".join(f"{h} ({v.get('kind', '')}, {v.get('drawn', '?')} drawn)"
                                         for h, v in strata.items())
    return head


def design_description(analysis: Analysis) -> str:
    """The sampling design in words, with the sampling fraction at each stage or in each stratum."""
    g, est, K = analysis.study.design, analysis.estimates, analysis.table.K
    if g.sampling == "census":
        return f"census: all {K:,} documents of the population"
    if g.sampling == "drawn":
        return drawn_description(est.design or {}, K)
    if g.sampling == "srs":
        frac = "" if est.population_size is None else f" (sampling fraction {K / est.population_size:.2%})"
        M = "" if est.population_size is None else f" of {est.population_size:,}"
        return f"simple random sample of {K:,}{M} documents, without replacement{frac}"
    info = est.design or {}
    if g.sampling == "stratified":
        parts = [f"{h}: {v['k_h']} of {v['M_h']:,} ({v['fraction']:.2%})" for h, v in info["strata"].items()]
        return (f"stratified by {g.strata_column}, documents drawn without replacement within each stratum: "
                + "; ".join(parts))
    return (f"two stages: {K:,} of {info['M']:,} documents ({info['f1']:.2%}), then "
            f"{info['chunks_sampled']:,.0f} of their {info['chunks_in_population']:,.0f} chunks "
            f"(per-document fraction {info['f2_min']:.0%} to {info['f2_max']:.0%}, mean {info['f2_mean']:.0%}; "
            f"{info['documents_fully_enumerated']} documents taken whole)")


def package_versions() -> dict:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


# ---------------------------------------------------------------------------------------- building
#: What perdoc writes into a report folder; a folder holding anything else is never replaced.
REPORT_FILES = frozenset({"report.html", "summary.json", "documents.csv", "error.txt"})
#: The first line of every error.txt perdoc writes (the mark of a failed build's folder).
ERROR_MARK = "perdoc report failed"
#: Prefixes of perdoc's temporary folders inside the output folder (swept when their process is gone).
TMP_PREFIX, OLD_PREFIX, TMP_MARK = ".perdoc-tmp-", ".perdoc-old-", ".perdoc-tmp"
#: The lock file of one report name, ``<out>/.perdoc-lock-<name>``: held (flock) by the build of that
#: name from the check that its folder may be replaced to the final move (or the error page).
LOCK_PREFIX = ".perdoc-lock-"
#: The first bytes of every lock file perdoc writes (a file of that name holding other text is refused).
LOCK_MARK = "perdoc lock"
#: Seconds a build waits for another build of the same name in the same folder before it gives up with
#: one line (the environment variable PERDOC_LOCK_WAIT sets another wait; 0: do not wait).
LOCK_WAIT = 600.0


# ---------------------------------------------------------------------------------------- signals
class BuildInterrupted(KeyboardInterrupt):
    """A report build stopped by SIGTERM or SIGINT (``signum``): its temporary folder was removed and
    the report folder is as it was (or fully replaced, when the signal came during the final move).
    The command line exits with status 128 + signum."""

    def __init__(self, signum: int):
        import signal
        self.signum = int(signum)
        try:
            label = signal.Signals(signum).name
        except ValueError:
            label = f"signal {signum}"
        super().__init__(f"stopped by {label}: the build's temporary folder was removed")


#: Signals that stop a build cleanly, and the state of the handlers :func:`_interruptible` installs.
_INTERRUPT_SIGNALS = ("SIGTERM", "SIGINT")
_interrupt = {"defer": 0, "pending": None, "raised": False}


def _on_signal(signum, frame):
    if _interrupt["raised"]:
        return                       # unwinding already: let the clean-up finish
    if _interrupt["defer"]:
        _interrupt["pending"] = signum   # raised when the critical step is over
        return
    _interrupt["raised"] = True
    raise BuildInterrupted(signum)


class _deferred_interrupts:
    """A step that must not be cut in two (the final move, a clean-up): a signal arriving meanwhile is
    acted on at its end."""

    def __enter__(self):
        _interrupt["defer"] += 1

    def __exit__(self, kind, err, tb):
        _interrupt["defer"] -= 1
        pending = _interrupt["pending"]
        if not _interrupt["defer"] and pending is not None and not _interrupt["raised"]:
            _interrupt["pending"] = None
            _interrupt["raised"] = True
            raise BuildInterrupted(pending)
        return False


#: Extension modules a build imports whose initialisation must not be interrupted by an exception.
_UNINTERRUPTIBLE_IMPORTS = ("duckdb",)


def _import_before_signals() -> None:
    import importlib
    for name in _UNINTERRUPTIBLE_IMPORTS:
        try:
            importlib.import_module(name)
        except ImportError:   # pragma: no cover - DuckDB is a dependency
            pass


def _interruptible(func):
    """Run ``func`` with SIGTERM and SIGINT raising :class:`BuildInterrupted`, so every ``with`` block
    unwinds (the temporary folder, the lock, the environment); the previous handlers come back after.
    Only in the main thread (elsewhere Python cannot set handlers), and a signal the process ignores
    (SIG_IGN, e.g. SIGINT of a background job) stays ignored."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        import signal
        if threading.current_thread() is not threading.main_thread():
            return func(*args, **kwargs)
        # DuckDB's extension module aborts the whole process (no clean-up, status -6) when the
        # signal's exception interrupts its initialisation: it is imported before the handlers are
        _import_before_signals()
        previous, outer = {}, dict(_interrupt)
        _interrupt.update(defer=0, pending=None, raised=False)
        try:
            for sig in (getattr(signal, n) for n in _INTERRUPT_SIGNALS):
                try:
                    old = signal.getsignal(sig)
                    if old is not signal.SIG_IGN:
                        signal.signal(sig, _on_signal)
                        previous[sig] = old
                except (ValueError, OSError):
                    pass
            return func(*args, **kwargs)
        finally:
            for sig, old in previous.items():
                signal.signal(sig, signal.SIG_DFL if old is None else old)
            _interrupt.update(outer)
    return wrapper


def build_reports(params_files, out_dir="reports", *, language: str | None = None, overrides=None,
                  name: str | None = None, notify=None, progress=False) -> list[tuple[str, bool, str]]:
    """Build one report per params file; a failure does not stop the others.

    Returns ``(params file, ok, message)`` per file. ``language`` (``en``, ``es``) overrides each
    file's ``report.language``; ``overrides`` (``{dotted key: value}`` or ``"KEY=VALUE"`` texts) change
    keys of every file; ``name`` is the output folder and goes with one params file only. Overrides
    that name an unknown key, and a ``name`` with several files, raise before anything is written.
    See :func:`build_report`.
    """
    from ..study.params import check_name, parse_overrides
    params_files = list(params_files)
    if name is not None:
        check_name(name, "--name")
        if len(params_files) != 1:
            raise ReportError(f"--name names one report folder: give it with one params file "
                              f"(got {len(params_files)})")
    if overrides:
        overrides = parse_overrides(overrides)
    results = []
    for pf in params_files:
        try:
            path = build_report(pf, out_dir, language=language, overrides=overrides, name=name, notify=notify,
                                progress=progress)
            results.append((str(pf), True, str(path)))
        except PerdocError as err:
            from ..redact import redact_text
            results.append((str(pf), False, redact_text(str(err))))
    return results


@_interruptible
def build_report(params_file, out_dir="reports", *, language: str | None = None, overrides=None,
                 name: str | None = None, notify=None, progress=False) -> Path:
    """Build ``<out_dir>/<name>/report.html``, ``summary.json`` and ``documents.csv``.

    ``overrides`` change keys of the params file before it is validated (``{"intervals.level": 0.9}``
    or ``["intervals.level=0.9"]``, see :func:`perdoc.params.load_params`); ``language`` is the same as
    the override ``report.language`` and ``name`` (the output folder) as the override ``name``. Every
    override is recorded in summary.json (``params_overrides``). An override the schema refuses while
    the file itself is valid raises :class:`perdoc.params.OverrideError` and writes nothing.

    When the report replaces an earlier one whose summary.json holds different parameters,
    ``notify`` (default: print to standard error) gets one line saying so and what differed.
    ``progress`` True prints a line per step and per report section, and a bar while a simulation
    runs, on standard error (or on the stream given instead of True).

    Safety rules (README, "What perdoc writes and deletes"):

    * perdoc only ever replaces a folder it wrote itself (a report or an error page of perdoc, with
      no other files in it) or an empty one; anything else is refused with :class:`ReportError`
      and left untouched;
    * a params file that cannot be read as YAML writes nothing; one that reads but breaks the
      schema replaces the report of the ``name:`` it declares with an error page, so a stale
      report never stands in for the current one;
    * the inputs are copied once into the build folder and every number and hash comes from that
      copy; the report is built in a temporary folder of ``out_dir`` and moved into place at the end;
    * temporary folders of earlier builds killed before they could clean up are removed;
    * one build of a name at a time per output folder: a second waits for the first (at most
      :data:`LOCK_WAIT` seconds, with one line saying so) and then builds;
    * SIGTERM or SIGINT during the build removes its temporary folder and raises
      :class:`BuildInterrupted` (the report folder is left as it was, or fully replaced);
    * an input that is not a regular file (a device, a named pipe) is refused: it is never copied.

    On failure an error page replaces the folder's contents and :class:`ReportError` (or the
    underlying :class:`PerdocError`) is raised.
    """
    out_dir = Path(os.fspath(out_dir))
    params_file = Path(os.fspath(params_file))
    changes = _command_line_overrides(overrides, language, name)
    if not changes:
        _check_out_dir(out_dir, create=False)   # (created once the params file reads: a bad one writes nothing)
    study = _load_for_build(params_file, out_dir, changes, notify)
    name = study.name
    _check_out_dir(out_dir)
    # one build of a name at a time in a folder: from the check to the move (or the error page)
    with _name_lock(out_dir, name, notify):
        _check_replaceable(out_dir / name)
        earlier = _earlier_params(out_dir / name)
        shown_progress = None
        if progress:
            from ..progress import Progress
            shown_progress = Progress(name, None if progress is True else progress)
        _build_and_move(params_file, out_dir, name, study, shown_progress)
    changed = _param_changes(earlier, study.to_dict()) if earlier is not None else ""
    if changed:
        (notify or _to_stderr)(f"replaced {out_dir / name} (its parameters differed: {changed}); "
                               "give --name to keep both")
    return out_dir / name / "report.html"


def _load_for_build(params_file: Path, out_dir: Path, changes: dict, notify) -> Study:
    """The validated study; a file that reads but breaks the schema replaces its report with an error page."""
    from ..study.params import OverrideError
    try:
        return load_params(params_file, overrides=changes or None)
    except OverrideError:
        raise  # the command line is wrong, not the file: nothing is written
    except PerdocError as err:
        name = changes.get("name") or _declared_name(params_file)
        if name is not None:  # read, but broke the schema: never leave an older report standing
            try:
                _check_out_dir(out_dir)
                with _name_lock(out_dir, name, notify):
                    _write_error_page(out_dir, name, params_file, str(err))
            except PerdocError as refused:
                raise ReportError(f"{err}; also: {refused}") from None
        raise


def _build_and_move(params_file: Path, out_dir: Path, name: str, study: Study, progress=None) -> None:
    """Build the report in a temporary folder and move it to ``out_dir/name``; on failure, an error page.

    The kernel starts first and does its imports while this process computes the analysis
    (:class:`perdoc.report.kernel.EarlyKernel`)."""
    from ..progress import NO_PROGRESS
    from .kernel import EarlyKernel
    progress = progress or NO_PROGRESS
    try:
        _sweep_stale(out_dir)
        with (_build_dir(out_dir, name) as tmp, _cache_dir(tmp), _runtime_dir(tmp),
              EarlyKernel(notebook_dir()) as kernel):
            progress.step("reading the data")
            snap_study, shown = _snapshot(study, tmp / "input")
            analysis = _compute_analysis(snap_study, shown, progress=progress)
            _freeze(params_file.resolve(), analysis)
            stage = tmp / name
            stage.mkdir()
            analysis.table.write(stage / "documents.csv")
            table_sha = _sha256_file(stage / "documents.csv")
            (stage / "summary.json").write_text(_dump_json(summary(analysis, table_sha)), encoding="utf-8")
            html_text = render(params_file.resolve(), analysis, kernel=kernel, progress=progress)
            (stage / "report.html").write_text(html_text, encoding="utf-8")
            _replace_dir(stage, out_dir / name)
        progress.step(f"done: {out_dir / name / 'report.html'}")
    except PerdocError as err:
        _error_page_or_note(out_dir, name, params_file, str(err))
        raise
    except OSError as err:
        msg = f"{params_file}: cannot write the report in {out_dir}: {err.strerror or err}"
        _error_page_or_note(out_dir, name, params_file, msg)
        raise ReportError(msg) from None
    except Exception as err:  # an unexpected failure still leaves an honest error page
        msg = f"{type(err).__name__}: {err}".splitlines()[0]
        _error_page_or_note(out_dir, name, params_file, msg)
        raise ReportError(f"{params_file}: report failed: {msg}") from err


def _to_stderr(line: str) -> None:
    import sys
    from ..redact import safe_line
    print(safe_line(f"perdoc: {line}"), file=sys.stderr)


def _command_line_overrides(overrides, language, name) -> dict:
    """``{dotted key: value}`` of the overrides, ``--language`` (report.language) and ``--name`` (name)
    together; a flag and a --set of the same key that disagree are refused."""
    from .i18n import check_language
    from ..study.params import OverrideError, check_name, parse_overrides
    changes = parse_overrides(overrides) if overrides else {}
    for flag, key, value, check in (("--language", "report.language", language, check_language),
                                    ("--name", "name", name, check_name)):
        if value is None:
            continue
        check(value, flag)
        if key in changes and changes[key] != value:
            raise OverrideError(f"{flag} {value} and --set {key}={changes[key]} disagree: give one of them")
        changes[key] = value
    return changes


def _earlier_params(folder: Path) -> dict | None:
    """The parameters recorded in the summary.json of the report in ``folder``, if there is one."""
    try:
        data = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    params = data.get("params") if isinstance(data, dict) else None
    return params if isinstance(params, dict) else None


def _param_changes(old: dict, new: dict, shown: int = 4) -> str:
    """The parameters that differ between two summary.json ``params`` blocks, as
    ``key old -> new`` (dotted keys, the first ``shown`` of them, then a count), or ``""``."""
    def flat(d, prefix=""):
        out = {}
        for k, v in d.items():
            if isinstance(v, dict) and v:
                out.update(flat(v, f"{prefix}{k}."))
            else:
                out[f"{prefix}{k}"] = v
        return out

    def text(v):
        t = "(none)" if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        return t if len(t) <= 40 else t[:37] + "..."

    a, b = flat(old), flat(json.loads(json.dumps(new)))   # the new block as summary.json holds it
    # a key the earlier report does not hold at all was not written by the perdoc that made it: not a
    # change of the user's parameters
    keys = [k for k in list(b) + [k for k in a if k not in b] if k in a and a.get(k) != b.get(k)]
    parts = [f"{k} {text(a.get(k))} -> {text(b.get(k))}" for k in keys[:shown]]
    if len(keys) > shown:
        parts.append(f"and {len(keys) - shown} more")
    return ", ".join(parts)


def _error_page_or_note(out_dir: Path, name: str, params_file: Path, message: str) -> None:
    """Write the error page; if even that is impossible the caller's error is what the user sees."""
    try:
        _write_error_page(out_dir, name, params_file, message)
    except (PerdocError, OSError):
        pass


def _check_out_dir(out_dir: Path, *, create: bool = True) -> None:
    """The output folder exists (or is created) and perdoc may write in it; else one line. With
    ``create`` False a missing folder is not created: the nearest folder above it that exists must
    be one perdoc may write in."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ReportError(f"--out {out_dir}: it is a file, not a folder; give a folder for the reports")
    if not create and not out_dir.exists():
        above = out_dir.absolute().parent
        while not above.exists() and above != above.parent:
            above = above.parent
        if not above.is_dir():
            raise ReportError(f"--out {out_dir}: {above} is a file, not a folder; give a folder for the reports")
        if not os.access(above, os.W_OK | os.X_OK):
            raise ReportError(f"--out {out_dir}: cannot create the folder in {above}, which is not writable")
        return
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ReportError(f"--out {out_dir}: cannot create the folder: {err.strerror or err}") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ReportError(f"--out {out_dir}: the folder is not writable; give a folder perdoc may write in")


def _declared_name(params_file: Path) -> str | None:
    """The ``name:`` a params file declares, if it reads as YAML and the name is a valid folder name."""
    import yaml

    from ..study.params import ParamsError, YamlDuplicateKeyError, check_name, read_yaml
    try:   # read as load_params reads it: no anchors or aliases, bounded nesting
        raw = read_yaml(params_file.read_text(encoding="utf-8"))
    except YamlDuplicateKeyError:
        # it reads as YAML but is refused: its name (given once) still gets the error page
        return _name_despite_duplicates(params_file)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError):
        return None
    name = raw.get("name") if isinstance(raw, dict) else None
    try:
        return check_name(name)   # the rule of the params key name: a valid folder name, not too long
    except ParamsError:
        return None


def _name_despite_duplicates(params_file: Path) -> str | None:
    """The top-level ``name:`` of a params file refused for a key given twice, when ``name`` itself is
    given once (read without the duplicate-key check, still with no anchors, aliases or deep nesting)."""
    import yaml

    from ..study.params import ParamsError, _ParamsLoader, check_name
    loader = _ParamsLoader(params_file.read_text(encoding="utf-8"))
    loader.unique_keys = False
    try:
        node = loader.get_single_node()
        if not isinstance(node, yaml.MappingNode):
            return None
        given = [v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "name"]
        raw = loader.construct_document(node)
    except (yaml.YAMLError, ValueError):
        return None
    finally:
        loader.dispose()
    if len(given) != 1:
        return None
    try:
        return check_name(raw.get("name"))
    except ParamsError:
        return None


def perdoc_folder(folder: Path) -> str | None:
    """Why ``folder`` may not be replaced by perdoc, or None when it may.

    perdoc replaces only a missing or empty folder, or one that holds nothing but what a perdoc
    report or error page consists of (REPORT_FILES) and carries perdoc's mark: a summary.json
    naming perdoc's version, or an error.txt starting with :data:`ERROR_MARK`.
    """
    if not folder.exists() and not folder.is_symlink():
        return None
    if folder.is_symlink() or not folder.is_dir():
        return f"{folder} exists and is not a folder perdoc wrote"
    try:
        entries = sorted(p.name for p in folder.iterdir())
    except OSError as err:
        return f"cannot look into {folder}: {err.strerror or err}"
    # the lock file of a killed build whose --out was this folder is perdoc's, not the user's
    entries = [e for e in entries if not (e.startswith(LOCK_PREFIX) and _idle_lock_file(folder / e))]
    if not entries:
        return None
    foreign = [e for e in entries if e not in REPORT_FILES or not (folder / e).is_file()]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        return f"{folder} holds files perdoc did not write ({shown})"
    if _marked(folder):
        return None
    return f"{folder} does not hold a perdoc report (no perdoc summary.json or error.txt)"


def _marked(folder: Path) -> bool:
    summary_file, error_file = folder / "summary.json", folder / "error.txt"
    if summary_file.is_file():
        try:
            data = json.loads(summary_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(data, dict) and isinstance(data.get("versions"), dict) and "perdoc" in data["versions"]
    if error_file.is_file():
        try:
            with open(error_file, encoding="utf-8") as f:
                return f.readline().strip() == ERROR_MARK
        except (OSError, ValueError):
            return False
    return False


def _check_replaceable(folder: Path) -> None:
    why = perdoc_folder(folder)
    if why is not None:
        raise ReportError(f"refusing to replace {folder}: {why}; move it away or choose another --out "
                          "(perdoc only replaces folders it wrote itself)")


class _build_dir:
    """A temporary build folder inside ``out_dir`` (same file system, so the final move is atomic),
    ``.perdoc-tmp-<name>-<pid>-<random>``, marked by the file ``.perdoc-tmp`` (the pid and host, for
    people). This process holds a lock on the mark for the folder's whole life, so a later sweep (from
    this host, another PID namespace or another host sharing the folder) removes the folder only once
    nobody holds that lock: when the build was killed. No pid is trusted."""

    def __init__(self, out_dir: Path, name: str):
        self.out_dir, self.name = out_dir, name

    def __enter__(self) -> Path:
        self.path = self.fd = None
        try:
            with _deferred_interrupts():   # a signal now is acted on once the folder is set up...
                self.path = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{self.name}-{os.getpid()}-",
                                                  dir=self.out_dir))
                self.fd = _locked_mark(self.path)
                _LIVE_BUILDS.add(os.path.abspath(self.path))
        except BaseException:             # ...and removes it (no __exit__ when __enter__ fails)
            if self.path is not None:
                shutil.rmtree(self.path, ignore_errors=True)
                _LIVE_BUILDS.discard(os.path.abspath(self.path))
            if self.fd is not None:
                os.close(self.fd)
            raise
        return self.path.resolve()

    def __exit__(self, *exc):
        with _deferred_interrupts():   # a second signal must not stop the clean-up half way
            shutil.rmtree(self.path, ignore_errors=True)
            _LIVE_BUILDS.discard(os.path.abspath(self.path))
            os.close(self.fd)          # the lock goes with the folder, never before it
        return False


#: This process's build folders (skipped by its own sweeps whatever the file system's lock semantics).
_LIVE_BUILDS: set = set()
#: The name locks this process holds: (lock file, thread) -> [descriptor or None, depth].
_HELD_LOCKS: dict = {}
_OPEN_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def _flock(fd: int, *, shared: bool = False) -> bool | None:
    """Lock ``fd`` without waiting: True when locked, False when someone else holds the lock, None
    when it cannot be told (a file system without locks, or no fcntl)."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def _open_for_lock(path: Path, *, create: bool) -> int:
    """Open ``path`` read-write (an exclusive lock on a network file system needs it), never following
    a symbolic link nor blocking on a named pipe; read-only when write permission is missing."""
    flags = _OPEN_FLAGS | (os.O_CREAT if create else 0)
    try:
        return os.open(path, os.O_RDWR | flags, 0o644)
    except PermissionError:
        if create:
            raise
        return os.open(path, os.O_RDONLY | flags)


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        a, b = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _lock_holder(path: Path) -> str:
    """Who holds a lock file, as its holder wrote it (``pid 12 on host h``), or ``""``."""
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
    except OSError:
        return ""
    try:
        text = os.read(fd, 300).decode("utf-8", "replace")
    except OSError:
        text = ""
    finally:
        os.close(fd)
    first = text.split("\n", 1)[0]
    return " ".join(first[len(LOCK_MARK):].strip(" :").split()) if first.startswith(LOCK_MARK) else ""


def _lock_wait() -> float:
    """Seconds to wait for another build of the same name: PERDOC_LOCK_WAIT, else :data:`LOCK_WAIT`."""
    text = os.environ.get("PERDOC_LOCK_WAIT", "").strip()
    if not text:
        return LOCK_WAIT
    try:
        wait = float(text)
    except ValueError:
        wait = -1.0
    if not wait >= 0 or wait == float("inf"):
        raise ReportError(f"PERDOC_LOCK_WAIT must be a number of seconds, 0 or more (got {text!r})")
    return wait


def _lock_name(out_dir: Path, name: str, *, wait: float, notify=None) -> int | None:
    """Take the lock of report name ``name`` in ``out_dir``: the file ``<out>/.perdoc-lock-<name>``,
    locked with flock. While another build holds it, wait (one line through ``notify`` the first
    time) for at most ``wait`` seconds, then one line: another build of that name is running.

    Returns the open, locked descriptor, or None when the file system cannot lock (then the build
    goes on unguarded, after one line saying so). A lock file is removed by its holder when done;
    whoever locks one checks it is still the file of that name, else it locks the new one. Something
    other than a perdoc lock file under that name (a link, a folder, a file of other text) is refused.
    """
    path = out_dir / f"{LOCK_PREFIX}{name}"
    say = notify or _to_stderr
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            fd = _open_for_lock(path, create=True)
        except OSError as err:
            why = {errno.ELOOP: "it is a symbolic link", errno.EISDIR: "it is a folder"}.get(
                err.errno, err.strerror or str(err))
            raise ReportError(f"cannot use the lock file {path}: {why}; perdoc keeps a plain file there while "
                              f"it builds {name}: move it away") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1 or not _lock_text(fd):
                raise ReportError(f"cannot use the lock file {path}: it is not a lock file perdoc wrote; "
                                  "move it away")
            got = _flock(fd) if st.st_nlink else True   # no link left: its holder removed it, open anew
            if got is None:
                os.close(fd)
                say(f"cannot lock {path} (this file system has no file locks): a second build of {name} in "
                    f"{out_dir} at the same time would not wait for this one")
                return None
            if got and _same_file(fd, path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{LOCK_MARK}: pid {os.getpid()} on host {platform.node()}\n".encode(), 0)
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        if got:
            continue   # the holder finished and removed that file while this one opened it: lock anew
        holder = _lock_holder(path)
        held_by = f" ({holder})" if holder else ""
        if time.monotonic() >= deadline:
            raise ReportError(f"another build of {name} is running in {out_dir}{held_by}; waited {wait:g} s "
                              "for it (PERDOC_LOCK_WAIT): run this one again when it has finished")
        if not told:
            say(f"waiting for another build of {name} in {out_dir}{held_by} to finish (at most {wait:g} s)")
            told = True
        time.sleep(max(0.0, min(0.1, deadline - time.monotonic())))


def _lock_text(fd: int) -> bool:
    """Whether the file open as ``fd`` reads as a perdoc lock file: empty, or starting with
    :data:`LOCK_MARK` (or a part of it, while its holder writes it)."""
    head = os.pread(fd, len(LOCK_MARK), 0)
    return LOCK_MARK.encode().startswith(head)


def _unlock_name(path: Path, fd: int | None) -> None:
    """Remove the lock file (still locked, so a waiting build sees it is gone and locks a new one)
    and release it."""
    if fd is None:
        return
    if _same_file(fd, path):
        try:
            os.unlink(path)
        except OSError:
            pass
    os.close(fd)


class _name_lock:
    """Hold the lock of report name ``name`` in ``out_dir`` (see :func:`_lock_name`); re-entrant in one
    thread, so the error page a failing build writes is written under the lock the build holds."""

    def __init__(self, out_dir: Path, name: str, notify=None):
        self.out_dir, self.name, self.notify = Path(out_dir), name, notify

    def __enter__(self):
        _check_out_dir(self.out_dir)
        self.path = self.out_dir / f"{LOCK_PREFIX}{self.name}"
        self.key = (os.path.abspath(self.path), threading.get_ident())
        if self.key in _HELD_LOCKS:
            _HELD_LOCKS[self.key][1] += 1
            return self
        fd = _lock_name(self.out_dir, self.name, wait=_lock_wait(), notify=self.notify)
        _HELD_LOCKS[self.key] = [fd, 1]
        return self

    def __exit__(self, *exc):
        with _deferred_interrupts():
            held = _HELD_LOCKS[self.key]
            held[1] -= 1
            if held[1] == 0:
                del _HELD_LOCKS[self.key]
                _unlock_name(self.path, held[0])
        return False


def _locked_mark(folder: Path) -> int:
    """Write the mark of a build folder and lock it (returns the descriptor to keep open). The mark is
    written under another name, locked, then renamed: a sweep never sees it unlocked."""
    new = folder / f"{TMP_MARK}.new"
    fd = os.open(new, os.O_RDWR | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o644)
    try:
        _flock(fd)   # None (no locks here): a sweep cannot lock it either, so never removes the folder
        os.write(fd, f"{os.getpid()}\n{platform.node()}\n".encode())
        os.replace(new, folder / TMP_MARK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _idle_lock_file(path: Path) -> bool:
    """Whether ``path`` is a perdoc lock file that nobody holds (left by a killed build)."""
    import re

    from ..study.params import NAME_PATTERN
    if not re.fullmatch(re.escape(LOCK_PREFIX) + NAME_PATTERN, path.name) or os.path.abspath(path) in {
            k[0] for k in _HELD_LOCKS}:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | _OPEN_FLAGS)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        return stat.S_ISREG(st.st_mode) and _lock_text(fd) and _flock(fd, shared=True) is True
    except OSError:
        return False
    finally:
        os.close(fd)


class _runtime_dir:
    """Kernel connection files and every temporary file of the build (this process's and the
    kernel's) go inside the build folder, so a killed build leaves nothing outside it."""

    VARS = ("JUPYTER_RUNTIME_DIR", "TMPDIR")

    def __init__(self, folder: Path):
        self.folder = Path(folder) / "runtime"

    def __enter__(self):
        self.folder.mkdir(exist_ok=True)
        self.old = {v: os.environ.get(v) for v in self.VARS}
        self.old_tempdir = tempfile.tempdir
        for v in self.VARS:
            os.environ[v] = str(self.folder)
        tempfile.tempdir = str(self.folder)
        return self.folder

    def __exit__(self, *exc):
        tempfile.tempdir = self.old_tempdir
        for v, old in self.old.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old
        return False


def _sweep_stale(out_dir: Path) -> list[Path]:
    """Remove perdoc's own temporary folders left in ``out_dir`` by builds that were killed, and
    nothing else. Returns what was removed.

    Liveness is a held lock, never a process id (a pid says nothing about a build in another PID
    namespace, such as a container sharing the folder, or on another host of a shared folder):

    * a build folder is removed only when its name has perdoc's shape
      ``.perdoc-tmp-<name>-<pid>-<random>``, its mark ``.perdoc-tmp`` is a regular file (not a
      symbolic link, not a folder) starting with a pid, and nobody holds the mark's lock (its build
      holds it for the folder's whole life);
    * a trash folder ``.perdoc-old-<name>-<pid>`` only when it holds nothing but a perdoc report or
      error page and nobody holds the lock of ``<name>`` (the build that moves a report there removes
      it before it releases that lock);
    * lock files (``.perdoc-lock-<name>``) are left alone: their holders remove them.
    """
    import re

    from ..study.params import NAME_PATTERN
    tmp_shape = re.compile(re.escape(TMP_PREFIX) + f"(?P<name>{NAME_PATTERN})-[0-9]+-[A-Za-z0-9_]+")
    old_shape = re.compile(re.escape(OLD_PREFIX) + f"(?P<name>{NAME_PATTERN})-[0-9]+")
    removed = []
    try:
        entries = list(out_dir.iterdir())
    except OSError:
        return removed
    for entry in entries:
        try:
            if entry.is_symlink() or not entry.is_dir():
                continue
        except OSError:
            continue
        if tmp_shape.fullmatch(entry.name):
            if os.path.abspath(entry) not in _LIVE_BUILDS and _sweep_build_folder(entry):
                removed.append(entry)
        else:
            m = old_shape.fullmatch(entry.name)
            if m and perdoc_folder(entry) is None and _sweep_trash(out_dir, entry, m["name"]):
                removed.append(entry)
    return removed


def _sweep_build_folder(folder: Path) -> bool:
    """Remove a build folder whose mark is a regular file nobody holds a lock on (see _sweep_stale)."""
    try:
        fd = _open_for_lock(folder / TMP_MARK, create=False)
    except OSError:
        return False   # no mark, or a symbolic link (ELOOP) or a folder (EISDIR): not ours to delete
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not os.pread(fd, 32, 0).split(b"\n", 1)[0].strip().isdigit():
            return False
        if _flock(fd) is not True:
            return False   # its build is alive (or this file system cannot tell: keep it)
        shutil.rmtree(folder, ignore_errors=True)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _sweep_trash(out_dir: Path, folder: Path, name: str) -> bool:
    """Remove a perdoc trash folder of ``name`` when no build of ``name`` runs (see _sweep_stale)."""
    path = out_dir / f"{LOCK_PREFIX}{name}"
    key = os.path.abspath(path)
    mine = (key, threading.get_ident()) in _HELD_LOCKS    # this build holds it: its own trash is gone
    if not mine and any(k[0] == key for k in _HELD_LOCKS):
        return False
    fd = None
    if not mine:
        try:
            fd = _lock_name(out_dir, name, wait=0, notify=lambda line: None)
        except ReportError:
            return False   # a build of that name runs, or the lock file is not perdoc's
        if fd is None:
            return False   # no locks on this file system: cannot tell, keep it
    try:
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        _unlock_name(path, fd)
    return True


#: The params key of each input file a snapshot copies (by the copy's folder name).
_SNAPSHOT_KEYS = {"qrels": "data.trec.qrels", "doc_map": "data.trec.doc_map", "compare_run": "data.trec.compare_run",
                  "census": "census.path", "frame": "design.frame", "sample": "design.sample",
                  "judge_file": "data.judge_file", "judge_sample": "data.judge_sample"}


def _regular_input(study: Study, src: Path, tag: str) -> int | None:
    """``src`` opened for the snapshot, or None when it cannot be opened (the loader then says why).

    Only a regular file is copied: a device or a pipe can be endless (``/dev/zero``, ``/dev/urandom``,
    a FIFO that is always written) and would be copied until the disk is full, so it is refused with
    one line naming the params key. The check is made on the opened file (no swap between check and
    copy), and opening does not wait for a named pipe's writer."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(src, os.O_RDONLY | nonblock | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            if nonblock:
                os.set_blocking(fd, True)
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    key = "data.trec.run" if tag == "data" and study.data.trec is not None else _SNAPSHOT_KEYS.get(tag, "data.path")
    kind = ("a named pipe" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode) else
            "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else
            "not a regular file")
    label = Path(study.params_path).name if getattr(study, "params_path", None) else "params"
    raise ReportError(f"{label}: key '{key}' names {src}, {kind}: a report copies each input once into its "
                      "build folder, so it reads regular files only (save a stream to a file first)")


def _snapshot(study: Study, folder: Path) -> tuple[Study, dict]:
    """Copy the data (and census) files once into ``folder``, hashing while copying. The study
    returned reads the copies; the mapping names, per copy, the user's file, its size and hash."""
    from dataclasses import replace
    folder.mkdir()
    shown = {}

    def copy(src: Path, tag: str) -> Path:
        if src is None:
            return src  # data.backend: a table of a database, read where it is
        if not src.exists():
            return src  # the loader says "not found" in its own words
        if src.is_dir():
            return src
        fd = _regular_input(study, src, tag)   # a device or a pipe is refused, never copied
        if fd is None:
            return src  # cannot be opened: the loader says why in its own words
        with open(fd, "rb") as fin:
            dest = folder / tag / src.name
            dest.parent.mkdir()
            h = hashlib.sha256()
            size = 0
            with open(dest, "wb") as fout:
                for block in iter(lambda: fin.read(1 << 20), b""):
                    h.update(block)
                    fout.write(block)
                    size += len(block)
        shown[str(dest)] = {"file": src.name, "bytes": size, "sha256": h.hexdigest(), "path": str(src)}
        return dest

    data = replace(study.data, path=copy(study.data.path, "data"))
    if study.data.trec is not None:  # every file of a TREC evaluation is read once, from its copy
        tr = study.data.trec
        data = replace(data, trec=replace(
            tr, run=data.path, qrels=copy(tr.qrels, "qrels"), doc_map=copy(tr.doc_map, "doc_map"),
            compare_run=None if tr.compare_run is None else copy(tr.compare_run, "compare_run")))
    census = None if study.census is None else copy(study.census, "census")
    for key in ("judge_file", "judge_sample"):   # the judge's scores, read once from their copy
        if getattr(study.data, key, None) is not None:
            data = replace(data, **{key: copy(getattr(study.data, key), key)})
    from ..study.run import frame_path
    frame = frame_path(study)  # design.frame's file (not the census): read once, from its copy
    design = study.design if frame is None else replace(study.design, frame=str(copy(frame, "frame")))
    from ..study.run import sample_path
    manifest = sample_path(study)  # design.sample: the manifest, and the JSON perdoc sample wrote beside it
    if manifest is not None:
        copied = copy(manifest, "sample")
        if copied != manifest:
            from ..reading.manifest import manifest_json_path
            side = manifest_json_path(manifest)
            fd = _regular_input(study, side, "sample") if side.is_file() else None
            if fd is not None:
                with open(fd, "rb") as fin:
                    meta = fin.read(1 << 20)
                target = manifest_json_path(copied)
                target.write_bytes(meta)
                shown[str(target)] = {"file": side.name, "path": str(side)}
        design = replace(design, sample=str(copied))
    return replace(study, data=data, census=census, design=design), shown


class _cache_dir:
    """Set PERDOC_CACHE_DIR for the duration of a build (the kernel inherits it and reads the build's
    frozen analysis from it, see :func:`analyse`)."""

    def __init__(self, folder):
        self.folder = Path(folder).resolve() / "cache"  # absolute: the kernel runs in notebooks/

    def __enter__(self):
        self.folder.mkdir(exist_ok=True)
        self.old = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = str(self.folder)
        return self.folder

    def __exit__(self, *exc):
        if self.old is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = self.old
        return False


def combined_notebook(nb_dir: Path | None = None, *, title: str = "perdoc report", subtitle: str = "",
                      language: str = "en"):
    """The notebooks as one: title, the summary box, table of contents, then every section in order.

    The summary notebook (:data:`SUMMARY_NOTEBOOK`) comes right after the title and before the
    contents, so the report opens with its answer; its Markdown (tagged :data:`NOTEBOOK_ONLY`, for a
    reader of the notebook alone) is left out and it is not a section of the contents. Only the first
    notebook's ``parameters`` cell is kept (papermill injects after it); the other notebooks'
    parameter cells would overwrite the injected values. Markdown cells written for another language
    (tag ``lang-..``, see :mod:`perdoc.i18n`) are left out.
    """
    import nbformat

    from .i18n import keep_cell
    nb_dir = nb_dir or notebook_dir()
    combined = nbformat.v4.new_notebook()
    combined.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}
    sections = []
    seen_parameters = False
    front, body = [], []
    for stem in NOTEBOOKS:
        nb = nbformat.read(nb_dir / f"{stem}.ipynb", as_version=4)
        for cell in nb.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            if not keep_cell(tags, language) or NOTEBOOK_ONLY in tags:
                continue
            if "parameters" in tags:
                if seen_parameters:
                    continue
                seen_parameters = True
            cell = copy.deepcopy(cell)
            cell.setdefault("metadata", {})["perdoc_section"] = stem   # for the progress lines only
            if stem == SUMMARY_NOTEBOOK:
                front.append(cell)
                continue
            if cell.cell_type == "markdown" and not any(s[0] == stem for s in sections):
                first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
                if first.startswith("# "):
                    sections.append((stem, first[2:].strip()))
            body.append(cell)
    toc = "\n".join(f"{i}. [{title}](#{_anchor(title)})" for i, (_, title) in enumerate(sections, 1))
    head = (f"<h1 class=\"perdoc-title\">{markdown_literal(title)}</h1>\n\n"
            f"<p class=\"perdoc-subtitle\">{markdown_literal(subtitle)}</p>")
    contents = "Contenido" if language == "es" else "Contents"
    combined.cells = ([nbformat.v4.new_markdown_cell(head, metadata={"tags": ["title"]})] + front
                      + [nbformat.v4.new_markdown_cell(f"## {contents}\n\n" + toc, metadata={"tags": ["toc"]})]
                      + body)
    # section titles by notebook, for the progress lines (the metadata is dropped from the HTML)
    combined.metadata["perdoc_sections"] = {SUMMARY_NOTEBOOK: "summary box", **dict(sections)}
    return combined


def markdown_literal(text) -> str:
    """User text made inert inside a Markdown cell: one line (so it cannot end the HTML block it sits
    in), with every character other than letters, digits and spaces written as a numeric character
    reference, so that neither Markdown (links, images, emphasis, autolinks) nor HTML can parse it."""
    flat = " ".join(str(text).split())
    return "".join(c if c.isalnum() or c == " " else f"&#{ord(c)};" for c in flat)


def render(params_file: Path, analysis: Analysis, *, kernel=None, progress=None) -> str:
    """Execute the combined notebook with papermill and render it to self-contained HTML.

    ``kernel`` is an :class:`perdoc.report.kernel.EarlyKernel` already started (else papermill starts
    one); ``progress`` a :class:`perdoc.progress.Progress` that gets a line per section."""
    import papermill as pm

    from .. import __version__
    from ..study.params import _scalar_text
    study = analysis.study

    def shown(value, limit=80):   # an override's value as typed, on one line, shortened, without secrets
        from ..redact import redact_text
        flat = " ".join(redact_text(_scalar_text(value)).split())
        return flat if len(flat) <= limit else flat[:limit - 3] + "..."

    # --set / --name overrides as KEY=VALUE; the whole subtitle is made inert by markdown_literal
    overrides = ", ".join(f"{key}={shown(value)}"
                          for key, value in (getattr(study, "overrides", None) or {}).items())
    if study.language == "es":
        subtitle = (f"Informe de perdoc {__version__} del archivo de parámetros {params_file.name}; "
                    f"datos {input_name(analysis.input, 'es')}; "
                    f"estimando declarado: media {study.estimand.kind}"
                    + (f"; cambios respecto al archivo: {overrides}" if overrides else "") + ".")
    else:
        subtitle = (f"perdoc {__version__} report of params file {params_file.name}; "
                    f"data {input_name(analysis.input)}; "
                    f"declared estimand: {study.estimand.kind} mean"
                    + (f"; overrides: {overrides}" if overrides else "") + ".")
    nb = combined_notebook(title=study.title, subtitle=subtitle, language=study.language)
    from .kernel import KERNEL_ARGS
    from ..progress import NO_PROGRESS
    progress = progress or NO_PROGRESS
    hooks = {}
    hook = progress.section_hook(nb.metadata.get("perdoc_sections", {}))
    if hook is not None:
        hooks["on_cell_start"] = hook
    if kernel is not None:
        hooks["km"] = kernel.manager
    try:   # in memory: no file of the notebook is written, before, during or after its execution
        executed = pm.execute_notebook(nb, None, parameters={"params_file": str(params_file)},
                                       request_save_on_cell_execute=False, kernel_name="python3",
                                       cwd=str(notebook_dir()), progress_bar=False, log_output=False,
                                       extra_arguments=KERNEL_ARGS, **hooks)
    except pm.PapermillExecutionError as err:
        raise ReportError(f"{params_file.name}: notebook cell {err.exec_count} failed: "
                          f"{err.ename}: {str(err.evalue).splitlines()[0] if err.evalue else ''}") from None
    progress.step("writing the HTML")
    for i, cell in enumerate(executed.cells):
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                raise ReportError(f"{params_file.name}: notebook cell {i} failed: {o.get('ename')}: "
                                  f"{str(o.get('evalue', '')).splitlines()[0] if o.get('evalue') else ''}")
    return to_html(executed, title=analysis.study.title)


def to_html(nb, *, title: str) -> str:
    """Render an executed notebook without code, deterministically and with nothing from the network."""
    nb = _normalise(nb)
    with _EXPORTER_LOCK:   # one exporter per process: its templates are compiled once (half a second)
        body, _ = _exporter().from_notebook_node(nb, resources={"metadata": {"name": title}})
    return body


_EXPORTER_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _exporter():
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    class ReportExporter(HTMLExporter):
        """nbconvert's HTML exporter without its last pass, which parses the whole page with
        BeautifulSoup and writes it out again (three quarters of the export's time) to give images
        an alt text (a report has no ``img``: its charts are inline SVG) and make each output
        focusable: the ``tabindex`` is added here to the cells' and outputs' opening tags, which the template
        writes, so the page is the same to a reader."""

        def from_notebook_node(self, nb, resources=None, **kw):
            resources = self._init_resources(resources)
            self.register_filter("highlight_code", self.filters.get("highlight_code", Highlight2HTML(parent=self)))
            self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            html_text, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            return _FOCUSABLE.sub(r'\g<0> tabindex="0"', html_text), resources

    return ReportExporter(template_name="perdoc_report", extra_template_basedirs=[str(TEMPLATE_DIR)],
                          exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)


#: the opening tags of a cell's text and of an output's box, as the lab template writes them (the
#: class attribute first); the tabindex goes last, as nbconvert puts it
_FOCUSABLE = re.compile(r'<div class="(?:[^"<>]*\bjp-OutputArea-output\b[^"<>]*"[^<>]*?(?=>)|jp-Cell-inputWrapper")')


def _normalise(nb):
    """Drop run-specific metadata (timestamps, random ids) so reruns are byte-identical."""
    nb = copy.deepcopy(nb)
    nb.metadata = {"kernelspec": nb.metadata.get("kernelspec", {}), "language_info": {"name": "python"}}
    kept = []
    for i, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags or "parameters" in tags:
            continue  # holds local paths; shows nothing in a report without code
        cell["id"] = f"cell-{i:04d}"
        cell["metadata"] = {"tags": tags} if tags else {}
        if cell.cell_type == "code":
            cell["execution_count"] = None
            for o in cell.get("outputs", []):
                if "execution_count" in o:
                    o["execution_count"] = None
                o.get("metadata", {}).clear() if isinstance(o.get("metadata"), dict) else None
        kept.append(cell)
    nb.cells = kept
    return nb


def _anchor(title: str) -> str:
    """The id nbconvert gives a markdown heading (spaces become '-')."""
    return title.strip().replace(" ", "-")


def _replace_dir(stage: Path, final: Path) -> None:
    """Move ``stage`` to ``final``, replacing what was there (only ever a folder perdoc wrote, checked
    again here), never leaving a half-written folder."""
    _check_replaceable(final)
    trash = None
    with _deferred_interrupts():   # a signal here would leave neither the old nor the new report
        if final.exists():
            trash = final.with_name(f"{OLD_PREFIX}{final.name}-{os.getpid()}")
            if trash.exists() or trash.is_symlink():   # a killed build's trash, if perdoc wrote it
                _check_replaceable(trash)
                shutil.rmtree(trash)
            os.replace(final, trash)
        os.replace(stage, final)
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)


def _write_error_page(out_dir: Path, name: str, params_file: Path, message: str) -> None:
    from ..redact import safe_line
    message = safe_line(message)   # no secrets of a connection URL, no control characters
    _check_out_dir(out_dir)
    _check_replaceable(out_dir / name)
    with _build_dir(out_dir, name) as tmp:
        stage = Path(tmp) / name
        stage.mkdir()
        page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>perdoc report failed: {html.escape(name)}</title>
<style>body {{ font-family: sans-serif; max-width: 50rem; margin: 2rem auto; }}
.err {{ border-left: 4px solid #c0392b; background: #fdf2f0; padding: 0.6rem 1rem; }}</style></head>
<body><h1>Report failed: {html.escape(name)}</h1>
<p>No report was produced for <code>{html.escape(params_file.name)}</code>. Nothing below is a result.</p>
<div class="err"><p><strong>What failed:</strong> {html.escape(message)}</p></div>
<p>Fix the problem and run <code>perdoc report {html.escape(str(params_file))}</code> again.</p>
</body></html>
"""
        (stage / "report.html").write_text(page, encoding="utf-8")
        (stage / "error.txt").write_text(f"{ERROR_MARK}\n{message}\n", encoding="utf-8")
        _replace_dir(stage, out_dir / name)


def _dump_json(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _mtime(path: Path):
    try:
        st = Path(path).stat()
        return (st.st_mtime_ns, st.st_size)
    except OSError:
        return None
