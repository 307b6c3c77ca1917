"""Build the Cython kernels in ``ubpe_native``.

Every ``ubpe_native/_*.pyx`` becomes one C++ extension. Compiler directives are set once
here; ``UBPE_DEBUG_CHECKS=1`` turns bounds and wrap-around checks back on for debugging.
"""

import os
from glob import glob
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG_CHECKS = os.environ.get("UBPE_DEBUG_CHECKS", "0") == "1"

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG_CHECKS,
    "wraparound": DEBUG_CHECKS,
    "initializedcheck": DEBUG_CHECKS,
    "cdivision": True,
    "embedsignature": True,
}

COMPILE_ARGS = ["-std=c++17", "-Wno-sign-compare"] + (["-O0", "-g"] if DEBUG_CHECKS else ["-O3"])

extensions = [
    Extension(
        name=f"ubpe_native.{Path(source).stem}",
        sources=[source],
        language="c++",
        include_dirs=["ubpe_native"],
        extra_compile_args=COMPILE_ARGS,
    )
    for source in sorted(glob("ubpe_native/_*.pyx"))
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))
