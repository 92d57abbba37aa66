"""The part of the Python packaging that pyproject.toml cannot say: the Rust library to build.

The library is a C-ABI cdylib that Python never imports as a module (gatherkit loads it with
ctypes), so the wheel does not depend on the Python version or its ABI: it is tagged
``py3-none-<platform>`` rather than ``cp3XY-cp3XY-<platform>``.
"""

import os

from setuptools import setup
from setuptools_rust import Binding, RustExtension

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel


class PlatformOnlyWheel(bdist_wheel):
    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


# pyproject.toml puts setuptools' egg-info in target/, beside its other scratch space, and
# setuptools requires that directory to exist: a fresh clone has none until cargo has run there.
os.makedirs(os.path.join(os.path.dirname(os.path.abspath(__file__)), "target"), exist_ok=True)

setup(
    rust_extensions=[
        RustExtension(
            "gatherkit.libgatherkit",
            path="Cargo.toml",
            binding=Binding.NoBinding,
            # The lock file is part of the source: a wheel builds what the tests ran.
            cargo_manifest_args=["--locked"],
            py_limited_api=False,
        )
    ],
    cmdclass={"bdist_wheel": PlatformOnlyWheel},
)
