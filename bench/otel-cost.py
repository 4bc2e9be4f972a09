#!/usr/bin/env python3
"""otel-cost.py — what OpenTelemetry export costs a run (issue 23).

Runs bench/workflows/loop (a script-only run of STEPS sequential gotos, tracing on)
PASSES times with no endpoint configured and PASSES times exporting to an OTLP/HTTP
receiver on loopback (a tiny one in this process's thread: it reads each request and
answers 200, so the collector's own cost is left out), alternating the order each pass.
Prints, for each, the median wall time of `baton run`, Baton's own CPU time (the
`metrics` of `--json`), and the spans the receiver took.

Usage: BATON=target/release/baton bench/otel-cost.py [PASSES] [STEPS]
"""

import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BATON = os.path.abspath(os.environ.get("BATON", os.path.join(HERE, "..", "target", "release", "baton")))
PASSES = int(sys.argv[1]) if len(sys.argv) > 1 else 5
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
RECEIVED = {"requests": 0, "bytes": 0}


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        RECEIVED["requests"] += 1
        RECEIVED["bytes"] += len(body)
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def one_run(project, run_id, endpoint):
    env = dict(os.environ, BENCH_STEPS=str(STEPS), NO_COLOR="1")
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    if endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    start = time.monotonic()
    done = subprocess.run(
        [BATON, "run", "wf", "--run-id", run_id, "--quiet", "--json"],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    wall = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"run {run_id} failed: {done.stderr}")
    if "warning" in done.stderr:
        sys.exit(f"run {run_id} warned: {done.stderr}")
    metrics = json.loads(done.stdout)["metrics"]
    return wall, (metrics["cpu_user_ms"] + metrics["cpu_system_ms"]) / 1000


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    project = tempfile.mkdtemp(prefix="baton-otel-bench-")
    try:
        os.mkdir(os.path.join(project, ".git"))
        shutil.copytree(os.path.join(HERE, "workflows", "loop"), os.path.join(project, "wf"))
        results = {"off": [], "on": []}
        for index in range(PASSES):
            order = ["off", "on"] if index % 2 == 0 else ["on", "off"]
            for mode in order:
                results[mode].append(one_run(project, f"{mode}-{index}", endpoint if mode == "on" else None))
        for mode in ["off", "on"]:
            walls = [wall for wall, _ in results[mode]]
            cpus = [cpu for _, cpu in results[mode]]
            print(f"export {mode:3}: wall median {statistics.median(walls):.3f} s (min {min(walls):.3f}), "
                  f"baton CPU median {statistics.median(cpus):.3f} s, {STEPS + 1} steps")
        print(f"receiver: {RECEIVED['requests']} requests, {RECEIVED['bytes']} bytes over {PASSES} exporting runs")
    finally:
        shutil.rmtree(project, ignore_errors=True)
        server.shutdown()


if __name__ == "__main__":
    main()
