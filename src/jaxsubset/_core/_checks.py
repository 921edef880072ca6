"""Run-time checks that cost nothing until they fire: :func:`error_if` and :func:`nan_guard`.

In the style of ``equinox.error_if``:

- **Eagerly** (a concrete predicate) the check raises ``ValueError(message)`` at once.
- **Traced** (under ``jit``, ``vmap``, ``grad``) the host callback that raises sits alone in the
  true branch of a ``lax.cond``; when the predicate is false nothing but the predicate and the
  branch are computed. Every array of the guarded value is returned minus the branch's result
  (an int 0 that XLA cannot see through; the values are unchanged bit for bit), so as long as
  the returned value is used the check cannot be removed as dead code.
- **Under vmap** the predicate is reduced over the whole batch by a custom batching rule: one
  ``lax.cond`` and at most one callback per call, whatever the batch size, and the message
  names the first failing batch index.
- ``JAXSUBSET_CHECKS=off`` (read when the check is traced, or called eagerly) turns every check
  of the library off.
- **Several devices** (``jax.device_count() > 1`` when the check is traced): a program that
  XLA partitions over devices runs a callback on one device only, and a callback result that
  every device needs would leave the others waiting forever when it raises. There the failing
  branch holds a side-effecting callback without result (``io_callback``), which XLA keeps
  for its side effect; the program then goes through JAX's Python dispatch (an effect), a
  little slower per call. ``shard_map`` programs (``jaxsubset.shard``) run it per device.

What reaches the caller under a ``jit`` of one's own: JAX replaces an exception raised in a
host callback by its own, a ``jax.errors.JaxRuntimeError`` (a ``RuntimeError``), on every call
in JAX 0.10 (some earlier releases raise it on a jitted function's first call, through Python
dispatch, and pass a ``ValueError`` on later calls, through C++ dispatch), with the text
``INTERNAL: CpuCallback error calling callback: Traceback ...`` ending with
``ValueError: <message>``. Wrap the call in :func:`reraise` (or decorate the function with
:func:`checked`) to get a plain ``ValueError(<message>)`` instead; ``stream`` and ``shard``
do this themselves. JAX logs the failing callback's traceback to stderr;
this module drops that log record for its own errors (and only for them), so nothing else is
printed, at the call or at interpreter exit.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap
from jax.experimental import io_callback

from ._trace import now_or_traced
from ._validate import traced_array


__all__ = ["argument_guard", "checked", "checks_enabled", "error_if", "nan_guard", "reraise"]

T = TypeVar("T")
Message = str | Callable[[Any], str]

#: The environment variable that turns the checks off (``off``, ``0``, ``false``, ``no``).
ENV = "JAXSUBSET_CHECKS"
OFF = frozenset({"off", "0", "false", "no"})

# Recent messages of checks that fired, newest last: `reraise` finds the one inside a
# JaxRuntimeError's text. Appends are atomic; callbacks run on XLA's threads.
FIRED: collections.deque[str] = collections.deque(maxlen=64)
MARK = "_jaxsubset_check"


def checks_enabled() -> bool:
    """Whether the library's run-time checks are on: ``JAXSUBSET_CHECKS`` is not ``off``.

    Returns:
        ``False`` when the environment variable ``JAXSUBSET_CHECKS`` is ``off``, ``0``,
        ``false`` or ``no`` (any case), else ``True``.

    Example:
        >>> import os
        >>> from jaxsubset._core._checks import checks_enabled
        >>> checks_enabled() == (os.environ.get("JAXSUBSET_CHECKS", "").lower() != "off")
        True
    """
    return os.environ.get(ENV, "").strip().lower() not in OFF


class DropOwnCallbackErrors(logging.Filter):
    """Drop JAX's "callback failed" log records whose exception is one of our checks."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not getattr(exc, MARK, False)


FILTER = DropOwnCallbackErrors()
for _name in ("jax._src.callback", "jax._src.debugging"):
    if not any(isinstance(f, DropOwnCallbackErrors) for f in logging.getLogger(_name).filters):
        logging.getLogger(_name).addFilter(FILTER)


def drop_fired_tokens() -> None:
    """Forget JAX's runtime tokens (this thread's) that hold the error of one of our checks.

    JAX keeps, per device, a token of the last program run through its Python dispatch; when
    that program failed asynchronously (several devices), the token holds the error and JAX's
    exit handlers raise it again ("Exception ignored in atexit callback", twice). Once the
    error has reached the caller, those tokens say nothing new. This reads
    ``jax._src.dispatch.runtime_tokens`` (JAX 0.4 to 0.10); elsewhere it does nothing.
    """
    try:
        from jax._src import dispatch

        tokens = dispatch.runtime_tokens.output_runtime_tokens
        for device, token in list(tokens.items()):
            try:
                token.block_until_ready()
            except Exception as err:  # noqa: BLE001 - only our own errors are dropped
                if fired_message(err) is not None:
                    tokens.pop(device, None)
    except Exception:  # noqa: BLE001 - a JAX without these internals: nothing to drop
        return


