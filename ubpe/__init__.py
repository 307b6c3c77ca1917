"""ubpe: Universal Byte-Pair Encoding over any sequence.

>>> from ubpe import UBPE
>>> tok = UBPE(alphabet="ab", n_tokens=4)
>>> tok.fit(["abab", "abba"], quiet=True)
>>> len(tok.vocabulary)
4
"""

from ._version import __version__
from .alphabet import Alphabet
from .bytelevel import ByteLevelBPE
from .encoders import available_encoders, make_encoder
from .errors import (
    AlreadyFittedError,
    DisallowedSpecialTokenError,
    EmptyCorpusError,
    InvalidParameterError,
    ModelFormatError,
    NotFittedError,
    SymbolTypeError,
    UBPEError,
    UnknownSymbolError,
    UnknownTokenError,
)
from .splitting import SplitMode, SplitPipeline
from .io import load, save
from .tokenizer import UBPE, Tokenizer, UBPEClassic
from .vocabulary import Vocabulary

__all__ = [
    "UBPE",
    "UBPEClassic",
    "ByteLevelBPE",
    "SplitMode",
    "SplitPipeline",
    "Alphabet",
    "Vocabulary",
    "load",
    "save",
    "Tokenizer",
    "available_encoders",
    "make_encoder",
    "UBPEError",
    "InvalidParameterError",
    "SymbolTypeError",
    "UnknownSymbolError",
    "UnknownTokenError",
    "EmptyCorpusError",
    "NotFittedError",
    "AlreadyFittedError",
    "ModelFormatError",
    "DisallowedSpecialTokenError",
    "__version__",
]
