"""ruff and mypy (configured in pyproject.toml) pass: lint and format everywhere, types in src/."""

import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


ROOT = pathlib.Path(__file__).parents[1]
# the docs' build code (hooks, griffe extension); not the pages, whose code blocks keep their
# aligned comments (tests/test_docs.py runs them)
PATHS = [
    "src",
    "tests",
    "benchmarks",
    "examples",
    *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.py")),
]


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


def test_mypy():
    # the type check of src/ ([tool.mypy] in pyproject.toml), in a fresh process and cache
    pytest.importorskip("mypy", reason="mypy is not installed (it comes with the test extra)")
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--cache-dir", cache],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
