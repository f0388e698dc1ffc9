"""Exceptions raised by perdoc.

Structural problems with the input (a missing column, one document, a level outside (0, 1)) raise
one of these; each message is one line that names the column or parameter and the rule it broke.
Statistical degeneracy (zero variance, every bootstrap replicate degenerate) never raises: it is
reported as an interval that is not available, with the reason (see :mod:`perdoc.results`).
"""

from __future__ import annotations

__all__ = ["PerdocError", "InputError", "DataFileError", "ColumnError", "ParameterError"]


class PerdocError(ValueError):
    """Base class of every error perdoc raises on purpose. ``str(err)`` is one line."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class InputError(PerdocError):
    """The data are unusable as given (empty, too few documents, bad values)."""


class DataFileError(InputError):
    """A data file is missing, unreadable, corrupt or of an unknown format."""


class ColumnError(InputError):
    """A named column does not exist in the data."""


class ParameterError(PerdocError):
    """A parameter (level, replicates, population size, ...) breaks its rule."""
