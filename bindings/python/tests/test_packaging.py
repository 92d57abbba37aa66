"""The package's version is the crate's and the header's, in every place it is written."""

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
