"""Every public name imports, is documented, and carries a runnable example."""

import inspect

import jaxsubset


PUBLIC = sorted(n for n in dir(jaxsubset) if not n.startswith("_"))


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
            assert obj.__doc__, name
            for sub in obj.__all__:
                assert "Example" in (getattr(obj, sub).__doc__ or ""), f"{name}.{sub}"
            continue
        doc = inspect.getdoc(obj) or ""
        assert doc.strip(), f"{name} has no docstring"
        if callable(obj):
            assert "Example" in doc, f"{name} has no example"


def test_subsets_methods_are_documented():
    for name, member in inspect.getmembers(jaxsubset.Subsets):
        if not name.startswith("_") and (callable(member) or isinstance(member, property)):
            assert (member.__doc__ or "").strip(), name


def test_py_typed_ships():
    import pathlib

    assert (pathlib.Path(jaxsubset.__file__).parent / "py.typed").exists()
