"""``gbnfkit parse``: read a model's output in a chat format and print the message as JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from gbnfkit import ChatError, ChatParseError
from gbnfkit.chat import MessageStream, formats, parse_message
from gbnfkit.cli._exit import CliError, ExitCode
from gbnfkit.cli._inputs import (
    STDIN,
    add_text_arguments,
    load_json,
    reads_stdin,
    stdin_once,
    text_from_args,
)

__all__ = ["register"]

DESCRIPTION = f"""\
Read TEXT, a model's output written in chat format NAME, and print the assistant message
it holds as JSON (OpenAI style: content, reasoning_content, tool_calls with their
arguments as JSON text).

formats: {", ".join(formats())} (see docs/chat.md)

exit status:
  0  the message was printed
  1  the output does not follow the format (an unknown tool, arguments that are not
     JSON...): the position, what was expected and the line are printed
  3  the tools file is not valid JSON or holds an unusable tool definition, or
     --reasoning-open is given for a format without reasoning
  4  usage error, an input that cannot be read, or an output that cannot be written
"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "parse",
        help="read model output in a chat format (tool calls, reasoning) as JSON",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--format",
        metavar="NAME",
        required=True,
        choices=formats(),
        help="the chat format: " + ", ".join(formats()),
    )
    parser.add_argument(
        "--tools",
        metavar="FILE",
        help="a JSON list of OpenAI-style tool definitions (or an object with a 'tools' "
        "list); tool calls must name one of them (default: any tool)",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="TEXT is the start of an output still being written: print what is decided",
    )
    parser.add_argument(
        "--reasoning-open",
        action="store_true",
        help="the prompt ended with <think>: TEXT starts inside the reasoning",
    )
    parser.add_argument(
        "--deltas",
        action="store_true",
        help="print the stream's deltas (one JSON object a line, TEXT fed one character at "
        "a time) before the message",
    )
    add_text_arguments(parser, "TEXT", "the model's output (absent: standard input)")
    parser.set_defaults(run=run)


def _load_tools(path: str | None) -> list[Any] | None:
    if path is None:
        return None
    data = load_json(path, "tools file", "gbnfkit parse")
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise CliError(
            f"gbnfkit parse: {path}: expected a JSON list of tool definitions",
            ExitCode.BAD_GRAMMAR,
        )
    return data


def _dump(value: object, out: TextIO, indent: int | None = None) -> str:
    """``value`` as JSON for ``out``: characters as they are, unless ``out`` cannot encode
    them (``PYTHONIOENCODING=ascii``, a Latin-1 terminal): then ``\\u`` escapes, since the
    escapes the stream would print instead (``\\xe9``) are not JSON."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    try:
        text.encode(out.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return json.dumps(value, indent=indent)
    return text


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    stdin_once(
        "parse",
        the_tools_file=args.tools == STDIN,
        the_text=reads_stdin(args.text, args.text_file, None),
    )
    tools = _load_tools(args.tools)
    text = text_from_args(args.text, args.text_file, args.strip_newline, default=None)
    try:
        if args.deltas:
            stream = MessageStream(args.format, tools, reasoning_open=args.reasoning_open)
            for ch in text:
                for delta in stream.feed(ch):
                    print(_dump(delta.to_dict(), out), file=out)
            if args.partial:
                message = parse_message(
                    text, args.format, tools, partial=True, reasoning_open=args.reasoning_open
                )
            else:
                for delta in stream.close():
                    print(_dump(delta.to_dict(), out), file=out)
                message = stream.finish()
        else:
            message = parse_message(
                text,
                args.format,
                tools,
                partial=args.partial,
                reasoning_open=args.reasoning_open,
            )
    except ChatParseError as exc:
        print(f"gbnfkit parse: {exc}", file=err)
        return ExitCode.REJECTED
    except ChatError as exc:
        raise CliError(f"gbnfkit parse: {exc}", ExitCode.BAD_GRAMMAR) from None
    print(_dump(message.to_dict(), out, indent=2), file=out)
    return ExitCode.OK
