"""The byte lowering of a small program, position by position."""

from __future__ import annotations

from gbnfkit import Grammar
from gbnfkit.tokens._byteprogram import CALL, END, TEST, lower_program
from gbnfkit.tokens._utf8 import utf8_sequences


def _bits(lo: int, hi: int) -> int:
    return sum(1 << b for b in range(lo, hi + 1))


def test_lowering_shifts_positions_after_multibyte_characters() -> None:
    grammar = Grammar.from_gbnf('root ::= "é" x | [^a]\nx ::= "b"')
    program = grammar.program
    assert program.rule_alts == ((0, 3), (5,))
    lowered = lower_program(program)
    # "é" is two byte tests, so every later position moves by one
    assert lowered.kind[:8] == (TEST, TEST, CALL, END, CALL, END, TEST, END)
    assert lowered.arg[:8] == (1 << 0xC3, 1 << 0xA9, 1, 0, 2, 0, 1 << ord("b"), 0)
    assert lowered.rules[:2] == ((0, 4), (6,))
    # [^a] has characters of every UTF-8 shape: a class rule (rule 2) after the program's,
    # its single bytes in one test, then one alternative per multi-byte sequence
    class_rule = lowered.rules[2]
    assert class_rule[0] == 8
    assert lowered.kind[8:10] == (TEST, END)
    assert lowered.arg[8] == _bits(0, 0x60) | _bits(0x62, 0x7F)
    seqs = utf8_sequences(0x80, 0x10FFFF)
    assert len(class_rule) == 1 + len(seqs)
    for start, seq in zip(class_rule[1:], seqs, strict=True):
        n = len(seq)
        assert lowered.kind[start : start + n + 1] == (TEST,) * n + (END,)
        assert lowered.arg[start : start + n] == tuple(_bits(lo, hi) for lo, hi in seq)
    assert len(lowered.kind) == class_rule[-1] + len(seqs[-1]) + 1


def test_multibyte_characters_after_single_byte_positions_and_repeated() -> None:
    # "é" first met at position 2 (positions 0-1 before it are one test each), then met
    # again: each of its positions is two tests, and each later rule start moves
    grammar = Grammar.from_gbnf('root ::= "abé" x "é"\nx ::= "é" | "c"')
    program = grammar.program
    assert program.rule_alts == ((0,), (6, 8))
    lowered = lower_program(program)
    e1, e2 = 1 << 0xC3, 1 << 0xA9
    assert lowered.kind == (TEST, TEST, TEST, TEST, CALL, TEST, TEST, END,
                            TEST, TEST, END, TEST, END)
    assert lowered.arg == (1 << ord("a"), 1 << ord("b"), e1, e2, 1, e1, e2, 0,
                           e1, e2, 0, 1 << ord("c"), 0)
    assert lowered.rules == ((0,), (8, 11))


def test_a_class_of_code_points_listed_one_by_one_is_one_alternative_per_prefix() -> None:
    """Sequences that differ only in their last byte are one alternative, whose last test
    is the union of theirs: 300 code points U+0100, U+0102, ..., U+0356 (two bytes each,
    ten lead bytes) are ten alternatives, not 300 (a state held a stack each: a class of
    170,000 such code points took 10 s to its first mask). Masks stay exact."""
    import random

    import numpy as np
    from test_masks import fast_mask, reference_mask

    from gbnfkit import GrammarCompiler, Vocabulary

    points = [chr(0x100 + 2 * i) for i in range(300)]
    grammar = Grammar.from_gbnf("root ::= [" + "".join(points) + "]+ \"!\"")
    lowered = lower_program(grammar.program)
    class_rule = lowered.rules[-1]
    leads = {c.encode()[0] for c in points}
    assert len(class_rule) == len(leads) == 10
    for start in class_rule:
        assert lowered.kind[start : start + 3] == (TEST, TEST, END)
    rng = random.Random(5)
    pieces = [c.encode() for c in points] + [chr(0x101).encode(), b"!", b"\xc4", b"\x80"]
    tokens = sorted({b"".join(rng.choices(pieces, k=rng.randint(1, 3))) for _ in range(400)})
    vocabulary = Vocabulary([*tokens, None], eos_token_ids=[len(tokens)])
    matcher = GrammarCompiler(vocabulary).compile(grammar).matcher()
    for text in ["", points[0], points[0] + points[299], points[5] * 3]:
        m = matcher.fork()
        m.accept_text(text)
        reference = reference_mask(grammar.start().feed(text), vocabulary)
        assert np.array_equal(fast_mask(m, vocabulary.size), reference), text
