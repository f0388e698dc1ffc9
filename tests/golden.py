"""Comparing perdoc's JSON output with golden values from R (shared by the oracle tests)."""

from __future__ import annotations

import math

import numpy as np

RTOL = 1e-8          # relative agreement with R
ATOL_AT_ZERO = 1e-12  # absolute agreement where R gives exactly zero


def walk(d, dotted: str):
    """The value at a dotted key path such as ``micro.cr2.ci``; KeyError names the missing part."""
    cur = d
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            raise KeyError(part)
        cur = cur[part]
    return cur


def close(got, want) -> bool:
    """perdoc's value ``got`` agrees with R's ``want`` (None: R gave no finite value)."""
    if isinstance(want, bool):
        return got is want or (isinstance(got, (bool, np.bool_)) and bool(got) == want)
    if want is None:  # R produced a non-finite value: perdoc must report no value
        return got is None or (isinstance(got, float) and math.isnan(got))
    if got is None or isinstance(got, (bool, str)):
        return False
    got = float(got)
    if not math.isfinite(got):
        return False
    if want == 0:
        return abs(got) <= ATOL_AT_ZERO
    return abs(got - want) <= RTOL * abs(want)


def rel(got, want) -> float:
    """Relative difference, for messages (NaN when undefined)."""
    try:
        return abs(float(got) - want) / abs(want) if want else float("nan")
    except (TypeError, ValueError):
        return float("nan")
