#!/usr/bin/env bash
# Every outcome of the coder's work comes here, and this script owns the escalation
# ladder (no tokens): the coder retries up to MAX_ATTEMPTS times; then the architect
# (fresh context) gives guidance and the coder gets MAX_ATTEMPTS more; still stuck,
# or the architect needs a decision, the PM asks the user. Escalating to a person is
# preferred over failing. The level is kept in the task folder:
# 0 = coder, 1 = architect, 2 = PM.
set -eu
folder="${BATON_TASK_FOLDER:?}"
input="${BATON_INPUT:-}"
level=$(cat "$folder/escalation" 2>/dev/null || echo 0)
attempts=$(cat "$folder/attempts" 2>/dev/null || echo 0)
max="${MAX_ATTEMPTS:-3}"
# A tag attribute has no escapes: no double quotes, no angle brackets, one line.
summary=$(printf '%s' "$input" | head -c 400 | tr '"<>\n' "'() ")

to_pm() {
  echo 2 > "$folder/escalation"
  echo "<print>escalation: to the PM, who asks the user</print>"
  # The PM starts fresh; the files in the task folder are the whole story.
  echo "<reset input=\"$1\">PM</reset>"
}

case "$input" in
  APPROVED*)
    echo "<result>Done, approved by the architect at escalation level $level: $summary. Story: $folder/spec.md</result>"
    exit 0 ;;
  GUIDANCE:*)
    printf -- '- %s\n' "$summary" >> "$folder/guidance.md"
    # Back to the coder's own conversation, which the <function> frame restored.
    echo "<goto input=\"The architect's guidance: $summary\">CODE</goto>"
    exit 0 ;;
  NEEDS_DECISION:*)
    to_pm "The architect needs a decision from the user: $summary"
    exit 0 ;;
  DECIDED:*)
    # The user decided and the PM revised the story: a fresh coder, a fresh ladder.
    echo 0 > "$folder/escalation"
    echo 0 > "$folder/attempts"
    echo "<reset input=\"The story was revised after a decision by the user: $summary\">CODE</reset>"
    exit 0 ;;
esac

# A failed attempt: failing tests, requested changes, or the coder is stuck.
attempts=$((attempts + 1))
echo "$attempts" > "$folder/attempts"
printf -- '- level %s, attempt %s: %s\n' "$level" "$attempts" "$summary" >> "$folder/problems.md"
if [ "$attempts" -lt "$max" ]; then
  echo "<goto input=\"Attempt $attempts of $max failed: $summary\">CODE</goto>"
elif [ "$level" -eq 0 ]; then
  echo 1 > "$folder/escalation"
  echo 0 > "$folder/attempts"
  echo "<print>escalation: the coder is stuck after $attempts attempts; to the architect</print>"
  echo "<function return=\"TRIAGE\" input=\"The coder failed $attempts attempts; the last one: $summary\">ARCHITECT</function>"
else
  to_pm "The coder is still stuck after the architect's guidance and $attempts more attempts; the last one: $summary"
fi
