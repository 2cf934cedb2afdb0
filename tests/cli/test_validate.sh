# validate: the shipped recipes are clean; a recipe breaking each rule is
# refused with its location (tests/data/recipes/rules/*/expected.txt); render
# refuses the same; unknown flags need --allow-unknown-flag.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }

# the shipped database: no error; the one flag the seed pages use that upstream lacks warns
expect_rc 0 "$NPL" validate
expect_grep "$T/err" "npulaunch: validate: 61 recipes, 0 errors, 8 warnings"
expect_rc 0 "$NPL" validate --json
expect_eq "$(jq -r '"\(.recipes) \(.errors) \(.warnings)"' "$T/out")" "61 0 8" "validate --json counts"
expect_eq "$(jq -r '[.problems[] | select(.message | test("--max-attempts is not in upstream"))] | length' "$T/out")" 8 \
	"the warnings are the upstream-less --max-attempts"

# every rule, broken, refused and located
cd "$NPL_DATA/recipes" || exit 1
n=0
for dir in rules/*/; do
	case=${dir%/}
	n=$((n + 1))
	expect_rc 5 "$NPL" --recipes "$case" validate --json
	jq -r --arg d "$case" '.problems[] | select((.file // "" | startswith($d)) or (.message | test("rule-")))
		| "\(.file // "-"):\(.line // "-"):\(.col // "-"): \(.severity): \(.message)"' "$T/out" >"$T/got"
	diff -u "$case/expected.txt" "$T/got" >"$T/diff" || fail "$case: $(cat "$T/diff")"
	[[ -s $case/expected.txt ]] || fail "$case: empty expectation"
	# validating the file alone finds the same
	expect_rc 5 "$NPL" validate "$case/recipe.yaml"
	id=$(sed -n 's/^title: //p' "$case/recipe.yaml" | tr 'A-Z ' 'a-z-')
	# and render refuses it, writing nothing
	if [[ $case != rules/waive-no-reason ]]; then
		expect_rc 5 "$NPL" --recipes "$case" render "$id" -o "$T/out-$n"
		[[ -e $T/out-$n ]] && fail "$case: render wrote $T/out-$n"
	fi
done
((n >= 11)) || fail "only $n rule cases"

# unknown flags: refused, or let through as warnings
expect_rc 0 "$NPL" --recipes rules/unknown-flag validate --allow-unknown-flag
expect_grep "$T/err" "warning: kimi-k2.6-w4a8-8p-rule-unknown-flag-50ms: pd-mixed of sglang.launch_server: --mem-fraction-statc is not an option"
ID=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
expect_rc 5 "$NPL" render $ID --set mem-fraction-statc=0.5
expect_grep "$T/err" "error: kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms: pd-mixed of sglang.launch_server: --mem-fraction-statc is not an option of sglang.launch_server (SGLang main@001067ff); did you mean --mem-fraction-static?"
expect_rc 0 "$NPL" render $ID --set mem-fraction-statc=0.5 --allow-unknown-flag -o "$T/allowed"
expect_grep "$T/allowed/pd-mixed.sh" "--mem-fraction-statc 0.5"
expect_rc 5 "$NPL" render $ID --set deepep-mode=fast
expect_grep "$T/err" "--deepep-mode has no choice 'fast' (auto, normal, low_latency) (from --set deepep-mode=fast)"
expect_rc 5 "$NPL" render $ID --set trust-remote-code=yes
expect_grep "$T/err" "--trust-remote-code takes no value (a switch)"
# the seed recipes render with the upstream-less flag and a warning only
expect_rc 0 "$NPL" render $ID -o "$T/seed"
expect_grep "$T/err" "warning: kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms: bench: --max-attempts is not in upstream sglang.bench_serving"

# one message per problem: the four prefill instances resolve the same flags, and the problem
# they share is printed once and counted once, in text and in JSON, by validate and render
msg="rules/repeated-problem/recipe.yaml:19:7: error: flag 'port' of prefill is derived by a rule: the rule ports writes it: set it under 'ports'"
expect_rc 5 "$NPL" --recipes rules/repeated-problem validate
expect_eq "$(grep -cF -- "$msg" "$T/err")" 1 "validate: how often the repeated problem is printed"
grep -qE '^npulaunch: validate: [0-9]+ recipes, 1 error, [0-9]+ warnings?$' "$T/err" ||
	fail "validate: the repeated problem is not counted as 1 error: $(tail -n 1 "$T/err")"
expect_rc 5 "$NPL" --recipes rules/repeated-problem validate --json
expect_eq "$(jq -r '.errors' "$T/out")" 1 "validate --json: errors of the repeated problem"
expect_eq "$(jq -r --arg m "$msg" '[.problems[] | select("\(.file):\(.line):\(.col): \(.severity): \(.message)" == $m)] | length' "$T/out")" 1 \
	"validate --json: how often the repeated problem is listed"
expect_rc 5 "$NPL" --recipes rules/repeated-problem render kimi-k2.6-w4a8-4p1d-40p-rule-repeated-problem-100ms -o "$T/repeated"
expect_eq "$(grep -cF -- "$msg" "$T/err")" 1 "render: how often the repeated problem is printed"
expect_rc 2 "$NPL" validate /nonexistent
expect_rc 0 "$NPL" validate --help

# the schema-v2 rules, each in a folder of its own above: the line each is located at holds what
# breaks the rule (independently of the messages pinned in expected.txt)
for c in "pp-divides-dies:14:3:pp-size: 3" "tp-times-pp:14:3:tp-size: 8" "cp-divides-tp:14:3:attn-cp-size: 3" \
	"topology-dies:14:44:dies: 3" "first-card:14:50:first_card: 6" \
	"mf-store-env:16:7:ASCEND_MF_STORE_URL:"; do
	IFS=: read -r case line col what <<<"$c"
	f=rules/$case/recipe.yaml
	[[ -f $f ]] || { fail "$f is missing"; continue; }
	grep -q "^$f:$line:$col: error: " "rules/$case/expected.txt" || fail "$case: not located at $line:$col: $(cat "rules/$case/expected.txt")"
	sed -n "${line}p" "$f" | grep -qF -- "$what" || fail "$case: line $line of $f does not hold [$what]"
done
grep -q 'pp-size 3 does not divide the 16 dies' rules/pp-divides-dies/expected.txt || fail "pp-divides-dies: $(cat rules/pp-divides-dies/expected.txt)"
grep -q 'tp-size 8 contradicts the rule tp-size: pd-mixed needs 4 ' rules/tp-times-pp/expected.txt || fail "tp-times-pp: $(cat rules/tp-times-pp/expected.txt)"
grep -q 'attn-cp-size 3 .*does not divide tp-size 16' rules/cp-divides-tp/expected.txt || fail "cp-divides-tp: $(cat rules/cp-divides-tp/expected.txt)"
# the mf-store URL is refused for both servers the disagg role stands for
expect_eq "$(grep -c 'ASCEND_MF_STORE_URL of \(prefill\|decode\) ' rules/mf-store-env/expected.txt)" 2 "mf-store-env errors"

# an id names a folder (render --all) and a file (import): a title that gives one longer than a
# file name may be is refused where it is written, not when the folder cannot be made
mkdir -p "$T/long"
long=$(printf 'Y%.0s' $(seq 300))
sed "s/^title: .*/title: $long/" "$NPL_SRC/recipes/qwen3-8b/qwen3-8b-w8a8-1p-in3k5-out1k5-37ms.yaml" >"$T/long/x.yaml"
expect_rc 5 "$NPL" --recipes "$T/long" validate
expect_grep "$T/err" "$T/long/x.yaml:3:8: error: the title gives an id of 300 characters: at most 200 (it names a folder and a file): shorten the title"
# a file with no document (empty, comments only, a byte-order mark only) is said, not passed over
mkdir -p "$T/empty"
: >"$T/empty/none.yaml"
printf '# a recipe to come\n' >"$T/empty/comments.yaml"
expect_rc 0 "$NPL" --recipes "$T/empty" validate
expect_grep "$T/err" "npulaunch: $T/empty/none.yaml: warning: holds no document (empty, or comments only): nothing read from it"
expect_grep "$T/err" "npulaunch: $T/empty/comments.yaml: warning: holds no document"
# an env file whose path climbs with '..' is refused where it is written, as apply refuses it
mkdir -p "$T/climb/hardware"
sed 's|/usr/local/Ascend/ascend-toolkit/set_env.sh|/usr/local/Ascend/../ascend-toolkit/set_env.sh|' \
	"$NPL_SRC/recipes/hardware/ascend-a3.yaml" >"$T/climb/hardware/ascend-a3.yaml"
grep -q 'Ascend/\.\./' "$T/climb/hardware/ascend-a3.yaml" || fail "the '..' path was not planted"
expect_rc 5 "$NPL" --recipes "$T/climb" validate
expect_grep "$T/err" "$T/climb/hardware/ascend-a3.yaml:23:5: error: '/usr/local/Ascend/../ascend-toolkit/set_env.sh' is not an absolute path without '..' parts"
# and an output folder whose name is too long is one render cannot write into
expect_rc 1 "$NPL" render qwen3-8b-w8a8-1p-in3k5-out1k5-37ms -o "$T/$long"
expect_grep "$T/err" "npulaunch: error: cannot write into '$T/$long': File name too long"
finish
