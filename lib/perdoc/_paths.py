"""Paths of a command's outputs checked against its inputs."""

from __future__ import annotations

import os

from .errors import ParameterError


def refuse_overwriting_inputs(flag: str, out, *inputs) -> None:
    """Refuse an output path that is one of the command's input files (writing it would destroy the
    data it was computed from); inputs that are None, not files or not there are passed over."""
    if out is None or str(out) == "-" or not os.path.isfile(out):
        return
    for given in inputs:
        if given is None:
            continue
        try:
            same = os.path.samefile(given, out)
        except (OSError, TypeError, ValueError):
            continue
        if same:
            raise ParameterError(f"{flag} {out} is also an input ({given}): writing it would destroy that data; "
                                 "give another path")
