#!/usr/bin/env bash
# Runs after START's <join>: $BATON_RESULTS names a JSON array, one object per
# worker in fork order ({"agent_id", "status", "result"}), and $BATON_INPUT
# says the same in words. No polling: every worker has ended by now.
results="${BATON_RESULTS:?GATHER runs after a <join>}"
count=$(grep -c '"agent_id"' "$results")
finished=$(grep -c '"status": "terminated"' "$results")
if [ "$finished" -ne "$count" ]; then
  echo "only $finished of $count workers finished" >&2
  exit 1
fi
total=0
for letters in $(grep -o 'has [0-9]* letters' "$results" | grep -o '[0-9]*'); do
  total=$((total + letters))
done
echo "<result>$count words, $total letters</result>"
