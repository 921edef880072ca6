"""A griffe extension (mkdocs.yml, mkdocstrings' `extensions`): the docstrings' Sphinx roles
(``:func:`select```, ``:class:`Subsets```, ...) become Markdown links to their API entries,
and their ``Example:`` sections render as examples (the doctests as code).

The docstrings serve ``help()``, doctests and this site; ``help()`` reads the roles as plain
text, and Markdown would print the role's name, so the roles are rewritten here, when the
docs are built, instead of in the source. A name without an API entry (a private helper)
becomes inline code; a link to an entry that does not exist would fail the strict build.
"""

import re
from typing import Any

import griffe


ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`~?([^`]+)`")
EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class SphinxRoles(griffe.Extension):
    """Rewrite the roles of every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path != "jaxsubset":
            return
        known = documented(pkg)
        for obj in walk(pkg):
            if obj.docstring is not None:
                context = obj.path if obj.is_class else obj.parent.path if obj.parent else ""
                text = ROLE.sub(
                    lambda m, c=context: link(m.group(1), c, known), obj.docstring.value
                )
                # the docstrings' "Example:" is Google style's examples section (doctests):
                # griffe reads only the plural as one, and renders its ``>>>`` lines as code
                obj.docstring.value = EXAMPLE.sub(r"\1Examples:", text)


def documented(pkg: griffe.Module) -> set[str]:
    """The identifiers the API pages render: the package's and `ranges`' exports, and the
    public members of the classes among them."""
    known = {"jaxsubset.ranges", "jaxsubset.cli.main"}
    for module in (pkg, pkg["ranges"]):
        for name in module.exports or ():
            path = f"{module.path}.{name}"
            known.add(path)
            target = module[name].final_target if module[name].is_alias else module[name]
            if target.is_class:
                known.update(f"{path}.{m}" for m in target.members if not m.startswith("_"))
    return known


def walk(obj: griffe.Object) -> Any:
    yield obj
    for member in obj.members.values():
        if not member.is_alias and (member.is_module or member.is_class or member.is_function):
            yield from walk(member)
        elif not member.is_alias:
            yield member


def link(name: str, context: str, known: set[str]) -> str:
    """``[`name`][identifier]`` for a documented name, else `` `name` ``."""
    bare = name.removesuffix("()")
    short = bare.removeprefix("jaxsubset.")
    for candidate in (
        bare,
        f"jaxsubset.{short}",
        f"{context}.{short}",
        f"jaxsubset.Subsets.{short}",
    ):
        if candidate in known:
            return f"[`{bare}`][{candidate}]"
    return f"`{bare}`"
