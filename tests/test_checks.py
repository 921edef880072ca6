"""Run-time checks (jaxsubset._core._checks.error_if and its users): behaviour, never timings."""

import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from jaxsubset._core._checks import error_if, nan_guard, reraise


def counting(template):
    """A message callable that counts its calls (one per callback that fires)."""
    calls = []

    def message(payload):
        calls.append(np.asarray(payload))
        return template.format(int(payload))

    return message, calls


def positive(v, message="{} value(s) <= 0"):
    """``v``, checked to be positive; ``message`` a template of the count or a callable."""
    text = message if callable(message) else (lambda n: message.format(int(n)))
    return error_if(v, jnp.any(v <= 0), text, payload=jnp.sum(v <= 0))


def callbacks_in(fn, *args):
    text = str(jax.make_jaxpr(fn)(*args))
    return text.count("pure_callback") + text.count("io_callback")


def test_eager_raises_at_once_and_returns_the_same_object():
    v = jnp.array([1.0, 2.0])
    assert positive(v) is v
    with pytest.raises(ValueError, match=r"^1 value\(s\) <= 0$"):
        positive(jnp.array([1.0, -2.0]))
    with pytest.raises(ValueError, match="^plain text$"):
        error_if(3, np.array([False, True]), "plain text")
    tree = {"a": v, "b": (v, 1)}
    assert error_if(tree, False, "never") is tree


def test_under_jit_the_message_is_the_last_line_and_checked_gives_the_plain_valueerror():
    f = jax.jit(positive)
    bad = jnp.array([1.0, -2.0, -3.0])
    # first call (Python dispatch) and later calls (C++ dispatch): JAX's error types differ,
    # the text ends with the message either way
    for _ in range(2):
        with pytest.raises((ValueError, jax.errors.JaxRuntimeError)) as info:
            jax.block_until_ready(f(bad))
        assert str(info.value).splitlines()[-1] == "ValueError: 2 value(s) <= 0"
    g = jaxsubset.checked(jax.jit(positive))
    np.testing.assert_array_equal(np.asarray(g(jnp.ones(3))), np.ones(3))
    for _ in range(2):
        with pytest.raises(ValueError) as info:
            g(bad)
        assert type(info.value) is ValueError
        assert str(info.value) == "2 value(s) <= 0"
        assert info.value.__suppress_context__


def test_reraise_leaves_other_errors_alone():
    with pytest.raises(jax.errors.JaxRuntimeError, match="not ours"):
        with reraise():
            raise jax.errors.JaxRuntimeError("not ours")
    with pytest.raises(KeyError):
        with reraise():
            raise KeyError("k")


def test_vmap_is_one_check_naming_the_first_failing_batch_index():
    message, calls = counting("{} bad")
    f = jax.jit(jax.vmap(lambda v: positive(v, message)))
    ok = jnp.ones((400, 3))
    jax.block_until_ready(f(ok))
    assert calls == []  # nothing fires while the predicate is false
    bad = ok.at[7, 1].set(-1.0).at[9].set(-2.0).at[300, 0].set(-1.0)
    with pytest.raises(ValueError, match=re.escape("1 bad (vmap: first failing batch index 7)")):
        jaxsubset.checked(f)(bad)
    assert len(calls) == 1  # one callback for the whole batch
    assert callbacks_in(jax.vmap(positive), ok) == 1
    assert str(jax.make_jaxpr(jax.vmap(positive))(ok)).count("cond[") == 1


def test_nested_vmap_names_the_index_tuple_and_an_unbatched_predicate_none():
    f = jax.jit(jax.vmap(jax.vmap(positive)))
    bad = jnp.ones((4, 5, 3)).at[2, 3, 1].set(-1.0).at[3, 0, 0].set(-1.0)
    with pytest.raises(ValueError, match=re.escape("(vmap: first failing batch index (2, 3))")):
        jaxsubset.checked(f)(bad)

    def shared(v, flag):  # a predicate without the batch axis: no batch index to name
        return error_if(v, flag, "flagged")

    g = jaxsubset.checked(jax.jit(jax.vmap(shared, in_axes=(0, None))))
    with pytest.raises(ValueError, match="^flagged$"):
        g(jnp.ones((3, 2)), True)


