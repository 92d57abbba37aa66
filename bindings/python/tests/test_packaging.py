"""The package's version is the crate's and the header's, in every place it is written."""

import ctypes
import os
import pathlib
import re

import gatherkit
from gatherkit import _abi

ROOT = pathlib.Path(__file__).resolve().parents[3]


def declared_version(path, section):
    """`version = "..."` of a TOML file's [section] (the first one in it)."""
    text = (ROOT / path).read_text()
    body = text.split(f"[{section}]", 1)[1]
    return re.search(r'^version\s*=\s*"([^"]+)"', body, re.M).group(1)


def test_versions_agree():
    header = f"{_abi.GK_VERSION_MAJOR}.{_abi.GK_VERSION_MINOR}.{_abi.GK_VERSION_PATCH}"
    assert gatherkit.__version__ == header
    assert declared_version("Cargo.toml", "package") == header
    assert declared_version("pyproject.toml", "project") == header


def test_the_loaded_library_is_the_version_the_binding_was_written_for():
    assert gatherkit.library_version() == gatherkit.__version__


def test_the_source_trees_most_recent_optimized_build_is_loaded_first(tmp_path):
    from gatherkit import _tree_builds

    def build(rel, mtime):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        os.utime(path, ns=(mtime, mtime))
        return str(path)

    assert _tree_builds(tmp_path) == []
    debug = build("target/debug/libgatherkit.so", 3_000_000_000)
    assert _tree_builds(tmp_path) == [debug]
    cmake = build("build/lib/libgatherkit.so", 1_000_000_000)
    release = build("target/release/libgatherkit.so", 2_000_000_000)
    # cargo build --release after the CMake build: cargo's library first; the newer debug build
    # never before an optimized one.
    assert _tree_builds(tmp_path) == [release, cmake, debug]
    os.utime(cmake, ns=(4_000_000_000, 4_000_000_000))
    assert _tree_builds(tmp_path) == [cmake, release, debug]
    # Built at the same moment: CMake's first.
    for path in (cmake, release):
        os.utime(path, ns=(5, 5))
    assert _tree_builds(tmp_path) == [cmake, release, debug]


def test_library_path_names_the_loaded_library():
    path = gatherkit.library_path()
    if os.environ.get("GATHERKIT_LIBRARY"):
        assert path == os.path.realpath(os.environ["GATHERKIT_LIBRARY"])
    # Loading that path again hands back the loaded library itself (the loader keeps one copy
    # per file), not another build: the same function address.
    again = ctypes.CDLL(path)
    address = ctypes.cast(again.gk_version, ctypes.c_void_p).value
    assert address == ctypes.cast(gatherkit._lib.gk_version, ctypes.c_void_p).value
