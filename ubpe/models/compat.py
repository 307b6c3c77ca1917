"""ubpe 0.3.0's public surface on our tokenizer: :class:`Ubpe030Surface`, the attributes and the
JSON methods the reference's ``UBPE`` / ``UBPEClassic`` have, as a thin layer over
:class:`~ubpe.models.ubpe.UBPEBase` (which keeps the configuration, the fit and the encoders).

Every attribute is a view of the split pipeline or the vocabulary, built when asked:
``alphabet`` / ``inverse_alphabet``, ``known_words`` / ``inverse_known_words``,
``break_tokens``, ``stop_tokens``, ``regex_str``, ``tokens_mapper`` (``backward``: token ->
its tuple, flattened for ``UBPE``, a pair for ``UBPEClassic``; ``forward``: the inverse) and
``tokens_weights``; ``dumps`` / ``loads`` read and write the reference's JSON
(:mod:`ubpe.io.ubpe030`, reached through :func:`ubpe._hooks.file_formats`).

>>> from ubpe import UBPEClassic
>>> tok = UBPEClassic(alphabet="ab", n_tokens=3)
>>> tok.fit(["abab", "bb"], quiet=True)
>>> tok.alphabet, tok.tokens_mapper["backward"], type(tok).loads(tok.dumps()).tokens_mapper == tok.tokens_mapper
({'a': 0, 'b': 1}, {2: (1, 1)}, True)
"""

from __future__ import annotations

from .._hooks import file_formats

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any


class Ubpe030Surface:
    """The reference's attributes and JSON methods (see the module docstring). The host class
    has ``_alphabet``, ``_known_words``, ``split_pipeline``, ``_vocabulary``, ``vocabulary``,
    ``variant``, a ``_views`` cache, and ``_mapping()``."""

    @property
    def alphabet(self) -> dict[Any, int]:
        return self._alphabet.as_dict()

    @property
    def inverse_alphabet(self) -> dict[int, Any]:
        return dict(enumerate(self._alphabet.symbols))

    @property
    def known_words(self) -> dict[Any, int] | None:
        return dict(self._known_words) if self._known_words else None

    @property
    def inverse_known_words(self) -> dict[int, Any] | None:
        return {i: w for w, i in self._known_words.items()} if self._known_words else None

    @property
    def break_tokens(self) -> set[Any] | None:
        tokens = self.split_pipeline.break_tokens
        return set(tokens) if tokens else None

    @property
    def stop_tokens(self) -> set[Any] | None:
        tokens = self.split_pipeline.stop_tokens
        return set(tokens) if tokens else None

    @property
    def regex_str(self) -> str | None:
        return self.split_pipeline.regex_str

    def _mapping(self) -> dict[int, tuple[int, ...]]:
        raise NotImplementedError

    @property
    def tokens_mapper(self) -> dict[str, dict]:
        """``{"backward": token -> tuple, "forward": tuple -> token}`` as in the reference."""
        if self._vocabulary is None:
            return {"backward": {}, "forward": {}}
        if "mapper" not in self._views:
            backward = self._mapping()
            self._views["mapper"] = {
                "backward": backward,
                "forward": {seq: token for token, seq in backward.items()},
            }
        return self._views["mapper"]

    @property
    def tokens_weights(self) -> dict[int, float]:
        if self._vocabulary is None:
            return {}
        return self._vocabulary.weight_of()

    def dumps(self) -> str:
        """The model as ubpe 0.3.0's JSON (loadable by the reference's ``loads``)."""
        return file_formats().format_module("ubpe030").dumps(self)

    @classmethod
    def loads(cls, dump: str, token_type: type | None = None):
        """A tokenizer from ubpe 0.3.0's JSON; ``token_type`` is inferred when not given."""
        return file_formats().format_module("ubpe030").loads(dump, variant=cls.variant, token_type=token_type)
