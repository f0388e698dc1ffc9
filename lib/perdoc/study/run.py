"""From a validated params file to data and estimates: the one route shared by ``perdoc report``,
``perdoc estimate --params`` and the notebooks."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .estimate import estimate_design
from .params import Study
from ..methods.results import Estimates
from ..reading.table import DocTable

__all__ = ["load_study_table", "estimate_study", "load_study_pairs", "load_study_census",
           "load_study_census_and_scores", "simulate_study",
           "simulation_design", "strata_experiment", "load_study_frame", "frame_path", "load_study_pair_tables",
           "compare_study_systems", "plan_population_size", "difference_plan_study", "load_study_judged",
           "estimate_study_judged", "judge_frame_study", "load_study_judged_pair"]


def load_study_table(study: Study) -> DocTable:
    """Load the study's data (system of record: ``data.score``) with the document attributes its
    design needs (stratum, chunks in the document)."""
    from ..reading.io import load_chunks, load_docs
    d, g = study.data, study.design
    if g.sampling == "drawn":
        return load_study_sample(study)
    if d.aggregated:
        return load_docs(d.path, doc=d.doc, n=d.n, s=d.s, q=d.q, **_read_options(d))
    attrs = {}
    if g.sampling == "stratified":
        attrs["stratum"] = g.strata_column
    if g.sampling == "two_stage":
        attrs["chunks_in_doc"] = g.chunks_in_doc
    if d.trec is not None or _adapted(d, d.path):
        return _adapter_chunks(d, d.path, attrs)
    return load_chunks(d.path, doc=d.doc, score=d.score, attrs=attrs or None, **_read_options(d))


def _adapted(d, path) -> str | None:
    """The evaluation-framework adapter (perdoc.adapters) that reads the file ``path`` of the params'
    ``data`` block: the one ``data.format`` names, else (no data.format) the one its extension selects
    (``.eval``: inspect; :func:`perdoc.reading.formats.adapter_for`), else None."""
    from ..reading.formats import adapter_for
    return adapter_for(path, d.format)


def _adapter_chunks(d, path, attrs):
    """An evaluation framework's results (or a TREC run, ``path`` being the run) through its adapter,
    then the ordinary loader; the adapter's notes and exclusions reach the table."""
    from ..reading import adapted
    opts = {"metric": d.metric, "allow_similar_ids": d.allow_similar_ids}
    if d.trec is not None:
        t = d.trec
        return adapted.load_trec(path, t.qrels, t.measure, t.doc_map, **opts)
    return adapted.load_chunks(path, _adapted(d, path), doc=d.doc, score=d.score, attrs=attrs or None, **opts)


def _read_options(d) -> dict:
    """How the params' ``data`` block says to read its files (the census too): format, declared
    metric, similar ids."""
    return {"fmt": d.format, "metric": d.metric, "allow_similar_ids": d.allow_similar_ids,
            "engine": getattr(d, "engine", None), "backend": getattr(d, "backend", None)}


def _census_options(d) -> dict:
    """How to read the census file: as the data's files are read, but always the file census.path
    (data.backend names the data's table, not the census)."""
    return {**_read_options(d), "backend": None}


def load_study_pairs(study: Study):
    """The paired table of ``data.score`` against ``data.compare_to`` (None when not requested)."""
    from ..reading.io import load_pairs
    d = study.data
    if d.compare_to is None:
        return None
    if d.trec is not None or _adapted(d, d.path):
        from ..reading import adapted
        opts = {"metric": d.metric, "allow_similar_ids": d.allow_similar_ids}
        if d.trec is not None:
            t = d.trec
            return adapted.load_trec_pairs(d.path, t.compare_run, t.qrels, t.measure, t.doc_map, **opts)
        return adapted.load_pairs(d.path, _adapted(d, d.path), doc=d.doc, a=d.score, b=d.compare_to, **opts)
    return load_pairs(d.path, doc=d.doc, a=d.score, b=d.compare_to, **_read_options(d))


def load_study_frame(study: Study, census: DocTable | None = None):
    """The frame of ``design.frame`` (:class:`perdoc.frame.Frame`), or None: ``census`` takes the
    census's documents and sizes; any other value is a file (relative to the params file) with the
    data's document column and a column ``n``."""
    from ..reading.frame import Frame, read_frame
    spec = getattr(study.design, "frame", None)
    if spec is None:
        return None
    if spec == "census":
        census = census if census is not None else load_study_census(study)
        return Frame.from_table(census, label="the census")
    return read_frame(frame_path(study), study.data.doc or "doc", allow_similar_ids=study.data.allow_similar_ids)


