#!/usr/bin/env bash
# The supervisor's verdict on a plan (its <result> popped the frame START or REPLAN
# pushed). Approved: the plan is filed under its nesting level, since a sub-plan
# reuses plan.md, and its step 1 goes to a fresh coder. Rejected: back to the
# planner's conversation, at most MAX_PLAN_REVIEWS times.
set -eu
folder="${BATON_TASK_FOLDER:?}"
depth=$(cat "$folder/depth" 2>/dev/null || echo 0)
level="$folder/levels/$depth"
mkdir -p "$level"
# A tag attribute has no escapes: no double quotes, no angle brackets, one line.
summary=$(printf '%s' "${BATON_INPUT:-}" | head -c 400 | tr '"<>\n' "'() ")

case "${BATON_INPUT:-}" in
  APPROVE*)
    if [ -f "$folder/plan.md" ]; then mv "$folder/plan.md" "$level/plan.md"; fi
    echo 1 > "$level/step"
    echo 0 > "$level/attempts"
    : > "$level/failed"
    rm -f "$level/rejections" "$folder/test-report.md"
    echo "Step 1 of the plan in $level/plan.md (nesting level $depth)" > "$folder/current-step"
    echo "<reset input=\"Your step: step 1 of the plan in $level/plan.md (nesting level $depth).\">CODE</reset>" ;;
  *)
    rejections=$(( $(cat "$level/rejections" 2>/dev/null || echo 0) + 1 ))
    echo "$rejections" > "$level/rejections"
    max="${MAX_PLAN_REVIEWS:-3}"
    if [ "$rejections" -lt "$max" ]; then
      echo "<goto input=\"$summary\">REPLAN</goto>"
    elif [ "$depth" -gt 0 ]; then
      echo "<result>SUBPLAN FAILED: the supervisor rejected the level $depth plan $rejections times. $summary</result>"
    else
      echo "<result>Stopped: the supervisor rejected the plan $rejections times (MAX_PLAN_REVIEWS=$max). $summary</result>"
    fi ;;
esac
