"""PEG parser combinators for reading model output: partial (streaming) parsing, JSON
parsers, tagged AST nodes, and GBNF generation from the same definition.

>>> from gbnfkit import peg
>>> p = "<think>" + peg.tag("reasoning", peg.until("</think>")) + "</think>" + peg.rest()
>>> p.parse("<think>hm</think>ok").nodes[0].text
'hm'
>>> p.parse("<think>hm</thi", partial=True).status
<ParseStatus.NEED_MORE_INPUT: 'need_more_input'>

See docs/peg.md.
"""

from __future__ import annotations

from gbnfkit._errors import ParseError, PegError
from gbnfkit.peg._combinators import (
    any,
    atomic,
    chars,
    choice,
    end,
    eps,
    literal,
    negate,
    one_or_more,
    optional,
    peek,
    ref,
    repeat,
    rest,
    rule,
    schema,
    sequence,
    space,
    start,
    tag,
    trigger_rule,
    until,
    until_one_of,
    zero_or_more,
)
from gbnfkit.peg._incremental import IncrementalParser
from gbnfkit.peg._json import (
    json,
    json_array,
    json_bool,
    json_member,
    json_null,
    json_number,
    json_object,
    json_string,
    json_string_content,
)
from gbnfkit.peg._lazy import LazyGrammar
from gbnfkit.peg._nodes import Kind, Parser
from gbnfkit.peg._result import AstNode, ParseResult, ParseStatus

__all__ = [
    "AstNode",
    "IncrementalParser",
    "Kind",
    "LazyGrammar",
    "ParseError",
    "ParseResult",
    "ParseStatus",
    "Parser",
    "PegError",
    "any",
    "atomic",
    "chars",
    "choice",
    "end",
    "eps",
    "json",
    "json_array",
    "json_bool",
    "json_member",
    "json_null",
    "json_number",
    "json_object",
    "json_string",
    "json_string_content",
    "literal",
    "negate",
    "one_or_more",
    "optional",
    "peek",
    "ref",
    "repeat",
    "rest",
    "rule",
    "schema",
    "sequence",
    "space",
    "start",
    "tag",
    "trigger_rule",
    "until",
    "until_one_of",
    "zero_or_more",
]
