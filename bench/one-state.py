#!/usr/bin/env python3
"""one-state.py — the one-state run's wall time, Baton beside raymond-go, shuffled.

The shared kit's `single` row is a median of a few runs per pass, and on a noisy
machine its passes spread wider than the gap between the peers (issue 22's
twenty-second round: 12 to 48 ms for one peer on one disk). This runs the kit's
`single/START.sh` ROUNDS times under each of five commands — Baton with its trace
and per-step files, Baton `--no-debug`, raymond-go with and without its debug files,
and bare `bash` — in a fresh order each round, so the machine's drift falls on all
of them alike, and prints each one's median and quartiles. Every run starts from
an empty directory (the state left by the last is removed outside the timing).
Both binaries are copied into DIR first, so they are read from the disk measured.

Usage: BATON=target/release/baton RAYMOND_GO=/path/to/ray \
       bench/one-state.py [ROUNDS] [DIR]      (defaults: 150, a new directory in /tmp)
"""

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KIT_SINGLE = os.path.join(HERE, "..", "..", "shared", "bench", "workflows", "single", "START.sh")


def main():
    try:
        rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    except ValueError:
        rounds = 0
    if rounds < 1:
        sys.exit(f"one-state.py: ROUNDS must be a whole number of at least 1, not {sys.argv[1]!r}\n{__doc__}")
    where = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="one-state.", dir="/tmp")
    baton = os.environ.get("BATON", os.path.join(HERE, "..", "target", "release", "baton"))
    raymond = os.environ.get("RAYMOND_GO")
    if not raymond:
        sys.exit("one-state.py: set RAYMOND_GO to the raymond-go binary (see ../shared/bench/README.md)")
    single = os.environ.get("SINGLE", KIT_SINGLE)
    for path, what in ((baton, "BATON"), (raymond, "RAYMOND_GO"), (single, "SINGLE (the kit's single/START.sh)")):
        if not os.path.isfile(path):
            sys.exit(f"one-state.py: {what} is {path}, which is not a file")
    os.makedirs(where, exist_ok=True)
    for source, name in ((baton, "baton"), (raymond, "ray"), (single, "START.sh")):
        shutil.copy2(source, os.path.join(where, name))
    commands = {
        "baton": ["./baton", "START.sh", "--quiet"],
        "baton --no-debug": ["./baton", "START.sh", "--quiet", "--no-debug"],
        "raymond-go": ["./ray", "START.sh", "--quiet"],
        "raymond-go --no-debug": ["./ray", "START.sh", "--quiet", "--no-debug"],
        "bash START.sh": ["bash", "START.sh"],
    }
    # Bare bash needs what the peers give a script.
    env = dict(os.environ, RAYMOND_WORKFLOW_ID="bench", RAYMOND_AGENT_ID="main")
    times = {name: [] for name in commands}
    for _ in range(rounds):
        order = list(commands)
        random.shuffle(order)
        for name in order:
            for state in (".baton", ".raymond", ".bench"):
                shutil.rmtree(os.path.join(where, state), ignore_errors=True)
            started = time.perf_counter()
            done = subprocess.run(commands[name], cwd=where, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append((time.perf_counter() - started) * 1000)
            if done.returncode != 0:
                sys.exit(f"one-state.py: `{' '.join(commands[name])}` in {where} exited {done.returncode}")
    print(f"one-state.py: {rounds} rounds in {where}, ms (median, quartiles)")
    for name, ms in times.items():
        ms.sort()
        quarter = len(ms) // 4
        print(f"  {name:24s} {statistics.median(ms):6.2f}  ({ms[quarter]:.2f} to {ms[-1 - quarter]:.2f})")


if __name__ == "__main__":
    main()
