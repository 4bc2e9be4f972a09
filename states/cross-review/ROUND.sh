#!/usr/bin/env bash
# Counts review rounds in the task folder (no tokens) and caps them at MAX_ROUNDS
# (default 3): below the cap the change goes to the reviewer, above it the run
# ends with a <result> saying it was not approved.
set -eu
folder="${BATON_TASK_FOLDER:?}"
max="${MAX_ROUNDS:-3}"
case "$max" in
  '' | *[!0-9]* | 0*)
    echo "MAX_ROUNDS must be a whole number of at least 1, got '$max'" >&2
    exit 2 ;;
esac
round=$(( $(cat "$folder/rounds" 2>/dev/null || echo 0) + 1 ))
if [ "$round" -gt "$max" ]; then
  echo "<result>Not approved after $max review round(s) (MAX_ROUNDS): the last findings were addressed but not reviewed again. Task: $folder/task.md</result>"
else
  echo "$round" > "$folder/rounds"
  echo "<print>review round $round of $max</print>"
  echo "<goto input=\"This is review round $round of at most $max.\">REVIEW</goto>"
fi
