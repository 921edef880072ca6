"""Layering check: module sizes, public function lengths, private imports across packages.

    PYTHONPATH=src python benchmarks/check_layers.py [--list]

Measures issue 28's "What must show" targets on the source, without running anything:

- modules over ``MAX_MODULE`` lines;
- public functions (the names in ``jaxsubset.__all__``, ``jaxsubset.ranges`` and
  ``jaxsubset.reduce``, and the public methods of public classes) over ``MAX_FUNCTION`` lines
  of code (no docstring, blank or comment lines);
- private names imported across package boundaries: every ``from X import a`` where ``X`` is
  a private module (its own name starts with ``_``; a package's ``__init__`` is the
  package's declared surface and does not count) of another package than the importer's,
  counted as distinct ``(X, a)``; and every name with a leading underscore imported from
  another package at all.

- ``is_traced(`` forks outside the places the issue allows them (the resolve layer's exact
  key handling, ``resolve/_keys`` and ``resolve/_exact``; the trace helpers themselves,
  ``_core/_trace``; the eager decorator, ``resolve/_eager``);
- private keywords (a leading underscore) in the signatures of the public functions;
- ``--walk``: the calls made by ``select`` and ``rolling_statistic`` (eagerly and under
  ``jit``), traced with ``sys.setprofile``: the modules visited, and every call from a layer
  into a layer above it that is not a callback (a lambda or a nested function handed down:
  ``now_or_traced``'s branches, the eager decorator's traced function).

Packages are the folders: the top-level ``jaxsubset`` modules, ``resolve/``, ``reduce/``,
``_core/``, ``_statistics/``, ``_native/``, ``_streaming/``, ``cli/``. Exits 1 when a limit
is exceeded (``--strict``), so it can run in CI.
"""

import argparse
import ast
import collections
import importlib
import inspect
import pathlib
import sys
import textwrap


MAX_MODULE = 600
MAX_FUNCTION = 60
SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "jaxsubset"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def package_of(name: str, path: pathlib.Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imports(name: str, path: pathlib.Path) -> list[tuple[str, str, int]]:
    """``(module, imported name, line)`` of every ``from jaxsubset... import`` in a module."""
    package = package_of(name, path).split(".")
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.split(".")[0] == "jaxsubset":
                found += [(target, a.name, node.lineno) for a in node.names]
    return found


def cross_imports(literal: bool = False) -> tuple[set[tuple[str, str]], list[str]]:
    """``(distinct (private module, name) pairs imported across packages, underscore names)``.

    ``literal``: a module is private when any component of its dotted name starts with ``_``
    (a private package's ``__init__`` counts too): the count before the packages declared
    their surfaces."""
    mods = modules()
    pairs: set[tuple[str, str]] = set()
    underscored = []
    for name, path in mods.items():
        mine = package_of(name, path)
        for target, imported, line in imports(name, path):
            sub = f"{target}.{imported}"
            if sub in mods:  # `from pkg import module`: the module itself is imported
                target, imported = sub, "*"
            if target not in mods:
                continue
            tpath = mods[target]
            if package_of(target, tpath) == mine:
                continue
            private = tpath.name != "__init__.py" and target.rpartition(".")[2].startswith("_")
            if literal:
                private = any(c.startswith("_") for c in target.split(".")[1:])
            if private:
                pairs.add((target, imported))
            if imported.startswith("_") and imported != "*":
                underscored.append(f"{name}:{line} imports {target}.{imported}")
    return pairs, underscored


def code_lines(node: ast.AST, source: list[str]) -> int:
    """Lines of a function's code: no docstring, blank or comment-only lines."""
    body = node.body  # type: ignore[attr-defined]
    skip = set()
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        skip = set(range(first.lineno, first.end_lineno + 1))  # type: ignore[operator]
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])  # type: ignore[attr-defined]
    count = 0
    for i in range(start, node.end_lineno + 1):  # type: ignore[attr-defined]
        text = source[i - 1].strip()
        if i not in skip and text and not text.startswith("#"):
            count += 1
    return count


def public_functions() -> dict[str, int]:
    """``qualified name -> lines of code`` of every public function and public method."""
    import jaxsubset

    owners = [(jaxsubset, list(jaxsubset.__all__))]
    for sub in ("ranges", "reduce"):
        mod = importlib.import_module(f"jaxsubset.{sub}")
        names = getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")])
        owners.append((mod, list(names)))
    found: dict[str, int] = {}
    for owner, names in owners:
        for n in names:
            obj = getattr(owner, n)
            targets = []
            if inspect.isclass(obj):
                targets = [
                    (f"{n}.{m}", inspect.unwrap(f))
                    for m, f in vars(obj).items()
                    if not m.startswith("_") and inspect.isfunction(inspect.unwrap(f))
                ]
            elif callable(obj) and not inspect.ismodule(obj):
                targets = [(n, inspect.unwrap(obj))]
            for qual, f in targets:
                try:
                    lines, _ = inspect.getsourcelines(f)
                except (OSError, TypeError):
                    continue
                tree = ast.parse(textwrap.dedent("".join(lines)))
                fn = tree.body[0]
                key = f"{owner.__name__}.{qual}"
                found[key] = code_lines(fn, textwrap.dedent("".join(lines)).splitlines())
    return found


FORKS_ALLOWED = ("resolve/_keys.py", "resolve/_exact.py", "_core/_trace.py", "resolve/_eager.py")

