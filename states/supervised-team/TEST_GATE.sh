#!/usr/bin/env bash
# The supervisor's verdict on the tester's report. Approved: the step is complete.
# Rejected: a fresh coder applies the tester's fix plan (test-report.md); after
# MAX_ATTEMPTS reviews of this step the step counts as blocked.
set -eu
folder="${BATON_TASK_FOLDER:?}"
depth=$(cat "$folder/depth" 2>/dev/null || echo 0)
level="$folder/levels/$depth"
step=$(cat "$level/step")
summary=$(printf '%s' "${BATON_INPUT:-}" | head -c 400 | tr '"<>\n' "'() ")

case "${BATON_INPUT:-}" in
  APPROVE*)
    echo "<goto input=\"done\">ADVANCE</goto>" ;;
  *)
    attempts=$(( $(cat "$level/attempts") + 1 ))
    echo "$attempts" > "$level/attempts"
    if [ "$attempts" -lt "${MAX_ATTEMPTS:-3}" ]; then
      echo "<reset input=\"Your step: fix step $step of the plan in $level/plan.md (nesting level $depth, attempt $attempts). The tester's fix plan is in $folder/test-report.md; the supervisor adds: $summary\">CODE</reset>"
    else
      echo "<goto input=\"its tests were rejected $attempts times: $summary\">BLOCKED</goto>"
    fi ;;
esac
