"""A small causal transformer language model over token ids: the downstream study's model
(issue 34, points 3 and 4; the study itself is `ubpe.lab.lm`).

One model is trained per tokenisation of a training split, then gives each held-out document
``-sum log2 p`` of its tokens and of its end (bits); ``bits / held-out symbols`` compares
tokenisations of the same text whatever their lengths, and a model over the symbols
themselves (no merges) is the baseline.

**Equal size.** Every model of a study has the same *total* number of parameters. The input
embedding is tied to the output layer (one ``(vocab + 1) x d_model`` matrix; id ``vocab`` is
the end-of-document token, which also starts every document), so the vocabulary's share is
``(vocab + 1) * d_model``; `matched_shape` keeps ``d_model``, the layers, the heads and the
context fixed and gives the rest of the budget to the feed-forward width ``d_ff``, so a
larger vocabulary buys its embedding with a narrower MLP. Counting only non-embedding
parameters (Kaplan et al. 2020) was rejected: at this scale (~10^5 parameters) a 1,024-token
embedding is 20-60 % of the model, and a larger vocabulary would get that much extra,
free memorisation capacity; changing ``d_model`` instead would change the attention and the
residual width too, and moves the count in steps of ``~12 * layers * d_model``. Counts then
differ by less than one hidden unit per layer (``layers * (2 * d_model + 1)`` parameters,
<1 % here); `parameter_count` is the formula, checked against the module's own count.

**Training** (`train`): the training documents are one stream ``EOD d1 EOD d2 EOD ...``,
cut into windows of ``context`` tokens (each window's targets are the next tokens), shuffled,
AdamW with a linear warm-up and a cosine decay. The budget is in *symbols*: ``epochs`` passes
over the same training documents, so every tokenisation sees the same symbols; and every model
takes the same number of steps (``steps_per_epoch``; a batch is that pass's windows divided
by it), so each step covers about the same symbols whatever the tokenisation's length: equal
data and equal updates (not equal compute: a shorter tokenisation has fewer tokens per step).
With a fixed number of windows per step instead, a model of a shorter tokenisation, or a
symbol model with a longer context, takes proportionally fewer steps: at a quarter of the
default study (kjv, one seed) the symbol model at 208 positions was 0.64 bits/symbol worse
than at 64 that way, 0.32 with equal steps. A
tokenisation that samples (BPE-dropout, `ubpe.encoders.SampleEncoder`) is drawn anew for every
epoch (``encode(epoch)``), as these methods are meant to be trained.

**Evaluation** (`document_bits`): the held-out documents are one stream too, as in training
(``EOD d1 EOD d2 ...``), scored with windows of ``context`` tokens at a stride of half of it,
each target once with at least half a context before it (the first window's with what precedes
them); a document's bits are those of its tokens and of the end that follows them. Training
and scoring then see positions alike (scoring each document alone from position 0 puts short
documents, a chorale voice or a protein, only at the first positions); it did not close the
gap of longer contexts, though: at a quarter of the default study the symbol models at 112-128
positions stayed 0.6-0.7 bits/symbol worse than at 64 on the chorales (per document: the same),
which is why `ubpe.lab.lm_tables.rank` asks a tokenisation to beat both symbol models.
`reference_document_bits` computes the same one position at a time, for the tests.

**Library: PyTorch** (the ``[lm]`` extra, ``torch>=2.2``). Install the CPU build, never a
CUDA one on a machine without a GPU: on this project's machines ``pip install torch==2.13.0``
takes the CPU wheel that lies on disk (a bare ``pip install torch``, or a range that admits a
newer release, downloads a CUDA build of several GB); elsewhere use PyTorch's own CPU-only wheel
index, then ``pip install -e '.[lm]'``. Measured for the choice (`benchmarks/bench_lm_library.py`,
2026-11-29, 2 shared cores under load, interleaved runs; one training step of the default shape:
d_model 64, 2 layers, 4 heads, d_ff 256, context 64, batch 16, vocabulary 1,100, forward +
backward + AdamW):

| | install (venv) | ms/step, 1 thread | ms/step, 2 threads | compile per shape |
|---|---|---|---|---|
| torch 2.13.0+cpu (eager) | 754 MB (wheel 192 MB) | 74-82 | 89 (one run 496: contention) | none |
| jax 0.10.2 + optax 0.2.8 (jit) | 380 MB jax + jaxlib (628 MB with numpy/scipy) | 32-41 | 22-44 | 6-10 s |

JAX's jit-compiled step is about twice as fast on the CPU and its PyPI wheel is CPU-only by
default; it was still not chosen: every arm of a study has its own shape (vocabulary, ``d_ff``,
context), so each of the ~40 models of the default study pays a 6-10 s compile for training and
more for scoring (variable window counts), which takes back most of the ~15 min its faster
steps would save over the ~45 min study; JAX has no transformer layer or optimiser of its own
(flax/equinox and optax: two more dependencies, or layers written here), while PyTorch's
``nn.TransformerEncoderLayer`` and ``AdamW`` are maintained pieces; and PyTorch's CPU wheel is
on this project's machines. Revisit if the study grows (more seeds or larger models amortise
the compiles). PyTorch is used on a GPU when one is present (``torch.cuda.is_available()``),
else on the CPU with ``torch.set_num_threads(threads)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ubpe.lab.extras import require

require(("torch",), "lm")

import torch  # noqa: E402  (after the check that names the extra)
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

LOG2E = 1.0 / math.log(2.0)
#: The share of the steps spent warming the learning rate up; the cosine decay ends at
#: this share of the peak rate.
WARMUP_SHARE, FINAL_LR_SHARE = 0.05, 0.1
WEIGHT_DECAY = 0.01
#: Windows per forward pass when scoring held-out documents.
EVAL_BATCH = 64


class LMError(ValueError):
    """Bad settings or input for the transformer study."""


@dataclass(frozen=True)
class ModelShape:
    """A model's size: ``vocab_size`` ids plus the end-of-document id."""

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int
    context: int

    @property
    def eod(self) -> int:
        return self.vocab_size


