"""``import jaxsubset`` does not import jax; the command reports a bad option or column before
it imports jax; the lazily imported public names are the library's, and ``dir()``,
``help()`` and ``from jaxsubset import *`` see every one of them.

Whether jax is imported is read from ``sys.modules`` in a fresh process (this test process has
imported it long ago), never from timings.
"""

import ast
import inspect
import json
import os
import pathlib
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import jaxsubset


# the same in either JAX mode (imports have no mode): run once, in the 64-bit run
pytestmark = pytest.mark.one_mode

ROOT = pathlib.Path(__file__).parents[1]
INIT = ROOT / "src" / "jaxsubset" / "__init__.py"


def fresh(code: str, cwd: pathlib.Path | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; it leaves its answer as JSON in ``out``; returns
    that, with ``jax`` (whether jax was imported by the end) added."""
    script = (
        "import json, sys\nout = {}\n" + code + "\nout['jax'] = 'jax' in sys.modules or "
        "'jaxlib' in sys.modules\nprint(json.dumps(out))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    env["JAX_PLATFORMS"] = "cpu"
    p = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=cwd,
        timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_import_jaxsubset_does_not_import_jax():
    out = fresh(
        "import jaxsubset\n"
        "out['version'] = jaxsubset.__version__\n"
        "out['loaded'] = sorted(m for m in sys.modules if m.startswith('jaxsubset'))\n"
    )
    assert out["jax"] is False
    assert out["loaded"] == ["jaxsubset"]
    assert out["version"] == jaxsubset.__version__


def test_the_names_without_jax_resolve_without_jax():
    # what the command checks its options with: the statistics' names and the periods
    out = fresh(
        "import jaxsubset\n"
        "out['stats'] = list(jaxsubset.STATISTICS)\n"
        "out['period'] = jaxsubset.parse_period('7D')\n"
        "from jaxsubset.cli import main\n"
        "from jaxsubset.cli._options import STATS\n"
    )
    assert out["jax"] is False
    assert tuple(out["stats"]) == jaxsubset.STATISTICS
    assert out["period"] == ["fixed", 7 * 86_400 * 10**9]


def test_a_jax_name_imports_jax():
    out = fresh("import jaxsubset\nout['f'] = jaxsubset.isolate.__module__\n")
    assert out["f"].startswith("jaxsubset.resolve")
    assert out["jax"] is True


@pytest.fixture
def files(tmp_path):
    """A CSV with a date column, a .npy and a .parquet (if pyarrow is there) of numbers."""
    (tmp_path / "d.csv").write_text("date,a,b\n2001-01-01,1,2\n2001-01-02,3,4\n")
    np.save(tmp_path / "d.npy", np.stack([np.arange(5.0), np.ones(5)], axis=1))
    return tmp_path


BAD = {  # options -> a part of the one-line message
    "--y aa --width 7D": "no y column 'aa'",
    "--x nope --width 7D": "no x column 'nope'",
    "--y a --width 7": "needs a unit",
    "--y a --width 7Q": "--width 7Q",
    "--y a --bins 1X": "unknown time unit",
    "--y a --bins 0,1,x": "--bins",
    "--y a --stat mean,bogus --width 7D": "unknown statistic 'bogus'",
    "--y a --every 1D --offset 3": "--offset",
    "--y a --step 3 --chunks 2": "--step goes with --window only",
}


@pytest.mark.parametrize("options", list(BAD))
def test_a_bad_option_or_column_is_reported_before_jax_is_imported(files, options):
    argv = ["stats", "d.csv", "--x", "date", *options.split(), "--quiet"]
    if "--x nope" in options:
        argv = ["stats", "d.csv", *options.split(), "--quiet"]
    out = fresh(
        "import contextlib, io\nfrom jaxsubset.cli import main\nerr = io.StringIO()\n"
        f"with contextlib.redirect_stderr(err):\n    out['rc'] = main({argv!r})\n"
        "out['err'] = err.getvalue()\n",
        cwd=files,
    )
    assert out["rc"] == 2, out
    assert BAD[options] in out["err"], out["err"]
    assert out["err"].count("\n") == 1
    assert out["jax"] is False, f"jax imported before reporting: {out['err']}"


def test_a_bad_option_on_binary_files_is_reported_before_jax_is_imported(files):
    cases = [
        ["stats", "d.npy", "--width", "7D"],  # a duration on a numeric axis
        ["stats", "d.npy", "--bins", "1M"],
        ["stats", "d.npy", "--y", "9", "--chunks", "2"],
    ]
    out = fresh(
        "import contextlib, io\nfrom jaxsubset.cli import main\nerr = io.StringIO()\n"
        f"with contextlib.redirect_stderr(err):\n    out['rc'] = [main(a) for a in {cases!r}]\n"
        "out['err'] = err.getvalue()\n",
        cwd=files,
    )
    assert out["rc"] == [2, 2, 2], out
    assert out["jax"] is False, out["err"]


def test_a_good_run_imports_jax_after_the_checks_and_restores_the_mode(files):
    out = fresh(
        "import contextlib, io\nimport jax\nfrom jaxsubset.cli import main\n"
        "out['x64_before'] = bool(jax.config.read('jax_enable_x64'))\n"
        "s = io.StringIO()\n"
        "with contextlib.redirect_stdout(s):\n"
        "    out['rc'] = main(['stats', 'd.csv', '--x', 'date', '--y', 'a', '--width', '7D',"
        " '--stat', 'mean', '--no-cache'])\n"
        "out['table'] = s.getvalue()\n"
        "out['x64_after'] = bool(jax.config.read('jax_enable_x64'))\n",
        cwd=files,
    )
    assert out["rc"] == 0
    assert out["x64_after"] == out["x64_before"]
    rows = out["table"].strip().splitlines()
    assert rows[0].split()[-1] == "mean"
    assert [float(r.split()[-1]) for r in rows[1:]] == [1.0, 2.0]  # pandas rolling("7D")


def test_the_lazy_names_are_the_library_s():
    from jaxsubset._base import _names, _periods
    from jaxsubset._core import _axis
    from jaxsubset.reduce import _registry

    for name in jaxsubset.__all__:
        obj = getattr(jaxsubset, name)
        if inspect.ismodule(obj):
            assert obj.__name__ == f"jaxsubset.{name}"
            continue
        where = inspect.getmodule(obj) if callable(obj) else None
        assert where is None or where.__name__.startswith("jaxsubset."), name
    assert jaxsubset.STATISTICS is _names.STATISTICS is _registry.STATISTICS
    # one parser and one error type: the axis layer raises the periods' own error
    assert jaxsubset.parse_period is _periods.parse_period
    assert _axis.PeriodError is _periods.PeriodError
    with pytest.raises(ValueError, match="ambiguous unit 'm'"):
        jaxsubset.parse_period("1m")


def test_every_lazy_name_is_declared_for_type_checkers():
    """The ``TYPE_CHECKING`` block (what mypy and IDEs read), the lazy table and ``__all__``
    name the same names."""
    tree = ast.parse(INIT.read_text())
    declared = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "_TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                declared |= {a.asname or a.name for a in stmt.names}
    lazy = object.__getattribute__(jaxsubset, "_LAZY")
    assert declared == set(lazy) == set(jaxsubset.__all__)


def test_dir_help_and_star_import_see_every_name():
    out = fresh(
        "import pydoc, jaxsubset\n"
        "out['dir'] = dir(jaxsubset)\n"
        "out['jax_after_dir'] = 'jax' in sys.modules\n"
        "ns = {}\nexec('from jaxsubset import *', ns)\n"
        "out['star'] = sorted(k for k in ns if not k.startswith('__'))\n"
        "out['help'] = pydoc.render_doc(jaxsubset, renderer=pydoc.plaintext)\n"
    )
    assert set(jaxsubset.__all__) <= set(out["dir"])
    assert out["jax_after_dir"] is False  # dir() lists the names, importing none
    assert out["star"] == sorted(jaxsubset.__all__)
    text = out["help"]
    functions = text[text.index("FUNCTIONS") : text.index("DATA")]
    for name in ("isolate", "range_statistic", "rolling_statistic", "stream", "parse_period"):
        assert f"\n    {name}(" in functions, name
    assert "STATISTICS = (" in text[text.index("DATA") :]


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        jaxsubset.no_such_name  # noqa: B018
    assert not hasattr(jaxsubset, "jax")


def test_the_console_script_and_python_m_exit_with_the_status(files):
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["jaxsubset"] == "jaxsubset.__main__:run"
    from jaxsubset.__main__ import run

    assert callable(run)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    argv = [sys.executable, "-m", "jaxsubset", "stats", "d.csv", "--x", "date", "--width"]
    ok = subprocess.run(
        [*argv, "7D", "--stat", "mean", "--no-cache", "--out", "r.csv"],
        capture_output=True, text=True, cwd=files, env=env, timeout=300,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "wrote 2 subsets" in ok.stderr  # flushed before os._exit
    assert (files / "r.csv").read_text().splitlines()[0].startswith("subset,")
    bad = subprocess.run(
        [*argv, "7"], capture_output=True, text=True, cwd=files, env=env, timeout=300
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("jaxsubset stats: error: --width 7:")
    table = subprocess.run(
        [*argv, "7D", "--stat", "mean", "--no-cache"],
        capture_output=True, text=True, cwd=files, env=env, timeout=300,
    )  # fmt: skip
    assert table.returncode == 0
    assert len(table.stdout.strip().splitlines()) == 3  # the whole table, flushed
