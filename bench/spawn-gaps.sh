#!/usr/bin/env bash
# spawn-gaps.sh — where a script step's time goes, Baton against the kit's `bash
# LOOP.sh` floor, read from the kernel's own process events instead of wall clocks.
#
# Issue 22's item 3 asks for a `loop` step within 0.15 ms of one `bash LOOP.sh`
# spawn, and on a shared 2-core machine the floor alone drifts by more than that
# from one run to the next (the kit's floors: 1.56 to 2.34 ms a spawn in one
# side-by-side run). So this records, under `perf record -a`, every fork, exec and
# exit of the kit's `loop` workflow run by Baton and of the kit's floor (the same
# script run back to back by a bash loop), and splits each spawn's time in three:
#
#   fork -> exec   the parent's clone up to the child's exec (Baton: posix_spawn's
#                  vfork; the floor: bash's fork, which copies its memory map)
#   exec -> exit   the script itself (and whatever else competed for the cores)
#   exit -> fork   from the script's exit to the next clone: the kernel's teardown
#                  of the child, the parent's wake-up, and all the parent does
#                  before it starts the next script
#
# A second reference, "python, pipes", runs the same script from a Python loop
# (`subprocess.run`, vfork) that reads its stdout and stderr through pipes, as every
# orchestrator must, where the kit's floor sends them to /dev/null: what reading a
# script's output costs a spawner that does nothing else.
#
# "The parent's share" is exit -> fork plus fork -> exec: what Baton (or the floor's
# bash loop) spends per step outside the script. It is much steadier than the whole
# step, since the machine's drift mostly lands in the script. Rounds alternate the
# order of the variants, and each variant's numbers are the median over rounds of
# its per-spawn medians.
#
# Usage: BATON=target/release/baton bench/spawn-gaps.sh [ROUNDS] [OUTDIR]
# BENCH_N (default 1000) steps a run; DISK (default /tmp) is where runs and the
# floor's counter live; MODES (default "debug nodebug") picks Baton's variants
# (debug: the trace and its per-step files, as the kit's debug mode; nodebug:
# `--no-debug`). Needs perf (Debian's linux-perf) with access to the scheduler's
# tracepoints (root, or kernel.perf_event_paranoid = -1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KIT=${KIT:-$HERE/../../shared/bench}
ROUNDS=${1:-4}
OUT=${2:-$(mktemp -d /tmp/spawn-gaps.XXXXXX)}
DISK=${DISK:-/tmp}
MODES=${MODES:-debug nodebug}
export BENCH_N=${BENCH_N:-1000}
: "${BATON:?set BATON to the baton binary}"
command -v perf >/dev/null || { echo "spawn-gaps: needs perf: apt-get install -y linux-perf" >&2; exit 2; }
if ! perf record -q -a -e sched:sched_process_exit -o /dev/null -- true 2>/dev/null; then
  echo "spawn-gaps: perf cannot record the scheduler's tracepoints here (run as root, or set kernel.perf_event_paranoid=-1)" >&2
  exit 2
fi
mkdir -p "$OUT"
LOOP=$KIT/workflows/loop
# A fresh copy, as side-by-side.sh does: a binary whose pages were evicted and read
# back starts slower than one just written.
cp "$BATON" "$OUT/baton" && BATON=$OUT/baton

# The kit's floor (`run-peers.sh`, floor_bash_state): the loop's own script, back to back.
cat > "$OUT/floor.sh" <<EOF
#!/bin/bash
mkdir -p .bench; echo 0 > .bench/floor.main.n
export RAYMOND_WORKFLOW_ID=floor RAYMOND_AGENT_ID=main
for ((i = 0; i < BENCH_N; i++)); do /bin/bash "$LOOP/LOOP.sh"; done >/dev/null
EOF
chmod +x "$OUT/floor.sh"
# The interpreter itself: a shim (pyenv's is a bash script) would add its own bash.
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
cat > "$OUT/python-pipes.sh" <<EOF
#!/bin/bash
mkdir -p .bench; echo 0 > .bench/floor.main.n
export RAYMOND_WORKFLOW_ID=floor RAYMOND_AGENT_ID=main
exec "$PYTHON" -c '
import os, subprocess
for _ in range(int(os.environ["BENCH_N"])):
    subprocess.run(["/bin/bash", "$LOOP/LOOP.sh"], stdin=subprocess.DEVNULL, capture_output=True, check=True)
'
EOF
chmod +x "$OUT/python-pipes.sh"