# the layers, bottom up (a package's rank; the public modules are the top-level ones)
RANK = {
    "jaxsubset._base": 0,
    "jaxsubset._core": 1,
    "jaxsubset._native": 2,
    "jaxsubset.reduce": 3,
    "jaxsubset._subsets": 4,
    "jaxsubset.resolve": 5,
    "jaxsubset._statistics": 5,
    "jaxsubset": 6,
    "jaxsubset._streaming": 7,
    "jaxsubset.cli": 8,
}


def forks() -> dict[str, int]:
    """``file -> number of is_traced( calls`` outside :data:`FORKS_ALLOWED`."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        n = path.read_text().count("is_traced(") - path.read_text().count("def is_traced(")
        if n and rel not in FORKS_ALLOWED:
            found[rel] = n
    return found


def private_keywords() -> list[str]:
    """``function(keyword)`` for every public function with a keyword starting with ``_``."""
    import jaxsubset
    import jaxsubset.ranges

    bad = []
    for owner in (jaxsubset, jaxsubset.ranges):
        for n in owner.__all__:
            obj = getattr(owner, n)
            if not callable(obj) or inspect.isclass(obj):
                continue
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            bad += [f"{owner.__name__}.{n}({p})" for p in params if p.startswith("_")]
    return bad


def rank(module: str) -> int | None:
    parts = module.split(".")
    for k in (2, 1):
        if ".".join(parts[:k]) in RANK and (k == 2 or len(parts) <= 2):
            return RANK[".".join(parts[:k])]
    return None


def walk(call) -> tuple[list[str], list[str]]:
    """``(modules visited in order, calls climbing back up)`` while ``call()`` runs."""
    visited: list[str] = []
    climbs: list[str] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        if rank(callee) is None:
            return
        if not visited or visited[-1] != callee:
            visited.append(callee)
        back = frame.f_back
        caller = back.f_globals.get("__name__", "") if back is not None else ""
        rc, re = rank(caller), rank(callee)
        code = frame.f_code
        handed = "<locals>" in code.co_qualname or code.co_name == "<lambda>"
        if rc is not None and re > rc and not handed:
            climbs.append(f"{caller}:{back.f_lineno} -> {callee}.{code.co_qualname}")

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return visited, climbs


def walks() -> None:
    import jax
    import numpy as np

    import jaxsubset

    x = np.sort(np.random.default_rng(0).uniform(0, 100, 2000))
    y = np.random.default_rng(1).normal(size=2000)
    lo = np.linspace(0, 90, 7)
    cases = {
        "select (eager)": lambda: jaxsubset.select(x, y, lo, lo + 5.0, capacity=256),
        "select (jit)": lambda: jax.jit(
            lambda a, b: jaxsubset.select(a, b, lo, lo + 5.0, capacity=256)
        )(x, y),
        "rolling_statistic (eager)": lambda: jaxsubset.rolling_statistic(x, y, 3.0, "mean"),
        "rolling_statistic (jit)": lambda: jax.jit(
            lambda a, b: jaxsubset.rolling_statistic(a, b, 3.0, "mean")
        )(x, y),
    }
    for name, call in cases.items():
        visited, climbs = walk(call)
        mods = sorted(set(visited))
        print(f"walk of {name}: {len(mods)} modules, {len(visited)} visits, {len(climbs)} climbs")
        for c in dict.fromkeys(climbs):
            print(f"  climb: {c}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every cross-package import")
    parser.add_argument("--literal", action="store_true", help="count private packages too")
    parser.add_argument("--strict", action="store_true", help="exit 1 over a limit")
    parser.add_argument("--walk", action="store_true", help="trace select / rolling_statistic")
    args = parser.parse_args()
    sizes = {n: len(p.read_text().splitlines()) for n, p in modules().items()}
    big = {n: s for n, s in sizes.items() if s > MAX_MODULE}
    print(f"modules over {MAX_MODULE} lines: {len(big)}")
    for n, s in sorted(big.items(), key=lambda t: -t[1]):
        print(f"  {s:5d}  {n}")
    long = {n: c for n, c in public_functions().items() if c > MAX_FUNCTION}
    print(f"public functions over {MAX_FUNCTION} lines of code: {len(long)}")
    for n, c in sorted(long.items(), key=lambda t: -t[1]):
        print(f"  {c:5d}  {n}")
    pairs, underscored = cross_imports(args.literal)
    print(f"private names imported across packages (distinct module, name): {len(pairs)}")
    per = collections.Counter(m for m, _ in pairs)
    for m, c in per.most_common():
        print(f"  {c:4d}  {m}")
        if args.list:
            print("        " + ", ".join(sorted(a for t, a in pairs if t == m)))
    print(f"underscore names imported across packages: {len(underscored)}")
    for u in underscored:
        print(f"  {u}")
    fk = forks()
    print(f"is_traced( forks outside {', '.join(FORKS_ALLOWED)}: {sum(fk.values())}")
    for f, c in fk.items():
        print(f"  {c:4d}  {f}")
    pk = private_keywords()
    print(f"private keywords in public signatures: {len(pk)}")
    for k in pk:
        print(f"  {k}")
    if args.walk:
        walks()
    over = big or long or len(pairs) >= 10 or underscored or fk or pk
    return 1 if args.strict and over else 0


if __name__ == "__main__":
    sys.exit(main())
