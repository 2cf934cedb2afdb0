# The targets a recipe may carry, in recipes of the test's own (issue 24, item 5): none at all
# (MiMo-V2.5-Pro's page); in list, the queries and verify.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
B=$NPL_DATA/bench
R=$T/recipes
mkdir -p "$R"
cat >"$R/model.yaml" <<'YAML'
kind: model
id: tgt-model
name: Tgt-Model
YAML
# recipe NAME EXTRA-KEYS...: a PD-mixed recipe on 8 A3 cards whose benchmark is the workload of
# tests/data/bench/pass.jsonl, with the given keys added
recipe() {
	local name=$1
	shift
	{
		printf 'kind: recipe\ntitle: Tgt-Model BF16 8P %s\nmodel: tgt-model\nhardware: ascend-a3\n' "$name"
		printf 'cards: 8\nmode: pd-mixed\nquantization: BF16\ndataset: 3.5k+1.5k\n'
		printf 'bench: {dataset: random, input: 3500, output: 1500, concurrency: 64, prompts: 256}\n'
		printf '%s\n' "$@"
	} >"$R/$name.yaml"
}
NONE=tgt-model-bf16-8p-none
recipe NONE
recipe TPOT 'tpot: 20ms'
S=(--recipes "$R")

# ---- no target at all ----------------------------------------------------------------------
expect_rc 0 "$NPL" "${S[@]}" validate
expect_grep "$T/err" " 0 errors, "
expect_rc 0 "$NPL" "${S[@]}" list tgt-model
expect_eq "$(awk -v id=$NONE '$1 == id {print $6, $7}' "$T/out")" "- -" "list: no TPOT, no TTFT"
expect_rc 0 "$NPL" "${S[@]}" list tgt-model --json
expect_eq "$(jq -r --arg id $NONE '.[] | select(.id == $id) | "\(.tpot) \(.tpot_ms) \(.ttft) \(.ttft_ms)"' "$T/out")" \
	"null null null null" "list --json: no targets"
# a budget skips it, saying why
expect_rc 0 "$NPL" "${S[@]}" show tgt-model --tpot 50ms --json
expect_eq "$(jq -r '.recipe.id' "$T/out")" tgt-model-bf16-8p-tpot "--tpot 50ms chooses the recipe with a TPOT"
expect_rc 3 "$NPL" "${S[@]}" show tgt-model --ttft 1s
expect_grep "$T/err" "  $NONE: no TTFT figure to meet the 1s budget"
# verify judges the run alone, and says there is no target
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $NONE
expect_grep "$T/out" "targets: none: the recipe has no target to judge; the verdict is on the run completing"
expect_grep "$T/out" "verdict: PASS"
grep -q '^  median TPOT  *18.42 ms  *-  *$' "$T/out" || fail "TPOT row is not judged: $(cat "$T/out")"
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $NONE --json
expect_eq "$(jq -c '[.verdict, .targets]' "$T/out")" '["pass",[]]' "verify --json: no targets"
expect_eq "$(jq -c '[.checks[] | select(.ok != null) | .key]' "$T/out")" '["requests_completed","output_tokens"]' \
	"verify --json: only the run is judged"
# a run that did not complete is still invalid
expect_rc 1 "$NPL" "${S[@]}" verify "$B/zero-output.jsonl" $NONE
expect_grep "$T/out" "verdict: INVALID: no request completed; no output tokens"
# the other recipe names its target
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" tgt-model-bf16-8p-tpot --json
expect_eq "$(jq -c '.targets' "$T/out")" '["median_tpot"]' "verify --json: the TPOT target"
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" tgt-model-bf16-8p-tpot
expect_nogrep "$T/out" "targets: none"
finish
