"""Fixed splits: the contexts every JSON grammar shares, split once per vocabulary
(``tokens/_prewarm.py``; docs/masks.md, "Fixed splits")."""

from __future__ import annotations

import numpy as np
from test_masks import fast_mask, reference_mask

import gbnfkit
from gbnfkit._grammar import Grammar
from gbnfkit.tokens._index import VocabularyIndex
from gbnfkit.tokens._prewarm import (
    fixed_documents,
    format_document,
    inside_strings,
    prewarm,
)
from gbnfkit.tokens._vocabulary import Vocabulary

# JSON text pieces, escapes, closing quotes followed by what may come next
_WORDS = (
    "\\u", "\\u00", "\\u00e9", "\\n", "\\\\", '\\"', "a b", "ab", "é", "中文",
    '"', '""', '":', '",', '"}', '" }', "a'}", "'}", "a'", "'", "a'\n", "a\"", 'ab"', '"]',
    '", "', '": "', "{", "}", "[", "]", ",", ":", " ", "\n", "true", "null", "kx",
    "k", "x", "1", "0.5",
)


def _vocabulary(words: tuple[str, ...] = _WORDS) -> Vocabulary:
    """The 256 bytes, ``words`` and EOS."""
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    for word in words:
        data = word.encode("utf-8")
        if data not in tokens:
            tokens.append(data)
    tokens.append(None)  # EOS
    return Vocabulary(tokens, eos_token_ids=[len(tokens) - 1])


def _check(compiled: gbnfkit.CompiledGrammar, grammar: Grammar, text: str) -> None:
    """The mask after ``text`` equals the reference's."""
    vocabulary = compiled.vocabulary
    matcher = compiled.matcher()
    matcher.accept_text(text)
    expected = reference_mask(grammar.start().feed(text.encode()), vocabulary)
    got = fast_mask(matcher, vocabulary.size)
    assert np.array_equal(expected, got), [
        vocabulary.token_bytes(int(i)) for i in np.flatnonzero(expected != got)[:5]
    ]


def test_fixed_documents_are_instances_and_their_strings_are_found() -> None:
    for grammar, text in [*fixed_documents(), format_document()]:
        assert grammar.start().feed(text.encode()).is_complete
    data = b'{"k": "a\\"b", "kx": "y"}'
    inside = [data[:i] for i in inside_strings(data)]
    # not after a name's opening quote, after a value's; an escaped quote stays inside
    assert b'{"' not in inside and b'{"k' in inside and b'{"k": "' in inside
    assert b'{"k": "a\\"' in inside and b'{"k": "a\\"b' in inside
    assert b'{"k": "a\\"b"' not in inside


def test_fixed_splits_are_made_with_the_compiler_and_keep_every_tail() -> None:
    compiler = gbnfkit.GrammarCompiler(_vocabulary())
    index = compiler._index
    assert index.fixed and not index.shared and not index.signatures
    assert all(entry.follow == -1 for entry in index.fixed.values())
    assert len(index.fixed_signatures) <= len(index.fixed)


def test_fixed_splits_serve_other_json_grammars_exactly() -> None:
    compiler = gbnfkit.GrammarCompiler(_vocabulary())
    index = compiler._index
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "tags": {"type": "array"}},
        "required": ["city"],
    }
    cases = [
        (Grammar.from_json_schema(schema), ['{"city": "', '{"city": "a b', '{"city": "x\\n']),
        (Grammar.from_json_schema({"additionalProperties": True}), ['{"na', '{"q": ["']),
        (Grammar.builtin("json"), ['["', '{"ab', '{"a": "\\u00e9 ']),
    ]
    cuts = {id(entry) for entry in index.fixed_cuts.values()}
    assert cuts
    for grammar, texts in cases:
        before = index.fixed_hits
        compiled = compiler.compile(grammar)
        for text in texts:
            _check(compiled, grammar, text)
        assert index.fixed_hits > before, grammar
        # a converter's string body is followed by its closing quote only: the cut
        # (fewer tails) serves it
        assert any(id(entry) in cuts for entry in compiled._contexts.values()), grammar


def test_a_fixed_split_keeps_the_tails_another_grammar_reads() -> None:
    """A string quoted by `'` has the json builtin's body (same canonical form), but
    what follows the body there is `'`: a split keeping only the tails starting with
    `"` (what follows it in the json grammar) would reject `a'<newline>`, which only
    its tail `'<newline>` (read by the frames below) allows."""
    grammar = Grammar.from_gbnf(
        'root ::= string "\\n"\n'
        'string ::= "\'" char* "\'"\n'
        'char ::= [^\\x00-\\x1F"\\\\] | "\\\\" escape\n'
        'escape ::= ["/\\\\bfnrt] | "u" hex hex hex hex\n'
        "hex ::= [0-9A-Fa-f]\n"
    )
    vocabulary = _vocabulary()
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    before = compiler._index.fixed_hits
    compiled = compiler.compile(grammar)
    _check(compiled, grammar, "'x")
    assert compiler._index.fixed_hits > before
    matcher = compiled.matcher()
    matcher.accept_text("'x")
    assert matcher.is_allowed(vocabulary.tokens.index(b"a'\n"))


