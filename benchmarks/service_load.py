"""``neardup serve`` under load, then killed under load.

1. Build (or reuse, ``--store``) a store of N documents with ``neardup index`` (100-word texts).
2. Start ``neardup serve`` on a loopback port; C concurrent clients (asyncio, keep-alive HTTP/1.1
   connections) send 90% queries (the text of a stored document) and 10% adds (new documents),
   bounded by ``--duration`` seconds and ``--max-requests``: errors, p50/p99 latency, req/s.
3. Load again, SIGKILL the server after ``--kill-after`` seconds, restart it, and check that every
   add that got a 2xx is stored (GET /v1/documents/{id}).

    python benchmarks/service_load.py [--documents 1000000] [--clients 200] [--duration 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import REPO_DIR, RESULTS_DIR, environment, markdown_table, write_results

TOKEN = "load-benchmark-token-0123456789"
WORDS = [f"w{i}" for i in range(20_000)]


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


def start_server(store: Path, token_file: Path,
                 *extra: str) -> tuple[subprocess.Popen[bytes], int, float]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-c", "from neardup.cli.main import cli; cli()", "serve", "--store",
         str(store), "--port", str(port), "--token-file", str(token_file), *extra],
        env={**os.environ, "PYTHONPATH": str(REPO_DIR / "src")})
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

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: str,
                   path: str, body: dict[str, Any] | None) -> tuple[int, bytes]:
    data = b"" if body is None else json.dumps(body).encode()
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(data)}\r\n"
            f"Content-Type: application/json\r\nAuthorization: Bearer {TOKEN}\r\n\r\n")
    writer.write(head.encode() + data)
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def _client(port: int, number: int, stored: int, deadline: float, budget: list[int],
                  tally: Tally) -> None:
    rng = random.Random(number)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    added = 0
    try:
        while time.monotonic() < deadline and budget[0] > 0:
            budget[0] -= 1
            if rng.random() < 0.1:
                kind, doc_id = "add", f"load-{number}-{added}-{rng.getrandbits(32)}"
                added += 1
                new = {"id": doc_id, "url": f"http://l/{doc_id}",
                       "text": text_of(10**9 + rng.getrandbits(40))}
                body: dict[str, Any] = {"documents": [new]}
                path = "/v1/documents"
            else:
                number_ = rng.randrange(stored)
                kind, path, doc_id = "query", "/v1/query", f"d{number_}"
                body = {"text": text_of(number_)}
            start = time.perf_counter()
            tally.sent += 1
            status, answer = await _request(reader, writer, "POST", path, body)
            tally.latencies[kind].append(time.perf_counter() - start)
            if 200 <= status < 300:
                if kind == "add":
                    tally.acknowledged.append(doc_id)
                elif not any(m["id"] == doc_id and m["distance"] == 0
                             for m in json.loads(answer)["matches"]):
                    tally.wrong += 1
            else:
                tally.error(f"{kind}:{status}")
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as error:
        tally.error(type(error).__name__)
    finally:
        writer.close()


async def load(port: int, clients: int, stored: int, seconds: float, budget: int) -> Tally:
    tally, left = Tally(), [budget]
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(_client(port, n, stored, deadline, left, tally)
                           for n in range(clients)))
    return tally


def summary(tally: Tally, seconds: float) -> dict[str, Any]:
    def cut(values: list[float]) -> dict[str, float]:
        if not values:
            return {}
        ordered = sorted(values)
        return {"count": len(ordered), "p50_ms": round(statistics.median(ordered) * 1e3, 2),
                "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))] * 1e3, 2)}
    every = tally.latencies["query"] + tally.latencies["add"]
    return {"requests": len(every), "errors": tally.errors, "wrong_answers": tally.wrong,
            "seconds": round(seconds, 2),
            "requests_per_second": round(len(every) / seconds, 1), "all": cut(every),
            "query": cut(tally.latencies["query"]), "add": cut(tally.latencies["add"])}


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


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    results: dict[str, Any] = {"environment": environment(["fastapi", "uvicorn"]),
                               "command": " ".join(sys.argv), "clients": args.clients}
    store = args.store or work / "store"
    if not (store / "manifest.json").exists():
        results["build"] = build_store(store, args.documents)
    token_file = work / "token"
    token_file.write_text(TOKEN)
    server, port, startup = start_server(store, token_file)
    results["server_start_seconds"] = round(startup, 2)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz") as answer:
        results["stored"] = stored = json.loads(answer.read())["documents"]
    started = time.perf_counter()
    tally = asyncio.run(load(port, args.clients, min(stored, args.documents), args.duration,
                             args.max_requests))
    results["load"] = summary(tally, time.perf_counter() - started)
    results["kill"] = kill_under_load(args, store, token_file, server, port,
                                      min(stored, args.documents))
    return results


def kill_under_load(args: argparse.Namespace, store: Path, token_file: Path,
                    server: subprocess.Popen[bytes], port: int, stored: int) -> dict[str, Any]:
    async def loaded() -> Tally:
        task = asyncio.create_task(load(port, args.clients, stored, args.kill_after + 30,
                                        args.max_requests))
        await asyncio.sleep(args.kill_after)
        server.send_signal(signal.SIGKILL)
        return await task

    tally = asyncio.run(loaded())
    server.wait()
    restarted, new_port, startup = start_server(store, token_file)
    try:
        missing = check_adds(new_port, tally.acknowledged)
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.wait(timeout=60)
    return {"killed_after_seconds": args.kill_after, "acknowledged_adds": len(tally.acknowledged),
            "missing_after_restart": missing, "restart_seconds": round(startup, 2),
            "requests_before_kill": sum(len(v) for v in tally.latencies.values())}


def table(results: dict[str, Any]) -> str:
    load_, kill = results["load"], results["kill"]
    rows = [["documents stored", f"{results['stored']:,}"],
            ["clients", results["clients"]],
            ["requests (90% query, 10% add)", f"{load_['requests']:,} in {load_['seconds']} s"],
            ["errors", sum(load_["errors"].values())],
            ["throughput", f"{load_['requests_per_second']:,} req/s"],
            ["latency, all", f"p50 {load_['all']['p50_ms']} ms, p99 {load_['all']['p99_ms']} ms"],
            ["latency, query", f"p50 {load_['query']['p50_ms']} ms, "
                               f"p99 {load_['query']['p99_ms']} ms"],
            ["latency, add", f"p50 {load_['add']['p50_ms']} ms, p99 {load_['add']['p99_ms']} ms"],
            ["SIGKILL under load: 2xx adds / missing after restart",
             f"{kill['acknowledged_adds']} / {kill['missing_after_restart']}"]]
    return markdown_table(["measure", "result"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--store", type=Path, default=None,
                        help="Reuse this store (built with --documents if absent).")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--kill-after", type=float, default=5.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="neardup-service-load-"))
    try:
        results = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_results(RESULTS_DIR / "service_load.json", results, table(results))


if __name__ == "__main__":
    main()
