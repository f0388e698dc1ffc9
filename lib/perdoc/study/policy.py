"""Which interval leads when nothing else decides: the defaults the coverage panel supports.

The coverage panel (``benchmarks/coverage_panel.py``, results in ``benchmarks/README.md``) ran every
method on 33 censuses (synthetic ones spanning size inequality, intra-class correlation, base rate,
skewness and size-rate correlation, and four real clustered data sets) at K = 5, 10, 20 and 40. The
defaults follow it:

* micro mean of a metric bounded in [0, 1] (0/1 hits, or scores in [0, 1]): ``logit_cr2``, the CR2
  standard error with Bell-McCaffrey df on the logit scale. Across the panel it covered more often
  than CR2 (mean 0.930 against 0.914 at K = 20; 0.932 against 0.907 at K = 10) at a median width
  0.98 of CR2's, and it never leaves [0, 1];
* micro mean of an unbounded score: ``cr2`` (CR2 with Bell-McCaffrey df);
* macro mean: ``bootstrap_t`` (document bootstrap-t) when the bootstrap ran: it reached 0.94 in 90%
  of the panel's cells at K = 20 against 52% for the t interval, at a median width 1.05 of t's; the t
  interval (``t``) otherwise;
* a paired difference: ``cr2`` (micro) and ``t`` (macro): on the panel's paired censuses CR2 covered
  0.961 on average at K = 20 (every census >= 0.94) and t 0.930, while every bootstrap stayed near
  0.84-0.90, as the article's paired experiment found.

Under a stratified or two-stage design the design-based interval (``design``) leads. With a census
in the params, a report leads with what its own simulation supports instead (perdoc.report).

* with a frame (the size of every population document, :mod:`perdoc.frame`) the same defaults
  lead: only design-consistent estimators lead, whatever the frame. The prediction (model-based)
  frame methods (``frame_rank`` and the others) looked best on the panel (``logit_frame_rank``
  0.952 on average at K = 20) but their coverage fell as K grew wherever their working model was
  wrong (apipop.meals 0.943 at K = 20, 0.902 at K = 40, 0.836 at K = 80; on an unseen census of very
  unequal sizes 0.746, 0.438 and 0.145 at K = 10, 20, 40), the signature of a bias their variance does
  not carry. They lead only where a census simulation of the study recommends them. The
  design-consistent frame method, ``greg`` / ``logit_greg`` (calibrated to the frame's documents and
  chunks, jackknife variance), covered less than logit CR2 on the panel (0.902 against 0.931 at K =
  20) and is an alternative. What a frame adds is a warning: when a sample of K documents would
  typically miss documents holding more than :data:`perdoc.frame.TAIL_WARN` of the population's
  chunks, no interval from a simple random sample can be trusted there (every panel cell where logit
  CR2 covered below 0.90 at K >= 10 had an expected unseen share of at least 0.16), and the report
  points to a design that samples by size (``perdoc sample --design pps``).
"""

from __future__ import annotations

__all__ = ["default_method", "FRAME_MIN_K"]

#: Kept for scripts that import it: frame-aware methods no longer lead by default (see above).
FRAME_MIN_K = 10


def default_method(estimates, kind: str, *, difference: bool = False) -> str:
    """The method key (``cr2``, ``logit_cr2``, ``t``, ``bootstrap_t``, ``design``, ``logit_design``)
    that leads for ``kind`` ("micro" or "macro") in ``estimates`` when no simulation decides: always a
    design-consistent one, and never one whose interval leaves the metric's range while another
    available default stays inside."""
    if estimates.design is not None:
        if not difference:
            for iv in estimates.intervals:   # a drawn sample's leading interval (perdoc.survey)
                if iv.estimand == kind and iv.method == "logit_design" and iv.role == "primary":
                    return "logit_design"
        return "design"

    def usable(method):
        try:
            iv = estimates.interval(kind, method)
        except KeyError:
            return False
        return iv.ci is not None and iv.role != "baseline"

    if difference:
        return "cr2" if kind == "micro" else "t"
    bounded = tuple(estimates.metric_range or ()) == (0.0, 1.0)
    if kind == "micro":
        if bounded and usable("logit_cr2"):
            return "logit_cr2"
        if bounded and _out_of_range(estimates, kind, "cr2"):
            for method in ("korn_graubard", "wilson", "logit"):   # in [0, 1] by construction
                if usable(method) and not _out_of_range(estimates, kind, method):
                    return method
        return "cr2"
    return "bootstrap_t" if usable("bootstrap_t") else "t"


def _out_of_range(estimates, kind, method) -> bool:
    try:
        return bool(estimates.interval(kind, method).out_of_range)
    except KeyError:
        return False
