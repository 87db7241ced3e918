"""What Spark retried during a run: failed task attempts, stages run again, executors lost.

Read from the driver's own status store at the end of the run, the store Spark's UI and REST
API serve (it is kept with the UI disabled too):

- tasks and stages through PySpark's public status tracker
  (:meth:`pyspark.SparkContext.statusTracker`): for every job the driver still holds (Spark
  keeps the last ``spark.ui.retainedJobs``, 1,000 by default), each stage's failed tasks
  (``numFailedTasks``: its latest attempt's tasks that failed, those lost with an executor
  included) and whether the stage ran again (``currentAttemptId`` above 0: Spark resubmits a
  stage whose shuffle files went with a lost executor);
- executors through the store's executor list (``AppStatusStore.executorList``, the list the
  REST API's ``/allexecutors`` returns): the ones no longer active, with Spark's reason (an
  executor SIGKILLed is ``Command exited with code 137``).

A task retried successfully changes nothing in the outputs (every task writes its files under
a temporary name and renames them); the report says what the run survived.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = ["RetryWatch"]


def _jobs(context: SparkContext) -> set[int]:
    return set(context.statusTracker().getJobIdsForGroup(None))


def _stages(context: SparkContext, jobs: set[int]) -> dict[str, int]:
    tracker = context.statusTracker()
    stages: set[int] = set()
    for job in jobs:
        info = tracker.getJobInfo(job)
        if info is not None:
            stages.update(info.stageIds)
    failed = retried = 0
    for stage in stages:
        found = tracker.getStageInfo(stage)
        if found is not None:
            failed += found.numFailedTasks
            retried += int(found.currentAttemptId > 0)
    return {"failed_tasks": failed, "stages_run_again": retried, "stages": len(stages)}


def _lost_executors(context: SparkContext) -> dict[str, str]:
    """Executor id -> Spark's reason, for every executor removed so far."""
    store = context._jsc.sc().statusStore()
    found = store.executorList(False).iterator()  # the active ones and the removed ones
    lost = {}
    while found.hasNext():
        executor = found.next()
        if not executor.isActive() and executor.id() != "driver":
            reason = executor.removeReason()
            lost[str(executor.id())] = str(reason.get()) if reason.isDefined() else "unknown"
    return lost


class RetryWatch:
    """What Spark retried in the jobs run since this watch was made (a session may serve
    several runs)."""

    def __init__(self, context: SparkContext) -> None:
        self.context = context
        self.jobs = _jobs(context)
        self.lost = set(_lost_executors(context))

    def report(self) -> dict[str, Any]:
        """Failed task attempts, stages run again and executors lost since the watch began."""
        lost = {key: reason for key, reason in _lost_executors(self.context).items()
                if key not in self.lost}
        return {**_stages(self.context, _jobs(self.context) - self.jobs),
                "executors_lost": len(lost),
                "lost": [{"id": key, "reason": reason} for key, reason in sorted(lost.items())]}
