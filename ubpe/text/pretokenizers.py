"""llama.cpp's pre-tokenizers: the regex lists of ``tokenizer.ggml.pre``, applied as llama.cpp does.

llama.cpp (``src/llama-vocab.cpp``, ``src/unicode.cpp``) cuts text with a *list* of regexes:
each one splits every piece the previous ones left, and the text between matches stays a piece
of its own (unlike tiktoken, nothing is dropped). Each regex runs one of three ways, and so does
:class:`Pretokenizer`:

* a few well-known patterns (GPT-2's, Llama 3's, Qwen2's, Qwen3.5's) have hand-written
  scanners in llama.cpp; here they are the equivalent ``regex`` patterns on the real text
  (an unassigned code point, flagged UNDEFINED there, is one of ``[^\\s\\p{L}\\p{N}]`` as in
  the pattern), classifying code points by llama.cpp's Unicode on the regex VM
  (``compile_pattern(pattern, "llama.cpp")``), by the `regex` module's on the Python path;
* a regex with Unicode classes (``\\p{L}``...) runs on a *collapsed* copy of the text in which
  every non-ASCII character is replaced by one byte standing for its class (letter, number,
  punctuation, mark, symbol, whitespace, other), and each ``\\p{..}`` by that byte plus the
  ASCII members of the class -- llama.cpp's workaround for ``std::regex``;
* any other regex runs on the text with non-ASCII whitespace replaced by U+000B.

Natively (``Pretokenizer.vm_patterns``), every regex of a list is one program of the kernel's
regex VM, whose one-code-point atoms are the classes of code points whose collapsed or widened
stand-in the atom matches (`vm_pattern`); ``ubpe_native._multipass`` runs the passes over many
texts without the GIL, cutting where :meth:`Pretokenizer.split` cuts - except that the
scanners' patterns classify by llama.cpp's Unicode there: on a text holding a code point the
two classify apart (`scanner_unsafe`), only the VM is llama.cpp's.

>>> Pretokenizer.for_pre("gpt-2").split("Hello  world's 123")
['Hello', ' ', ' world', "'s", ' 123']
>>> Pretokenizer.for_pre("llama-bpe").split("Hello 12345!!\\n\\n")
['Hello', ' ', '123', '45', '!!\\n\\n']
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from _thread import allocate_lock  # threading.Lock without importing threading (~0.4 ms)
import unicodedata
from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)
from collections.abc import Callable, Iterable, Iterator

from ubpe_native._numpy import np

from .._lazy import re, regex  # (re: with enum ~5 ms of a byte-level tokenizer.json's cold load; GGUF's lists only)
from ..errors import ModelFormatError
from ..tables_cache import cached_arrays

# The regex lists of llama.cpp's llm_tokenizer_bpe, by pre-tokenizer type, character for character.
_GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
_LLAMA3 = r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
_QWEN2 = r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
_QWEN35 = r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
# (non-ASCII characters escaped: the source's exact code points, safe from normalisation)
_DEEPSEEK_LETTERS = (
    "\\s?[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    "\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
    "\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4"
    "\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b"
    "\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+"
)
_DEEPSEEK_PUNCT = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
REGEXES: dict[str, tuple[str, ...]] = {
    "default": (r"[\p{P}\$\+<=>\^~\|]+", _GPT2, r"\p{N}+", "[0-9][0-9][0-9]"),
    "llama3": (_LLAMA3,),
    "deepseek-llm": ("[\r\n]", _DEEPSEEK_LETTERS, _DEEPSEEK_PUNCT, "\\s+$", _CJK, r"\p{N}+"),
    "deepseek-coder": ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK, r"\p{N}"),
    "falcon": (r"[\p{P}\$\+<=>\^~\|`]+", _GPT2, "[0-9][0-9][0-9]"),
    "starcoder": (r"\p{N}", _GPT2),
    "gpt2": (_GPT2,),
    "qwen2": (_QWEN2,),
    "qwen35": (_QWEN35,),
}
# llama.cpp's LLAMA_VOCAB_PRE_TYPE_LLAMA3 names (llama_vocab::impl::load)
_LLAMA3_NAMES = ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                 "jina-v5-nano")
# tokenizer.ggml.pre -> (pre-tokenizer type, llama.cpp's ignore_merges)
PRE_TYPES: dict[str, tuple[str, bool]] = {
    "default": ("default", False),
    **{name: ("llama3", True) for name in _LLAMA3_NAMES},
    "dbrx": ("llama3", False),
    "smaug-bpe": ("llama3", False),
    "deepseek-llm": ("deepseek-llm", False),
    "deepseek-coder": ("deepseek-coder", False),
    "falcon": ("falcon", False),
    **{name: ("starcoder", False) for name in ("starcoder", "refact", "command-r", "smollm",
                                               "codeshell", "exaone", "minerva-7b")},
    **{name: ("gpt2", False) for name in ("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat",
                                          "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
                                          "modern-bert", "mpt", "olmo", "jais", "trillion",
                                          "granite-docling", "jina-v1-en", "jina-v2-code",
                                          "roberta-bpe")},
    **{name: ("qwen2", False) for name in ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2",
                                           "stablelm2", "hunyuan", "solar-open")},
    "qwen35": ("qwen35", False),
}
#: ``tokenizer.ggml.pre`` values for which llama.cpp sets ``add_bos = true`` (llama_vocab::impl::load:
#: the Llama 3 names; also ``tekken`` and ``chameleon``, pre-tokenizers ubpe does not read); a
#: file's ``tokenizer.ggml.add_bos_token`` key, where present, decides instead. Every other
#: ``gpt2``-type vocabulary adds no BOS unless its file says so.
ADDS_BOS: frozenset[str] = frozenset(_LLAMA3_NAMES)

# llama.cpp's hand-written scanners, as regex patterns: the same alternatives, and a final single
# character for what no rule matches. Their "punctuation" rule takes any code point that is no
# whitespace, letter (or mark, Qwen3.5's) or number and has flags, and every code point has
# some (an unassigned one: UNDEFINED), so it takes unassigned ones too.
_CUSTOM: dict[str, str] = {
    _GPT2: r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+|(?s:.)""",
    _LLAMA3: r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+|(?s:.)""",
    _QWEN2: r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+|(?s:.)""",
    _QWEN35: r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+|(?s:.)""",
}

# Collapsed text: one character per class (llama.cpp's k_ucat_cpt), and the ASCII members of
# each class (k_ucat_map) that the class stands for in a collapsed regex.
_CLASS_CHAR = {"N": "\xd1", "L": "\xd2", "P": "\xd3", "M": "\xd4", "S": "\xd5"}
_OTHER_CHAR = "\xd0"
_SPACE_CHAR = "\x0b"
_CLASS_ASCII = {
    "N": "0-9",
    "L": "A-Za-z",
    "P": "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}",
    "M": "",
    "S": "\\$\\+<-=>\\^`\\|~",
}


@functools.lru_cache(maxsize=None)
def _property() -> re.Pattern:
    """A ``\\p{..}`` class of the collapsed text (compiled when first used: see the imports)."""
    return re.compile(r"\\p\{(L[ultmo]?|N|P|M|S)\}")


# White_Space code points (llama.cpp's unicode_set_whitespace)
_WHITESPACE = frozenset([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                         0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


@functools.lru_cache(maxsize=65536)
def _collapsed_char(char: str) -> str:
    if ord(char) in _WHITESPACE:
        return _SPACE_CHAR
    return _CLASS_CHAR.get(unicodedata.category(char)[0], _OTHER_CHAR)


def _collapse_text(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c if c < "\x80" else _collapsed_char(c) for c in text)


def _widen_text(text: str) -> str:
    if text.isascii():
        return text
    return "".join(_SPACE_CHAR if c >= "\x80" and ord(c) in _WHITESPACE else c for c in text)


def _regex_atoms(expression: str) -> Iterator[tuple[str, bool]]:
    """The atoms of a regex in order, each with whether it stands inside a character class:
    an escape (``\\$``, ``\\\\``, ``\\p{L}`` whole), a class's opening ``[`` or ``[^`` (with
    a ``]`` right after it, which Python reads as a member), its closing ``]``, or one
    character. They concatenate to ``expression``.

    >>> list(_regex_atoms(r"a[\\$]$"))
    [('a', False), ('[', True), ('\\\\$', True), (']', True), ('$', False)]
    """
    inside = False
    i = 0
    while i < len(expression):
        c = expression[i]
        if c == "\\":
            found = _property().match(expression, i)
            end = found.end() if found else min(i + 2, len(expression))
            yield expression[i:end], inside
            i = end
        elif c == "[" and not inside:
            end = i + 1
            if expression.startswith("^", end):
                end += 1
            if expression.startswith("]", end):  # a first "]" is a member, not the end
                end += 1
            inside = True
            yield expression[i:end], True
            i = end
        elif c == "]" and inside:
            yield c, True
            inside = False
            i += 1
        else:
            yield c, inside
            i += 1


def _end_anchors(atoms: Iterable[tuple[str, bool]]) -> str:
    """The atoms joined, each end anchor ``$`` (unescaped, outside a class) as ``\\Z``:
    ECMAScript's ``$`` (llama.cpp's ``std::regex``) is the end of the input, where Python's
    would also match before a final newline. An escaped ``\\$`` or a ``$`` in a class is a
    dollar sign and stays one.

    >>> _end_anchors(_regex_atoms(r"\\s+$|[\\$$]+\\$"))
    '\\\\s+\\\\Z|[\\\\$$]+\\\\$'
    """
    return "".join(r"\Z" if atom == "$" and not inside else atom for atom, inside in atoms)


def _collapse_regex(expression: str) -> str:
    """llama.cpp's collapsed regex: ``\\p{X}`` -> its class character and ASCII members
    (bare, inside a class; as a class of their own outside one); end anchors as in
    `_end_anchors`; every other atom, escapes and classes included, unchanged.

    >>> _collapse_regex(r"[\\p{N}\\$]+|\\p{N}$") == "[\\xd10-9\\\\$]+|[\\xd10-9]\\\\Z"
    True
    """

    def collapsed(atoms: Iterable[tuple[str, bool]]) -> Iterator[tuple[str, bool]]:
        for atom, inside in atoms:
            found = _property().fullmatch(atom)
            if found is None:
                yield atom, inside
                continue
            cls = found.group(1)[0]
            members = _CLASS_CHAR[cls] + _CLASS_ASCII[cls]
            yield (members if inside else f"[{members}]"), True  # a class: no anchor in it

    return _end_anchors(collapsed(_regex_atoms(expression)))


class _Pass(namedtuple("_Pass", "pattern transform")):
    """One regex of the list: how to transform a piece, and the compiled pattern."""

    __slots__ = ()

    pattern: regex.Pattern | re.Pattern
    transform: Callable[[str], str] | None

    def split(self, piece: str) -> list[str]:
        subject = self.transform(piece) if self.transform else piece
        out: list[str] = []
        start = 0
        for found in self.pattern.finditer(subject):
            if found.start() > start:
                out.append(piece[start : found.start()])
            if found.end() > found.start():
                out.append(piece[found.start() : found.end()])
            start = found.end()
        if start < len(piece):
            out.append(piece[start:])
        return out


# -- the passes on the kernel's regex VM -------------------------------------------------------
# A pass that runs on a stand-in text (collapsed or widened: one character for one) is the same
# regex on the real text with each one-code-point atom (a literal, an escape, ``.``, a ``[...]``)
# replaced by the class of the code points whose stand-in it matches: the matches fall at the
# same places. The classes are explicit ranges, computed with ``re`` (the Python path's engine)
# on the stand-ins of every code point, so the VM (whose classes are the `regex` module's, by
# its Unicode tables) agrees with the Python path to the code point. The scanners' patterns
# (`_CUSTOM`) run on the real text, by llama.cpp's Unicode (`_unicode_of`).



@functools.lru_cache(maxsize=None)
def _quantifier() -> re.Pattern:
    """A ``{m,n}`` quantifier (compiled when first used)."""
    return re.compile(r"\{\d*(?:,\d*)?\}")


_KEPT_ESCAPES = ("\\Z", "\\A", "\\b", "\\B")
_GROUPS = ("(?:", "(?!", "(?=")


@functools.lru_cache(maxsize=2)
def _stand_ins(collapsed: bool) -> tuple[np.ndarray, str]:
    """Every code point (no surrogates) and, as one string, their stand-ins (~1 s, once)."""
    from .regex_program import _every_code_point

    points, every = _every_code_point()
    if not collapsed:
        return points, _widen_text(every)
    return points, every[:0x80] + "".join(
        _SPACE_CHAR if ord(char) in _WHITESPACE else _CLASS_CHAR.get(unicodedata.category(char)[0], _OTHER_CHAR)
        for char in every[0x80:])


@functools.lru_cache(maxsize=256)
def _stand_in_class(atom: str, collapsed: bool) -> str | None:
    """``[...]`` of the code points whose stand-in ``atom`` matches (None: none does), as
    explicit ranges: the `regex` module's categories (``\\p{L}``) are of another Unicode
    version than Python's ``unicodedata``, which the Python path reads."""
    points, subject = _stand_ins(collapsed)
    runs = re.compile(f"(?:{_collapse_regex(atom) if collapsed else atom})+", re.ASCII).finditer(subject)
    ranges = [f"\\U{points[a]:08x}-\\U{points[b - 1]:08x}" for a, b in (run.span() for run in runs)]
    return f"[{''.join(ranges)}]" if ranges else None


