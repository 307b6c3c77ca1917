#!/usr/bin/env bash
# The wheel installs and works with no compiler (issue 25): build it as `python -m build` does
# (an isolated build environment), install it into a new venv where every C/C++ compiler fails,
# and run the README's test command there from a copy of the checkout without the package's
# sources, so that `import ubpe` can only find the wheel, then the experiments layer. Prints the
# times it took.
#
#   bash .ci/wheel_check.sh            # ~4 min of build + the specification layer, 2 cores
#
# Exit status: the test run's. Everything happens in a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() { python3 -c "import time; print(f'{time.time() - $1:.0f}')"; }

started=$(python3 -c "import time; print(time.time())")
python3 -m pip install -q build
python3 -m build --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 1; }
echo "wheel built in $(seconds "$started") s: $(basename "$work"/dist/*.whl)"

# no compiler on the path, and CC/CXX that fail: an install that tried to compile would stop here
mkdir "$work/no-compiler"
for name in cc c++ gcc g++ clang clang++ x86_64-linux-gnu-gcc x86_64-linux-gnu-g++; do
    printf '#!/bin/sh\necho "no compiler in this check" >&2\nexit 1\n' >"$work/no-compiler/$name"
    chmod +x "$work/no-compiler/$name"
done
python3 -m venv "$work/venv"
export PATH="$work/no-compiler:$work/venv/bin:$PATH" CC=false CXX=false
started=$(python3 -c "import time; print(time.time())")
wheel=$(ls "$work"/dist/*.whl)
python -m pip install -q --only-binary ubpe "$wheel[test]"
echo "wheel and test dependencies installed in $(seconds "$started") s, no compiler"

# the checkout's tests and files, without ubpe/ and ubpe_native/: import ubpe finds the wheel;
# the data the tests read stay where experiments/install_data.sh put them
export UBPE_DATA_CACHE="${UBPE_DATA_CACHE:-$PWD/experiments/.cache}"
mkdir "$work/checkout"
git ls-files -z | grep -zv -e '^ubpe/' -e '^ubpe_native/' | xargs -0 cp --parents -t "$work/checkout"
cd "$work/checkout"
python -c "import ubpe, ubpe_native._ranked as k; print('testing', ubpe.__version__, 'from', k.__file__)"
started=$(python3 -c "import time; print(time.time())")
status=0
python -m pytest -q -p no:cacheprovider -n auto --dist loadgroup tests/spec tests/units tests/test_build.py || status=$?
echo "specification layer on the wheel: exit $status in $(seconds "$started") s"
# the experiments engine and its tests with no repository around ubpe (issue 37: REPO_ROOT is None)
started=$(python3 -c "import time; print(time.time())")
python -m pytest -q -p no:cacheprovider tests/experiments || status=$?
echo "experiments layer on the wheel: exit $status in $(seconds "$started") s"
exit $status
