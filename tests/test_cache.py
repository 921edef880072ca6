"""The persistent compilation cache of the command: compilations seen through JAX's monitoring
events (``/jax/compilation_cache/cache_misses`` and ``cache_hits``), never through timings."""

import json
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

from jaxsubset._cache import AtomicFileCache, cache_dir
from jaxsubset.cli import main
from jaxsubset.cli._cache import command_cache


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


@pytest.fixture(autouse=True, scope="module")
def _no_suite_cache():
    """These tests set JAX's cache up themselves: the suite's shared one is off meanwhile.

    JAX initialises its persistent cache once per process (at the first compilation);
    ``reset_cache`` (JAX-internal, tests only) lets the next compilation start afresh.
    """
    from jax._src import compilation_cache

    folder = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", None)
    compilation_cache.reset_cache()
    yield
    compilation_cache.reset_cache()
    if folder:
        from jaxsubset import enable_compilation_cache

        enable_compilation_cache(folder)


DRIVER = textwrap.dedent(
    """
    import json, sys
    import jax.monitoring as m
    events = {}
    def seen(name, *args, **kwargs):
        events[name] = events.get(name, 0) + 1
    m.register_event_listener(seen)
    m.register_event_duration_secs_listener(seen)
    from jaxsubset.cli import main
    rc = main(sys.argv[2:])
    with open(sys.argv[1], "w") as f:
        json.dump({"rc": rc, "events": events}, f)
    """
)


def write_csv(path, seed, n=300):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 100.0, n))
    np.savetxt(path, np.c_[x, rng.normal(size=n)], delimiter=",", header="x,y", comments="")


def start(tmp_path, name, args, **env):
    """Start ``jaxsubset <args>`` in a fresh process that records JAX's monitoring events."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    full = dict(os.environ)
    full.pop("JAXSUBSET_NO_CACHE", None)
    full.update(env)
    cmd = [sys.executable, str(driver), str(tmp_path / f"{name}.json"), *args]
    pipe = subprocess.PIPE
    return subprocess.Popen(cmd, stdout=pipe, stderr=pipe, text=True, env=full)


def finish(tmp_path, name, proc):
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    rec = json.loads((tmp_path / f"{name}.json").read_text())
    assert rec["rc"] == 0, err
    return rec["events"], out, err


def test_second_run_on_a_new_file_compiles_nothing_and_two_processes_share_the_folder(tmp_path):
    cache = tmp_path / "cache"
    for i in (1, 2, 3):
        write_csv(tmp_path / f"d{i}.csv", i)
    # two processes at once on an empty cache folder: both succeed, nothing on stderr
    a = start(
        tmp_path,
        "a",
        ["stats", str(tmp_path / "d1.csv"), "--chunks", "10"],
        **{"JAXSUBSET_CACHE_DIR": str(cache)},
    )
    b = start(
        tmp_path,
        "b",
        ["stats", str(tmp_path / "d2.csv"), "--chunks", "10"],
        **{"JAXSUBSET_CACHE_DIR": str(cache)},
    )
    ev_a, out_a, err_a = finish(tmp_path, "a", a)
    ev_b, out_b, err_b = finish(tmp_path, "b", b)
    assert err_a == "" and err_b == ""
    # they compiled and wrote (the one that starts later may already load the other's entries)
    misses = "/jax/compilation_cache/cache_misses"
    assert ev_a.get(misses, 0) + ev_b.get(misses, 0) > 0
    entries = sorted(p.name for p in cache.iterdir())
    assert entries and all(e.endswith("-cache") for e in entries)  # no temporary file left
    # a third run on a new file of the same kind loads every program: no compilation at all
    c = start(
        tmp_path,
        "c",
        ["stats", str(tmp_path / "d3.csv"), "--chunks", "10"],
        **{"JAXSUBSET_CACHE_DIR": str(cache)},
    )
    ev_c, out_c, err_c = finish(tmp_path, "c", c)
    assert err_c == ""
    assert ev_c.get("/jax/compilation_cache/cache_misses", 0) == 0
    assert ev_c["/jax/compilation_cache/cache_hits"] > 0
    assert out_c.count("\n") == out_a.count("\n")  # the same table shape
    # JAXSUBSET_NO_CACHE=1 (and --no-cache, below) keep the command off the cache
    d = start(
        tmp_path,
        "d",
        ["stats", str(tmp_path / "d3.csv"), "--chunks", "10"],
        **{"JAXSUBSET_CACHE_DIR": str(cache), "JAXSUBSET_NO_CACHE": "1"},
    )
    ev_d, out_d, _ = finish(tmp_path, "d", d)
    assert "/jax/compilation_cache/cache_hits" not in ev_d
    assert out_d == out_c


def test_in_process_main_uses_the_folder_then_restores_jax_settings(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    write_csv(tmp_path / "d.csv", 7, n=137)  # a length no other test uses: fresh programs
    monkeypatch.setenv("JAXSUBSET_CACHE_DIR", str(cache))
    monkeypatch.delenv("JAXSUBSET_NO_CACHE", raising=False)
    before = (
        jax.config.jax_persistent_cache_min_compile_time_secs,
        jax.config.jax_persistent_cache_min_entry_size_bytes,
    )
    assert main(["stats", str(tmp_path / "d.csv"), "--size", "13", "--stat", "sum"]) == 0
    assert any(p.name.endswith("-cache") for p in cache.iterdir())
    assert jax.config.jax_compilation_cache_dir is None
    assert (
        jax.config.jax_persistent_cache_min_compile_time_secs,
        jax.config.jax_persistent_cache_min_entry_size_bytes,
    ) == before
    n = len(list(cache.iterdir()))
    other = tmp_path / "other"
    monkeypatch.setenv("JAXSUBSET_CACHE_DIR", str(other))
    args = ["stats", str(tmp_path / "d.csv"), "--size", "11", "--stat", "max", "--no-cache"]
    assert main(args) == 0
    assert not other.exists() and len(list(cache.iterdir())) == n
    capsys.readouterr()


def test_cache_folder_follows_xdg_and_the_override(monkeypatch, tmp_path):
    monkeypatch.delenv("JAXSUBSET_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "jaxsubset" / "jax"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "jaxsubset" / "jax"
    monkeypatch.setenv("JAXSUBSET_CACHE_DIR", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x"
    monkeypatch.setenv("JAXSUBSET_NO_CACHE", "1")
    restore = command_cache()
    assert jax.config.jax_compilation_cache_dir is None
    restore()


def test_entries_are_written_whole_by_a_rename(tmp_path):
    c = AtomicFileCache(tmp_path)
    assert c.get("k") is None
    c.put("k", b"abc")
    c.put("k", b"other")  # an existing entry is kept, as JAX's own cache does
    assert c.get("k") == b"abc"
    assert [p.name for p in tmp_path.iterdir()] == ["k-cache"]