record() { # name round command...
  local name=$1 round=$2 dir; shift 2
  dir=$(mktemp -d "$DISK/spawn-gaps.XXXXXX")
  (cd "$dir" && perf record -q -a -e sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit \
    -o "$OUT/$name-$round.data" -- "$@" >/dev/null 2>"$OUT/$name-$round.err")
  rm -rf "$dir"
  perf script -i "$OUT/$name-$round.data" > "$OUT/$name-$round.txt" 2>/dev/null
  rm -f "$OUT/$name-$round.data"
}

variants=(floor python-pipes)
for mode in $MODES; do variants+=("$mode"); done
for round in $(seq 1 "$ROUNDS"); do
  order=("${variants[@]}")
  if [ $((round % 2)) = 0 ]; then
    order=(); for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[$i]}"); done
  fi
  for name in "${order[@]}"; do
    case $name in
      floor) record floor "$round" "$OUT/floor.sh" ;;
      python-pipes) record python-pipes "$round" "$OUT/python-pipes.sh" ;;
      debug) record debug "$round" "$BATON" "$LOOP/START.sh" --quiet ;;
      nodebug) record nodebug "$round" "$BATON" "$LOOP/START.sh" --quiet --no-debug ;;
      *) echo "spawn-gaps: unknown mode $name (debug, nodebug)" >&2; exit 2 ;;
    esac
  done
  echo "round $round done" >&2
done

python3 - "$OUT" "$ROUNDS" "${variants[@]}" <<'PY'
import os, re, statistics, sys
out, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
line = re.compile(r'^\s*\S.*?\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+sched:(\w+):\s*(.*)$')

def spawns(path):
    """(fork, exec, exit) times in ms of every bash the traced command started and
    that lived under 100 ms (the floor's own loop shell lives for the whole run)."""
    forked, execed, exited = {}, {}, {}
    for text in open(path, errors='replace'):
        m = line.match(text)
        if not m:
            continue
        pid, t, event, rest = int(m.group(1)), float(m.group(2)) * 1e3, m.group(3), m.group(4)
        if event == 'sched_process_fork':
            child = re.search(r'child_pid=(\d+)', rest)
            if child:
                forked[int(child.group(1))] = t
        elif event == 'sched_process_exec' and re.search(r'filename=\S*/bash\b', rest):
            execed.setdefault(pid, t)
        elif event == 'sched_process_exit':
            exited[pid] = t
    return sorted((forked[p], execed[p], exited[p]) for p in execed
                  if p in forked and p in exited and exited[p] - execed[p] < 100)

def split(steps):
    parts = {
        'fork -> exec': [e - f for f, e, x in steps],
        'exec -> exit': [x - e for f, e, x in steps],
        'exit -> fork': [b[0] - a[2] for a, b in zip(steps, steps[1:])],
        'fork -> fork': [b[0] - a[0] for a, b in zip(steps, steps[1:])],
    }
    medians = {name: statistics.median(v) for name, v in parts.items()}
    medians["parent's share"] = medians['exit -> fork'] + medians['fork -> exec']
    return medians, len(steps)

results = {v: [] for v in variants}
for v in variants:
    for r in range(1, rounds + 1):
        steps = spawns(f"{out}/{v}-{r}.txt")
        if len(steps) < 10:
            sys.exit(f"spawn-gaps: {v}, round {r}: only {len(steps)} spawns recorded (see {out}/{v}-{r}.err)")
        results[v].append(split(steps))

columns = ['fork -> exec', 'exec -> exit', 'exit -> fork', "parent's share", 'fork -> fork']
label = {'floor': '`bash LOOP.sh` floor', 'python-pipes': 'python, pipes', 'debug': 'Baton, trace and step files', 'nodebug': 'Baton, `--no-debug`'}
print(f"BENCH_N={os.environ.get('BENCH_N')}, {rounds} rounds; ms per spawn, the median over rounds of each run's median")
print()
print('| variant | spawns a run | ' + ' | '.join(columns) + ' |')
print('|---|---:|' + '---:|' * len(columns))
for v in variants:
    row = [statistics.median(m[c] for m, _ in results[v]) for c in columns]
    n = statistics.median(k for _, k in results[v])
    print(f"| {label.get(v, v)} | {n:.0f} | " + ' | '.join(f"{x:.3f}" for x in row) + ' |')
print()
print("Against the floor, paired by round (median, and the range over rounds):")
for v in variants[1:]:
    for c in ["parent's share", 'fork -> fork']:
        d = [m[c] - f[c] for (m, _), (f, _) in zip(results[v], results['floor'])]
        print(f"- {label.get(v, v)}, {c}: {statistics.median(d):+.3f} ms ({min(d):+.3f} to {max(d):+.3f})")
PY
echo "raw: $OUT" >&2
