# The targets a recipe may carry, in recipes of the test's own (issue 24, item 5): none at all
# (MiMo-V2.5-Pro's page), an end-to-end latency (Qwen3-30B-A3B BF16 1P IN1K OUT100), an output
# throughput floor; in the loader, list, show, the queries, diff and verify. And an SGLang version
# floor (Qwen3.6-35B-A3B: "Use image SGLang >= v0.5.16"): the loader, show, and preflight's check
# against what a stand-in python reports.
# shellcheck shell=bash source=lib.sh
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
recipe E2E30 'e2e: 30s'
recipe E2E20 'e2e: 20s' 'tpot: 50ms'
E30=tgt-model-bf16-8p-e2e30
recipe TPUT900 'tpot: 25ms' 'throughput: 900'
recipe TPUT1200 'throughput: 1200.5'
T900=tgt-model-bf16-8p-tput900
T1200=tgt-model-bf16-8p-tput1200
E20=tgt-model-bf16-8p-e2e20
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
expect_rc 0 "$NPL" "${S[@]}" show tgt-model --tpot 22ms --json
expect_eq "$(jq -r '.recipe.id' "$T/out")" tgt-model-bf16-8p-tpot "--tpot 22ms chooses the recipe with a TPOT"
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

# ---- an end-to-end target ------------------------------------------------------------------
expect_rc 0 "$NPL" "${S[@]}" list tgt-model
expect_eq "$(head -1 "$T/out" | awk '{print $6, $7, $8, $9}')" "TPOT TTFT E2E TOK/S" "list: the E2E and TOK/S columns"
expect_eq "$(awk -v id=$E30 '$1 == id {print $6, $7, $8}' "$T/out")" "- - 30s" "list: E2E of the E2E recipe"
expect_eq "$(awk -v id=$NONE '$1 == id {print $8}' "$T/out")" "-" "list: E2E of a recipe without"
# recipes without one: no E2E column (the table as it was)
expect_rc 0 "$NPL" "${S[@]}" list tgt-model --tpot 20ms
expect_eq "$(head -1 "$T/out" | tr -s ' ')" "ID MODEL CARDS MODE DATASET TPOT TTFT QUANTIZATION" "list: the columns without E2E, TOK/S"
expect_rc 0 "$NPL" "${S[@]}" list tgt-model --json
expect_eq "$(jq -r --arg id $E30 '.[] | select(.id == $id) | "\(.e2e) \(.e2e_ms)"' "$T/out")" "30s 30000" "list --json e2e"
expect_eq "$(jq -r --arg id $NONE '.[] | select(.id == $id) | "\(.e2e) \(.e2e_ms)"' "$T/out")" "null null" "list --json no e2e"
expect_rc 0 "$NPL" "${S[@]}" show $E20
expect_grep "$T/out" "  targets       TPOT 50ms, TTFT -, E2E 20s"
expect_rc 0 "$NPL" "${S[@]}" show $E30 --json
expect_eq "$(jq -c '[.recipe.e2e, .recipe.e2e_ms]' "$T/out")" '["30s",30000]' "show --json e2e"
# --e2e: the largest target within the budget; a recipe without one does not qualify
expect_rc 0 "$NPL" "${S[@]}" list tgt-model --e2e 25s --ids
expect_eq "$(cat "$T/out")" "$E20" "list --e2e 25s"
expect_rc 2 "$NPL" "${S[@]}" show tgt-model --e2e 30
expect_grep "$T/err" "--e2e '30' needs a unit: 30ms or 30s"
expect_rc 0 "$NPL" "${S[@]}" show tgt-model --e2e 40s --json
expect_eq "$(jq -r '.recipe.id' "$T/out")" $E30 "--e2e 40s chooses the largest target within"
expect_grep "$T/err" "E2E 30s within 40s"
expect_rc 3 "$NPL" "${S[@]}" show tgt-model --e2e 10s
expect_grep "$T/err" "  $E20: E2E 20s exceeds the 10s budget by 10s"
expect_grep "$T/err" "  $NONE: no E2E figure to meet the 10s budget"
# diff: the target is metadata
expect_rc 1 "$NPL" "${S[@]}" diff $E30 $E20
expect_grep "$T/out" "  ~ e2e: 30s -> 20s"
expect_rc 1 "$NPL" "${S[@]}" diff $NONE $E30 --json
expect_eq "$(jq -c '.recipe[] | select(.name == "e2e")' "$T/out")" '{"name":"e2e","a":null,"b":"30s"}' "diff --json e2e"
# verify: pass.jsonl's last record has a median E2E latency of 27790.4 ms (mean 27880.1)
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $E30
grep -q '^  median E2E  *27.79 s  *30.00 s  *ok$' "$T/out" || fail "E2E row: $(cat "$T/out")"
grep -q '^  mean E2E  *27.88 s  *-  *$' "$T/out" || fail "mean E2E row: $(cat "$T/out")"
expect_grep "$T/out" "verdict: PASS"
expect_rc 1 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $E20
expect_grep "$T/out" "verdict: MISS: median E2E 27790.4 ms exceeds the 20000 ms target"
expect_rc 1 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $E20 --json
expect_eq "$(jq -c '.targets' "$T/out")" '["median_tpot","median_e2e"]' "verify --json: TPOT and E2E targets"
expect_eq "$(jq -c '.checks[] | select(.key == "median_e2e") | [.value, .target, .comparison, .ok]' "$T/out")" \
	'[27790.4,20000,"<=",false]' "verify --json: the E2E check"
