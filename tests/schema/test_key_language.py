"""The language of object keys, whatever shape the converter gives their rules.

An object with listed properties (integer values) and other properties (string values)
accepts a member iff its key, read as JSON, is

* a listed name written in its one spelling (``json.dumps(name, ensure_ascii=False)``)
  with an integer value, or
* a name that is not listed, in any JSON spelling of its characters (raw, short escapes,
  ``\\u`` with hex digits in either case, surrogate pairs) with a string value;

and another spelling of a listed name (``"n\\u0061me"``) is refused either way
(docs/schema.md, "JSON strings").  The reference below is that rule in plain Python;
the names are drawn to stress a trie of keys (shared prefixes, one name a prefix of
another, non-ASCII and astral characters, characters that must be escaped) and the keys
tried are the names, their prefixes and extensions, one-character edits, each spelled
canonically or with one character escaped.  Both property orders, and keys after the
first member (``, "``) as well as first (``{"``).

A listed name outside the BMP written with a surrogate pair escape
(``"\\ud83d\\ude00"`` for ``"😀"``) was accepted as an extra property before
``JsonChars.not_in`` told a lone high surrogate from the start of a pair; strings outside
an ``enum`` (``not``) share that rule."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gbnfkit import Grammar

_ALPHABET = "abc-_é\"\\\n/\U0001f600"
_names = st.lists(st.text(alphabet=_ALPHABET, min_size=0, max_size=4), min_size=1,
                  max_size=6, unique=True)


def _spellings(name: str, draw_index: int) -> list[str]:
    """The canonical spelling of ``name`` and ones with a character spelled otherwise."""
    canonical = json.dumps(name, ensure_ascii=False)[1:-1]
    out = [canonical]
    if name:
        i = draw_index % len(name)
        ch = name[i]
        head = json.dumps(name[:i], ensure_ascii=False)[1:-1]
        tail = json.dumps(name[i + 1:], ensure_ascii=False)[1:-1]
        if ord(ch) < 0x10000:
            out.append(head + f"\\u{ord(ch):04X}" + tail)
            out.append(head + f"\\u{ord(ch):04x}" + tail)
        out.append(head + json.dumps(ch)[1:-1] + tail)  # short escape, \\u or a pair
    return list(dict.fromkeys(out))


def _candidates(names: list[str], edits: list[tuple[int, int, str]]) -> list[str]:
    """Key names to try: the listed ones, their prefixes, extensions and edits."""
    out = set(names)
    for name in names:
        out.update(name[:i] for i in range(len(name)))
        out.update(name + c for c in "a\"é")
    for i, j, ch in edits:
        name = names[i % len(names)]
        if name:
            k = j % len(name)
            out.add(name[:k] + ch + name[k + 1:])
    return sorted(out)


def _expected(names: set[str], spelled: str, value: str) -> bool:
    decoded = json.loads(f'"{spelled}"')
    if decoded in names:
        return spelled == json.dumps(decoded, ensure_ascii=False)[1:-1] and value == "1"
    return value == '"x"'


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=_names,
       edits=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50),
                                st.sampled_from(_ALPHABET)), max_size=4),
       index=st.integers(0, 50), order=st.sampled_from(["any", "schema"]))
def test_keys_accept_exactly_the_reference(names: list[str], edits: list[tuple[int, int, str]],
                                           index: int, order: str) -> None:
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
              "additionalProperties": {"type": "string"}}
    grammar = Grammar.from_json_schema(schema, property_order=order, whitespace="compact")
    listed = set(names)
    for name in _candidates(names, edits):
        for spelled in _spellings(name, index):
            for value in ("1", '"x"'):
                want = _expected(listed, spelled, value)
                text = f'{{"{spelled}":{value}}}'
                got = grammar.match(text).status.value == "accept"
                assert got == want, (names, text)
            # a later member: after one extra property (never a listed name)
            other = json.dumps(max(names, key=len) + "zz", ensure_ascii=False)[1:-1]
            text = f'{{"{other}":"x","{spelled}":"x"}}'
            want = _expected(listed, spelled, '"x"')
            assert (grammar.match(text).status.value == "accept") == want, (names, text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=_names, index=st.integers(0, 50))
def test_closed_objects_accept_only_listed_keys(names: list[str], index: int) -> None:
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
              "additionalProperties": False}
    grammar = Grammar.from_json_schema(schema, property_order="any", whitespace="compact")
    for name in _candidates(names, []):
        for spelled in _spellings(name, index):
            want = _expected(set(names), spelled, "1")
            text = f'{{"{spelled}":1}}'
            assert (grammar.match(text).status.value == "accept") == want, (names, text)


def test_strings_outside_an_enum_refuse_every_spelling_of_its_values() -> None:
    grammar = Grammar.from_json_schema({"type": "string", "not": {"enum": ["a😀", "😀b"]}})
    for text, want in [('"a\\ud83d\\ude00"', False), ('"\\uD83D\\uDE00b"', False),
                       ('"a😀"', False), ('"a\\ud83d\\ude01"', True), ('"a\\ud83d"', True),
                       ('"\\ud83d"', True), ('"\\ud83db"', True), ('"a\\ud83d\\ud83d"', True),
                       ('"\\ud83d\\ude00\\u0062"', False), ('"a😀c"', True)]:
        assert (grammar.match(text).status.value == "accept") == want, text
        assert json.loads(text) not in ("a😀", "😀b") or not want



def _stacks_after(schema: dict[str, object], text: str) -> list[tuple[int, ...]]:
    import gbnfkit

    vocabulary = gbnfkit.Vocabulary([bytes([b]) for b in range(256)] + [None],
                                    eos_token_ids=[256])
    compiled = gbnfkit.CompiledGrammar(
        Grammar.from_json_schema(schema, property_order="any"), vocabulary)
    matcher = compiled.matcher()
    matcher.accept_text(text)
    return list(matcher._state.stacks)


def test_listed_keys_with_a_shared_prefix_are_one_stack() -> None:
    """The optional listed keys of an object are left-factored (docs/schema.md,
    "Listed keys"): after a prefix that several keys share the parse is one stack (it
    was one per key), and at a branch one stack per next character, all in one rule
    (the same frames below their top: one group, so one context for the token layer)."""
    names = ["require-author", "require-bin", "require-bugs", "require-config", "name"]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
              "additionalProperties": False}
    assert len(_stacks_after(schema, '{"requ')) == 1
    assert len(_stacks_after(schema, '{"require-bu')) == 1
    for text, branches in [('{"require-', 3), ('{"require-b', 2), ('{"', 2)]:
        stacks = _stacks_after(schema, text)
        assert len(stacks) == branches, text
        assert len({stack[:-1] for stack in stacks}) == 1, text
