#!/usr/bin/env bash
# The judge's verdict comes back here (its <result> popped the frame IMPLEMENT
# pushed). Every verdict is appended to the feedback log; the log is trimmed
# oldest-first (FIFO) to MAX_FEEDBACK_BYTES so that prompts reading it stay small.
# Rounds are capped at MAX_ROUNDS: then the run ends with a <result> saying so.
set -eu
folder="${BATON_TASK_FOLDER:?}"
log="$folder/feedback.md"
verdict="${BATON_INPUT:-}"
round=$(( $(cat "$folder/rounds" 2>/dev/null || echo 0) + 1 ))
echo "$round" > "$folder/rounds"
max="${MAX_ROUNDS:-3}"

case "$verdict" in
  PASS*) kind=judge_pass ;;
  HARD*) kind=judge_hard_failure ;;
  *) kind=judge_soft_failure ;;   # SOFT, or a verdict the judge did not label
esac
printf '### Round %s - %s\n%s\n\n' "$round" "$kind" "$verdict" >> "$log"

# FIFO trimming: drop whole entries, oldest first, until the log fits.
limit="${MAX_FEEDBACK_BYTES:-8000}"
while [ "$(wc -c < "$log")" -gt "$limit" ] && [ "$(grep -c '^### Round' "$log")" -gt 1 ]; do
  awk 'BEGIN { n = 0 } /^### Round/ { n++ } n != 1' "$log" > "$log.tmp" && mv "$log.tmp" "$log"
done
entries=$(grep -c '^### Round' "$log" || true)

summary=$(printf '%s' "$verdict" | head -c 300 | tr '"<>\n' "'() ")
if [ "$kind" = judge_pass ]; then
  echo "<result>Passed in round $round of $max. $summary. Plan: $folder/plan.md</result>"
elif [ "$round" -ge "$max" ]; then
  echo "<result>Stopped after $round of $max rounds without a passing verdict (MAX_ROUNDS). Last verdict: $summary. All $entries feedback entries: $log</result>"
elif [ "$kind" = judge_hard_failure ]; then
  # The approach is wrong: a fresh planner (no stale context) re-plans from the log.
  echo "<reset input=\"Round $round: the judge rejected the plan: $summary\">PLAN</reset>"
else
  # Back to the implementer's own conversation (the frame restored its session).
  echo "<goto input=\"Round $round: the judge asks for fixes: $summary\">IMPLEMENT</goto>"
fi
