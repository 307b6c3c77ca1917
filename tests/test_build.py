"""The build installs everything: meson has no glob, so a new kernel ``ubpe_native/_x.pyx``
must be listed in ``ubpe_native/meson.build``; every Python package under ``ubpe/`` must end up
in the install (``meson.build`` installs the folder whole, so a new subpackage needs no edit).

The install plan is meson's own (``meson setup`` in ``tmp_path``, then its introspection), read
the way meson-python reads it to make the wheel and the editable install. Skipped where the
sources or meson are not there (a wheel's tests run from outside the checkout)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

import ubpe

#: the checkout: the folder above this file that holds pyproject.toml (wherever under tests/ it sits)
ROOT = next((folder for folder in Path(__file__).resolve().parents if (folder / "pyproject.toml").is_file()),
            Path(__file__).resolve().parent.parent)
NATIVE = ROOT / "ubpe_native"
#: where meson-python installs ``pure: false`` packages (the wheel's root)
PLATLIB = "{py_platlib}"

pytestmark = pytest.mark.skipif(not (NATIVE / "meson.build").is_file(), reason="needs the source tree")


def listed_kernels() -> list[str]:
    """The names in ``kernels = [...]`` of ``ubpe_native/meson.build``."""
    text = (NATIVE / "meson.build").read_text(encoding="utf-8")
    body = re.search(r"^kernels = \[(.*?)^\]", text, re.DOTALL | re.MULTILINE)
    assert body is not None, "ubpe_native/meson.build has no `kernels = [...]` list"
    return re.findall(r"'(\w+)'", body[1])


def test_every_kernel_is_listed_in_meson_build():
    on_disk = sorted(path.stem for path in NATIVE.glob("_*.pyx"))
    assert sorted(listed_kernels()) == on_disk, "ubpe_native/meson.build `kernels` and ubpe_native/_*.pyx differ"


def test_build_requirements_agree():
    """``requirements-build.txt`` (for the editable install) is ``[build-system] requires``."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    lines = (ROOT / "requirements-build.txt").read_text(encoding="utf-8").splitlines()
    listed = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert listed == declared


