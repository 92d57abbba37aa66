#!/usr/bin/env bash
# What a Python user does, checked end to end and offline: `python -m build` makes an sdist from
# the source tree's tracked files and a wheel from that sdist (so the sdist is complete), the wheel installs into a
# fresh virtual environment, and the binding's whole pytest suite passes there with no
# GATHERKIT_LIBRARY and no PYTHONPATH: `import gatherkit` must find the library inside the
# installed package. Usage: wheel_in_fresh_venv.sh SOURCE_DIR [CARGO_TARGET_DIR]
#
# Offline: the build runs without isolation (setuptools, setuptools-rust and wheel come from the
# interpreter running this script), and the venv sees that interpreter's site-packages for numpy,
# pytest, ml_dtypes (and torch, when installed) but has gatherkit only from the wheel.
set -euo pipefail
src=$(cd "$1" && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The library's dependencies are compiled once per target directory: share the build's.
if [ -n "${2:-}" ]; then export CARGO_TARGET_DIR=$2; fi

# Built from the tracked files alone, as a fresh clone has them (no target/, no build/), where git
# can list them; from the tree itself otherwise.
tree=$src
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    tree=$work/src
    mkdir "$tree"
    (cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$tree")
fi
"$python" -m build --no-isolation --outdir "$work/dist" "$tree" >"$work/build.log" 2>&1 || {
    tail -n 40 "$work/build.log"; exit 1; }
ls "$work/dist"
wheel=$(ls "$work"/dist/gatherkit-*.whl)
case "$wheel" in *-py3-none-linux_*.whl) ;; *) echo "FAIL: unexpected wheel tag: $wheel" >&2; exit 1 ;; esac

"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-deps "$wheel"

cd "$work"  # away from the source tree, so nothing there can be imported by accident
run() { env -u GATHERKIT_LIBRARY -u PYTHONPATH "$work/venv/bin/python" "$@"; }
run - "$work/venv" <<'EOF'
import pathlib, sys
import gatherkit
venv = pathlib.Path(sys.argv[1]).resolve()
module = pathlib.Path(gatherkit.__file__).resolve()
library = pathlib.Path(gatherkit._lib._name).resolve()
assert venv in module.parents, f"gatherkit imported from {module}, not from the venv"
assert library.parent == module.parent, f"library loaded from {library}, not from the package"
assert gatherkit.library_version() == gatherkit.__version__, (gatherkit.library_version(), gatherkit.__version__)
print(f"gatherkit {gatherkit.__version__} from {module.parent}, library {library.name}")
EOF
run -m pytest -q -p no:cacheprovider "$src/bindings/python/tests"
