"""mkdocs hooks (mkdocs.yml `hooks:`): what the site shows is computed when it is built.

- The gallery (``gallery.md``): every script in ``examples/`` runs (its ``main(out_dir)``),
  and its figure, its printed output and its source replace the page's
  ``<!-- gallery: NAME -->`` marker; ``jaxsubset demo`` runs too (``<!-- gallery: demo -->``).
  An example that fails, or one without a marker (or a marker without an example), fails the
  build, so the gallery can neither go stale nor miss a script.
- ``<!-- help: COMMAND -->`` becomes the ``--help`` text of ``jaxsubset COMMAND``, so the
  command's page always shows its real options.

The figures are drawn with matplotlib's Agg canvas into a temporary folder and added to the
site as generated files: nothing is written into ``docs/``, and the repository holds no PNGs.
"""

import contextlib
import io
import os
import pathlib
import re
import runpy
import sys
import tempfile
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files


ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MARKER = re.compile(r"^<!-- (gallery|help): ([a-z_]+) -->$", re.MULTILINE)
OUTPUTS: dict[str, str] = {}  # example name -> what it printed
FIGURES: dict[str, list[str]] = {}  # example name -> its figures' site paths


def on_startup(**kwargs: Any) -> None:
    # the checkout's package, as mkdocstrings reads it (`paths: [src]`), not an installed one
    sys.path.insert(0, str(ROOT / "src"))
    os.environ.setdefault("MPLBACKEND", "Agg")


def on_files(files: Files, config: Any) -> Files:
    """Run every example and the demo; add their figures to the site."""
    with tempfile.TemporaryDirectory(prefix="jaxsubset-gallery-") as tmp:
        for script in sorted(EXAMPLES.glob("*.py")):
            name = script.stem
            out = pathlib.Path(tmp, name)
            OUTPUTS[name] = run_quietly(lambda s=script, o=out: run_example(s, o), name)
            add_figures(files, config, name, out)
        out = pathlib.Path(tmp, "demo")
        OUTPUTS["demo"] = run_quietly(lambda o=out: run_demo(o), "jaxsubset demo")
        add_figures(files, config, "demo", out, only=("overview.png", "subset_3.png"))
    return files


def run_quietly(fn: Any, what: str) -> str:
    """``fn()``'s printed output; the JAX mode as it was before (an example may set it)."""
    import jax

    x64 = jax.config.read("jax_enable_x64")
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            fn()
    except Exception as e:
        raise PluginError(f"gallery: {what} failed: {type(e).__name__}: {e}") from e
    finally:
        jax.config.update("jax_enable_x64", x64)
    return buffer.getvalue()


def run_example(script: pathlib.Path, out: pathlib.Path) -> None:
    namespace = runpy.run_path(str(script), run_name=f"gallery_{script.stem}")
    namespace["main"](str(out))


def run_demo(out: pathlib.Path) -> None:
    from jaxsubset.cli import main

    status = main(["demo", "--out", str(out), "--no-cache"])
    if status != 0:
        raise RuntimeError(f"exit status {status}")


def add_figures(files: Files, config: Any, name: str, out: pathlib.Path, only: Any = None) -> None:
    pngs = sorted(out.glob("*.png")) if out.is_dir() else []
    if only is not None:
        pngs = [p for p in pngs if p.name in only]
    if not pngs:
        raise PluginError(f"gallery: {name} drew no figure")
    FIGURES[name] = []
    for png in pngs:
        uri = f"gallery/{name}/{png.name}"
        files.append(File.generated(config, uri, content=png.read_bytes()))
        FIGURES[name].append(uri)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri == "gallery.md":
        named = set(marker_names(markdown, "gallery"))
        missing, unknown = set(OUTPUTS) - named, named - set(OUTPUTS)
        if missing or unknown:
            raise PluginError(
                f"gallery.md: examples without a `<!-- gallery: NAME -->` entry: "
                f"{sorted(missing)}; entries without an example: {sorted(unknown)}"
            )
    return MARKER.sub(lambda m: expand(m.group(1), m.group(2), page), markdown)


def marker_names(markdown: str, kind: str) -> list[str]:
    return [m.group(2) for m in MARKER.finditer(markdown) if m.group(1) == kind]


def expand(kind: str, name: str, page: Any) -> str:
    if kind == "help":
        return fenced("text", command_help(name))
    depth = page.file.src_uri.count("/")
    prefix = "../" * depth
    figures = "\n\n".join(f"![{name}]({prefix}{uri})" for uri in FIGURES[name])
    if name == "demo":
        return f"{figures}\n\n" + fenced("text", "$ jaxsubset demo\n" + OUTPUTS[name])
    source = (EXAMPLES / f"{name}.py").read_text()
    return "\n\n".join(
        [
            figures,
            fenced("text", f"$ python examples/{name}.py OUT_DIR\n{OUTPUTS[name]}"),
            f'??? example "The script: examples/{name}.py"\n\n' + indent(fenced("python", source)),
        ]
    )


def command_help(command: str) -> str:
    from jaxsubset.cli import main

    buffer = io.StringIO()
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "96"  # argparse wraps to the terminal: the same text everywhere
    try:
        with contextlib.redirect_stdout(buffer):
            main([command, "--help"])
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    text = buffer.getvalue()
    if not text.strip():
        raise PluginError(f"jaxsubset {command} --help printed nothing")
    return f"$ jaxsubset {command} --help\n{text}"


def fenced(language: str, text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def indent(text: str) -> str:
    return "\n".join(("    " + line) if line.strip() else "" for line in text.splitlines())
