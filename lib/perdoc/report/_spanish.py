"""The names of perdoc's interval methods in the report's language, in one place for every part of a
report (the every-method table, the headline, the summary box, the checklist, the charts' long labels).

The library labels each interval in English (``Interval.label``, kept as it is in the JSON). A name
here is a message of the catalogs (:mod:`perdoc.i18n`) keyed by the interval's estimand and method id,
``method.<estimand>.<method>``, with arguments for its variable parts: the wild bootstrap's weights
(``{weights}``, from ``Interval.extra``) and the number of strata (``{strata}``). Where one method id
has several names (``design`` under a stratified, two-stage or drawn sample; ``cr1`` and ``t`` of an
unpaired comparison; ``calibrated`` on the logit scale or not) each is a variant of the key
(``method.micro.design.stratified``), and the variant whose English text gives the interval's label
is the one used. The English text of every name must give the library's label exactly: a label
whose wording changed, or a method with no key here, raises :class:`UnknownMethod` instead of
showing English in a Spanish report (tests/test_catalogs.py runs every method perdoc produces).
The number of strata is not kept on the interval, so it is read from the label, at the place the
English text puts it.
"""

from __future__ import annotations

import re
import string

from .i18n import N_, catalog, get_language, translate

__all__ = ["METHOD_KEYS", "UnknownMethod", "method_message", "method_name", "label_name"]


class UnknownMethod(LookupError):
    """An interval method with no name in the catalogs (or whose label no longer matches its name)."""


#: The message keys of the interval methods' names, by (estimand, method id); several keys are the
#: variants of one method id.
METHOD_KEYS = {
    ("micro", "cr1"): (N_("method.micro.cr1"), N_("method.micro.cr1.delta")),
    ("micro", "cr2"): (N_("method.micro.cr2"),),
    ("micro", "cr2_ik"): (N_("method.micro.cr2_ik"),),
    ("micro", "cr3"): (N_("method.micro.cr3"),),
    ("micro", "jackknife_bc"): (N_("method.micro.jackknife_bc"),),
    ("micro", "korn_graubard"): (N_("method.micro.korn_graubard"),),
    ("micro", "logit"): (N_("method.micro.logit"),),
    ("micro", "wilson"): (N_("method.micro.wilson"),),
    ("micro", "logit_cr2"): (N_("method.micro.logit_cr2"),),
    ("micro", "atanh_cr2"): (N_("method.micro.atanh_cr2"),),
    ("micro", "frame_ratio"): (N_("method.micro.frame_ratio"),),
    ("micro", "frame_loglinear"): (N_("method.micro.frame_loglinear"),),
    ("micro", "frame_rank"): (N_("method.micro.frame_rank"),),
    ("micro", "logit_frame_ratio"): (N_("method.micro.logit_frame_ratio"),),
    ("micro", "logit_frame_loglinear"): (N_("method.micro.logit_frame_loglinear"),),
    ("micro", "logit_frame_rank"): (N_("method.micro.logit_frame_rank"),),
    ("micro", "greg"): (N_("method.micro.greg"),),
    ("micro", "logit_greg"): (N_("method.micro.logit_greg"),),
    ("micro", "bootstrap_t"): (N_("method.micro.bootstrap_t"),),
    ("micro", "percentile"): (N_("method.micro.percentile"),),
    ("micro", "wild"): (N_("method.micro.wild"),),
    ("micro", "bootstrap_t_logit"): (N_("method.micro.bootstrap_t_logit"),),
    ("micro", "calibrated"): (N_("method.micro.calibrated"), N_("method.micro.calibrated.logit")),
    ("micro", "wald_iid"): (N_("method.micro.wald_iid"),),
    ("micro", "wald_eff_n"): (N_("method.micro.wald_eff_n"),),
    ("micro", "design"): (N_("method.micro.design.stratified"), N_("method.micro.design.two_stage"),
                          N_("method.micro.design.drawn")),
    ("micro", "logit_design"): (N_("method.micro.logit_design"),),
    ("micro", "ppi"): (N_("method.micro.ppi"),),
    ("micro", "logit_ppi"): (N_("method.micro.logit_ppi"),),
    ("macro", "t"): (N_("method.macro.t"), N_("method.macro.t.differences")),
    ("macro", "bootstrap_t"): (N_("method.macro.bootstrap_t"),),
    ("macro", "percentile"): (N_("method.macro.percentile"),),
    ("macro", "calibrated"): (N_("method.macro.calibrated"), N_("method.macro.calibrated.logit")),
    ("macro", "design"): (N_("method.macro.design.stratified"), N_("method.macro.design.drawn")),
    ("macro", "logit_design"): (N_("method.macro.logit_design"),),
    ("macro", "ppi"): (N_("method.macro.ppi"),),
    ("macro", "logit_ppi"): (N_("method.macro.logit_ppi"),),
}


def _args_for(key: str, label: str, known: dict) -> dict | None:
    """The arguments that make the English text of ``key`` read ``label`` (None if none do): those the
    interval gives (``known``), the others read from the label where the English text puts them."""
    parts = string.Formatter().parse(catalog("en").gettext(key))
    pattern = "".join(re.escape(text) + (f"(?P<{name}>.+?)" if name else "") for text, name, _, _ in parts)
    m = re.fullmatch(pattern, label)
    if m is None:
        return None
    args = {name: known.get(name, value) for name, value in m.groupdict().items()}
    return args if translate("en", key, **args) == label else None


def method_message(iv) -> tuple[str, dict]:
    """The message key of an interval's method name and its arguments; :class:`UnknownMethod` when the
    catalogs have no name for the method, or none whose English text is the interval's label."""
    keys = METHOD_KEYS.get((iv.estimand, iv.method))
    if keys is None:
        raise UnknownMethod(f"interval method {iv.estimand}.{iv.method} ({iv.label!r}) has no name in the message "
                            "catalogs: add it to METHOD_KEYS in perdoc/report/_spanish.py and to both .po files")
    known = {"weights": (iv.extra or {}).get("weights")}
    known = {k: v for k, v in known.items() if v is not None}
    for key in keys:
        args = _args_for(key, iv.label, known)
        if args is not None:
            return key, args
    raise UnknownMethod(f"the label {iv.label!r} of interval method {iv.estimand}.{iv.method} is not the English "
                        f"text of any of its names ({', '.join(keys)}): update the catalogs (make catalogs)")


def method_name(iv, lang: str | None = None) -> str:
    """The name of an interval's method in ``lang`` (default: the report's language); in English it
    is the interval's label itself."""
    key, args = method_message(iv)
    return translate(lang or get_language(), key, **args)


def label_name(label: str, lang: str | None = None) -> str | None:
    """The name in ``lang`` of the interval method whose English label is ``label``, found among every
    method's English text (for callers that hold only the label); None when no name gives it."""
    for keys in METHOD_KEYS.values():
        for key in keys:
            args = _args_for(key, label, {})
            if args is not None:
                return translate(lang or get_language(), key, **args)
    return None
