"""JAX for the command: imported only when the options and the file's header are checked
(:class:`JaxSession`), with 64-bit mode on and the compilation cache (on by default, off with
``--no-cache`` or ``JAXSUBSET_NO_CACHE=1``; the folder is
:func:`jaxsubset.enable_compilation_cache`'s)."""

import logging
import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any


#: Set to ``1`` (or ``true``/``yes``/``on``) to keep the command from using the cache.
NO_CACHE_ENV = "JAXSUBSET_NO_CACHE"

logger = logging.getLogger(__name__)


def disabled_by_env() -> bool:
    return os.environ.get(NO_CACHE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


class JaxSession:
    """JAX as the command runs it, set up on first use and put back as it was at the end.

    ``import jax`` takes most of a fresh process that reports a bad option (over a second,
    against milliseconds for the checks), so the command checks its options and the input's
    header first and calls :meth:`start` only then: it imports jax, switches 64-bit mode on
    (the data's float64 precision and int64 nanosecond time axes are kept) and sets up the
    compilation cache. Leaving the ``with`` block restores both settings when :meth:`start`
    ran, so an in-process caller of ``jaxsubset.cli.main`` (tests, notebooks) keeps its own
    configuration; a session never started leaves jax unimported.

    Args:
        no_cache: ``--no-cache`` was given.

    Example:
        >>> from jaxsubset.cli._cache import JaxSession
        >>> with JaxSession(no_cache=True) as session:
        ...     jax = session.start()
        ...     bool(jax.config.read("jax_enable_x64"))
        True
    """

    def __init__(self, no_cache: bool = False) -> None:
        self.no_cache = no_cache
        self.jax: Any = None
        self._x64: bool | None = None
        self._restore_cache: Callable[[], None] = nothing

    @property
    def started(self) -> bool:
        return self.jax is not None

    def start(self) -> Any:
        """Import and set up jax (once); returns the ``jax`` module."""
        if self.jax is None:
            import jax

            self._x64 = bool(jax.config.read("jax_enable_x64"))
            self._restore_cache = command_cache(self.no_cache)
            jax.config.update("jax_enable_x64", True)  # the data's float64 precision, kept
            self.jax = jax
        return self.jax

    def close(self) -> None:
        """Put JAX's 64-bit mode and cache settings back as :meth:`start` found them."""
        if self.jax is not None and self._x64 is not None:
            self.jax.config.update("jax_enable_x64", self._x64)
            self._x64 = None
        restore, self._restore_cache = self._restore_cache, nothing
        restore()

    def __enter__(self) -> "JaxSession":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def jax_imported() -> bool:
    """Whether jax has been imported in this process."""
    return "jax" in sys.modules


def command_cache(no_cache: bool = False) -> Callable[[], None]:
    """The command's cache: on unless ``no_cache`` or ``JAXSUBSET_NO_CACHE``; returns a restore.

    The restore puts JAX's cache settings back as they were (and forgets the cache set up
    here), so an in-process caller of ``jaxsubset.cli.main`` (tests, notebooks) keeps its own
    configuration, as the command does for ``jax_enable_x64``. It imports jax.

    Args:
        no_cache: ``--no-cache`` was given.

    Returns:
        A function of no arguments that undoes the setting (a no-op when nothing was set).

    Example:
        >>> from jaxsubset.cli._cache import command_cache
        >>> restore = command_cache(no_cache=True)
        >>> restore()
    """
    import jax

    import jaxsubset

    # jax sets its options as attributes at run time (no stub declares them), and
    # jax.config.read refuses this one (an option with a context manager)
    cache_dir = jax.config.jax_compilation_cache_dir  # type: ignore[attr-defined]
    if no_cache or disabled_by_env() or cache_dir:
        return nothing  # off, or the caller set a cache of its own: leave it alone
    names = (
        "jax_compilation_cache_dir",
        "jax_persistent_cache_min_compile_time_secs",
        "jax_persistent_cache_min_entry_size_bytes",
    )
    before = {n: getattr(jax.config, n) for n in names}
    if jaxsubset.enable_compilation_cache() is None:
        return nothing

    def restore() -> None:
        for n, v in before.items():
            jax.config.update(n, v)
        reset()

    return restore


def nothing() -> None:
    return None


def reset() -> None:
    try:
        from jax.experimental.compilation_cache import compilation_cache as public_cc

        public_cc.reset_cache()
    except Exception as e:  # pragma: no cover - a JAX without reset_cache
        logger.debug("jaxsubset: compilation cache not reset (%s)", e)
