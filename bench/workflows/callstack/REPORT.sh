echo "<result>depth $BATON_INPUT</result>"
