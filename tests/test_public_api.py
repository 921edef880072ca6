"""Every public name imports, is documented, and carries a runnable example."""

import ast
import inspect
import os
import pathlib
import subprocess
import sys

import pytest

import jaxsubset


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


PUBLIC = sorted(n for n in dir(jaxsubset) if not n.startswith("_"))


def test_all_lists_exactly_the_public_names():
    # `from jaxsubset import *` and documentation tools read __all__: no public name missing,
    # no private or stale one listed
    # (subpackages such as `cli` appear as attributes once imported: they are not the API)
    functions = {n for n in PUBLIC if not inspect.ismodule(getattr(jaxsubset, n))}
    assert set(jaxsubset.__all__) == functions | {"ranges"}
    assert len(set(jaxsubset.__all__)) == len(jaxsubset.__all__)


def test_public_names_are_documented_with_examples():
    assert {
        "Subsets",
        "Ranges",
        "isolate",
        "select",
        "chunks",
        "sliding",
        "rolling",
        "bins",
        "nearest",
        "from_ranges",
        "gather",
        "required_capacity",
        "check_overflow",
        "check_sorted",
        "pack",
        "ranges",
    } <= set(PUBLIC)
    for name in PUBLIC:
        obj = getattr(jaxsubset, name)
        if inspect.ismodule(obj):
            if name not in jaxsubset.__all__:  # a layer (resolve, reduce) or cli: not the API
                continue
            assert obj.__doc__, name
            for sub in obj.__all__:
                assert "Example" in (getattr(obj, sub).__doc__ or ""), f"{name}.{sub}"
            continue
        doc = inspect.getdoc(obj) or ""
        assert doc.strip(), f"{name} has no docstring"
        if callable(obj):
            assert "Example" in doc, f"{name} has no example"


def test_public_constants_are_documented():
    """A constant has no docstring of its own: the package docstring names it."""
    constants = [n for n in PUBLIC if not callable(getattr(jaxsubset, n))]
    constants = [n for n in constants if not inspect.ismodule(getattr(jaxsubset, n))]
    assert "STATISTICS" in constants
    for name in constants:
        assert f"``{name}``" in jaxsubset.__doc__, name
    assert jaxsubset.STATISTICS[:3] == ("count", "sum", "mean")


def test_subsets_methods_are_documented():
    for name, member in inspect.getmembers(jaxsubset.Subsets):
        if not name.startswith("_") and (callable(member) or isinstance(member, property)):
            assert (member.__doc__ or "").strip(), name


def test_py_typed_ships():
    assert (pathlib.Path(jaxsubset.__file__).parent / "py.typed").exists()


# ---------------------------------------------------------------------------- the import graph
SRC = pathlib.Path(jaxsubset.__file__).parent


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _imports(name: str) -> list[tuple[str, str | None, int]]:
    """``(module, imported name or None, line)`` for every import of ``jaxsubset`` code in the
    module ``name``, at any depth (function-level imports included), relative ones resolved."""
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found += [(target, a.name, node.lineno) for a in node.names]
    return [f for f in found if f[0].split(".")[0] == "jaxsubset"]


def _graph() -> dict[str, set[str]]:
    """module -> the jaxsubset modules it imports (``from pkg import mod`` counts as ``mod``)."""
    graph = {}
    for name in MODULES:
        deps = set()
        for target, imported, _ in _imports(name):
            sub = f"{target}.{imported}"
            deps.add(sub if sub in MODULES else target)
        graph[name] = {d for d in deps if d in MODULES and d != name}
    return graph


def test_import_graph_has_no_cycles():
    graph = _graph()
    assert {"jaxsubset", "jaxsubset.cli", "jaxsubset.cli._main"} <= set(graph)
    assert "jaxsubset.ranges" in graph["jaxsubset"]  # the graph sees real imports
    assert "jaxsubset.cli._reader" in graph["jaxsubset.cli._stats"]
    cycles, state, stack = [], {}, []

    def visit(u: str) -> None:
        state[u] = "open"
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == "open":
                cycles.append(" -> ".join(stack[stack.index(v) :] + [v]))
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = "done"

    for u in sorted(graph):
        if u not in state:
            visit(u)
    assert cycles == []


