"""``format`` values as regular expressions over the decoded string.

They are checked by the regex converter, so JSON escapes inside the string are
handled exactly.  ``date`` checks days per month and leap years; ``time`` follows
RFC 3339 ``full-time`` (seconds up to 60 for leap seconds, ``T``/``Z`` in either case).
"""

from __future__ import annotations

__all__ = ["FORMAT_PATTERNS", "SPEC_FORMATS", "APPROXIMATE_FORMATS"]

_Y = r"\d{4}"
_LEAP_YEAR = r"(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_DATE = (
    rf"(?:{_Y}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)"
    rf"|02-(?:0[1-9]|1\d|2[0-8]))|{_LEAP_YEAR}-02-29)"
)
_TIME = r"(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[zZ]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
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
    "uri": r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s\"<>\\^`{|}]*$",
}
"""Formats the converter enforces, as anchored patterns on the decoded value."""

APPROXIMATE_FORMATS = {
    "email": "dot-atom local part and a hostname domain; quoted local parts and IP "
    "literals are refused",
    "uri": "scheme ':' then characters allowed in URIs; the parts are not checked",
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
