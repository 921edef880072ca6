"""The documentation: the site builds with warnings as errors, every public name has an API
entry, the gallery's figures are drawn, and the README's and the pages' code blocks run.

The site build (``mkdocs build --strict``, which also runs every script in ``examples/`` for
the gallery, and the demo) runs once per session, in a subprocess, and is skipped with its
reason when the documentation tools (the ``docs`` extra, part of ``test``) are missing. The
coverage check reads the API pages' ``::: name`` entries and the built site's inventory, as
optax's ``docs/ext/coverage_check.py`` fails its build on an undocumented name.
"""

import importlib.util
import os
import pathlib
import pydoc
import re
import subprocess
import sys
import zlib

import jax
import pytest

import jaxsubset


ROOT = pathlib.Path(__file__).parents[1]
DOCS = ROOT / "docs"
PUBLIC = {f"jaxsubset.{n}" for n in jaxsubset.__all__} | {
    f"jaxsubset.ranges.{n}" for n in jaxsubset.ranges.__all__
}
ENTRY = re.compile(r"^::: (\S+)$", re.MULTILINE)
# a ```python block, optionally preceded by <!-- not run: REASON --> on the line before it
BLOCK = re.compile(
    r"^(?:<!-- not run: (?P<reason>[^>]*) -->\n)?```python\n(?P<code>.*?)^```", re.S | re.M
)
PAGES = sorted(DOCS.rglob("*.md"))
# the README and the pages that hold python code (the API pages' code is in the docstrings,
# run as doctests)
CODE_PAGES = [p for p in [ROOT / "README.md", *PAGES] if "```python" in p.read_text()]


