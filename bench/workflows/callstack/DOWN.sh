n=$BATON_INPUT
if [ "$n" -le 0 ]; then echo '<result>0</result>'; else echo "<call return=\"UP\" input=\"$((n - 1))\">DOWN</call>"; fi
