"""The declared dependency floors are the ones the code needs, and the installed versions meet them.

Why the floors are what they are:

- ``jax>=0.7``: the newest JAX feature the library uses is ``jax.P`` (the ``PartitionSpec``
  alias, new in 0.7.0; ``shard`` builds its shardings with it). Everything else is older:
  ``jax.shard_map`` (0.6.0), ``lax.map(batch_size=)`` (0.4.31). Checked by running the tests
  of ``stream``, ``shard`` (also over two processes) and the run-time checks, and every
  doctest of ``src/``, with jax 0.7.0 and numpy 1.26.4 installed.
- ``numpy>=1.26``: jax 0.7.0's own floor; the same run used numpy 1.26.4.

``tests/jax_names_at_floor.txt`` lists every public jax name that ``src/`` uses, as found in
jax 0.7.0; a name outside it is reported here, so a newer feature cannot slip in unnoticed.
"""

import ast
import importlib
import importlib.metadata
import pathlib
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.version import Version


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


ROOT = pathlib.Path(__file__).parents[1]
SRC = ROOT / "src" / "jaxsubset"
NAMES_AT_FLOOR = pathlib.Path(__file__).with_name("jax_names_at_floor.txt")

# the features that set the jax floor, with the release that introduced them
JAX_FEATURES = {
    "jax.P": "0.7.0",
    "jax.shard_map": "0.6.0",
    "jax.lax.map(batch_size=)": "0.4.31",
}


def _floors() -> dict[str, Version]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    floors = {}
    for line in meta["project"]["dependencies"]:
        req = Requirement(line)
        (spec,) = [s for s in req.specifier if s.operator == ">="]
        floors[req.name] = Version(spec.version)
    return floors


def _resolve(name: str) -> object:
    """The object a dotted name refers to, importing submodules on the way."""
    parts = name.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[: i + 1]))
    return obj


def _jax_names(root: pathlib.Path) -> dict[str, str]:
    """Every dotted public jax name used under ``root`` (``jax.lax.map``, ``jax.numpy.where``),
    with the first file using it; ``jax._src`` (private, read with fallbacks) is left out."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        alias: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "jax" or a.name.startswith("jax."):
                        alias[a.asname or "jax"] = a.name if a.asname else "jax"
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "jax" or node.module.startswith("jax."):
                    for a in node.names:
                        alias[a.asname or a.name] = f"{node.module}.{a.name}"
                        found.setdefault(f"{node.module}.{a.name}", str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                parts = []
                cur: ast.expr = node
                while isinstance(cur, ast.Attribute):
                    parts.append(cur.attr)
                    cur = cur.value
                if isinstance(cur, ast.Name) and cur.id in alias:
                    found.setdefault(".".join([alias[cur.id], *reversed(parts)]), str(path))
    return {n: p for n, p in found.items() if "._src" not in n and not n.startswith("jax._src")}


def test_installed_versions_meet_the_declared_floors():
    floors = _floors()
    assert set(floors) == {"jax", "numpy"}  # the only runtime dependencies (README, docs/index.md)
    for name, floor in floors.items():
        installed = Version(importlib.metadata.version(name))
        assert installed >= floor, f"{name} {installed} is below the declared floor {floor}"


def test_the_jax_floor_is_the_newest_feature_used():
    newest = max(Version(v) for v in JAX_FEATURES.values())
    assert _floors()["jax"] == newest, (
        f"pyproject.toml declares jax>={_floors()['jax']}, but the newest feature used needs "
        f"{newest}: {JAX_FEATURES}"
    )
    import inspect

    import jax

    assert jax.P is jax.sharding.PartitionSpec
    assert callable(jax.shard_map)
    assert "batch_size" in inspect.signature(jax.lax.map).parameters


def test_every_jax_name_used_exists_at_the_floor():
    lines = NAMES_AT_FLOOR.read_text().splitlines()
    listed = {line for line in lines if line and not line.startswith("#")}
    floor = _floors()["jax"]
    assert f"jax {floor}" in NAMES_AT_FLOOR.read_text(), "the list was made at another floor"
    used = _jax_names(SRC)
    assert len(used) > 50  # the scan sees the library's jax calls
    new = {n: p for n, p in used.items() if n not in listed}
    assert not new, (
        f"jax names used in src/ but not known to exist in jax {floor}: {new}; check them "
        f"in a fresh venv with jax=={floor} and add them to {NAMES_AT_FLOOR.name}, or raise "
        "the floor in pyproject.toml"
    )
    for name in sorted(listed):  # the list is real: each name exists in the installed jax too
        try:
            _resolve(name)
        except (AttributeError, ImportError) as e:
            pytest.fail(f"{name} (in {NAMES_AT_FLOOR.name}) does not resolve: {e}")
