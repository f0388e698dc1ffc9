"""The report's two languages, English and Spanish.

A report is written in one language (params ``report.language``, ``perdoc report --language``).
These pieces carry it:

* :func:`set_language` / :func:`get_language`: the language of the text being produced; the
  notebooks get it from :func:`perdoc.report.analyse`, which sets it from the study;
* :func:`tr`: the text of a message in the current language, found by a stable key and filled with
  named arguments (``tr("box.sample_text", K="20", N="1,234", design=...)``); :func:`translate`
  does the same for a language given explicitly. The texts live in gettext message catalogs under
  ``perdoc/locale``: ``perdoc.pot`` lists every key (extracted by Babel from the library's code and
  the report notebooks' code cells: ``tr`` and ``translate`` calls, and ``N_`` marks for keys kept
  in tables), ``en/LC_MESSAGES/perdoc.po`` holds the English text of each key and
  ``es/LC_MESSAGES/perdoc.po`` the Spanish one. ``make catalogs``
  extracts the keys, updates both ``.po`` files and compiles them to the ``perdoc.mo`` files read
  here with the standard library's :mod:`gettext` (so Babel is not needed to read them). A text is
  a :meth:`str.format` template with named placeholders (``{K}``, ``{level}``, ``{cov:.3f}``); the
  conversion ``!c`` writes the argument with its first letter in upper case (``{name!c}``). A key
  missing from a catalog raises :class:`MissingMessage`: no text falls back to another language.
  tests/test_catalogs.py checks that every key in the code has a non-empty text in both catalogs,
  with the same placeholders, and that the committed ``.mo`` files match the ``.po`` files;
* :func:`message_text`: a sentence of the library itself (why an interval is missing, a note, a
  recommendation: a :class:`perdoc.messages.Message`, English text with a stable code and arguments) in
  the report's language, found by its code, never by its English words;
* :func:`num`, :func:`pct`, :func:`integer`: numbers formatted for the reader through Babel's
  locale data: ``0.1234`` / ``12,345`` / ``95.0%`` in English, ``0,1234`` / ``12 345`` (a narrow
  no-break space between groups of three) / ``95,0 %`` in Spanish.

Markdown cells of the notebooks are written once per language and tagged ``lang-en`` or ``lang-es``;
the report keeps the cells of its language (:func:`keep_cell`). JSON keys and values stay English.
The names of the interval methods in the report's language come from :mod:`perdoc.report._spanish`.
"""

from __future__ import annotations

import functools
import gettext
import math
import numbers
import re
import string
from pathlib import Path

from ..study.params import LANGUAGES  # declared where the params key report.language is checked

__all__ = ["LANGUAGES", "set_language", "get_language", "tr", "translate", "N_", "catalog", "MissingMessage",
           "message_text", "UnknownMessage",
           "LOCALE_DIR", "DOMAIN", "num", "pct", "integer", "keep_cell",
           "language_tag", "check_language", "interval", "numbers_in", "signed", "finite_number"]

_BABEL_LOCALE = {"en": "en_US", "es": "es_ES"}
THIN = "\u202f"    # narrow no-break space: the thin space between groups of digits in Spanish
NBSP = "\u00a0"
_current = "en"
#: Where the message catalogs are: ``<lang>/LC_MESSAGES/perdoc.po`` and ``.mo``, and ``perdoc.pot``.
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
DOMAIN = "perdoc"


def check_language(lang, label: str = "report.language") -> str:
    """``lang`` if it is a language perdoc writes, else a one-line error naming ``label``."""
    from ..errors import PerdocError
    if lang not in LANGUAGES:
        raise PerdocError(f"{label} must be one of {', '.join(LANGUAGES)} (got {lang!r})")
    return lang


def set_language(lang: str) -> None:
    """Set the language of the text produced from now on (``en`` or ``es``)."""
    global _current
    _current = check_language(lang)


def get_language() -> str:
    return _current


class MissingMessage(LookupError):
    """A message key with no text in a language's catalog."""


