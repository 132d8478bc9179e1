"""JSON text as JSON means it: every spelling json.loads reads, for free and constant strings."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar

SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
         "\r": "\\r", "\t": "\\t"}  # fmt: skip


def spell(text: str, rng: random.Random) -> str:
    """A random valid JSON spelling of ``text`` (raw, short escapes, \\u in either case,
    surrogate pairs for astral characters; lone surrogates as escapes)."""
    out = ['"']
    for ch in text:
        cp = ord(ch)
        forms = []
        if ch not in '"\\' and cp >= 0x20 and not 0xD800 <= cp <= 0xDFFF:
            forms.append(ch)
        if ch in SHORT:
            forms.append(SHORT[ch])
        if cp <= 0xFFFF:
            forms += [f"\\u{cp:04x}", f"\\u{cp:04X}"]
        else:
            hi, lo = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
            forms += [f"\\u{hi:04x}\\u{lo:04X}"]
        out.append(rng.choice(forms))
    out.append('"')
    spelled = "".join(out)
    assert json.loads(spelled) == text
    return spelled


TEXTS = st.text(alphabet=st.characters(blacklist_categories=["Cs"]) | st.sampled_from(
    ["é", "/", "\n", '"', "\\", "\x00", "\x7f", "😀", "a"]), max_size=6)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(TEXTS, TEXTS, st.randoms(use_true_random=False))
def test_const_string_matches_every_spelling_and_nothing_else(
    text: str, other: str, rng: random.Random
) -> None:
    grammar = Grammar.from_json_schema({"const": text})
    for _ in range(3):
        assert grammar.match(spell(text, rng)).status == "accept"
    if other != text:
        assert grammar.match(spell(other, rng)).status == "reject"


def test_examples_from_the_docs() -> None:
    grammar = Grammar.from_json_schema({"const": "café/x"})
    for text in ('"café/x"', '"caf\\u00e9\\/x"', '"caf\\u00E9/x"'):
        assert grammar.match(text).status == "accept", text
    assert grammar.match('"cafe/x"').status == "reject"
    enum = Grammar.from_json_schema({"enum": ["a\nb", {"k\u00e9": ["x"]}]})
    assert enum.match('"a\\u000Ab"').status == "accept"
    assert enum.match('{"k\\u00e9": ["\\u0078"]}').status == "accept"
    assert enum.match('{"ke": ["x"]}').status == "reject"


def test_free_strings_accept_lone_surrogate_escapes() -> None:
    grammar = Grammar.from_json_schema({"type": "string"})
    for text in ('"\\udBd2"', '"a\\uDC00b"', '"\\ud83d\\ude00"', '"\\ud83d"'):
        assert json.loads(text) is not None
        assert grammar.match(text).status == "accept", text
    for text in ('"\\x41"', "\"\\'\"", '"\\u12"', '"\\U0001F600"', '"a\nb"'):
        assert grammar.match(text).status == "reject", text
    letters = Grammar.from_json_schema({"type": "string", "pattern": "^[a-z]+$"})
    assert letters.match('"\\u0061b"').status == "accept"
    assert letters.match('"\\ud800"').status == "reject"


_NO_LONE_SCHEMAS = [
    {"type": "string"},
    {"type": "string", "minLength": 2, "maxLength": 3},
    {"type": "string", "pattern": "^[^a]+.$"},
    {"not": {"enum": ["\U0001f600", "x"]}, "type": "string"},
    {"type": "object", "properties": {"\U0001f600": {"type": "integer"}},
     "additionalProperties": {"type": "string", "pattern": "^.{2}$"}},
]


# surrogate escapes put into accepted texts: a pair, or halves alone
_SURROGATE_ESCAPES = ["\\ud83d\\ude00", "\\ud83d", "\\uDE00", "\\udbff\\udbff"]


def _no_lone_surrogate(text: str) -> bool:
    """Whether no surrogate comes out of ``json.loads(text)`` alone (as a strict parser
    such as Pydantic's reads it: a lone one is an error)."""
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in json.dumps(json.loads(text),
                                                                    ensure_ascii=False))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_NO_LONE_SCHEMAS), st.integers(0, 2**32))