def frame_path(study: Study):
    """The file of ``design.frame`` (a Path, relative paths from the params file's folder), or None
    when there is no frame or the frame is the census."""
    from pathlib import Path
    spec = getattr(study.design, "frame", None)
    if spec is None or spec == "census":
        return None
    path = Path(spec)
    if not path.is_absolute() and study.params_path is not None:
        path = (Path(study.params_path).parent / path).resolve()
    return path


def sample_path(study: Study):
    """The manifest of ``design.sample`` (relative paths from the params file's folder), or None."""
    from pathlib import Path
    spec = getattr(study.design, "sample", None)
    if spec is None:
        return None
    path = Path(spec)
    if not path.is_absolute() and study.params_path is not None:
        path = (Path(study.params_path).parent / path).resolve()
    return path


def load_study_sample(study: Study) -> DocTable:
    """A drawn sample (``design.sample``): the labelled rows of ``data.path`` matched to the manifest
    (:func:`perdoc.reading.manifest.load_sample`), as a table whose attributes carry the design."""
    from ..reading.manifest import manifest_meta, read_table_file
    from ..reading.manifest import as_table, load_sample, read_manifest
    d = study.data
    man = sample_path(study)
    manifest = read_manifest(man, d.doc, allow_similar_ids=d.allow_similar_ids)
    labels = read_table_file(d.path, "the labels")
    data = load_sample(labels, manifest, doc=d.doc, score=d.score, nonresponse=study.design.nonresponse,
                       manifest_path=f"the manifest {man.name}", labels_path=f"the labels {d.path.name}")
    meta = manifest_meta(man)
    data.info.update({k: meta[k] for k in ("design", "k", "take", "seed", "documents_in_frame", "chunks_in_frame",
                                           "with_replacement", "remainder", "certainty_size") if k in meta})
    return as_table(data, source={"path": str(d.path), "format": d.path.suffix.lstrip(".") or None,
                                  "rows": int(len(labels)), "manifest": man.name})


def estimate_study(study: Study, table: DocTable, frame=None) -> Estimates:
    """Every estimate the declared design allows (with the frame-aware methods when the params name
    a frame; ``frame``: one already loaded)."""
    g, iv = study.design, study.intervals
    if g.sampling == "drawn":
        from ..methods.survey import design_estimate
        from ..reading.manifest import from_table
        return design_estimate(from_table(table), level=iv.level)
    if g.sampling == "census" and g.population_size is not None and g.population_size != table.K:
        raise InputError(f"design.sampling is census but design.population_size = {g.population_size} differs "
                         f"from the {table.K} documents in the data")
    if frame is None:
        frame = load_study_frame(study)
    return estimate_design(table, design=g.as_engine_dict(table), level=iv.level,
                           replicates=iv.replicates, seed=iv.seed, frame=frame)


def load_study_judged(study: Study):
    """The study's judged sample when the params name a judge (``data.judge`` with ``data.judge_file`` or
    ``data.judge_sample``): :func:`perdoc.study.judge.load_judged`, or ``load_judged_design`` for a drawn
    sample (``design.sample``); None without a judge."""
    d = study.data
    if d.judge is None:
        return None
    from .judge import load_judged, load_judged_design
    opts = _read_options(d)
    if study.design.sampling == "drawn":
        return load_judged_design(d.path, sample_path(study), d.doc, d.score, d.judge, judge_file=d.judge_file,
                                  nonresponse=study.design.nonresponse, **opts)
    return load_judged(d.path, d.doc, d.score, d.judge, judge_file=d.judge_file, judge_sample=d.judge_sample, **opts)


def load_study_judged_pair(study: Study):
    """The judged paired difference ``data.score - data.compare_to`` when the params name both systems'
    judges (``data.judge`` and ``data.judge_compare_to``): :func:`perdoc.study.judge.load_judged_pair`, or
    ``load_judged_design_pair`` for a drawn sample; None otherwise."""
    d = study.data
    if d.judge is None or d.judge_compare_to is None or d.compare_to is None:
        return None
    from .judge import load_judged_design_pair, load_judged_pair
    opts = _read_options(d)
    if study.design.sampling == "drawn":
        return load_judged_design_pair(d.path, sample_path(study), d.doc, d.score, d.compare_to, d.judge,
                                       d.judge_compare_to, judge_file=d.judge_file,
                                       nonresponse=study.design.nonresponse, **opts)
    return load_judged_pair(d.path, d.doc, d.score, d.compare_to, d.judge, d.judge_compare_to,
                            judge_file=d.judge_file, judge_sample=d.judge_sample, **opts)


