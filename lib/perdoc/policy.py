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

* with a frame (the size of every population document, :mod:`perdoc.frame`) and at least
  :data:`FRAME_MIN_K` sampled documents, the micro mean leads with the prediction whose rate is
  linear in the size's rank in the frame: ``logit_frame_rank`` (a metric bounded in [0, 1]) or
  ``frame_rank`` (:func:`perdoc.methods.frame_prediction`). Across the panel at K = 20 it covered
  0.951 on average (93% of cells >= 0.94) at a median width 1.03 of CR2's, against 0.930 (50%) for
  logit CR2; at K = 10, 0.941 (89% >= 0.93) against 0.932 (86%); on the 13 heavy-inequality
  censuses at K = 20 it reached 0.94 within 1.25 x CR2's width on 11 (logit CR2: 5). At K = 5 its
  logit form covered less than logit CR2 (0.884 against 0.932), so below FRAME_MIN_K documents the
  defaults above stay. The other frame-aware methods (``frame_ratio``: narrow, but wrong when long
  documents score differently; ``frame_loglinear``: wider) lead only when a census simulation
  recommends them.
"""

from __future__ import annotations

__all__ = ["default_method", "FRAME_MIN_K"]

#: Sampled documents from which a frame-aware method (``logit_frame_rank`` / ``frame_rank``) leads.
FRAME_MIN_K = 10


def default_method(estimates, kind: str, *, difference: bool = False) -> str:
    """The method key (``cr2``, ``logit_cr2``, ``logit_frame_rank``, ``frame_rank``, ``t``,
    ``bootstrap_t``, ``design``) that leads for ``kind`` ("micro" or "macro") in ``estimates`` when no
    simulation decides."""
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
        if estimates.K >= FRAME_MIN_K:  # a frame was given: its methods are among the estimates
            if bounded and usable("logit_frame_rank"):
                return "logit_frame_rank"
            if usable("frame_rank"):
                return "frame_rank"
        return "logit_cr2" if bounded and usable("logit_cr2") else "cr2"
    return "bootstrap_t" if usable("bootstrap_t") else "t"