def test_a_fixed_split_never_serves_another_form() -> None:
    """A body without `\\u` escapes has the same signature as the json builtin's body
    (so it is looked up) but not the same form: a fixed split served to it would allow
    `\\u00e9`."""
    grammar = Grammar.from_gbnf(
        'root ::= string "}"\n'
        'string ::= "\\"" char* "\\""\n'
        'char ::= [^\\x00-\\x1F"\\\\] | "\\\\" ["/\\\\bfnrt]\n'
    )
    vocabulary = _vocabulary()
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    index = compiler._index
    before = (index.fixed_hits, index.hits)
    compiled = compiler.compile(grammar)
    _check(compiled, grammar, '"x')
    assert (index.fixed_hits, index.hits) == before
    # it was looked up: its signature is a fixed one's
    assert index.fixed_signatures & set(index.signatures)
    matcher = compiled.matcher()
    matcher.accept_text('"x')
    assert not matcher.is_allowed(vocabulary.tokens.index(b"\\u00e9"))


def test_clear_shared_keeps_the_fixed_splits() -> None:
    vocabulary = _vocabulary()
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    index = compiler._index
    fixed = dict(index.fixed)
    signatures = set(index.fixed_signatures)
    grammar = Grammar.from_json_schema({"type": "array", "items": {"type": "string"}})
    _check(compiler.compile(grammar), grammar, '["ab')
    tag = Grammar.from_gbnf('root ::= "<" [^>]* ">"')
    _check(compiler.compile(tag), tag, "<ab")
    assert index.shared and index.signatures  # a tag's body is not a fixed form
    compiler.clear_cache()
    assert not index.shared and not index.signatures and not index.tails
    assert index.fixed == fixed and all(index.fixed[k] is v for k, v in fixed.items())
    assert index.fixed_signatures == signatures
    before = index.fixed_hits
    _check(compiler.compile(grammar), grammar, '["ab')
    assert index.fixed_hits > before


def test_an_index_without_prewarm_has_no_fixed_splits() -> None:
    """``gbnfkit.compile`` (one shot) and a bare index split nothing in advance;
    ``prewarm`` fills the fixed splits and leaves ``shared`` empty."""
    index = VocabularyIndex(_vocabulary())
    assert not index.fixed
    prewarm(index)
    assert index.fixed and not index.shared


def test_a_long_max_length_string_is_served_by_a_fixed_split() -> None:
    """A string of ``maxLength`` beyond the longest token's reach has one canonical
    form at its first characters, whatever the count (the chain's end is out of reach):
    the fixed split made from the prewarm's own count serves it, exactly; a count
    within reach has another form, and near its end a long string's does too."""
    vocabulary = _vocabulary()
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    index = compiler._index
    longest = index.trie.max_depth
    far = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 5 * longest}}}
    grammar = Grammar.from_json_schema(far)
    compiled = compiler.compile(grammar)
    before = index.fixed_hits
    _check(compiled, grammar, '{"s": "')
    assert index.fixed_hits > before
    for text in ('{"s": "ab', '{"s": "' + "x" * (5 * longest - 2), '{"s": "\\u00e9'):
        _check(compiled, grammar, text)
    near = {"type": "object", "properties": {"s": {"type": "string", "maxLength": longest}}}
    grammar = Grammar.from_json_schema(near)
    compiled = compiler.compile(grammar)
    before = index.fixed_hits
    for text in ('{"s": "', '{"s": "a', '{"s": "' + "x" * (longest - 1)):
        _check(compiled, grammar, text)
    assert index.fixed_hits == before


def test_format_strings_are_served_by_fixed_splits() -> None:
    """The free text of the string formats the converter writes rules for (a URI's
    host, path and query; an e-mail's local part and domain; a hostname; a UUID) is
    split by ``prewarm``: another schema's strings of those formats, other values, take
    no new wide split after ``clear_cache`` (nothing is left in the shared LRU), and
    their masks are exact."""
    words = ("http", "https", "://", "www.", ".com", ".org", "/a", "?q=", "#", "@", "-",
             "mail", "lab", "docs", "f81d", "11d0", "-7dec")
    vocabulary = _vocabulary(_WORDS + words)
    compiler = gbnfkit.GrammarCompiler(vocabulary)
    index = compiler._index
    formats = {"site": "uri", "to": "email", "host": "hostname", "id": "uuid"}
    schema = {
        "type": "object",
        "properties": {key: {"type": "string", "format": name} for key, name in formats.items()},
        "required": list(formats),
        "additionalProperties": False,
    }
    text = (
        '{"site": "ftp://docs.python.org:21/3/lib.html?x=a%20b&y#top", "to": "ann.lee+x@lab.co.uk",'
        ' "host": "db-01.internal.corp", "id": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"}'
    )
    grammar = Grammar.from_json_schema(schema)
    assert grammar.start().feed(text.encode()).is_complete
    compiler.clear_cache()
    before = index.fixed_hits
    compiled = compiler.compile(grammar)
    data = text.encode()
    for end in inside_strings(data):
        _check(compiled, grammar, data[:end].decode())
    assert index.fixed_hits > before
    assert not index.shared