@functools.lru_cache(maxsize=256)
def vm_pattern(expression: str) -> str | None:
    """One regex of a llama.cpp list as a pattern the kernel's regex VM runs on the real text,
    matching where :class:`Pretokenizer`'s pass matches; None where this cannot say so (a
    construct outside the tokenizer subset, or a class no code point is in). Its classes are
    read off every code point's stand-in (~0.3-1 s the first time in a process): the result is
    kept in the machine's cache (``ubpe.tables_cache``), so that a later process reads it.

    >>> vm_pattern(r"[0-9]{2}$")
    '[\\\\U00000030-\\\\U00000039]{2}\\\\Z'
    """
    if expression in _CUSTOM:
        return _CUSTOM[expression]

    def build() -> dict[str, np.ndarray]:
        pattern = _vm_pattern(expression)
        return {"pattern": np.array(pattern or ""), "none": np.array(pattern is None)}

    found = cached_arrays("vm-pattern", expression, build)
    return None if bool(found["none"]) else str(found["pattern"])


def _vm_pattern(expression: str) -> str | None:
    """`vm_pattern`, built (the stand-in classes of its atoms)."""
    collapsed = bool(_property().search(expression))
    if collapsed and not expression.isascii():
        return None
    atoms = list(_regex_atoms(expression))
    out: list[str] = []
    k = pos = 0
    while k < len(atoms):
        atom, inside = atoms[k]
        if inside:  # a whole class, to its closing "]"
            end = next(j for j in range(k + 1, len(atoms)) if atoms[j] == ("]", True))
            atom = "".join(a for a, _ in atoms[k : end + 1])
            k = end
        elif atom in _KEPT_ESCAPES or atom in ")|*+?^":
            out.append(atom)
            k, pos = k + 1, pos + len(atom)
            continue
        elif atom == "$":
            out.append("\\Z")  # ECMAScript's end of input (see _end_anchors)
            k, pos = k + 1, pos + 1
            continue
        elif atom == "(":
            group = expression[pos : pos + 3]
            if group.startswith("(?"):
                if group not in _GROUPS:
                    return None
                out.append(group)
                k, pos = k + 3, pos + 3
            else:
                out.append(atom)
                k, pos = k + 1, pos + 1
            continue
        elif atom == "{" and _quantifier().match(expression, pos):
            quantifier = _quantifier().match(expression, pos).group()
            out.append(quantifier)
            k, pos = k + len(quantifier), pos + len(quantifier)
            continue
        elif atom.startswith("\\") and atom[1:].isdigit():
            return None  # a backreference
        members = _stand_in_class(atom, collapsed)
        if members is None:
            return None
        out.append(members)
        k, pos = k + 1, pos + len(atom)
    return "".join(out)


