"""Which slot a request gets: the free one whose model caches most of its prompt."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, cast

from serve_cases import user
from starlette.testclient import TestClient

from gbnfkit.integrations.llama_cpp import LlamaRunner
from gbnfkit.server import Engine
from gbnfkit.server._slots import SlotPool


class FakeRunner:
    """A slot whose cache holds ``held``."""

    def __init__(self, name: str, held: Sequence[int]) -> None:
        self.name, self.held = name, list(held)

    def cached_prefix(self, prompt_ids: Sequence[int]) -> int:
        n = 0
        for a, b in zip(self.held, prompt_ids, strict=False):
            if a != b:
                break
            n += 1
        return n


def pool(*runners: FakeRunner) -> SlotPool:
    return SlotPool(cast(list[LlamaRunner], list(runners)))


def name(runner: Any) -> str:
    return str(runner.name)


def test_a_request_takes_the_free_slot_caching_most_of_its_prompt() -> None:
    async def main() -> list[str]:
        slots = pool(FakeRunner("a", [1, 2, 3]), FakeRunner("b", [1, 5, 6, 7]), FakeRunner("c", []))
        first = await slots.take([1, 5, 6, 9])  # b holds 3 of it
        second = await slots.take([1, 2, 3, 4])  # a holds 3
        third = await slots.take([8])  # c, the only one left
        slots.give(second)
        fourth = await slots.take([9])  # nothing cached anywhere: the free one
        return [name(r) for r in (first, second, third, fourth)]

    assert asyncio.run(main()) == ["b", "a", "c", "a"]


def test_waiting_requests_get_freed_slots_in_arrival_order_and_a_cancelled_one_none() -> None:
    async def main() -> list[str]:
        slots = pool(FakeRunner("a", [1]))
        held = await slots.take([1])
        order: list[str] = []

        async def request(tag: str) -> None:
            runner = await slots.take([1])
            order.append(tag)
            slots.give(runner)

        early = asyncio.create_task(request("early"))
        gone = asyncio.create_task(request("gone"))
        late = asyncio.create_task(request("late"))
        await asyncio.sleep(0)
        gone.cancel()  # went away while waiting: no slot is kept for it
        await asyncio.sleep(0)
        slots.give(held)
        await asyncio.gather(early, late)
        assert gone.cancelled()
        again = await slots.take([2])  # the one slot came back
        return [*order, name(again)]

    assert asyncio.run(main()) == ["early", "late", "a"]


def test_a_slot_handed_to_a_request_cancelled_before_it_ran_is_given_back() -> None:
    async def main() -> str:
        slots = pool(FakeRunner("a", []))
        held = await slots.take([1])
        waiter = asyncio.create_task(slots.take([1]))
        await asyncio.sleep(0)
        slots.give(held)  # handed to the waiter, which is cancelled before it resumes
        waiter.cancel()
        await asyncio.sleep(0)
        assert waiter.cancelled()
        return name(await asyncio.wait_for(slots.take([1]), timeout=1))

    assert asyncio.run(main()) == "a"


def test_a_shared_system_prompt_is_evaluated_once(client: TestClient, engine: Engine) -> None:
    """The second request with the same system prompt takes the slot that evaluated it
    (llama-server's prompt cache and ``prompt_tokens_details.cached_tokens``)."""
    system = {"role": "system", "content": "You are a terse assistant. " * 20}
    replies = []
    for question in ("Name a color.", "Name a fruit.", "Name a planet."):
        response = client.post(
            "/v1/chat/completions",
            json={"messages": [system, *user(question)], "max_tokens": 3, "seed": 1},
        )
        assert response.status_code == 200, response.text
        replies.append(response.json())
    prefix = engine.chat_prompt([system])
    for reply in replies[1:]:
        usage, timings = reply["usage"], reply["timings"]
        cached = usage["prompt_tokens_details"]["cached_tokens"]
        assert len(prefix) // 2 < cached < usage["prompt_tokens"]
        assert timings["cache_n"] == cached
        assert timings["prompt_n"] == usage["prompt_tokens"] - cached


def test_cache_prompt_false_evaluates_the_whole_prompt(client: TestClient) -> None:
    body = {"messages": user("Name a river."), "max_tokens": 2, "seed": 1}
    assert client.post("/v1/chat/completions", json=body).status_code == 200  # a slot holds it
    for cache_prompt, expect_cached in ((True, True), (False, False)):
        response = client.post("/v1/chat/completions", json={**body, "cache_prompt": cache_prompt})
        assert response.status_code == 200, response.text
        reply = response.json()
        cached = reply["usage"]["prompt_tokens_details"]["cached_tokens"]
        assert (cached > 0) == expect_cached
        assert reply["timings"]["prompt_n"] == reply["usage"]["prompt_tokens"] - cached
    refused = client.post("/v1/chat/completions", json={**body, "cache_prompt": "no"})
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "cache_prompt"


def test_completions_take_cache_prompt_too(client: TestClient) -> None:
    body = {"prompt": "The longest river in Europe is", "max_tokens": 2, "seed": 1}
    first = client.post("/v1/completions", json=body).json()
    again = client.post("/v1/completions", json=body).json()
    fresh = client.post("/v1/completions", json={**body, "cache_prompt": False}).json()
    prompt = first["usage"]["prompt_tokens"]
    assert again["usage"]["prompt_tokens_details"]["cached_tokens"] == prompt - 1
    assert fresh["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    assert again["choices"][0]["text"] == fresh["choices"][0]["text"] == first["choices"][0]["text"]
