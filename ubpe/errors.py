"""Exceptions raised by ubpe.

Every error a user can provoke with bad input is one of these. Each subclasses the built-in
exception a caller would naturally catch (``ValueError`` or ``TypeError``), so
``except ValueError`` keeps working, while ``except UBPEError`` catches all of ours.
"""


class UBPEError(Exception):
    """Base class of every exception raised by ubpe on bad input.

    >>> from ubpe import UBPE
    >>> try:
    ...     UBPE(alphabet="ab", n_tokens=2)
    ... except UBPEError as error:
    ...     print(type(error).__name__, isinstance(error, ValueError))
    InvalidParameterError True
    """


class InvalidParameterError(UBPEError, ValueError):
    """A parameter has an impossible value (``n_tokens`` too small, ``n_candidates < 1``...)."""


class SymbolTypeError(UBPEError, TypeError):
    """Symbols, documents or parameters are of the wrong type (e.g. mixed symbol types)."""


class UnknownSymbolError(UBPEError, ValueError):
    """A document holds a symbol that is not in the alphabet."""


class UnknownTokenError(UBPEError, ValueError):
    """A token id is neither an alphabet symbol, a known word nor a vocabulary token."""


class EmptyCorpusError(UBPEError, ValueError):
    """``fit`` was given no documents."""


class NotFittedError(UBPEError, ValueError):
    """The tokenizer has no vocabulary yet: call ``fit`` or load a model first."""


class AlreadyFittedError(UBPEError, ValueError):
    """``fit`` was called on a tokenizer that already has a vocabulary."""


class ModelFormatError(UBPEError, ValueError):
    """A model file or string is corrupt, truncated, or of an unknown format version."""


class RegexBudgetError(InvalidParameterError):
    """A split pattern run by the kernel's regex VM needed more backtracking for one match than
    its budget allows (a pattern that backtracks exponentially, such as ``(a+)+$``, on text
    that makes it do so): the message names the pattern and where the match started."""


class DisallowedSpecialTokenError(InvalidParameterError):
    """The text holds a special token that ``encode`` was not allowed to emit."""


class IgnoredInputWarning(UserWarning):
    """Part of the input is ignored, as the reference ubpe ignores it (e.g. break tokens that
    are not in the alphabet); the warning names what."""


class VocabularySizeWarning(UserWarning):
    """``fit`` ended with fewer ids than ``n_tokens`` asked for (the corpus ran out of pairs,
    or the classic variant trimmed tokens as the reference does); ``n_tokens`` then becomes
    the final size, as in the reference, which ``n_vocab`` also gives."""