def _package(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def test_packages_import_each_other_through_their_surfaces():
    """Each package declares its surface in its ``__init__`` (``__all__``); another package
    imports from there, not from its private modules (a handful of seams left), and no name
    with a leading underscore crosses a package boundary (``benchmarks/check_layers.py``
    lists them)."""
    private, underscored = set(), []
    for name in MODULES:
        for target, imported, line in _imports(name):
            if imported is None:
                continue
            sub = f"{target}.{imported}"
            if sub in MODULES:  # `from pkg import module`
                target, imported = sub, "*"
            if target not in MODULES or _package(target) == _package(name):
                continue
            if MODULES[target].name != "__init__.py" and target.rpartition(".")[2][0] == "_":
                private.add((target, imported))
            if imported != "*" and imported.startswith("_"):
                underscored.append(f"{name}:{line} imports {target}.{imported}")
    assert underscored == []
    assert len(private) < 10, sorted(private)


def test_the_layers_import_only_downwards():
    """foundations (``_base`` without JAX, then ``_core``) <- ``_native`` <- ``reduce`` (the
    statistic table, formulas and chooser) <- ``_subsets`` (the pytree and its gather) <-
    ``resolve`` and ``_statistics`` (the roads): none of them imports a layer above it."""
    below = {
        "jaxsubset._base": set(),
        "jaxsubset._core": {"jaxsubset._base"},
        "jaxsubset._native": {"jaxsubset._base", "jaxsubset._core"},
        "jaxsubset.reduce": {"jaxsubset._base", "jaxsubset._core", "jaxsubset._native"},
    }
    below["jaxsubset._subsets"] = below["jaxsubset.reduce"] | {"jaxsubset.reduce"}
    below["jaxsubset.resolve"] = below["jaxsubset._subsets"] | {"jaxsubset._subsets"}
    below["jaxsubset._statistics"] = below["jaxsubset.resolve"]
    bad = []
    for name in MODULES:
        allowed = below.get(_package(name))
        if allowed is None:
            continue
        for target, imported, line in _imports(name):
            sub = f"{target}.{imported}"
            target = sub if sub in MODULES else target
            package = _package(target) if target in MODULES else target
            if package != _package(name) and package not in allowed:
                bad.append(f"{name}:{line} imports {target}")
    assert bad == []


def test_the_command_uses_only_the_public_api():
    """``jaxsubset.cli`` imports ``jaxsubset`` (public names only), ``jaxsubset.ranges`` and
    its own modules, and reads no private attribute of ``jaxsubset``."""
    public = {n for n in dir(jaxsubset) if not n.startswith("_")} | {"__version__"}
    bad = []
    for name, path in MODULES.items():
        if not name.startswith("jaxsubset.cli"):
            continue
        for target, imported, line in _imports(name):
            where = f"{path.name}:{line}"
            if target.startswith("jaxsubset.cli") or target == "jaxsubset.ranges":
                continue
            if target != "jaxsubset":
                bad.append(f"{where} imports {target}")
            elif imported is not None and imported not in public:
                bad.append(f"{where} imports jaxsubset.{imported}")
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "jaxsubset"
                and node.attr not in public
            ):
                bad.append(f"{path.name}:{node.lineno} reads jaxsubset.{node.attr}")
    assert bad == []


def test_streaming_is_imported_on_first_use():
    # `import jaxsubset` does not load the streaming package (a first statistic needs none of
    # it); `stream` and `shard` load it when first asked for, and `import *` still binds them
    code = (
        "import sys, jaxsubset\n"
        "def loaded(): return any(m.startswith('jaxsubset._streaming') for m in sys.modules)\n"
        "print(loaded())\n"
        "from jaxsubset import *\n"
        "print(loaded(), stream is jaxsubset.stream, shard.__module__)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True", "jaxsubset._streaming.shard"]


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        jaxsubset.no_such_name  # noqa: B018


def test_public_signatures_show_no_private_keyword():
    """Private switches (``_func``, ``_time``, ...) live on private functions that the public
    ones wrap: ``help()`` and the docs show only the contract."""
    for module, names in (
        (jaxsubset, jaxsubset.__all__),
        (jaxsubset.ranges, jaxsubset.ranges.__all__),
    ):
        for name in names:
            obj = getattr(module, name)
            if not inspect.isfunction(obj):
                continue
            private = [p for p in inspect.signature(obj).parameters if p.startswith("_")]
            assert not private, f"{module.__name__}.{name}{private}"
    assert "_func" not in str(inspect.signature(jaxsubset.ranges.rolling))