# a run that measured no E2E latency is not judged as meeting it
sed 's/"median_e2e_latency_ms": [0-9.]*, //' "$B/pass.jsonl" >"$T/noe2e.jsonl"
expect_rc 1 "$NPL" "${S[@]}" verify "$T/noe2e.jsonl" $E30
expect_grep "$T/out" "verdict: INVALID: no E2E latency was measured"

# ---- an output throughput floor -------------------------------------------------------------
expect_rc 0 "$NPL" "${S[@]}" list tgt-model
expect_eq "$(awk -v id=$T900 '$1 == id {print $6, $8, $9}' "$T/out")" "25ms - 900" "list: TOK/S of the floor"
expect_eq "$(awk -v id=$NONE '$1 == id {print $9}' "$T/out")" "-" "list: TOK/S of a recipe without"
expect_rc 0 "$NPL" "${S[@]}" list tgt-model --json
expect_eq "$(jq -c --arg id $T1200 '[.[] | select(.id == $id) | .throughput]' "$T/out")" '[1200.5]' "list --json throughput"
expect_eq "$(jq -c --arg id $NONE '[.[] | select(.id == $id) | .throughput]' "$T/out")" '[null]' "list --json no throughput"
expect_rc 0 "$NPL" "${S[@]}" show $T900
expect_grep "$T/out" "  targets       TPOT 25ms, TTFT -, output throughput >= 900 tok/s"
expect_rc 0 "$NPL" "${S[@]}" show $T900 --json
expect_eq "$(jq -c '.recipe.throughput' "$T/out")" 900 "show --json throughput"
expect_rc 1 "$NPL" "${S[@]}" diff $T900 $T1200
expect_grep "$T/out" "  ~ throughput: 900 -> 1200.5"
# verify: pass.jsonl's last record delivers 931.3 tok/s
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $T900
grep -q '^  output throughput  *931.3 tok/s  *>= 900 tok/s  *ok$' "$T/out" || fail "throughput row: $(cat "$T/out")"
expect_grep "$T/out" "verdict: PASS"
expect_rc 1 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $T1200
expect_grep "$T/out" "verdict: MISS: output throughput 931.3 tok/s is below the 1200.5 tok/s floor"
expect_rc 1 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $T1200 --json
expect_eq "$(jq -c '[.targets, (.checks[] | select(.key == "output_throughput") | [.value, .target, .comparison, .ok])]' "$T/out")" \
	'[["output_throughput"],[931.3,1200.5,">=",false]]' "verify --json: the throughput floor"
