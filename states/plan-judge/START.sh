#!/usr/bin/env bash
# Plan -> validate -> implement -> judge, refined with accumulated feedback and a
# capped number of rounds (the design of seed 000). This script costs no tokens:
# it keeps the goal in a file, because every later prompt (and a fresh planner
# after a hard failure) reads it from there, and starts the feedback log afresh.
set -eu
folder="${BATON_TASK_FOLDER:?}"
goal="${BATON_INPUT:-}"
if [ -z "$goal" ]; then
  echo "give the goal with --input" >&2
  exit 2
fi
mkdir -p "$folder"
printf '%s\n' "$goal" > "$folder/goal.md"
: > "$folder/feedback.md"          # the judge's and the validator's verdicts, appended
rm -f "$folder/plan.md" "$folder/rounds" "$folder/plan-attempts"
echo "<print>goal saved to $folder/goal.md</print>"
echo "<goto input=\"Write the first plan.\">PLAN</goto>"
