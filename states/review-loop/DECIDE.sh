#!/usr/bin/env bash
# Receives the reviewer's verdict (its <result> popped the frame pushed by TEST).
rounds_file="$BATON_TASK_FOLDER/review-rounds"
rounds=$(( $(cat "$rounds_file" 2>/dev/null || echo 0) + 1 ))
echo "$rounds" > "$rounds_file"
verdict="$BATON_INPUT"
case "$verdict" in
  APPROVED*)
    echo "<result>Approved after $rounds review round(s). Plan: $BATON_TASK_FOLDER/plan.md</result>" ;;
  *)
    feedback=$(printf '%s' "$verdict" | tr '"' "'")
    if [ "$rounds" -ge "${MAX_REVIEW_ROUNDS:-3}" ]; then
      # Too many rounds: start over with a fresh context and the last feedback.
      echo "0" > "$rounds_file"
      echo "<reset input=\"The previous attempt was rejected $rounds times. Last review: $feedback\">START</reset>"
    else
      # Back to the implementer, whose session (and context) the goto keeps.
      echo "<goto input=\"Review feedback: $feedback\">IMPLEMENT</goto>"
    fi ;;
esac
