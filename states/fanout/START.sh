#!/usr/bin/env bash
# Fans out one worker per word, then joins them: the workers run concurrently,
# and this agent waits — without polling — until every one has ended, then goes
# on at GATHER with their results (`docs/join.md`).
# A word travels in a file, words/N, in this agent's task folder, which the
# workers share (task="inherit"), and the fork tag carries only the index N:
# a tag attribute has no escapes (a value cannot hold its own quote, or `>`),
# so any word at all survives only outside the tag.
folder="${BATON_TASK_FOLDER:?}"
rm -rf "$folder/words"
mkdir -p "$folder/words"
set -f  # split the input on whitespace, but never expand a word like * as a glob
words=(${BATON_INPUT:-baton runs workflows})
set +f
for index in "${!words[@]}"; do
  printf '%s' "${words[index]}" > "$folder/words/$index"
  echo "<fork task=\"inherit\" item=\"$index\">WORKER</fork>"
done
# The join is the continuation of this multi-fork: GATHER runs once every
# worker has ended, with $BATON_RESULTS naming their results in fork order.
echo "<join>GATHER</join>"
