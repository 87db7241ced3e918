"""``neardup serve`` under load (issue 29's target), then killed under load.

1. Build (or reuse, ``--store``) a store of N documents with ``neardup index`` (100-word texts).
2. Start ``neardup serve --readers R`` on a loopback port, let it warm up, then measure
   ``--runs`` times: C concurrent clients (asyncio, keep-alive HTTP/1.1 connections), spread
   over ``--client-processes`` processes of their own (their CPU is reported beside the
   server's), send 90% queries (the text of stored document dN: an answer without dN at
   distance 0 counts as wrong) and 10% adds (new documents), for ``--duration`` seconds:
   errors, wrong answers, p50/p99 latency, queries/s and requests/s. The machine's load
   average is read before and after each run. The result quotes the median of the runs.
   Requests are made before the clock starts. ``--rate R`` makes it an open loop: R
   requests/s offered over all clients, each at an even pace, and a request's latency counts
   from when it was due (so a server that falls behind is charged its queue); without it each
   client sends as soon as it has its answer (a closed loop: C / throughput is then the mean
   latency, so it measures the most a server answers, not its latency at a given load).
3. Load again, SIGKILL the server after ``--kill-after`` seconds (0: skipped), restart it, and
   check that every add that got a 2xx is stored (GET /v1/documents/{id}).

The clients run on the same machine as the server: on 2 cores they take CPU from it.

    python benchmarks/service_load.py --store DIR [--documents 1000000] [--clients 100]
        [--readers 2] [--runs 3] [--duration 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from common import (
    REPO_DIR,
    RESULTS_DIR,
    TreeSampler,
    environment,
    load_average,
    markdown_table,
    write_results,
)

TOKEN = "load-benchmark-token-0123456789"
ADD_SHARE = [0.1]
"""The share of adds among the requests (``--add-share``; issue 29's mix is 10%)."""
WORDS = [f"w{i}" for i in range(20_000)]


CLOSED_PACE = 50
"""Requests per second and client made ahead for a closed loop..."""
PLANNED = 600
"""... and at most this many per client (then the plan's queries come round again)."""


def text_of(number: int) -> str:
    return " ".join(random.Random(number).choices(WORDS, k=100))


def build_store(store: Path, count: int) -> dict[str, float]:
    corpus = store.parent / "corpus.jsonl"
    with corpus.open("w") as out:
        for i in range(count):
            out.write(json.dumps({"id": f"d{i}", "url": f"http://h{i % 1000}.example/{i}",
                                  "text": text_of(i)}) + "\n")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from neardup.cli.main import cli; cli()", "index",
                    str(corpus), "--store", str(store), "--media", "any"], check=True,
                   env={**os.environ, "PYTHONPATH": str(REPO_DIR / "src")},
                   stdout=subprocess.DEVNULL)
    corpus.unlink()
    return {"documents": count, "index_wall_seconds": round(time.perf_counter() - start, 1)}


def _window(args: argparse.Namespace) -> list[str]:
    """``neardup serve``'s query and add window options the run sets."""
    return [*([] if args.query_window_ms is None else ["--query-window-ms",
                                                        str(args.query_window_ms)]),
            *([] if args.add_window_ms is None else ["--add-window-ms",
                                                      str(args.add_window_ms)])]


def start_server(store: Path, token_file: Path,
                 *extra: str) -> tuple[subprocess.Popen[bytes], int, float]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-c", "from neardup.cli.main import cli; cli()", "serve", "--store",
         str(store), "--port", str(port), "--token-file", str(token_file), *extra],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(REPO_DIR / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])})
    while True:
        if server.poll() is not None:
            raise SystemExit("the server died while starting")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                return server, port, time.perf_counter() - started
        except OSError:
            time.sleep(0.2)


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"query": [], "add": []})
    errors: dict[str, int] = field(default_factory=dict)
    acknowledged: list[str] = field(default_factory=list)
    sent: int = 0
    wrong: int = 0
    """Queries (the text of stored document dN) whose answer lacks dN at distance 0."""
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """User + system CPU of the client process(es) while they sent."""

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def merge(self, other: Tally) -> None:
        for kind, values in other.latencies.items():
            self.latencies[kind] += values
        for kind, count in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + count
        self.acknowledged += other.acknowledged
        self.sent += other.sent
        self.wrong += other.wrong
        self.seconds = max(self.seconds, other.seconds)
        self.cpu_seconds += other.cpu_seconds