def _unicode_of(expression: str) -> str:
    """Whose Unicode the VM program of one regex of a list classifies by: llama.cpp's for a
    scanner's pattern, which runs on the real text; the `regex` module's for the others, whose
    classes are explicit ranges of code points already (see above)."""
    return "llama.cpp" if expression in _CUSTOM else "regex"


_VM_PATTERNS: dict[tuple[str, ...], np.ndarray | None] = {}
_VM_LOCK = allocate_lock()


def _vm_patterns(expressions: tuple[str, ...]) -> np.ndarray | None:
    found = _VM_PATTERNS.get(expressions, False)  # (a look-up per text: no lock once compiled)
    if found is not False:
        return found
    from .regex_program import compile_pattern

    with _VM_LOCK:  # once per process, whichever thread asks first
        if expressions not in _VM_PATTERNS:
            ids = []
            for expression in expressions:
                pattern = vm_pattern(expression)
                compiled = compile_pattern(pattern, _unicode_of(expression)) if pattern is not None else None
                ids.append(None if compiled is None else compiled.pattern_id)
            found = None if None in ids else np.array(ids, dtype=np.int32)
            if found is not None:
                found.flags.writeable = False
            _VM_PATTERNS[expressions] = found
        return _VM_PATTERNS[expressions]


#: lists of regexes whose programs were not all in the machine's cache when first looked for
#: (looked for once per process: a text's encode must not look at the folder each time)
_NOT_CACHED: set[tuple[str, ...]] = set()


