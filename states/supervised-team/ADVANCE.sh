#!/usr/bin/env bash
# Records how the current step ended ("done" or "failed: why") and moves on: the
# next step of this level's plan to a fresh coder; when there is none, a sub-plan
# returns its outcome to the level above (<result> pops the <call> frame), and the
# top level asks the supervisor to verify the whole goal.
set -eu
folder="${BATON_TASK_FOLDER:?}"
depth=$(cat "$folder/depth" 2>/dev/null || echo 0)
level="$folder/levels/$depth"
step=$(cat "$level/step")
outcome="${BATON_INPUT:-done}"
echo "step $step: $outcome" >> "$level/log"
case "$outcome" in
  done) ;;
  *) echo "$step" >> "$level/failed" ;;
esac
rm -f "$folder/test-report.md"

next=$((step + 1))
if grep -qE "^[[:space:]]*$next[.)][[:space:]]" "$level/plan.md" 2>/dev/null; then
  echo "$next" > "$level/step"
  echo 0 > "$level/attempts"
  echo "Step $next of the plan in $level/plan.md (nesting level $depth)" > "$folder/current-step"
  echo "<reset input=\"Your step: step $next of the plan in $level/plan.md (nesting level $depth).\">CODE</reset>"
  exit 0
fi

failed=$(tr '\n' ' ' < "$level/failed" | sed 's/ *$//')
summary="$step step(s) at nesting level $depth, failed: ${failed:-none}; log in $level/log"
if [ "$depth" -gt 0 ]; then
  if [ -z "$failed" ]; then
    echo "<result>SUBPLAN DONE: $summary</result>"
  else
    echo "<result>SUBPLAN FAILED: $summary</result>"
  fi
else
  echo "<function return=\"FINISH\" input=\"Verify the whole goal (first line of $level/plan.md) is met: $summary.\">SUPERVISE</function>"
fi