class _Missing(gettext.NullTranslations):
    """The fallback of every catalog: a key it does not hold is an error, never shown as it is."""

    def __init__(self, lang: str):
        super().__init__()
        self.lang = lang

    def gettext(self, message):
        raise MissingMessage(f"message {message!r} has no text in the {self.lang!r} catalog "
                             f"({LOCALE_DIR}); add it to the .po files and run make catalogs")


@functools.lru_cache(maxsize=None)
def catalog(lang: str) -> gettext.GNUTranslations:
    """The compiled message catalog of a language (``perdoc/locale/<lang>/LC_MESSAGES/perdoc.mo``)."""
    found = gettext.translation(DOMAIN, LOCALE_DIR, languages=[check_language(lang, "language")])
    found.add_fallback(_Missing(lang))
    return found


class _Formatter(string.Formatter):
    """:meth:`str.format` with one more conversion, ``!c``: the first letter in upper case; a number
    argument is formatted by its format spec (``{rate:.4g}``) and written in the language's form."""

    def __init__(self, lang: str):
        super().__init__()
        self.lang = lang

    def convert_field(self, value, conversion):
        if conversion == "c":
            text = str(value)
            return text[:1].upper() + text[1:]
        return super().convert_field(value, conversion)

    def format_field(self, value, format_spec):
        text = super().format_field(value, format_spec)
        if self.lang == "es" and isinstance(value, numbers.Real) and not isinstance(value, bool):
            return _spanish(text)
        return text


_FORMATTERS = {lang: _Formatter(lang) for lang in LANGUAGES}


def translate(lang: str, key: str, /, **args) -> str:
    """The text of message ``key`` in language ``lang``, its ``{name}`` placeholders filled from ``args``."""
    text = catalog(lang).gettext(key)
    return _FORMATTERS[lang].vformat(text, (), args)


def tr(key: str, /, **args) -> str:
    """The text of message ``key`` in the current language, filled from ``args`` (:func:`translate`)."""
    return translate(_current, key, **args)


def N_(key: str) -> str:
    """Mark ``key`` as a message key for extraction, where a table keeps it; returns it unchanged."""
    return key


class UnknownMessage(LookupError):
    """A sentence of the library with no message code, or whose English text is no longer the one the
    catalogs give for its code (a reworded sentence: update the catalogs)."""


def _filled(message, lang: str) -> str:
    """A :class:`~perdoc.messages.Message` in ``lang``, its message arguments filled in ``lang`` too."""
    from ..messages import Message
    args = {name: _filled(v, lang) if isinstance(v, Message) else v for name, v in message.args.items()}
    return translate(lang, message.code, **args)


def message_text(message, lang: str | None = None) -> str:
    """A sentence of the library (:class:`perdoc.messages.Message`: a reason, a note, a recommendation)
    in the report's language, found in the catalogs by its code and filled with its arguments.
    :class:`UnknownMessage` when it is not a message (a plain string has no code to find it by) or when
    the catalogs' English text of its code is not its English text: no sentence falls back to English."""
    from ..messages import Message
    if not isinstance(message, Message):
        raise UnknownMessage(f"{message!r} is a plain string, not a perdoc.messages.Message: the library must "
                             "give it a code (and the catalogs its text) before a report can show it")
    try:
        english = _filled(message, "en")
    except MissingMessage as e:
        raise UnknownMessage(f"message code {message.code!r} of {str(message)!r} is not in the catalogs: add it "
                             "to both .po files and run make catalogs") from e
    if english != message:
        raise UnknownMessage(f"the English text of message {message.code!r} in the catalogs, {english!r}, is not "
                             f"the library's, {str(message)!r}: update the .po files")
    return english if (lang or _current) == "en" else _filled(message, lang or _current)


def extract_notebook(fileobj, keywords, comment_tags, options):
    """Babel's extraction method for the report notebooks (``make catalogs``, ``[[tool.babel.mappings]]``
    in pyproject.toml): the message keys of the ``tr`` calls in their code cells, as in a Python file."""
    import io
    import json

    from babel.messages.extract import extract_python
    cells = json.load(fileobj).get("cells", [])
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source") or ())
        yield from extract_python(io.BytesIO(source.encode("utf-8")), keywords, comment_tags, options)


