#!/usr/bin/env bash
# A sub-plan's <result> popped its frame: back one nesting level, and the step that
# was blocked is done if every step of its sub-plan was, failed otherwise.
set -eu
folder="${BATON_TASK_FOLDER:?}"
depth=$(cat "$folder/depth")
echo $((depth - 1)) > "$folder/depth"
summary=$(printf '%s' "${BATON_INPUT:-}" | head -c 400 | tr '"<>\n' "'() ")
case "${BATON_INPUT:-}" in
  "SUBPLAN DONE"*) echo "<goto input=\"done\">ADVANCE</goto>" ;;
  *) echo "<goto input=\"failed: $summary\">ADVANCE</goto>" ;;
esac
