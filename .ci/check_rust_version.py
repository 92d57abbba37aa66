#!/usr/bin/env python3
"""Fails when a locked dependency of the gatherkit library declares a newer `rust-version` than
gatherkit's own.

Only one toolchain can be installed on CI machines, so `rust-version` cannot be checked by building
with that toolchain. This checks the part that can go stale without anyone touching gatherkit's
code: `Cargo.lock`. It walks the library's normal and build dependencies (for every platform),
transitively, from `cargo metadata --locked`; dev-dependencies (cbindgen, proptest, cc, ...) only
build the tests and are left out, as are the benches and testkit packages. gatherkit's own code
is covered by clippy's `incompatible_msrv` lint (on by default; CI denies warnings), which flags
standard-library items stabilised after `rust-version`; language features it does not see (the
`c"..."` literals that make 1.77 the minimum) are listed in Cargo.toml's comment.

Usage: check_rust_version.py [path/to/Cargo.toml]
"""

import json
import subprocess
import sys


def version_tuple(text):
    return tuple(int(part) for part in text.split("."))


def main():
    manifest = sys.argv[1] if len(sys.argv) > 1 else "Cargo.toml"
    metadata = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--manifest-path", manifest],
        check=True, stdout=subprocess.PIPE).stdout)
    packages = {p["id"]: p for p in metadata["packages"]}
    nodes = {n["id"]: n for n in metadata["resolve"]["nodes"]}
    root = next(p for p in metadata["packages"]
                if p["name"] == "gatherkit" and p["id"] in metadata["workspace_members"])
    ours = root.get("rust_version")
    if not ours:
        sys.exit("gatherkit's Cargo.toml declares no rust-version")

    seen, todo = set(), [root["id"]]
    while todo:
        for dep in nodes[todo.pop()]["deps"]:
            if all(k["kind"] == "dev" for k in dep["dep_kinds"]) or dep["pkg"] in seen:
                continue
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])

    too_new = []
    for pkg_id in sorted(seen, key=lambda i: packages[i]["name"]):
        pkg = packages[pkg_id]
        theirs = pkg.get("rust_version")
        print(f"  {pkg['name']} {pkg['version']}: rust-version {theirs or '(none)'}")
        if theirs and version_tuple(theirs) > version_tuple(ours):
            too_new.append(f"{pkg['name']} {pkg['version']} needs Rust {theirs}")
    if too_new:
        sys.exit(f"gatherkit declares rust-version {ours}, but locked dependencies need more: "
                 + "; ".join(too_new)
                 + ". Raise rust-version in Cargo.toml, or pin the dependency lower.")
    print(f"rust-version {ours}: no locked dependency of the library needs a newer Rust")


if __name__ == "__main__":
    main()
