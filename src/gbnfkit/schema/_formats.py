"""``format`` values as regular expressions over the decoded string.

They are checked by the regex converter, so JSON escapes inside the string are
handled exactly.  ``date`` checks days per month and leap years; ``time`` follows
RFC 3339 ``full-time`` (``T``/``Z`` in either case; a leap second only at 23:59 UTC
written in UTC: ``23:59:60Z``, ``23:59:60-00:00``).
"""

from __future__ import annotations

import functools

from gbnfkit.schema._regex_parse import Branch, parse_regex

__all__ = ["FORMAT_PATTERNS", "SPEC_FORMATS", "APPROXIMATE_FORMATS", "date_pattern"]

_Y = r"\d{4}"
_LEAP_YEAR = r"(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"


def date_pattern(year: str, leap_year: str) -> str:
    """The dates ``YYYY-MM-DD`` of the years ``year`` (a regex), days per month, February
    29th in the years ``leap_year`` only."""
    return (
        rf"(?:{year}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)"
        rf"|02-(?:0[1-9]|1\d|2[0-8]))|{leap_year}-02-29)"
    )


_DATE = date_pattern(_Y, _LEAP_YEAR)
# a leap second (:60) only where the UTC time is 23:59 (RFC 3339 5.7; the JSON Schema test
# suite), and only written so (23:59:60 with Z or +-00:00): a local time with its offset
# (15:59:60-08:00) would need each of the 1,440 local times paired with its offset, whose
# 24 whole-hour ones alone tripled the grammar of every date-time field (4.6 to 13.5 kB)
_TIME = (r"(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:[zZ]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
         r"|23:59:60(?:\.\d+)?(?:[zZ]|[+-]00:00))")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H = r"[0-9a-fA-F]{1,4}"
_IPV6 = (
    rf"(?:(?:{_H}:){{7}}{_H}|(?:{_H}:){{1,7}}:|(?:{_H}:){{1,6}}:{_H}|(?:{_H}:){{1,5}}(?::{_H}){{1,2}}"
    rf"|(?:{_H}:){{1,4}}(?::{_H}){{1,3}}|(?:{_H}:){{1,3}}(?::{_H}){{1,4}}"
    rf"|(?:{_H}:){{1,2}}(?::{_H}){{1,5}}|{_H}:(?::{_H}){{1,6}}|:(?:(?::{_H}){{1,7}}|:)"
    rf"|(?:{_H}:){{6}}{_IPV4}|(?:{_H}:){{1,5}}:{_IPV4}|(?:{_H}:){{1,4}}:(?:{_H}:){{0,1}}{_IPV4}"
    rf"|(?:{_H}:){{1,3}}:(?:{_H}:){{0,2}}{_IPV4}|(?:{_H}:){{1,2}}:(?:{_H}:){{0,3}}{_IPV4}"
    rf"|{_H}::(?:{_H}:){{0,4}}{_IPV4}|::(?:{_H}:){{0,5}}{_IPV4})"
)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = rf"{_LABEL}(?:\.{_LABEL})*"
_HEX = "[0-9a-fA-F]"

# duration: RFC 3339 Appendix A (no fractions, weeks alone), designators upper case
_DUR_TIME = r"T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S)"
_DURATION = (
    rf"P(?:(?:\d+D|\d+M(?:\d+D)?|\d+Y(?:\d+M(?:\d+D)?)?)(?:{_DUR_TIME})?|{_DUR_TIME}|\d+W)"
)


