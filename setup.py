"""What pyproject.toml cannot declare: the optional compiled merge loop and chunk count, and the top-level
`resources/` folder installed inside the package.

`optional=True`: without a C compiler (or Python's headers) the install still succeeds, and
training uses the pure-Python merge loop and count (tokexplorer.core.training.bpe says which one runs).
For a source checkout: `python setup.py build_ext --inplace`.

`resources/` (icons, samples, the UDHR texts) sits beside `tokexplorer/` in a checkout and is
installed as `tokexplorer/resources/`; `tokexplorer.core.resources` finds it in either place.
"""

from pathlib import Path

from setuptools import Extension, find_packages, setup

RESOURCES = [str(p.relative_to("resources")) for p in Path("resources").rglob("*") if p.is_file()]

setup(
    packages=[*find_packages(include=["tokexplorer", "tokexplorer.*"]), "tokexplorer.resources"],
    package_dir={"tokexplorer.resources": "resources"},
    package_data={"tokexplorer.resources": RESOURCES},
    ext_modules=[Extension(f"tokexplorer.core.training.{name}", [f"tokexplorer/core/training/{name}.c"],
                           optional=True) for name in ("_merge", "_count")],
)
