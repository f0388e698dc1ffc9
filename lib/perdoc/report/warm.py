"""What the report's kernel does at its start-up, before the analysis is ready (see
:mod:`perdoc.report.kernel`): the import guard of :mod:`perdoc._imports`, the modules the notebooks
import, and one tiny chart through the renderer, whose first call starts its JavaScript engine.
Importing this module defines no name a notebook uses and prints nothing."""

from perdoc._imports import skip_slow_optional

skip_slow_optional()

import pandas  # noqa: E402,F401
import vl_convert  # noqa: E402

import perdoc  # noqa: E402,F401
from perdoc.report import charts, notebook  # noqa: E402,F401

vl_convert.vegalite_to_svg({"mark": "point", "data": {"values": [{"x": 1}]},
                            "encoding": {"x": {"field": "x", "type": "quantitative"}}})
