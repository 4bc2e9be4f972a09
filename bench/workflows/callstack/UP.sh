echo "<result>$((BATON_INPUT + 1))</result>"