def _programs_cached(expressions: tuple[str, ...]) -> bool:
    """Whether every regex of the list compiles to a VM program by a look-up (see
    `regex_program.compiles_quickly`): then one text's encode may compile them too."""
    if expressions in _NOT_CACHED:
        return False
    from .regex_program import compiles_quickly

    patterns = [(vm_pattern(expression), _unicode_of(expression)) for expression in expressions]
    if all(pattern is not None and compiles_quickly(pattern, unicode) for pattern, unicode in patterns):
        return True
    _NOT_CACHED.add(expressions)
    return False


def _make_pass(expression: str) -> _Pass:
    if expression in _CUSTOM:
        return _Pass(regex.compile(_CUSTOM[expression]), None)
    if _property().search(expression):
        if not expression.isascii():
            raise ModelFormatError("a regex mixes Unicode classes and non-ASCII characters "
                                   "(llama.cpp does not support it either)")
        return _Pass(re.compile(_collapse_regex(expression), re.ASCII), _collapse_text)
    return _Pass(re.compile(_end_anchors(_regex_atoms(expression)), re.ASCII), _widen_text)


class Pretokenizer:
    """llama.cpp's pre-tokenizer for one regex list (see the module docstring)."""

    def __init__(self, expressions: tuple[str, ...], name: str = "custom"):
        self.name = name
        self.expressions = expressions
        self._passes = [_make_pass(e) for e in expressions]

    @classmethod
    @functools.lru_cache(maxsize=None)
    def for_type(cls, pre_type: str) -> Pretokenizer:
        return cls(REGEXES[pre_type], pre_type)

    @classmethod
    def for_pre(cls, pre: str) -> Pretokenizer:
        """The pre-tokenizer a GGUF file's ``tokenizer.ggml.pre`` names."""
        return cls.for_type(resolve_pre(pre)[0])

    def vm_patterns(self, compile: bool = True) -> np.ndarray | None:
        """The ids of the regexes as programs of the kernel's regex VM (`vm_pattern`), which
        ``ubpe_native._multipass.split_passes`` runs as `split` does, or None if one is not
        one (or, without ``compile``, if they are not compiled yet, in this process or in the
        machine's cache: ``ubpe.tables_cache``). Compiled once per machine, 0.5-4 s (each class
        over every code point; deepseek-coder's ``\\p{L}`` takes most), then read from its
        cache once per process; ids are per process, so they are not kept on the object, which
        may be pickled."""
        if not compile and self.expressions not in _VM_PATTERNS and not _programs_cached(self.expressions):
            return None
        return _vm_patterns(self.expressions)

    def split(self, text: str) -> list[str]:
        """The pieces of ``text``, in order; they concatenate to ``text``."""
        pieces = [text] if text else []
        for step in self._passes:
            pieces = [part for piece in pieces for part in step.split(piece)]
        return pieces

    def __repr__(self) -> str:
        return f"Pretokenizer({self.name!r})"


