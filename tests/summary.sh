#!/bin/sh
# Prints "N passed, N failed" from the automake test results (.trs files)
# below the build directory given as $1, and fails when a test failed or
# none ran. XFAIL counts as passed, SKIP is reported apart, ERROR and XPASS
# as failed.
dir=${1:-.}
pass=0 fail=0 skip=0
for f in $(find "$dir" -name '*.trs' 2>/dev/null); do
	r=$(sed -n 's/^:test-result: *//p' "$f")
	case $r in
	PASS|XFAIL) pass=$((pass + 1)) ;;
	SKIP) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); echo "FAILED: ${f%.trs}" ;;
	esac
done
[ "$skip" -gt 0 ] && echo "$skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
