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

from dataclasses import dataclass

from ..messages import Message

__all__ = ["default_method", "default_interval", "with_lead", "mark_leads", "mark_comparison_leads", "FRAME_MIN_K", "Headline",
           "choose_headline", "lead", "NOT_CHECKED", "judge_interval", "JUDGE_METHODS", "JUDGE_CHOICE"]

#: Methods shown only to warn (chunks treated as independent): they never lead.
BASELINES = ("micro.wald_iid", "micro.wald_eff_n")

#: Why an interval leads unchecked: no simulation of this study on its population.
NOT_CHECKED = Message("choice.not_checked", "not checked by simulation: no census in the params")

#: Kept for scripts that import it: frame-aware methods no longer lead by default (see above).
FRAME_MIN_K = 10


def default_method(estimates, kind: str, *, difference: bool = False) -> str:
    """The method key (``cr2``, ``logit_cr2``, ``t``, ``bootstrap_t``, ``design``, ``logit_design``)
    that leads for ``kind`` ("micro" or "macro") in ``estimates`` when no simulation decides: always a
    design-consistent one, and never one whose interval leaves the metric's range while another
    available default stays inside."""
    if estimates.design is not None:
        if not difference:
            for iv in estimates.intervals:   # a drawn sample's leading interval (perdoc.survey._lead): the
                #                              logit one wherever it has an interval, whatever role a
                #                              judge-assisted row has since taken
                if iv.estimand == kind and iv.method == "logit_design" and iv.ci is not None:
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


def default_interval(estimates, kind: str, *, difference: bool = False):
    """The interval of :func:`default_method` for ``kind``; under a design without an interval for
    ``kind`` (the macro mean of some designs), the design's micro interval."""
    method = default_method(estimates, kind, difference=difference)
    try:
        return estimates.interval(kind, method)
    except KeyError:
        if estimates.design is None:
            raise
        return estimates.interval("micro", method)


def _out_of_range(estimates, kind, method) -> bool:
    try:
        return bool(estimates.interval(kind, method).out_of_range)
    except KeyError:
        return False


@dataclass(frozen=True)
class Headline:
    """The interval a report leads with and why.

    ``basis``: ``"census"`` (checked by simulation on the census), ``"pseudo-population"`` (checked on
    a pseudo-population built from the sample), or ``"none"`` (not checked). ``verified``: the
    method's simulated coverage is within Monte Carlo error of the nominal level. ``approximate``:
    it was checked and no method reached the nominal level, so the interval shown is the one that
    came closest.
    """

    interval: object
    basis: str
    verified: bool
    approximate: bool
    coverage: float | None = None
    mc_se: float | None = None
    reps: int | None = None
    k: int | None = None
    reason: str = ""

    def to_dict(self) -> dict:
        iv = self.interval
        from ..methods.results import _num
        return {"estimand": iv.estimand, "method": iv.method, "label": iv.label, "estimate": _num(iv.estimate),
                "ci": None if iv.ci is None else [_num(iv.ci.low), _num(iv.ci.high)],
                "df": None if iv.df is None else _num(iv.df), "basis": self.basis, "verified": self.verified,
                "approximate": self.approximate, "coverage": None if self.coverage is None else _num(self.coverage),
                "mc_se": None if self.mc_se is None else _num(self.mc_se), "reps": self.reps, "k": self.k,
                "out_of_range": bool(iv.out_of_range), "reason": self.reason}


def choose_headline(estimates, simulation, kind: str, *, basis: str, default) -> Headline:
    """The headline interval: the method the simulation supports, else the closest, else the default.

    With a simulation: the qualifying methods (coverage >= level - 2 MC SE, baselines excluded), the
    recommended one first and then by mean width, and the first of them that gave this sample an
    interval is the headline (``verified``). When none qualifies, the available method with the
    highest simulated coverage is the headline and the report calls it approximate. Either way an
    interval that leaves the range of a bounded metric leads only when no other is available. Without a
    simulation the default (CR2, t, or the design's interval) leads, not checked.
    """
    if simulation is None:
        return Headline(default, basis="none", verified=False, approximate=False,
                        reason=NOT_CHECKED)
    level = simulation.level
    rows = {m: v for m, v in simulation.methods.items()
            if m.split(".", 1)[0] == kind and m not in BASELINES and v.get("coverage") == v.get("coverage")}

    def available(name):
        method = name.split(".", 1)[1]
        try:
            iv = estimates.interval(kind, method)
        except KeyError:
            return None
        return iv if (iv.ci is not None and iv.role != "baseline") else None

    def width(m):
        w = rows[m].get("mean_width")
        return (rows[m].get("infinite", 0) > 0, float("inf") if w is None or w != w else w)

    qualify = [m for m in rows if rows[m]["coverage"] >= level - 2.0 * rows[m]["mc_se"]]
    rec = simulation.recommended.get(kind)
    order = ([rec] if rec in qualify else []) + sorted((m for m in qualify if m != rec), key=width)
    # an interval that leaves the metric's range never leads while one that stays inside qualifies
    order = [m for m in order if available(m) is not None]
    order.sort(key=lambda m: available(m).out_of_range)
    for m in order:
        iv = available(m)
        if iv is not None:
            why = (Message("choice.recommended", "recommended by the simulation") if m == rec else
                   Message("choice.narrowest_available", "the narrowest qualifying method that gave this sample an "
                           "interval (the recommended {method} did not)", method=rec) if rec else
                   Message("choice.qualifies", "qualifies in the simulation"))
            return Headline(iv, basis=basis, verified=True, approximate=False, coverage=rows[m]["coverage"],
                            mc_se=rows[m]["mc_se"], reps=simulation.reps, k=simulation.k, reason=why)
    best = sorted((m for m in rows if available(m) is not None),
                  key=lambda m: (available(m).out_of_range, -rows[m]["coverage"], width(m)))
    if best:
        m = best[0]
        return Headline(available(m), basis=basis, verified=False, approximate=True,
                        coverage=rows[m]["coverage"], mc_se=rows[m]["mc_se"], reps=simulation.reps,
                        k=simulation.k, reason=Message("choice.closest", "no method reached {level:.0%} in the "
                                                       "simulation; this one came closest", level=level))
    key = f"{kind}.{default.method}"
    cov = rows.get(key, {})
    return Headline(default, basis=basis, verified=False, approximate=bool(rows),
                    coverage=cov.get("coverage"), mc_se=cov.get("mc_se"), reps=simulation.reps, k=simulation.k,
                    reason=Message("choice.none_available", "no method checked by the simulation gave this sample "
                                   "an interval"))