def _fixed_parameters(vocab_size: int, d_model: int, n_layers: int, context: int) -> int:
    """Everything but the feed-forward width's share: the tied embedding, positions, per layer
    the attention (q, k, v, output with biases) and the two layer norms and the second MLP
    bias, and the final layer norm."""
    return ((vocab_size + 1) * d_model + context * d_model
            + n_layers * (4 * d_model * d_model + 9 * d_model) + 2 * d_model)


def parameter_count(shape: ModelShape) -> int:
    """The model's parameters (`CausalTransformer` has exactly these; a test checks it)."""
    return (_fixed_parameters(shape.vocab_size, shape.d_model, shape.n_layers, shape.context)
            + shape.n_layers * shape.d_ff * (2 * shape.d_model + 1))


def matched_shape(vocab_size: int, budget: int, *, d_model: int, n_layers: int, n_heads: int,
                  context: int) -> ModelShape:
    """The shape with ``budget`` parameters (to within half a hidden unit per layer) at this
    vocabulary: only ``d_ff`` changes (see the module docstring)."""
    for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("n_layers", n_layers),
                        ("n_heads", n_heads), ("context", context)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise LMError(f"{name} must be an int >= 1, got {value!r}")
    if d_model % n_heads:
        raise LMError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
    per_unit = n_layers * (2 * d_model + 1)
    d_ff = round((budget - _fixed_parameters(vocab_size, d_model, n_layers, context)) / per_unit)
    if d_ff < 1:
        raise LMError(f"a budget of {budget:,} parameters leaves no feed-forward width at "
                      f"vocabulary {vocab_size:,} (d_model {d_model}): raise the budget")
    return ModelShape(vocab_size, d_model, n_layers, n_heads, d_ff, context)


def budget_for(vocab_size: int, *, d_model: int, n_layers: int, context: int) -> int:
    """A study's budget: the parameters of the conventional shape (``d_ff = 4 d_model``) at
    the largest vocabulary of the study, so no model's MLP is narrower than that."""
    return parameter_count(ModelShape(vocab_size, d_model, n_layers, 1, 4 * d_model, context))


