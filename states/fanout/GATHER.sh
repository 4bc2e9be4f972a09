#!/usr/bin/env bash
# Waits (up to 60 s) for every worker's part, then adds up the letters.
expected=$(cat "$BATON_TASK_FOLDER/parts/expected")
for _ in $(seq 600); do
  found=$(find "$BATON_TASK_FOLDER/parts" -name '*.txt' | wc -l)
  [ "$found" -ge "$expected" ] && break
  sleep 0.1
done
if [ "$found" -lt "$expected" ]; then
  echo "only $found of $expected parts arrived" >&2
  exit 1
fi
total=0
for ((index = 0; index < expected; index++)); do
  total=$((total + $(cat "$BATON_TASK_FOLDER/parts/$index.txt")))
done
echo "<result>$expected words, $total letters</result>"
