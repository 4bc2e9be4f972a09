echo '<result>forked</result>'