def judge_frame_study(study: Study, judged) -> Study:
    """``study`` with the judge file as its frame: when the judge scored every population document
    (``data.judge_file``) of a simple random sample and the params give no ``design.population_size``,
    the judge file's documents are the population size, for the labels-only estimates as for the
    judge-assisted ones (the finite population correction of both, as ``perdoc estimate --judge``
    applies it)."""
    from dataclasses import replace
    g = study.design
    if judged is None or not getattr(judged.judge, "covers", False) or g.sampling != "srs" \
            or g.population_size is not None or not hasattr(judged, "table"):
        return study
    return replace(study, design=replace(g, population_size=int(judged.judge.M)))


def estimate_study_judged(study: Study, judged, est: Estimates):
    """The judge-assisted estimates of the study's judged sample (:func:`perdoc.study.judge.estimate_judged`,
    with the study's level and the labels-only estimates' population size), or None without a judge."""
    if judged is None:
        return None
    from .judge import estimate_judged
    return estimate_judged(judged, level=study.intervals.level, population_size=est.population_size)


def load_study_census(study: Study) -> DocTable | None:
    """The census (or larger pilot) named in the params, with the same columns and document attributes."""
    return _load_census(study, ())[0]


def load_study_census_and_scores(study: Study, table: DocTable | None = None):
    """``(census, chunk_scores)``: :func:`load_study_census` and, when the study simulates a take of a
    continuous metric (its drawn sample's take, given its ``table``; ``planning.design``'s takes), the
    census's chunk scores from the same read of the file (:func:`perdoc.design_sim.load_census`)."""
    return _load_census(study, _simulated_takes(study, table))


def _load_census(study: Study, takes):
    if study.census is None:
        return None, None
    from .design_sim import load_census
    d, g = study.data, study.design
    attrs = {}
    if g.sampling == "stratified":
        attrs["stratum"] = g.strata_column
    if _adapted(d, study.census):
        return _adapter_chunks(d, study.census, attrs), None
    return load_census(study.census, doc=d.doc, score=d.score, takes=tuple(takes), attrs=attrs or None,
                       **_census_options(d))


def _simulated_takes(study: Study, table: DocTable | None) -> tuple:
    """The takes the study's simulations label: its drawn sample's (with a simulation block) and
    ``planning.design``'s."""
    takes = []
    if table is not None and study.simulation is not None and study.design.sampling == "drawn":
        takes.append(table.source.get("drawn_sample", {}).get("info", {}).get("take"))
    if study.planning.design is not None:
        takes.extend(study.planning.design.takes)
    return tuple(takes)


def simulation_design(study: Study, table: DocTable) -> tuple[dict | None, int]:
    """The simulation's design and k, mirroring the study's own design and sample."""
    g, sim = study.design, study.simulation
    if g.sampling in ("srs", "census"):
        return None, sim.k or table.K
    if g.sampling == "stratified":
        labels, counts = np.unique(np.asarray(table.attrs["stratum"]).astype(str), return_counts=True)
        k_h = {str(h): int(c) for h, c in zip(labels, counts)}
        if sim.k is not None and sim.k != sum(k_h.values()):
            raise InputError(f"simulation.k = {sim.k} differs from the {sum(k_h.values())} documents of the stratified "
                             "sample; leave it out to simulate the study's own allocation")
        return {"sampling": "stratified", "k": k_h}, sum(k_h.values())
    f2 = np.asarray(table.n, float) / np.asarray(table.attrs["chunks_in_doc"], float)
    return {"sampling": "two_stage", "fraction": float(np.mean(f2))}, sim.k or table.K


