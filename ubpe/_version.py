"""The version, and the check that this environment holds *this* ubpe.

The distribution is named ``ubpe``, as the reference package on PyPI (0.2.x/0.3.0), whose
import names ``ubpe`` and ``ubpe_native`` it shares: under one distribution name pip replaces
one with the other instead of letting two distributions write the same files. The version
sorts above every reference release, so ``pip install -U ubpe`` keeps this one (with 0.1.0 it
silently installed the reference over it), and ``.dev0`` says it is not on PyPI.

The reference's kernels come as a second distribution, ``ubpe-native``, whose files are our
``ubpe_native/``: installed beside this package, one overwrote the other's, and uninstalling it
would delete ours. :func:`check_environment` refuses that environment with what to do.
"""

from __future__ import annotations

__version__ = "1.0.0.dev0"

#: The reference's kernels' distribution: it installs into our ``ubpe_native/``.
REFERENCE_KERNELS = "ubpe-native"
#: ... whose metadata folder is ``ubpe_native-<version>.dist-info`` (the normalized name).
METADATA_NAME = "ubpe_native"


def check_environment(path: list[str] | None = None) -> None:
    """Raise ImportError when the reference's ``ubpe-native`` is installed on ``path`` (default:
    ``sys.path``), found by its metadata folder beside a ``ubpe_native/`` folder, as
    ``importlib.metadata`` finds it (that module alone would add ~15 ms to ``import ubpe``).

    >>> check_environment()  # this environment holds only this package
    """
    import os
    import sys

    for entry in sys.path if path is None else path:
        if not os.path.isdir(os.path.join(entry or ".", "ubpe_native")):  # its files go there: no folder, no clash
            continue  # (a stat, where a listing of the current folder alone can cost milliseconds)
        try:
            names = os.listdir(entry or ".")
        except OSError:  # not a folder (a zip), or gone
            continue
        for name in names:
            stem, _, kind = name.rpartition(".")
            project, _, version = stem.partition("-")
            if kind in ("dist-info", "egg-info") and project.replace(".", "_").lower() == METADATA_NAME:
                raise ImportError(
                    f"the reference package {REFERENCE_KERNELS} {version} is installed in this environment "
                    f"({os.path.join(entry, name)}): its files and this ubpe {__version__}'s kernels are both "
                    f"the folder ubpe_native/, so one overwrote the other. Uninstall both (pip uninstall "
                    f"{REFERENCE_KERNELS} ubpe) and reinstall this package, or use a separate virtual "
                    "environment for the reference.")
