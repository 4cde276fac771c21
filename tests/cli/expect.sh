#!/usr/bin/env bash
# Runs a command and checks both its exit status and its output.
# Usage: expect.sh EXIT_STATUS REGEX -- COMMAND...   (EXIT_STATUS "nonzero" accepts any failure)
set -uo pipefail
want=$1 pattern=$2
shift 3
output=$("$@" 2>&1)
status=$?
echo "$output"
echo "-- exit status $status"
if [ "$want" = nonzero ]; then
  [ "$status" -ne 0 ] || { echo "FAIL: expected a failure, got exit status 0"; exit 1; }
elif [ "$status" -ne "$want" ]; then
  echo "FAIL: expected exit status $want"; exit 1
fi
grep -Ezq -- "$pattern" <<<"$output" || { echo "FAIL: output does not match: $pattern"; exit 1; }
