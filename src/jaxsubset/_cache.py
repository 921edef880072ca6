"""A persistent compilation cache: compiled XLA programs kept on disk across processes.

Turned on with :func:`enable_compilation_cache` (the ``jaxsubset`` command does so by
default), so a second run on data of the same kind loads its programs instead of compiling
them.

What is and is not cached is JAX's rule: every program compiled after the cache is on, keyed
by its HLO, shapes, dtypes, flags and the JAX/jaxlib version; programs holding a host callback
(a check that fired or may fire, ``jax.debug.print``) are never written.

Two processes may share the folder. JAX's own file cache (without a size limit) writes an
entry in place, so a process reading it at that moment could see a truncated file (JAX then
warns and compiles again); here every entry is written to a temporary file in the same
folder and renamed into place (``os.replace``: atomic on POSIX and Windows), so a reader sees
either no entry or the whole one. Two processes compiling the same program both write it;
the last rename wins and both files are equal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pathlib
import tempfile


__all__ = ["cache_dir", "enable_compilation_cache"]

#: The cache folder, overriding the default one.
CACHE_DIR_ENV = "JAXSUBSET_CACHE_DIR"

SUFFIX = "-cache"  # JAX's file name for an entry: "<key>-cache"
logger = logging.getLogger(__name__)


def cache_dir() -> pathlib.Path:
    """The cache folder: ``$JAXSUBSET_CACHE_DIR``, else ``<user cache>/jaxsubset/jax``.

    The user cache folder is ``$XDG_CACHE_HOME`` if set (and absolute), else ``~/.cache``.

    Returns:
        The folder (it may not exist yet).

    Example:
        >>> import os
        >>> from jaxsubset._cache import cache_dir
        >>> os.environ["JAXSUBSET_CACHE_DIR"] = "/tmp/jx-cache"
        >>> str(cache_dir())
        '/tmp/jx-cache'
        >>> del os.environ["JAXSUBSET_CACHE_DIR"]
    """
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return pathlib.Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = pathlib.Path(xdg) if os.path.isabs(xdg) else pathlib.Path.home() / ".cache"
    return base / "jaxsubset" / "jax"


class AtomicFileCache:
    """JAX's cache interface (``get``/``put``) over one folder, each entry renamed into place."""

    def __init__(self, path: pathlib.Path) -> None:
        self._path = path

    def get(self, key: str) -> bytes | None:
        try:
            return (self._path / f"{key}{SUFFIX}").read_bytes()
        except FileNotFoundError:
            return None

    def put(self, key: str, value: bytes) -> None:
        target = self._path / f"{key}{SUFFIX}"
        if target.exists():
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self._path)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(value)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def install_atomic_writes(path: pathlib.Path) -> None:
    """Replace JAX's in-place file cache by :class:`AtomicFileCache` (same files, same keys).

    This reaches into ``jax._src.compilation_cache`` (JAX 0.4.3x to 0.10); if its layout has
    changed, JAX's own cache stays in use, which is still correct (a torn read makes JAX warn
    and compile again).
    """
    try:
        from jax._src import compilation_cache as cc
        from jax._src.lru_cache import LRUCache

        cc._initialize_cache()
        base = cc._cache
        if isinstance(base, LRUCache) and not base.eviction_enabled:
            # duck-typed (get/put): JAX's CacheInterface is private, imported only in here
            cc._cache = AtomicFileCache(path)  # type: ignore[assignment]
    except Exception as e:  # pragma: no cover - a JAX without these internals
        logger.debug("jaxsubset: JAX's own cache writes kept (%s)", e)


def enable_compilation_cache(path: str | os.PathLike[str] | None = None) -> pathlib.Path | None:
    """Keep compiled programs on disk, so later processes load them instead of compiling.

    Sets JAX's ``jax_compilation_cache_dir`` (and ``jax_persistent_cache_min_compile_time_secs``
    to 0, so that every program is written, however quick to compile) for this process. Call
    it before the first computation: JAX sets its cache up once, at the first compilation.
    Entries are written atomically, so processes may share the folder.

    Args:
        path: the folder; default :func:`cache_dir` (``~/.cache/jaxsubset/jax``).

    Returns:
        The folder in use, or ``None`` if it cannot be created (then nothing changes).

    Example:
        >>> import tempfile, jaxsubset
        >>> folder = jaxsubset.enable_compilation_cache(tempfile.mkdtemp())  # doctest: +SKIP
    """
    import jax

    folder = pathlib.Path(path).expanduser() if path is not None else cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            return None
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)  # no size floor
    install_atomic_writes(folder)
    return folder
