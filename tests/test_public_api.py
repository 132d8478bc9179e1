"""The public surface of ``gbnfkit``: ``__all__``, import cost, typing marker."""

from __future__ import annotations

import importlib
import importlib.resources
import json
import subprocess
import sys
from pathlib import Path

import gbnfkit

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy's own dependency on Python 3.10
    import tomli as tomllib

HEAVY = ("transformers", "torch", "pydantic", "tokenizers", "jsonschema")


def test_all_is_sorted_and_unique() -> None:
    names = list(gbnfkit.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))


def test_every_public_name_exists_and_is_importable() -> None:
    module = importlib.import_module("gbnfkit")
    for name in gbnfkit.__all__:
        assert hasattr(module, name), name
        namespace: dict[str, object] = {}
        exec(f"from gbnfkit import {name}", namespace)  # noqa: S102 - the import itself is tested
        assert namespace[name] is getattr(module, name)


def test_public_names_are_not_private_modules() -> None:
    for name in gbnfkit.__all__:
        value = getattr(gbnfkit, name)
        assert not name.startswith("_") or name == "__version__", name
        qualname = getattr(value, "__module__", "gbnfkit")
        assert qualname.startswith("gbnfkit"), (name, qualname)


def test_exceptions_share_the_base_class() -> None:
    for name in ("GrammarError", "InputRejected", "LimitError", "SchemaError", "VocabularyError"):
        assert issubclass(getattr(gbnfkit, name), gbnfkit.GbnfkitError)


def test_version_matches_the_installed_distribution() -> None:
    from importlib.metadata import version

    assert gbnfkit.__version__ == version("gbnfkit")


def test_import_does_not_load_heavy_optional_dependencies() -> None:
    code = (
        "import json, sys\n"
        "import gbnfkit, gbnfkit.cli\n"
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(proc.stdout) == []


def test_py_typed_marker_ships() -> None:
    marker = importlib.resources.files("gbnfkit") / "py.typed"
    assert marker.is_file()
    # and the wheel includes it: setuptools copies only the declared package data
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["gbnfkit"]