def language_tag(lang: str | None = None) -> str:
    """The notebook cell tag of a language's Markdown cells: ``lang-en`` or ``lang-es``."""
    return f"lang-{lang or _current}"


def keep_cell(tags, lang: str | None = None) -> bool:
    """Whether a cell with these tags belongs in a report written in ``lang``: cells tagged with
    another language's ``lang-..`` tag are left out; untagged cells are kept."""
    lang = lang or _current
    langs = [t[5:] for t in (tags or ()) if isinstance(t, str) and t.startswith("lang-")]
    return not langs or lang in langs


def finite_number(x):
    """``x`` as a finite float, or None when it is missing, a boolean, not a number, NaN or infinite."""
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _spanish(text: str) -> str:
    """A number written by Python in English form turned into Spanish form, with Babel's symbols."""
    from babel.numbers import get_decimal_symbol, get_minus_sign_symbol
    dec = get_decimal_symbol(_BABEL_LOCALE["es"])
    minus = get_minus_sign_symbol(_BABEL_LOCALE["es"])
    mant, exp = (text.split("e", 1) + [None])[:2] if "e" in text else (text, None)
    pct_sign = mant.endswith("%")
    if pct_sign:
        mant = mant[:-1]
    sign = ""
    if mant[:1] in "+-":
        sign, mant = ("+" if mant[0] == "+" else minus), mant[1:]
    whole, _, frac = mant.partition(".")
    whole = whole.replace(",", "")
    if whole.isdigit() and len(whole) > 4:   # Spanish groups digits only from five on (RAE; CLDR es)
        head = len(whole) % 3 or 3
        whole = whole[:head] + "".join(THIN + whole[i:i + 3] for i in range(head, len(whole), 3))
    out = sign + whole + (dec + frac if frac else "")
    if exp is not None:
        out += "e" + exp
    if pct_sign:
        out += NBSP + "%"
    return out


def num(x, spec: str = ".4g", none: str = "—", lang: str | None = None) -> str:
    """A number in the reader's language. ``spec`` is a Python format spec (``.4g``, ``.3f``,
    ``,.0f``, ``.1%``); the digits shown are the same in both languages, only the symbols differ."""
    v = finite_number(x)
    if v is None:
        return str(x) if isinstance(x, (bool, str)) else none
    text = format(v, spec)
    return _spanish(text) if (lang or _current) == "es" else text


def pct(x, digits: int = 1, none: str = "—", lang: str | None = None) -> str:
    """A share as a percentage: ``95.0%`` / ``95,0 %``."""
    return num(x, f".{digits}%", none=none, lang=lang)


def integer(n, none: str = "—", lang: str | None = None) -> str:
    """A count with grouped thousands: ``12,345`` / ``12 345``."""
    v = finite_number(n)
    if v is None:
        return none
    return num(v, ",.0f", lang=lang)


_NUMBER = re.compile(r"(?<![\w.,])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?%?(?![\w])")


def numbers_in(text: str, lang: str | None = None) -> str:
    """Every plain English-form number inside ``text`` rewritten for ``lang`` (for strings built
    before the language was known, such as a method's label). Leaves English text unchanged."""
    if (lang or _current) != "es":
        return text
    return _NUMBER.sub(lambda m: _spanish(m.group(0)), text)


def signed(x, spec: str = ".4f", none: str = "—", lang: str | None = None) -> str:
    """A difference with its sign always shown: ``+0.0084`` / ``+0,0084``."""
    return num(x, "+" + spec.lstrip("+"), none=none, lang=lang)


def interval(low, high, spec: str = ".4f", lang: str | None = None) -> str:
    """An interval ``[a, b]``; in Spanish ``[a; b]``, since the comma is the decimal sign there."""
    sep = "; " if (lang or _current) == "es" else ", "
    return f"[{num(low, spec, lang=lang)}{sep}{num(high, spec, lang=lang)}]"
