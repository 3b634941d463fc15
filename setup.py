"""Build hook: compile headrace's numba kernels into the wheel, so a fresh install's first batch does not
wait for the compiler (about 10 s of the first run otherwise). Everything else is in pyproject.toml.

The kernels are compiled by running ``python -m headrace.warmup`` on the built package; their cache files
land in ``headrace/_kernel_cache`` inside the wheel. They are used where the installed numba version and
CPU match the build's, which is the case for ``pip install .`` on the machine that runs it; elsewhere the
kernels compile on first use, as without this hook. ``HEADRACE_NO_WARMUP=1`` skips it. A failure here
never fails the build.
"""

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


def warmup_env(environ, build_lib):
    """The warm-up's environment: the built package first on the path, then what the build runs
    with. pip's isolated build environment reaches numpy and numba through PYTHONPATH (the target
    venv is still empty when the wheel is built), so replacing PYTHONPATH left a fresh install's
    wheel without kernels and its first batch compiling them (16-18 s)."""
    env = dict(environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (build_lib, environ.get("PYTHONPATH", "")) if p)
    env.pop("NUMBA_CACHE_DIR", None)
    return env


class BuildWithKernels(build_py):
    def run(self):
        super().run()
        if self.editable_mode or os.environ.get("HEADRACE_NO_WARMUP"):
            return  # an editable install compiles into the source tree (the Makefile warms it up)
        env = warmup_env(os.environ, os.path.abspath(self.build_lib))
        try:
            subprocess.run([sys.executable, "-m", "headrace.warmup"], env=env, check=True, timeout=900)
        except Exception as exc:  # noqa: BLE001 (an uncompiled wheel still works: kernels compile on first use)
            print(f"headrace: kernels not precompiled ({exc}); they compile on first use", file=sys.stderr)


setup(cmdclass={"build_py": BuildWithKernels})
