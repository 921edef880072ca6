"""Test configuration: float64 available everywhere (float32 is still tested explicitly)."""

import os


os.environ.setdefault("MPLBACKEND", "Agg")

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402


jax.config.update("jax_enable_x64", True)

# JAX compiles on first use of every shape: keep property tests small and deadline-free.
settings.register_profile("jaxsubset", max_examples=40, deadline=None, derandomize=True)
settings.load_profile("jaxsubset")


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after every test module.

    A whole-suite process otherwise accumulates every executable XLA compiled; in clean-clone
    CI runs of this session XLA's CPU compiler then segfaulted in libgcc's unwinder (at a
    different, individually passing test each time). Later modules recompile what they use.
    """
    yield
    jax.clear_caches()