@pytest.fixture(scope="module")
def meson_info(tmp_path_factory) -> Path:
    """``meson-info/`` of a fresh ``meson setup`` of the checkout (configured, nothing compiled)."""
    pytest.importorskip("mesonbuild", reason="meson is not installed (requirements-build.txt)")
    build = tmp_path_factory.mktemp("meson") / "build"
    # cython and ninja beside this interpreter, as requirements-build.txt installed them
    path = sysconfig.get_path("scripts") + os.pathsep + os.environ.get("PATH", "")
    done = subprocess.run(
        [sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(build), str(ROOT)],
        capture_output=True, text=True, env={**os.environ, "PATH": path}, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return build / "meson-info"


@pytest.fixture(scope="module")
def installed(meson_info) -> set[str]:
    """Every file the build installs, as its path in the wheel (``ubpe/fit.py``...)."""
    plan = json.loads((meson_info / "intro-install_plan.json").read_text(encoding="utf-8"))
    files = set()
    for kind, entries in plan.items():
        for source, target in entries.items():
            destination = Path(target["destination"])
            if destination.parts[0] != PLATLIB:
                continue
            inside = Path(*destination.parts[1:])
            if kind == "install_subdirs":
                excluded = {os.path.normpath(d) for d in target.get("exclude_dirs", [])}
                excluded_files = {os.path.normpath(f) for f in target.get("exclude_files", [])}
                for folder, subfolders, names in os.walk(source):
                    relative = Path(folder).relative_to(source)
                    subfolders[:] = [d for d in subfolders if os.path.normpath(relative / d) not in excluded]
                    files.update(
                        (inside / relative / name).as_posix()
                        for name in names
                        if os.path.normpath(relative / name) not in excluded_files
                    )
            else:
                files.add(inside.as_posix())
    return files


def sources(package: str, *patterns: str) -> set[str]:
    """The files of ``package`` (a folder of the checkout) matching ``patterns``, at any depth."""
    return {
        path.relative_to(ROOT).as_posix()
        for pattern in patterns
        for path in (ROOT / package).rglob(pattern)
        if "__pycache__" not in path.parts
    }


def test_every_python_file_of_ubpe_is_installed(installed):
    packages = {Path(init).parent.as_posix() for init in sources("ubpe", "__init__.py")}
    assert {"ubpe", "ubpe/encoders"} <= packages
    assert all(Path(path).parent.as_posix() in packages for path in sources("ubpe", "*.py")), \
        "a folder of ubpe/ with Python files but no __init__.py"
    missing = sources("ubpe", "*.py", "py.typed") - installed
    assert not missing, f"not installed by meson.build: {sorted(missing)}"


def test_every_kernel_and_native_file_is_installed(installed):
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    kernels = {f"ubpe_native/{path.stem}{suffix}" for path in NATIVE.glob("_*.pyx")}
    missing = (kernels | sources("ubpe_native", "*.py", "*.pxd", "*.h")) - installed
    assert not missing, f"not installed by ubpe_native/meson.build: {sorted(missing)}"


def test_the_build_version_is_the_package_version(meson_info):
    project = json.loads((meson_info / "intro-projectinfo.json").read_text(encoding="utf-8"))
    assert project["version"] == ubpe.__version__


def test_the_version_sorts_above_the_reference_so_pip_keeps_this_package():
    """``pip install -U ubpe`` replaces an installed ``ubpe`` by a higher version of the index:
    at 0.1.0 it put the reference (0.2.x/0.3.0) over this package; above every reference
    release, and a development release (not on PyPI), it keeps this one."""
    import gzip

    from packaging.version import Version

    # the reference versions our golden fixtures were recorded from (0.3.0)
    recorded = {json.loads(gzip.decompress(path.read_bytes()))["reference_version"]
                for path in (ROOT / "tests" / "golden").glob("*.json.gz")}
    ours = Version(ubpe.__version__)
    assert recorded and all(ours > Version(version) for version in recorded | {"0.2.2"}) and ours.is_devrelease


@pytest.mark.parametrize("folder", ["ubpe_native-0.3.0.dist-info", "ubpe_native-0.2.2.dist-info",
                                    "UBPE_Native-0.3.0-py3.12.egg-info"])
def test_importing_beside_the_reference_kernels_is_a_clear_error(tmp_path, folder):
    """The reference's ``ubpe-native`` writes into our ``ubpe_native/``: ``import ubpe`` with its
    metadata on the path refuses, naming it and what to do (a subprocess: a fresh import)."""
    (tmp_path / folder).mkdir()
    (tmp_path / "ubpe_native").mkdir()  # the folder both write (an empty one: the real one is found further on)
    (tmp_path / "ubpe-1.0.0.dist-info").mkdir()  # a distribution named ubpe alone is no clash
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", "import ubpe"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: the reference package ubpe-native ") and "pip uninstall ubpe-native ubpe" in last
    alone = tmp_path / "alone"
    (alone / "ubpe-1.0.0.dist-info").mkdir(parents=True)
    env["PYTHONPATH"] = os.pathsep.join([str(alone), os.environ.get("PYTHONPATH", "")])
    assert subprocess.run([sys.executable, "-c", "import ubpe"], env=env, cwd=alone).returncode == 0
    stale = tmp_path / "stale"  # the reference's metadata where no ubpe_native/ is: nothing of it to clash with
    (stale / folder).mkdir(parents=True)
    env["PYTHONPATH"] = os.pathsep.join([str(stale), os.environ.get("PYTHONPATH", "")])
    assert subprocess.run([sys.executable, "-c", "import ubpe"], env=env, cwd=stale).returncode == 0
