"""Where a result came from: the git commit, the machine, the library versions.

Shared by the experiment runner (``run.json``) and the benchmarks (their report header), so
both describe a run the same way. Nothing here needs the network; a missing ``git`` gives
empty strings rather than an error.

>>> sorted(machine())
['cores', 'cores_available', 'cpu', 'platform']
>>> package_versions(["no-such-package-xyz"])["no-such-package-xyz"]
'not installed'
>>> len(load_average())
3
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import platform
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The checkout of ubpe this module runs from (git runs here), or None when ubpe is installed
#: from a wheel: then the version of ubpe is what names the code, and no unrelated repository
#: that happens to hold the environment (a venv inside a project) is asked for its commit.
REPO_ROOT: Path | None = next((folder for folder in [Path(__file__).resolve().parents[2]]
                               if (folder / ".git").exists() and (folder / "meson.build").is_file()), None)
#: Libraries whose versions the experiment records.
EXPERIMENT_PACKAGES = ("numpy", "scipy", "pandas", "matplotlib", "tqdm", "regex", "Cython")
_GIT_TIMEOUT_SECONDS = 10


def git(*args: str) -> str:
    """``git <args>`` run in the repository, its stripped output ("" when git fails or ubpe
    runs from an install, not a checkout)."""
    if REPO_ROOT is None:
        return ""
    try:
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=_GIT_TIMEOUT_SECONDS, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def git_state(*, exclude: Iterable[str] = ()) -> dict[str, object]:
    """``{"commit": <full hash>, "dirty": bool}``; paths in ``exclude`` do not count as dirty.

    A run rewrites its own results folder, so the runner excludes ``results``: only changes
    to anything else make the recorded commit "dirty".
    """
    pathspec = [".", *(f":(exclude){path}" for path in exclude)]
    status = git("status", "--porcelain", "--untracked-files=no", "--", *pathspec)
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(status)}


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def available_cores() -> int:
    """Cores this process may run on (its affinity mask), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine() -> dict[str, object]:
    """Platform, CPU model, cores, and the cores available to this process."""
    return {"platform": platform.platform(), "cpu": cpu_model(), "cores": os.cpu_count(),
            "cores_available": available_cores()}


def load_average() -> tuple[float, float, float]:
    """The machine's 1, 5 and 15 minute load averages ((0, 0, 0) where the OS has none):
    a benchmark records them, as timings on a busy machine are noisy."""
    try:
        return tuple(round(x, 2) for x in os.getloadavg())  # type: ignore[return-value]
    except OSError:
        return (0.0, 0.0, 0.0)


def require_clean(allow_dirty: bool, *, exclude: Iterable[str] = ("results",)) -> dict[str, object]:
    """:func:`git_state`, refusing (SystemExit) a checkout with uncommitted changes unless
    ``allow_dirty``: a result must name the code that produced it."""
    state = git_state(exclude=exclude)
    if state["dirty"] and not allow_dirty:
        raise SystemExit("the checkout has uncommitted changes: commit them first, or pass --allow-dirty "
                         "(the results then say 'dirty')")
    return state


def package_versions(names: Iterable[str] = EXPERIMENT_PACKAGES) -> dict[str, str]:
    """Python's and ubpe's versions, then each named distribution's ("not installed")."""
    from importlib import metadata

    import ubpe

    versions = {"python": platform.python_version(), "ubpe": ubpe.__version__}
    for name in names:
        if name == "ubpe":  # the imported package's own: a stale metadata folder beside it may say otherwise
            continue
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def peak_memory_mb() -> dict[str, float]:
    """Peak resident memory (MB) of this process and of its largest finished child process
    (the pool's workers, once the pool is shut down): ``getrusage``'s ``ru_maxrss``.

    >>> sorted(peak_memory_mb())
    ['largest_worker', 'main']
    """
    import resource

    def mb(who: int) -> float:
        kib = resource.getrusage(who).ru_maxrss  # KiB on Linux
        return round(kib / 1024, 1)

    return {"main": mb(resource.RUSAGE_SELF), "largest_worker": mb(resource.RUSAGE_CHILDREN)}


