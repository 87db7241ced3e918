"""``neardup serve`` with reader processes: throughput and latency against the reader count,
measured in the same run on the same store.

1. Build (or reuse, ``--store``) a store of N documents with ``neardup index`` (100-word texts).
2. For each reader count (``--readers 0,1,2``): start ``neardup serve --readers R`` on a
   loopback port; C concurrent clients (asyncio, keep-alive connections, in processes of their
   own) send 90% queries (the text of stored document dN: the answer must hold dN at distance
   0, else it is counted wrong) and 10% adds, bounded by ``--duration`` seconds and
   ``--max-requests``; then stop the server.

    python benchmarks/service_readers.py [--documents 100000] [--clients 100] [--duration 20]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import RESULTS_DIR, environment, markdown_table, write_results
from service_load import TOKEN, build_store, load_in_processes, start_server, summary


def measure(store: Path, token_file: Path, readers: int, args: argparse.Namespace,
            stored: int) -> dict[str, Any]:
    server, port, startup = start_server(store, token_file, "--readers", str(readers))
    try:
        time.sleep(args.settle)                        # the readers map the store
        tally = load_in_processes(port, args.clients, args.client_processes, stored,
                                  args.duration, args.max_requests)
        result = summary(tally)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return {"readers": readers, "start_seconds": round(startup, 2), **result}


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    results: dict[str, Any] = {"environment": environment(["fastapi", "uvicorn"]),
                               "command": " ".join(sys.argv), "clients": args.clients}
    store = args.store or work / "store"
    if not (store / "manifest.json").exists():
        results["build"] = build_store(store, args.documents)
    token_file = work / "token"
    token_file.write_text(TOKEN)
    server, port, _ = start_server(store, token_file)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/healthz")
    with urllib.request.urlopen(request) as answer:
        results["stored"] = json.loads(answer.read())["documents"]
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    stored = min(results["stored"], args.documents)
    results["runs"] = [measure(store, token_file, int(readers), args, stored)
                       for readers in args.readers.split(",")]
    return results


def table(results: dict[str, Any]) -> str:
    base = results["runs"][0]["requests_per_second"]
    rows = [[run["readers"], f"{run['requests']:,} in {run['seconds']} s",
             f"{run['requests_per_second']:,}", f"{run['requests_per_second'] / base:.2f}",
             f"{run['query'].get('p50_ms')} / {run['query'].get('p99_ms')}",
             f"{run['add'].get('p50_ms')} / {run['add'].get('p99_ms')}",
             sum(run["errors"].values()), run["wrong_answers"]] for run in results["runs"]]
    return markdown_table(["readers", "requests", "req/s", "vs first", "query p50 / p99 ms",
                           "add p50 / p99 ms", "errors", "wrong"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--store", type=Path, default=None,
                        help="Reuse this store (built with --documents if absent).")
    parser.add_argument("--readers", default="0,1,2",
                        help="Reader counts to measure, comma-separated (the first is the "
                             "reference).")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--client-processes", type=int, default=1,
                        help="Processes the clients are dealt over (their own, not the "
                             "server's).")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--settle", type=float, default=3.0,
                        help="Seconds between the server answering and the load.")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="neardup-service-readers-"))
    try:
        results = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_results(RESULTS_DIR / "service_readers.json", results, table(results))


if __name__ == "__main__":
    main()
