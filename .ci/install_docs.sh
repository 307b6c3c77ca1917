#!/usr/bin/env bash
# What the docs lane needs on a bare machine (issue 38): Debian's Chromium and ChromeDriver for
# the browser test (never a browser that downloads itself), and the [docs] extra's packages as
# pyproject.toml lists them.
#   bash .ci/install_docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver ]]; then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium chromium-driver
fi
python3 -c '
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["docs"]))
' pyproject.toml | PIP_ROOT_USER_ACTION=ignore xargs python3 -m pip install -q --disable-pip-version-check
