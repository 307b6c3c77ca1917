"""tiktoken's ``.tiktoken`` files: one ``base64(bytes) rank`` line per mergeable token.

The file holds neither the pre-tokenization pattern nor the special tokens: a reader gets them
from its caller (``ubpe.load(path, pattern="gpt2", special_tokens={...})``; on the command
line ``ubpe convert FILE model.json --pattern gpt2``). Without one:

* a file that tiktoken itself publishes (or whisper ships) is recognised by its SHA-256 and read
  with the pattern of its encoding (`PINNED_FILES`): ``r50k_base`` / ``p50k_base`` (and whisper's
  ``gpt2.tiktoken``, the same bytes) and whisper's ``multilingual.tiktoken`` with ``gpt2``,
  ``cl100k_base`` with ``cl100k``, ``o200k_base`` with ``o200k`` -- what
  ``tiktoken.get_encoding(name)`` pairs with the same file;
* any other file is read with :data:`DEFAULT_TIKTOKEN_PATTERN` (``cl100k``, the library's
  default, by the API and the command line alike) and an `IgnoredInputWarning` that names it
  and how to name another (one ``ubpe: warning:`` line on the command line).

Why a warning naming the default, not an error, nor silence: tiktoken never guesses a pattern
(``tiktoken.Encoding`` requires ``pat_str``; ``get_encoding`` binds each published file to its
own), so a guess must never be silent -- whisper's GPT-2 ranks read with cl100k give other
ids than tiktoken's on 164 of the 1,112 varied texts of ``tests/vocab_corpora.py`` (592 of
1,485 in issue 26). But the files tiktoken users hold are the published ones,
which need no guess here (their hashes say which), and the files ubpe writes are cl100k unless
their writer was warned (`write` names the ``pattern=`` to read them back with), so an error
would only break reading those back (and the API and CLI default that issue 13 settled).

tiktoken's loader decodes the token field without validating it, so a field of padding alone
(``=``, whisper's ``multilingual.tiktoken`` line 50,257) is the empty token ``b""``; that is
the only field strict base64 refuses that is read here. The empty token can never be produced
by BPE (tiktoken's neither), so the model is built from the other tokens: the ids of every
text are tiktoken's. (Its rank is then no id of the model: ``decode`` of it raises where
tiktoken writes nothing, and ``n_vocab`` is one less when it is the last rank and there are no
special tokens; keeping it would take an empty mergeable token in
:class:`~ubpe.models.bytelevel.ByteLevelBPE`.)

>>> parse_tiktoken("YQ== 0\\nYg== 1\\n= 2\\n")
{b'a': 0, b'b': 1, b'': 2}
>>> detect(b"IQ== 0\\nIg== 1\\n"), detect(b'{"a": 1}')
(True, False)
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping

from ubpe_native._numpy import np

from ..text.presets import DEFAULT_PATTERN, PATTERNS
from ..errors import IgnoredInputWarning, InvalidParameterError, ModelFormatError
from ..files import sha256_hex, write_atomically
from .format import Format
from .sniff import tiktoken as detect

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

_PADDING = "="
#: tiktoken's ranks are 32-bit (``Rank = u32`` in its Rust core): a larger one it cannot load
MAX_RANK = 2**32 - 1
MAX_RANK_DIGITS = len(str(MAX_RANK))

#: whose code point classes a ``.tiktoken`` file's model splits by (`ByteLevelBPE.unicode`):
#: tiktoken's, so that it gives tiktoken's ids on every code point
UNICODE = "tiktoken"
#: the pattern a ``.tiktoken`` file is read with when none is given and it is not pinned (API and CLI)
DEFAULT_TIKTOKEN_PATTERN = DEFAULT_PATTERN

#: SHA-256 of a published ``.tiktoken`` file -> the pattern preset of its encoding: the
#: ``expected_hash`` of tiktoken's ``tiktoken_ext/openai_public.py`` (0.14.0) with its
#: ``pat_str``, and whisper's ``multilingual.tiktoken`` (openai-whisper 20250625), which
#: ``whisper/tokenizer.py`` reads with GPT-2's pattern (``gpt2.tiktoken`` is r50k_base's bytes).
PINNED_FILES: dict[str, str] = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": "gpt2",  # r50k_base
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": "gpt2",  # p50k_base
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": "cl100k",  # cl100k_base
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": "o200k",  # o200k_base
    "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126": "gpt2",  # whisper multilingual
}


def read(
    path: str | os.PathLike, *, pattern: str | None = None, special_tokens: Mapping[str, int] | None = None
) -> Any:
    """A :class:`~ubpe.models.bytelevel.ByteLevelBPE` from a ``.tiktoken`` file (e.g.
    ``cl100k_base.tiktoken``) with the ``pattern`` and ``special_tokens`` that go with it
    (without ``pattern``: see the module docstring)."""
    try:
        with open(path, "rb") as file:  # (not pathlib: it imports re and urllib, ~10 ms of a cold load)
            data = file.read()
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path} is not a .tiktoken file (not ASCII): {exc}") from None
    if not text.strip():
        raise ModelFormatError(f"{path} is an empty file, not a .tiktoken model")
    if pattern is None:
        pattern = pattern_of(data, path)
    from ubpe_native._base64_lines import parse_lines, ranked_tables  # (here: detection imports this module for every file)

    from ..models.bytelevel import ByteLevelBPE

    tables = ranked_tables(data)  # the whole file in C, checked, without numpy; None: see below
    if tables is not None:
        return ByteLevelBPE._from_tables(tables, pattern=pattern, special_tokens=special_tokens, unicode=UNICODE)
    from ..models.bytelevel_trainer import gather_pieces

    tokens = parse_lines(data, True)  # the whole file in C; None: read it line by line
    if tokens is not None:
        pieces, offsets, ranks = tokens
        kept = np.flatnonzero(np.diff(offsets) > 0)  # the empty token: never made by BPE (see the module docstring)
        if len(kept) < len(ranks):
            (pieces, offsets), ranks = gather_pieces(pieces, offsets, kept), ranks[kept]
        try:
            return ByteLevelBPE.from_token_arrays(pieces, offsets, ranks, pattern=pattern, special_tokens=special_tokens,
                                                  unicode=UNICODE)
        except ModelFormatError:
            pass  # a token twice...: read line by line, which names the line
    ranks_of = parse_tiktoken(text, str(path))
    ranks_of.pop(b"", None)  # the empty token: never made by BPE (see the module docstring)
    return ByteLevelBPE.from_mergeable_ranks(ranks_of, pattern=pattern, special_tokens=special_tokens, unicode=UNICODE)


def pattern_of(data: bytes, path: str | os.PathLike = "<bytes>") -> str:
    """The pattern preset a ``.tiktoken`` file's bytes are read with when the caller names
    none: its encoding's if the file is pinned (`PINNED_FILES`), else
    :data:`DEFAULT_TIKTOKEN_PATTERN` with an `IgnoredInputWarning` saying so."""
    pinned = PINNED_FILES.get(sha256_hex(data))
    if pinned is not None:
        return pinned
    warnings.warn(
        f"{path}: a .tiktoken file does not record its pattern and this is no published file: read "
        f"with the default {DEFAULT_TIKTOKEN_PATTERN!r}; if it was made with another, name it: "
        f"pattern='gpt2' (CLI: ubpe convert {os.path.basename(path)} model.json --pattern gpt2), or o200k, "
        f"llama3, a regex",
        IgnoredInputWarning,
        stacklevel=4,
    )
    return DEFAULT_TIKTOKEN_PATTERN


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write the mergeable tokens of a byte-level tokenizer, by rank. The pattern and the
    special tokens are not part of the format."""
    ranks_of = getattr(tokenizer, "mergeable_ranks", None)
    if ranks_of is None:
        raise InvalidParameterError(
            f".tiktoken holds byte-level vocabularies; this is a {getattr(tokenizer, 'variant', type(tokenizer).__name__)} model"
        )
    pattern = getattr(tokenizer, "pattern", None)
    if pattern is not None and pattern != PATTERNS[DEFAULT_TIKTOKEN_PATTERN]:
        preset = next((name for name, text in PATTERNS.items() if text == pattern), None)
        warnings.warn(
            f"{path}: a .tiktoken file does not record the pattern; this model's "
            f"({preset or 'a custom regex'}) is not the {DEFAULT_TIKTOKEN_PATTERN} that readers assume: "
            f"read it with pattern={preset or '<the regex>'!r} (CLI: ubpe convert {os.path.basename(path)} "
            f"model.json --pattern {preset or 'REGEX'})",
            IgnoredInputWarning,
            stacklevel=3,
        )
    import base64  # (here, as in parse_tiktoken: a load does not need it, and it imports re)

    lines = [
        f"{base64.b64encode(piece).decode('ascii')} {rank}\n"
        for piece, rank in sorted(ranks_of().items(), key=lambda item: item[1])
    ]
    write_atomically(path, "".join(lines))


