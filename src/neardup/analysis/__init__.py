"""Replication analysis over ``dedup`` outputs and the report that shows it.

Pure functions over arrays, one measurement per module: :mod:`.replication` (replicas per
document, cluster sizes), :mod:`.servers` (replicated collections, mirrored servers),
:mod:`.savings` (crawl savings), :mod:`.webgraph` (link graph, crawl simulator), :mod:`.growth`
(growth per iteration), :mod:`.distribution` (simhash distribution). :mod:`.dedupdir` reads a
dedup output directory, :mod:`.report` and :mod:`.sections` build the report model
(:mod:`.model`), :mod:`.render` writes it as HTML (figures from :mod:`.figures`) and JSON.
"""

from neardup.analysis.dedupdir import DedupRun, read_dedup_dir
from neardup.analysis.model import Report
from neardup.analysis.report import build_report

__all__ = ["DedupRun", "Report", "build_report", "read_dedup_dir"]
