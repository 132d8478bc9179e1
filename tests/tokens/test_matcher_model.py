"""Random walks of accept_token / accept_text / rollback / fork / reset on a Matcher or a
LazyMatcher, each step checked against a simple model: a fresh matcher fed again the
steps the walk kept (found no bug when written by bughunt7; kept as a guard).

A refused token or text must leave the matcher as it was; a fork must be independent of
the matcher it came from (which is checked again at the end of the walk)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from walk_tokens import WALK_GRAMMARS, WALK_TOKENS

from gbnfkit import Grammar, InputRejected, LazyMatcher, Matcher, Trigger, Vocabulary, compile

AnyMatcher = Matcher | LazyMatcher

TOKENS: list[bytes | None] = [
    *WALK_TOKENS,
    b"<t>",
    b"<",
    b"t>",
    None,
    None,
]
EOS, SPECIAL = len(TOKENS) - 2, len(TOKENS) - 1
VOCABULARY = Vocabulary(TOKENS, eos_token_ids=[EOS], special_token_ids=[SPECIAL])
GRAMMARS = [
    compile(grammar, VOCABULARY)
    for grammar in (*WALK_GRAMMARS, Grammar.from_gbnf('root ::= [^x]* "x"'))
]
# each lazy matcher also has WHOLE, which a NUL at the end of the output fires: the
# grammar then starts at the start of the output, so the probe below shows what it holds
WHOLE = Trigger.pattern_full("(?s)(.*)\x00")
TRIGGERS: list[list[Trigger] | None] = [
    None,
    [Trigger.word("<t>"), WHOLE],
    [Trigger.pattern("[0-9]{2}"), WHOLE],
    [Trigger.token(ord("3")), WHOLE],
    [Trigger.pattern_full(".*a(b)"), WHOLE],
    [Trigger.after("ab"), WHOLE],
    [Trigger.token(SPECIAL), Trigger.word("x"), WHOLE],
]
TEXTS = ["a", "b", "c", "é", "{", '"', "1", "日本", "x", "<t>", "null", ""]
Step = tuple[str, object]


def fresh(grammar: int, triggers: int) -> AnyMatcher:
    chosen = TRIGGERS[triggers]
    compiled = GRAMMARS[grammar]
    return compiled.matcher(triggers=chosen) if chosen else compiled.matcher()


def take(matcher: AnyMatcher, step: Step) -> None:
    """Advance ``matcher`` by one step: a token id or a text."""
    kind, value = step
    if kind == "token":
        assert isinstance(value, int)
        matcher.accept_token(value)
    else:
        assert isinstance(value, str)
        matcher.accept_text(value)


def replayed(grammar: int, triggers: int, steps: list[Step]) -> AnyMatcher:
    matcher = fresh(grammar, triggers)
    for step in steps:
        take(matcher, step)
    return matcher


def probed(matcher: AnyMatcher) -> tuple[object, ...]:
    """What an inactive lazy matcher's output holds (its masks allow every token whatever
    it buffered): a NUL fires WHOLE on a fork, and the replay shows the output."""
    if not isinstance(matcher, LazyMatcher) or matcher.is_active or matcher.is_terminated:
        return ()
    fork = matcher.fork()
    try:
        fork.accept_text("\x00")
    except InputRejected as error:
        return ("refused", error.text, error.position)
    return (fork.is_active, tuple(fork.allowed_token_ids().tolist()), fork.jump_forward())


def observed(matcher: AnyMatcher) -> tuple[object, ...]:
    return (
        tuple(matcher.allowed_token_ids().tolist()),
        bool(matcher.is_complete),
        bool(matcher.is_terminated),
        matcher.steps,
        matcher.jump_forward(),
        getattr(matcher, "is_active", None),
        probed(matcher),
    )


OPERATIONS = st.lists(
    st.tuples(
        # mostly allowed tokens, so that walks are long enough for deep rollbacks
        st.sampled_from(["allowed"] * 4 + ["any", "text", "rollback", "rollback", "fork", "reset"]),
        st.integers(0, 10**6),
    ),
    min_size=10,
    max_size=40,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.integers(0, len(GRAMMARS) - 1),
    st.one_of(st.just(0), st.integers(1, len(TRIGGERS) - 1)),  # a plain Matcher half the time
    OPERATIONS,
)
def test_a_walk_agrees_with_feeding_its_steps_again(
    grammar: int, triggers: int, operations: list[tuple[str, int]]
) -> None:
    matcher = fresh(grammar, triggers)
    steps: list[Step] = []
    forks: list[tuple[AnyMatcher, tuple[object, ...]]] = []
    for operation, choice in operations:
        before = observed(matcher)
        step: Step | None = None
        if operation in ("allowed", "any"):
            allowed = matcher.allowed_token_ids().tolist()
            if operation == "allowed" and allowed:
                step = ("token", allowed[choice % len(allowed)])
            else:
                step = ("token", choice % VOCABULARY.size)
        elif operation == "text":
            step = ("text", TEXTS[choice % len(TEXTS)])
        elif operation == "rollback":
            count = choice % (len(steps) + 1)
            matcher.rollback(count)
            del steps[len(steps) - count :]
        elif operation == "fork":
            forks.append((matcher, before))
            matcher = matcher.fork()
        else:
            matcher.reset()
            steps = []
        if step is not None:
            value = step[1]
            ended = bool(matcher.is_terminated)
            try:
                take(matcher, step)
            except InputRejected:
                assert observed(matcher) == before  # refused: unchanged
            else:
                if matcher.steps == before[3]:  # no step: an end again, or "" after the end
                    assert ended and value in (EOS, "")
                else:
                    assert matcher.steps == before[3] + 1
                    steps.append(step)
        assert observed(matcher) == observed(replayed(grammar, triggers, steps))
    for fork_source, seen in forks:
        assert observed(fork_source) == seen  # a fork's steps never reach its source
