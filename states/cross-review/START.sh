#!/usr/bin/env bash
# Keeps the task in a file, since every later prompt reads it from there: the
# implementer's conversation does not survive a review (the reviewer runs on
# another backend, and a session never crosses backends), so nothing may live
# only in it. Costs no tokens.
set -eu
folder="${BATON_TASK_FOLDER:?}"
task="${BATON_INPUT:-}"
if [ -z "$task" ]; then
  echo "give the change to make with --input" >&2
  exit 2
fi
mkdir -p "$folder"
printf '%s\n' "$task" > "$folder/task.md"
rm -f "$folder/rounds"
echo "<print>task saved to $folder/task.md</print>"
echo "<goto input=\"Nothing has been reviewed yet.\">IMPLEMENT</goto>"
