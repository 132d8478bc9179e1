"""Pydantic v2 models: whatever the grammar accepts, ``model_validate_json`` parses."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import uuid
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pydantic = pytest.importorskip("pydantic")  # the [pydantic] extra; installed in [dev]
from _instances import instances as from_schema  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from gbnfkit import Grammar, SchemaError  # noqa: E402


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str = Field(min_length=1, max_length=20)
    zip_code: str = Field(pattern=r"^[0-9]{5}$")


class Person(BaseModel):
    name: str
    age: int = Field(ge=0, le=150)
    score: float | None = None
    colour: Colour = Colour.RED
    kind: Literal["a", "b"] = "a"
    addresses: list[Address] = Field(default_factory=list, max_length=2)


GRAMMAR = Grammar.from_pydantic(Person, property_order="any")


def _accepted(text: str) -> bool:
    return GRAMMAR.match(text).status.value == "accept"


def test_round_trip_of_a_typical_instance() -> None:
    text = Person(
        name="Ann", age=30, addresses=[Address(street="Main", zip_code="12345")]
    ).model_dump_json()
    assert _accepted(text)
    Person.model_validate_json(text)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(from_schema(Person.model_json_schema()))
def test_generated_instances_round_trip(instance: Any) -> None:
    text = json.dumps(instance, ensure_ascii=False)
    assert _accepted(text)
    Person.model_validate_json(text)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(alphabet='{}[]",:0123456789 abenrst-lu.', max_size=40))
def test_accepted_text_always_validates(text: str) -> None:
    if _accepted(text):
        Person.model_validate_json(text)


def test_rejects_what_pydantic_rejects() -> None:
    for text in (
        '{"name": "A", "age": -1}',
        '{"age": 3}',
        '{"name": "A", "age": 1, "addresses": [{"street": "", "zip_code": "1"}]}',
        '{"name": "A", "age": 1, "colour": "green"}',
    ):
        assert not _accepted(text)
        with pytest.raises(pydantic.ValidationError):
            Person.model_validate_json(text)


def test_not_a_model() -> None:
    with pytest.raises(SchemaError):
        Grammar.from_pydantic(dict)


class _When(BaseModel):
    moment: datetime.datetime
    day: datetime.date | None = None
    clock: list[datetime.time] = []


@pytest.mark.parametrize(
    "text",
    [
        '{"moment": "2016-12-31T23:59:60Z"}',  # a leap second: RFC 3339, not Python
        '{"moment": "0000-01-01T00:00:00Z"}',  # year 0: RFC 3339, not Python
        '{"moment": "2020-01-01T00:00:00Z", "day": "0000-02-29"}',
        '{"moment": "2020-01-01T00:00:00Z", "clock": ["12:00:00Z", "23:59:60+01:00"]}',
    ],
)
def test_dates_and_times_pydantic_refuses_are_not_accepted(text: str) -> None:
    """from_pydantic promises what model_validate_json accepts; the JSON Schema formats
    allow second 60 and year 0000, which Pydantic refuses (found by bughunt8)."""
    with pytest.raises(pydantic.ValidationError):
        _When.model_validate_json(text)
    assert Grammar.from_pydantic(_When).match(text).status.value == "reject"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32))
def test_walked_dates_and_times_validate(seed: int) -> None:
    import random

    from grammar_sampling import walk

    grammar = Grammar.from_pydantic(_When, whitespace="compact")
    text = walk(grammar, random.Random(seed), max_length=400)
    if text is not None:
        _When.model_validate_json(text)
    ok = '{"moment":"2016-12-31T23:59:59.5z","day":"2024-02-29","clock":["00:00:00+23:59"]}'
    assert grammar.match(ok).status.value == "accept"
    _When.model_validate_json(ok)


class _Texts(BaseModel):
    free: str = ""
    short: str = Field("", max_length=2)
    dotted: str = Field("", pattern=r"^.$|^$")
    named: dict[str, int] = {}
    emoji: int = Field(0, alias="\U0001f600")


@pytest.mark.parametrize(
    "text",
    [
        '{"free": "\\ud800"}',
        '{"free": "a\\udc00"}',
        '{"free": "\\ud83d\\ud83d"}',
        '{"short": "\\ud83dx"}',
        '{"dotted": "\\udfff"}',
        '{"named": {"\\ud800": 1}}',
        '{"\\ud83d": 1}',  # the high half of the listed name, alone: an extra name
    ],
)
@pytest.mark.parametrize("flavour", [{}, {"whitespace": "llama"}])
def test_lone_surrogate_escapes_pydantic_refuses_are_not_accepted(
    text: str, flavour: dict[str, str]
) -> None:
    """Pydantic's JSON parser refuses a lone surrogate escape that Python's json reads
    (found by walkdiff13): from_pydantic leaves them out, pairs stay."""
    with pytest.raises(pydantic.ValidationError):
        _Texts.model_validate_json(text)
    assert not Grammar.from_pydantic(_Texts, **flavour).match(text).accepted
    assert Grammar.from_pydantic(_Texts, lone_surrogates=True, **flavour).match(text).accepted
    pair = '{"free": "\\ud83d\\ude00", "short": "\\uD83D\\uDE00x", "dotted": "\\ud83d\\ude00"}'
    _Texts.model_validate_json(pair)
    assert Grammar.from_pydantic(_Texts, **flavour).match(pair).accepted


class _Ids(BaseModel):
    one: pydantic.UUID1 | None = None
    four: pydantic.UUID4 | None = None
    seven: pydantic.UUID7 | None = None
    ip: pydantic.IPvAnyAddress | None = None


@pytest.mark.parametrize(
    "text",
    [
        '{"four": "not a uuid"}',
        '{"four": "12345678-1234-1234-8234-123456789abc"}',  # version 1
        '{"four": "12345678-1234-4234-c234-123456789abc"}',  # not the RFC 4122 variant
        '{"one": "12345678-1234-4234-8234-123456789abc"}',
        '{"seven": "12345678-1234-4234-8234-123456789abc"}',
        '{"ip": "localhost"}',
        '{"ip": "01.2.3.4"}',
        '{"ip": "1.2.3.4/24"}',
    ],
)
def test_pydantic_formats_pydantic_asserts_are_enforced(text: str) -> None:
    """uuid1..uuid8 and ipvanyaddress are Pydantic's own format names, which a JSON Schema
    validator takes for annotations, but Pydantic asserts (found by walkdiff13: any
    string was accepted)."""
    with pytest.raises(pydantic.ValidationError):
        _Ids.model_validate_json(text)
    assert not Grammar.from_pydantic(_Ids).match(text).accepted


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.builds(_Ids, one=st.none() | st.uuids(version=1), four=st.none() | st.uuids(version=4),
                 ip=st.none() | st.ip_addresses()), st.integers(0, 2**32))
def test_ids_pydantic_writes_are_accepted_and_walked_ones_validate(ids: _Ids, seed: int) -> None:
    import random

    from grammar_sampling import walk

    grammar = Grammar.from_pydantic(_Ids, property_order="any")
    assert grammar.match(ids.model_dump_json()).accepted, ids.model_dump_json()
    text = walk(grammar, random.Random(seed), max_length=300)
    if text is not None:
        _Ids.model_validate_json(text)


class _Blob(BaseModel):
    short: pydantic.conbytes(min_length=2, max_length=3)  # type: ignore[valid-type]
    free: bytes = b""


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32))
def test_bytes_lengths_count_bytes_as_pydantic_does(seed: int) -> None:
    """Pydantic counts a bytes field's lengths in UTF-8 bytes of the string, JSON Schema in
    characters (found by walkdiff13: "\U0010ffff\U0010ffff" passed a max_length of 3)."""
    import random

    from grammar_sampling import walk

    grammar = Grammar.from_pydantic(_Blob)
    for text in ('{"short": "\U0010ffff\U0010ffff"}', '{"short": "\\u00e9\\u00e9"}'):
        with pytest.raises(pydantic.ValidationError):
            _Blob.model_validate_json(text)
        assert not grammar.match(text).accepted
    ok = '{"short": "a\\u0000c", "free": "\U0010ffff\u00e9"}'
    _Blob.model_validate_json(ok)
    assert grammar.match(ok).accepted
    text = walk(grammar, random.Random(seed), max_length=200)
    if text is not None:
        _Blob.model_validate_json(text)


# Pydantic runs a pattern on Rust's regex (or Python's re), whose \s is not ECMA-262's: it
# leaves out U+FEFF and takes U+0085 (re also \x1c-\x1f); \S is its complement; an escaped
# backslash stays one
_SPACE_PATTERNS = [r"^x\s+y$", r"^[^\s]+$", r"^[\sa]*$", r"^a\\s$", r"^[\]a\s]*$", r"\S\s",
                   r"^[a\S]+$", r"^[^\Sa]$", r"^[\s\S]{2}$"]  # fmt: skip
_SPACE_CHARS = ["\ufeff", "\x85", "\x1c", "\u3000", " ", "\t", "a", "x", "y", "\\", "s", "]",
                "\U0001f600", "\x00"]  # fmt: skip


@pytest.mark.parametrize("engine", ["rust-regex", "python-re"])
@pytest.mark.parametrize("pattern", _SPACE_PATTERNS)
@settings(max_examples=40, deadline=None, derandomize=True)
@given(text=st.text(st.sampled_from(_SPACE_CHARS), max_size=6))
def test_patterns_read_whitespace_as_pydantic_does(engine: str, pattern: str, text: str) -> None:
    model = _pattern_model(engine, pattern)
    document = json.dumps({"a": text})
    try:
        model.model_validate_json(document)
        valid = True
    except pydantic.ValidationError:
        valid = False
    assert (_grammar(engine, pattern).match(document).status == "accept") == valid


_MODELS: dict[tuple[str, str], Any] = {}
_GRAMMARS: dict[tuple[str, str], Grammar] = {}


def _grammar(engine: str, pattern: str) -> Grammar:
    key = (engine, pattern)
    if key not in _GRAMMARS:
        _GRAMMARS[key] = Grammar.from_pydantic(_pattern_model(engine, pattern))
    return _GRAMMARS[key]


def _pattern_model(engine: str, pattern: str) -> Any:
    key = (engine, pattern)
    if key not in _MODELS:
        _MODELS[key] = pydantic.create_model(
            "Pattern",
            __config__=pydantic.ConfigDict(regex_engine=engine),  # type: ignore[typeddict-item]
            a=(str, Field(pattern=pattern)),
        )
    return _MODELS[key]


def test_a_pattern_the_converter_refuses_is_quoted_as_written() -> None:
    pattern = r"^[]a\s]"
    with pytest.raises(SchemaError) as info:
        Grammar.from_pydantic(_pattern_model("rust-regex", pattern))
    assert f"pattern {pattern!r}:" in str(info.value)


# \d and \w are Unicode's in Pydantic's engines, ASCII in ECMA-262: the grammar keeps the
# narrower reading on each side (\D, \W and a negated class's \d, \w narrowed), so it
# accepts nothing Pydantic refuses and all the ASCII text Pydantic accepts
_CLASS_PATTERNS = [r"^\D+$", r"^[^\d]+$", r"^\W\w$", r"^[^\wa]*$", r"^[\Wa]+$", r"^\d\D$"]
_CLASS_CHARS = ["\u0663", "\u00e9", "\u24b6", "\u200d", "_", "a", "1", " ", "-", "\u0301",
                "\U0001d7d8"]  # fmt: skip


@pytest.mark.parametrize("engine", ["rust-regex", "python-re"])
@pytest.mark.parametrize("pattern", _CLASS_PATTERNS)
@settings(max_examples=40, deadline=None, derandomize=True)
@given(text=st.text(st.sampled_from(_CLASS_CHARS), max_size=5))
def test_unicode_classes_accept_nothing_pydantic_refuses(
    engine: str, pattern: str, text: str
) -> None:
    model = _pattern_model(engine, pattern)
    document = json.dumps({"a": text}, ensure_ascii=False)
    try:
        model.model_validate_json(document)
        valid = True
    except pydantic.ValidationError:
        valid = False
    accepted = _grammar(engine, pattern).match(document).status == "accept"
    assert valid or not accepted
    if text.isascii():
        assert accepted == valid


def test_from_pydantic_takes_schema_limits_as_from_json_schema_does() -> None:
    """It passes ``limits`` on to from_json_schema, which takes a SchemaLimits there, but
    was annotated ``Limits | None``: mypy --strict refused the documented spelling."""
    import typing

    from gbnfkit import Limits, SchemaLimits

    hints = typing.get_type_hints(Grammar.from_pydantic)
    assert hints["limits"] == typing.get_type_hints(Grammar.from_json_schema)["limits"]
    assert SchemaLimits in typing.get_args(hints["limits"])
    assert Limits in typing.get_args(hints["limits"])
    limited = Grammar.from_pydantic(Person, limits=SchemaLimits(max_unique_values=9))
    assert limited == Grammar.from_pydantic(Person)


# Types whose constraints Pydantic checks beyond what its JSON schema says (found by
# differential testing, pyd14: texts walked from the grammar, validated by the model): for
# each, texts Pydantic refuses that the grammar accepted, and texts Pydantic accepts (as it
# writes them, mostly) that the grammar must keep accepting
_B64_CONFIG = {"val_json_bytes": "base64"}
_HEX_CONFIG = {"val_json_bytes": "hex"}
_NARROWED: dict[str, tuple[Any, dict[str, Any], list[str], list[str]]] = {
    "AnyUrl": (pydantic.AnyUrl, {},
               ['"a://h:99999"', '"http://999.1.1.1"', '"http://xn--a/"', '"file://a:1/"',
                '"http://1.2.3.4.5/"'],
               ['"http://example.com:8080/a/b?c=1&d#e"', '"https://x.org"', '"file://h/p"',
                '"redis://10.0.0.1:6379/0"']),
    "HttpUrl": (pydantic.HttpUrl, {}, ['"ftp://a.b"', '"http://a.com/' + "x" * 2071 + '"'],
                ['"https://example.com/"', '"http://a.com/' + "x" * 1700 + '"',
                 '"http://sub-1.my-site.example:8080/a/b?c=1#f"', '"http://10.0.0.1/"']),
    "AnyUrl max_length": (Annotated[pydantic.AnyUrl, pydantic.UrlConstraints(max_length=400)],
                          {}, ['"x://a.b/' + "x" * 393 + '"', '"file://a:1/"'],
                          ['"custom+1.x://h.example:1/x"', '"x://a.b/' + "x" * 40 + '"']),
    "AnyHttpUrl": (pydantic.AnyHttpUrl, {}, ['"ftp://a.b"', '"file://a/"', '"x://a"'],
                   ['"https://a.example/p?q#f"', '"HTTP://A.B"']),
    "FileUrl": (pydantic.FileUrl, {}, ['"file://a:1/"', '"http://a"'], ['"file://host/x"']),
    "NaiveDatetime": (pydantic.NaiveDatetime, {}, ['"2020-01-01T00:00:00Z"',
                      '"0000-01-01T00:00:00"', '"2020-01-01T00:00:60"'],
                      ['"2020-01-01T00:00:00"', '"2024-02-29T23:59:59.123456"']),
    "timedelta": (datetime.timedelta, {}, ['"PT9999999H"', '"P1000000000D"'],
                  ['"P999999Y999999M999999DT999999H999999M999999S"', '"P3W"', '"PT1H"']),
    "FiniteFloat": (pydantic.FiniteFloat, {}, ["1e999", "-1E400", "1" + "0" * 400],
                    ["1.5", "-2", "0.001", "1" + "0" * 37]),
    "allow_inf_nan": (Annotated[float, Field(le=3)], {"allow_inf_nan": False}, ["-1e999"],
                      ["3", "-4.5"]),
    "gt": (Annotated[float, Field(gt=0)], {}, ["0." + "0" * 400 + "1"], ["0.5", "0.001"]),
    "lt": (Annotated[float, Field(lt=0.1)], {}, ["0.09999999999999999999"], ["0.0999", "-7"]),
    "ge": (Annotated[float, Field(ge=0.1, le=0.3)], {}, ["0.0999", "0.31"],
           ["0.1", "0.3", "0.2"]),
    "int": (int, {}, ["1" * 4301, "-" + "1" * 4301], ["1" * 300, "-5"]),
    "dict[int]": (dict[int, str], {}, ['{"a": "x"}', '{"1.5": "x"}'],
                  ['{"1": "x", "-20": "y"}', "{}"]),
    "dict[bool]": (dict[bool, int], {}, ['{"maybe": 1}'], ['{"true": 1, "false": 0}']),
    "dict[UUID]": (dict[uuid.UUID, int], {}, ['{"x": 1}'],
                   ['{"12345678-1234-1234-1234-123456789abc": 1}']),
    "dict[date]": (dict[datetime.date, int], {},
                   ['{"2023-02-29": 1}', '{"0000-01-01": 1}', '{"0000-02-29": 1}', '{"x": 1}'],
                   ['{"2024-02-29": 1, "2000-02-29": 2, "0004-02-29": 3}']),
    "dict[pattern]": (dict[Annotated[str, pydantic.StringConstraints(pattern="^a")], int], {},
                      ['{"b": 1}'], ['{"ab": 1}']),
    "set": (set[int], {}, ['[1, "a"]'], ["[1, 1]", "[]", "[3, 2, 1]"]),
    "Base64Bytes": (pydantic.Base64Bytes, {}, ['"QQ"', '"not base64!"', '"Q-_="'],
                    ['"QUJD"', '"QQ=="', '""']),
    "Base64Str": (pydantic.Base64Str, {}, ['"/w=="'], ['"aGk="']),
    "Base64UrlBytes": (pydantic.Base64UrlBytes, {}, ['"QQ"'], ['"aGk_"']),
    "val_json_bytes=base64": (bytes, _B64_CONFIG, ['"QR=="', '"QUJ="', '"+/_-"'],
                              ['"QUJD"', '"QQ"', '"QQ=="', '"_-_-"']),
    "val_json_bytes=hex": (bytes, _HEX_CONFIG, ['"a"', '"zz"'], ['"0aFF"', '""']),
    "Decimal": (decimal.Decimal, {}, ['"abc"', "1e999", '"1e999x"'], ['"1.50"', "2.5", '"-3"']),
    "Decimal digits": (Annotated[decimal.Decimal, Field(max_digits=5, decimal_places=2)], {},
                       ['"1234.5"', '"0.001"', "4.0E9", '"123456"'],
                       ['"123.45"', '"-0.5"', '"0.01"', '"999"']),
    "Decimal gt": (Annotated[decimal.Decimal, Field(gt=1)], {},
                   ["1.00000000000000000001", '"0.5"'], ["1.5", "2"]),
    "IPvAnyInterface": (pydantic.IPvAnyInterface, {}, ['"1.2.3.4/33"', '"x"', '""'],
                        ['"1.2.3.4/24"', '"::1/128"', '"1.2.3.4"']),
    "complex": (complex, {}, ['"abc"', '""'], ['"1+2j"', '"3"', '"-1.5j"']),
    "strip": (Annotated[str, pydantic.StringConstraints(strip_whitespace=True, min_length=1)],
              {}, ['" "', '"\\u3000"', '" \\n"'], ['"a b"', '"x"']),
}


def _model(tp: Any, config: dict[str, Any]) -> Any:
    return pydantic.create_model(
        "M", __config__=pydantic.ConfigDict(**config) if config else None, x=(tp, ...))


def _valid(model: Any, text: str) -> bool:
    try:
        model.model_validate_json(text)
    except pydantic.ValidationError:
        return False
    return True


@pytest.mark.parametrize("name", list(_NARROWED))
def test_types_whose_checks_the_json_schema_leaves_out(name: str) -> None:
    """Texts Pydantic refuses are not accepted (before: every one of these types accepted
    some, or converted to nothing or to a SchemaError), and texts it accepts are."""
    tp, config, refused, accepted = _NARROWED[name]
    model = _model(tp, config)
    grammar = Grammar.from_pydantic(model)
    for value in refused:
        text = f'{{"x": {value}}}'
        assert not _valid(model, text), text
        assert not grammar.match(text).accepted, text
    for value in accepted:
        text = f'{{"x": {value}}}'
        assert _valid(model, text), text
        assert grammar.match(text).accepted, text


@pytest.mark.parametrize("name", list(_NARROWED))
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=True)
@given(seed=st.integers(0, 2**32))
def test_walks_of_narrowed_types_validate(name: str, seed: int) -> None:
    import random

    from grammar_sampling import walk

    tp, config, _, _ = _NARROWED[name]
    model = _model(tp, config)
    text = walk(_narrowed_grammar(name), random.Random(seed), max_length=300)
    if text is not None:
        assert _valid(model, text), text


_NARROWED_GRAMMARS: dict[str, Grammar] = {}


def _narrowed_grammar(name: str) -> Grammar:
    if name not in _NARROWED_GRAMMARS:
        tp, config, _, _ = _NARROWED[name]
        _NARROWED_GRAMMARS[name] = Grammar.from_pydantic(_model(tp, config), whitespace="compact")
    return _NARROWED_GRAMMARS[name]


@pytest.mark.parametrize(
    ("tp", "config", "reason"),
    [
        (pydantic.PastDate, {}, "past date"),
        (pydantic.FutureDate, {}, "future date"),
        (pydantic.PastDatetime | None, {}, "past datetime"),
        (pydantic.AwareDatetime | pydantic.FutureDatetime, {}, "future datetime"),
        (pydantic.Json[int], {}, "Json field"),
        (pydantic.IPvAnyNetwork, {}, "host bits"),
        (pydantic.PostgresDsn, {}, "multi-host URL"),
        (Annotated[str, pydantic.StringConstraints(to_lower=True, pattern="^A$")], {},
         "lower or upper case"),
        (Annotated[decimal.Decimal, Field(ge=0, decimal_places=2)], {}, "both bounds"),
        (dict[Annotated[int, Field(ge=0)], int], {}, "int keys have constraints"),
        (Annotated[bytes, Field(max_length=3)], _B64_CONFIG, "base64 with a length"),
    ],
)
def test_types_the_grammar_cannot_hold_are_refused_by_field(
    tp: Any, config: dict[str, Any], reason: str
) -> None:
    """Each of these validates by something no grammar of the JSON text follows (the
    clock, JSON inside a string, host bits): a SchemaError names the field and says why,
    where before the grammar accepted texts the model refuses."""
    inner = pydantic.create_model(
        "Inner", __config__=pydantic.ConfigDict(**config) if config else None, when=(tp, ...))
    model = pydantic.create_model("M", inner=(inner, ...))
    with pytest.raises(SchemaError) as info:
        Grammar.from_pydantic(model)
    assert "field 'when'" in str(info.value)
    assert reason in str(info.value)


def test_pydantic_options_keep_what_the_user_gave() -> None:
    """from_pydantic caps integral digits at what Pydantic's parser reads, unless the
    caller set the cap, in keywords or in SchemaOptions."""
    from gbnfkit import SchemaLimits, SchemaOptions
    from gbnfkit.schema import pydantic_to_gbnf

    model = _model(int, {})
    assert Grammar.from_pydantic(model).match('{"x": ' + "1" * 1000 + "}").accepted
    assert not Grammar.from_pydantic(model, max_integer_digits=3).match('{"x": 1234}').accepted
    assert Grammar.from_pydantic(model, max_integer_digits=None).match(
        '{"x": ' + "1" * 4301 + "}").accepted
    text = pydantic_to_gbnf(model, options=SchemaOptions(max_integer_digits=3))
    assert Grammar.from_gbnf(text).match('{"x":123}').accepted
    assert not Grammar.from_gbnf(text).match('{"x":1234}').accepted
    small = SchemaLimits(max_counted_characters=50)
    assert not Grammar.from_pydantic(model, limits=small).match(
        '{"x": ' + "1" * 51 + "}").accepted


@pytest.mark.parametrize("tp", ["EmailStr", "NameEmail"])
def test_email_addresses_as_email_validator_takes_them(tp: str) -> None:
    """EmailStr was the converter's ``email`` format (RFC 5321): walks of it were
    refused by email-validator 93 times in 102 (no dot in the domain, special-use
    domains, address literals, lengths)."""
    import random

    from grammar_sampling import walk

    pytest.importorskip("email_validator")  # Pydantic's, for EmailStr; in [dev]
    model = _model(getattr(pydantic, tp), {})
    grammar = Grammar.from_pydantic(model, whitespace="compact")
    for value in ["a@localhost", "a@b", "a@b.test", "a@b.LOCAL", "x@1.2.3.4", "a@xn--a.com",
                  "a@[1.2.3.4]", ".a@b.com"]:
        text = json.dumps({"x": value}, separators=(",", ":"))
        assert not _valid(model, text), text
        assert not grammar.match(text).accepted, text
    for value in ["a@b.com", "first.last+tag@mail.x-y.example.org", "O'Neil@EXAMPLE.CO"]:
        text = json.dumps({"x": value}, separators=(",", ":"))
        assert _valid(model, text) and grammar.match(text).accepted, text
    rng = random.Random(1)
    for _ in range(100):
        text = walk(grammar, rng, max_length=300)
        if text is not None:
            assert _valid(model, text), text


_BOUND_KEYS = ["gt", "ge", "lt", "le"]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=st.sampled_from(_BOUND_KEYS),
       bound=st.floats(-1e6, 1e6, allow_nan=False) | st.sampled_from([0.0, 0.1, 1e-30, -1e-300]),
       kind=st.sampled_from([float, decimal.Decimal]),
       nudges=st.lists(st.integers(-3, 3), min_size=1, max_size=4))
def test_float_bounds_hold_after_rounding(key: str, bound: float, kind: Any,
                                          nudges: list[int]) -> None:
    """Numbers around a bound, each a few units of its 17th to 40th digit off: whatever
    the grammar accepts, Pydantic accepts once the number is read as a float."""
    model = _model(Annotated[kind, Field(**{key: bound})], {})
    grammar = Grammar.from_pydantic(model)
    base = decimal.Decimal(repr(bound))
    for places, nudge in zip((17, 20, 25, 40), nudges, strict=False):
        value = base + nudge * decimal.Decimal(1).scaleb(base.adjusted() - places)
        text = f'{{"x": {value:f}}}'
        if grammar.match(text).accepted:
            assert _valid(model, text), text
    text = f'{{"x": {base + (1 if key in ("gt", "ge") else -1)}}}'
    assert grammar.match(text).accepted, text
