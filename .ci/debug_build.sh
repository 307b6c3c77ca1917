#!/usr/bin/env bash
# CI lane (issue 13): the kernels built for debugging - Cython's bounds and initialization
# checks on (meson option `checks`), and AddressSanitizer when the compiler has it (meson's
# `b_sanitize=address`) - in a copy of the sources (the checkout's own build is left alone),
# then the kernel checks and property tests run against that copy. Needs a C++ compiler; meson,
# ninja and Cython come from the build requirements.
#   .ci/debug_build.sh [pytest args...]     UBPE_DEBUG_BUILD=1 forces checks without ASan
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$(python3 -c 'import sys; print(sys.executable)')"  # the real interpreter, for LD_PRELOAD
work="$(mktemp -d "${TMPDIR:-/tmp}/ubpe-debug-XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$SECONDS

# the build requirements and the test dependencies, as pyproject.toml states them
"$py" -c '
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))
print("\n".join(project["build-system"]["requires"] + project["project"]["dependencies"]
                + project["project"]["optional-dependencies"]["test"]))
' "$root/pyproject.toml" | PIP_ROOT_USER_ACTION=ignore xargs "$py" -m pip install -q --disable-pip-version-check

tar -C "$root" --exclude=__pycache__ --exclude='*.so' --exclude='*.cpp' --exclude=.cache -cf - \
    meson.build meson.options pyproject.toml README.md ubpe ubpe_native tests experiments | tar -C "$work" -xf -
# meson and ninja as the build requirements installed them beside this interpreter
PATH="$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
# the installed data stay where experiments/install_data.sh put them (tests that need them skip
# when they are not there)
export UBPE_DATA_CACHE="${UBPE_DATA_CACHE:-$root/experiments/.cache}"

# AddressSanitizer if the compiler can link it (the Python interpreter is not instrumented,
# so libasan is preloaded; leak detection would report the interpreter's own allocations)
mode="${UBPE_DEBUG_BUILD:-}"
cxx="${CXX:-g++}"
libasan="$("$cxx" -print-file-name=libasan.so 2>/dev/null || true)"
if [[ -z "$mode" ]]; then
    mode=1
    if [[ "$libasan" == /* && -e "$libasan" ]] &&
        echo 'int main() { return 0; }' | "$cxx" -x c++ -fsanitize=address -o "$work/asan-probe" - 2>/dev/null; then
        mode=asan
    fi
fi
echo "debug build: UBPE_DEBUG_BUILD=$mode in $work"
options=(-Dchecks=true -Doptimization=1 -Ddebug=true)
if [[ "$mode" == asan ]]; then
    options+=(-Db_sanitize=address)  # with -fno-omit-frame-pointer
fi
if ! (cd "$work" && meson setup build "${options[@]}" && meson compile -C build) >"$work/build.log" 2>&1; then
    grep -v "performance hint" "$work/build.log" >&2
    exit 1
fi
# the kernels beside their sources, where the tests of the copy import them
cp "$work"/build/ubpe_native/_*.so "$work/ubpe_native/"
echo "built in $((SECONDS - start)) s"

# An editable install of the checkout (meson-python's) puts an import hook before sys.path that
# would serve the checkout's own build here. The tests run in a venv that sees this environment's
# packages through plain path lines of a .pth (the environment's own .pth files, that hook's
# among them, are then not run).
"$py" -m venv --without-pip "$work/venv"
"$py" -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
    >"$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/environment.pth"
py="$work/venv/bin/python"

run=(env)
if [[ "$mode" == asan ]]; then
    # libstdc++ preloaded beside libasan: the interpreter does not link it, and ASan's __cxa_throw
    # interceptor, resolved when libasan starts, would find no real __cxa_throw (a C++ exception -
    # the regex VM's step budget, an out-of-memory refusal - then aborts: "CHECK failed:
    # asan_interceptors.cpp ... real___cxa_throw")
    libstdcxx="$("$cxx" -print-file-name=libstdc++.so)"
    run=(env LD_PRELOAD="$libasan:$libstdcxx" ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
fi
# the copy, not the checkout or an installed ubpe, must be what the tests import; the checks
# must be compiled in, and libasan loaded
grep -q __Pyx_RaiseBufferIndexError "$work"/build/ubpe_native/_ranked.*.so.p/_ranked.pyx.cpp
(cd "$work" && "${run[@]}" "$py" -c '
import sys, ubpe, ubpe_native._ranked as r
assert r.__file__.startswith(sys.argv[1]) and ubpe.__file__.startswith(sys.argv[1]), (r.__file__, ubpe.__file__)
assert sys.argv[2] != "asan" or "libasan" in open("/proc/self/maps").read(), "libasan is not loaded"
' "$work" "$mode")
# the kernel layer (tests/kernels: argument checks, out-of-memory cases skipped under ASan, the
# property tests of every kernel) and the spec tests that drive the kernels hardest (splitting,
# byte-level and batch paths on llama.cpp's vocabularies, hardening); the CLI is left out (it would run the
# installed ubpe, not this build)
(cd "$work" && "${run[@]}" "$py" -m pytest -q -p no:cacheprovider --durations=10 \
    tests/kernels tests/spec/test_splitting.py tests/spec/test_bytelevel.py tests/spec/test_encode_api.py \
    tests/spec/test_batch_encode.py \
    -k "not out_of_memory and not cli" "$@")
echo "debug lane done in $((SECONDS - start)) s"