def test_without_lone_surrogates_only_pairs_are_accepted(schema: dict, seed: int) -> None:
    """``lone_surrogates=False``: every walked text decodes without a lone surrogate, and a
    surrogate escape put into an accepted text is accepted exactly when it is a pair that
    leaves the text valid (the grammar with lone surrogates accepts it)."""
    from grammar_sampling import walk

    rng = random.Random(seed)
    strict = Grammar.from_json_schema(schema, lone_surrogates=False)
    loose = Grammar.from_json_schema(schema)
    for _ in range(5):
        text = walk(strict, rng, max_length=60)
        if text is None:
            continue
        assert _no_lone_surrogate(text), text
        quote = [i for i, c in enumerate(text) if c == '"' and text[i - 1] != "\\"]
        if not quote:
            continue
        at = rng.choice(quote) + 1
        changed = text[:at] + rng.choice(_SURROGATE_ESCAPES) + text[at:]
        try:
            fine = _no_lone_surrogate(changed) and loose.match(changed).accepted
        except json.JSONDecodeError:
            fine = False
        assert strict.match(changed).accepted == fine, changed


def test_lengths_count_what_json_decodes() -> None:
    one = Grammar.from_json_schema({"type": "string", "maxLength": 1})
    assert one.match('"\\ud83d\\ude00"').status == "accept"  # a pair is one character
    assert one.match('"\\udBd2"').status == "accept"
    assert one.match('"\\udBd2\\udBd2"').status == "reject"


def test_another_spelling_of_a_listed_property_is_not_an_extra_property() -> None:
    grammar = Grammar.from_json_schema({"type": "object",
                                        "properties": {"name": {"type": "integer"}}})
    assert grammar.match('{"name": 5}').status == "accept"
    assert grammar.match('{"other": "x"}').status == "accept"
    assert grammar.match('{"n\\u0061me": "x"}').status == "reject"  # not an extra property


@settings(max_examples=25, deadline=None)
@given(st.sets(st.integers(0, 0xFF) | st.sampled_from([0x22, 0x2F, 0x5C, 0x0A, 0x61, 0x6E]),
               min_size=1, max_size=6), st.booleans())
def test_a_class_but_a_few_low_characters_spells_each_escape_exactly(
    excluded: set[int], lone: bool
) -> None:
    """All characters but a few below U+0100 (the "other key" tries' classes): their
    ``\\u00XY`` escapes are written digit by digit, the rest call one shared rule; every
    ``\\u`` escape below U+0200 in both cases, each raw and short spelling, and the
    escapes from U+0100 on (surrogates and pairs) against the class."""
    cls = "".join(f"\\u{cp:04x}" for cp in sorted(excluded))
    grammar = Grammar.from_json_schema({"type": "string", "pattern": f"^[^{cls}]$"},
                                       lone_surrogates=lone)
    texts = {}  # spelling -> expected
    for cp in range(0x200):
        for text in (f'"\\u{cp:04x}"', f'"\\u{cp:04X}"'):
            texts[text] = cp not in excluded
        if chr(cp) in SHORT:
            texts[f'"{SHORT[chr(cp)]}"'] = cp not in excluded
        if cp >= 0x20 and chr(cp) not in '"\\':
            texts[json.dumps(chr(cp), ensure_ascii=False)] = cp not in excluded
    for text in ('"\\uFFFF"', '"\\uD83D\\uDE00"', '"\\u1234"', '"\\uE000"', '"\\u0fFf"'):
        texts[text] = True
    for text in ('"\\uD800"', '"\\udfff"'):
        texts[text] = lone
    for text in ('"\\u00"', '"\\u0g00"', '"ab"', '""'):
        texts[text] = False
    got = {text: grammar.match(text).status == "accept" for text in texts}
    assert got == texts
