#!/usr/bin/env bash
# $item (the fork tag's extra attribute, set only in the worker's first state)
# is this worker's index; its word is in words/$item, written by START.
export LC_ALL=C.UTF-8 2>/dev/null  # a letter is a character, not a byte: é counts 1
word=$(< "$BATON_TASK_FOLDER/words/$item")
length=${#word}
sleep 0.$((RANDOM % 5))
# The word itself goes to stderr only: on stdout, a word such as <goto>X</goto>
# would count as a second transition tag.
printf '<print>%s has %d letters</print>\n' "$word" "$length" >&2
echo "<result>word $item has $length letters</result>"