def lead(estimates, kind: str | None = None, simulation=None, *, difference: bool = False) -> Headline:
    """The one interval every interface leads with for ``kind`` (default: the micro mean), and why:
    the method a census simulation of this study supports (:func:`choose_headline`, ``basis``
    "census"), else the panel's default (:func:`default_method`), marked not checked. The CLI
    (``perdoc estimate``, ``perdoc compare``), the Python API and the report all call this.

    A pseudo-population built from the sample (:func:`perdoc.pseudo.pseudo_check`) never chooses: it
    holds only documents like the sampled ones, so a method that looks best there is chosen on the
    sample's own evidence, and the CLI, which does not run it, would lead otherwise. A report shows
    it beside the headline as a qualifier. ``benchmarks/pseudo_switch.py`` measures, on the coverage
    panel's censuses, how its choice covers against the default's (benchmarks/README.md)."""
    kind = kind or "micro"
    judged = judge_interval(estimates, kind)
    if judged is not None:
        return Headline(judged, basis="none", verified=False, approximate=False, reason=JUDGE_CHOICE)
    default = default_interval(estimates, kind, difference=difference)
    if simulation is None:
        return choose_headline(estimates, None, kind, basis="none", default=default)
    return choose_headline(estimates, simulation, kind, basis="census", default=default)


#: The judge-assisted methods (perdoc.study.judge.with_judge), in the order they lead.
JUDGE_METHODS = ("logit_ppi", "ppi")

#: Why a judge-assisted interval leads (the judge panel is its evidence, not a simulation of this study).
JUDGE_CHOICE = Message("choice.judge", "judge-assisted: the judge's mean corrected by its errors on the labelled "
                       "documents; it leads wherever it gives an interval (checked on the judge panel, not by a "
                       "simulation of this study)")


def judge_interval(estimates, kind: str):
    """The judge-assisted interval of ``kind`` that leads (logit scale first, as
    :func:`perdoc.methods.ppi.lead_ends` chooses), or None when ``estimates`` has none with an interval
    (no judge, or the judge's errors could not be measured: the labels-only default then leads)."""
    for method in JUDGE_METHODS:
        for iv in estimates.intervals:
            if iv.estimand == kind and iv.method == method and iv.ci is not None:
                return iv
    return None


def mark_leads(estimates, simulation=None, *, difference: bool = False):
    """``estimates`` with the role ``primary`` on the interval :func:`lead` chooses for each estimand
    (micro and macro), from the same simulation: the declared estimand's primary is its headline, and
    the other estimand's primary is what the same evidence supports for it, never an older default
    beside a simulation that recommends something else. Every interface marks its tables with it."""
    if estimates is None:
        return None
    kinds = [k for k in ("micro", "macro") if any(iv.estimand == k for iv in estimates.intervals)]
    methods = {}
    for kind in kinds:
        iv = lead(estimates, kind, simulation, difference=difference).interval
        if iv is not None:
            methods[iv.estimand] = iv.method
    return with_lead(estimates, methods)


def mark_comparison_leads(comparison, simulation=None):
    """A paired ``comparison`` with its difference's tables marked by :func:`mark_leads` (from the
    paired simulation when there is one); an unpaired one, or None, as it is."""
    from dataclasses import replace
    if comparison is None or not comparison.paired or comparison.difference is None:
        return comparison
    return replace(comparison, difference=mark_leads(comparison.difference, simulation, difference=True))


def with_lead(estimates, methods: dict):
    """``estimates`` with the role ``primary`` on the method ``methods[kind]`` of each estimand named
    there (the others of that estimand ``alternative``; baselines stay baselines), so that every table
    marks the interval the headline uses."""
    from dataclasses import replace
    ivs = []
    for iv in estimates.intervals:
        want = methods.get(iv.estimand)
        if iv.role == "baseline" or want is None:
            ivs.append(iv)
        elif iv.method == want:
            ivs.append(iv if iv.role == "primary" else replace(iv, role="primary"))
        elif iv.role == "primary":
            ivs.append(replace(iv, role="alternative"))
        else:
            ivs.append(iv)
    return replace(estimates, intervals=tuple(ivs))
