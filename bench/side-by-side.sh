#!/usr/bin/env bash
# side-by-side.sh — Baton against raymond-go, interleaved: PASSES passes of
# ../shared/bench/run-peers.sh (one timed run per workflow and mode, per peer), the
# peer order flipped every pass and the disks (ext4 under /tmp, tmpfs under /dev/shm)
# alternated, so drift on the machine hits both peers alike; `sync` before each
# peer's batch, so neither pays for flushing the other's writes. Prints, per disk,
# workflow and mode, the median over passes of the marginal ms per transition
# (the `single` row: the whole run in ms).
#
# Usage: BATON=target/release/baton RAYMOND_GO=/tmp/peers/raymond-go/ray \
#          bench/side-by-side.sh [PASSES] [OUTDIR]
#        bench/side-by-side.sh --summary OUTDIR      (the table again, from the runs kept)
# WORKFLOWS, MODES and DISKS (e.g. "single loop", "nodebug", "/tmp") narrow a run.
# Build raymond-go first: see ../shared/bench/README.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KIT=${KIT:-$HERE/../../shared/bench}
if [ "${1:-}" = --summary ]; then PASSES=0; OUT=$2; else
  PASSES=${1:-5}
  OUT=${2:-$(mktemp -d /tmp/side-by-side.XXXXXX)}
  : "${BATON:?set BATON to the baton binary}" "${RAYMOND_GO:?set RAYMOND_GO to the raymond-go binary}"
fi
mkdir -p "$OUT"
export BATON
for pass in $(seq 1 "$PASSES"); do
  for disk in ${DISKS:-/tmp /dev/shm}; do
    if [ $((pass % 2)) = 1 ]; then order="go baton"; else order="baton go"; fi
    name=$([ "$disk" = /tmp ] && echo ext4 || echo tmpfs)
    for peer in $order; do
      if [ "$peer" = go ]; then command=go="$RAYMOND_GO"; else command=baton="$KIT/baton-adapter.sh"; fi
      # Each peer starts with nothing dirty in the page cache: raymond-go never syncs,
      # so without this Baton's one sync at the end of a run would also flush the
      # thousands of files the other peer just wrote (ext4 commits them together).
      sync
      "$KIT/run-peers.sh" -r 1 -u 1 -t "$disk" -w "${WORKFLOWS:-single loop fanout callstack fanout-multi}" \
        -m "${MODES:-nodebug debug}" -o "$OUT/$name-$pass-$peer" "$command" > "$OUT/$name-$pass-$peer.log" 2>&1
    done
    echo "pass $pass $name done" >&2
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, os, statistics, sys
out = sys.argv[1]
states = {}
walls = {}
for path in glob.glob(os.path.join(out, "*-*/runs.tsv")):
    disk = os.path.basename(os.path.dirname(path)).split("-")[0]  # ext4-PASS-PEER
    for row in csv.DictReader(open(path), delimiter="\t"):
        # Skip failed runs and the probe run (its scripts also stat the state files).
        if row["ok"] != "1" or row["run"] == "p":
            continue
        key = (disk, row["workflow"], row["mode"], row["peer"])
        walls.setdefault(key, []).append(float(row["wall_s"]))
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
PY
echo "raw runs: $OUT" >&2
