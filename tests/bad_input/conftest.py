"""Fixtures of the bad-input table: fitted models of every family and a file per format."""

from __future__ import annotations

import warnings

import pytest

import ubpe
from bad_models import fitted_models, model_files


@pytest.fixture(scope="session")
def bad_files(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = fitted_models()
    return models, model_files(tmp_path_factory.mktemp("models"), models)


@pytest.fixture(scope="session")
def m(bad_files):
    """Every family: u (universal, text), i (universal, ints), c (classic), b (byte-level),
    and the imported ones loaded from files: h (HF tokenizer.json), mb (minbpe), g (GGUF gpt2),
    s (sentencepiece BPE)."""
    models, files = bad_files
    models.h = ubpe.load(files["hf"])
    models.mb = ubpe.load(files["minbpe"])
    models.g = ubpe.load(files["gguf"])
    models.s = ubpe.load(files["sentencepiece"])
    models.files = files
    return models
