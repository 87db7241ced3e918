"""An output folder belongs to one run: a new run replaces every table of the previous one.

A ``dedup`` run writes its tables (``documents``, ``pairs``, ``clusters``, and ``links``,
``growth`` when asked) and ``summary.json`` into ``--out``. Before it writes, :func:`claim_output`
makes the folder its own:

- an absent or empty folder is used as it is;
- a folder holding a previous run (its ``summary.json`` or its work directory) has all of that
  run's tables removed, in both formats, so that no table of another run (a ``links`` table of a
  run with ``--links``) is left beside the new ones;
- a folder holding anything else is refused, naming a few of its files, unless ``force`` is
  given: then the run's tables are replaced and the other files are left alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from neardup.errors import OutputError

__all__ = ["RUN_FILES", "RUN_TABLES", "WORK_DIR", "claim_output", "is_run_folder"]

RUN_TABLES = ("documents", "pairs", "clusters", "links", "growth")
"""Every table a ``dedup`` run may write (``growth``: ``--method shingle-paragraphs``)."""

RUN_FILES = (*(f"{name}.{fmt}" for name in RUN_TABLES for fmt in ("parquet", "jsonl")),
             "summary.json")

WORK_DIR = ".neardup-work"
"""The work directory's name inside ``--out`` when ``--work`` is not given."""


def is_run_folder(out: Path) -> bool:
    """True when ``out`` holds the outputs or the work directory of a ``dedup`` run."""
    if (out / WORK_DIR / "identity.json").exists():
        return True
    try:
        summary = json.loads((out / "summary.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and "sources" in summary and "documents" in summary


def _foreign(out: Path) -> list[str]:
    return sorted(entry.name for entry in out.iterdir()
                  if entry.name not in RUN_FILES and entry.name != WORK_DIR
                  and not entry.name.endswith(".tmp"))


def claim_output(out: Path, *, force: bool = False) -> list[Path]:
    """Make ``out`` this run's (see the module docstring); returns the files removed."""
    try:
        if out.exists() and not out.is_dir():
            raise OutputError(f"{out}: is a file, not a folder; choose another --out")
        if not out.exists() or not any(out.iterdir()):
            return []
        if not force and not is_run_folder(out):
            others = _foreign(out)
            if others:
                shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
                raise OutputError(f"{out}: holds files that are not a neardup run's ({shown}); "
                                  "choose a new or empty --out, or add --force to write the "
                                  "tables there anyway")
        removed = []
        for name in RUN_FILES:
            path = out / name
            if path.is_file():
                path.unlink()
                removed.append(path)
        return removed
    except OSError as err:
        raise OutputError(f"{out}: cannot prepare the output folder "
                          f"({err.strerror or err})") from err
