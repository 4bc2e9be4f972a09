#!/usr/bin/env bash
# $word comes from the fork tag's extra attribute (only in the worker's first state).
length=${#word}
sleep 0.$((RANDOM % 5))
echo "$word=$length" > "$BATON_TASK_FOLDER/parts/$BATON_AGENT_ID.tmp"
mv "$BATON_TASK_FOLDER/parts/$BATON_AGENT_ID.tmp" "$BATON_TASK_FOLDER/parts/$BATON_AGENT_ID.txt"
echo "<print>$word has $length letters</print>"
echo "<result>$word=$length</result>"