sed 's/"output_throughput": [0-9.]*, //' "$B/pass.jsonl" >"$T/notput.jsonl"
expect_rc 1 "$NPL" "${S[@]}" verify "$T/notput.jsonl" $T900
expect_grep "$T/out" "verdict: INVALID: no output throughput was measured"
# without a floor the throughput is shown, not judged
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $E30 --json
expect_eq "$(jq -c '.checks[] | select(.key == "output_throughput") | [.target, .ok]' "$T/out")" '[null,null]' "throughput not judged"

# ---- an SGLang version floor, on the model or the recipe -----------------------------------
SG=$T/sg
mkdir -p "$SG/bin"
printf 'kind: model\nid: sg-model\nname: SG-Model\nsglang_version: ">= 0.5.16"\n' >"$SG/model.yaml"
for name in MODEL OWN; do
	{
		printf 'kind: recipe\ntitle: SG-Model BF16 8P %s\nmodel: sg-model\nhardware: ascend-a3\ncards: 8\n' $name
		printf 'mode: pd-mixed\nquantization: BF16\ndataset: 3.5k+1.5k\n'
		printf 'bench: {dataset: random, input: 3500, output: 1500, concurrency: 64, prompts: 256}\n'
	} >"$SG/$name.yaml"
done
echo 'sglang_version: ">=v0.6"' >>"$SG/OWN.yaml"
expect_rc 0 "$NPL" --recipes "$SG" validate
expect_rc 0 "$NPL" --recipes "$SG" show sg-model-bf16-8p-model
expect_grep "$T/out" "  sglang        >= 0.5.16 (the model's, $SG/model.yaml:4:17; preflight checks it)"
expect_rc 0 "$NPL" --recipes "$SG" show sg-model-bf16-8p-own --json
expect_eq "$(jq -c '.recipe.sglang_version' "$T/out")" \
	"{\"floor\":\">=v0.6\",\"min\":\"0.6\",\"layer\":\"recipe\",\"at\":\"$SG/OWN.yaml:10:17\"}" "show --json: the recipe's floor replaces the model's"
