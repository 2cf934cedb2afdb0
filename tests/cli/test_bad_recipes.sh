# Every bad recipe folder in tests/data/recipes/bad is refused with exactly
# the messages in its expected.txt (file:line:col, the line, a caret), exit
# code 5, nothing on stdout and no output written.
. "$(dirname "$0")/lib.sh"
cd "$NPL_DATA/recipes/bad" || exit 1
n=0
for dir in */; do
	case=${dir%/}
	n=$((n + 1))
	for cmd in list "render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms -o $T/out-$case"; do
		# shellcheck disable=SC2086
		expect_rc 5 "$NPL" --recipes "$case" $cmd
		if ! diff -u "$case/expected.txt" "$T/err" >"$T/diff"; then
			fail "$case ($cmd): messages differ: $(cat "$T/diff")"
		fi
		[[ -s $T/out ]] && fail "$case ($cmd): wrote to stdout: $(head -c 500 "$T/out")"
	done
	[[ -e $T/out-$case ]] && fail "$case: render left $T/out-$case behind"
done
((n >= 7)) || fail "only $n bad recipe cases"
finish