# runs before JAX's own exit handlers (registered earlier, run later), so a check that fired
# and was caught is not raised again at interpreter exit
atexit.register(drop_fired_tokens)


def render(message: Message, payload: Any, bindex: Any = None) -> str:
    """The error text: ``message`` (or ``message(payload)``), plus the batch index if any."""
    text = message(payload) if callable(message) else str(message)
    if bindex is not None and np.size(bindex):
        idx = tuple(int(i) for i in np.asarray(bindex).reshape(-1))
        where = str(idx[0]) if len(idx) == 1 else str(idx)
        text = f"{text} (vmap: first failing batch index {where})"
    return text


def error(text: str) -> ValueError:
    err = ValueError(text)
    setattr(err, MARK, True)
    return err


def make_check(
    message: Message, tree: Any, levels: tuple[tuple[bool, ...], ...]
) -> Callable[..., jax.Array]:
    """A ``custom_vmap`` function ``(pred, payload_leaves, bindex) -> int32 token`` (always 0).

    ``levels[i]`` says, outer ``vmap`` first, at which batch levels payload leaf ``i`` has a
    leading batch axis; ``bindex`` holds the first failing index of every level, outer first.
    The payload is never sliced or reduced on the device: the host picks the failing batch
    element's payload when the check fires, so a passing check costs only the predicate.
    """

    def raise_on_host(payload_leaves: Any, bindex: Any) -> np.ndarray:
        payload = None
        if tree is not None:
            where = np.asarray(bindex).reshape(-1)
            leaves = []
            for leaf, flags in zip(payload_leaves, levels, strict=True):
                idx = tuple(int(i) for i, f in zip(where, flags, strict=True) if f)
                leaves.append(np.asarray(leaf)[idx])
            payload = jax.tree_util.tree_unflatten(tree, leaves)
        text = render(message, payload, bindex)
        FIRED.append(text)
        raise error(text)

    def fire(payload_leaves: Any, bindex: Any) -> jax.Array:
        if jax.device_count() > 1:
            # a program partitioned over several devices runs a callback on one device; if
            # its result were needed everywhere, the others would wait for it forever when it
            # raises. So: a side-effecting callback without result (kept by XLA for its side
            # effect, by JAX as an effect), at the price of JAX's Python dispatch per call.
            io_callback(raise_on_host, None, payload_leaves, bindex)
            return jnp.zeros((), jnp.int32)
        return jax.pure_callback(
            raise_on_host, jax.ShapeDtypeStruct((), jnp.int32), payload_leaves, bindex
        )

    def calm(payload_leaves: Any, bindex: Any) -> jax.Array:
        del payload_leaves, bindex
        return jnp.zeros((), jnp.int32)

    @custom_vmap
    def check(pred: jax.Array, payload_leaves: Any, bindex: jax.Array) -> jax.Array:
        return lax.cond(pred, fire, calm, payload_leaves, bindex)

    @check.def_vmap
    def check_batched(
        axis_size: int, in_batched: Any, pred: jax.Array, payload_leaves: Any, bindex: jax.Array
    ) -> tuple[jax.Array, bool]:
        # one check for the whole batch: any element failing, reported at the first one
        pred_b, payload_b, bindex_b = in_batched
        if pred_b:
            first = jnp.argmax(pred).astype(jnp.int32)
            pred = jnp.any(pred)
        else:
            first = jnp.zeros((), jnp.int32)
        if bindex_b:
            bindex = bindex[first]
        bindex = jnp.concatenate([first[None], bindex])  # outer batch levels first
        outer = tuple((bool(b), *flags) for b, flags in zip(payload_b, levels, strict=True))
        return make_check(message, tree, outer)(pred, payload_leaves, bindex), False

    return check


