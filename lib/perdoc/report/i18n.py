"""The report's two languages, English and Spanish.

A report is written in one language (params ``report.language``, ``perdoc report --language``).
Three pieces carry it:

* :func:`set_language` / :func:`get_language`: the language of the text being produced; the
  notebooks get it from :func:`perdoc.report.analyse`, which sets it from the study;
* :func:`L`: the text of a sentence in the current language, written side by side in the code
  (``L("Estimate", "Estimación")``), so each Spanish sentence sits next to the English one it
  says the same as, and neither can be forgotten when the other changes;
* :func:`num`, :func:`pct`, :func:`integer`: numbers formatted for the reader through Babel's
  locale data: ``0.1234`` / ``12,345`` / ``95.0%`` in English, ``0,1234`` / ``12 345`` (a narrow
  no-break space between groups of three) / ``95,0 %`` in Spanish.

Markdown cells of the notebooks are written once per language and tagged ``lang-en`` or ``lang-es``;
the report keeps the cells of its language (:func:`keep_cell`). JSON keys and values stay English.
"""

from __future__ import annotations

import math
import re

from ..study.params import LANGUAGES  # declared where the params key report.language is checked

__all__ = ["LANGUAGES", "set_language", "get_language", "L", "num", "pct", "integer", "keep_cell",
           "language_tag", "check_language", "interval", "numbers_in", "signed", "finite_number"]

_BABEL_LOCALE = {"en": "en_US", "es": "es_ES"}
THIN = "\u202f"    # narrow no-break space: the thin space between groups of digits in Spanish
NBSP = "\u00a0"
_current = "en"


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


def L(en: str, es: str) -> str:
    """``en`` or ``es``, whichever is the current language."""
    return es if _current == "es" else en


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