def _request_bytes(path: str, body: dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(data)}\r\n"
            f"Content-Type: application/json\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
            ).encode() + data


class _Connection(asyncio.Protocol):
    """One keep-alive client connection that sends a request and waits for its whole answer
    (status, body): a protocol, not a stream pair, so that the clients, which share the
    server's cores, spend little CPU per request."""

    def __init__(self) -> None:
        self.transport: Any = None
        self.received = bytearray()
        self.waiting: asyncio.Future[tuple[int, bytes]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport        # uvloop's transports are not asyncio.Transport

    def data_received(self, data: bytes) -> None:
        self.received += data
        answer = self._answer()
        if answer is not None and self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(answer)

    def connection_lost(self, error: Exception | None) -> None:
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_exception(error or ConnectionResetError("connection closed"))

    def _answer(self) -> tuple[int, bytes] | None:
        """The first whole answer received, taken out of the buffer (None if not yet)."""
        end = self.received.find(b"\r\n\r\n")
        if end < 0:
            return None
        lines = bytes(self.received[:end]).split(b"\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if len(self.received) < end + 4 + length:
            return None
        body = bytes(self.received[end + 4:end + 4 + length])
        del self.received[:end + 4 + length]
        return int(lines[0].split()[1]), body

    async def ask(self, request: bytes) -> tuple[int, bytes]:
        assert self.transport is not None
        self.waiting = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.waiting


@dataclass
class _Plan:
    """What one client sends: requests made before the clock starts (query bodies are the
    texts of stored documents; an add's id is unique per client and request)."""

    kinds: list[str]
    ids: list[str]
    requests: list[bytes]

    def at(self, position: int) -> tuple[str, str, bytes]:
        """(kind, id, request) of the request at ``position``: the plan over again once it
        runs out, each add under a new id."""
        index = position % len(self.requests)
        kind, doc_id, request = self.kinds[index], self.ids[index], self.requests[index]
        if kind == "add" and position >= len(self.requests):
            again = f"{doc_id}-{position}"
            body = {"documents": [{"id": again, "url": f"http://l/{again}",
                                   "text": text_of(10**9 + position)}]}
            return kind, again, _request_bytes("/v1/documents", body)
        return kind, doc_id, request


def _plan(number: int, stored: int, count: int) -> _Plan:
    rng = random.Random(number)
    plan = _Plan([], [], [])
    for position in range(count):
        if rng.random() < ADD_SHARE[0]:
            doc_id = f"load-{number}-{position}-{rng.getrandbits(32)}"
            body: dict[str, Any] = {"documents": [{
                "id": doc_id, "url": f"http://l/{doc_id}",
                "text": text_of(10**9 + rng.getrandbits(40))}]}
            plan.kinds.append("add")
            plan.requests.append(_request_bytes("/v1/documents", body))
        else:
            stored_number = rng.randrange(stored)
            doc_id = f"d{stored_number}"
            plan.kinds.append("query")
            plan.requests.append(_request_bytes("/v1/query", {"text": text_of(stored_number)}))
        plan.ids.append(doc_id)
    return plan


async def _client(port: int, plan: _Plan, deadline: float, interval: float, phase: float,
                  budget: list[int], tally: Tally) -> None:
    """Send ``plan``'s requests one after the other on one keep-alive connection until the
    deadline; with an ``interval`` (open loop), request i is due at start + phase + i *
    interval and its latency counts from when it was due (a late request waited too)."""
    transport, connection = await asyncio.get_running_loop().create_connection(
        _Connection, "127.0.0.1", port)
    start = time.perf_counter()
    try:
        position = 0
        while time.monotonic() < deadline and budget[0] > 0:
            budget[0] -= 1
            due = start + phase + position * interval
            wait = due - time.perf_counter()
            if interval and wait > 0:
                await asyncio.sleep(wait)
            kind, doc_id, request = plan.at(position)
            position += 1
            sent = time.perf_counter()
            tally.sent += 1
            status, answer = await connection.ask(request)
            tally.latencies[kind].append(time.perf_counter() - (due if interval else sent))
            if 200 <= status < 300:
                if kind == "add":
                    tally.acknowledged.append(doc_id)
                elif not any(m["id"] == doc_id and m["distance"] == 0
                             for m in json.loads(answer)["matches"]):
                    tally.wrong += 1
            else:
                tally.error(f"{kind}:{status}")
    except (OSError, ValueError, IndexError) as error:
        tally.error(type(error).__name__)
    finally:
        transport.close()


async def load(port: int, clients: range, stored: int, seconds: float, budget: int,
               seed: int = 0, rate: float = 0.0, total_clients: int = 0) -> Tally:
    """``clients`` (their numbers) on one event loop, for ``seconds`` or ``budget`` requests;
    ``rate`` > 0: an open loop offering ``rate`` requests/s over all ``total_clients``, each
    client at its own even pace. ``seed`` varies the clients' choices from run to run."""
    tally, left = Tally(), [budget]
    total = total_clients or len(clients)
    interval = total / rate if rate else 0.0
    count = min(int(seconds * (rate / total if rate else CLOSED_PACE) * 1.2) + 64, PLANNED)
    plans = {n: _plan(n + seed * 100_003, stored, count) for n in clients}
    started, cpu = time.monotonic(), _cpu()
    deadline = started + seconds
    await asyncio.gather(*(_client(port, plans[n], deadline, interval, interval * n / total,
                                   left, tally) for n in clients))
    tally.seconds, tally.cpu_seconds = time.monotonic() - started, _cpu() - cpu
    return tally


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _run(coroutine: Any) -> Any:
    """Run ``coroutine`` on uvloop's event loop where it is installed (as uvicorn does)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


def _client_process(port: int, clients: range, stored: int, seconds: float, budget: int,
                    seed: int, rate: float, total_clients: int, answer: Any) -> None:
    tally = _run(load(port, clients, stored, seconds, budget, seed, rate, total_clients))
    answer.send(asdict(tally))
    answer.close()


def load_in_processes(port: int, clients: int, processes: int, stored: int, seconds: float,
                      budget: int, seed: int = 0, rate: float = 0.0) -> Tally:
    """The load of :func:`load`, its clients dealt over ``processes`` processes (forked)."""
    context = multiprocessing.get_context("fork")
    pipes, children = [], []
    for part in range(processes):
        mine = range(part, clients, processes)
        receiving, sending = context.Pipe(duplex=False)
        child = context.Process(target=_client_process, args=(
            port, mine, stored, seconds, budget // processes, seed, rate, clients, sending))
        child.start()
        sending.close()
        pipes.append(receiving)
        children.append(child)
    tally = Tally()
    for receiving, child in zip(pipes, children, strict=True):
        tally.merge(Tally(**receiving.recv()))
        child.join()
    return tally


def summary(tally: Tally) -> dict[str, Any]:
    def cut(values: list[float]) -> dict[str, float]:
        if not values:
            return {}
        ordered = sorted(values)
        return {"count": len(ordered), "p50_ms": round(statistics.median(ordered) * 1e3, 2),
                "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))] * 1e3, 2)}
    every = tally.latencies["query"] + tally.latencies["add"]
    seconds = tally.seconds
    return {"requests": len(every), "errors": tally.errors, "wrong_answers": tally.wrong,
            "seconds": round(seconds, 2),
            "requests_per_second": round(len(every) / seconds, 1),
            "queries_per_second": round(len(tally.latencies["query"]) / seconds, 1),
            "client_cpu_seconds": round(tally.cpu_seconds, 2),
            "all": cut(every), "query": cut(tally.latencies["query"]),
            "add": cut(tally.latencies["add"])}


def server_cpu(pid: int) -> dict[int, float]:
    """CPU seconds used so far by the server (``pid``) and by each of its reader processes."""
    sampler = TreeSampler()
    sampler.poll(pid)
    return sampler.cpu


def measure(port: int, server: int, args: argparse.Namespace, stored: int,
            seed: int) -> dict[str, Any]:
    """One measured run: the load, the server's CPU over it (the serving process, which
    writes, and its readers), the load average around it."""
    before, cpu = load_average(), server_cpu(server)
    tally = load_in_processes(port, args.clients, args.client_processes, stored,
                              args.duration, args.max_requests, seed, args.rate)
    used = {pid: seconds - cpu.get(pid, 0.0) for pid, seconds in server_cpu(server).items()}
    return {**summary(tally), "server_cpu_seconds": round(sum(used.values()), 2),
            "writer_cpu_seconds": round(used.get(server, 0.0), 2),
            "reader_cpu_seconds": sorted(round(v, 2) for k, v in used.items() if k != server),
            "load_average_before": before, "load_average_after": load_average()}


def check_adds(port: int, ids: list[str]) -> int:
    missing = 0
    for doc_id in ids:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/documents/{doc_id}",
                                         headers={"Authorization": f"Bearer {TOKEN}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                missing += answer.status != 200
        except OSError:
            missing += 1
    return missing


MEDIAN_OF = ("queries_per_second", "requests_per_second", "wrong_answers",
             "client_cpu_seconds", "server_cpu_seconds")


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each measure over the runs (errors summed)."""
    middle: dict[str, Any] = {name: statistics.median(run[name] for run in runs)
                              for name in MEDIAN_OF}
    for kind in ("query", "add", "all"):
        for cut in ("p50_ms", "p99_ms"):
            middle[f"{kind}_{cut}"] = statistics.median(run[kind].get(cut, 0.0) for run in runs)
    middle["errors"] = sum(sum(run["errors"].values()) for run in runs)
    middle["wrong_answers_total"] = sum(run["wrong_answers"] for run in runs)
    return middle


def verdict(middle: dict[str, Any], rate: float) -> dict[str, Any]:
    """Issue 29's target against the medians. Its latency is judged in an open loop only: in
    a closed loop of C clients the mean latency is C / throughput (45 ms for 100 clients at
    2,222 requests/s), whatever the server does."""
    checks = {"open loop (--rate)": rate > 0,
              "queries_per_second >= 2000": middle["queries_per_second"] >= 2000,
              "query p99 < 50 ms": middle["query_p99_ms"] < 50,
              "0 errors": middle["errors"] == 0,
              "0 wrong answers": middle["wrong_answers_total"] == 0}
    return {"checks": checks, "met": all(checks.values())}


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    results: dict[str, Any] = {
        "environment": environment(["fastapi", "uvicorn", "httptools", "uvloop"]),
        "command": " ".join(sys.argv), "clients": args.clients,
        "offered_requests_per_second": args.rate or None,
        "loop": "open (latency from each request's due time)" if args.rate else
                "closed (each client sends as soon as it has its answer)",
        "client_processes": args.client_processes, "readers": args.readers,
        "query_window_ms": args.query_window_ms, "add_window_ms": args.add_window_ms,
        "add_share": ADD_SHARE[0],
        "note": "clients and server share this machine's cores: the clients' CPU is "
                "taken from the server's"}
    store = args.store or work / "store"
    if not (store / "manifest.json").exists():
        results["build"] = build_store(store, args.documents)
    token_file = work / "token"
    token_file.write_text(TOKEN)
    server, port, startup = start_server(store, token_file, "--readers", str(args.readers),
                                         *_window(args))
    results["server_start_seconds"] = round(startup, 2)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz") as answer:
            results["stored"] = stored = json.loads(answer.read())["documents"]
        stored = min(stored, args.documents)
        if args.warmup:
            load_in_processes(port, args.clients, args.client_processes, stored, args.warmup,
                              args.max_requests, seed=999, rate=args.rate)
        results["runs"] = [measure(port, server.pid, args, stored, seed)
                           for seed in range(args.runs)]
    except BaseException:             # never leave a server holding the store behind
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        raise
    results["median"] = medians(results["runs"])
    results["target"] = verdict(results["median"], args.rate)
    if args.kill_after:
        results["kill"] = kill_under_load(args, store, token_file, server, port, stored)
    else:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return results


def kill_under_load(args: argparse.Namespace, store: Path, token_file: Path,
                    server: subprocess.Popen[bytes], port: int, stored: int) -> dict[str, Any]:
    async def loaded() -> Tally:
        task = asyncio.create_task(load(port, range(args.clients), stored,
                                        args.kill_after + 30, args.max_requests))
        await asyncio.sleep(args.kill_after)
        server.send_signal(signal.SIGKILL)
        return await task

    tally = asyncio.run(loaded())
    server.wait()
    time.sleep(1)                                  # the readers die with the server
    restarted, new_port, startup = start_server(store, token_file, *_window(args))
    try:
        missing = check_adds(new_port, tally.acknowledged)
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.wait(timeout=60)
    return {"killed_after_seconds": args.kill_after, "acknowledged_adds": len(tally.acknowledged),
            "missing_after_restart": missing, "restart_seconds": round(startup, 2),
            "requests_before_kill": sum(len(v) for v in tally.latencies.values())}


def table(results: dict[str, Any]) -> str:
    middle, runs = results["median"], results["runs"]
    rows = [["documents stored", f"{results['stored']:,}"],
            ["clients (processes) / reader processes",
             f"{results['clients']} ({results['client_processes']}) / {results['readers']}"],
            ["loop", results["loop"]],
            ["runs (90% query, 10% add)", ", ".join(
                f"{r['requests']:,} in {r['seconds']} s" for r in runs)],
            ["queries/s (median of runs)", f"{middle['queries_per_second']:,}"],
            ["requests/s (median)", f"{middle['requests_per_second']:,}"],
            ["query latency p50 / p99 (median)",
             f"{middle['query_p50_ms']} / {middle['query_p99_ms']} ms"],
            ["add latency p50 / p99 (median)",
             f"{middle['add_p50_ms']} / {middle['add_p99_ms']} ms"],
            ["errors / wrong answers (all runs)",
             f"{middle['errors']} / {middle['wrong_answers_total']}"],
            ["CPU s per run: server / clients (median)",
             f"{middle['server_cpu_seconds']} / {middle['client_cpu_seconds']}"],
            ["load average before each run", "; ".join(
                str(r["load_average_before"]) for r in runs)],
            ["target (2,000 q/s, p99 < 50 ms, 0 errors, 0 wrong)",
             "met" if results["target"]["met"] else "not met"]]
    if "kill" in results:
        kill = results["kill"]
        rows.append(["SIGKILL under load: 2xx adds / missing after restart",
                     f"{kill['acknowledged_adds']} / {kill['missing_after_restart']}"])
    return markdown_table(["measure", "result"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--store", type=Path, default=None,
                        help="Reuse this store (built with --documents if absent).")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="offered requests/s over all clients (open loop, latency from "
                             "each request's due time); 0: closed loop, as fast as answered")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--client-processes", type=int, default=1)
    parser.add_argument("--query-window-ms", type=float, default=None,
                        help="neardup serve --query-window-ms (its default when not given).")
    parser.add_argument("--add-window-ms", type=float, default=None,
                        help="neardup serve --add-window-ms (its default when not given).")
    parser.add_argument("--readers", type=int, default=2,
                        help="neardup serve --readers (reader processes beside the writer).")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0,
                        help="Seconds of unmeasured load first (caches, connections).")
    parser.add_argument("--max-requests", type=int, default=1_000_000)
    parser.add_argument("--kill-after", type=float, default=5.0)
    parser.add_argument("--add-share", type=float, default=0.1,
                        help="Share of adds among the requests (to study queries or adds "
                             "alone; the target's mix is 0.1).")
    parser.add_argument("--results", default="service_load.json",
                        help="File name of the results under benchmarks/results/.")
    args = parser.parse_args()
    ADD_SHARE[0] = args.add_share
    work = Path(tempfile.mkdtemp(prefix="neardup-service-load-"))
    try:
        results = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_results(RESULTS_DIR / args.results, results, table(results))


if __name__ == "__main__":
    main()
