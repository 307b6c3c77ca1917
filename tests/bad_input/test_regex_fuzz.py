"""Fuzz lane (``-m slow``): catastrophic patterns - nested quantifiers, overlapping
alternatives under a repeat - on inputs of 20 to 10,000 characters, through the pre-tokenizer
(the regex VM's ``find_pieces``, and the scanner's ``piece_end`` for those whose pieces tile the
text; the `regex` module for those the VM does not take, such as ``(a*)*b``, on its time
budget). Each case finishes or is refused with ``RegexBudgetError`` naming the pattern; the cases
run in one child process under a time bound (:data:`LANE_SECONDS`), so a hang fails the lane
instead of stalling it. No case's time is asserted. Where the input is short enough for the
`regex` module to answer at once, a finished case must give its pieces (``finditer``'s whole
matches). ``UBPE_FUZZ_EXAMPLES`` sets the number of random patterns (default 40)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("UBPE_FUZZ_EXAMPLES", "40"))
#: the whole lane's bound: the VM refuses a catastrophic match within some million steps
#: (milliseconds), the regex module's path within ``scanner.REGEX_SECONDS`` (+ per character),
#: so the lane takes minutes; hours would mean a match a budget missed
LANE_SECONDS = 1200
LENGTHS = (20, 100, 1000, 10_000)
COMPARED_UP_TO = 30  # characters: the regex module answers these patterns at once below it
NESTED = [
    r"(a+)+$", r"(a|aa)+$", r"(a*)*b", r"(?:a+)+b", r"(a|a)+b", r"((a+)+)+c", r"(\w+\s?)+$", r"(?:a+|b)+$",
    r"(x+x+)+y", r"(?:a|ab|b)+c", r"(a?){15}a{15}", r"(\s*a\s*)+!", r"(?:\p{L}+\p{L}+)+\d", r"(a+?)+?b",
    # repeats of groups of fixed width (one counted frame each) nested in a loop
    r"(?:(?:aa)+)+b", r"(?:(?:a )+a?)+$", r"(?:aa|(?:a a){2})+!", r"(?:(?:aa){2,}?)+c",
]
ATOMS = ["a", "b", "ab", r"\w", r"\s", r"\p{L}", "[ab]", "a|b", "a|ab", "aa", "(?:a ){2}", r"a\s"]


def _random_patterns(count: int) -> list[str]:
    """Nested repeats of overlapping atoms, each followed by something the text never holds."""
    rng = random.Random(37)
    found = []
    for _ in range(count):
        inner = rng.choice(ATOMS)
        for _ in range(rng.randint(1, 3)):
            inner = f"(?:{inner}){rng.choice(['+', '*', '+?', '{1,5}'])}"
        found.append(inner.replace("*", "+", 1) + rng.choice(["$", "!", "c", r"\d"]))
    return found


def _cases() -> list[tuple[str, str]]:
    cases = []
    for pattern in NESTED + _random_patterns(EXAMPLES):
        for variant in (pattern, pattern + r"|[\s\S]"):  # the second tiles any text: the scanner's path
            for length in LENGTHS:
                for unit in ("a", "a "):
                    cases.append((variant, (unit * length)[:length - 1] + "!"))
    return cases


CHILD = textwrap.dedent("""
    import json, sys
    import regex
    import numpy as np
    from ubpe.errors import RegexBudgetError
    from ubpe.text.scanner import pretokenize

    for line in sys.stdin:
        pattern, text = json.loads(line)
        try:
            symbols, bounds = pretokenize(text, pattern)
        except RegexBudgetError as error:
            outcome = "refused" if repr(pattern) in str(error) else "refused without the pattern: " + str(error)
        else:
            outcome = "finished"
            if len(text) <= {compared}:
                data = symbols.astype(np.uint8).tobytes()
                got = [data[a:b].decode() for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
                if got != [m.group() for m in regex.finditer(pattern, text) if m.group()]:
                    outcome = "mismatch"
        print(json.dumps([pattern, len(text), outcome]), flush=True)
""").format(compared=COMPARED_UP_TO)


def test_catastrophic_patterns_finish_or_are_refused():
    cases = _cases()
    stdin = "".join(json.dumps(case) + "\n" for case in cases)
    try:
        result = subprocess.run([sys.executable, "-c", CHILD], input=stdin, capture_output=True, text=True,
                                timeout=LANE_SECONDS)
    except subprocess.TimeoutExpired as expired:
        done = (expired.stdout or b"").count(b"\n") if isinstance(expired.stdout, bytes) else \
            (expired.stdout or "").count("\n")
        pytest.fail(f"a case ran past the lane's bound: {done} of {len(cases)} cases done, next {cases[done]!r}")
    assert result.returncode == 0, result.stderr[-3000:]
    outcomes = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(outcomes) == len(cases)
    bad = [o for o in outcomes if o[2] not in ("finished", "refused")]
    assert not bad, bad[:10]
    # the lane tests what it says: catastrophic matches were refused, and the rest finished
    kinds = {o[2] for o in outcomes}
    assert kinds == {"finished", "refused"}
