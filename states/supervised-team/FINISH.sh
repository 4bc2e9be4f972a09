#!/usr/bin/env bash
# The supervisor's verdict on the whole goal. Met: done. Not met: another cycle of
# planning for what remains, at most MAX_CYCLES cycles (the time box, --time-limit,
# may pause the run before that; `baton resume` continues it).
set -eu
folder="${BATON_TASK_FOLDER:?}"
level="$folder/levels/0"
summary=$(printf '%s' "${BATON_INPUT:-}" | head -c 400 | tr '"<>\n' "'() ")
cycles=$(( $(cat "$folder/cycles" 2>/dev/null || echo 0) + 1 ))
echo "$cycles" > "$folder/cycles"
max="${MAX_CYCLES:-2}"
case "${BATON_INPUT:-}" in
  APPROVE*)
    echo "<result>Goal achieved in $cycles cycle(s): $summary. Plans and logs: $folder/levels</result>" ;;
  *)
    if [ "$cycles" -ge "$max" ]; then
      echo "<result>Stopped after $cycles cycle(s) (MAX_CYCLES=$max): the supervisor did not confirm the goal. $summary</result>"
    else
      echo "<reset input=\"Continue toward the goal on the first line of $level/plan.md. The supervisor found it not yet met: $summary\">START</reset>"
    fi ;;
esac
