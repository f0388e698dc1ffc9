"""From a validated params file to data and estimates: the one route shared by ``perdoc report``,
``perdoc estimate --params`` and the notebooks."""

from __future__ import annotations

from .errors import InputError
from .estimate import estimate_design
from .params import Study
from .results import Estimates
from .table import DocTable

__all__ = ["load_study_table", "estimate_study", "load_study_pairs"]


def load_study_table(study: Study) -> DocTable:
    """Load the study's data (system of record: ``data.score``) with the document attributes its
    design needs (stratum, chunks in the document)."""
    from .io import load_chunks, load_docs
    d, g = study.data, study.design
    if d.aggregated:
        return load_docs(d.path, doc=d.doc, n=d.n, s=d.s, q=d.q)
    attrs = {}
    if g.sampling == "stratified":
        attrs["stratum"] = g.strata_column
    if g.sampling == "two_stage":
        attrs["chunks_in_doc"] = g.chunks_in_doc
    return load_chunks(d.path, doc=d.doc, score=d.score, attrs=attrs or None)


def load_study_pairs(study: Study):
    """The paired table of ``data.score`` against ``data.compare_to`` (None when not requested)."""
    from .io import load_pairs
    d = study.data
    if d.compare_to is None:
        return None
    return load_pairs(d.path, doc=d.doc, a=d.score, b=d.compare_to)


def estimate_study(study: Study, table: DocTable) -> Estimates:
    """Every estimate the declared design allows."""
    g, iv = study.design, study.intervals
    if g.sampling == "census" and g.population_size is not None and g.population_size != table.K:
        raise InputError(f"design.sampling is census but design.population_size = {g.population_size} differs "
                         f"from the {table.K} documents in the data")
    return estimate_design(table, design=g.as_engine_dict(table), level=iv.level,
                           replicates=iv.replicates, seed=iv.seed)
