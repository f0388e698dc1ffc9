"""The report kit: params file in, one self-contained offline HTML report out.

``build_report(params_file, out_dir)`` validates the params, computes the analysis, executes the
six notebooks (as one notebook, in one kernel) with papermill, renders them with nbconvert into
``<out>/<name>/report.html`` and writes ``summary.json`` and ``documents.csv`` beside it. Everything
is built in a temporary folder and moved into place at the end; a dataset that fails leaves an
error page saying what failed instead of a report that looks complete.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import os
import platform
import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from .errors import PerdocError
from .estimate import estimate
from .params import Study, load_params
from .results import Estimates
from .table import DocTable

__all__ = ["Analysis", "analyse", "summary", "design_description", "build_report", "build_reports", "ReportError",
           "NOTEBOOKS", "notebook_dir"]

NOTEBOOKS = ("01_design", "02_estimand", "03_intervals", "04_comparison", "05_planning", "06_checklist")
PACKAGES = ("perdoc", "numpy", "scipy", "pandas", "duckdb", "pyarrow", "altair", "vl-convert-python",
            "papermill", "nbconvert")
TEMPLATE_DIR = Path(__file__).with_name("templates")


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

    @property
    def primary(self):
        """The interval the declared estimand leads with: the design's under stratified or two-stage
        sampling, else CR2 for micro and t for macro."""
        kind = self.study.estimand.kind
        if self.estimates.design is not None:
            try:
                return self.estimates.interval(kind, "design")
            except KeyError:
                return self.estimates.interval("micro", "design")
        return self.estimates.interval(kind, "cr2" if kind == "micro" else "t")


def notebook_dir() -> Path:
    """The folder of the six notebooks (the repository's ``notebooks/``)."""
    env = os.environ.get("PERDOC_NOTEBOOKS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "notebooks"


def analyse(params_file) -> Analysis:
    """Validate the params, load the data and compute every estimate (cached per file state)."""
    path = Path(params_file).resolve()
    study = load_params(path)
    stamp = (_mtime(path), _mtime(study.data.path))
    return _analyse_cached(str(path), stamp)


@lru_cache(maxsize=8)
def _analyse_cached(path: str, stamp) -> Analysis:
    from .study import (estimate_study, load_study_census, load_study_pairs, load_study_table,
                        simulate_study, strata_experiment)
    study = load_params(path)
    d = study.data
    table = load_study_table(study)
    est = estimate_study(study, table)
    comparison = None
    pairs = load_study_pairs(study)
    if pairs is not None:
        from .compare import compare
        iv = study.intervals
        comparison = compare(pairs, level=iv.level, population_size=est.population_size
                             if study.design.sampling in ("srs", "census") else None,
                             replicates=iv.replicates, seed=iv.seed)
    census = load_study_census(study)
    simulation = pair_simulation = strata = None
    if census is not None:
        key = _cache_key(path, study, census)
        simulation, pair_simulation = _cached(f"simulation-{key}", lambda: simulate_study(study, table, census))
        strata = _cached(f"strata-{key}", lambda: strata_experiment(study, census))
    info = {
        "file": d.path.name,
        "bytes": d.path.stat().st_size,
        "sha256": _sha256_file(d.path),
        "format": table.source.get("format"),
        "rows": table.source.get("rows"),
        "aggregated": d.aggregated,
        "columns": {k: v for k, v in (("doc", d.doc), ("score", d.score), ("n", d.n), ("s", d.s),
                                      ("q", d.q)) if v is not None},
    }
    if census is not None:
        info["census"] = {"file": study.census.name, "bytes": study.census.stat().st_size,
                          "sha256": _sha256_file(study.census), "documents": census.K}
    return Analysis(study=study, table=table, estimates=est, input=info, comparison=comparison,
                    census=census, simulation=simulation, pair_simulation=pair_simulation, strata=strata)


CACHE_ENV = "PERDOC_CACHE_DIR"


def _prime_cache(params_file, analysis: Analysis) -> None:
    """Hand this process's expensive results to the notebook kernel (an analysis may come from the
    in-process cache, in which case nothing was computed and so nothing was stored yet)."""
    if analysis.census is None:
        return
    key = _cache_key(str(Path(params_file).resolve()), analysis.study, analysis.census)
    _cached(f"simulation-{key}", lambda: (analysis.simulation, analysis.pair_simulation))
    _cached(f"strata-{key}", lambda: analysis.strata)


def _cache_key(path: str, study: Study, census: DocTable) -> str:
    from . import __version__
    h = hashlib.sha256()
    h.update(Path(path).read_bytes())
    h.update(_sha256_file(study.data.path).encode())
    h.update(_sha256_file(study.census).encode())
    h.update(__version__.encode())
    return h.hexdigest()[:24]


def _cached(name: str, compute):
    """Reuse an expensive result within one report build: ``build_report`` points the notebook
    kernel at its own computations through ``PERDOC_CACHE_DIR`` (a folder of the build)."""
    import pickle
    folder = os.environ.get(CACHE_ENV)
    target = Path(folder) / f"{name}.pickle" if folder else None
    if target is not None and target.exists():
        with open(target, "rb") as f:
            return pickle.load(f)
    value = compute()
    if target is not None:
        tmp = target.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(value, f)
        os.replace(tmp, target)
    return value


def summary(analysis: Analysis, table_sha256: str | None = None) -> dict:
    """summary.json: the ``perdoc estimate --json`` contract plus params, input and provenance."""
    out = analysis.estimates.to_dict()
    out["estimand"] = {"kind": analysis.study.estimand.kind, "why": analysis.study.estimand.why}
    out["params"] = analysis.study.to_dict()
    out["input"] = dict(analysis.input)
    out["documents_table"] = {"file": "documents.csv", "sha256": table_sha256}
    if analysis.comparison is not None:
        out["comparison"] = analysis.comparison.to_dict()
    if analysis.simulation is not None:
        out["simulation"] = analysis.simulation.to_dict()
        out["recommended"] = dict(analysis.simulation.recommended)
    if analysis.pair_simulation is not None:
        out["simulation_paired"] = analysis.pair_simulation.to_dict()
    if analysis.strata is not None:
        plan, sim = analysis.strata
        out["planning_strata"] = {"plan": plan.to_dict(), "simulation": None if sim is None else sim.to_dict()}
    out["exclusions"] = [{"rows": e.rows, "reason": e.reason} for e in analysis.table.exclusions]
    out["versions"] = package_versions()
    return out


def design_description(analysis: Analysis) -> str:
    """The sampling design in words, with the sampling fraction at each stage or in each stratum."""
    g, est, K = analysis.study.design, analysis.estimates, analysis.table.K
    if g.sampling == "census":
        return f"census: all {K:,} documents of the population"
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
def build_reports(params_files, out_dir="reports") -> list[tuple[str, bool, str]]:
    """Build one report per params file; a failure does not stop the others.

    Returns ``(params file, ok, message)`` per file.
    """
    results = []
    for pf in params_files:
        try:
            path = build_report(pf, out_dir)
            results.append((str(pf), True, str(path)))
        except PerdocError as err:
            results.append((str(pf), False, str(err)))
    return results


def build_report(params_file, out_dir="reports") -> Path:
    """Build ``<out_dir>/<name>/report.html``, ``summary.json`` and ``documents.csv``.

    On failure an error page replaces the folder's contents and :class:`ReportError` (or the
    underlying :class:`PerdocError`) is raised.
    """
    out_dir = Path(out_dir)
    params_file = Path(params_file)
    name = params_file.stem
    try:
        study = load_params(params_file)
        name = study.name
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".tmp-{name}-", dir=out_dir) as tmp, _cache_dir(tmp):
            analysis = analyse(params_file)
            _prime_cache(params_file, analysis)
            tmp = Path(tmp)
            stage = tmp / name
            stage.mkdir()
            analysis.table.write(stage / "documents.csv")
            table_sha = _sha256_file(stage / "documents.csv")
            (stage / "summary.json").write_text(_dump_json(summary(analysis, table_sha)), encoding="utf-8")
            html_text = render(params_file.resolve(), analysis, tmp)
            (stage / "report.html").write_text(html_text, encoding="utf-8")
            _replace_dir(stage, out_dir / name)
        return out_dir / name / "report.html"
    except PerdocError as err:
        _write_error_page(out_dir, name, params_file, str(err))
        raise
    except Exception as err:  # an unexpected failure still leaves an honest error page
        msg = f"{type(err).__name__}: {err}".splitlines()[0]
        _write_error_page(out_dir, name, params_file, msg)
        raise ReportError(f"{params_file}: report failed: {msg}") from err


class _cache_dir:
    """Set PERDOC_CACHE_DIR for the duration of a build (the kernel inherits it)."""

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


def combined_notebook(nb_dir: Path | None = None, *, title: str = "perdoc report", subtitle: str = ""):
    """The six notebooks as one: title, table of contents, then every section in order.

    Only the first notebook's ``parameters`` cell is kept (papermill injects after it); the other
    notebooks' parameter cells would overwrite the injected values.
    """
    import nbformat
    nb_dir = nb_dir or notebook_dir()
    combined = nbformat.v4.new_notebook()
    combined.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}
    sections = []
    seen_parameters = False
    body = []
    for stem in NOTEBOOKS:
        nb = nbformat.read(nb_dir / f"{stem}.ipynb", as_version=4)
        for cell in nb.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            if "parameters" in tags:
                if seen_parameters:
                    continue
                seen_parameters = True
            if cell.cell_type == "markdown" and not any(s[0] == stem for s in sections):
                first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
                if first.startswith("# "):
                    sections.append((stem, first[2:].strip()))
            body.append(copy.deepcopy(cell))
    toc = "\n".join(f"{i}. [{title}](#{_anchor(title)})" for i, (_, title) in enumerate(sections, 1))
    head = f"<h1 class=\"perdoc-title\">{html.escape(title)}</h1>\n\n<p>{html.escape(subtitle)}</p>\n\n"
    combined.cells = [nbformat.v4.new_markdown_cell(head + "## Contents\n\n" + toc,
                                                    metadata={"tags": ["toc"]})] + body
    return combined


