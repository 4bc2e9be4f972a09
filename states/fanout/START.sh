#!/usr/bin/env bash
# Fans out one worker per word; the workers run concurrently and share this
# agent's task folder (task="inherit"), where each drops its part of the answer.
mkdir -p "$BATON_TASK_FOLDER/parts"
words="${BATON_INPUT:-baton runs workflows}"
count=0
for word in $words; do
  echo "<fork task=\"inherit\" word=\"$word\">WORKER</fork>"
  count=$((count + 1))
done
echo "$count" > "$BATON_TASK_FOLDER/parts/expected"
# The parent continues at GATHER while the workers run. (In a multi-fork the
# continuation carries no input, spec R3.45, hence the file above.)
echo "<goto>GATHER</goto>"
