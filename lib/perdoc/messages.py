"""Sentences the library writes for people, with a stable code and their arguments.

The library explains itself in English: why an interval has no bounds (``Interval.reason``), the notes
of an estimate or a diagnostic, the recommendation of a coverage simulation, why a headline interval
was chosen, the kind of metric a loader found, the default caveats of a study. Each such sentence is a
:class:`Message`: a ``str`` (its English text, as the JSON keeps it and as scripts compare it) that also
carries a stable ``code`` and the ``args`` that fill it. A report written in another language finds
the sentence by its code in the message catalogs (``perdoc/locale``, :func:`perdoc.i18n.message_text`)
and fills it with the same arguments, so no text is translated by matching its English words and a
reworded sentence cannot silently fall back to English.

The code is the sentence's key in the catalogs (``reason.flat_rate``); ``make catalogs`` finds every
code written as the first argument of a ``Message(...)`` call. The English text is written here, in
the library, as a :meth:`str.format` template; the catalogs' English text of the code must give the
same sentence (tests/test_catalogs.py, and :func:`perdoc.i18n.message_text` at run time). Arguments
are numbers (formatted by the template's format spec: ``{rate:.6g}``; a report writes them in its
language), plain strings (identifiers, names and the analyst's text, shown as they are) or messages
themselves (a part of the sentence, translated in turn).
"""

from __future__ import annotations

import sys

__all__ = ["Message"]


class Message(str):
    """An English sentence of the library with a stable ``code`` and the ``args`` that fill it.

    ``Message("reason.zero_se", "zero standard error: no interval")`` is the string
    ``"zero standard error: no interval"``; ``Message(code, template, **args)`` is ``template.format(**args)``.
    The code and arguments survive copying and pickling (a report's kernel reads the analysis frozen
    by pickle); operations that make a new string (``+``, ``str()``, f-strings) give a plain ``str``.
    """

    code: str
    args: dict

    def __new__(cls, code: str, template: str, /, **args):
        self = super().__new__(cls, template.format(**args))
        self.code = code
        self.args = args
        return self

    def __reduce__(self):
        return _restore, (str(self), self.code, dict(self.args))


def _restore(text: str, code: str, args: dict) -> Message:
    """A message from its text, code and arguments, as pickled (no template to fill again)."""
    self = str.__new__(Message, text)
    self.code = code
    self.args = args
    return self


def register_yaml() -> None:
    """A message is written to YAML as the plain string it is (``yaml.safe_dump`` of a params dict
    that holds a default caveat, for one), never refused as an unknown object. Done when perdoc is
    imported after PyYAML, and by every perdoc module that imports PyYAML itself (the command line's
    start-up does not pay for PyYAML's import)."""
    yaml = sys.modules.get("yaml")
    if yaml is None:
        return
    for dumper in (yaml.SafeDumper, yaml.Dumper):
        if Message not in dumper.yaml_representers:
            dumper.add_representer(Message, lambda d, m: d.represent_str(str(m)))


class _AfterYaml:
    """Registers the representer when PyYAML is first imported after perdoc (a one-shot finder that
    wraps PyYAML's own loader), so that ``yaml.safe_dump`` of a message works whichever comes first."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "yaml":
            return None
        _forget_finder()
        import importlib.util
        spec = importlib.util.find_spec("yaml")
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


class _RegisteringLoader:
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self.loader
        self.loader.exec_module(module)
        register_yaml()

    def __getattr__(self, name):
        return getattr(self.loader, name)


def _forget_finder() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_AfterYaml"]


if "yaml" in sys.modules:
    register_yaml()
elif not any(type(f).__name__ == "_AfterYaml" for f in sys.meta_path):
    sys.meta_path.insert(0, _AfterYaml())