def _rfc3986(unreserved: str, private: str) -> tuple[str, str]:
    """RFC 3986's ``URI`` and ``relative-ref`` (RFC 3987's ``IRI`` and ``irelative-ref``
    when ``unreserved`` adds the ``ucschar`` ranges and ``private`` the ``iprivate`` ones),
    written from the ABNF of its Appendix A."""
    pct = f"%{_HEX}{{2}}"
    sub = "!$&'()*+,;="
    # '-' first in each class, then the rest with no ranges but the explicit ones
    base = f"-._~A-Za-z0-9{unreserved}"
    pchar = f"(?:[{base}{sub}:@]|{pct})"
    h16 = f"{_H}"
    ls32 = f"(?:{h16}:{h16}|{_IPV4})"
    ipv6 = "|".join([
        f"(?:{h16}:){{6}}{ls32}",
        f"::(?:{h16}:){{5}}{ls32}",
        f"(?:{h16})?::(?:{h16}:){{4}}{ls32}",
        f"(?:(?:{h16}:){{0,1}}{h16})?::(?:{h16}:){{3}}{ls32}",
        f"(?:(?:{h16}:){{0,2}}{h16})?::(?:{h16}:){{2}}{ls32}",
        f"(?:(?:{h16}:){{0,3}}{h16})?::{h16}:{ls32}",
        f"(?:(?:{h16}:){{0,4}}{h16})?::{ls32}",
        f"(?:(?:{h16}:){{0,5}}{h16})?::{h16}",
        f"(?:(?:{h16}:){{0,6}}{h16})?::",
    ])
    ip_literal = rf"\[(?:{ipv6}|[vV]{_HEX}+\.[-._~A-Za-z0-9{sub}:]+)\]"
    reg_name = f"(?:[{base}{sub}]|{pct})*"
    userinfo = f"(?:[{base}{sub}:]|{pct})*"
    authority = f"(?:{userinfo}@)?(?:{ip_literal}|{_IPV4}|{reg_name})(?::\\d*)?"
    segment = f"{pchar}*"
    abempty = f"(?:/{segment})*"
    absolute = f"/(?:{pchar}+{abempty})?"
    rootless = f"{pchar}+{abempty}"
    noscheme = f"(?:[{base}{sub}@]|{pct})+{abempty}"
    query = f"(?:\\?(?:{pchar}|[/?{private}])*)?"
    fragment = f"(?:#(?:{pchar}|[/?])*)?"
    tail = f"{query}{fragment}"
    uri = f"[A-Za-z][A-Za-z0-9+.-]*:(?://{authority}{abempty}|{absolute}|{rootless}|){tail}"
    relative = f"(?://{authority}{abempty}|{absolute}|{noscheme}|){tail}"
    return uri, relative


def _astral(*bounds: tuple[int, int]) -> str:
    return "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in bounds)


_URI, _RELATIVE_REF = _rfc3986("", "")
_UCSCHAR = "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef" + _astral(
    *((plane << 16, (plane << 16) + 0xFFFD) for plane in range(1, 14)), (0xE1000, 0xEFFFD)
)
_IPRIVATE = "\ue000-\uf8ff" + _astral((0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))
_IRI, _IRELATIVE_REF = _rfc3986(_UCSCHAR, _IPRIVATE)
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"

FORMAT_PATTERNS: dict[str, str] = {
    "date": rf"^{_DATE}$",
    "time": rf"^{_TIME}$",
    "date-time": rf"^{_DATE}[tT]{_TIME}$",
    "uuid": rf"^{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}$",
    "ipv4": rf"^{_IPV4}$",
    "ipv6": rf"^{_IPV6}$",
    "hostname": rf"^{_HOSTNAME}$",
    "email": rf"^{_ATOM}(?:\.{_ATOM})*@{_HOSTNAME}$",
    "uri": f"^(?:{_URI})$",
    "uri-reference": f"^(?:{_URI}|{_RELATIVE_REF})$",
    "iri": f"^(?:{_IRI})$",
    "duration": rf"^{_DURATION}$",
}
"""Formats the converter enforces, as anchored patterns on the decoded value."""

_FORMAT_TEXTS = frozenset(FORMAT_PATTERNS.values())


@functools.cache
def format_branches(pattern: str) -> tuple[Branch, ...]:
    """The parse of ``pattern``, one of :data:`FORMAT_PATTERNS`' patterns: constants of
    this module, parsed once per process at their first use (as ``_strings``' static
    spellings are built), not per conversion (uri's takes ~20 ms, a dev schema's
    conversion 2 ms); at most one entry per format.  The branches are frozen, so every
    conversion may share them.  Any other text is refused (``ValueError``)."""
    if pattern not in _FORMAT_TEXTS:
        raise ValueError("not one of FORMAT_PATTERNS' patterns")
    return tuple(parse_regex(pattern))


APPROXIMATE_FORMATS = {
    "email": "dot-atom local part and a hostname domain; quoted local parts and IP "
    "literals are refused",
    "hostname": "labels of 1-63 characters; the 253-character total is not checked",
}

SPEC_FORMATS = frozenset(
    {
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname",
        "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
        "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
    }
)
"""Formats JSON Schema defines: the ones not in FORMAT_PATTERNS are 'unsupported'.
Other format names are annotations that validators ignore, and so does the converter."""
