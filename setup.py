"""Build the Cython kernels in ``ubpe_native``.

Every ``ubpe_native/_*.pyx`` becomes one C++ extension. Compiler directives are set once
here. ``UBPE_DEBUG_BUILD`` builds for debugging (``.ci/debug_build.sh`` runs the kernel tests
on such a build):

* ``1`` (or the older ``UBPE_DEBUG_CHECKS=1``): Cython's bounds and initialization checks on
  (``boundscheck``, ``initializedcheck``; ``wraparound`` stays off as in the release build,
  so a negative index is an IndexError, not a silent read from the end), ``-O1 -g``;
* ``asan``: the same plus AddressSanitizer (run Python with ``LD_PRELOAD`` of libasan).
"""

import os
from glob import glob
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG_BUILD = os.environ.get("UBPE_DEBUG_BUILD") or os.environ.get("UBPE_DEBUG_CHECKS", "")
if DEBUG_BUILD not in ("", "0", "1", "asan"):
    raise SystemExit(f"UBPE_DEBUG_BUILD must be 0, 1 or asan, not {DEBUG_BUILD!r}")
DEBUG_CHECKS = DEBUG_BUILD in ("1", "asan")
SANITIZE = ["-fsanitize=address", "-fno-omit-frame-pointer"] if DEBUG_BUILD == "asan" else []

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG_CHECKS,
    "wraparound": False,
    "initializedcheck": DEBUG_CHECKS,
    "cdivision": True,
    "embedsignature": True,
}

COMPILE_ARGS = ["-std=c++17", "-Wno-sign-compare"] + (["-O1", "-g"] if DEBUG_CHECKS else ["-O3"]) + SANITIZE

extensions = [
    Extension(
        name=f"ubpe_native.{Path(source).stem}",
        sources=[source],
        language="c++",
        include_dirs=["ubpe_native"],
        extra_compile_args=COMPILE_ARGS,
        extra_link_args=SANITIZE,
    )
    for source in sorted(glob("ubpe_native/_*.pyx"))
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))
