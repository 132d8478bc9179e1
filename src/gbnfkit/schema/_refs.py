"""``$ref`` resolution inside one schema document: JSON pointers, ``$anchor``, ``$id``."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from gbnfkit._errors import SchemaError

__all__ = ["Resolver", "pointer_token"]


def pointer_token(token: str) -> str:
    """``token`` (a key or index) as one reference token of a JSON pointer (RFC 6901:
    ``~`` as ``~0``, ``/`` as ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


class Resolver:
    """Finds the target of a ``$ref`` and its JSON pointer in the root document."""

    def __init__(self, root: Any, scoped: bool = True) -> None:
        """``scoped``: a ``$ref`` is resolved against the base URI of the nearest schema
        around it with an ``$id`` (2019-09 on); otherwise against the root's (drafts 3-7,
        where ``$id`` beside ``$ref`` is ignored and draft 4 spells it ``id``)."""
        self.root = root
        base = root.get("$id", "") if isinstance(root, dict) else ""
        self.base = base if isinstance(base, str) else ""  # a malformed $id is ignored
        self.scoped = scoped
        self.ids: dict[str, str] = {}  # absolute URI without fragment -> pointer
        self.bases: dict[str, str] = {}  # pointer of a schema with an $id -> its base URI
        self.anchors: dict[tuple[str, str], str] = {}  # (uri, anchor) -> pointer
        self._index(root, "", self.base if isinstance(self.base, str) else "")
        self.nested_ids = bool(self.bases.keys() - {""})  # a schema below the root has an $id

    def _index(self, root: Any, root_ptr: str, root_base: str) -> None:
        # depth first, in document order (the first of equal ids and anchors wins), with
        # a stack: a document nests as deep as its author made it; a value that is
        # neither a dict nor a list holds no schema (no entry, no pointer)
        stack: list[tuple[Any, str, str]] = [(root, root_ptr, root_base)]
        while stack:
            node, ptr, base = stack.pop()
            if isinstance(node, dict):
                node_id = node.get("$id")
                if isinstance(node_id, str) and not node_id.startswith("#"):
                    base = urljoin(base, node_id)
                    self.ids.setdefault(urldefrag(base)[0], ptr)
                    self.bases[ptr] = base
                elif isinstance(node_id, str) and node_id.startswith("#") and len(node_id) > 1:
                    self.anchors.setdefault((urldefrag(base)[0], node_id[1:]), ptr)  # draft 7
                anchor = node.get("$anchor")
                if isinstance(anchor, str):
                    self.anchors.setdefault((urldefrag(base)[0], anchor), ptr)
                stack.extend(reversed([
                    (v, f"{ptr}/{pointer_token(k)}", base) for k, v in node.items()
                    if isinstance(v, (dict, list))
                    and k not in ("enum", "const", "examples", "default")]))
            elif isinstance(node, list):
                stack.extend(reversed([(v, f"{ptr}/{i}", base) for i, v in enumerate(node)
                                       if isinstance(v, (dict, list))]))

    def base_at(self, where: str) -> str:
        """The base URI at pointer ``where``: that of the nearest schema with an ``$id``
        that holds it (the root's if none)."""
        ptr = where
        while ptr not in self.bases:
            if not ptr:
                return self.base
            ptr = ptr.rpartition("/")[0]
        return self.bases[ptr]

    def pointer_get(self, pointer: str, where: str) -> Any:
        node = self.root
        if pointer in ("", "/"):
            return node
        for raw in pointer.lstrip("/").split("/"):
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise SchemaError(f"$ref target #{pointer} does not exist", keyword="$ref",
                                  pointer=where)
        return node

    def resolve(self, ref: str, where: str) -> tuple[Any, str]:
        """(target schema, its JSON pointer) for ``ref`` found at pointer ``where``."""
        if not isinstance(ref, str):
            raise SchemaError("$ref must be a string", keyword="$ref", pointer=where)
        base = self.base_at(where) if self.scoped else self.base
        absolute = urljoin(base, ref) if base else ref
        doc, frag = urldefrag(absolute)
        if doc and doc != urldefrag(self.base)[0]:
            if doc not in self.ids:
                raise SchemaError(
                    f"$ref {ref!r} points outside this schema (external references are not "
                    "fetched)", keyword="$ref", pointer=where)
            start = self.ids[doc]
        else:
            start = ""
        if frag and not frag.startswith("/"):
            key = (doc or urldefrag(base)[0], frag)
            if key not in self.anchors:
                raise SchemaError(f"$ref anchor {ref!r} is not defined", keyword="$ref",
                                  pointer=where)
            ptr = self.anchors[key]
        else:
            ptr = start + frag
        return self.pointer_get(ptr, where), ptr
