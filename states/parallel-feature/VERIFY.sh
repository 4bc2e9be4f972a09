#!/usr/bin/env bash
# Runs the project's tests (TEST_COMMAND, default `make test`) on the merged
# checkout, without spending tokens. Failures go to the fixer, at most
# MAX_FIX_ROUNDS times (default 3); then the run ends with what is left.
set -u
command="${TEST_COMMAND:-make test}"
rounds_file="$BATON_TASK_FOLDER/fix-rounds"
rounds=$(cat "$rounds_file" 2>/dev/null || echo 0)
if output=$(bash -c "$command" 2>&1); then
  echo "<result>Feature built by three parallel workers and merged; tests pass after $rounds fix round(s). Report: $BATON_TASK_FOLDER/merge-report.md</result>"
elif [ "$rounds" -ge "${MAX_FIX_ROUNDS:-3}" ]; then
  echo "<result>Tests still fail after $rounds fix round(s); stopping. Report: $BATON_TASK_FOLDER/merge-report.md</result>"
else
  echo $((rounds + 1)) > "$rounds_file"
  tail=$(printf '%s' "$output" | tail -n 30 | tr '"' "'")
  echo "<goto input=\"The tests fail ($command). Last lines:
$tail\">FIX</goto>"
fi
