# Every bad recipe folder in tests/data/recipes/bad is refused with exactly
# the messages in its expected.txt (file:line:col, the line, a caret), exit
# code 5, nothing on stdout and no output written.
# shellcheck shell=bash source=lib.sh
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

# the shipped engine-flag registry is compiled at build time: an error in it fails the build,
# located, and leaves no table behind; the good one gives the build's table, byte for byte
gen=${NPL_ENGINE_GEN:?the build sets NPL_ENGINE_GEN}
reg=recipes/engine/sglang-flags.yaml
sed '0,/: {type: int}/s//: {type: integer}/' "$NPL_SRC/$reg" >"$T/bad-flags.yaml"
expect_rc 1 "$gen" "$T/bad-flags.yaml" "$reg" "$T/table.c"
expect_grep "$T/err" "$reg:"
expect_grep "$T/err" "error: unknown flag type 'integer' (bool, int, float, string, list)"
[[ -e $T/table.c || -e $T/table.c.tmp ]] && fail "npl-engine-gen left a table after an error"
expect_rc 2 "$gen" "$NPL_SRC/$reg"
expect_rc 1 "$gen" "$T/no-such.yaml" "$reg" "$T/table.c"
expect_rc 0 "$gen" "$NPL_SRC/$reg" "$reg" "$T/table.c"
cmp -s "$T/table.c" "$NPL_BUILD/engine_table.c" || fail "npl-engine-gen output differs from the build's table"
finish
