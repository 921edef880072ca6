"""Host memory for the blocks: page release, the aligned buffer pool, halo windows, read-ahead.

Memory stays at a few blocks: pages of memory maps already copied are released to the OS,
block buffers are reused once the kernel that read them has finished, and a background thread
reads the next block while the device computes this one.
"""

import mmap
import queue
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np


def mmap_of(a: Any) -> Any:
    """The ``mmap.mmap`` behind a memory-mapped NumPy array, or None."""
    while a is not None:
        if isinstance(a, np.memmap):
            # never for copy-on-write maps ("c"): dropping their pages would lose the user's edits
            return getattr(a, "_mmap", None) if a.mode in ("r", "r+", "w+", "readonly") else None
        a = getattr(a, "base", None)
    return None


ALIGN = 64  # bytes: XLA's CPU client reads a NumPy array this aligned in place, no copy


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array whose data starts on an ``ALIGN``-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + ALIGN, np.uint8)
    off = -raw.ctypes.data % ALIGN
    return raw[off : off + nbytes].view(dtype).reshape(shape)


class Buffers:
    """Host buffers for blocks, reused once the kernel that read them has finished.

    ``jax.device_put`` of an aligned buffer on the CPU backend aliases it (no copy), and on an
    accelerator the copy to the device runs asynchronously; either way a buffer may be written
    again only after the kernel that read it is done, which the stream knows when that kernel's
    results are home (:meth:`give`). Until then :meth:`take` allocates a new one, so the count is
    bounded by the blocks in flight (the prefetch depth plus a few) and nothing ever waits here.
    """

    def __init__(self) -> None:
        self.free: dict[tuple[tuple[int, ...], str], list[np.ndarray]] = {}
        self.lock = threading.Lock()

    def take(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        key = (tuple(shape), np.dtype(dtype).str)
        with self.lock:
            stack = self.free.get(key)
            if stack:
                return stack.pop()
        return aligned_empty(shape, dtype)

    def give(self, *bufs: np.ndarray | None) -> None:
        with self.lock:
            for b in bufs:
                if b is not None:
                    self.free.setdefault((b.shape, b.dtype.str), []).append(b)


class Release:
    """Tell the OS that rows already read from memory maps are not needed again.

    ``madvise(MADV_DONTNEED)`` unmaps those clean file pages from this process (they stay in
    the page cache), so streaming a file larger than memory keeps a bounded resident size.
    """

    def __init__(self, *arrays: Any) -> None:
        self.maps = []
        for a in arrays:
            mm = mmap_of(a)
            if mm is None or not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
                continue
            base = np.frombuffer(mm, np.uint8).__array_interface__["data"][0]
            self.maps.append((a, mm, base))

    def __call__(self, a: int, b: int) -> None:
        a = max(a, 0)
        for arr, mm, base in self.maps:
            if b <= a or b > arr.shape[0]:
                continue
            first = arr[a:b].__array_interface__["data"][0] - base
            last = arr[b - 1 : b].__array_interface__["data"][0] - base + arr.itemsize
            lo = -(-first // mmap.PAGESIZE) * mmap.PAGESIZE
            hi = last // mmap.PAGESIZE * mmap.PAGESIZE
            if hi > lo:
                try:
                    mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
                except (OSError, ValueError):  # pragma: no cover - advisory only
                    pass


def piece_windows(
    pieces: Iterator[tuple[np.ndarray, np.ndarray]],
    block: int,
    halo: int,
    with_x: bool = True,
    buffers: Buffers | None = None,
) -> Iterator[tuple[int, np.ndarray | None, np.ndarray, int, bool]]:
    """``(g0, x, y, n_valid, last)``: points ``[g0, g0 + block + halo)``, zero-padded.

    Windows step by ``block``; ``last`` is True on the final one. ``with_x=False`` skips copying
    ``x`` (the statistics need only ``y``) and yields ``None`` for it. The windows are aligned
    arrays from ``buffers`` (fresh ones without it).
    """
    buffers = Buffers() if buffers is None else buffers
    width = block + halo
    it = iter(pieces)
    pend: list[tuple[np.ndarray, np.ndarray]] = []
    done = False

    def pull() -> bool:
        """Append the next non-empty piece to ``pend``; False when the source is exhausted."""
        nonlocal done
        while not done:
            nxt = next(it, None)
            if nxt is None:
                done = True
            elif nxt[1].shape[0]:
                pend.append(nxt)
                return True
        return False

    if not pull():
        return
    xdt, ydt, tail = pend[0][0].dtype, pend[0][1].dtype, pend[0][1].shape[1:]
    carry_x, carry_y = np.empty(0, xdt), np.empty((0,) + tail, ydt)
    g0 = 0
    while True:
        bx = buffers.take((width,), xdt) if with_x else None
        by = buffers.take((width,) + tail, ydt)
        n = carry_y.shape[0]
        if bx is not None:
            bx[:n] = carry_x
        by[:n] = carry_y
        while n < width and (pend or pull()):
            px, py = pend[0]
            if py.shape[1:] != tail:
                raise ValueError(
                    f"stream: every block's y must have channel shape {tail}, got {py.shape[1:]}"
                )
            take = min(width - n, py.shape[0])
            if bx is not None:
                bx[n : n + take] = px[:take]
            by[n : n + take] = py[:take]
            n += take
            if take == py.shape[0]:
                pend.pop(0)
            else:
                pend[0] = (px[take:], py[take:])
        if n == 0:
            buffers.give(bx, by)
            return
        if bx is not None:
            bx[n:] = 0  # the last window's padding, which no range reads
        by[n:] = 0
        last = n <= block and not pend and not pull()
        # the halo, copied: the window itself goes back to the pool once its kernel is done
        carry_x = bx[block:n].copy() if bx is not None else carry_x
        carry_y = by[block:n].copy()
        yield g0, bx, by, n, last
        if last:
            return
        g0 += block


class End:
    pass


class Failed:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def read_ahead(items: Iterator[Any], depth: int) -> Iterator[Any]:
    """Run ``items`` in a background thread, ``depth`` ahead (double buffering for depth 2)."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(v: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(v, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(End())
        except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
            put(Failed(e))

    t = threading.Thread(target=work, name="jaxsubset-prefetch", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if isinstance(item, End):
                return
            if isinstance(item, Failed):
                raise item.exc
            yield item
    finally:
        stop.set()
        t.join(timeout=5)