# -- the data a result was computed on (issue 27: a committed result is checked against it) ----

def units_checksum(ds) -> str:
    """SHA-256 of a split's document ids and their units, in order."""
    payload = json.dumps([list(ds.doc_ids), list(ds.doc_units), ds.unit])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _json_cap(max_symbols: float | None) -> int | None:
    if max_symbols is None or (isinstance(max_symbols, float) and math.isinf(max_symbols)):
        return None if max_symbols is None else -1
    return int(max_symbols)


def data_record(ds, *, registry_name: str, max_symbols: float | None,
                options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``run.json`` record of one loaded split: how to load it again, and its fingerprints.

    ``max_symbols`` is what was passed to the loader (``None``: its default; ``math.inf`` is
    recorded as -1).
    """
    return {"dataset": registry_name, "split": ds.split, "max_symbols": _json_cap(max_symbols),
            "options": dict(options or {}), "n_docs": ds.n_docs, "n_symbols": ds.n_symbols,
            "checksum": ds.checksum, "units_checksum": units_checksum(ds)}


#: The file beside the result folders that lists the ones known to be stale, with the reason.
STALE_FILE = "STALE.toml"


def known_stale(results_root: Path) -> dict[str, str]:
    """``results_root/STALE.toml``: result folder name -> why it is stale and not regenerated
    (``[stale.NAME] reason = "..."``); empty if there is no such file."""
    path = Path(results_root) / STALE_FILE
    if not path.exists():
        return {}
    with path.open("rb") as handle:
        table = tomllib.load(handle)
    return {name: entry["reason"] for name, entry in table.get("stale", {}).items()}


# -- the config and the code a result was computed with (issue 34, point 7) -----------------

#: Packages whose modules compute results: their source files are hashed into ``run.json``.
COMPUTING_PACKAGES = ("ubpe", "ubpe_native", "experiments")
#: Modules of those packages that only drive, render or record (the command line, the report's
#: Markdown and plots, this module, the freshness check): never part of the code hash.
NOT_COMPUTING = ("ubpe.cli", "ubpe.lab.report", "ubpe.lab.answers", "ubpe.lab.formatting",
                 "ubpe.lab.plots", "ubpe.lab.extras_report", "ubpe.lab.example",
                 "ubpe.lab.provenance", "ubpe.view", "experiments.__main__", "experiments.freshness",
                 "experiments.findings")
#: Sources of a compiled kernel: its Cython module and declarations beside it.
KERNEL_SUFFIXES = (".pyx", ".pxd")
#: What a kernel's source compiles in from its package: cimported declarations (whose inline
#: functions are compiled into it) and C++ headers (``cdef extern from``, ``#include``).
_CIMPORT = re.compile(r"^[ \t]*(?:from[ \t]+\w+\.(\w+)[ \t]+cimport|cimport[ \t]+\w+\.(\w+))", re.M)
_HEADER = re.compile(r'extern[ \t]+from[ \t]+"([\w./-]+)"|#[ \t]*include[ \t]+"([\w./-]+)"')


def config_sha256(config_dict: dict[str, Any]) -> str:
    """SHA-256 of a resolved config (`ExperimentConfig.as_dict`), keys sorted.

    >>> config_sha256({"b": 1, "a": [2]}) == config_sha256({"a": [2], "b": 1})
    True
    """
    text = json.dumps(config_dict, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def computing(name: str) -> bool:
    """Whether module ``name`` is one whose source the code hash covers.

    >>> computing("ubpe.lab.ngram"), computing("ubpe.lab.report"), computing("numpy")
    (True, False, False)
    """
    top = name.split(".")[0]
    return top in COMPUTING_PACKAGES and not any(name == m or name.startswith(m + ".") for m in NOT_COMPUTING)


def module_sources(name: str, module: Any) -> dict[str, Path]:
    """The source files of one loaded module, by their path in the repository
    (``ubpe/lab/ngram.py``): a Python module's file; a compiled kernel's ``.pyx`` / ``.pxd``
    (found beside it or in the package's folders). Empty when no source is on disk."""
    file = getattr(module, "__file__", None)
    if not file:
        return {}
    path = Path(file)
    parts = name.split(".")
    if path.suffix == ".py":
        relative = "/".join(parts) + ("/__init__.py" if path.name == "__init__.py" else ".py")
        return {relative: path}
    found = {}
    package = sys.modules.get(".".join(parts[:-1]))
    folders = [path.parent, *(Path(p) for p in getattr(package, "__path__", []))]
    if REPO_ROOT is not None:  # an editable install: the module is in the build folder, its sources in the checkout
        folders.append(REPO_ROOT.joinpath(*parts[:-1]))
    for suffix in KERNEL_SUFFIXES:
        for folder in folders:
            source = folder / f"{parts[-1]}{suffix}"
            if source.is_file():
                found["/".join(parts) + suffix] = source
                break
    return compiled_in(found, "/".join(parts[:-1]))


def compiled_in(sources: dict[str, Path], package: str) -> dict[str, Path]:
    """``sources`` and, transitively, the files of ``package``'s folder they compile in: the
    ``.pxd`` of every module they cimport from the package and every header they name (a change
    to the regex VM's ``regex_vm.h`` changes ``_regex``'s results as much as its ``.pyx`` does).
    Names that are not files beside them (``Python.h``, libc's) are left out."""
    found = dict(sources)
    todo = list(sources.values())
    while todo:
        path = todo.pop()
        text = path.read_text(encoding="utf-8", errors="replace")
        names = [f"{a or b}.pxd" for a, b in _CIMPORT.findall(text)] + [a or b for a, b in _HEADER.findall(text)]
        for name in names:
            candidate = path.parent / name
            key = f"{package}/{name}"
            if key not in found and candidate.is_file():
                found[key] = candidate
                todo.append(candidate)
    return found


def code_record(names: Iterable[str] = ()) -> dict[str, Any]:
    """``run.json``'s ``code``: SHA-256 of every source file of the computing modules that ran
    (`computing`: ubpe's, its kernels' and the repository's experiments' modules loaded in this
    process, plus ``names`` that workers reported), by repository path, and one hash of them all.

    The set is what ran, not the whole package: a change to a format reader the run never
    loaded does not make its result stale; a change to the Kneser-Ney code it ran does.
    """
    files: dict[str, str] = {}
    for name in sorted(set(sys.modules) | set(names)):
        if not computing(name):
            continue
        module = sys.modules.get(name)
        if module is None:  # loaded in a worker only: its source is found by importing it here
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
        for relative, path in module_sources(name, module).items():
            files[relative] = file_digest(path)
    overall = hashlib.sha256("".join(f"{k}\0{v}\n" for k, v in sorted(files.items())).encode()).hexdigest()
    return {"sha256": overall, "files": dict(sorted(files.items())),
            "rule": "source files of the computing modules that ran (ubpe.lab.provenance.code_record)"}


def side_record(settings: dict[str, Any], names: Iterable[str] = ()) -> dict[str, Any]:
    """``run.json``'s ``config``, ``config_sha256`` and ``code`` for an experiment that has no
    config file (``python -m experiments midi``, ``variance``, ...): its settings (the command
    line's values and the module constants it ran with) and the computing modules loaded in this
    process plus ``names`` (`code_record`). `experiments.freshness.check_provenance` then checks
    the code; the settings are the code's own constants, so the code hash covers them too.

    >>> record = side_record({"merges": [64]}, ["ubpe.lab.ngram"])
    >>> record["config"], "ubpe/lab/ngram.py" in record["code"]["files"]
    ({'merges': [64]}, True)
    """
    config = json.loads(json.dumps(settings, default=str))
    return {"config": config, "config_sha256": config_sha256(config), "code": code_record(names)}


def file_digest(path: Path) -> str:
    """SHA-256 of a source file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
