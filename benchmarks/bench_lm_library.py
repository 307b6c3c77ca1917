"""PyTorch or JAX for the downstream transformer (`ubpe.lab.transformer`)? One training step
of the study's default shape on the CPU, in each library, timed the same way.

    python benchmarks/bench_lm_library.py torch --threads 2
    python benchmarks/bench_lm_library.py jax            # in an environment with jax + optax

The shape: d_model 64, 2 pre-norm layers, 4 heads, d_ff 256, context 64, batch 16 windows,
vocabulary 1,100 (tied embedding), causal attention, AdamW; forward + backward + update.
Prints the library's version, the mean milliseconds per step over ``--steps`` steps after
``--warmup`` (JAX: jit-compiled; its compile time is printed apart). The result and the
install sizes are in `ubpe.lab.transformer`'s docstring.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

D, LAYERS, HEADS, FF, CONTEXT, BATCH, VOCAB = 64, 2, 4, 256, 64, 16, 1100


def _batch(rng):
    return rng.integers(0, VOCAB, (BATCH, CONTEXT + 1))


def bench_torch(steps: int, warmup: int, threads: int) -> tuple[str, float, float]:
    import torch

    torch.set_num_threads(threads)
    from ubpe.lab.transformer import CausalTransformer, ModelShape

    model = CausalTransformer(ModelShape(VOCAB - 1, D, LAYERS, HEADS, FF, CONTEXT))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)

    def step():
        ids = torch.from_numpy(_batch(rng))
        logits = model(ids[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()
    started = time.perf_counter()
    for _ in range(steps):
        step()
    return torch.__version__, (time.perf_counter() - started) / steps * 1e3, 0.0


def bench_jax(steps: int, warmup: int, threads: int) -> tuple[str, float, float]:
    os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                                       f"intra_op_parallelism_threads={threads}")
    import jax
    import jax.numpy as jnp
    import optax

    key = jax.random.PRNGKey(0)
    keys = iter(jax.random.split(key, 64))

    def dense(n_in, n_out):
        return {"w": jax.random.normal(next(keys), (n_in, n_out)) * 0.02, "b": jnp.zeros(n_out)}

    params = {"embed": jax.random.normal(next(keys), (VOCAB, D)) * 0.02,
              "pos": jax.random.normal(next(keys), (CONTEXT, D)) * 0.02,
              "layers": [{"ln1": (jnp.ones(D), jnp.zeros(D)), "qkv": dense(D, 3 * D), "out": dense(D, D),
                          "ln2": (jnp.ones(D), jnp.zeros(D)), "ff1": dense(D, FF), "ff2": dense(FF, D)}
                         for _ in range(LAYERS)],
              "ln": (jnp.ones(D), jnp.zeros(D))}

    def norm(x, p):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * p[0] + p[1]

    mask = jnp.tril(jnp.ones((CONTEXT, CONTEXT), bool))

    def forward(params, ids):
        x = params["embed"][ids] + params["pos"]
        for layer in params["layers"]:
            h = norm(x, layer["ln1"]) @ layer["qkv"]["w"] + layer["qkv"]["b"]
            q, k, v = (t.reshape(BATCH, CONTEXT, HEADS, D // HEADS) for t in jnp.split(h, 3, -1))
            att = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(D // HEADS)
            att = jax.nn.softmax(jnp.where(mask, att, -1e9), -1)
            x = x + jnp.einsum("bhqk,bkhd->bqhd", att, v).reshape(BATCH, CONTEXT, D) @ layer["out"]["w"] \
                + layer["out"]["b"]
            h = jax.nn.gelu(norm(x, layer["ln2"]) @ layer["ff1"]["w"] + layer["ff1"]["b"])
            x = x + h @ layer["ff2"]["w"] + layer["ff2"]["b"]
        return norm(x, params["ln"]) @ params["embed"].T

    def loss(params, ids):
        logits = forward(params, ids[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, ids[:, 1:]).mean()

    opt = optax.adamw(1e-3)
    state = opt.init(params)

    @jax.jit
    def step(params, state, ids):
        grads = jax.grad(loss)(params, ids)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    rng = np.random.default_rng(0)
    started = time.perf_counter()
    params, state = step(params, state, jnp.asarray(_batch(rng)))
    jax.block_until_ready(params)
    compile_ms = (time.perf_counter() - started) * 1e3
    for _ in range(warmup):
        params, state = step(params, state, jnp.asarray(_batch(rng)))
    jax.block_until_ready(params)
    started = time.perf_counter()
    for _ in range(steps):
        params, state = step(params, state, jnp.asarray(_batch(rng)))
    jax.block_until_ready(params)
    return jax.__version__, (time.perf_counter() - started) / steps * 1e3, compile_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library", choices=["torch", "jax"])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    bench = bench_torch if args.library == "torch" else bench_jax
    version, ms, compile_ms = bench(args.steps, args.warmup, args.threads)
    print(f"{args.library} {version}: {ms:.1f} ms per step ({args.threads} threads), "
          f"compile {compile_ms:.0f} ms")


if __name__ == "__main__":
    main()
