#!/usr/bin/env bash
# Fans out one worker per word; the workers run concurrently and share this
# agent's task folder (task="inherit"), where each drops its part of the answer.
# A word travels in a file, words/N, and the fork tag carries only the index N:
# a tag attribute has no escapes (a value cannot hold its own quote, or `>`),
# so any word at all survives only outside the tag.
folder="${BATON_TASK_FOLDER:?}"
rm -rf "$folder/words" "$folder/parts"
mkdir -p "$folder/words" "$folder/parts"
set -f  # split the input on whitespace, but never expand a word like * as a glob
words=(${BATON_INPUT:-baton runs workflows})
set +f
for index in "${!words[@]}"; do
  printf '%s' "${words[index]}" > "$folder/words/$index"
  echo "<fork task=\"inherit\" item=\"$index\">WORKER</fork>"
done
echo "${#words[@]}" > "$folder/parts/expected"
# The parent continues at GATHER while the workers run. (In a multi-fork the
# continuation carries no input, spec R3.45, hence the file above.)
echo "<goto>GATHER</goto>"
