"""Experiments for ubpe: real datasets (`experiments.datasets`) and the configs of the
repository's experiments (`configs/`), run by the engine that ships in the wheel (`ubpe.lab`:
runner, metrics, paired statistics, report and plots). ``python -m experiments`` runs the
default experiment into ``runs/default/`` (ignored by git: running it leaves the checkout as it
was); ``--results results`` regenerates the published ``results/default/``. ``ubpe experiment
my.toml`` runs a config on one's own files from anywhere."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The named configs (``python -m experiments large`` reads ``large.toml`` here).
CONFIG_DIR = Path(__file__).resolve().parent / "configs"
#: The repository's published results (``results/<experiment>/``, tracked by git): written
#: only when a run names this folder (``--results results``).
RESULTS_DIR = REPO_ROOT / "results"
#: Where ``python -m experiments`` writes by default (``runs/<experiment>/``, ignored by git).
RUNS_DIR = REPO_ROOT / "runs"
#: Fitted models and per-cell raw results of the repository's runs (ignored by git).
CACHE_DIR = Path(__file__).resolve().parent / ".cache"


def refuse_dirty(out: Path, allow_dirty: bool) -> None:
    """Stop (SystemExit, one line) before an experiment writes ``out`` inside the published
    ``results/`` from a tree with uncommitted changes, unless ``allow_dirty``: a published
    result names the commit that computed it (issue 34, point 7); and before it writes its
    files into ``results/`` itself, the folder of every experiment's folder (``--results
    results`` names the parent for the runner's experiments, the output folder for these)."""
    if Path(out).resolve() == RESULTS_DIR.resolve():
        raise SystemExit(f"{out} holds every experiment's folder of published results: write this "
                         "experiment's own folder (no --results publishes it there)")
    if Path(out).resolve().is_relative_to(RESULTS_DIR.resolve()):
        from ubpe.lab.provenance import require_clean

        require_clean(allow_dirty)
