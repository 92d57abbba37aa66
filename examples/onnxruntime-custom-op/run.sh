#!/usr/bin/env bash
# Fetch ONNX Runtime's headers (once), build libgatherkit_ort.so, run the tests against the pip
# onnxruntime. Needs: target/release/libgatherkit.so (cargo build --release --locked) or another
# build of it named by GATHERKIT_LIBRARY, cmake, a C compiler, python3 with onnxruntime, onnx,
# numpy and pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
include="$(./fetch_ort_headers.sh)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DORT_INCLUDE_DIR="$include" \
    ${GATHERKIT_LIBRARY:+-DGATHERKIT_LIBRARY="$GATHERKIT_LIBRARY"}
cmake --build build -j2
python3 -m pytest -q test_gatherkit_ort.py "$@"
