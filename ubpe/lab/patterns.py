r"""The experiments' one pre-tokenisation pattern for text: ``words``.

`WORDS` has GPT-2's *shape* - contractions, letter runs, digit runs, runs of other
non-space symbols, each optionally led by one space; whitespace on its own - written with
classes Python's `re` understands (``[^\W\d_]`` for "letters", ``\d`` for digits), so the
reference ubpe 0.3.0 (which compiles patterns with `re`) can run it too. It is *not*
tiktoken's ``gpt2`` pattern (the ``gpt2`` preset of ``ubpe.text.patterns``, with ``\p{L}`` and
``\p{N}``), hence its own name:

- ubpe compiles it with the `regex` module, whose ``\w`` includes combining marks, so a
  letter run keeps its marks (``नमस्ते`` is one part; ``\p{L}+`` cuts it into six);
- `re`'s ``\w`` has no combining marks but has non-decimal numerals (``²``), so on scripts
  with combining marks the reference splits differently. On the benchmarks' English prose
  the two agree.

Configs say ``regex = "words"``; the benchmarks and `experiments.beam_gap` use `WORDS`.

>>> import regex
>>> regex.findall(WORDS, "They'll pay 42 dollars!")
['They', "'ll", ' pay', ' 42', ' dollars', '!']
>>> regex.findall(WORDS, "नमस्ते दुनिया")
['नमस्ते', ' दुनिया']
"""

from __future__ import annotations

from ubpe.splitting import WORDS  # noqa: E402  (one definition: the library splits it natively)

#: Pre-tokenisation presets a dataset can name with ``regex = "<preset>"`` in a config.
PRESETS: dict[str, str] = {"words": WORDS}
