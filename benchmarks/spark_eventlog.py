"""Where a Spark run's wall goes, read from Spark's own event log.

A ``dedup --engine spark`` run with ``spark.eventLog.enabled`` writes one JSON event per line
(Spark's listener bus: the application's start and end, each executor added, each job, stage and
task with its metrics). :func:`split` turns that log, the process's own start and end (taken by
the caller) and the run's ``summary.json`` into the split of its wall time:

- ``before_context``: process start to the SparkContext's start (Python imports, the driver JVM
  launched by ``spark-submit``, the context built);
- ``executors``: the context's start to the last executor registered (standalone: the workers
  start executor JVMs; ``local``: none);
- ``before_engine``: the context's start to the engine's start (session settings, inputs);
- ``jobs``: the union of the intervals of the Spark jobs (submission to completion), and their
  count, the stages and tasks they ran, and per stage kind the tasks' summed run, deserialise
  and result-serialise times;
- ``driver_in_engine``: the engine's seconds when no Spark job ran (the stages on the driver);
- ``after_engine``: the engine's end to the application's end (``session.stop()`` called) and
  from there to the process's exit (the JVM stopped, the interpreter ended).

The engine's start and end come from ``summary.json``: its modification time is the engine's
end (it is written last), minus its ``seconds.total``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["split"]


def _events(folder: Path) -> Iterator[dict[str, Any]]:
    logs = sorted(path for path in folder.rglob("*") if path.is_file())
    if len(logs) != 1:
        raise SystemExit(f"{folder}: expected one event log, found {len(logs)}")
    with open(logs[0]) as lines:
        for line in lines:
            yield json.loads(line)


def _union(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by the union of ``intervals``."""
    covered, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            covered += stop - max(start, end)
            end = stop
    return covered


class _Log:
    """The facts :func:`split` needs, gathered from the events (times in seconds)."""

    def __init__(self, folder: Path) -> None:
        self.app_start = self.app_end = 0.0
        self.executors: list[float] = []
        self.jobs: dict[int, dict[str, Any]] = {}
        self.stages: dict[int, dict[str, Any]] = {}
        for event in _events(folder):
            self._take(event)

    def _take(self, event: dict[str, Any]) -> None:
        kind = event["Event"]
        if kind == "SparkListenerApplicationStart":
            self.app_start = event["Timestamp"] / 1e3
        elif kind == "SparkListenerApplicationEnd":
            self.app_end = event["Timestamp"] / 1e3
        elif kind == "SparkListenerExecutorAdded":
            self.executors.append(event["Timestamp"] / 1e3)
        elif kind == "SparkListenerJobStart":
            self.jobs[event["Job ID"]] = {"start": event["Submission Time"] / 1e3,
                                          "stages": event["Stage IDs"]}
        elif kind == "SparkListenerJobEnd":
            self.jobs[event["Job ID"]]["end"] = event["Completion Time"] / 1e3
        elif kind == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            self.stages.setdefault(info["Stage ID"], _stage())["name"] = info["Stage Name"]
            self.stages[info["Stage ID"]]["wall"] = (info["Completion Time"]
                                                     - info["Submission Time"]) / 1e3
        elif kind == "SparkListenerTaskEnd":
            self._task(event)

    def _task(self, event: dict[str, Any]) -> None:
        stage = self.stages.setdefault(event["Stage ID"], _stage())
        metrics = event.get("Task Metrics") or {}
        info = event["Task Info"]
        stage["tasks"] += 1
        stage["task_wall"] += (info["Finish Time"] - info["Launch Time"]) / 1e3
        stage["run"] += metrics.get("Executor Run Time", 0) / 1e3
        stage["deserialize"] += metrics.get("Executor Deserialize Time", 0) / 1e3
        stage["serialize"] += metrics.get("Result Serialization Time", 0) / 1e3
        stage["gc"] += metrics.get("JVM GC Time", 0) / 1e3
        stage["failed"] += int(info.get("Failed", False))


def _stage() -> dict[str, Any]:
    return {"name": "", "wall": 0.0, "tasks": 0, "task_wall": 0.0, "run": 0.0,
            "deserialize": 0.0, "serialize": 0.0, "gc": 0.0, "failed": 0}


def _stage_kinds(stages: dict[int, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The stages summed per name (``collect at ...``, ``groupByKey at ...``)."""
    kinds: dict[str, dict[str, Any]] = {}
    for stage in stages.values():
        name = stage["name"].split(" at ")[0] + " at " + stage["name"].rsplit("/", 1)[-1]
        kind = kinds.setdefault(name, {key: 0 for key in _stage() if key != "name"})
        kind["stages"] = kind.get("stages", 0) + 1
        for key, value in stage.items():
            if key != "name":
                kind[key] += value
    return {name: {key: round(value, 3) for key, value in kind.items()}
            for name, kind in kinds.items()}


def split(events: Path, launched: float, exited: float, summary: Path) -> dict[str, Any]:
    """The split of a run's wall (process ``launched`` to ``exited``, epoch seconds) from its
    event log folder ``events`` and its ``summary.json``."""
    log = _Log(events)
    total = json.loads(summary.read_text())["seconds"]["total"]
    engine_end = summary.stat().st_mtime
    engine_start = engine_end - total
    spans = [(job["start"], job["end"]) for job in log.jobs.values() if "end" in job]
    inside = [(max(a, engine_start), min(b, engine_end)) for a, b in spans]
    jobs = _union(spans)
    return {
        "wall": round(exited - launched, 3),
        "before_context": round(log.app_start - launched, 3),
        "executors": round(max(log.executors, default=log.app_start) - log.app_start, 3),
        "before_engine": round(engine_start - log.app_start, 3),
        "engine": round(total, 3),
        "jobs": {"count": len(log.jobs), "stages": len(log.stages),
                 "tasks": sum(stage["tasks"] for stage in log.stages.values()),
                 "seconds": round(jobs, 3)},
        "driver_in_engine": round(total - _union([s for s in inside if s[1] > s[0]]), 3),
        "engine_end_to_stop": round(log.app_end - engine_end, 3),
        "stop_to_exit": round(exited - log.app_end, 3),
        "stage_kinds": _stage_kinds(log.stages),
    }
