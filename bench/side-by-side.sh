#!/usr/bin/env bash
# side-by-side.sh — Baton against raymond-go, interleaved: PASSES passes of
# ../shared/bench/run-peers.sh as shipped (one timed run per workflow and mode, per
# peer, after one warm-up), the peer order flipped every pass and the disks (ext4
# under /tmp, tmpfs under /dev/shm) alternated, so drift on the machine hits both
# peers alike. Nothing is done between peers (no `sync`): a user's machine always
# has other writers, so each peer pays for what the one before it left dirty.
# Then the scope rows: the `loop` workflow as one YAML file and as a zip archive
# (R1.3, §13.2), run by both peers the same way. Prints, per disk, workflow and
# mode, the median over passes of the marginal ms per transition (the `single`
# row: the whole run in ms; the scope rows: over that disk's `single`).
#
# Usage: BATON=target/release/baton RAYMOND_GO=/tmp/peers/raymond-go/ray \
#          bench/side-by-side.sh [PASSES] [OUTDIR]
#        bench/side-by-side.sh --summary OUTDIR      (the table again, from the runs kept)
# WORKFLOWS, MODES, DISKS and SCOPES (e.g. "single loop", "nodebug", "/tmp",
# "yaml") narrow a run; SCOPES="" leaves the scope rows out. BATON_FORM=raymond runs
# baton the way the kit runs raymond (`baton START.sh --quiet`, Baton's raymond-form
# command line) instead of through the kit's adapter, a `sh` script that execs
# `baton run --baton-dir "$PWD/.baton"` and so adds one shell start to every run.
# PASSES (default 6) should be even: each peer then runs first as often as second on
# each disk. A peer that runs second creates its files right after the other removed
# thousands (on ext4 that costs about a millisecond a file), so with an odd number
# the median of a short row compares positions as much as peers; the table of the
# one-state run by position says which.
# Build raymond-go first: see ../shared/bench/README.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KIT=${KIT:-$HERE/../../shared/bench}
if [ "${1:-}" = --summary ]; then PASSES=0; OUT=$2; else
  PASSES=${1:-6}
  [ $((PASSES % 2)) = 0 ] || echo "side-by-side: $PASSES passes: the peer that runs first in odd passes is first once more" >&2
  OUT=${2:-$(mktemp -d /tmp/side-by-side.XXXXXX)}
  : "${BATON:?set BATON to the baton binary}" "${RAYMOND_GO:?set RAYMOND_GO to the raymond-go binary}"
fi
mkdir -p "$OUT"
# Both peers run from copies made now. The same bytes start faster from a file
# written in one go than from one whose page cache was evicted and read back (this
# machine's kdamond pages out what goes unused): 0.7 ms a one-state run, for either
# peer (docs/benchmarks.md, issue 22's eighth round). A binary built an hour before
# the other would carry that into the `single` rows.
if [ "$PASSES" != 0 ]; then
  mkdir -p "$OUT/bin"
  cp "$BATON" "$OUT/bin/baton" && BATON=$OUT/bin/baton
  cp "$RAYMOND_GO" "$OUT/bin/raymond-go" && RAYMOND_GO=$OUT/bin/raymond-go
fi
export BATON
export BENCH_N=${BENCH_N:-500}

# The kit's `loop` workflow as one YAML file and as a flat zip archive.
make_scopes() {
  python3 - "$KIT/workflows/loop" "$OUT" <<'PY'
import os, sys, zipfile
source, out = sys.argv[1], sys.argv[2]
scripts = {name[:-3]: open(os.path.join(source, name)).read() for name in ("START.sh", "LOOP.sh")}
with open(os.path.join(out, "loop.yaml"), "w") as yaml:
    yaml.write("states:\n")
    for state, text in scripts.items():
        yaml.write(f"  {state}:\n    sh: |\n")
        yaml.write("".join(f"      {line}\n" for line in text.splitlines()))
with zipfile.ZipFile(os.path.join(out, "loop.zip"), "w", zipfile.ZIP_DEFLATED) as archive:
    for state, text in scripts.items():
        archive.writestr(f"{state}.sh", text)
PY
}

