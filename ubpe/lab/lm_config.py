"""The ``[transformer]`` table of an experiment config (`ubpe.lab.lm`'s study): its keys,
defaults and checks, apart from the study so that reading a config imports nothing of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: What the study runs by default (the config's ``[transformer]`` table overrides any key).
DEFAULT_ENCODERS = ("universal:tfidf", "universal:fewest", "classic:ranked", "classic:classic")
DEFAULT_SAMPLED = (
    {"train": "classic:dropout", "test": "classic:ranked", "options": {"p": 0.1}},
    {"train": "universal:sample", "test": "universal:tfidf", "options": {"temperature": 1.0}},
    {"train": "universal:sample", "test": "universal:tfidf", "options": {"nbest_size": 4}},
)


class TransformerConfigError(ValueError):
    """A bad ``[transformer]`` table."""


@dataclass(frozen=True)
class TransformerConfig:
    """The ``[transformer]`` table (see the module docstring and `parse_transformer`)."""

    size: str = "+1024"
    n_candidates: int = 50
    encoders: tuple[str, ...] = DEFAULT_ENCODERS
    sampled: tuple[dict[str, Any], ...] = DEFAULT_SAMPLED
    seeds: tuple[int, ...] = (0, 1, 2)
    d_model: int = 64
    layers: int = 2
    heads: int = 4
    context: int = 64
    epochs: int = 3
    #: windows per step of the symbol model at ``context``; every model takes its number of
    #: steps (`ubpe.lab.transformer.train`)
    batch: int = 16
    lr: float = 3e-3
    #: caps of the training and held-out documents used (whole documents, spread over the
    #: split; 0: no cap); what they drop is printed and in transformer.csv
    train_symbols: int = 300_000
    heldout_symbols: int = 50_000
    bootstrap: int = 2000
    ngram_order: int = 3
    #: CPU threads (0: the cores available); a GPU is used when there is one
    threads: int = 0


_INTS = {"n_candidates": 1, "d_model": 1, "layers": 1, "heads": 1, "context": 2, "epochs": 1,
         "batch": 1, "train_symbols": 0, "heldout_symbols": 0, "bootstrap": 100, "ngram_order": 2,
         "threads": 0}


def parse_transformer(table: Any, variants: tuple[str, ...]) -> TransformerConfig | None:
    """The ``[transformer]`` table of an experiment config, checked (None when absent); its
    encoders name one of ``variants`` (the config's, `ubpe.lab.config.VARIANTS`).

    >>> parse_transformer({"seeds": [0, 1, 2], "context": 32}, ("universal", "classic")).context
    32
    >>> parse_transformer({"contxt": 32}, ("universal", "classic"))
    Traceback (most recent call last):
    ...
    ubpe.lab.lm_config.TransformerConfigError: unknown key in [transformer]: contxt (did you mean context?)
    """
    if table is None:
        return None
    if not isinstance(table, dict):
        raise TransformerConfigError("[transformer] must be a table")
    known = set(TransformerConfig.__dataclass_fields__)
    for key in table:
        if key not in known:
            import difflib

            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f" (keys: {', '.join(sorted(known))})"
            raise TransformerConfigError(f"unknown key in [transformer]: {key}{hint}")
    values: dict[str, Any] = {}
    for key, minimum in _INTS.items():
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise TransformerConfigError(f"transformer.{key} must be an int >= {minimum}, got {value!r}")
            values[key] = value
    if "lr" in table:
        if isinstance(table["lr"], bool) or not isinstance(table["lr"], (int, float)) or not table["lr"] > 0:
            raise TransformerConfigError(f"transformer.lr must be a number > 0, got {table['lr']!r}")
        values["lr"] = float(table["lr"])
    if "size" in table:
        values["size"] = str(table["size"])
    if "seeds" in table:
        seeds = table["seeds"]
        if not isinstance(seeds, list) or len(set(seeds)) < 1 or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
            raise TransformerConfigError(f"transformer.seeds must be a list of ints >= 0, got {seeds!r}")
        values["seeds"] = tuple(dict.fromkeys(seeds))
    if "encoders" in table:
        values["encoders"] = tuple(_spec(e, "transformer.encoders", variants) for e in _list(table["encoders"], "encoders"))
    if "sampled" in table:
        arms = []
        for item in _list(table["sampled"], "sampled"):
            if not isinstance(item, dict) or set(item) - {"train", "test", "options"} or not {"train", "test"} <= set(item):
                raise TransformerConfigError("transformer.sampled: each entry is {train = 'variant:encoder', "
                                             "test = 'variant:encoder', options = {...}}")
            train, test = _spec(item["train"], "sampled.train", variants), _spec(item["test"], "sampled.test", variants)
            if train.split(":")[0] != test.split(":")[0]:
                raise TransformerConfigError(f"transformer.sampled: {train} and {test} are different vocabularies")
            options = item.get("options", {})
            if not isinstance(options, dict):
                raise TransformerConfigError("transformer.sampled: options must be a table")
            arms.append({"train": train, "test": test, "options": dict(options)})
        values["sampled"] = tuple(arms)
    config = TransformerConfig(**values)
    if config.d_model % config.heads:
        raise TransformerConfigError(f"transformer.d_model ({config.d_model}) must be a multiple of "
                                     f"transformer.heads ({config.heads})")
    return config


def _list(value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise TransformerConfigError(f"transformer.{key} must be a list")
    return value


def _spec(text: Any, where: str, variants: tuple[str, ...]) -> str:
    if not isinstance(text, str) or text.count(":") != 1 or text.split(":")[0] not in variants:
        raise TransformerConfigError(f"{where}: {text!r} is not 'variant:encoder' with a variant of "
                                     f"{', '.join(variants)}")
    from ubpe.encoders import available_encoders

    encoder = text.split(":")[1]
    if encoder not in available_encoders():
        import difflib

        close = difflib.get_close_matches(encoder, available_encoders(), n=1)
        raise TransformerConfigError(f"{where}: no encoder {encoder!r}"
                                     + (f" (did you mean {close[0]}?)" if close else ""))
    return text