def simulate_study(study: Study, table: DocTable, census: DocTable | None = None, chunk_scores=None, *,
                   paired: bool = True, progress=None):
    """Coverage simulation of the study's design on its census: ``(single, paired or None)``;
    ``chunk_scores`` as :func:`load_study_census_and_scores` gives them with the census; ``paired``
    False skips the paired comparison's simulation; ``progress``, a pair of ``progress(done, total)``
    callbacks, follows the single and the paired simulation."""
    bar_single, bar_pair = progress if progress is not None else (None, None)
    from .simulate import simulate, simulate_pairs
    if study.simulation is None:
        return None, None
    if census is None:
        census, chunk_scores = load_study_census_and_scores(study, table)
    sim = study.simulation
    if study.design.sampling == "drawn":
        return _simulate_drawn(study, table, census, chunk_scores), None
    design, k = simulation_design(study, table)
    if design is not None and design["sampling"] == "stratified":
        design = {"sampling": "stratified", "strata": {"by": census.attrs["stratum"], "k": design["k"]}}
    single = simulate(census, k=k, reps=sim.reps, seed=sim.seed, level=study.intervals.level, design=design,
                      replicates=sim.replicates, frame=getattr(study.design, "frame", None) is not None,
                      progress=bar_single)
    pair_result = None
    if paired and study.data.compare_to is not None and (design is None):
        from ..reading.io import load_pairs
        d = study.data
        if _adapted(d, study.census):
            from ..reading import adapted
            pairs = adapted.load_pairs(study.census, _adapted(d, study.census), doc=d.doc, a=d.score,
                                       b=d.compare_to, metric=d.metric, allow_similar_ids=d.allow_similar_ids)
        else:
            pairs = load_pairs(study.census, doc=d.doc, a=d.score, b=d.compare_to, **_census_options(d))
        pair_result = simulate_pairs(pairs, k=k, reps=sim.reps, seed=sim.seed, level=study.intervals.level,
                                     replicates=sim.replicates, progress=bar_pair)
    return single, pair_result


def _simulate_drawn(study: Study, table: DocTable, census: DocTable, chunk_scores=None):
    """The coverage of the study's own drawn design (as its manifest records it) on the census, the
    census being the frame; None when the manifest's JSON is missing or the simulation cannot run
    (a take of a continuous score)."""
    from .design_sim import as_simulation_result, simulate_design
    from ..errors import ParameterError
    info = table.source.get("drawn_sample", {}).get("info", {})
    if "design" not in info or "k" not in info:
        return None
    sim = study.simulation
    opts = {k: info[k] for k in ("with_replacement", "remainder", "certainty_size") if info.get(k) is not None}
    if info["design"] != "pps":
        opts.pop("with_replacement", None)
    try:
        res = simulate_design(census, design=info["design"], k=int(info["k"]), reps=sim.reps, seed=sim.seed,
                              level=study.intervals.level, take=info.get("take"),
                              chunk_scores=_chunk_scores(study, census, chunk_scores, info.get("take")),
                              **opts)
    except ParameterError:
        return None
    return as_simulation_result(res, seed=sim.seed)


def _chunk_scores(study: Study, census: DocTable, chunk_scores, *takes):
    """The census's chunk scores when a take of a continuous metric is simulated (else None): those read
    with the census (``chunk_scores``), else read now."""
    from .design_sim import census_chunk_scores, needs_chunk_scores
    if _adapted(study.data, study.census) or not needs_chunk_scores(census, takes):
        return None
    if chunk_scores is not None:
        return chunk_scores
    return census_chunk_scores(census, study.census, doc=study.data.doc, score=study.data.score)


def strata_experiment(study: Study, census: DocTable):
    """The planning section's stratified design: the plan (expected SD) and, with a simulation
    block, its simulated coverage and mean width; ``None`` without ``planning.strata``."""
    from .plan import plan_strata
    from .simulate import simulate
    pl = study.planning
    if pl.strata_k is None:
        return None
    plan = plan_strata(census, k=pl.strata_k, threshold=pl.strata_threshold, allocation=pl.strata_allocation,
                       level=study.intervals.level)
    sim = None
    if study.simulation is not None:
        labels = plan.labels(census)
        sim = simulate(census, k=plan.k, reps=study.simulation.reps, seed=study.simulation.seed,
                       level=study.intervals.level, replicates=0,
                       design={"sampling": "stratified",
                               "strata": {"by": labels, "k": {h: v["k_h"] for h, v in plan.strata.items()}}})
    return plan, sim