# One timed run (after a warm-up) of the loop workflow as SCOPE: PEER SCOPE DISK NAME COMMAND...
scope_run() {
  local peer=$1 scope=$2 disk=$3 name=$4; shift 4
  local file="$OUT/loop.$scope" run dir t0 t1 count
  for run in warmup timed; do
    dir=$(mktemp -d "$disk/side-by-side-scope.XXXXXX")
    mkdir -p "$dir/.raymond"
    t0=$(date +%s.%N)
    (cd "$dir" && "$@" "$file" --quiet --no-debug > "$dir.out" 2>&1)
    t1=$(date +%s.%N)
    count=$(cat "$dir"/.bench/*.n 2>/dev/null || echo 0)
    if [ "$count" != "$BENCH_N" ]; then
      # The run's output stays for a look; every other run's goes with its directory.
      echo "  !! $peer $scope $run on $name: the loop ran $count of $BENCH_N steps; see $dir.out" >&2
    else
      rm -f "$dir.out"
      if [ "$run" = timed ]; then
        printf '%s\t%s\t%s\t%s\n' "$name" "$scope" "$peer" "$(awk "BEGIN{printf \"%.4f\", $t1 - $t0}")" >> "$OUT/scopes.tsv"
      fi
    fi
    rm -rf "$dir"
  done
}
[ "$PASSES" = 0 ] || make_scopes
for pass in $(seq 1 "$PASSES"); do
  for disk in ${DISKS:-/tmp /dev/shm}; do
    if [ $((pass % 2)) = 1 ]; then order="go baton"; else order="baton go"; fi
    name=$([ "$disk" = /tmp ] && echo ext4 || echo tmpfs)
    for peer in $order; do
      if [ "$peer" = go ]; then command=go="$RAYMOND_GO"
      elif [ "${BATON_FORM:-}" = raymond ]; then command=baton="$BATON"
      else command=baton="$KIT/baton-adapter.sh"; fi
      "$KIT/run-peers.sh" -r 1 -u 1 -t "$disk" -w "${WORKFLOWS:-single loop fanout callstack fanout-multi}" \
        -m "${MODES:-nodebug debug}" -o "$OUT/$name-$pass-$peer" "$command" > "$OUT/$name-$pass-$peer.log" 2>&1
    done
    for scope in ${SCOPES-yaml zip}; do
      for peer in $order; do
        if [ "$peer" = go ]; then command=("$RAYMOND_GO"); else command=("$BATON" run --baton-dir .baton); fi
        scope_run "$peer" "$scope" "$disk" "$name" "${command[@]}"
      done
    done
    echo "pass $pass $name done" >&2
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys
out = sys.argv[1]
states = {}
walls = {}
positions = {}
for path in glob.glob(os.path.join(out, "*-*/runs.tsv")):
    disk = os.path.basename(os.path.dirname(path)).split("-")[0]  # ext4-PASS-PEER
    for row in csv.DictReader(open(path), delimiter="\t"):
        # Skip failed runs and the probe run (its scripts also stat the state files).
        if row["ok"] != "1" or row["run"] == "p":
            continue
        key = (disk, row["workflow"], row["mode"], row["peer"])
        walls.setdefault(key, []).append(float(row["wall_s"]))
        # Odd passes run go first, even ones baton.
        run_pass = int(os.path.basename(os.path.dirname(path)).split("-")[1])
        second = (run_pass % 2 == 1) == (row["peer"] == "baton")
        positions.setdefault(key + (second,), []).append(float(row["wall_s"]))
        states[row["workflow"]] = int(row["states"])
med = {key: statistics.median(values) for key, values in walls.items()}
print("| disk | workflow | mode | go | baton | passes |")
print("|---|---|---|---:|---:|---:|")
for disk in ("ext4", "tmpfs"):
    for workflow in ("single", "loop", "fanout", "callstack", "fanout-multi"):
        for mode in ("nodebug", "debug"):
            row = []
            for peer in ("go", "baton"):
                key = (disk, workflow, mode, peer)
                if key not in med:
                    row.append("—")
                elif workflow == "single":
                    row.append(f"{med[key] * 1000:.1f} ms")
                else:
                    base = med.get((disk, "single", mode, peer))
                    row.append(f"{(med[key] - base) * 1000 / (states[workflow] - 1):.2f}" if base else "—")
            passes = len(walls.get((disk, workflow, mode, "baton"), []))
            if not passes:
                continue
            print(f"| {disk} | {workflow} | {mode} | {row[0]} | {row[1]} | {passes} |")
scopes = {}
path = os.path.join(out, "scopes.tsv")
if os.path.exists(path):
    for disk, scope, peer, wall in csv.reader(open(path), delimiter="\t"):
        scopes.setdefault((disk, scope, peer), []).append(float(wall))
for disk in ("ext4", "tmpfs"):
    for scope in ("yaml", "zip"):
        row = []
        for peer in ("go", "baton"):
            values, base = scopes.get((disk, scope, peer)), med.get((disk, "single", "nodebug", peer))
            row.append(f"{(statistics.median(values) - base) * 1000 / (states.get('loop', 501) - 1):.2f}" if values and base else "—")
        passes = len(scopes.get((disk, scope, "baton"), []))
        if passes:
            print(f"| {disk} | loop as {scope} | nodebug | {row[0]} | {row[1]} | {passes} |")
# The one-state run by position in its pass: the peer that goes second starts right
# after the other's whole run on that disk, whose removed files make every file it
# creates cost more on a journal-less ext4 (docs/benchmarks.md, fourth round).
# With an odd number of passes one peer is second more often, so the medians above
# lean on that; this table does not.
print()
print("| disk | one-state run | go first | go second | baton first | baton second |")
print("|---|---|---:|---:|---:|---:|")
for disk in ("ext4", "tmpfs"):
    for mode in ("nodebug", "debug"):
        cells = []
        for peer in ("go", "baton"):
            for second in (False, True):
                values = positions.get((disk, "single", mode, peer, second))
                cells.append(f"{statistics.median(values) * 1000:.1f} ms ({len(values)})" if values else "—")
        if any(cell != "—" for cell in cells):
            print(f"| {disk} | {mode} | " + " | ".join(cells) + " |")
PY
echo "raw runs: $OUT" >&2
