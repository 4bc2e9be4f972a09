#!/usr/bin/env bash
# Heuristic validation of the plan: no model, no tokens. A plan that fails goes back
# to the planner's conversation as a follow-up message, and the failure is appended
# to the feedback log; after MAX_PLAN_ATTEMPTS failures in a row the run stops.
set -eu
folder="${BATON_TASK_FOLDER:?}"
plan="$folder/plan.md"
problems=""
if [ ! -s "$plan" ]; then
  problems="$plan is missing or empty."
else
  steps=$(grep -cE '^[[:space:]]*[0-9]+[.)][[:space:]]' "$plan" || true)
  if [ "$steps" -lt 2 ]; then
    problems="$problems The plan has $steps numbered step(s); write at least 2 ('1.', '2.', …)."
  elif [ "$steps" -gt 15 ]; then
    problems="$problems The plan has $steps steps; keep it to 15 or fewer."
  fi
  if ! grep -qi 'test' "$plan"; then
    problems="$problems The plan never mentions tests; say which tests prove the change."
  fi
fi

if [ -z "$problems" ]; then
  rm -f "$folder/plan-attempts"
  # The implementer starts its own conversation (<reset>); the plan is its brief.
  echo "<reset input=\"The plan passed validation ($steps steps).\">IMPLEMENT</reset>"
  exit 0
fi

attempts=$(( $(cat "$folder/plan-attempts" 2>/dev/null || echo 0) + 1 ))
echo "$attempts" > "$folder/plan-attempts"
round=$(( $(cat "$folder/rounds" 2>/dev/null || echo 0) + 1 ))
printf '### Round %s - validation_failure\n%s\n\n' "$round" "$problems" >> "$folder/feedback.md"
if [ "$attempts" -ge "${MAX_PLAN_ATTEMPTS:-3}" ]; then
  echo "<result>Stopped: the plan failed validation $attempts times in a row (MAX_PLAN_ATTEMPTS=${MAX_PLAN_ATTEMPTS:-3}). Last problems:$problems Feedback: $folder/feedback.md</result>"
else
  # A tag attribute has no escapes: the message must hold no double quote.
  message=$(printf '%s' "$problems" | tr '"<>' "'()")
  echo "<goto input=\"The plan failed validation:$message Fix plan.md.\">PLAN</goto>"
fi
