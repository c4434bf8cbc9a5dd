"""The type stubs (mnemon/_mnemon.pyi) describe the native module as built: mypy's stubtest
compares every name, signature and default."""

import subprocess
import sys

import pytest


def test_stubs_match_the_native_module() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (.ci/python installs it)")
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "mnemon._mnemon"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