def render(params_file: Path, analysis: Analysis, workdir: Path) -> str:
    """Execute the combined notebook with papermill and render it to self-contained HTML."""
    import nbformat
    import papermill as pm

    from . import __version__
    study = analysis.study
    nb = combined_notebook(title=study.title,
                           subtitle=f"perdoc {__version__} report of params file {params_file.name}; "
                                    f"data {analysis.input['file']} (SHA-256 {analysis.input['sha256'][:12]}...); "
                                    f"declared estimand: {study.estimand.kind} mean.")
    src = workdir / "report-input.ipynb"
    out = workdir / "report-executed.ipynb"
    nbformat.write(nb, src)
    try:
        pm.execute_notebook(str(src), str(out), parameters={"params_file": str(params_file)},
                            kernel_name="python3", cwd=str(notebook_dir()), progress_bar=False,
                            log_output=False, extra_arguments=["--IPKernelApp.log_level=ERROR"])
    except pm.PapermillExecutionError as err:
        raise ReportError(f"{params_file.name}: notebook cell {err.exec_count} failed: "
                          f"{err.ename}: {str(err.evalue).splitlines()[0] if err.evalue else ''}") from None
    executed = nbformat.read(out, as_version=4)
    for i, cell in enumerate(executed.cells):
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                raise ReportError(f"{params_file.name}: notebook cell {i} failed: {o.get('ename')}: "
                                  f"{str(o.get('evalue', '')).splitlines()[0] if o.get('evalue') else ''}")
    return to_html(executed, title=analysis.study.title)


def to_html(nb, *, title: str) -> str:
    """Render an executed notebook without code, deterministically and with nothing from the network."""
    from nbconvert import HTMLExporter
    nb = _normalise(nb)
    exporter = HTMLExporter(template_name="perdoc_report", extra_template_basedirs=[str(TEMPLATE_DIR)],
                            exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    return body


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
    """Move ``stage`` to ``final``, replacing what was there, never leaving a half-written folder."""
    trash = None
    if final.exists():
        trash = final.with_name(f".old-{final.name}-{os.getpid()}")
        os.replace(final, trash)
    os.replace(stage, final)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def _write_error_page(out_dir: Path, name: str, params_file: Path, message: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".tmp-{name}-", dir=out_dir) as tmp:
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
        (stage / "error.txt").write_text(message + "\n", encoding="utf-8")
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