@functools.lru_cache(maxsize=1)
def unsafe_code_points() -> np.ndarray:
    """Code points that the regex path (the scanners' patterns by the `regex` module's Unicode)
    and llama.cpp classify apart: where llama.cpp's class table differs from the `regex`
    module's (letters and numbers of a newer Unicode, ``ſ``'s case folding), and the lone
    surrogates. A text holding one is split on the regex VM, which classifies by llama.cpp's."""
    from .class_tables import code_point_classes  # (when first needed: the tables are 2.2 MB each)

    table = code_point_classes("regex") != code_point_classes("llama.cpp")
    table[0xD800:0xE000] = True  # lone surrogates: not valid text at all
    return table


def scanner_unsafe(text: str) -> bool:
    """Whether ``text`` holds a code point of `unsafe_code_points` (never for ASCII)."""
    if text.isascii():
        return False
    code_points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return bool(unsafe_code_points()[code_points].any())


def single_pattern(pre_type: str) -> str | None:
    """The one regex that splits text as ``pre_type`` does (a llama.cpp scanner's regex of
    ``_CUSTOM``: matches tile the text), or None when the type runs a list of regexes.

    >>> single_pattern("qwen35") == _CUSTOM[_QWEN35], single_pattern("falcon")
    (True, None)
    """
    expressions = REGEXES[pre_type]
    return _CUSTOM.get(expressions[0]) if len(expressions) == 1 else None


def resolve_pre(pre: str) -> tuple[str, bool]:
    """``(pre-tokenizer type, ignore_merges)`` for a ``tokenizer.ggml.pre`` value."""
    try:
        return PRE_TYPES[pre]
    except KeyError:
        raise ModelFormatError(
            f"llama.cpp pre-tokenizer {pre!r} is not supported; supported: {', '.join(sorted(PRE_TYPES))}"
        ) from None
