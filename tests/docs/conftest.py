"""The documentation site, built once for the layer (``-m docs``; ``.ci/run`` runs it, the
README's test command does not): ``mkdocs build --strict`` into a temporary folder, and that
folder served on 127.0.0.1 for the browser test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from site_server import serve

ROOT = Path(__file__).resolve().parents[2]
#: a build takes ~20 s on 2 idle cores; this only stops a hung one
BUILD_TIMEOUT = 900


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site as `mkdocs build --strict` writes it (any warning fails the build)."""
    pytest.importorskip("mkdocs", reason="the [docs] extra")
    folder = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about its successor
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
                            cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT, env=env)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    assert not re.search(r"^(WARNING|ERROR)", result.stderr, re.MULTILINE), result.stderr
    return folder


@pytest.fixture(scope="session")
def site_url(built_site):
    server = serve(built_site)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