def error_if(x: T, pred: Any, message: Message, payload: Any = None) -> T:
    """Return ``x``, guarded by a check that raises ``ValueError(message)`` where ``pred``.

    Eagerly (``pred`` concrete) the error is raised at once. Traced, the check runs with the
    compiled program and costs only the predicate until it fires: the raising host callback
    sits in the failing branch of a ``lax.cond``. Use the returned value: it carries the check
    (each array minus the branch's 0 result), so the check cannot be removed as dead code while
    the value is used. Under ``vmap`` the predicate is reduced over the whole batch (one
    ``cond``, at most one callback) and, where the predicate varies over the batch, the
    message ends with ``(vmap: first failing batch index i)`` (a tuple for nested ``vmap``).
    Gradients pass through ``x`` unchanged. ``JAXSUBSET_CHECKS=off`` returns ``x`` unchecked.

    Under a ``jit`` of one's own JAX delivers the error as a ``jax.errors.JaxRuntimeError``
    (JAX 0.10: on every call; some earlier releases: on the first call, a ``ValueError`` on
    later ones) whose text starts with JAX's
    ``INTERNAL: CpuCallback error ...`` line and whose last line is ``ValueError: <message>``;
    :func:`reraise` / :func:`checked` turn either into ``ValueError(<message>)``.

    Args:
        x: a pytree of arrays to guard (returned with the same structure and values).
        pred: a bool array of any shape; the check fires if any element is true.
        message: the error text, or a callable ``payload -> str`` called on the host with
            ``payload`` as NumPy arrays (for a batched ``pred``: the payload of the first
            failing batch element).
        payload: optional pytree of arrays describing the failure, for ``message``. It is
            handed to the host only when the check fires and costs nothing otherwise, so
            pass raw arrays (``count``, a mask, the data) and reduce them in ``message``
            rather than computing facts on the device.

    Returns:
        ``x``, unchanged in value.

    Raises:
        ValueError: eagerly when ``pred`` holds a true element.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxsubset._core._checks import error_if, checked
        >>> def positive(v):
        ...     return error_if(v, jnp.any(v <= 0), lambda n: f"{int(n)} value(s) <= 0",
        ...                     payload=jnp.sum(v <= 0))
        >>> positive(jnp.array([1.0, -2.0]))
        Traceback (most recent call last):
        ...
        ValueError: 1 value(s) <= 0
        >>> checked(jax.jit(jax.vmap(positive)))(jnp.array([[1.0], [2.0], [-3.0]]))
        Traceback (most recent call last):
        ...
        ValueError: 1 value(s) <= 0 (vmap: first failing batch index 2)
    """
    if not checks_enabled():
        return x
    if not now_or_traced(pred, lambda p: bool(np.asarray(p).any()), lambda _: True):
        return x  # a concrete predicate that holds nowhere

    def raise_now(pair: tuple[Any, Any]) -> None:  # a concrete predicate (and payload) fired
        _, concrete = pair
        if concrete is not None:
            concrete = jax.tree_util.tree_map(np.asarray, concrete)
        raise error(render(message, concrete))

    now_or_traced((pred, payload), raise_now)  # anything traced: the check below
    pred = jnp.any(jnp.asarray(pred))
    tree = None
    payload_leaves: tuple = ()
    if payload is not None:
        leaves, tree = jax.tree_util.tree_flatten(payload)
        payload_leaves = tuple(lax.stop_gradient(jnp.asarray(leaf)) for leaf in leaves)
    check = make_check(message, tree, tuple(() for _ in payload_leaves))
    token = check(lax.stop_gradient(pred), payload_leaves, jnp.zeros((0,), jnp.int32))
    return jax.tree_util.tree_map(functools.partial(tie, token=token), x)


def tie(leaf: Any, token: jax.Array) -> Any:
    """``leaf`` made to depend on the check's ``token`` (always 0), without changing a bit.

    ``leaf - 0`` is exact for every integer and float (``-0.0 - 0.0`` is ``-0.0``, NaN and inf
    stay); bools are or-ed with ``False``. XLA cannot know the token is 0 (it comes out of the
    ``cond``), so every use of the result keeps the check alive.
    """
    if not isinstance(leaf, jax.Array | np.ndarray):
        return leaf
    dtype = jnp.result_type(leaf)
    if dtype == jnp.bool_:
        return jnp.logical_or(leaf, token.astype(jnp.bool_))
    if jnp.issubdtype(dtype, jnp.number):
        return leaf - token.astype(dtype)
    return leaf


def argument_guard(value: jax.Array, bad: jax.Array, func: str, name: str, rule: str) -> jax.Array:
    """A traced argument guarded by :func:`error_if`: ``{func}: `{name}` must be {rule}``.

    For the rules a concrete argument is checked by on the host (a width ``>= 0``, a step
    ``> 0``) that a traced one cannot be: ``bad`` (the elements breaking the rule, the shape
    of ``value``) fires the check, and the message names the first bad element, read on the
    host from the payload only when it fires.
    """

    def message(payload: tuple[np.ndarray, np.ndarray]) -> str:
        v, b = (np.asarray(a).reshape(-1) for a in payload)
        i = int(np.argmax(b))
        where = f" (element {i})" if v.size > 1 else ""
        return f"{func}: `{name}` must be {rule}, got {v[i].item()!r}{where}"

    return error_if(value, jnp.any(bad), message, (value, bad))


