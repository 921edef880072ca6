"""The command's compilation cache: on by default, off with ``--no-cache`` or
``JAXSUBSET_NO_CACHE=1``; the folder is :func:`jaxsubset.enable_compilation_cache`'s."""

import logging
import os
from collections.abc import Callable

import jax

import jaxsubset


#: Set to ``1`` (or ``true``/``yes``/``on``) to keep the command from using the cache.
NO_CACHE_ENV = "JAXSUBSET_NO_CACHE"

logger = logging.getLogger(__name__)


def disabled_by_env() -> bool:
    return os.environ.get(NO_CACHE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def command_cache(no_cache: bool = False) -> Callable[[], None]:
    """The command's cache: on unless ``no_cache`` or ``JAXSUBSET_NO_CACHE``; returns a restore.

    The restore puts JAX's cache settings back as they were (and forgets the cache set up
    here), so an in-process caller of ``jaxsubset.cli.main`` (tests, notebooks) keeps its own
    configuration, as the command does for ``jax_enable_x64``.

    Args:
        no_cache: ``--no-cache`` was given.

    Returns:
        A function of no arguments that undoes the setting (a no-op when nothing was set).

    Example:
        >>> from jaxsubset.cli._cache import command_cache
        >>> restore = command_cache(no_cache=True)
        >>> restore()
    """
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
