"""``--chat-template-file`` of ``gbnfkit serve`` and ``gbnfkit generate``: reading the
template, and its errors as one message."""

from __future__ import annotations

import argparse

from gbnfkit._errors import ChatTemplateError
from gbnfkit.cli._exit import CliError, ExitCode
from gbnfkit.cli._inputs import STDIN, read_source

__all__ = ["add_chat_template_argument", "read_chat_template", "template_error"]


def add_chat_template_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chat-template-file",
        metavar="PATH",
        help="a Jinja chat template (UTF-8) that replaces the model's, as llama-server's "
        "flag of that name (default: the template in the GGUF)",
    )


def read_chat_template(args: argparse.Namespace, command: str) -> str | None:
    """The text of ``--chat-template-file``, as the file holds it (``None``: not given)."""
    path: str | None = args.chat_template_file
    if path is None:
        return None
    if path == STDIN:
        raise CliError(f"gbnfkit {command}: --chat-template-file takes a file, not '-'")
    try:
        return read_source(path, "the chat template")
    except CliError as exc:
        raise CliError(exc.message.replace("gbnfkit:", f"gbnfkit {command}:", 1)) from None


def template_error(
    exc: ChatTemplateError, args: argparse.Namespace, command: str, *, rendering: bool = False
) -> CliError:
    """The message and exit status (4) for a template that is empty or not valid Jinja, or
    (``rendering``) that fails on the prompt or refuses it."""
    path: str | None = args.chat_template_file
    what = f"--chat-template-file {path!r}" if path is not None else "the model's chat template"
    problem = str(exc)
    if rendering:
        problem = f"{'it refuses' if exc.refused else 'it fails on'} the prompt: {exc}"
    if path is not None:
        return CliError(f"gbnfkit {command}: {what}: {problem}", ExitCode.USAGE)
    return CliError(
        f"gbnfkit {command}: {what}: {problem} "
        "(give one that works with --chat-template-file)",
        ExitCode.USAGE,
    )