def nan_guard(values: T, func: str, name: str) -> T:
    """Return ``values``, guarded by the ``nan_policy="raise"`` check (see :func:`error_if`).

    Args:
        values: an array; integer and bool arrays hold no NaN and pass unchecked.
        func: the public function's name, for the message.
        name: the argument's name, for the message.

    Returns:
        ``values``, unchanged in value.

    Raises:
        ValueError: ``"<func>: `<name>` holds <n> NaN (the first at flat index <i>) with
            nan_policy='raise'; use nan_policy='omit' to skip missing readings"`` (at run
            time under ``jit``, see :func:`error_if`).

    Example:
        >>> import jax.numpy as jnp
        >>> from jaxsubset._core._checks import nan_guard
        >>> nan_guard(jnp.array([1.0, jnp.nan, jnp.nan]), "f", "y")
        Traceback (most recent call last):
        ...
        ValueError: f: `y` holds 2 NaN (the first at flat index 1) with nan_policy='raise'; ...
    """
    arr = now_or_traced(values, jnp.asarray, traced_array)
    if not jnp.issubdtype(arr.dtype, jnp.inexact):
        return values

    def message(v: np.ndarray) -> str:  # on the host, from the values themselves
        nan = np.isnan(v).reshape(-1)
        return (
            f"{func}: `{name}` holds {int(nan.sum())} NaN (the first at flat index "
            f"{int(np.argmax(nan))}) with nan_policy='raise'; use nan_policy='omit' to skip "
            "missing readings"
        )

    return error_if(values, jnp.any(jnp.isnan(arr)), message, arr)


def fired_message(err: BaseException) -> str | None:
    """The message of the check that caused ``err``, else ``None``.

    ``err`` is what JAX raised for a failed host callback: a ``jax.errors.JaxRuntimeError``
    (JAX 0.10 on every call; some earlier releases on a jitted function's first call only)
    or a ``ValueError`` (those releases' later calls, through the C++ dispatch), both with
    JAX's text around the message.
    """
    if getattr(err, MARK, False):
        return str(err)
    text = str(err)
    if "callback" not in text:  # JAX's text for a failed host callback names it
        return None
    for msg in reversed(tuple(FIRED)):
        if msg in text:
            return msg
    return None


@contextlib.contextmanager
def reraise() -> Iterator[None]:
    """Turn a fired check's ``JaxRuntimeError`` into the plain ``ValueError(message)``.

    Other exceptions pass through unchanged. The ``ValueError`` is raised ``from None``, so
    its traceback shows neither JAX's runtime error nor the host callback.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxsubset._core._checks import error_if, reraise
        >>> f = jax.jit(lambda v: error_if(v, v < 0, "negative"))
        >>> with reraise():
        ...     f(-1.0)
        Traceback (most recent call last):
        ...
        ValueError: negative
    """
    try:
        yield
    except Exception as err:
        msg = fired_message(err)
        if msg is None:
            raise
        drop_fired_tokens()
        if getattr(err, MARK, False) and str(err) == msg:
            raise
        raise error(msg) from None


def checked(fn: Callable[..., T]) -> Callable[..., T]:
    """Wrap ``fn`` (e.g. a jitted function) so that a fired check raises a plain ``ValueError``.

    Under a ``jit`` of your own, JAX delivers a check that fires (``check_overflow``,
    ``check_sorted``, ``nan_policy="raise"``) as its own runtime error around the message
    (see :func:`jaxsubset._core._checks.error_if`); the wrapped function raises
    ``ValueError(<message>)`` instead, with no JAX frames or callback traceback attached.

    Args:
        fn: any callable; typically ``jax.jit(f)`` where ``f`` uses a check.

    Returns:
        A callable with the same signature that calls ``fn`` inside :func:`reraise`, blocking
        until the results are ready so that a failing check raises here.

    Example:
        >>> import jax, jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> @jaxsubset.checked
        ... @jax.jit
        ... def total(stop):
        ...     s = jaxsubset.check_overflow(jaxsubset.isolate(x, x, 0, stop, capacity=4))
        ...     return s.sum()
        >>> float(total(3))
        3.0
        >>> total(8)
        Traceback (most recent call last):
        ...
        ValueError: 1 subset(s) overflow the capacity 4; the largest holds 8 points. Pass ...
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        with reraise():
            return jax.block_until_ready(fn(*args, **kwargs))

    return wrapper
