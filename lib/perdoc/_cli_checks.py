"""Checks the command modules share: an output path against the inputs, and flags a mode passes over."""

from __future__ import annotations

import os

from .errors import ParameterError


def same_file(a, b) -> bool:
    """Whether two paths name one file (the same path when either is not there)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, TypeError, ValueError):
        return os.path.abspath(str(a)) == os.path.abspath(str(b))


def refuse_overwriting_inputs(flag: str, out, *inputs) -> None:
    """Refuse an output path that is one of the command's input files (writing it would destroy the
    data it was computed from); inputs that are None are passed over."""
    if out is None or str(out) == "-" or not os.path.isfile(out):
        return
    for given in inputs:
        if given is not None and same_file(given, out):
            raise ParameterError(f"{flag} {out} is also an input ({given}): writing it would destroy that data; "
                                 "give another path")


def refuse_flags(given, rule: str) -> None:
    """Refuse the flags of ``given`` (``(flag, value)`` pairs) whose value is not None or False, in one
    line: ``"--a, --b do not go with ..."`` with ``rule`` (what follows "does not" / "do not")."""
    flags = [flag for flag, v in given if v is not None and v is not False]
    if flags:
        raise ParameterError(f"{', '.join(flags)} {'does' if len(flags) == 1 else 'do'} not {rule}")
