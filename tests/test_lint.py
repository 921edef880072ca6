"""ruff (configured in pyproject.toml) passes on the whole project: lint and format."""

import pathlib
import shutil
import subprocess

import pytest


ROOT = pathlib.Path(__file__).parents[1]
PATHS = ["src", "tests", "benchmarks", "examples"]


def _ruff() -> list[str]:
    exe = shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    return [exe]


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]])
def test_ruff(args):
    done = subprocess.run(
        [*_ruff(), *args, *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