def parse_tiktoken(text: str, where: str = "<string>") -> dict[bytes, int]:
    """``bytes -> rank`` from the lines of a ``.tiktoken`` file; blank lines are skipped."""
    import base64
    import binascii

    ranks: dict[bytes, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ModelFormatError(f"{where}:{number}: expected 'base64 rank', got {line[:80]!r}")
        encoded, rank = fields
        if not encoded.strip(_PADDING):  # tiktoken's loader reads padding alone as b"" (see EMPTY_TOKEN)
            piece = b""
        else:
            try:
                piece = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise ModelFormatError(f"{where}:{number}: {encoded[:40]!r} is not base64") from None
        if not (rank.isascii() and rank.isdigit()):
            raise ModelFormatError(f"{where}:{number}: rank {rank[:20]!r} is not a non-negative integer")
        if len(rank) > MAX_RANK_DIGITS or int(rank) > MAX_RANK:
            raise ModelFormatError(f"{where}:{number}: rank {rank[:20]}{'...' if len(rank) > 20 else ''} "
                                   f"is past tiktoken's 32-bit ranks (at most {MAX_RANK})")
        if piece in ranks:
            raise ModelFormatError(f"{where}:{number}: token {piece!r} appears twice")
        ranks[piece] = int(rank)
    return ranks


FORMAT = Format("tiktoken", ".tiktoken", detect, read, write, hints=("pattern", "special_tokens"))
