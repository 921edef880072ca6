"""Test configuration: the JAX mode follows ``JAX_ENABLE_X64`` (default on).

``.ci/run`` runs the suite twice: with x64 (float64 and int64 available) and with
``JAX_ENABLE_X64=0``, JAX's default 32-bit mode that most users run. Tests that need x64 (time
axes, int64 data) skip in 32-bit mode with a reason; modules marked ``one_mode`` (the
command's, which switches 64-bit mode on itself, and lint/imports/dependency floors) run only in
the 64-bit run. ``tests/references.py`` holds ``X64`` and the per-dtype tolerances ``tol(dtype)``.
"""

import os
import subprocess
import sys


os.environ.setdefault("MPLBACKEND", "Agg")

# Folders of this run: made by the first process that loads this file (xdist's controller,
# whose environment its workers inherit, so they share them) and removed by it at the end.
_OWNED: list[str] = []


def _run_folder(env: str, prefix: str) -> str:
    if env not in os.environ:
        import tempfile

        os.environ[env] = tempfile.mkdtemp(prefix=prefix)
        _OWNED.append(os.environ[env])
    return os.environ[env]


# The suite is dominated by XLA compilation; it compiles for speed of compilation, as JAX's
# own switch for test-like work does (inherited by the processes the tests start): LLVM
# without optimisation, and XLA's CPU loop emitters instead of its MLIR fusion emitters (the
# same HLO passes and fusions, emitted by the older, quicker code generator). Programs compile
# in a third to a half of the time and compute the same results as users' fully optimised
# builds (test_optimization_level.py proves that for every road);
# JAX_DISABLE_MOST_OPTIMIZATIONS=0 runs the suite with users' settings.
_OFF = ("0", "false", "no", "off", "")  # how a switch in the environment says no
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
_QUICK = os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"].strip().lower() not in _OFF
if _QUICK and "xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false"
    ).strip()

# the command keeps a compilation cache in the user's cache folder; tests write theirs to a
# folder of this run (tests of the cache set their own), never to ~/.cache
_run_folder("JAXSUBSET_CACHE_DIR", "jaxsubset-test-cache-")

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402


# JAX reads JAX_ENABLE_X64 itself when it starts; unset means on here (the suite's historic mode).
_X64 = os.environ.get("JAX_ENABLE_X64", "1").strip().lower() not in _OFF
jax.config.update("jax_enable_x64", _X64)
# (again here: a plugin may have imported JAX before this file set the variable)
jax.config.update("jax_disable_most_optimizations", _QUICK)


def _share_compiled_programs() -> None:
    """One persistent compilation cache for the whole run, shared by the xdist workers.

    Many modules compile the same programs (the block tree of a statistic at a bucket size);
    the per-module cache release below drops them from memory, and this folder hands them back
    without compiling again. A cache hit still records JAX's backend-compile event, so
    ``tests/compilations.py`` counts it as a compilation, as before. The folder is this run's
    (:func:`_run_folder`), never a user's cache.
    """
    if os.environ.get("JAXSUBSET_TEST_NO_SHARED_CACHE"):
        return
    from jaxsubset import enable_compilation_cache

    enable_compilation_cache(_run_folder("JAXSUBSET_TEST_SUITE_CACHE", "jaxsubset-suite-"))


_share_compiled_programs()

# JAX compiles on first use of every shape: keep property tests small and deadline-free.
settings.register_profile("jaxsubset", max_examples=40, deadline=None, derandomize=True)
settings.load_profile("jaxsubset")


def pytest_unconfigure(config):
    """Remove the run's folders, in the process that made them (after its workers ended)."""
    import shutil

    for folder in _OWNED:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """In the 32-bit run, skip the modules marked ``one_mode``: they run the same in either
    mode (the command switches 64-bit mode on itself; lint, imports and dependency floors have
    no mode), so the 64-bit run covers them."""
    if _X64:
        return
    skip = pytest.mark.skip(reason="runs the same in either JAX mode: covered by the x64 run")
    for item in items:
        if item.get_closest_marker("one_mode") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _keep_the_jax_mode():
    """Put the run's JAX mode back after every test.

    The benchmarks (imported by their smoke tests) and the command switch x64 on as they run;
    a later test in the same worker must still see the mode its run was started in.
    """
    yield
    if bool(jax.config.jax_enable_x64) != _X64:
        jax.config.update("jax_enable_x64", _X64)


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's in-memory compiled programs after every test module.

    Two reasons. Isolation: the tests that count compilations (``tests/compilations.py``) see
    the same fresh in-memory caches whichever modules a worker ran before (``--dist
    worksteal`` makes that order vary), so a count cannot depend on the schedule. Robustness:
    a whole-suite process that kept every executable XLA compiled crashed in earlier clean-clone
    runs (XLA's CPU compiler segfaulting in libgcc's unwinder, at a different, individually
    passing test each time). The run's persistent cache (:func:`_share_compiled_programs`)
    hands the dropped programs back without compiling them again.
    """
    yield
    jax.clear_caches()


@pytest.fixture
def command_mode():
    """JAX's 64-bit mode, as ``main`` runs the command, for tests calling its pieces directly."""
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    """``run(*argv)`` -> (exit status, stdout, stderr) of ``jaxsubset stats *argv``.

    The command runs in-process (``jaxsubset.cli.main``) in the test's ``tmp_path``, so file
    names in ``argv`` are relative to it. A module may wrap it in a fixture of the same name.
    """
    from jaxsubset.cli import main

    monkeypatch.chdir(tmp_path)

    def go(*argv):
        rc = main(["stats", *map(str, argv)])
        out, err = capsys.readouterr()
        return rc, out, err

    return go


@pytest.fixture
def run_process(tmp_path):
    """``run_process(*args)`` -> the ``subprocess.CompletedProcess`` of ``jaxsubset *args``.

    A fresh ``python -m jaxsubset`` process (it pays the JAX import and compilations) in the
    test's ``tmp_path``, for the process-level contract: exit status, stdout, stderr.
    """
    env = dict(os.environ, MPLBACKEND="Agg", JAX_PLATFORMS="cpu")

    def go(*args):
        return subprocess.run(
            [sys.executable, "-m", "jaxsubset", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=300,
        )

    return go
