"""Load test of ``gbnfkit serve``: concurrent clients mixing schemas, tools and plain chat.

Run from the repository root (needs the ``[server]`` extra, httpx and jsonschema):

    /work/venv/bin/python bench/serve_load.py [--clients 16] [--requests 6] [--parallel 2]

It starts ``gbnfkit serve`` (the bundled model) as a separate process on 127.0.0.1 (a free
port), then runs ``--clients`` asyncio clients, each sending ``--requests`` requests in
turn, cycling through three kinds: a JSON-Schema response (validated with jsonschema), a
required tool call (arguments validated against the tool's schema) and plain chat. Every
response must be a 200 and valid; nothing may be lost. It prints requests/s, latency
p50/p99, tokens/s (completion tokens over wall time), the grammar's share of decode time
(the server's ``timings.grammar_ms`` over ``timings.predicted_ms``) and the tokens/s of
constrained requests over that of plain ones (each request's decode tokens/s, median).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import jsonschema

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "likes": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 3},
    },
    "required": ["name", "age", "likes"],
    "additionalProperties": False,
}
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 20},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "days"],
            "additionalProperties": False,
        },
    },
}
CITIES = ["Paris", "Oslo", "Lima", "Tokyo", "Cairo", "Quito"]
START_SECONDS = 60.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _request(kind: int, i: int, max_tokens: int) -> dict[str, Any]:
    city = CITIES[i % len(CITIES)]
    base: dict[str, Any] = {"seed": i, "max_tokens": max_tokens}
    if kind == 0:
        return {
            **base,
            "messages": [{"role": "user", "content": f"A person from {city}, JSON."}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "person", "schema": SCHEMA},
            },
        }
    if kind == 1:
        return {
            **base,
            "messages": [{"role": "user", "content": f"Weather in {city} soon?"}],
            "tools": [TOOL],
            "tool_choice": "required",
            "parallel_tool_calls": False,
        }
    return {**base, "messages": [{"role": "user", "content": f"Tell me about {city}."}]}


def _check(kind: int, body: dict[str, Any]) -> None:
    choice = body["choices"][0]
    if kind == 0:
        if choice["finish_reason"] != "stop":
            raise ValueError(f"schema reply cut short: {choice}")
        jsonschema.validate(json.loads(choice["message"]["content"]), SCHEMA)
    elif kind == 1:
        calls = choice["message"].get("tool_calls") or []
        if choice["finish_reason"] != "tool_calls" or not calls:
            raise ValueError(f"no tool call: {choice}")
        for call in calls:
            jsonschema.validate(
                json.loads(call["function"]["arguments"]), TOOL["function"]["parameters"]
            )
    elif not isinstance(choice["message"]["content"], str):
        raise ValueError(f"no content: {choice}")


async def _client(
    http: httpx.AsyncClient, index: int, count: int, max_tokens: int, results: list[Any]
) -> None:
    for j in range(count):
        kind = (index + j) % 3
        body = _request(kind, index * 100 + j, max_tokens)
        started = time.perf_counter()
        response = await http.post("/v1/chat/completions", json=body)
        latency = time.perf_counter() - started
        if response.status_code != 200:
            results.append((kind, latency, None, f"HTTP {response.status_code}: {response.text}"))
            continue
        data = response.json()
        try:
            _check(kind, data)
            results.append((kind, latency, data, None))
        except (ValueError, KeyError, json.JSONDecodeError, jsonschema.ValidationError) as exc:
            results.append((kind, latency, data, f"invalid: {exc}"))


async def _run(url: str, args: argparse.Namespace) -> list[Any]:
    results: list[Any] = []
    limits = httpx.Limits(max_connections=args.clients)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as http:
        await asyncio.gather(
            *(
                _client(http, i, args.requests, args.max_tokens, results)
                for i in range(args.clients)
            )
        )
    return results


def _start(args: argparse.Namespace, port: int) -> subprocess.Popen[bytes]:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    command = [
        sys.executable,
        "-m",
        "gbnfkit.cli",
        "serve",
        "--port",
        str(port),
        "--parallel",
        str(args.parallel),
        "--max-tokens",
        str(args.max_tokens),
    ]
    if args.threads:
        command += ["--threads", str(args.threads)]
    server = subprocess.Popen(command, env=env)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--requests", type=int, default=6, help="requests per client")
    parser.add_argument("--parallel", type=int, default=2, help="the server's slots")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads per slot")
    parser.add_argument("--max-tokens", type=int, default=96)
    args = parser.parse_args()
    port = _free_port()
    server = _start(args, port)
    try:
        started = time.perf_counter()
        results = asyncio.run(_run(f"http://127.0.0.1:{port}", args))
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(30)
    expected = args.clients * args.requests
    errors = [r[3] for r in results if r[3]]
    done = [r for r in results if r[2] is not None]
    latencies = sorted(r[1] for r in results)
    tokens = sum(r[2]["usage"]["completion_tokens"] for r in done)
    grammar_ms = sum(r[2]["timings"]["grammar_ms"] for r in done if r[0] != 2)
    constrained_ms = sum(r[2]["timings"]["predicted_ms"] for r in done if r[0] != 2)

    def speed(kinds: tuple[int, ...]) -> float:
        rates = [r[2]["timings"]["predicted_per_second"] for r in done if r[0] in kinds]
        return statistics.median(rates) if rates else 0.0

    free, held = speed((2,)), speed((0, 1))
    print(
        f"clients {args.clients}, requests {expected} (answered {len(results)}, "
        f"valid {len(results) - len(errors)}, errors {len(errors)}), slots {args.parallel}"
    )
    print(
        f"wall {wall:.1f} s, {len(results) / wall:.2f} requests/s, "
        f"{tokens / wall:.1f} completion tokens/s"
    )
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    print(f"latency p50 {statistics.median(latencies):.2f} s, p99 {p99:.2f} s")
    print(
        f"grammar share of constrained decode time "
        f"{100 * grammar_ms / max(constrained_ms, 1e-9):.1f}%"
    )
    print(
        f"decode tokens/s per request (median): plain {free:.1f}, constrained {held:.1f}, "
        f"ratio {held / max(free, 1e-9):.2f}x"
    )
    for error in errors[:5]:
        print("error:", error[:300])
    if errors or len(results) != expected:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
