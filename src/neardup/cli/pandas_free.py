"""A command that never hands pyarrow a DataFrame runs without pandas.

pyarrow imports pandas on its first conversion (``pa.array``, ``to_numpy``: to recognise pandas
objects and types), whether or not any is in sight: 0.5 CPU s and 45 MB of a one-document
``dedup`` here. Inside :func:`without_pandas` an import of pandas fails as if it were not
installed, so pyarrow takes its pandas-free paths (the same arrays and files). pyarrow keeps
that answer for the rest of the process: use it in a command's process only, never in the
library, whose caller may hand it a DataFrame.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["without_pandas"]


class _NoPandas:
    """A meta path finder that refuses pandas and its submodules."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (a neardup command runs "
                                      "without pandas)", name=name)
        return None


@contextmanager
def without_pandas() -> Iterator[None]:
    """Inside, pandas cannot be imported (unless it already was: then nothing changes)."""
    if "pandas" in sys.modules:
        yield
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
