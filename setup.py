"""The one build step pyproject.toml cannot declare: the optional compiled merge loop.

`optional=True`: without a C compiler (or Python's headers) the install still succeeds, and
training uses the pure-Python merge loop (tokexplorer.core.bpe_training says which one runs).
For a source checkout: `python setup.py build_ext --inplace`.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("tokexplorer.core._merge", ["tokexplorer/core/_merge.c"], optional=True)])
