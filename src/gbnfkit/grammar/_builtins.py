"""The grammars shipped with gbnfkit (``builtins/NAME.gbnf``)."""

from __future__ import annotations

from importlib import resources

from gbnfkit._errors import GrammarError

__all__ = ["builtin_names", "builtin_text"]

_NAMES = ("json", "json_arr", "arithmetic", "list", "chess", "c", "english")


def builtin_names() -> tuple[str, ...]:
    """Names of the builtin grammars."""
    return _NAMES


def builtin_text(name: str) -> str:
    """The GBNF text of the builtin grammar ``name``.

    Raises:
        GrammarError: ``name`` is not a builtin grammar (the message lists them).
    """
    if name not in _NAMES:
        raise GrammarError(
            f"unknown builtin grammar {name!r}; the builtin grammars are " + ", ".join(_NAMES)
        )
    return (resources.files("gbnfkit.grammar") / "builtins" / f"{name}.gbnf").read_text(
        encoding="utf-8"
    )