def test_the_check_survives_in_the_compiled_program_and_values_are_bit_identical():
    f = jax.jit(lambda v: positive(v) * 2.0)
    assert "callback" in f.lower(jnp.ones(3)).compile().as_text()
    with pytest.raises(ValueError, match="value"):
        jaxsubset.checked(f)(-jnp.ones(3))
    # the guarded value is unchanged bit for bit: -0.0, NaN, inf, ints, bools
    v = jnp.array([-0.0, 0.0, jnp.inf, -jnp.inf, jnp.nan, 1.5])
    tree = {"f": v, "i": jnp.arange(3), "b": jnp.array([True, False]), "n": None}
    out = jax.jit(lambda t: error_if(t, t["i"][0] > 5, "never"))(tree)
    np.testing.assert_array_equal(np.signbit(np.asarray(out["f"])), np.signbit(np.asarray(v)))
    np.testing.assert_array_equal(np.asarray(out["f"]), np.asarray(v))
    assert out["i"].dtype == tree["i"].dtype and out["b"].dtype == jnp.bool_
    assert out["n"] is None


def test_gradients_pass_through():
    g = jax.grad(lambda v: jnp.sum(positive(v) ** 2))(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(g), [2.0, 4.0])
    gv = jax.jit(jax.vmap(jax.grad(lambda v: jnp.sum(positive(v)))))(jnp.ones((3, 2)))
    np.testing.assert_allclose(np.asarray(gv), np.ones((3, 2)))


def test_payload_pytree_reaches_the_message_as_numpy():
    def check(v):
        facts = {"n": jnp.sum(v < 0), "where": jnp.argmax(v < 0)}
        return error_if(v, jnp.any(v < 0), lambda p: f"{p['n']} at {p['where']}", facts)

    with pytest.raises(ValueError, match="^2 at 1$"):
        check(jnp.array([1.0, -1.0, -1.0]))
    with pytest.raises(ValueError, match="^2 at 1$"):
        jaxsubset.checked(jax.jit(check))(jnp.array([1.0, -1.0, -1.0]))


def test_off_switch_is_read_at_trace_time(monkeypatch):
    monkeypatch.setenv("JAXSUBSET_CHECKS", "off")
    np.testing.assert_array_equal(np.asarray(positive(-jnp.ones(2))), -np.ones(2))
    f = jax.jit(lambda v: positive(v))  # traced now: no check in the program
    assert callbacks_in(f, jnp.ones(2)) == 0
    np.testing.assert_array_equal(np.asarray(f(-jnp.ones(2))), -np.ones(2))
    x = jnp.arange(10.0)
    s = jaxsubset.isolate(x, x, 0, 8, capacity=4)
    assert jaxsubset.check_overflow(s) is s
    monkeypatch.setenv("JAXSUBSET_CHECKS", "on")
    with pytest.raises(ValueError, match="overflow the capacity 4"):
        jaxsubset.check_overflow(s)


def test_nan_guard_eager_jit_and_integers():
    msg = "f: `y` holds 2 NaN (the first at flat index 1) with nan_policy='raise'"
    with pytest.raises(ValueError, match=re.escape(msg)):
        nan_guard(jnp.array([1.0, jnp.nan, jnp.nan]), "f", "y")
    with pytest.raises(ValueError, match=re.escape(msg)):
        jaxsubset.checked(jax.jit(lambda y: nan_guard(y, "f", "y").sum()))(
            jnp.array([[1.0, jnp.nan], [jnp.nan, 0.0]])
        )
    ints = jnp.arange(3)
    assert nan_guard(ints, "f", "y") is ints
    ok = jnp.ones(3)
    assert nan_guard(ok, "f", "y") is ok


def test_check_overflow_under_vmap_of_400_subsets_is_one_callback():
    x = jnp.arange(5000.0)

    def f(i1):
        return jaxsubset.check_overflow(jaxsubset.isolate(x, x, 0, i1, capacity=8)).sum()

    stops = jnp.full(400, 5).at[123].set(20).at[200].set(30)
    assert callbacks_in(jax.vmap(f), stops) == 1
    with pytest.raises(
        ValueError,
        match=re.escape(
            "1 subset(s) overflow the capacity 8; the largest holds 20 points. Pass capacity=32 "
            "or more (see jaxsubset.required_capacity). (vmap: first failing batch index 123)"
        ),
    ):
        jaxsubset.checked(jax.jit(jax.vmap(f)))(stops)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(f))(jnp.full(4, 3))), [3.0] * 4)


def test_check_sorted_returns_x_carrying_the_check():
    f = jaxsubset.checked(jax.jit(lambda x: jaxsubset.check_sorted(x) + 1.0))
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(3.0))), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"^`x` must be sorted ascending, but 1 descending step"):
        f(jnp.array([0.0, 2.0, 1.0]))


