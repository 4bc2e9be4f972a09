#!/usr/bin/env python3
"""follow-cost.py — what `baton logs --follow` costs the run it follows.

Runs bench/workflows/loop (a script-only run of STEPS sequential gotos, tracing on)
PASSES times without a follower and PASSES times with `baton logs RUN --follow`
reading it from another process (its output to /dev/null), alternating the order
each pass so drift on the machine hits both alike. Prints, for each, the median wall
time of `baton run`, Baton's own CPU time (the `metrics` of its WorkflowCompleted
event), and the follower's CPU time.

Usage: BATON=target/release/baton bench/follow-cost.py [PASSES] [STEPS]
"""

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BATON = os.path.abspath(os.environ.get("BATON", os.path.join(HERE, "..", "target", "release", "baton")))
PASSES = int(sys.argv[1]) if len(sys.argv) > 1 else 5
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 2000


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(project, run_id, follow):
    env = dict(os.environ, BENCH_STEPS=str(STEPS), NO_COLOR="1")
    run_dir = os.path.join(project, ".baton", "runs", run_id)
    start = time.monotonic()
    driver = subprocess.Popen(
        [BATON, "run", "wf", "--run-id", run_id, "--quiet"],
        cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    follower_cpu = None
    follower = None
    if follow:
        while not os.path.exists(os.path.join(run_dir, "state.json")):
            time.sleep(0.001)
        follower = subprocess.Popen(
            [BATON, "logs", run_id, "--follow"],
            cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    if driver.wait() != 0:
        sys.exit(f"run {run_id} failed")
    wall = time.monotonic() - start
    if follower is not None:
        before = children_cpu()
        if follower.wait() != 0:
            sys.exit(f"follower of {run_id} failed")
        # The driver was reaped already, so the difference is the follower's.
        follower_cpu = children_cpu() - before
    metrics = {}
    with open(os.path.join(run_dir, "events.jsonl")) as trace:
        for line in trace:
            event = json.loads(line)
            if event["type"] == "WorkflowCompleted":
                metrics = event["metrics"]
    cpu = (metrics.get("cpu_user_ms", 0) + metrics.get("cpu_system_ms", 0)) / 1000
    return wall, cpu, follower_cpu


def main():
    if not os.access(BATON, os.X_OK):
        sys.exit(f"no baton at {BATON}; build it with `cargo build --release` or set BATON")
    results = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="baton-follow-") as project:
        os.mkdir(os.path.join(project, ".git"))
        shutil.copytree(os.path.join(HERE, "workflows", "loop"), os.path.join(project, "wf"))
        for index in range(PASSES):
            order = (False, True) if index % 2 == 0 else (True, False)
            for follow in order:
                run_id = f"p{index}{'f' if follow else 'a'}"
                results[follow].append(one_run(project, run_id, follow))
                shutil.rmtree(os.path.join(project, ".baton", "runs", run_id))
            print(f"pass {index + 1} of {PASSES} done", file=sys.stderr)
    print(f"loop of {STEPS} steps, {PASSES} runs each, medians:")
    print("| | wall (min–max) | baton CPU | follower CPU |")
    print("|---|---:|---:|---:|")
    for follow in (False, True):
        walls = [wall for wall, _, _ in results[follow]]
        cpus = [cpu for _, cpu, _ in results[follow]]
        followers = [cpu for _, _, cpu in results[follow] if cpu is not None]
        follower = f"{statistics.median(followers):.2f} s" if followers else "–"
        name = "with `logs --follow`" if follow else "alone"
        spread = f"{min(walls):.2f}–{max(walls):.2f}"
        print(f"| {name} | {statistics.median(walls):.2f} s ({spread}) | {statistics.median(cpus):.2f} s | {follower} |")


if __name__ == "__main__":
    main()
