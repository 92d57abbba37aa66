"""gatherkit/_abi.py against include/gatherkit.h: the binding keeps its own copy of the header's
numbers (so that it works with the shared library alone), and this is what keeps that copy honest.

GATHERKIT_HEADER=path/to/gatherkit.h checks against another header (an installed one, say);
otherwise the header of this source tree is used.
"""

import importlib.util
import os
import pathlib
import re
import runpy

import pytest

SOURCE_TREE_HEADER = pathlib.Path(__file__).resolve().parents[3] / "include" / "gatherkit.h"

# An object-like macro whose whole value is one integer literal, as cbindgen writes constants.
# Anything else (GK_OPTIONS_INIT's initializer, a parenthesized or suffixed literal) is left out on
# purpose: if a constant the table holds stops matching, it shows up below as missing from the
# header rather than going unchecked.
INTEGER_DEFINE = re.compile(r"^\s*#\s*define\s+(GK_\w+)\s+(-?(?:0[xX][0-9A-Fa-f]+|[0-9]+))\s*$")


def header_path():
    configured = os.environ.get("GATHERKIT_HEADER")
    path = pathlib.Path(configured) if configured else SOURCE_TREE_HEADER
    if not path.is_file():
        how = "GATHERKIT_HEADER" if configured else "the source tree (set GATHERKIT_HEADER to use another)"
        pytest.fail(f"gatherkit.h not found at {path} (from {how})", pytrace=False)
    return path


def header_integer_defines(path):
    defines = {}
    for line in path.read_text().splitlines():
        match = INTEGER_DEFINE.match(line)
        if match:
            defines[match.group(1)] = int(match.group(2), 0)
    return defines


def binding_table_path():
    # Located the way `import gatherkit` would find it, but run as a plain file rather than
    # imported: importing runs the package's __init__, which needs a loadable libgatherkit and
    # every name it uses present in the table, and this check must still run (and name the
    # drift) when either is missing.
    spec = importlib.util.find_spec("gatherkit")
    if spec is None or spec.origin is None:
        pytest.fail("the gatherkit package is not on sys.path (PYTHONPATH=bindings/python)", pytrace=False)
    return pathlib.Path(spec.origin).parent / "_abi.py"


def binding_table(path):
    return {name: value for name, value in runpy.run_path(str(path)).items() if name.startswith("GK_")}


def drift(header, table):
    """One line per name that differs, each saying what _abi.py should have."""
    lines = []
    for name in sorted(header.keys() | table.keys()):
        if name not in table:
            lines.append(f"{name}: missing from _abi.py; the header has {header[name]} (add `{name} = {header[name]}`)")
        elif name not in header:
            lines.append(f"{name}: _abi.py has {table[name]}, but the header has no integer #define of that name")
        elif table[name] != header[name]:
            lines.append(f"{name}: _abi.py has {table[name]}, the header has {header[name]}")
    return lines


def test_binding_table_matches_header():
    table_path, header = binding_table_path(), header_path()
    problems = drift(header_integer_defines(header), binding_table(table_path))
    if problems:
        pytest.fail(f"{table_path} has drifted from {header}:\n  " + "\n  ".join(problems), pytrace=False)


def test_drift_names_every_difference():
    header = {"GK_A": 1, "GK_B": 2, "GK_C": 3}
    table = {"GK_A": 1, "GK_B": 5, "GK_D": 4}
    assert drift(header, table) == [
        "GK_B: _abi.py has 5, the header has 2",
        "GK_C: missing from _abi.py; the header has 3 (add `GK_C = 3`)",
        "GK_D: _abi.py has 4, but the header has no integer #define of that name",
    ]


def test_only_plain_integer_defines_are_read(tmp_path):
    header = tmp_path / "gatherkit.h"
    header.write_text("#define GATHERKIT_H\n"
                      "#define GK_MAX_RANK 64\n"
                      "  #  define GK_HEX 0x10\n"
                      "#define GK_NEGATIVE -3\n"
                      "#define GK_OPTIONS_INIT { sizeof(gk_options), GK_FLAVOR_ONNX, 0 }\n"
                      "#define GK_SUFFIXED 5u\n")
    assert header_integer_defines(header) == {"GK_MAX_RANK": 64, "GK_HEX": 16, "GK_NEGATIVE": -3}