def test_nan_policy_raise_under_jit_and_vmap_even_when_fn_ignores_the_mask():
    x = jnp.arange(20.0)
    y = x.at[13].set(jnp.nan)
    s = jaxsubset.chunks(x, y, 4)
    ignore_mask = lambda s: s.apply(lambda x, y, m: jnp.sum(x), nan_policy="raise")  # noqa: E731
    f = jaxsubset.checked(jax.jit(ignore_mask))
    with pytest.raises(ValueError, match=r"^Subsets\.apply: the subsets hold 1 NaN value\(s\)"):
        f(s)
    means = jax.vmap(lambda y: jaxsubset.chunks(x, y, 4).mean(nan_policy="raise"))
    g = jaxsubset.checked(jax.jit(means))
    with pytest.raises(ValueError, match=re.escape("(vmap: first failing batch index 2)")):
        g(jnp.stack([x, x, y]))


@pytest.mark.parametrize("run", ["stream", "shard"])
def test_stream_and_shard_raise_the_documented_valueerror(run):
    x = np.arange(4000.0)
    y = np.ones(4000)
    y[2500] = np.nan
    with pytest.raises(ValueError) as info:
        if run == "stream":
            jaxsubset.stream((x, y), "chunks", n=40, statistic="mean", nan_policy="raise")
        else:
            jaxsubset.shard(x, y, "chunks", n=40, statistic="mean", nan_policy="raise", devices=1)
    assert type(info.value) is ValueError
    assert str(info.value).startswith("Subsets.mean: the subsets hold 1 NaN value(s)")


def test_nothing_reaches_stderr_when_caught_not_even_at_exit(tmp_path):
    script = tmp_path / "caught.py"
    script.write_text(
        textwrap.dedent(
            """
            import jax, jax.numpy as jnp, numpy as np, jaxsubset
            x = jnp.arange(10.0)
            f = jax.jit(lambda i: jaxsubset.check_overflow(
                jaxsubset.isolate(x, x, 0, i, capacity=4)).sum())
            f(2)
            for i in (8, 9):  # a compiled function's later calls, then a new trace
                try:
                    f(i)
                except Exception:
                    pass
            try:
                jax.jit(lambda v: jaxsubset.check_sorted(v))(jnp.array([1.0, 0.0]))
            except Exception:
                pass
            y = np.ones(3000); y[1000] = np.nan
            for run in (jaxsubset.stream, lambda *a, **k: jaxsubset.shard(*a[0], *a[1:], **k)):
                try:
                    run((np.arange(3000.0), y), "chunks", n=30, statistic="mean",
                        nan_policy="raise")
                except ValueError:
                    pass
            print("done")
            """
        )
    )
    env = dict(os.environ, JAXSUBSET_NO_CACHE="1")
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "done"
    assert out.stderr == ""


def test_several_devices_a_partitioned_program_raises_without_hanging(tmp_path):
    # a jit over arrays sharded on 4 devices runs a callback on one device: the check must
    # not leave the others waiting for its result (XLA aborts the process after 40 s then)
    script = tmp_path / "sharded.py"
    script.write_text(
        textwrap.dedent(
            """
            import jax, jax.numpy as jnp, numpy as np, jaxsubset
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
            mesh = Mesh(np.array(jax.devices()), ("d",))
            v = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("d")))
            f = jax.jit(lambda v: jaxsubset.check_sorted(v) * 2)
            assert np.asarray(f(v)).tolist() == [2.0 * i for i in range(8)]
            for _ in range(2):
                try:
                    np.asarray(f(v.at[5].set(-1.0)))
                except Exception as e:
                    assert "descending step" in str(e)
                else:
                    raise AssertionError("no error")
            try:
                jaxsubset.checked(f)(v.at[5].set(-1.0))
            except ValueError as e:
                print(e)
            """
        )
    )
    env = dict(os.environ, JAX_NUM_CPU_DEVICES="4", JAXSUBSET_NO_CACHE="1")
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "`x` must be sorted ascending, but 1 descending step(s) found, the first at index 4"
    )
    assert "Traceback" not in out.stderr and "rendezvous" not in out.stderr