expect_rc 0 "$NPL" "${S[@]}" show $NONE --json
expect_eq "$(jq -c '.recipe.sglang_version' "$T/out")" null "no floor"
expect_rc 0 "$NPL" "${S[@]}" show $NONE
expect_nogrep "$T/out" "  sglang  "
# preflight asks the server's python: a stand-in that warns on stderr, then says its version
printf '#!/bin/sh\necho "a warning of the import" >&2\necho "npulaunch-sglang-version=$FAKE_SGLANG"\n' >"$SG/bin/python3"
chmod +x "$SG/bin/python3"
# pf VERSION ID: the sglang check's line of preflight on this host (other checks fail here)
pf() {
	FAKE_SGLANG=$1 PATH="$SG/bin:$PATH" run env -u NPULAUNCH_PREFLIGHT "$NPL" --recipes "$SG" preflight "$2" \
		--model-path /m --ifname lo --root "$T/noroot" --timeout 5
	grep -A1 '^[a-z]*  *sglang ' "$T/out" | tr -s ' ' >"$T/sg.txt"
}
pf 0.5.16 sg-model-bf16-8p-model
expect_eq "$(head -1 "$T/sg.txt")" "ok sglang SGLang 0.5.16 (python3), the recipe needs >= 0.5.16" "preflight: at the floor"
pf 0.6.1.post2 sg-model-bf16-8p-model
expect_eq "$(head -1 "$T/sg.txt")" "ok sglang SGLang 0.6.1.post2 (python3), the recipe needs >= 0.5.16" "preflight: above"
pf 0.5.6 sg-model-bf16-8p-model
expect_eq "$(cat "$T/sg.txt")" "fail sglang SGLang 0.5.6 (python3); the recipe needs >= 0.5.16
 fix: use an image or an environment with SGLang >= 0.5.16 (the recipe's sglang_version)" "preflight: below"
expect_eq "$rc" 1 "preflight below the floor exits 1"
pf 0.5.99 sg-model-bf16-8p-own
expect_eq "$(head -1 "$T/sg.txt")" "fail sglang SGLang 0.5.99 (python3); the recipe needs >=v0.6" "preflight: the recipe's floor"
pf main sg-model-bf16-8p-model
expect_eq "$(head -1 "$T/sg.txt")" "warn sglang python3 reports SGLang 'main', a version npulaunch cannot compare with >= 0.5.16" "preflight: no version"
FAKE_SGLANG=0.5.16 PATH="$SG/bin:$PATH" run env -u NPULAUNCH_PREFLIGHT "$NPL" --recipes "$SG" preflight sg-model-bf16-8p-model \
	--model-path /m --ifname lo --root "$T/noroot" --json
expect_eq "$(jq -c '.checks[] | select(.name == "sglang") | [.status, .fix]' "$T/out")" '["ok",null]' "preflight --json"
# a python that cannot import sglang: a warning, with what it said
printf '#!/bin/sh\necho "ModuleNotFoundError: No module named sglang" >&2\nexit 1\n' >"$SG/bin/python3"
pf x sg-model-bf16-8p-model
expect_eq "$(head -1 "$T/sg.txt")" "warn sglang the recipe needs SGLang >= 0.5.16, and 'python3 -c \"import sglang\"' failed (exit 1): ModuleNotFoundError: No module named sglang: the version was not checked" "preflight: no sglang"
# no python at all
rm "$SG/bin/python3"
ENV=$(command -v env)
FAKE_SGLANG=x PATH="$SG/bin:/nonexistent" run "$ENV" -u NPULAUNCH_PREFLIGHT "$NPL" --recipes "$SG" preflight sg-model-bf16-8p-model \
	--model-path /m --ifname lo --root "$T/noroot"
expect_grep "$T/out" "warn  sglang       the recipe needs SGLang >= 0.5.16, and python3 is not found (PATH): the version was not checked"
# without a floor, and on a role that runs no server, the check is skipped
expect_rc 1 env -u NPULAUNCH_PREFLIGHT "$NPL" "${S[@]}" preflight $NONE --model-path /m --ifname lo --root "$T/noroot"
expect_grep "$T/out" "skip  sglang       the recipe states no SGLang version floor"
run env -u NPULAUNCH_PREFLIGHT "$NPL" --recipes "$SG" preflight sg-model-bf16-8p-model --role bench --model-path /m --ifname lo --root "$T/noroot"
expect_grep "$T/out" "skip  sglang       the bench runs no SGLang server"
# render --target docker|k8s: an image whose tag names SGLang's version is held to the floor
expect_rc 0 "$NPL" --recipes "$SG" render sg-model-bf16-8p-model --target docker -o "$T/d1" --model-path /m --ifname lo \
	--image lmsysorg/sglang:v0.5.6-cann8.3.rc1-a3
expect_grep "$T/err" "npulaunch: $SG/model.yaml:4:17: warning: the image lmsysorg/sglang:v0.5.6-cann8.3.rc1-a3 carries SGLang v0.5.6, below the sglang_version >= 0.5.16 of model sg-model: give --image with SGLang >= 0.5.16"
expect_rc 0 "$NPL" --recipes "$SG" render sg-model-bf16-8p-model --target docker -o "$T/d2" --model-path /m --ifname lo \
	--image registry.local:5000/sglang:v0.5.16-cann8.5.0-a3
expect_nogrep "$T/err" "SGLang v0.5.16"
expect_nogrep "$T/err" "names no SGLang version"
expect_rc 0 "$NPL" --recipes "$SG" render sg-model-bf16-8p-model --target k8s -o "$T/k1" --model-path /m --ifname lo
expect_grep "$T/err" "npulaunch: note: the image lmsysorg/sglang:main-cann8.5.0-a3 names no SGLang version in its tag: npulaunch preflight checks sglang_version >= 0.5.16 on the node"
expect_rc 0 "$NPL" "${S[@]}" render $NONE --target k8s -o "$T/k2" --model-path /m --ifname lo
expect_nogrep "$T/err" "SGLang"

# bad floors, located
mkdir -p "$T/sgbad"
cp "$SG/model.yaml" "$T/sgbad/"
for v in '"0.5.16"' '"<= 0.5.16"' '">= 0.5."' '">= 0.5.16rc1"' '">= "' '[">= 0.5.16"]'; do
	grep -v '^sglang_version:' "$SG/OWN.yaml" >"$T/sgbad/own.yaml"
	echo "sglang_version: $v" >>"$T/sgbad/own.yaml"
	expect_rc 5 "$NPL" --recipes "$T/sgbad" validate
	expect_grep "$T/err" "$T/sgbad/own.yaml:10:17: error: '"
done
sed -i 's/^sglang_version: .*/sglang_version: "<= 0.5.16"/' "$T/sgbad/own.yaml"
expect_rc 5 "$NPL" --recipes "$T/sgbad" validate
expect_grep "$T/err" "error: 'sglang_version' is a floor like \">= 0.5.16\" (the SGLang version the deployment needs at least), not '<= 0.5.16'"

# ---- the JSON of these shapes against the schemas (docs/json), where python3-jsonschema is ----
if python3 -c 'import jsonschema' 2>/dev/null; then
	: >"$T/list"
	n=0
	# js SCHEMA CMD...: CMD's standard output, to be checked against SCHEMA
	js() {
		local schema=$1
		shift
		n=$((n + 1))
		"$@" >"$T/js$n" 2>/dev/null
		printf '%s\t%s\t%s\n' "$schema" "$T/js$n" "$*" >>"$T/list"
	}
	js list "$NPL" "${S[@]}" list --json
	js show "$NPL" --recipes "$SG" show sg-model-bf16-8p-own --json
	js show "$NPL" "${S[@]}" show $T900 --json
	js diff "$NPL" "${S[@]}" diff $E30 $T1200 --json
	js verify "$NPL" "${S[@]}" verify "$B/pass.jsonl" $NONE --json
	js verify "$NPL" "${S[@]}" verify "$B/pass.jsonl" $E20 --json
	js verify "$NPL" "${S[@]}" verify "$B/pass.jsonl" $T1200 --json
	printf '#!/bin/sh\necho "npulaunch-sglang-version=0.5.6"\n' >"$SG/bin/python3"
	chmod +x "$SG/bin/python3"
	PATH="$SG/bin:$PATH" js preflight env -u NPULAUNCH_PREFLIGHT "$NPL" --recipes "$SG" preflight sg-model-bf16-8p-model \
		--model-path /m --ifname lo --root "$T/noroot" --json
	run python3 "$NPL_SRC/tests/tools/json_check.py" "$NPL_SRC/docs/json" "$T/list"
	[[ $rc == 0 ]] || fail "the schemas: $(cat "$T/out" "$T/err")"
	expect_eq "$(jq -r '.checks[] | select(.name == "sglang") | .status' "$T/js$n")" fail "preflight --json below the floor"
fi

# ---- bad values, located -------------------------------------------------------------------
mkdir -p "$T/bad"
cp "$R/model.yaml" "$T/bad/"
for v in "e2e: fast" "e2e: 0s" "e2e: -5s" "e2e: [10s]"; do
	grep -v '^e2e:' "$R/E2E30.yaml" >"$T/bad/r.yaml"
	echo "$v" >>"$T/bad/r.yaml"
	expect_rc 5 "$NPL" --recipes "$T/bad" validate
	line=$(wc -l <"$T/bad/r.yaml")
	expect_grep "$T/err" "$T/bad/r.yaml:$line:6: error: '"
done
for v in "throughput: -5" "throughput: 0" "throughput: fast" "throughput: 1e3" "throughput: {a: 1}"; do
	grep -v '^e2e:' "$R/E2E30.yaml" >"$T/bad/r.yaml"
	echo "$v" >>"$T/bad/r.yaml"
	expect_rc 5 "$NPL" --recipes "$T/bad" validate
	line=$(wc -l <"$T/bad/r.yaml")
	expect_grep "$T/err" "$T/bad/r.yaml:$line:13: error: '"
done
expect_grep "$T/err" "'throughput' must be a single value"
grep -v '^e2e:' "$R/E2E30.yaml" >"$T/bad/r.yaml"
echo "throughput: -5" >>"$T/bad/r.yaml"
expect_rc 5 "$NPL" --recipes "$T/bad" validate
expect_grep "$T/err" "error: 'throughput' is the output tokens per second the recipe reaches at least, a positive number like 1200, not '-5'"
finish
