"""OpenAI-style tool definitions, checked once and reduced to what the formats need."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gbnfkit._errors import ChatError

__all__ = ["Tool", "Toolset", "tools_from"]

_MAX_REFS = 32  # a $ref chain longer than this (or a loop) is left unresolved


@dataclass(frozen=True)
class Tool:
    """A tool the model may call: its name and the JSON Schema of its arguments."""

    name: str
    parameters: Mapping[str, Any]

    def property_schema(self, parameter: str) -> Mapping[str, Any] | None:
        """The schema of argument ``parameter`` (its ``$ref`` followed), or ``None`` if the
        tool does not name it."""
        properties = self.parameters.get("properties")
        if isinstance(properties, Mapping):
            schema = properties.get(parameter)
            if isinstance(schema, Mapping):
                return self.resolve(schema)
            if schema is True:
                return {}
        return None

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """``schema`` with its local ``$ref`` (``#/$defs/Color``, into the parameters
        schema) followed, its other keywords kept; as it is if the target is missing."""
        for _ in range(_MAX_REFS):
            ref = schema.get("$ref")
            if not isinstance(ref, str) or not ref.startswith("#"):
                return schema
            target: Any = self.parameters
            for part in ref[1:].split("/")[1:]:
                key = part.replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and key in target:
                    target = target[key]
                elif isinstance(target, list) and key.isdigit() and int(key) < len(target):
                    target = target[int(key)]
                else:
                    return schema
            if target is True:
                target = {}
            if not isinstance(target, Mapping):
                return schema
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema

    def standalone(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """``schema`` (a part of the parameters schema) as a schema of its own: with the
        parameters' definitions, which its ``$ref``s may name."""
        out = dict(schema)
        for key in ("$defs", "definitions"):
            if key in self.parameters and key not in out:
                out[key] = self.parameters[key]
        return out

    def property_names(self) -> tuple[str, ...]:
        properties = self.parameters.get("properties")
        return tuple(properties) if isinstance(properties, Mapping) else ()

    def required(self) -> frozenset[str]:
        required = self.parameters.get("required")
        return frozenset(required) if isinstance(required, list) else frozenset()


@dataclass(frozen=True)
class Toolset:
    """The tools of a request; ``open`` (no tools given) means any name is accepted."""

    tools: tuple[Tool, ...]
    open: bool

    def names(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self.tools)

    def get(self, name: str) -> Tool | None:
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None


def _tool(definition: object, index: int) -> Tool:
    if not isinstance(definition, Mapping):
        raise ChatError(f"tool {index} must be an object, not {type(definition).__name__}")
    function = definition.get("function", definition)
    if "type" in definition and definition["type"] != "function":
        raise ChatError(f"tool {index} has type {definition['type']!r}; only 'function' tools")
    if not isinstance(function, Mapping):
        raise ChatError(f"tool {index}: 'function' must be an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ChatError(f"tool {index} needs a non-empty string 'name'")
    if any(c in name for c in '<>"\n\\`') or name != name.strip():
        raise ChatError(f"tool {index}: the name {name!r} cannot be written in chat formats")
    parameters = function.get("parameters", {"type": "object"})
    if parameters is True:
        parameters = {"type": "object"}
    if not isinstance(parameters, Mapping):
        raise ChatError(f"tool {name!r}: 'parameters' must be a JSON Schema object")
    return Tool(name, parameters)


def tools_from(tools: Iterable[object] | Toolset | None) -> Toolset:
    """Check OpenAI-style ``tools`` (``{"type": "function", "function": {...}}`` or the bare
    ``{"name", "parameters"}``); ``None`` accepts any tool name with any JSON arguments."""
    if isinstance(tools, Toolset):
        return tools
    if tools is None:
        return Toolset((), True)
    if isinstance(tools, (str, bytes, Mapping)):
        raise ChatError("tools must be a list of tool definitions")
    checked = tuple(_tool(definition, i) for i, definition in enumerate(tools))
    seen: set[str] = set()
    for tool in checked:
        if tool.name in seen:
            raise ChatError(f"two tools are called {tool.name!r}")
        seen.add(tool.name)
    return Toolset(checked, False)
