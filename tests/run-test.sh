#!/bin/sh
# Runs one test with a time limit, so that a hang fails the test instead of
# the whole run. ST_TEST_TIMEOUT overrides the limit (seconds).
exec timeout -k 10 "${ST_TEST_TIMEOUT:-300}" "$@"
