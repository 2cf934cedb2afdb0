# render --all --jobs N: the recipes rendered N at a time (the default: one worker per CPU)
# write the same files, say the same messages in the same order and exit with the same status
# as when they are rendered in turn (--jobs 1): with the shipped recipes for each target, and
# with a folder of recipes that fail, warn and flood standard error.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

site=(--model-path /models/m --draft-model-path /models/d --ifname eth0)

# same_as_one WHAT GLOBAL-OPTION... -- RENDER-OPTION...: render --all into $T/o at --jobs 1, then
# by default (one worker per CPU), at 3 and at 16 workers (more than CPUs), or at the counts
# NPL_JOBS_COUNTS lists (the ThreadSanitizer pass of tests/run-all.sh takes one); each run's
# exit status, standard output and error, and folder are the first's. The first run's stay in
# $T/one.out, $T/one.err, $one_rc and $T/j1.
same_as_one() {
	local what=$1 pre=() j
	shift
	while [[ $1 != -- ]]; do pre+=("$1"); shift; done
	shift
	rm -rf "$T/o" "$T/j1"
	run "$NPL" "${pre[@]}" render --all -o "$T/o" --jobs 1 "$@"
	one_rc=$rc
	mv "$T/out" "$T/one.out"
	mv "$T/err" "$T/one.err"
	[[ -e $T/o ]] && mv "$T/o" "$T/j1"
	for j in ${NPL_JOBS_COUNTS:-default 3 16}; do
		local jobs=(--jobs "$j")
		[[ $j == default ]] && jobs=()
		rm -rf "$T/o"
		run "$NPL" "${pre[@]}" render --all -o "$T/o" "${jobs[@]}" "$@"
		[[ $rc == "$one_rc" ]] || fail "$what, --jobs $j: exit $rc, in turn $one_rc"
		cmp -s "$T/err" "$T/one.err" || fail "$what, --jobs $j: standard error differs: $(diff "$T/one.err" "$T/err" | head -20)"
		cmp -s "$T/out" "$T/one.out" || fail "$what, --jobs $j: standard output differs: $(diff "$T/one.out" "$T/out" | head -20)"
		if [[ -e $T/j1 || -e $T/o ]]; then
			diff -r "$T/j1" "$T/o" >/dev/null || fail "$what, --jobs $j: the folders differ: $(diff -rq "$T/j1" "$T/o" | head -5)"
		fi
	done
}

# the shipped recipes, every target
same_as_one "scripts" -- --json
expect_eq "$one_rc" 0 "render --all"
expect_eq "$(find "$T/j1" -name manifest.json | wc -l)" 61 "render --all: a manifest per recipe"
expect_grep "$T/one.err" "warning: the same for"
same_as_one "--check of a folder that is not there" -- --check
expect_eq "$one_rc" 1 "render --all --check without the folder"
for tg in k8s rbg docker slurm; do
	same_as_one "--target $tg" -- --target "$tg" "${site[@]}"
	expect_eq "$one_rc" 0 "render --all --target $tg"
done
# a target refusing what the recipes lack: the same refusals, in the same order
same_as_one "--target docker without a model path" -- --target docker
expect_eq "$one_rc" 2 "render --all --target docker without --model-path"

# 40 more recipes, a third of them with flags SGLang does not know: errors, recipe after recipe,
# more than the 100 one flush prints (each recipe's are printed after it, as in turn)
"$NPL_SRC/bench/gen-db.sh" 40 "$T/db" || fail "gen-db.sh"
n=0
while IFS= read -r f; do
	n=$((n + 1))
	((n % 3)) && continue
	awk -v n="$n" '!done && /^(    )?flags:$/ { print; ind = substr($0, 1, index($0, "f") - 1)
		for (k = 0; k < 9; k++) printf "%s  no-such-flag-%d-%d: 1\n", ind, n, k; done = 1; next } { print }' \
		"$f" >"$f.new" && mv "$f.new" "$f"
done < <(find "$T/db" -name '*.yaml' | sort)
bad=$(grep -rl no-such-flag "$T/db" | wc -l)
((bad > 10)) || fail "only $bad recipes have unknown flags"
same_as_one "unknown flags" --recipes "$T/db" --
expect_eq "$one_rc" 5 "render --all with unknown flags"
expect_eq "$(grep -c "error: .*no-such-flag-" "$T/one.err")" $((9 * bad)) "errors printed, recipe after recipe"
expect_nogrep "$T/one.err" "not shown"
[[ -e $T/j1 ]] && fail "render --all with errors wrote $T/j1"
same_as_one "unknown flags, --quiet" --recipes "$T/db" -- --quiet
expect_eq "$(grep -c "warning" "$T/one.err")" 0 "--quiet: no warnings"
same_as_one "unknown flags allowed" --recipes "$T/db" -- --allow-unknown-flag
expect_eq "$one_rc" 0 "render --all --allow-unknown-flag"
expect_grep "$T/one.err" "warning: the same for"
same_as_one "unknown flags, --target k8s" --recipes "$T/db" -- --target k8s "${site[@]}"
# recipes the target refuses (usage), then invalid ones: the invalid recipes' status wins
same_as_one "unknown flags, --target docker without a model path" --recipes "$T/db" -- --target docker
expect_eq "$one_rc" 5 "render --all --target docker, invalid recipes among refused ones"

# --jobs is a count of workers, for --all
expect_rc 2 "$NPL" render --all -o "$T/x" --jobs 0
expect_grep "$T/err" "--jobs"
expect_rc 2 "$NPL" render --all -o "$T/x" --jobs two
expect_rc 2 "$NPL" render --all -o "$T/x" --jobs 1025
expect_rc 2 "$NPL" render qwen3-8b-w8a8-1p-in3k5-out1k5-5ms --jobs 2
expect_grep "$T/err" "--all"
[[ -e $T/x ]] && fail "a refused --jobs wrote $T/x"
finish
