"""ubpe tokenizers inside ``transformers``: a ``PreTrainedTokenizer`` that runs any ubpe
tokenizer with any encoder, and a fast tokenizer from the ``tokenizer.json`` ubpe writes.

:class:`UBPETokenizer` wraps a fitted :class:`~ubpe.UBPE` / :class:`~ubpe.UBPEClassic` or any
family :func:`ubpe.load` reads, and encodes with the encoder you name - ``"tfidf"`` (top-1),
``"fewest"``, ``"classic"``, or for training-time regularisation ``"sample"`` / ``"dropout"``,
seeded: the tokenizer keeps one random stream, seeded once, and draws each call's seed from
it, so a run repeats while two calls on one text may differ (as BPE-dropout wants). Padding,
truncation, attention masks, batches, special tokens and ``save_pretrained`` /
``from_pretrained`` are ``transformers``' own machinery: the wrapper gives it ids.

>>> from ubpe import UBPE
>>> model = UBPE(alphabet="ACGT", n_tokens=8)
>>> model.fit(["GATTACA", "TACAGATTACA", "CATTAG"] * 5, quiet=True)
>>> tok = UBPETokenizer(model=model, encoder="fewest", pad_token="<pad>")
>>> batch = tok(["GATTACAT", "TACA"], padding=True)
>>> batch["input_ids"], batch["attention_mask"]
([[5, 3, 6, 3], [6, 8, 8, 8]], [[1, 1, 1, 1], [1, 0, 0, 0]])
>>> tok.convert_ids_to_tokens(batch["input_ids"][0]), tok.pad_token_id == model.n_vocab
(['GA', 'T', 'TACA', 'T'], True)
>>> tok.decode(batch["input_ids"][1], skip_special_tokens=True)
'TACA'

Token strings. ``transformers`` passes tokens as strings between its steps; ubpe's pieces
need not be unique (two ids may spell the same text), so each id gets one string of its own:
its piece (the model's own spelling for an imported family, GPT-2's byte characters for
byte-level ones) where no lower id has it, else ``<ubpe:ID>``. Encoding and decoding go from
ids to ubpe and back, never through these strings.

Symbols that are not characters (an integer or tuple alphabet) reach ``transformers`` as text
through one character per symbol, as ubpe's ``tokenizer.json`` writer spells them (so the slow
and the fast tokenizer take the same text): symbol ``i`` of the alphabet is ``chr(base + i)``,
``base`` U+E000 (private use) for up to 6,400 symbols, else U+F0000 (planes 15-16), as MidiTok
writes token ids as characters: :meth:`UBPETokenizer.symbols_to_text` and
:meth:`~UBPETokenizer.text_to_symbols`.

Offsets (``return_offsets_mapping``, which ``transformers``' Python tokenizers do not compute)
are given where they are exact: where the pieces of a text's ids spell the text back (our
families over characters or other symbols, byte-level families; a token cutting a character
spans all of it, as in ``tokenizers``), for single texts. Elsewhere - a family that normalizes
the text first (sentencepiece, WordPiece, CLIP), pairs, pre-split words - they raise
:class:`NotImplementedError` saying why.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np
from transformers import BatchEncoding, PreTrainedTokenizer, PreTrainedTokenizerFast
from transformers.utils import PaddingStrategy

from ..errors import InvalidParameterError, ModelFormatError, UBPEError, UnknownSymbolError
from ..io.write.hf import code_points, symbols_as_text
from ..text.byte_chars import byte_string
from . import STOCHASTIC_ENCODERS, is_fitted

#: the model file ``save_pretrained`` writes beside ``tokenizer_config.json`` (any format ubpe reads)
MODEL_FILE = "ubpe_model"
#: the special-token roles a family may define (``bos``...), as ``transformers`` names them
ROLES = ("bos", "eos", "unk", "pad")
_SEED_BOUND = 2**63


def _is_ubpe_family(model: Any) -> bool:
    return getattr(model, "variant", None) in ("universal", "classic")


def _symbol_alphabet(model: Any):
    """The alphabet of a UBPE family over non-character symbols, else None (text goes as is)."""
    if not _is_ubpe_family(model):
        return None
    alphabet = model._alphabet
    return None if alphabet.symbol_type is str else alphabet


def family_specials(model: Any) -> dict[str, tuple[str, int]]:
    """``role -> (text, id)`` of the special tokens a family defines (bos/eos/unk/pad).

    Imported families record their roles (``special_ids``); tekken its bos/eos; our own
    families define none (pass them to :class:`UBPETokenizer`: they are added after the vocabulary).
    """
    ids = dict(getattr(model, "special_ids", None) or {})
    for role in ("bos", "eos"):
        if role not in ids and isinstance(getattr(type(model), f"{role}_id", None), property):
            ids[role] = getattr(model, f"{role}_id")
    texts = getattr(model, "texts", None)
    out = {}
    for role in ROLES:
        token = ids.get(role)
        if token is None or token < 0:
            continue
        text = texts[token] if texts is not None and token < len(texts) else None
        if text:
            out[role] = (text, int(token))
    return out


def _spellings(model: Any) -> list[str]:
    """Per id, its one string (see the module docstring): unique, the piece where it can be."""
    n = int(model.n_vocab)
    specials = getattr(model, "special_tokens", None)  # text -> id on byte-level families
    named = {token: text for text, token in specials.items()} if isinstance(specials, dict) else {}
    alphabet = _symbol_alphabet(model)
    base = code_points(len(alphabet)) if alphabet is not None else 0
    out: list[str] = []
    seen: set[str] = set()
    for token in range(n):
        try:
            text = named[token] if token in named else model.id_to_piece(token)
        except UBPEError:  # an id the family leaves unused (a hole in a byte-level ranking)
            text = ""
        if alphabet is not None and token not in named:  # symbols: the tokenizer.json writer's characters
            text = "".join(chr(base + alphabet.id_of(s)) for s in text)
        elif isinstance(text, bytes):  # a byte-level piece: GPT-2's byte characters, as tokenizer.json spells it
            text = byte_string(text)
        if not isinstance(text, str) or not text or text in seen:
            text = f"<ubpe:{token}>"
        seen.add(text)
        out.append(text)
    return out


class UBPETokenizer(PreTrainedTokenizer):
    """A ``transformers`` tokenizer over a ubpe tokenizer (see the module docstring).

    Give either ``model`` (a ubpe tokenizer object) or ``model_file`` (any file
    :func:`ubpe.load` reads; ``from_pretrained`` passes the saved one). ``encoder`` names a
    ubpe encoder (default: the family's own), ``encoder_options`` its options (for
    ``"sample"``/``"dropout"`` a ``seed`` seeds the wrapper's stream). ``add_bos`` /
    ``add_eos`` put the bos / eos token around each text when ``add_special_tokens`` (default:
    what the family does, else no). Special tokens default to the family's
    (:func:`family_specials`); ones passed that the vocabulary lacks are added after it.
    """

    vocab_files_names = {"model_file": MODEL_FILE}
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, model_file: str | os.PathLike | None = None, *, model: Any = None,
                 encoder: str | None = None, encoder_options: dict[str, Any] | None = None,
                 add_bos: bool | None = None, add_eos: bool | None = None, **kwargs: Any):
        if (model is None) == (model_file is None):
            raise InvalidParameterError("UBPETokenizer needs one of `model` (a ubpe tokenizer) or `model_file`")
        if model is None:
            from ..io import load

            model = load(model_file)
        if not is_fitted(model):
            raise InvalidParameterError("UBPETokenizer needs a fitted ubpe tokenizer (fit or load one first)")
        self.ubpe_model = model
        self._source_file = os.fspath(model_file) if model_file is not None else None
        options = dict(encoder_options or {})
        name = encoder or model.default_encoder
        self._encoder = None if name == model.default_encoder and not options else name
        self._stream = None
        if name in STOCHASTIC_ENCODERS:
            self._stream = np.random.default_rng(options.pop("seed", None))
        self._options = options
        if self._encoder is not None:  # a bad name or bad options fail here, not at the first text
            model.encoder(name, **({**options, "seed": 0} if self._stream is not None else options))
        self._spelling = _spellings(model)
        self._ids = {text: token for token, text in enumerate(self._spelling)}
        self._symbols = _symbol_alphabet(model)
        self._base = code_points(len(self._symbols)) if self._symbols is not None else 0
        specials = family_specials(model)
        for role, (text, _) in specials.items():
            kwargs.setdefault(f"{role}_token", text)
        flags = {"bos": add_bos if add_bos is not None else bool(getattr(model, "add_bos", False)),
                 "eos": add_eos if add_eos is not None else bool(getattr(model, "add_eos", False))}
        pattern = "_".join(role for role in ("bos", "eos") if flags[role]) or "none"
        kwargs.setdefault("clean_up_tokenization_spaces", False)
        super().__init__(encoder=encoder, encoder_options=encoder_options, add_bos=flags["bos"],
                         add_eos=flags["eos"], special_tokens_pattern=pattern, **kwargs)
        for role in ("bos", "eos"):
            if flags[role] and getattr(self, f"{role}_token_id") is None:
                raise InvalidParameterError(f"add_{role}=True, but the tokenizer has no {role} token: pass {role}_token=")

    # -- the vocabulary -------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """The ubpe tokenizer's ids (without the tokens added after them)."""
        return len(self._spelling)

    def get_vocab(self) -> dict[str, int]:
        return {**self._ids, **self._added_tokens_encoder}

    def _convert_token_to_id(self, token: str) -> int:
        found = self._ids.get(token)
        if found is None:
            if self.unk_token_id is None:
                raise UnknownSymbolError(f"{token!r} is no token of this tokenizer and it has no unk_token")
            return self.unk_token_id
        return found

    def _convert_id_to_token(self, index: int) -> str:
        return self._spelling[index]

    # -- text <-> symbols (non-character alphabets) -------------------------------------------

    def symbols_to_text(self, symbols: Any) -> str:
        """A document of a non-character alphabet as the text this tokenizer takes."""
        if self._symbols is None:
            raise InvalidParameterError("this tokenizer's alphabet is text: pass the text itself")
        return symbols_as_text(self._symbols, symbols)

    def text_to_symbols(self, text: str) -> list[Any]:
        """The document :meth:`symbols_to_text` spelled as ``text``."""
        if self._symbols is None:
            raise InvalidParameterError("this tokenizer's alphabet is text: its documents are text")
        ids = [ord(c) - self._base for c in text]
        if any(not 0 <= b < len(self._symbols) for b in ids):
            raise UnknownSymbolError("the text holds a character that stands for no symbol of the alphabet")
        return self._symbols.symbols_of(ids)

    # -- encoding -------------------------------------------------------------------------

    def _options_now(self) -> dict[str, Any]:
        if self._stream is None:
            return self._options
        return {**self._options, "seed": int(self._stream.integers(_SEED_BOUND))}

    def encode_ids(self, text: str) -> list[int]:
        """The ubpe ids of ``text`` (no special tokens added, none parsed): what
        ``__call__`` gives a text without special-token strings in it."""
        if not isinstance(text, str):
            raise InvalidParameterError(f"a text must be a str, not {type(text).__name__}")
        if not text:
            return []
        model = self.ubpe_model
        doc = self.text_to_symbols(text) if self._symbols is not None else text
        if self.unk_token_id is not None and _is_ubpe_family(model) and not model.covers(doc):
            return self._with_unknowns(doc)
        return [int(t) for t in model.encode_with(doc, self._encoder, 1, **self._options_now())[0][0]]

    def _with_unknowns(self, doc: Any) -> list[int]:
        """Runs of known symbols encoded, each unknown symbol the unk token."""
        model, ids, run = self.ubpe_model, [], []
        for symbol in list(doc):
            if model.covers([symbol] if self._symbols is not None else symbol):
                run.append(symbol)
                continue
            if run:
                ids.extend(self._encode_run(run))
                run = []
            ids.append(self.unk_token_id)
        if run:
            ids.extend(self._encode_run(run))
        return ids

    def _encode_run(self, run: list[Any]) -> list[int]:
        doc = "".join(run) if self._symbols is None else run
        return [int(t) for t in self.ubpe_model.encode_with(doc, self._encoder, 1, **self._options_now())[0][0]]

    def _batch_ids(self, texts: Any) -> list[list[int] | str] | None:
        """A batch of texts with those the family's batch kernel can take encoded in one call
        (ids; ``""`` for none), the others left as text for ``tokenize``: those holding an
        added token or, with an unk token, unknown symbols. None where no batch call gives
        what one by one gives (a random encoder draws one seed per call; a family whose batch
        call runs its own encoder only)."""
        if not isinstance(texts, (list, tuple)) or len(texts) < 2 or not all(type(t) is str for t in texts):
            return None
        model = self.ubpe_model
        ours = _is_ubpe_family(model)
        if self._stream is not None or not (ours or self._encoder is None):
            return None
        docs = [self.text_to_symbols(t) for t in texts] if self._symbols is not None else list(texts)
        plain = [len(self.tokens_trie.split(t)) < 2 and not (ours and self.unk_token_id is not None
                                                            and not model.covers(doc))
                 for t, doc in zip(texts, docs)]
        chosen = [doc for doc, keep in zip(docs, plain) if keep]
        if not chosen:
            return None
        options = {"encoder": self._encoder, **self._options} if ours else {}
        ids, offsets = model.encode_batch_to_numpy(chosen, **options).best()
        rows = iter(ids[a:b].tolist() or "" for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()))
        return [next(rows) if keep else text for text, keep in zip(texts, plain)]

    def _tokenize(self, text: str, **kwargs: Any) -> list[str]:
        return [self._spelling[t] if t < len(self._spelling) else self.convert_ids_to_tokens(t)
                for t in self.encode_ids(text)]

    # -- offsets ----------------------------------------------------------------------------

    def _encode_plus(self, text: Any, text_pair: Any = None, **kwargs: Any) -> BatchEncoding:
        """``transformers``' own, and with ``return_offsets_mapping`` the same ids with each
        token's ``(start, end)`` in the text (``(0, 0)`` for special tokens and padding)."""
        if not kwargs.pop("return_offsets_mapping", False):
            if text_pair is None and not kwargs.get("is_split_into_words"):
                text = self._batch_ids(text) or text
            return super()._encode_plus(text, text_pair, **kwargs)
        if text_pair is not None or kwargs.get("is_split_into_words") or kwargs.get("return_overflowing_tokens"):
            raise NotImplementedError("return_offsets_mapping: offsets are given for single texts only "
                                      "(not for pairs, pre-split words or overflowing tokens)")
        batched = isinstance(text, (list, tuple))
        texts = list(text) if batched else [text]
        if not all(isinstance(t, str) for t in texts):
            raise InvalidParameterError("return_offsets_mapping needs texts (str)")
        padding = kwargs.pop("padding_strategy", PaddingStrategy.DO_NOT_PAD)
        pad_options = {key: kwargs.pop(key, None) for key in ("max_length", "pad_to_multiple_of", "padding_side")}
        tensors, mask = kwargs.pop("return_tensors", None), kwargs.pop("return_attention_mask", None)
        wants_special = kwargs.pop("return_special_tokens_mask", False)
        rows = []
        for one in texts:
            ids, spans = self._ids_and_spans(one)
            row = super()._encode_plus(ids or "", None, max_length=pad_options["max_length"],
                                       return_special_tokens_mask=True, return_attention_mask=False, **kwargs)
            kept = row["special_tokens_mask"].count(0)
            kept_spans = iter(spans[len(spans) - kept:] if self.truncation_side == "left" else spans[:kept])
            row["offset_mapping"] = [(0, 0) if special else next(kept_spans) for special in row["special_tokens_mask"]]
            if not wants_special:
                del row["special_tokens_mask"]
            rows.append(dict(row))
        merged = {key: [row[key] for row in rows] for key in rows[0]} if batched else rows[0]
        offsets = merged.pop("offset_mapping")
        merged = dict(self.pad(merged, padding=padding.value, return_attention_mask=mask, **pad_options))
        widths = [len(ids) for ids in (merged["input_ids"] if batched else [merged["input_ids"]])]
        padded = [self._pad_offsets(spans, width) for spans, width in zip(offsets if batched else [offsets], widths)]
        merged["offset_mapping"] = padded if batched else padded[0]
        return BatchEncoding(merged, tensor_type=tensors, prepend_batch_axis=tensors is not None and not batched)

    def _pad_offsets(self, spans: list[tuple[int, int]], width: int) -> list[tuple[int, int]]:
        fill = [(0, 0)] * (width - len(spans))
        return spans + fill if self.padding_side == "right" else fill + spans

    def _ids_and_spans(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """``text``'s ids (added tokens cut out first, as ``tokenize`` does) and each one's span."""
        ids, spans, start = [], [], 0
        for chunk in self.tokens_trie.split(text):
            if chunk in self._added_tokens_encoder:
                ids.append(self._added_tokens_encoder[chunk])
                spans.append((start, start + len(chunk)))
            elif chunk:
                chunk_ids = self.encode_ids(chunk)
                ids.extend(chunk_ids)
                spans.extend((start + a, start + b) for a, b in self._spans(chunk, chunk_ids))
            start += len(chunk)
        if start != len(text):
            raise NotImplementedError("return_offsets_mapping: the added tokens' stripping changed the text")
        return ids, spans

    def _spans(self, text: str, ids: list[int]) -> list[tuple[int, int]]:
        """Each id's ``(start, end)`` in ``text``, where its pieces spell the text back exactly."""
        model, unk = self.ubpe_model, self.unk_token_id
        if model.symbol_unit == "byte":
            pieces = [model.decode_bytes([t]) for t in ids]
            data = text.encode("utf-8", errors="surrogatepass")
            # byte k lies in character char_of[k]: a token that cuts a character gets all of it (HF's rule)
            sizes = [len(c.encode("utf-8", errors="surrogatepass")) for c in text]
            char_of = np.repeat(np.arange(len(text) + 1), sizes + [1]).tolist()  # (byte len(data): the end)
            edges = np.cumsum([0] + [len(p) for p in pieces]).tolist()
            spans = [(char_of[a], char_of[b - 1] + 1 if b > a else char_of[a]) for a, b in zip(edges[:-1], edges[1:])]
            spelled = b"".join(pieces) == data
        else:
            lengths = [1 if t == unk and t >= self.vocab_size else len(model.decode([t])) for t in ids]
            edges = np.cumsum([0] + lengths).tolist()
            spans = list(zip(edges[:-1], edges[1:]))
            spelled = edges[-1] == len(text) and all(
                t == unk or self._decode_run([t]) == text[a:b] for t, (a, b) in zip(ids, spans))
        if not spelled:
            raise NotImplementedError(
                f"return_offsets_mapping: the pieces of this {model.variant} tokenizer's ids do not spell the text "
                "back (its family normalizes the text first), so no offset would be exact")
        return spans

    # -- decoding -------------------------------------------------------------------------

    def _decode(self, token_ids: int | list[int], skip_special_tokens: bool = False,
                clean_up_tokenization_spaces: bool | None = None, **kwargs: Any) -> str:
        ids = [token_ids] if isinstance(token_ids, int) else [int(t) for t in token_ids]
        added = self._added_tokens_decoder
        special = set(self.all_special_ids)
        parts, run = [], []
        for token in ids:
            if 0 <= token < self.vocab_size and token not in added and token not in special:
                run.append(token)
                continue
            if token not in added and not 0 <= token < self.vocab_size:
                raise InvalidParameterError(f"token {token} is not in the vocabulary (ids 0..{len(self) - 1})")
            if run:
                parts.append(self._decode_run(run))
                run = []
            if not (skip_special_tokens and token in special):
                parts.append(added[token].content if token in added else self._spelling[token])
        if run:
            parts.append(self._decode_run(run))
        return "".join(parts)

    def _decode_run(self, ids: list[int]) -> str:
        decoded = self.ubpe_model.decode(ids)
        if self._symbols is not None:
            return self.symbols_to_text(decoded)
        return decoded

    def convert_tokens_to_string(self, tokens: list[str]) -> str:
        return self._decode(self.convert_tokens_to_ids(tokens))

    # -- files ------------------------------------------------------------------------------

    def save_vocabulary(self, save_directory: str, filename_prefix: str | None = None) -> tuple[str, ...]:
        """Write the ubpe model as :data:`MODEL_FILE`: ubpe's own format where the family has
        it, else a copy of the file it was read from."""
        path = os.path.join(save_directory, (filename_prefix + "-" if filename_prefix else "") + MODEL_FILE)
        model = self.ubpe_model
        if getattr(model, "can_save", False):
            model.save(path)
        elif self._source_file is not None:
            if os.path.abspath(self._source_file) != os.path.abspath(path):
                shutil.copyfile(self._source_file, path)
        else:
            raise ModelFormatError(
                f"a {model.variant} tokenizer has no form in ubpe's format and this one was not read from a file: "
                "build the UBPETokenizer with model_file= (the file is then copied)"
            )
        return (path,)


def fast_tokenizer(model: Any, path: str | os.PathLike, **kwargs: Any) -> PreTrainedTokenizerFast:
    """A ``PreTrainedTokenizerFast`` for ``model``'s classic encodings, from the
    ``tokenizer.json`` that ``ubpe.io.save(model, path, format="hf")`` writes at ``path``
    (kept there: ``from_pretrained`` of its folder needs nothing else). ``kwargs`` (special
    tokens...) go to ``PreTrainedTokenizerFast``; the family's own special tokens are the default.

    ``tokenizer.json`` holds classic vocabularies (with ids of the merge-list rule: the
    ``ranked`` encoder, ``priority="id"``), byte-level ones, tekken, GGUF gpt2 / llama and
    sentencepiece models; what it cannot hold (a universal vocabulary's tf-idf encoder, WordPiece,
    CLIP...) raises ``ubpe.io.save``'s :class:`~ubpe.errors.InvalidParameterError`, which says
    why: take :class:`UBPETokenizer` for those.
    """
    from ..io import save

    save(model, path, format="hf")
    for role, (text, _) in family_specials(model).items():
        kwargs.setdefault(f"{role}_token", text)
    return PreTrainedTokenizerFast(tokenizer_file=os.fspath(path), **kwargs)


__all__ = ["MODEL_FILE", "UBPETokenizer", "family_specials", "fast_tokenizer"]