def test_traced_window_widths_are_checked_at_run_time_and_eager_programs_carry_no_check():
    # a negative or NaN width under jit gave each row's own point as its window, silently
    x = np.arange(6.0)
    y = np.arange(6.0) ** 2
    trailing = jaxsubset.checked(jax.jit(lambda w: jaxsubset.rolling_statistic(x, y, w, "sum")))
    np.testing.assert_array_equal(np.asarray(trailing(1.5)), [0, 1, 5, 13, 25, 41])
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match=r"^rolling_statistic: `width` must be >= 0, got "):
            trailing(bad)
    ahead = jax.jit(
        lambda a: jaxsubset.rolling_statistic(x, y, statistic="sum", before=1.0, after=a)
    )
    with pytest.raises(ValueError, match=r"^rolling_statistic: `after` must be >= 0, got -2.0$"):
        jaxsubset.checked(ahead)(-2.0)
    ints = jaxsubset.checked(jax.jit(lambda w: jaxsubset.ranges.rolling(np.arange(6), w).count))
    np.testing.assert_array_equal(np.asarray(ints(2)), [1, 2, 2, 2, 2, 2])
    with pytest.raises(ValueError, match=r"^ranges\.rolling: `width` must be >= 0, got -3$"):
        ints(-3)
    many = jax.vmap(lambda w: jaxsubset.rolling(x, y, w, capacity=4).count)
    with pytest.raises(ValueError, match=r"`width` must be >= 0, got -1.0 .*batch index 2\)$"):
        jaxsubset.checked(jax.jit(many))(jnp.array([1.0, 2.0, -1.0]))
    # eager calls check the widths on the host: their programs per bucket hold no callback
    assert callbacks_in(lambda w: jaxsubset.rolling_statistic(x, y, w, "sum"), 1.5) == 1
    from jaxsubset.resolve._windows import eager_windows

    widths = {"width": jnp.asarray(1.5), "before": None, "after": None}
    args = (jnp.asarray(x), None, ({}, None), jnp.asarray(6), widths)
    program = eager_windows.traced
    fn = lambda *a: program(*a, closed="right", center=False, func="f")  # noqa: E731
    assert callbacks_in(fn, *args) == 0


def test_traced_bin_edges_and_ranges_are_checked_at_run_time():
    # descending, repeated or NaN traced edges put points in the wrong bins silently
    x = np.arange(10.0)
    by_range = jaxsubset.checked(
        jax.jit(lambda r: jaxsubset.binned_statistic(x, x, "sum", bins=2, range=r).statistic)
    )
    np.testing.assert_array_equal(np.asarray(by_range(jnp.array([0.0, 10.0]))), [10, 35])
    for bad in ([10.0, 0.0], [0.0, np.nan]):
        with pytest.raises(ValueError, match=r"^binned_statistic: the bins of `range` .*edges\[0"):
            by_range(jnp.array(bad))
    by_edges = jax.vmap(lambda e: jaxsubset.binned_statistic(x, x, "sum", bins=e).statistic)
    good = jnp.array([[0.0, 5.0, 10.0], [0.0, 2.0, 9.0]])
    np.testing.assert_array_equal(np.asarray(jax.jit(by_edges)(good)), [[10, 35], [1, 44]])
    with pytest.raises(
        ValueError,
        match=re.escape(
            "binned_statistic: `bins`: the edges must be finite and increase strictly, but "
            "edges[1]=6.0, edges[2]=6.0 (vmap: first failing batch index 1)"
        ),
    ):
        jaxsubset.checked(jax.jit(by_edges))(jnp.array([[0.0, 5.0, 10.0], [0.0, 6.0, 6.0]]))


def test_traced_hopping_window_steps_are_checked_at_run_time():
    # a zero, negative or NaN traced `every` made windows silently (and `x // 0` on ints)
    x = np.arange(10.0)
    every = jaxsubset.checked(jax.jit(lambda e: jaxsubset.ranges.dynamic(x, e, num_windows=3)))
    np.testing.assert_array_equal(np.asarray(every(4.0).count), [4, 4, 2])
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match=r"^ranges\.dynamic: `every` must be > 0 and finite"):
            every(bad)
    ints = jaxsubset.checked(
        jax.jit(lambda e: jaxsubset.ranges.dynamic(np.arange(10), e, num_windows=3).count)
    )
    with pytest.raises(ValueError, match=r"^ranges\.dynamic: `every` must be > 0, got 0$"):
        ints(0)
    offset = jax.jit(lambda o: jaxsubset.ranges.dynamic(x, 4.0, offset=o, num_windows=3).count)
    with pytest.raises(ValueError, match=r"^ranges\.dynamic: `offset` must be finite, got inf$"):
        jaxsubset.checked(offset)(np.inf)
    period = jax.jit(lambda p: jaxsubset.ranges.dynamic(x, 4.0, period=p, num_windows=3).count)
    np.testing.assert_array_equal(np.asarray(period(np.inf)), [10, 6, 2])  # allowed eagerly too
    with pytest.raises(ValueError, match=r"^ranges\.dynamic: `period` must be > 0, got 0.0$"):
        jaxsubset.checked(period)(0.0)
