#!/usr/bin/env python3
"""serve-sse-cost.py — what 20 event-stream clients cost a run `baton serve` drives.

Starts `baton serve` on 127.0.0.1 (port 0) over a temporary project holding
bench/workflows/loop (STEPS sequential script gotos). Each pass starts one run through
the API with no client attached, and one with CLIENTS clients following it: half on
the run's stream (`/api/v1/runs/ID/events`), half on the daemon's (`/api/v1/events`),
each reading everything it is sent. The order alternates each pass. Per-step overhead
is the run's own `duration_ms` (its WorkflowCompleted event) over its steps, minus
nothing: the loop's scripts are the same in both, so the difference is the clients'.

Usage: BATON=target/release/baton bench/serve-sse-cost.py [PASSES] [STEPS] [CLIENTS]
"""

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BATON = os.path.abspath(os.environ.get("BATON", os.path.join(HERE, "..", "target", "release", "baton")))
PASSES = int(sys.argv[1]) if len(sys.argv) > 1 else 5
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
CLIENTS = int(sys.argv[3]) if len(sys.argv) > 3 else 20


def call(url, token, method="GET", body=None):
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"{}")


def follow(host, port, token, path, stop, counts, index):
    """Read an event stream until `stop` is set, counting the events."""
    with socket.create_connection((host, port)) as sock:
        sock.settimeout(0.5)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        seen = 0
        while not stop.is_set():
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            seen += data.count(b"\n\n")
        counts[index] = seen


def one_run(base, token, run_id, clients):
    host, port = base.split("//")[1].split(":")
    port = int(port)
    stop = threading.Event()
    counts = [0] * clients
    threads = []
    # The run's stream can be opened only once the run exists: start it, then attach
    # at once (a client without an id is replayed the run from its first line).
    call(f"{base}/api/v1/runs", token, "POST", {"workflow": "loop", "run_id": run_id})
    for index in range(clients):
        path = f"/api/v1/runs/{run_id}/events" if index % 2 == 0 else "/api/v1/events"
        thread = threading.Thread(target=follow, args=(host, port, token, path, stop, counts, index), daemon=True)
        thread.start()
        threads.append(thread)
    while True:
        run = call(f"{base}/api/v1/runs/{run_id}", token)
        if run["run"]["status"] == "completed" and not run["live"]:
            break
        if run["run"]["status"] in ("failed", "paused"):
            sys.exit(f"run {run_id} ended {run['run']['status']}")
        time.sleep(0.05)
    time.sleep(0.3)
    stop.set()
    for thread in threads:
        thread.join()
    duration = steps = None
    with open(os.path.join(PROJECT, ".baton", "runs", run_id, "events.jsonl")) as trace:
        for line in trace:
            event = json.loads(line)
            if event["type"] == "WorkflowCompleted":
                duration, steps = event["duration_ms"], event["steps"]
                cpu = event["metrics"].get("cpu_user_ms", 0) + event["metrics"].get("cpu_system_ms", 0)
    return (duration / steps, cpu / steps), sum(counts)


def main():
    global PROJECT
    if not os.access(BATON, os.X_OK):
        sys.exit(f"no baton at {BATON}; build it with `cargo build --release` or set BATON")
    with tempfile.TemporaryDirectory(prefix="baton-serve-bench-") as project:
        PROJECT = project
        os.mkdir(os.path.join(project, ".git"))
        flows = os.path.join(project, "flows")
        os.mkdir(flows)
        shutil.copytree(os.path.join(HERE, "workflows", "loop"), os.path.join(flows, "loop"))
        env = dict(os.environ, BENCH_STEPS=str(STEPS), NO_COLOR="1")
        daemon = subprocess.Popen(
            [BATON, "serve", "--bind", "127.0.0.1:0", "--root", flows],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        try:
            base = daemon.stdout.readline().strip().split("#")[0].rstrip("/")
            with open(os.path.join(project, ".baton", "serve", "token")) as file:
                token = file.read().strip()
            results = {0: [], CLIENTS: []}
            delivered = []
            for index in range(PASSES):
                order = (0, CLIENTS) if index % 2 == 0 else (CLIENTS, 0)
                for clients in order:
                    run_id = f"p{index}c{clients}"
                    per_step, events = one_run(base, token, run_id, clients)
                    results[clients].append(per_step)
                    if clients:
                        delivered.append(events)
                print(f"pass {index + 1} of {PASSES} done", file=sys.stderr)
        finally:
            daemon.terminate()
            daemon.wait()
    print(f"loop of {STEPS} script steps driven by `baton serve`, {PASSES} runs each, medians:")
    print("| clients | wall per step (min–max) | baton CPU per step |")
    print("|---|---:|---:|")
    for clients in (0, CLIENTS):
        walls = [wall for wall, _ in results[clients]]
        cpus = [cpu for _, cpu in results[clients]]
        print(f"| {clients} | {statistics.median(walls):.3f} ms ({min(walls):.3f}–{max(walls):.3f}) "
              f"| {statistics.median(cpus):.3f} ms |")
    for name, pick in (("wall", 0), ("baton CPU", 1)):
        alone = statistics.median([value[pick] for value in results[0]])
        followed = statistics.median([value[pick] for value in results[CLIENTS]])
        print(f"{name} per step added by {CLIENTS} clients: {100 * (followed - alone) / alone:+.1f} %")
    print(f"{statistics.median(delivered)} events delivered per followed run")


if __name__ == "__main__":
    main()
