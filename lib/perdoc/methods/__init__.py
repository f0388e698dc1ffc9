"""Methods: pure functions of per-document arrays ``n`` (chunks), ``s`` (sum of scores) and ``q`` (sum
of squares), batch-aware over leading axes (one row per simulated sample), with no I/O. In: those
arrays and a level; out: estimates, standard errors, degrees of freedom, intervals and a status code
per row (``OK``, ``FLAT``, ``ZERO_SE``, ...), never an exception for a degenerate sample.

Modules: ``micro`` (ratio estimator, CR1/CR2/CR3, Bell-McCaffrey df), ``macro``, ``bootstrap``,
``wild``, ``bounded`` (Korn-Graubard, Wilson, logit), ``intervals`` (t and transformed intervals, the
frame methods, GREG), ``designs`` (stratified and two-stage), ``survey`` (design-based estimates of a
drawn sample), ``diagnostics``, ``results`` (the result objects), ``_dist`` and ``_quantiles``
(distributions).
"""

from .intervals import *  # noqa: F401,F403  (the interval functions and status codes, as perdoc.methods)
from .intervals import (DESIGN_CONSISTENT, FRAME_METHODS, FRAME_TRENDS, NO_VARIANCE, NOT_IDENTIFIED,  # noqa: F401
                        FrameTotals, MethodResult, binary_by_sums, bounded_by_sums, frame_methods,
                        frame_prediction, greg, percentile, shrink, srs_methods, transformed_methods,
                        wild_result, z_interval)
from .intervals import __all__ as _intervals_all

__all__ = list(_intervals_all) + [
    "DESIGN_CONSISTENT", "FRAME_METHODS", "FRAME_TRENDS", "NO_VARIANCE", "NOT_IDENTIFIED", "FrameTotals",
    "MethodResult", "binary_by_sums", "bounded_by_sums", "frame_methods", "frame_prediction", "greg",
    "percentile", "shrink", "srs_methods", "transformed_methods", "wild_result", "z_interval"]
