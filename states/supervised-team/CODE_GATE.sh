#!/usr/bin/env bash
# The supervisor's verdict on the coder's change. Approved: a tester with a fresh
# context tests the step. Rejected: back to the coder's conversation (the frame
# restored its session) with the corrections; a step that fails MAX_ATTEMPTS
# reviews (code or test) counts as blocked and gets a sub-plan.
set -eu
folder="${BATON_TASK_FOLDER:?}"
depth=$(cat "$folder/depth" 2>/dev/null || echo 0)
level="$folder/levels/$depth"
step=$(cat "$level/step")
summary=$(printf '%s' "${BATON_INPUT:-}" | head -c 400 | tr '"<>\n' "'() ")

case "${BATON_INPUT:-}" in
  APPROVE*)
    echo "<reset input=\"Test step $step of the plan in $level/plan.md (nesting level $depth). The supervisor approved the code: $summary\">TEST</reset>" ;;
  *)
    attempts=$(( $(cat "$level/attempts") + 1 ))
    echo "$attempts" > "$level/attempts"
    if [ "$attempts" -lt "${MAX_ATTEMPTS:-3}" ]; then
      echo "<goto input=\"The supervisor rejected your change for step $step of $level/plan.md (attempt $attempts): $summary\">CODE</goto>"
    else
      echo "<goto input=\"the supervisor rejected the change $attempts times: $summary\">BLOCKED</goto>"
    fi ;;
esac