class CausalTransformer(nn.Module):
    """Pre-norm GPT-style decoder: tied embedding, learned positions, GELU MLP, no dropout."""

    def __init__(self, shape: ModelShape):
        super().__init__()
        self.shape = shape
        self.embed = nn.Embedding(shape.vocab_size + 1, shape.d_model)
        self.position = nn.Parameter(torch.zeros(shape.context, shape.d_model))
        layer = nn.TransformerEncoderLayer(shape.d_model, shape.n_heads, shape.d_ff, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, shape.n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(shape.d_model)
        nn.init.normal_(self.embed.weight, std=0.02)
        nn.init.normal_(self.position, std=0.02)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(shape.context),
                             persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits (batch, length, vocab + 1) of the next id at every position of ``ids``."""
        length = ids.shape[1]
        x = self.embed(ids) + self.position[:length]
        x = self.layers(x, mask=self.mask[:length, :length], is_causal=True)
        return self.norm(x) @ self.embed.weight.T


def device_for(threads: int) -> torch.device:
    """A GPU when there is one, else the CPU with ``threads`` threads."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    torch.set_num_threads(max(1, threads))
    return torch.device("cpu")


def stream(docs: Sequence[np.ndarray], eod: int) -> np.ndarray:
    """``EOD d1 EOD d2 ... EOD``: the documents as one training stream."""
    parts = [np.array([eod], np.int64)]
    for doc in docs:
        parts += [np.asarray(doc, np.int64), np.array([eod], np.int64)]
    return np.concatenate(parts)


def windows(ids: np.ndarray, context: int) -> tuple[np.ndarray, np.ndarray]:
    """The stream cut into windows: inputs and targets (the next ids), ``context`` each; the
    last window is shorter when the stream does not divide, and is padded with its own last
    target repeated, masked out by `train`'s weights."""
    n = (len(ids) - 1 + context - 1) // context
    x = np.full((n, context), ids[-1], np.int64)
    y = np.full((n, context), -1, np.int64)
    for i in range(n):
        chunk = ids[i * context: i * context + context + 1]
        x[i, :len(chunk) - 1] = chunk[:-1]
        y[i, :len(chunk) - 1] = chunk[1:]
    return x, y


def _lr(step: int, total: int, peak: float) -> float:
    warmup = max(1, int(WARMUP_SHARE * total))
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (FINAL_LR_SHARE + (1 - FINAL_LR_SHARE) * 0.5 * (1 + math.cos(math.pi * progress)))


@dataclass
class Training:
    """What `train` did: the loss (nats per target token) of each step, and the steps."""

    losses: list[float]
    steps: int
    tokens: int


def train(shape: ModelShape, encode: Callable[[int], Sequence[np.ndarray]], *, epochs: int,
          steps_per_epoch: int, lr: float, seed: int, device: torch.device
          ) -> tuple[CausalTransformer, Training]:
    """Train a model of ``shape`` for ``epochs`` passes over ``encode(epoch)`` (the training
    documents' ids; a deterministic tokenisation returns the same every epoch), each pass in
    ``steps_per_epoch`` AdamW steps: a batch is ``windows / steps_per_epoch`` windows, so
    models over the same symbols take the same steps, each over about the same symbols, however
    long their tokenisations are (see the module docstring)."""
    if epochs < 1 or steps_per_epoch < 1 or not lr > 0:
        raise LMError(f"epochs and steps_per_epoch must be >= 1 and lr > 0, got {epochs}, "
                      f"{steps_per_epoch}, {lr}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = CausalTransformer(shape).to(device)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and n != "position"]
    rest = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and n != "position")]
    optimiser = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                                   {"params": rest, "weight_decay": 0.0}], lr=lr)
    losses: list[float] = []
    step = tokens = 0
    total = epochs * steps_per_epoch
    model.train()
    for epoch in range(epochs):
        x, y = windows(stream(encode(epoch), shape.eod), shape.context)
        # steps_per_epoch batches of (nearly) equal size; fewer when there are fewer windows
        for pick in np.array_split(rng.permutation(len(x)), min(steps_per_epoch, len(x))):
            inputs = torch.from_numpy(x[pick]).to(device)
            targets = torch.from_numpy(y[pick]).to(device)
            for group in optimiser.param_groups:
                group["lr"] = _lr(min(step, total - 1), total, lr)
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                   ignore_index=-1)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
            tokens += int((targets >= 0).sum())
            step += 1
    model.eval()
    return model, Training(losses, step, tokens)


