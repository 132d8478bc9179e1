"""Options of the JSON Schema converter."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

from gbnfkit._errors import SchemaError
from gbnfkit.schema._limits import SchemaLimits, limit_hint

__all__ = ["PropertyOrder", "SchemaOptions", "Whitespace", "make_options"]


class Whitespace(Enum):
    """Where and how much whitespace the grammar allows between JSON tokens.

    * ``COMPACT``: none at all (``{"a":1}``).
    * ``FLEXIBLE``: any JSON whitespace ``[ \\t\\n\\r]`` wherever JSON allows it, in runs
      of at most ``max_whitespace`` characters (the default).
    * ``PRETTY``: a single space, or a newline followed by at most
      ``max_whitespace`` spaces/tabs, wherever JSON allows whitespace.
    * ``LLAMA``: llama.cpp's ``space ::= | " " | "\\n"{1,2} [ \\t]{0,20}``, placed as
      llama.cpp places it (not around the root value, not before ``,``).
    """

    COMPACT = "compact"
    FLEXIBLE = "flexible"
    PRETTY = "pretty"
    LLAMA = "llama"


class PropertyOrder(Enum):
    """``SCHEMA``: properties in the order the schema lists them, extra ones last.
    ``ANY``: any order (required properties tracked; duplicate keys not prevented)."""

    SCHEMA = "schema"
    ANY = "any"


@dataclass(frozen=True)
class SchemaOptions:
    """How :func:`gbnfkit.json_schema_to_gbnf` builds a grammar.

    Attributes:
        whitespace: see :class:`Whitespace`.
        max_whitespace: longest run of whitespace (``FLEXIBLE``/``PRETTY``), so that a
            model cannot emit blanks forever.  ``None``: unbounded.
        property_order: see :class:`PropertyOrder`.
        closed_objects: treat a missing ``additionalProperties`` as ``false`` in schemas
            that list ``properties`` (what llama.cpp and XGrammar do for generation).
            Default: extra properties allowed, as the spec says.
        compact_constants: ``const``/``enum`` values only in compact JSON (llama.cpp).
        strict: raise :class:`gbnfkit.SchemaError` for keywords that cannot be enforced;
            with ``False`` they are ignored with a :class:`SchemaWarning`.
        max_integer_digits: cap on the digits of an integer (or integral part) where the
            schema gives no bound; ``None``: unbounded.
        max_fraction_digits: cap on the digits after the decimal point; ``None``: unbounded.
        untyped_means_object: a schema without ``type`` that has object keywords
            (``properties``...) only accepts objects (llama.cpp's reading).  Default: the
            spec's reading, where such keywords only constrain values that are objects.
        max_required_any_order: most required properties tracked with
            ``property_order=ANY`` (2**n grammar states).
        limits: the converter's resource limits, see :class:`SchemaLimits`.
        lone_surrogates: strings may hold lone surrogate escapes (``\\uD800``-``\\uDFFF``
            not in a pair), which JSON's grammar allows and Python's ``json`` reads.
            ``False``: only pairs, for parsers that refuse lone ones (Pydantic's, Rust's
            ``serde_json``); :meth:`gbnfkit.Grammar.from_pydantic` sets it.
    """

    whitespace: Whitespace = Whitespace.FLEXIBLE
    max_whitespace: int | None = 20
    property_order: PropertyOrder = PropertyOrder.SCHEMA
    closed_objects: bool = False
    compact_constants: bool = False
    strict: bool = True
    max_integer_digits: int | None = None
    max_fraction_digits: int | None = None
    untyped_means_object: bool = False
    max_required_any_order: int = 8
    limits: SchemaLimits = field(default_factory=SchemaLimits)
    lone_surrogates: bool = True

    def __post_init__(self) -> None:
        for name in _COERCED:  # (the fields _coerce may change or refuse, in field order)
            value = getattr(self, name)
            coerced = _coerce(name, value)
            if coerced is not value:
                object.__setattr__(self, name, coerced)
        _check(self)

    @classmethod
    def llama_compat(cls, **changes: Any) -> SchemaOptions:
        """The choices llama.cpp's converter makes (see README, "Schema conversion")."""
        base = cls(
            whitespace=Whitespace.LLAMA,
            closed_objects=True,
            compact_constants=True,
            max_integer_digits=16,
            max_fraction_digits=16,
            untyped_means_object=True,
        )
        return make_options(base, changes)


_BOUNDED = (
    # option, least value, the limit that caps it, whether None (unbounded) is allowed
    ("max_whitespace", 1, "max_counted_characters", True),
    ("max_integer_digits", 1, "max_counted_characters", True),
    ("max_fraction_digits", 1, "max_counted_characters", True),
    ("max_required_any_order", 0, "max_tracked_required", False),
)


def least_value(name: str) -> int:
    """The least value the int option ``name`` takes (the CLI's flags check it too)."""
    return next((lo for option, lo, _, _ in _BOUNDED if option == name), 1)


def _check(opts: SchemaOptions) -> SchemaOptions:
    limits = opts.limits
    for name, lo, limit, optional in _BOUNDED:
        v = getattr(opts, name)
        if v is None and optional:
            continue
        cap: int = getattr(limits, limit)
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= cap:
            past = isinstance(v, int) and not isinstance(v, bool) and v > cap
            none = " or None" if optional else ""
            hint = f" ({limit_hint(limits, limit)})" if past else ""
            raise SchemaError(f"option {name} must be an int in {lo}..{cap}{none}, not "
                              f"{v!r:.40}{hint}", limit=limit if past else None)
    for name in ("closed_objects", "compact_constants", "strict", "untyped_means_object",
                 "lone_surrogates"):
        if not isinstance(getattr(opts, name), bool):
            raise SchemaError(f"option {name} must be a bool")
    return opts


_ENUMS: dict[str, type[Enum]] = {"whitespace": Whitespace, "property_order": PropertyOrder}
_COERCED = (*_ENUMS, "limits")  # what _coerce reads, in field order
_NAMES = frozenset(f.name for f in fields(SchemaOptions))


def _coerce(name: str, value: Any) -> Any:
    enums = _ENUMS
    if name in enums and isinstance(value, str):
        try:
            return enums[name](value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in enums[name])
            raise SchemaError(f"option {name} must be one of {allowed}, not {value!r}") from None
    if name in enums and not isinstance(value, enums[name]):
        raise SchemaError(f"option {name} must be a {enums[name].__name__}, not {value!r}")
    if name == "limits" and not isinstance(value, SchemaLimits):
        raise SchemaError(f"option limits must be a SchemaLimits, not {type(value).__name__}")
    return value


_DEFAULT = SchemaOptions()


def make_options(base: SchemaOptions | None, changes: dict[str, Any]) -> SchemaOptions:
    """``base`` (default options if ``None``) with keyword ``changes``, validated."""
    if base is not None and not isinstance(base, SchemaOptions):
        raise SchemaError(f"options must be a SchemaOptions, not {type(base).__name__}")
    base = base or _DEFAULT
    names = _NAMES
    unknown = sorted(set(changes) - names)
    if unknown:
        raise SchemaError(
            f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}"
        )
    coerced = {k: _coerce(k, v) for k, v in changes.items()}
    return replace(base, **coerced)  # (checked by __post_init__)
