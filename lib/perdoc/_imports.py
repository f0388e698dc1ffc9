"""Optional imports that perdoc's own processes skip, because they cost seconds and serve nothing here.

jsonschema imports ``rfc3987_syntax`` when it is installed (Jupyter's event schemas pull it in) only
to check strings of the JSON Schema formats ``iri`` and ``iri-reference``, and that package builds an
Earley parser from its grammar at import time: 1.5-3 s in every process that imports nbformat,
nbconvert, papermill or altair, that is twice per report (this process and the kernel). perdoc never
checks those formats, and neither do the packages it calls (they validate without a format checker).
So perdoc's command line and its report kernel mark the module unavailable before anything imports
jsonschema; jsonschema then leaves those two formats unchecked, exactly as when the package is not
installed. A program that imports perdoc as a library is not affected: only :func:`skip_slow_optional`
does this, and only the command line and the report's kernel call it.
"""

from __future__ import annotations

import sys

#: Modules perdoc's processes never import (see the module's text).
SLOW_OPTIONAL = ("rfc3987_syntax",)


def skip_slow_optional() -> None:
    """Mark :data:`SLOW_OPTIONAL` modules unavailable in this process, unless already imported."""
    for name in SLOW_OPTIONAL:
        if name not in sys.modules:
            sys.modules[name] = None   # `import name` now raises ImportError, which jsonschema expects
