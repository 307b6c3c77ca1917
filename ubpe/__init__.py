"""ubpe: Universal Byte-Pair Encoding over any sequence.

>>> from ubpe import UBPE
>>> tok = UBPE(alphabet="ab", n_tokens=4)
>>> tok.fit(["abab", "abba"], quiet=True)
>>> len(tok.vocabulary)
4

Importing the package is light: the public names below are loaded when first used
(:pep:`562`), so ``from ubpe import UBPE`` loads the fitting and splitting modules and their
kernels, not the file formats, byte-level models or encoders it does not use.
"""

from __future__ import annotations

from . import _hooks
from ._lazy import lazy_attributes
from ._version import __version__, check_environment
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

check_environment()  # the reference's ubpe-native beside us: a clear ImportError, not mixed kernels

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:  # what the names below resolve to, for type checkers and IDEs
    from .alphabet import Alphabet
    from .models.bytelevel import ByteLevelBPE
    from .encoders import available_encoders, make_encoder
    from .io import load, save
    from .splitting import SplitMode, SplitPipeline
    from .models.base import Tokenizer
    from .models.ubpe import UBPE, UBPEClassic
    from .vocabulary import Vocabulary

#: public name -> the module (relative to this package) that defines it, imported when first used
_LAZY = {
    "Alphabet": ".alphabet",
    "ByteLevelBPE": ".models.bytelevel",
    "available_encoders": ".encoders",
    "make_encoder": ".encoders",
    "load": ".io",
    "save": ".io",
    "SplitMode": ".splitting",
    "SplitPipeline": ".splitting",
    "UBPE": ".models.ubpe",
    "Tokenizer": ".models.base",
    "UBPEClassic": ".models.ubpe",
    "Vocabulary": ".vocabulary",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())


# The package root wires the two calls that go up the layers (see ubpe._hooks): the models'
# file methods reach ubpe.io, and the fit hands a Dask collection to ubpe.distributed.
def _file_formats():
    from . import io

    return io


def _is_dask_collection(corpus) -> bool:
    return hasattr(corpus, "__dask_graph__")


def _count_on_cluster(corpus, split, *, empty_message: str):
    from .distributed.dask import count_parts

    return count_parts(corpus, split, empty_message=empty_message)


_hooks.set_file_formats(_file_formats)
_hooks.register_counter(_is_dask_collection, _count_on_cluster)


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