def design_plan_study(study: Study, table: DocTable, census: DocTable | None = None, chunk_scores=None):
    """``planning.design``: the drawn designs compared by simulation (:func:`perdoc.design_plan.plan_designs`)
    at a label budget (default: the chunks labelled in this study), on the census when the params give
    one, else on a planning population over the frame made from this study as a pilot (a 0/1 metric).
    Returns the plan's dict (with ``basis``) or None without ``planning.design``."""
    import numpy as np
    from .design_plan import pilot_tail, plan_designs, planning_population
    from ..errors import ParameterError
    spec = study.planning.design
    if spec is None:
        return None
    budget = spec.budget if spec.budget is not None else float(np.sum(table.n)) * spec.cost_chunk + (
        table.K * spec.cost_doc)
    if census is not None:
        population, basis, tail = census, "census", None
    else:
        frame = load_study_frame(study)
        q = None if table.q is None else np.asarray(table.q, dtype=float)
        s = np.asarray(table.s, dtype=float)
        if q is None or not np.array_equal(q, s):
            raise ParameterError("planning.design without a census needs a 0/1 metric: a pilot's rates make the "
                                 "planning population (give census.path for a continuous score)")
        sizes = np.asarray(table.attrs["chunks_in_doc"], dtype=float) if "chunks_in_doc" in table.attrs else None
        population = planning_population(frame, table, sizes=sizes)
        basis, tail = "pilot", pilot_tail(frame, table, sizes=sizes)
    res = plan_designs(population, ks=spec.ks, designs=spec.designs, takes=spec.takes, budget=budget,
                       cost_doc=spec.cost_doc, cost_chunk=spec.cost_chunk, reps=spec.reps, seed=spec.seed,
                       level=study.intervals.level, basis=basis, tail=tail,
                       chunk_scores=None if census is None else _chunk_scores(study, census, chunk_scores,
                                                                                 *spec.takes))
    res["budget_source"] = "params" if spec.budget is not None else "this study's labels"
    return res


def load_study_pair_tables(study: Study, first=None) -> dict:
    """``{(a, b): PairTable}`` for every pair of the study's systems (:attr:`DataSpec.systems`: data.score,
    then each column of data.compare_to), each read as :func:`load_study_pairs` reads the study's own
    pair; ``first``: the pair data.score - data.compare_to already read."""
    import itertools
    from dataclasses import replace
    d = study.data
    tables = {}
    for a, b in itertools.combinations(d.systems, 2):
        if first is not None and (a, b) == (d.score, d.compare_to):
            tables[a, b] = first
        else:
            tables[a, b] = load_study_pairs(replace(study, data=replace(d, score=a, compare_to=b, compare_more=())))
    return tables


def compare_study_systems(study: Study, population_size=None, first=None):
    """Every pair of the study's systems (:func:`perdoc.compare_many`) when data.compare_to lists two or
    more columns, with the study's level, replicates and seed; None otherwise. ``population_size`` as
    the two-system comparison takes it; ``first``: the pair data.score - data.compare_to already read."""
    if not study.data.compare_more:
        return None
    from .multi import compare_many
    iv = study.intervals
    return compare_many(load_study_pair_tables(study, first), list(study.data.systems), level=iv.level,
                        population_size=population_size, replicates=iv.replicates, seed=iv.seed)


def plan_population_size(study: Study, table: DocTable, census: DocTable | None = None):
    """M of the planning section and of ``perdoc plan --params``: the population size of a simple random
    sample or census (a census's own K when not given, a frame's M), and none for other designs (their
    plan is for a simple random sample of documents, without the finite population correction)."""
    g = study.design
    if g.sampling not in ("srs", "census"):
        return None
    if g.population_size is not None:
        return g.population_size
    if g.sampling == "census":
        return table.K
    if getattr(g, "frame", None) is not None:
        return load_study_frame(study, census).M
    return None


def difference_plan_study(study: Study, table: DocTable) -> dict | None:
    """``planning.difference_half_width``: the plan of the paired difference data.score - data.compare_to
    (:func:`perdoc.plan.plan_difference`) as ``perdoc plan --params P --vs B --half-width H`` makes it:
    the pilot is the census read as pairs when the params give one, else the study's own pairs; M, the
    level and the estimand are the study's. Returns ``{"plan": DifferencePlan or None, "problem": text
    or None, "pilot": "census" or "study", "pilot_K", "target"}``, or None without the key."""
    from dataclasses import replace
    from .plan import difference_problem, plan_difference
    target, d = study.planning.difference_half_width, study.data
    if target is None or d.compare_to is None:
        return None
    from_census = study.census is not None
    pilot_study = study if not from_census else replace(study, data=replace(d, path=study.census, backend=None))
    pairs = load_study_pairs(replace(pilot_study, data=replace(pilot_study.data, compare_more=())))
    own = table if from_census else pairs.system("a")
    M = plan_population_size(study, own, pairs.system("a") if from_census else None)
    M = None if M is None else int(M)
    kind = study.estimand.kind
    out = {"plan": None, "problem": difference_problem(pairs, kind, source="census" if from_census else "pilot"),
           "pilot": "census" if from_census else "study", "pilot_K": pairs.K, "target": float(target)}
    if out["problem"] is None:
        out["plan"] = plan_difference(pairs, target, estimand=kind, level=study.intervals.level, population_size=M,
                                      own_sample=not from_census)
    return out
