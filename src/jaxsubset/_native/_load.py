"""Loading the native kernels: the switch, the ABI guard, the registration (once per process).

The compiled module ``jaxsubset._native._kernels`` (csrc/, built by the package's CMake
build) records the jaxlib whose FFI headers it was compiled against. XLA refuses a handler
built against NEWER FFI headers than the running jaxlib only when the handler first runs,
and then every JAX operation of the process fails ("Unable to initialize backend 'cpu'"); a
handler built against older headers runs on every newer jaxlib (XLA keeps old FFI API
versions for at least 12 months). So the kernels are registered only where the build's
jaxlib is not newer than the running one; otherwise one warning says why and every statistic
runs on the pure-JAX roads, with the same results.

``JAXSUBSET_NATIVE=off`` (or ``0``, ``false``, ``no``) turns the native road off at run time;
an install made without the kernels (``JAXSUBSET_NATIVE=off pip install ...``) has none.
"""

import functools
import importlib
import os
import warnings
from typing import Any


OFF = ("off", "0", "false", "no")
TARGETS = ("jaxsubset_range_stats",)


class NativeUnavailableWarning(RuntimeWarning):
    """The native kernels exist but cannot be used with the running jaxlib."""


def switched_off() -> bool:
    """Whether ``JAXSUBSET_NATIVE`` turns the native road off (read at every choice)."""
    return os.environ.get("JAXSUBSET_NATIVE", "").strip().lower() in OFF


def _version(text: str) -> tuple[int, ...]:
    """``"0.7.0"`` -> ``(0, 7, 0)``: the release numbers (a suffix such as ``.dev`` ignored)."""
    parts = []
    for p in text.split("."):
        digits = "".join(ch for ch in p if ch.isdigit()) if p[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def running_jaxlib() -> str:
    """The version of the jaxlib this process runs."""
    import jaxlib

    return str(jaxlib.__version__)


def _module() -> Any:
    """The compiled module, or None where the install has none."""
    try:
        return importlib.import_module("jaxsubset._native._kernels")
    except ImportError:
        return None


def guard(built: str, running: str) -> str | None:
    """Why kernels built against jaxlib ``built`` must not be registered on ``running``.

    Returns:
        None where registration is safe (built against the same or an older jaxlib), else
        the reason, for the one warning.
    """
    if _version(built) > _version(running):
        return (
            f"jaxsubset's native CPU kernels were built against jaxlib {built}, newer than "
            f"the running jaxlib {running}: registering them would break every JAX "
            "operation of this process (XLA's FFI refuses handlers built against newer "
            "headers). Every statistic runs on the pure-JAX roads instead (same results). "
            "Rebuild jaxsubset against this jaxlib (pip install --force-reinstall "
            "--no-binary jaxsubset jaxsubset) or upgrade jaxlib; JAXSUBSET_NATIVE=off "
            "silences this."
        )
    return None


@functools.cache
def _register() -> tuple[bool, str]:
    """Register the kernels once: ``(registered, why not)``; warns once when refused."""
    mod = _module()
    if mod is None:
        return False, "this install has no native kernels (a pure-Python build)"
    built = str(mod.build_info()["jaxlib"])
    why = guard(built, running_jaxlib())
    if why is not None:
        warnings.warn(why, NativeUnavailableWarning, stacklevel=3)
        return False, why
    import jax

    for name, capsule in mod.registrations().items():
        jax.ffi.register_ffi_target(name, capsule, platform="cpu", api_version=1)
    return True, ""


def available() -> bool:
    """Whether the native CPU road can run in this process (built, safe, not switched off)."""
    if switched_off():
        return False
    return _register()[0]


def status() -> str:
    """One line: why the native road is or is not available."""
    if switched_off():
        return "off: JAXSUBSET_NATIVE is set to turn it off"
    ok, why = _register()
    if ok:
        info = _module().build_info()
        major, minor = info["ffi_api"]
        return (
            f"on: kernels built against jaxlib {info['jaxlib']} (XLA FFI API {major}.{minor}), "
            f"running jaxlib {running_jaxlib()}"
        )
    return f"unavailable: {why}"
