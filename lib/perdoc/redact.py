"""Secrets out of everything perdoc writes or prints.

A connection URL may carry credentials: user and password (``postgres://user:pw@host/db``), secrets
in its query string (``?password=...&token=...&api_key=...``) or, for Spark Connect, parameters after
the path (``sc://host:15002/;token=...;user_id=...``). perdoc never writes them: summary.json, the
report, error.txt, the error page and every message on the terminal show the URL through
:func:`redact_url` (``postgres://***@host/db``, ``?password=***``), and free text (a driver's error
message quoting the URL) through :func:`redact_text`, which also replaces the secrets of every URL
perdoc was given (:func:`remember`) and of ``SPARK_REMOTE`` wherever they appear, even alone.

:func:`escape_controls` writes control characters (C0, DEL, C1, line and paragraph separators and
bidirectional overrides) as ``\\x1b`` / ``\\u202e``, so text from the data (a column name holding
a terminal escape sequence) cannot act on the terminal and a message stays one line.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote

__all__ = ["MASK", "redact_url", "redact_text", "redact_value", "remember", "escape_controls", "safe_line"]

#: What stands in for a secret.
MASK = "***"

#: Parameter names whose values are secrets (matched anywhere in the name, letter case ignored):
#: passwords, tokens, keys, secrets, authentication, credentials, signatures, and who the user is.
_SECRET_NAME = re.compile(r"pass|pwd|token|key|secret|auth|credential|signature|^sig$|cookie|session|private"
                          r"|^user$|^user_?id$|^user_?name$|^uid$", re.IGNORECASE)
#: A URL inside free text: a scheme, ``://``, then anything up to white space, a quote or a bracket.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]*")
#: ``name=value`` with a secret name outside a URL (a DSN such as ``host=h password=pw``).
_PAIR_IN_TEXT = re.compile(
    r"(?P<name>\b[A-Za-z_][A-Za-z0-9_.\-]*)(?P<eq>\s*=\s*)(?P<value>\"[^\"]*\"|'[^']*'|[^\s;&,'\"]+)")
_PAIR_NAMES = re.compile(r"password|passwd|pwd|token|api_?key|secret|access_?key|auth", re.IGNORECASE)

#: Secrets shorter than this are masked inside URLs but not searched for alone in free text (where
#: masking every "x" or "pw" would garble the message; such a secret protects nothing anyway).
MIN_SECRET = 3

_known: set[str] = set()


def _secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(unquote(name).strip()))


def _params(text: str, sep: str) -> str:
    """``a=1&password=x`` with the values of secret names masked (``sep`` the separator)."""
    out = []
    for part in text.split(sep):
        name, eq, _value = part.partition("=")
        out.append(f"{name}={MASK}" if eq and _secret_name(name) else part)
    return sep.join(out)


def _split(url: str):
    """(scheme://, user info or None, the rest) of ``url``; the user info ends at the last ``@`` of
    the authority, or, when a password holds an unescaped ``/``, ``?`` or ``#``, of what follows
    ``user:`` (more is masked rather than less)."""
    m = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*://)(.*)", url, re.DOTALL)
    if m is None:
        return None, None, url
    head, rest = m.groups()
    end = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0] or [len(rest)])
    authority = rest[:end]
    if "@" in authority:
        cut = authority.rfind("@")
        return head, rest[:cut], rest[cut + 1:]
    m2 = re.match(r"[^/?#@:\s]*:\S*@", rest)
    if m2 is not None:
        cut = m2.end() - 1
        return head, rest[:cut], rest[cut + 1:]
    user, colon, after = authority.partition(":")
    if colon and user and not user.startswith("[") and not re.fullmatch(r"\d*(;.*)?", after, re.DOTALL):
        # ``user:password`` cut short before its ``@`` (a message that shortened the URL): not a port
        return head, authority, rest[len(authority):]
    return head, None, rest


def redact_url(url) -> str:
    """``url`` without its secrets: the user info (user and password) becomes ``***``, and so do the
    values of secret parameters in the query string (``password``, ``pwd``, ``token``, ``key``,
    ``api_key``, ``secret``, ``access_token``, ``auth...``, letter case ignored) and in Spark Connect's
    ``;name=value`` parameters (``token``, ``user_id``). Text that is not a URL is returned as it is."""
    if url is None:
        return url
    url = str(url)
    head, userinfo, rest = _split(url)
    if head is None:
        return url
    out = head + (f"{MASK}@" if userinfo is not None else "")
    rest, hash_, fragment = rest.partition("#")
    rest, q, query = rest.partition("?")
    path, semi, params = rest.partition(";")   # Spark Connect: sc://host:port/;token=...;user_id=...
    out += path
    if semi:
        out += semi + _params(params, ";")
    if q:
        out += q + _params(query, "&") if ";" not in query else q + _params(_params(query, "&"), ";")
    if hash_:
        out += hash_ + (_params(fragment, "&") if "=" in fragment else fragment)
    return out


def _secrets_of(url: str) -> list[str]:
    """The secret values inside ``url`` (password, secret parameters), as written and decoded."""
    found = []
    head, userinfo, rest = _split(url)
    if head is None:
        return found
    if userinfo:
        user, colon, password = userinfo.partition(":")
        if colon:
            found += [password, userinfo]
    tail = re.split(r"[?;#]", rest, maxsplit=1)
    if len(tail) > 1:
        for part in re.split(r"[&;]", rest[len(tail[0]) + 1:]):
            name, eq, value = part.partition("=")
            if eq and _secret_name(name):
                found.append(value)
    out = []
    for s in found:
        for v in (s, unquote(s)):
            if len(v) >= MIN_SECRET and v not in out:
                out.append(v)
    return out


def remember(url) -> None:
    """Keep ``url``'s secrets, so :func:`redact_text` masks them wherever they appear (a driver may
    quote the password alone, or the URL cut short)."""
    if url:
        _known.add(str(url))


def _known_urls() -> list[str]:
    urls = set(_known)
    remote = os.environ.get("SPARK_REMOTE")
    if remote:
        urls.add(remote)
    return sorted(urls, key=len, reverse=True)


def redact_text(text, urls=(), *, pairs: bool = True) -> str:
    """Free text (an error message) without secrets: every URL in it through :func:`redact_url`,
    ``password=...``-like pairs masked (unless ``pairs`` is false), and the secrets of ``urls``, of the
    URLs perdoc was given (:func:`remember`) and of ``SPARK_REMOTE`` masked wherever they appear."""
    if text is None:
        return text
    text = str(text)
    known = sorted({str(u) for u in urls if u} | set(_known_urls()), key=len, reverse=True)
    for url in known:
        if url in text:
            text = text.replace(url, redact_url(url))
    text = _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    text = text if not pairs else _PAIR_IN_TEXT.sub(lambda m: (m.group("name") + m.group("eq") + MASK) if (
        _PAIR_NAMES.search(m.group("name")) and not m.group("value").startswith(MASK)) else m.group(0), text)
    secrets = sorted({s for url in known for s in _secrets_of(url) if s != MASK}, key=len, reverse=True)
    for s in secrets:
        text = text.replace(s, MASK)
    return text


def redact_value(value, urls=()):
    """``value`` (a mapping, list or scalar, as summary.json holds them) with the URLs in every text
    through :func:`redact_url` and known secrets masked (:func:`redact_text` without ``pairs``: the
    user's own words, a description say, are kept as written)."""
    if isinstance(value, str):
        return redact_text(value, urls, pairs=False)
    if isinstance(value, dict):
        return {k: redact_value(v, urls) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, urls) for v in value)
    return value


def _control(ch: str) -> bool:
    o = ord(ch)
    return (o < 0x20 or 0x7F <= o <= 0x9F or o in (0x2028, 0x2029)
            or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069 or o == 0x200E or o == 0x200F)


def escape_controls(text) -> str:
    """``text`` with control characters written as escapes (``\\x1b``, ``\\x0a``, ``\\u202e``): one
    line that cannot move the cursor, set the terminal's title, ring its bell or reorder text."""
    text = str(text)
    if not any(_control(c) for c in text):
        return text
    return "".join((f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") if _control(c) else c
                   for c in text)


def safe_line(text, urls=()) -> str:
    """A message for the terminal or a file: secrets masked, control characters escaped."""
    return escape_controls(redact_text(text, urls))
