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


class BuildWithKernels(build_py):
    def run(self):
        super().run()
        if self.editable_mode or os.environ.get("HEADRACE_NO_WARMUP"):
            return  # an editable install compiles into the source tree (the Makefile warms it up)
        env = dict(os.environ, PYTHONPATH=os.path.abspath(self.build_lib))
        env.pop("NUMBA_CACHE_DIR", None)
        try:
            subprocess.run([sys.executable, "-m", "headrace.warmup"], env=env, check=True, timeout=900)
        except Exception as exc:  # noqa: BLE001 (an uncompiled wheel still works: kernels compile on first use)
            print(f"headrace: kernels not precompiled ({exc}); they compile on first use", file=sys.stderr)


setup(cmdclass={"build_py": BuildWithKernels})
