echo '<goto input="1">STEP</goto>'
