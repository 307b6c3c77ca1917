"""The experiments engine ships in the wheel (`ubpe.lab`): it imports without the repository.

No module of ``ubpe/lab`` imports the repository's ``experiments`` package (read from the
sources, so a deferred import counts too), and the engine imports in a fresh interpreter
whose path holds only the folder above ``ubpe`` and ``ubpe_native``, started from tmp_path.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ubpe
import ubpe_native

LAB = Path(ubpe.__file__).resolve().parent / "lab"


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_no_lab_module_imports_the_repository():
    modules = sorted(LAB.rglob("*.py"))
    assert len(modules) > 10
    for path in modules:
        offending = {m for m in _imported_modules(path) if m.split(".")[0] in ("experiments", "tests", "benchmarks")}
        assert not offending, f"{path.relative_to(LAB)} imports {offending}"


def test_the_engine_imports_without_the_repository_on_the_path(tmp_path):
    roots = {Path(ubpe.__file__).resolve().parents[1], Path(ubpe_native.__file__).resolve().parents[1]}
    if len(roots) != 1:
        pytest.skip("ubpe and ubpe_native come from different folders (an editable build)")
    env = {**os.environ, "PYTHONPATH": str(roots.pop())}
    code = ("import sys, ubpe.lab.runner, ubpe.lab.report, ubpe.lab.datasets.files\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'experiments'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_docstring_examples():
    import doctest

    from ubpe import lab
    from ubpe.lab import example, outputs
    from ubpe.lab.datasets import _arrays, _sequences, _tables, _text, files, split

    for module in (lab, example, split, outputs, files, _text, _tables, _arrays, _sequences):
        assert doctest.testmod(module).failed == 0, module.__name__
