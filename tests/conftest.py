"""Shared test settings: hypothesis keeps no example database (tests never write into the
working tree) and prints no warnings about slow data generation on a busy 2-core machine; in
CI, a skip for missing data fails.

The tests are in layers: ``spec/`` (the public API against the real libraries and the golden
files), ``kernels/`` (``ubpe_native`` and the modules right on top of it; the ASan lane runs this
folder), ``experiments/`` (the research pipeline), ``bad_input/`` (hostile input; the fuzz lane
is its ``slow`` mark). The shared helpers (reference implementations, builders) sit here, on
``sys.path`` for every layer."""

import gc
import os
import tempfile

# hypothesis writes failing-example patches under its storage directory: keep that out of the
# working tree (set before hypothesis first needs it).
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", tempfile.mkdtemp(prefix="ubpe-hypothesis-"))
# ubpe's machine cache of tables (ubpe.tables_cache) goes to a folder of this session, not
# into the user's cache folder (child processes inherit it)
os.environ.setdefault("UBPE_CACHE_DIR", tempfile.mkdtemp(prefix="ubpe-tables-"))
# glibc's malloc: at most two arenas in the pytest-xdist workers (spawned after this file is read,
# they inherit it) and their children. Each native thread otherwise gets an arena of its own, whose
# freed pages malloc_trim cannot hand back while a live block sits above them: the README's test
# command peaked at 1.42 GB in one worker, 1.36 GB with two arenas, in the same time (issue 39)
os.environ.setdefault("MALLOC_ARENA_MAX", "2")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

# a few test modules share fixtures and oracles across layers (the golden-fixture readers of
# spec/, the path oracles of kernels/, the tiny datasets of experiments/): every layer's folder
# is importable from every other
for _layer in ("spec", "kernels", "experiments", "bad_input"):
    _folder = str(Path(__file__).resolve().parent / _layer)
    if _folder not in sys.path:
        sys.path.append(_folder)

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "ubpe", database=None, suppress_health_check=[HealthCheck.too_slow], deadline=None
)
settings.load_profile("ubpe")


# In CI (UBPE_NO_SKIP=1, set by .ci/run) a test that skips because a dataset, a vocabulary
# file or a test dependency is missing fails instead: a bare machine must not pass by skipping.
# Skips that follow from the platform or the build stay skips.
ALLOWED_SKIPS = ("RLIMIT_AS", "AddressSanitizer", "fork", "predates Unicode")


import pytest  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    # an expected failure (xfail: a published result listed as known stale in results/STALE.toml
    # until it is regenerated) is reported as such, not as a skip
    if not (report.skipped and os.environ.get("UBPE_NO_SKIP") == "1") or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if not any(allowed in reason for allowed in ALLOWED_SKIPS):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI (UBPE_NO_SKIP=1), which needs every dataset and dependency: {reason}"


TESTS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True, scope="module")
def _release_module_caches():
    """The tests' cached models (the ``functools`` caches of the test modules and their shared
    helpers: vocabularies loaded once, with the encoders they build) and ubpe's own (Unicode
    tables, split pipelines: rebuilt from the machine's cache when asked again) are dropped when a test
    module ends, so that the run's memory is about one module's, not every module's together
    (the README's test command peaked at 6.6 GB when they accumulated; the issue asks for
    1.5 GB)."""
    yield
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if not (str(getattr(module, "__file__", None) or "").startswith(str(TESTS)) or name == "ubpe"
                or name.startswith("ubpe.")):
            continue
        for value in list(vars(module).values()):
            function = getattr(value, "__func__", value)  # a classmethod's cache
            if hasattr(function, "cache_clear") and getattr(function, "__module__", None) == module.__name__:
                function.cache_clear()
    _release_memory()


# Memory-heavy modules (each holds one or more large real vocabularies, 0.5-0.7 GB at its peak
# alone): under pytest-xdist (the README's command runs a worker per core) they share one
# group, so that two of them never run at once on two workers; every other module is a group of
# its own, so its module-scoped fixtures (a peer process, a loaded vocabulary) are built once.
MEMORY_HEAVY = frozenset({
    "spec/test_hf_import.py", "spec/test_batch_arrays.py", "spec/test_llama_vocabs.py",
    "spec/test_sentencepiece.py",
})


def _release_memory():
    """Collect garbage and hand glibc's freed heap back to the system (``malloc_trim``): a module's
    vocabularies and peers' tokenizers are freed when its fixtures end, but the heap they used
    stays in the process, and a worker that runs the memory-heavy modules one after another
    grew to 1.6 GB with the rest in between (1.1 GB at most within a module; issue 39).

    What is still alive then (the imported modules, the session's fixtures, the test modules'
    globals: alive to the end of the run) is frozen (``gc.freeze``): the collector's full passes,
    this one included, scan only what was made since the last module's end. Each worker spent
    23-28 s of the README's command in full passes over every object of the process, a sixth of
    its time; 3 s with the freeze. The command in a fresh clone's venv: 173 -> 130 s, its largest
    process 1.07 -> 1.13 GB (issue 39)."""
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
    gc.freeze()


def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_MALLOC_TRIM = _malloc_trim()


def pytest_collection_finish(session):
    _release_memory()  # the imports done, before the first module


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the marks into node ids
def pytest_collection_modifyitems(config, items):
    # in a worker, pytest-xdist says --dist loadgroup as option.loadgroup (its option.dist is "no")
    if not (getattr(config.option, "loadgroup", False) or getattr(config.option, "dist", "no") == "loadgroup"):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        module = item.nodeid.split("::", 1)[0]
        relative = module.split("tests/", 1)[-1]
        item.add_marker(pytest.mark.xdist_group("memory-heavy" if relative in MEMORY_HEAVY else module))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """With ``--durations`` (CI sets it), the time each test module took, setup and teardown
    included, summed over its tests (with pytest-xdist, over the workers that ran them)."""
    if config.option.durations is None:
        return
    per_module: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            nodeid = getattr(report, "nodeid", None)
            duration = getattr(report, "duration", None)
            if nodeid and isinstance(duration, float):
                module = nodeid.split("::", 1)[0].split("@", 1)[0]
                per_module[module] = per_module.get(module, 0.0) + duration
    if not per_module:
        return
    shown = sorted(per_module.items(), key=lambda item: -item[1])[:config.option.durations or None]
    terminalreporter.write_sep("=", f"time per test module (the {len(shown)} slowest of {len(per_module)})")
    for module, seconds in shown:
        terminalreporter.write_line(f"{seconds:8.2f}s  {module}")
