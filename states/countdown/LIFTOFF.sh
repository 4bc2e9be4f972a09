#!/usr/bin/env bash
echo "<result>Liftoff!</result>"