def _scored_windows(n_targets: int, context: int) -> list[tuple[int, int, int]]:
    """The windows that score a stream's targets (positions 1 .. ``n_targets``):
    (start, scored, end) = inputs ``start .. end - 1`` (at most ``context``) predicting targets
    ``start + 1 .. end``, of which ``scored + 1 .. end`` are scored here. Windows move by
    ``context // 2``, so each target is scored once, in the first window that reaches it.

    >>> _scored_windows(9, 4)
    [(0, 0, 4), (2, 4, 6), (4, 6, 8), (6, 8, 9)]
    """
    stride = max(1, context // 2)
    out, scored, start = [], 0, 0
    while scored < n_targets:
        end = min(start + context, n_targets)  # inputs start .. end - 1 predict targets start+1 .. end
        out.append((start, scored, end))
        scored = end
        start += stride if start + context < n_targets else context
    return out


def _owners(docs: Sequence[np.ndarray]) -> np.ndarray:
    """For each position of `stream` (``docs``), the document whose target it is: a
    document's tokens and the end that follows them (position 0, the first end, is no one's)."""
    return np.concatenate([[-1], *[np.full(len(doc) + 1, i) for i, doc in enumerate(docs)]]).astype(np.int64)


@torch.no_grad()
def document_bits(model: CausalTransformer, docs: Sequence[np.ndarray],
                  device: torch.device | None = None) -> np.ndarray:
    """Per document, ``-sum log2 p`` of its tokens and its end (bits): the documents as one
    held-out stream, scored in batched windows (see the module docstring)."""
    shape = model.shape
    device = device or next(model.parameters()).device
    seq = stream(docs, shape.eod)
    owner = _owners(docs)
    jobs = _scored_windows(len(seq) - 1, shape.context)
    bits = np.zeros(len(docs))
    for at in range(0, len(jobs), EVAL_BATCH):
        chunk = jobs[at:at + EVAL_BATCH]
        width = max(end - start for start, _, end in chunk)
        inputs = np.full((len(chunk), width), shape.eod, np.int64)
        targets = np.full((len(chunk), width), -1, np.int64)
        where = np.full((len(chunk), width), -1, np.int64)
        for row, (start, scored, end) in enumerate(chunk):
            inputs[row, :end - start] = seq[start:end]
            targets[row, scored - start:end - start] = seq[scored + 1:end + 1]
            where[row, scored - start:end - start] = owner[scored + 1:end + 1]
        logits = model(torch.from_numpy(inputs).to(device))
        nats = F.cross_entropy(logits.transpose(1, 2), torch.from_numpy(targets).to(device),
                               ignore_index=-1, reduction="none").double().cpu().numpy()
        scored = where >= 0
        np.add.at(bits, where[scored], nats[scored] * LOG2E)
    return bits


@torch.no_grad()
def reference_document_bits(model: CausalTransformer, docs: Sequence[np.ndarray]) -> np.ndarray:
    """`document_bits` one target at a time, each from its own window's inputs (slow; tests)."""
    shape = model.shape
    device = next(model.parameters()).device
    seq = stream(docs, shape.eod)
    owner = _owners(docs)
    out = np.zeros(len(docs))
    for start, scored, end in _scored_windows(len(seq) - 1, shape.context):
        for target in range(scored + 1, end + 1):
            ids = torch.from_numpy(seq[start:target]).to(device)[None]
            log_p = torch.log_softmax(model(ids)[0, -1].double(), dim=-1)
            out[owner[target]] -= float(log_p[seq[target]]) * LOG2E
    return out
