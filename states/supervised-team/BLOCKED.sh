#!/usr/bin/env bash
# A blocked step gets a sub-plan: the planner is <call>ed (it forks the blocked
# agent's conversation, so it sees why), and the sub-plan's <result> comes back to
# SUBDONE. The nesting depth lives in the task folder, which every level shares;
# at MAX_DEPTH (3 levels of sub-plans) deeper nesting is refused and the step fails.
set -eu
folder="${BATON_TASK_FOLDER:?}"
depth=$(cat "$folder/depth" 2>/dev/null || echo 0)
level="$folder/levels/$depth"
step=$(cat "$level/step")
max="${MAX_DEPTH:-3}"
reason=$(printf '%s' "${BATON_INPUT:-no reason given}" | head -c 400 | tr '"<>\n' "'() ")

if [ "$depth" -ge "$max" ]; then
  echo "<print>step $step at nesting level $depth is blocked; no deeper sub-plan (MAX_DEPTH=$max)</print>"
  echo "<goto input=\"failed: blocked at the deepest nesting level ($reason)\">ADVANCE</goto>"
  exit 0
fi
new=$((depth + 1))
echo "$new" > "$folder/depth"
rm -rf "$folder/levels/$new"
echo "<print>step $step at nesting level $depth is blocked: sub-plan at level $new</print>"
echo "<call return=\"SUBDONE\" input=\"A sub-plan (nesting level $new of at most $max) to unblock step $step of the plan in $level/plan.md. It is blocked because: $reason\">START</call>"
