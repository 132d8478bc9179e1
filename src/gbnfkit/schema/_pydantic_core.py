"""A JSON schema generator for Pydantic v2 that reads each field's core schema, where the
constraints Pydantic checks live, and writes the JSON schema of what it validates.

Pydantic's own ``GenerateJsonSchema`` writes what JSON Schema can say of a type and drops
the rest: the schemes and host of a URL, the time zone of a ``datetime``, the clock of a
``PastDate``, the finiteness of a float, the key type of a ``dict``, the encoding of
``bytes``, the digits of a ``Decimal``, the whitespace a ``str`` is stripped of. Each
method below narrows its type's schema to texts ``model_validate_json`` accepts, or marks
it refused (:data:`REFUSED`, with the reason), so that :mod:`gbnfkit.schema._pydantic`
raises a SchemaError naming the field instead of a grammar that accepts what Pydantic
refuses.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from typing import Any

from gbnfkit.schema._formats import FORMAT_PATTERNS, date_pattern

__all__ = ["REFUSED", "generator"]

REFUSED = "x-gbnfkit-refused"
"""The key of a node whose type the grammar cannot hold to what Pydantic checks: its value
says why (the field is named where the node is found)."""

_LABEL = "[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
_HOST = f"(?:{_LABEL}\\.)*[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*|{FORMAT_PATTERNS['ipv4'][1:-1]}"
_URL_CHARS = "[-A-Za-z0-9._~!$&'()*+,;=:@%]"
_PORT = "(?::[0-9]{1,4})?"
_URL_TAIL = (
    f"(?:/(?:{_URL_CHARS}|/)*)?(?:\\?(?:{_URL_CHARS}|[/?])*)?"
    f"(?:#(?:{_URL_CHARS}|[/?])*)?$"
)
"""A URL as Pydantic (the WHATWG parser of Rust's ``url``) reads it whatever its scheme:
a host of DNS labels without ``--`` (no ``xn--`` label, which must be valid punycode),
the last starting with a letter (a number there makes it an IPv4 address, which must be
one), or a dotted IPv4 address; a port of at most 4 digits (at most 65535), but for
``file`` URLs, whose host takes none; a path, query
and fragment of characters no parser rewrites. Narrower than Pydantic (no user, IPv6 host,
or scheme without ``//``), which accepts all of these."""

_URL_RUN = "[-A-Za-z0-9._~!$&'()*+,;=:@%/?#]"
"""The characters of a path, query and fragment as one run: Pydantic reads any order of
them (a ``?`` or ``#`` in a fragment, a ``#`` in a query starting the fragment)."""

_BOUNDED_LABEL = "[A-Za-z0-9]{1,20}(?:-[A-Za-z0-9]{1,20}){0,2}"
_BOUNDED_HOST = (
    f"(?:{_BOUNDED_LABEL}\\.){{0,4}}[A-Za-z][A-Za-z0-9]{{0,19}}(?:-[A-Za-z0-9]{{1,20}}){{0,2}}"
    f"|{FORMAT_PATTERNS['ipv4'][1:-1]}"
)
_BOUNDED_HOST_LENGTH = 4 * 63 + 62
"""A host as :data:`_HOST` takes it, each part bounded: at most 5 labels of at most 62
characters (3 runs of 20 joined by hyphens), so at most 314 characters."""

_NAIVE_DATETIME = (
    f"^{FORMAT_PATTERNS['date'][1:-1]}[tT](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    "(?:\\.[0-9]{1,6})?$"
)
"""A ``datetime`` without an offset (``NaiveDatetime``), seconds to 59 and at most 6
fraction digits; year 0000 is kept out beside it."""

_FINITE = Decimal("1e38")
"""The bound put on a float that must be finite (``allow_inf_nan=False``, ``FiniteFloat``,
a ``Decimal`` read from a number): a bounded number is written without an exponent, and
every number within it is finite as a float."""

_FRACTION_PLACES = 25
"""A float bound moved to the next float is rounded outwards to this many decimal places,
so that the converter can write it (``5e-324`` past ``0`` would need 324 digits)."""

_BASE64_JSON_BYTES = "^(?:{}|{})$".format(*(
    f"(?:[{a}]{{4}})*(?:[{a}][AQgw](?:==)?|[{a}]{{2}}[AEIMQUYcgkosw048]=?)?"
    for a in ("A-Za-z0-9+/", "A-Za-z0-9_-")))
"""``val_json_bytes='base64'``: Rust's ``base64``, the standard alphabet or the URL-safe one
(tried in turn, so not both in one text), padding optional, the bits past the last byte
zero."""

YEAR_1_ON = "(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
"""The years Python's ``datetime`` takes (RFC 3339 also has 0000)."""

_INT_KEY = "^-?(?:0|[1-9][0-9]*)$"
_FLOAT_KEY = "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$"
_LEAP_YEAR_1_ON = (
    "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
)
_DATE_KEY = f"^{date_pattern(YEAR_1_ON, _LEAP_YEAR_1_ON)}$"
_KEY_PATTERNS = {"int": _INT_KEY, "float": _FLOAT_KEY, "bool": "^(?:true|false)$",
                 "uuid": FORMAT_PATTERNS["uuid"], "date": _DATE_KEY}
"""The keys of a ``dict`` with int, float, bool, UUID or date keys, as Pydantic parses
them from a string (narrower: it also takes ``+1``, `` 1``, ``1_0``, ``yes``, a UUID
without hyphens); a date as the ``date`` format, from year 1 (one pattern, where a
value has the format and a pattern beside it)."""

_COMPLEX = (
    "^[-+]?(?:[0-9]+(?:\\.[0-9]+)?(?:[-+][0-9]+(?:\\.[0-9]+)?j)?|[0-9]+(?:\\.[0-9]+)?j)$"
)

_WHITESPACE = "\\s\\x1c-\\x1f\\x85\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_UNSTRIPPED = f"^(?:[^{_WHITESPACE}](?:[\\s\\S]*[^{_WHITESPACE}])?)?$"
"""A string that ``strip_whitespace`` leaves as it is (neither Python's nor Rust's
whitespace at either end), so that lengths and patterns apply to the text as written."""


def generator() -> type[Any]:
    """The ``GenerateJsonSchema`` subclass (imported here: Pydantic is an optional
    dependency)."""
    from pydantic.json_schema import (  # type: ignore[import-not-found,unused-ignore]
        GenerateJsonSchema,
    )

    class ValidatedJsonSchema(GenerateJsonSchema):  # type: ignore[misc,unused-ignore]
        """Pydantic's generator, each method narrowed as the module's doc says."""

        def url_schema(self, schema: Any) -> Any:
            return _url(schema, super().url_schema(schema))

        def multi_host_url_schema(self, schema: Any) -> Any:
            return _refused("a multi-host URL (a DSN) is checked by Pydantic's parser of its "
                            "hosts, which the grammar does not follow")

        def datetime_schema(self, schema: Any) -> Any:
            out = super().datetime_schema(schema)
            if schema.get("now_op") is not None:
                return _clock(schema, "datetime")
            tz = schema.get("tz_constraint")
            if tz == "naive":
                return {"type": "string", "pattern": _NAIVE_DATETIME,
                        "allOf": [{"pattern": f"^{YEAR_1_ON}-"}]}
            if tz is not None and tz != "aware":
                return _refused(f"a datetime with the fixed offset {tz} s")
            return out

        def date_schema(self, schema: Any) -> Any:
            out = super().date_schema(schema)
            return _clock(schema, "date") if schema.get("now_op") is not None else out

        def float_schema(self, schema: Any) -> Any:
            out = super().float_schema(schema)
            finite = schema.get("allow_inf_nan", self._config.config_dict.get(
                "allow_inf_nan", True)) is False
            return _float_bounds(out, finite, schema)

        def decimal_schema(self, schema: Any) -> Any:
            return _decimal(schema)

        def dict_schema(self, schema: Any) -> Any:
            out = super().dict_schema(schema)
            keys = schema.get("keys_schema", {})
            if keys.get("type") in _KEY_PATTERNS and isinstance(out, dict):
                if set(keys) - {"type", "strict", "metadata"}:
                    return _refused(f"a dict whose {keys['type']} keys have constraints")
                out.pop("propertyNames", None)  # a format, which keys do not take here
                values = out.pop("additionalProperties", True)
                out["patternProperties"] = {_KEY_PATTERNS[keys["type"]]: values}
            if isinstance(out, dict) and "patternProperties" in out:
                out.setdefault("additionalProperties", False)  # Pydantic checks every key
            return out

        def set_schema(self, schema: Any) -> Any:
            return _duplicates(super().set_schema(schema))

        def frozenset_schema(self, schema: Any) -> Any:
            return _duplicates(super().frozenset_schema(schema))

        def bytes_schema(self, schema: Any) -> Any:
            out = super().bytes_schema(schema)
            mode = self._config.config_dict.get("val_json_bytes", "utf8")
            lengths = "min_length" in schema or "max_length" in schema
            if mode == "hex":
                lo = schema.get("min_length", 0)
                hi = schema.get("max_length")
                count = f"{{{lo},{'' if hi is None else hi}}}"
                return {"type": "string", "pattern": f"^(?:[0-9a-fA-F]{{2}}){count}$"}
            if mode == "base64":
                if lengths:
                    return _refused("a bytes field read from base64 with a length limit")
                return {"type": "string", "pattern": _BASE64_JSON_BYTES}
            out["format"] = "binary"  # read as UTF-8 text, whatever it is written as
            return out

        def json_schema(self, schema: Any) -> Any:
            return _refused("a Json field holds JSON text inside a string, which the grammar "
                            "does not check against its schema")

        def complex_schema(self, schema: Any) -> Any:
            return {"type": "string", "pattern": _COMPLEX}

        def str_schema(self, schema: Any) -> Any:
            out = super().str_schema(schema)
            config = self._config.config_dict
            strip = schema.get("strip_whitespace", config.get("str_strip_whitespace"))
            case = schema.get("to_lower", config.get("str_to_lower")) or schema.get(
                "to_upper", config.get("str_to_upper"))
            if case and "pattern" in out:
                return _refused("a str changed to lower or upper case before its pattern "
                                "is checked")
            if strip and ("pattern" in out or "minLength" in out):
                out.setdefault("allOf", []).append({"pattern": _UNSTRIPPED})
            return out

    return ValidatedJsonSchema


def _refused(reason: str) -> dict[str, Any]:
    return {REFUSED: reason}


def _clock(schema: Any, kind: str) -> dict[str, Any]:
    """``PastDate`` and its kind: valid or not by the clock at validation time."""
    when = "past" if schema.get("now_op") == "past" else "future"
    return _refused(f"a {when} {kind} (PastDate, FutureDatetime...) is valid or not by the "
                    "clock when it is validated, which a grammar cannot follow; use a plain "
                    f"{kind} field")


def _url(schema: Any, out: Any) -> Any:
    """A URL of the allowed schemes (any scheme when none is given), as :data:`_URL_TAIL`
    says; the length limit Pydantic checks on the text as given, by bounding each part
    (the scheme, :data:`_BOUNDED_HOST`, the rest one run) so that the whole stays within
    it, or, for a limit too small for that, as ``maxLength`` (a count over the pattern's
    automaton, which the converter's limits allow up to ~150 characters)."""
    schemes = schema.get("allowed_schemes")
    limit = out.get("maxLength") if isinstance(out, dict) else None
    if schemes:
        ported = "|".join(_caseless(s) for s in schemes if s.lower() != "file")
        unported = "file" if any(s.lower() == "file" for s in schemes) else ""
        room = None if limit is None else limit - max(map(len, schemes)) - len("://:0000/") \
            - _BOUNDED_HOST_LENGTH
    elif limit is None:
        ported, unported, room = _ANY_SCHEME_BUT_FILE, "file", None
    else:
        ported, unported = _not_file(_SCHEME_LENGTH), "file"
        room = limit - _SCHEME_LENGTH - len("://:0000/") - _BOUNDED_HOST_LENGTH
    host, tail = (_HOST, _URL_TAIL) if room is None or room < 0 else (
        _BOUNDED_HOST, f"(?:[/?#]{_URL_RUN}{{0,{room}}})?$")
    options = []
    if ported:
        options.append(f"(?:{ported})://(?:{host}){_PORT}")
    if unported:
        options.append(f"{_caseless(unported)}://(?:{host})")
    narrowed = {"type": "string", "pattern": f"^(?:{'|'.join(options)}){tail}"}
    if limit is not None and (room is None or room < 0):
        narrowed["maxLength"] = limit
    return narrowed


def _caseless(word: str) -> str:
    """``word`` (a URL scheme) in either case, as Pydantic reads a scheme."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else f"\\{c}" if c in "+." else c
                   for c in word)


def _not_file(longest: int | None = None) -> str:
    """Every scheme but ``file`` (in any case), of at most ``longest`` characters."""

    def rest(written: int, least: int = 0) -> str:
        cls = "[A-Za-z0-9+.-]"
        return f"{cls}{{{least},}}" if longest is None else f"{cls}{{{least},{longest - written}}}"

    options = ["[A-EG-Za-eg-z]" + rest(1)]
    for i in range(4):
        nxt = "file"[i + 1] if i + 1 < 4 else None
        head = _caseless("file"[: i + 1])
        if nxt is None:
            options.append(f"{head}{rest(4, 1)}")
        else:
            others = "".join(ch for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if ch != nxt.upper())
            options.append(f"{head}(?:[{others}{others.lower()}0-9+.-]{rest(i + 2)})?")
    return "|".join(options)


_SCHEME_LENGTH = 20
"""The longest scheme of a URL with a length limit and no listed scheme."""

_ANY_SCHEME_BUT_FILE = _not_file()


def _float_bounds(out: Any, finite: bool, schema: Any, text: bool = False) -> Any:
    """Float bounds moved to where every number past them is past them once rounded to a
    float, as Pydantic compares it (``gt=0`` refuses ``1e-999``, which rounds to 0);
    ``finite``: within :data:`_FINITE`; ``text``: the float compared as its shortest
    text (a ``Decimal`` read from a JSON number)."""
    if not isinstance(out, dict):
        return out
    lower = [(schema[k], k == "gt") for k in ("ge", "gt") if _finite(schema.get(k))]
    upper = [(schema[k], k == "lt") for k in ("le", "lt") if _finite(schema.get(k))]
    for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        out.pop(key, None)
    lo = max((_float_edge(v, strict, 1, text) for v, strict in lower), default=None)
    hi = min((_float_edge(v, strict, -1, text) for v, strict in upper), default=None)
    if finite:
        lo = -_FINITE if lo is None else max(lo, -_FINITE)
        hi = _FINITE if hi is None else min(hi, _FINITE)
    if lo is not None:
        out["minimum"] = int(lo) if lo == lo.to_integral_value() else float(lo)
    if hi is not None:
        out["maximum"] = int(hi) if hi == hi.to_integral_value() else float(hi)
    return out


def _finite(bound: Any) -> bool:
    return bound is not None and not (isinstance(bound, float) and not math.isfinite(bound))


def _float_edge(bound: Any, strict: bool, direction: int, text: bool) -> Decimal:
    """The decimal ``c`` such that every number past ``c`` (towards ``direction``: 1
    above, -1 below) reads as a float past ``bound`` (strictly if ``strict``; the bound
    read either way), the float compared exactly or, ``text``, as its shortest text.
    ``c`` has at most 15 significant digits (a float's shortest text is then ``c``
    itself) and 25 places."""
    # the bound as Pydantic may read it: exactly, or (a float for a Decimal) as its text
    readings = (Decimal(bound), Decimal(repr(bound)) if isinstance(bound, float) else bound)
    exact = max(readings) if direction > 0 else min(readings)

    def past(f: float) -> bool:
        d = Decimal(repr(f)) if text else Decimal(f)
        if direction > 0:
            return d > exact if strict else d >= exact
        return d < exact if strict else d <= exact

    edge = float(exact)
    while not past(edge):
        edge = math.nextafter(edge, math.inf * direction)
    outward = ROUND_CEILING if direction > 0 else ROUND_FLOOR
    c = Context(prec=15, rounding=outward).plus(Decimal(repr(edge)))
    if c.as_tuple().exponent < -_FRACTION_PLACES:  # type: ignore[operator]
        c = c.quantize(Decimal(1).scaleb(-_FRACTION_PLACES), rounding=outward)
    return c


def _decimal(schema: Any) -> Any:
    """A ``Decimal``: a number read as a float, finite and within its bounds as that
    float, and a string (how Pydantic writes one) read exactly when the field has no
    bounds; ``max_digits`` and ``decimal_places`` as a string's pattern, the number left
    out then (a float's text has its own digits)."""
    bounds = {k: schema[k] for k in ("ge", "gt", "le", "lt") if schema.get(k) is not None}
    digits = schema.get("max_digits")
    places = schema.get("decimal_places")
    if schema.get("multiple_of") is not None:
        return _refused("a Decimal with multiple_of")
    if digits is None and places is None:
        number = _float_bounds({"type": "number"}, True, bounds, text=True)
        if bounds:
            return number
        string = {"type": "string", "pattern": "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$"}
        return {"anyOf": [number, string]}
    if bounds:
        return _refused("a Decimal with both bounds and max_digits or decimal_places")
    return {"type": "string", "pattern": _decimal_pattern(digits, places)}


def _decimal_pattern(digits: int | None, places: int | None) -> str:
    """Decimal strings with at most ``digits`` digits in all and ``places`` after the
    point, as Pydantic counts them (after dropping trailing zeros; the pattern counts
    the digits written, leading zeros kept out)."""
    frac = "[0-9]+" if places is None else f"[0-9]{{1,{places}}}" if places else ""
    if digits is None:
        whole = "(?:0|[1-9][0-9]*)"
        return f"^-?{whole}(?:\\.{frac})?$" if frac else f"^-?{whole}$"
    whole_max = digits if places is None else digits - places
    options = []
    if whole_max >= 1:
        # w whole digits, then at most digits - w (and places) after the point
        for w in range(1, whole_max + 1):
            after = min(digits - w, places if places is not None else digits - w)
            head = "[1-9]" + (f"[0-9]{{{w - 1}}}" if w > 1 else "")
            options.append(head + (f"(?:\\.[0-9]{{1,{after}}})?" if after else ""))
    after = min(digits, places if places is not None else digits)
    options.append("0" + (f"(?:\\.[0-9]{{1,{after}}})?" if after else ""))
    return "^-?(?:" + "|".join(options) + ")$"


def _duplicates(out: Any) -> Any:
    """A set or frozenset: Pydantic drops repeated items rather than refuse them, so
    ``uniqueItems`` is no constraint of what it validates, but for a ``min_length`` above
    1, which counts the items left."""
    if isinstance(out, dict) and out.get("minItems", 0) <= 1:
        out.pop("uniqueItems", None)
    return out
