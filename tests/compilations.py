"""Compilations counted with JAX's own monitoring events, not with counters in the library.

JAX records ``/jax/core/compile/backend_compile_duration`` once per XLA compilation, with the
jitted function's name (``"jit(block_kernel)"``); a cache hit records nothing.
"""

import contextlib
from collections.abc import Iterator

import jax


BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


class Compilations(list):
    """The names of the functions compiled so far, in order."""

    def of(self, name: str) -> int:
        """How many compilations of the jitted function ``name`` (``jit(name)``)."""
        return self.count(f"jit({name})")


_RECORDING: list[Compilations] = []


def _listener(event: str, duration: float, **kwargs: object) -> None:
    if event == BACKEND_COMPILE:
        for seen in _RECORDING:
            seen.append(str(kwargs.get("fun_name", "")))


# one listener for the process: JAX before 0.8 has no public way to unregister one
jax.monitoring.register_event_duration_secs_listener(_listener)


@contextlib.contextmanager
def compilations() -> Iterator[Compilations]:
    """Record every XLA compilation inside the ``with`` block."""
    seen = Compilations()
    _RECORDING.append(seen)
    try:
        yield seen
    finally:
        _RECORDING.remove(seen)
