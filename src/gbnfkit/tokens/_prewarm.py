"""The splits of the contexts every JSON grammar shares, computed once per vocabulary.

The library writes the same rules into every JSON grammar it makes: the ``json``
builtin's, and the schema converter's string body, "a property name other than these",
numbers, whitespace and literals, and the rules of the string formats (``uri``,
``email``, ``hostname``, ``uuid``... from ``schema/_formats.py``).  The wide contexts
among them (string bodies, property names and the formats' free text) have the same
canonical form in every grammar
(``docs/masks.md``, "Canonical sharing"), so without this a server that builds its
vocabulary index once at startup would split them again for every new schema, since
the index keeps its shared splits in an LRU that ``clear_shared`` empties.

:func:`prewarm` compiles those grammars with the index, the converter's from a schema
written here that uses every one of its value rules (a known property, a property
name extending it, one starting with another letter, every value kind, and a string
whose ``maxLength`` puts its end beyond the longest token's reach), and steps
through a document of each byte by byte, computing the mask of every state on the way.
What this leaves in the index's shared splits is kept as *fixed*
(:meth:`~gbnfkit.tokens._index.VocabularyIndex.fix_shared`): nothing here names a
form, they are whatever the converter and the builtin write now.  Those grammars are
compiled with ``follow_calls=0`` so that their wide splits keep every tail
(``docs/masks.md``, "Tails the frames below never read"): a fixed split serves any
context of its canonical form, whatever follows it.  The converter's grammar of an
object with a string of each of the formats that pay (:func:`format_document`: a URI,
an e-mail address, a hostname and a UUID, the formats whose first masks cost most and
recur across schemas) is stepped through the same way, in that pass only: its wide
splits are kept as fixed, with no cuts.  Then the masks of two schema
grammars with a value of every kind (:func:`top_documents`) leave the top-frame splits
of the converter's value rules, kept by ``_fixedtops.keep_fixed_tops``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from gbnfkit.tokens._compiled import CompiledGrammar
from gbnfkit.tokens._fixedtops import keep_fixed_tops
from gbnfkit.tokens._tuning import DEFAULT_TUNING

if TYPE_CHECKING:
    from gbnfkit._grammar import Grammar
    from gbnfkit.tokens._index import VocabularyIndex

__all__ = ["fixed_documents", "format_document", "inside_strings", "prewarm", "top_documents"]

_DOCUMENT = '{"k": "a b\\n\\u00e9", "m": "ab", "kx": "y"}'
# a `maxLength` string ("m") this many characters longer than the longest token: the
# states of its first characters have the canonical form of every string of
# `maxLength` above about the longest token plus 4 (the chain's end is out of reach)
_BEYOND = 8
# values of the string formats whose wide splits recur across schemas and cost a
# first request most (bench/issue11-journal.md, "fmt17"), through their free text: a
# URI's scheme, `//www.`, host, port, path, query and fragment; an e-mail's local part
# and domain; a hostname's labels; a UUID's hex groups (the second URI and e-mail
# address: MaskBench mask time -20% -> -30% on Qwen, for no measurable prewarm time).
# Not `iri` and `ipv6`: as dear to prewarm (0.2 s each on DeepSeek) for 1 and 2
# MaskBench dev schemas; nor `date-time`, `date`, `time` and `ipv4`, whose first masks
# are cheap already (1-3 ms at worst)
_FORMAT_VALUES = (
    ("uri", "https://www.example.com/a/b.html?q=1&r=x#top"),
    ("uri", "http://localhost:8080/api/v1/users"),
    ("email", "john.doe@example.com"),
    ("email", "mary_smith99@mail.co.uk"),
    ("hostname", "mail.example.org"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
)


def fixed_documents(longest: int = 0) -> list[tuple[Grammar, str]]:
    """The grammars whose wide contexts every JSON grammar shares, each with a document
    that goes through their free text: the ``json`` builtin, and the schema converter's
    output (its string and property-name rules are the same in either property order),
    with a string of ``maxLength`` beyond ``longest`` bytes (the longest token)."""
    from gbnfkit._grammar import Grammar

    # a known property ("k"), a name extending it ("kx": the rest of "a property name
    # other than these" after a known prefix, then the common string body), string
    # values with escapes, in a schema whose extra properties may be any value
    schema = {
        "type": "object",
        "properties": {
            "k": {"type": "string"},
            "m": {"type": "string", "maxLength": longest + _BEYOND},
        },
        "additionalProperties": True,
    }
    return [(Grammar.builtin("json"), _DOCUMENT), (Grammar.from_json_schema(schema), _DOCUMENT)]


def format_document() -> tuple[Grammar, str]:
    """The converter's grammar of an object with a string of its format for each
    value of ``_FORMAT_VALUES`` (format name and index), and a document of those values."""
    from gbnfkit._grammar import Grammar

    values = {f"{name}{i}": (name, value) for i, (name, value) in enumerate(_FORMAT_VALUES)}
    properties = {key: {"type": "string", "format": name} for key, (name, _) in values.items()}
    text = json.dumps({key: value for key, (_, value) in values.items()})
    return Grammar.from_json_schema({"type": "object", "properties": properties}), text


# every kind of value the converter writes, with and without whitespace around
# (`%` before a property name: the grammar's prefix of names)
_VALUES = (
    '{"%s": "a", "%n": -1.5e3, "%i": 12, "%b": true, "%z": null, "%a": [1, 2.5], "%o": {}}',
    '{ "%s" : "" ,\n "%n":0, "%i" :-3 , "%b":false,"%z" : null , "%a":[ ], "%o" : { } }',
)


def top_documents() -> list[tuple[Grammar, list[str]]]:
    """Two schema grammars with the same kinds of values under other property names,
    each with documents that go through a value of every kind: the top-frame splits
    both make with the same canonical form are those of the converter's own rules
    (whitespace, strings, numbers, literals), which every schema grammar has
    (``_fixedtops``)."""
    from gbnfkit._grammar import Grammar

    kinds = {
        "s": {"type": "string"},
        "n": {"type": "number"},
        "i": {"type": "integer"},
        "b": {"type": "boolean"},
        "z": {"type": "null"},
        "a": {"type": "array", "items": {"type": "number"}},
        "o": {"type": "object", "additionalProperties": False},
    }
    out: list[tuple[Grammar, list[str]]] = []
    for prefix in ("", "v"):
        # no other property names: their wide splits are the fixed splits' business
        properties = {prefix + name: value for name, value in kinds.items()}
        schema = {"type": "object", "properties": properties, "additionalProperties": False}
        grammar = Grammar.from_json_schema(schema)
        out.append((grammar, [text.replace("%", prefix) for text in _VALUES]))
    return out


def inside_strings(data: bytes) -> list[int]:
    """The lengths of the prefixes of the JSON text ``data`` that end inside a string
    (the states of its free text), but for a property name's opening quote: the first
    letter of a name depends on the schema's names, so no other grammar shares it; a
    string after `{` or `,` is taken as a name, so ``data`` holds no arrays)."""
    out: list[int] = []
    opened = -1  # where the open string's first byte is, -1 outside strings
    escaped = False
    for i, byte in enumerate(data):
        if opened < 0:
            if byte == 0x22:
                opened = i + 1
                if not data[: i].rstrip(b" \t\n\r").endswith((b"{", b",")):
                    out.append(i + 1)  # a value's opening quote
            continue
        if i > opened:
            out.append(i)
        if escaped:
            escaped = False
        elif byte == 0x5C:
            escaped = True
        elif byte == 0x22:
            opened = -1
    return out


def inside_names(data: bytes) -> list[int]:
    """The lengths of the prefixes of the JSON text ``data`` that end inside a property
    name or after its closing quote (the key states; ``data`` holds no strings with
    quotes or escapes, and a string after `{` or `,` is a name)."""
    out: list[int] = []
    opened = -1
    for i, byte in enumerate(data):
        if byte != 0x22:
            if opened >= 0:
                out.append(i)
            continue
        if opened >= 0:
            out.append(i)
            out.append(i + 1)
            opened = -1
        elif data[:i].rstrip(b" \t\n\r").endswith((b"{", b",")):
            opened = i + 1
    return out


def prewarm(index: VocabularyIndex) -> None:
    """Split, with ``index``, the contexts of :func:`fixed_documents`' free text (the
    mask of each state inside a string, :func:`inside_strings`), and keep the wide
    splits this made as the index's fixed splits and their cuts (``clear_shared``
    keeps them)."""
    documents = fixed_documents(index.trie.max_depth)
    # as any grammar splits them (tails cut to what the frames below read: kept as
    # cuts), then keeping every tail; the formats' splits only keeping every tail (their
    # cuts cost as much again, 0.1 s on DeepSeek, and saved no measurable mask time)
    passes = ((DEFAULT_TUNING, documents),
              (replace(DEFAULT_TUNING, follow_calls=0), [*documents, format_document()]))
    for tuning, pass_documents in passes:
        for grammar, text in pass_documents:
            compiled = CompiledGrammar(grammar, index.vocabulary, index=index, tuning=tuning)
            automaton = compiled.automaton
            state = automaton.initial
            data = text.encode("utf-8")
            wanted = set(inside_strings(data))
            for i, byte in enumerate(data):
                if i in wanted:
                    compiled.mask(state)
                got = automaton.step(state, byte)
                if got is None:  # not valid (tests/tokens/test_prewarm.py checks they are)
                    break
                state = got
        index.fix_shared()
    # the top-frame splits of every state of the value documents (their wide splits,
    # if any, are not kept: ``clear_shared``)
    grammars: list[CompiledGrammar] = []
    for grammar, texts in top_documents():
        compiled = CompiledGrammar(grammar, index.vocabulary, index=index)
        for text in texts:
            state = compiled.automaton.initial
            data = text.encode("utf-8")
            names = set(inside_names(data))
            for i, byte in enumerate(data):
                if i not in names:
                    compiled.mask(state)
                got = compiled.automaton.step(state, byte)
                if got is None:  # not valid (tests/tokens/test_fixedtops.py checks they are)
                    break
                state = got
        grammars.append(compiled)
    index.clear_shared()
    keep_fixed_tops(grammars)