def _missing_tools() -> str | None:
    for module, package in (
        ("mkdocs", "mkdocs"),
        ("material", "mkdocs-material"),
        ("mkdocstrings_handlers.python", "mkdocstrings[python]"),
    ):
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"{package} is not installed (pip install -e '.[docs]')"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built with ``mkdocs build --strict`` into a temporary folder."""
    if reason := _missing_tools():
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, MPLBACKEND="Agg", NO_MKDOCS_2_WARNING="1")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stdout[-3000:]}{r.stderr[-6000:]}"
    return out


def _inventory(site: pathlib.Path) -> set[str]:
    """The identifiers in the site's Sphinx inventory (``objects.inv``: four header lines,
    then zlib-compressed lines ``name domain:role priority uri dispname``)."""
    raw = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    lines = zlib.decompress(raw[header_end:]).decode().splitlines()
    return {line.split(" ", 1)[0] for line in lines if line}


@pytest.mark.one_mode  # the site does not depend on the JAX mode of the test process
def test_site_builds_strict_with_every_public_name_and_the_gallery(site):
    inventory = _inventory(site)
    assert PUBLIC <= inventory, f"public names without an API entry: {sorted(PUBLIC - inventory)}"
    # the gallery: one figure per example script (drawn at build time), and the demo's
    for script in sorted((ROOT / "examples").glob("*.py")):
        png = site / "gallery" / script.stem / f"{script.stem}.png"
        assert png.is_file() and png.stat().st_size > 10_000, png
    assert (site / "gallery" / "demo" / "overview.png").is_file()
    gallery = (site / "gallery" / "index.html").read_text()
    assert "compilations of the master function: 1" in gallery  # the example's real output
    # the docstrings' Sphinx roles became links, their examples code
    api = (site / "api" / "subsets" / "index.html").read_text()
    assert ":class:" not in api and ":func:" not in api
    assert 'href="#jaxsubset.Subsets"' in api
    # the command's options come from its own parser
    command = (site / "guide" / "command" / "index.html").read_text()
    assert "usage: jaxsubset stats" in command and "--nan-policy" in command


def test_every_public_name_has_an_entry_in_the_api_pages():
    """The pages list every public name (and nothing that is not a public name or the
    documented extras), without building the site."""
    entries: dict[str, str] = {}
    for page in sorted((DOCS / "api").glob("*.md")):
        for name in ENTRY.findall(page.read_text()):
            assert name not in entries, f"{name} in both {entries[name]} and {page.name}"
            entries[name] = page.name
    missing = PUBLIC - set(entries)
    assert not missing, f"public names without a `::: name` entry in docs/api/: {sorted(missing)}"
    extra = set(entries) - PUBLIC - {"jaxsubset.ranges", "jaxsubset.cli.main"}
    assert not extra, f"entries that are not public names: {sorted(extra)}"


def test_mkdocs_nav_lists_every_page():
    """Every page is in the navigation (mkdocs only reports the others at info level)."""
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        rel = page.relative_to(DOCS).as_posix()
        assert rel in nav, f"{rel} is not in mkdocs.yml's nav"


def _run_blocks(path: pathlib.Path) -> int:
    """Run the page's ``python`` blocks in order in one namespace; the JAX mode is restored
    afterwards (a page about dates switches 64-bit mode on, as its readers would)."""
    text = path.read_text()
    namespace: dict = {"__name__": f"docs_{path.stem}"}
    x64 = jax.config.read("jax_enable_x64")
    ran = 0
    try:
        for m in BLOCK.finditer(text):
            if m.group("reason") is not None:
                assert m.group("reason").strip(), f"{path.name}: a `not run` block needs a reason"
                continue
            line = text[: m.start("code")].count("\n")
            code = compile("\n" * line + m.group("code"), str(path), "exec")
            exec(code, namespace)  # noqa: S102 - the documentation's own examples
            ran += 1
    finally:
        jax.config.update("jax_enable_x64", x64)
    return ran


@pytest.mark.parametrize("path", CODE_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block that writes a file writes it here
    assert _run_blocks(path) >= 1


def test_the_answer_and_the_guide_hold_code():
    names = {p.relative_to(ROOT).as_posix() for p in CODE_PAGES}
    assert {"README.md", "docs/quick-answer.md", "docs/guide/subsets.md"} <= names


def test_readme_is_short_and_answers_first():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    first = BLOCK.search(readme)
    assert first and readme.index("```python") < readme.index("## What else it does")
    assert "jaxsubset.isolate(" in first.group("code") and "jaxsubset.nearest(" in first.group(
        "code"
    )
    assert "@jax.jit" in first.group("code")
    # the two set-up commands, exactly as .ci/run runs the second
    assert 'pip install ".[plot]" && jaxsubset demo --out demo-out' in readme
    test_command = (
        'pip install -e ".[test]" && python -m pytest && JAX_ENABLE_X64=0 python -m pytest'
    )
    assert test_command in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in ci and "JAX_ENABLE_X64=0 python -m pytest" in ci
    # every link into the docs resolves
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).exists(), target


def test_statistics_page_names_every_statistic():
    text = (DOCS / "guide" / "statistics.md").read_text()
    for name in (*jaxsubset.STATISTICS, "cov", "corr"):
        assert re.search(rf"\b{name}\b", text), name
    for convention in ("ddof=0", "nan_policy", "min_periods", "an empty subset gives NaN"):
        assert convention in text, convention


def test_quick_answer_names_the_errors_people_search_for():
    text = (DOCS / "quick-answer.md").read_text()
    for error in (
        "TracerArrayConversionError",
        "Slice entries must be static integers",
        "slice indices must have static",
        "ConcretizationTypeError",
        "NonConcreteBooleanIndexError",
        "jnp.where(mask, size=L)",
        "dynamic_slice",
    ):
        assert error in text, error


@pytest.mark.one_mode
def test_help_shows_a_function_index():
    """``help(jaxsubset)`` opens with the public functions, before pydoc's list of the
    package's (private) modules."""
    text = pydoc.render_doc(jaxsubset, renderer=pydoc.plaintext)
    description = text[: text.index("PACKAGE CONTENTS")]
    for name in jaxsubset.__all__:
        if name != "ranges":
            assert re.search(rf"\b{name}\b", description), name
    assert "jaxsubset.ranges" in description
