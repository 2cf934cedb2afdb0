# Choosing the recipe from a query: the issue's three cases, exit codes, the
# stderr line, the plan's record of the choice, --nearest, list and diff.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

# one best: used, and one line on stderr naming it and why
expect_rc 0 "$NPL" render kimi-k2.6 --tpot 20ms -o "$T/k"
expect_eq "$(head -1 "$T/err")" "npulaunch: Kimi-K2.6 --tpot 20ms: kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms (TPOT 20ms is the largest target within the 20ms budget; the only recipe of Kimi-K2.6 that qualifies)" "render kimi-k2.6 --tpot 20ms"
expect_grep "$T/err" "npulaunch: kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms: not given: --model-path (MODEL_PATH), --draft-model-path (DRAFT_MODEL_PATH), --ifname (IFNAME); the scripts stop until they are set"
expect_grep "$T/k/manifest.json" '"id":	"kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"'
expect_grep "$T/k/manifest.json" '"by":	"query"'
expect_grep "$T/k/manifest.json" '"query":	"Kimi-K2.6 --tpot 20ms"'
# the same recipe by id renders the same scripts (only the manifest records the choice)
expect_rc 0 "$NPL" render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms -o "$T/byid"
cmp -s "$T/k/pd-mixed.sh" "$T/byid/pd-mixed.sh" || fail "query and id render differently"
expect_grep "$T/byid/manifest.json" '"by":	"id"'

# several equally good: exit 4, each with the option that picks it
expect_rc 4 "$NPL" render qwen3.5-397b-a17b --tpot 20ms -o "$T/q"
expect_eq "$(cat "$T/err")" "npulaunch: Qwen3.5-397B-A17B --tpot 20ms: 3 recipes meet the query equally well; add an option to choose:
  qwen3.5-397b-a17b-w4a8-8p-in128k-out1k-20ms  --dataset 128k+1k
  qwen3.5-397b-a17b-w4a8-8p-in16k-out1k-20ms   --dataset 16k+1k
  qwen3.5-397b-a17b-w4a8-8p-in64k-out1k-20ms   --dataset 64k+1k" "ambiguous"
[[ -e $T/q ]] && fail "an ambiguous query wrote output"
# and each suggested option does pick its candidate
for ds in 128k+1k 16k+1k 64k+1k; do
	expect_rc 0 "$NPL" show qwen3.5-397b-a17b --tpot 20ms --dataset "$ds" --json
	expect_grep "$T/err" "qwen3.5-397b-a17b-w4a8-8p-in${ds%%+*}-out1k-20ms ("
done

# none: exit 3, the nearest with what they miss and by how much
expect_rc 3 "$NPL" render deepseek-v4-flash --tpot 10ms -o "$T/d"
expect_eq "$(cat "$T/err")" "npulaunch: DeepSeek-V4-Flash --tpot 10ms: no recipe qualifies; the nearest:
  deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms: TPOT 50ms exceeds the 10ms budget by 40ms
  deepseek-v4-flash-w8a8-8p-in32k-out1k-50ms: TPOT 50ms exceeds the 10ms budget by 40ms
  deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms: TPOT 50ms exceeds the 10ms budget by 40ms
(--nearest takes the nearest on purpose)" "no match"
[[ -e $T/d ]] && fail "a query without a match wrote output"
# --nearest: taken on purpose, and recorded in the plan
expect_rc 0 "$NPL" render deepseek-v4-flash --tpot 10ms --dataset 30k+1k --nearest -o "$T/n"
expect_grep "$T/err" "no recipe qualifies; --nearest takes deepseek-v4-flash-w8a8-8p-in32k-out1k-50ms (TPOT 50ms exceeds the 10ms budget by 40ms)"
expect_grep "$T/n/manifest.json" '"by":	"nearest"'
expect_grep "$T/n/manifest.json" '"nearest":	true'
expect_rc 0 "$NPL" show deepseek-v4-flash --tpot 10ms --dataset 30k+1k --nearest
expect_grep "$T/out" "chosen        as the nearest to DeepSeek-V4-Flash --tpot 10ms --dataset 30k+1k: TPOT 50ms exceeds the 10ms budget by 40ms"
expect_rc 4 "$NPL" show deepseek-v4-flash --tpot 10ms --nearest

# model names in any case; bad query values are usage errors
expect_rc 0 "$NPL" show KIMI-K2.6 --tpot 0.02s --json
expect_rc 0 "$NPL" show Qwen3.5-397B-A17B --ttft 1s --prefix-cache 90 --dataset 64k+1k --nearest --json
expect_grep "$T/err" "--nearest takes qwen3.5-397b-a17b-w4a8-8p-in64k-out1k-prefix90-50ms (no TTFT figure to meet the 1s budget)"
expect_rc 2 "$NPL" show kimi-k2.6 --tpot fast
expect_grep "$T/err" "--tpot 'fast' is not a duration (20ms, 22.2ms, 5s)"
expect_rc 2 "$NPL" show kimi-k2.6 --dataset 64k
expect_rc 2 "$NPL" show kimi-k2.6 --mode mixed
expect_rc 2 "$NPL" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --tpot 20ms
expect_grep "$T/err" "is a recipe id: query options choose among a model's recipes"
expect_rc 3 "$NPL" show kimi-k2.7 --tpot 20ms
expect_grep "$T/err" "no recipe or model 'kimi-k2.7' (did you mean 'kimi-k2.6'?)"

# list filters by the query
expect_rc 0 "$NPL" list kimi-k2.6 --tpot 50ms --cards 8
expect_eq "$(tail -n +2 "$T/out" | cut -d' ' -f1 | tr '\n' ' ')" \
	"kimi-k2.6-w4a8-8p-in1024x1024-30-out1024-50ms kimi-k2.6-w4a8-8p-in1080p-30-out256-50ms kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms " "list with a query"
expect_rc 0 "$NPL" list --prefix-cache 90
expect_eq "$(tail -n +2 "$T/out" | wc -l)" 6 "prefix-cache recipes (four seed, one Qwen3.6-27B, one Qwen3.6-35B-A3B)"
# one rule for what a filter keeps: a recipe is listed unless a filter given excludes it, so
# --mode pd-disagg keeps the prefix-cache PD recipes that plain list shows
expect_rc 0 "$NPL" list kimi-k2.6 --mode pd-disagg
expect_eq "$(tail -n +2 "$T/out" | cut -d' ' -f1 | tr '\n' ' ')" \
	"kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-prefix90-100ms kimi-k2.6-w4a8-1p1d-16p-in64k-out1k5-100ms kimi-k2.6-w4a8-1p1d-16p-in64k-out1k5-prefix90-100ms " "list --mode pd-disagg"
expect_rc 0 "$NPL" list kimi-k2.6 --mode pd-disagg --prefix-cache 0
expect_eq "$(tail -n +2 "$T/out" | wc -l)" 2 "--prefix-cache 0: the recipes without one"
# choosing one: where the query leaves the workload open, text without a prefix cache wins
expect_rc 0 "$NPL" show kimi-k2.6 --tpot 50ms --json
expect_grep "$T/err" "kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms (TPOT 50ms is the largest target within the 50ms budget; best of 4 that qualify (where the query leaves the workload open, text without a prefix cache is preferred))"
expect_rc 0 "$NPL" show kimi-k2.6 --tpot 100ms --dataset 128k+1k --json
expect_grep "$T/err" ": kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms ("
expect_rc 0 "$NPL" show kimi-k2.6 --tpot 100ms --dataset 128k+1k --prefix-cache 90 --json
expect_grep "$T/err" ": kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-prefix90-100ms ("
# the README's own example
expect_rc 1 "$NPL" diff 'kimi-k2.6 --tpot 20ms' 'kimi-k2.6 --tpot 50ms'
expect_grep "$T/out" "+++ kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms"

# diff: per role, exit 1 when they differ, 0 when the same; queries quoted
expect_rc 1 "$NPL" diff kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms
expect_grep "$T/out" "  ~ tpot: 20ms -> 50ms"
expect_grep "$T/out" "  ~ --mem-fraction-static: 0.865 -> 0.895"
expect_grep "$T/out" "  - env SGLANG_NPU_USE_MLAPO 1"
expect_grep "$T/out" "  + env HCCL_BUFFSIZE 200"
expect_grep "$T/out" "  - --max-attempts 5"
expect_rc 0 "$NPL" diff kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms 'kimi-k2.6 --tpot 20ms'
expect_grep "$T/out" "(they deploy the same)"
expect_rc 1 "$NPL" diff 'qwen3.5-397b-a17b --tpot 20ms --dataset 64k+1k' 'qwen3.5-397b-a17b --tpot 50ms --dataset 64k+1k' --json
if command -v jq >/dev/null; then
	expect_eq "$(jq -r '.a, .b, (.roles[] | select(.role == "pd-mixed") | .flags[] | "\(.name)=\(.a | join(" "))>\(.b | join(" "))")' "$T/out" | tr '\n' ' ')" \
		"qwen3.5-397b-a17b-w4a8-8p-in64k-out1k-20ms qwen3.5-397b-a17b-w4a8-8p-in64k-out1k-50ms --max-running-requests=16>32 --cuda-graph-bs-decode=2 4 6 8 10 12 14 16>2 4 6 8 12 14 16 " "diff --json"
fi
expect_rc 1 "$NPL" diff deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms
expect_grep "$T/out" "prefill: only in A"
expect_grep "$T/out" "pd-mixed: only in B"
expect_rc 2 "$NPL" diff kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
expect_rc 2 "$NPL" diff 'kimi-k2.6 --bogus 1' kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
expect_rc 0 "$NPL" diff --help
# a shipped recipe named by its id is built alone (the other shipped recipes are not needed):
# the same plan, explanation and scripts as out of the whole database, which an empty
# --recipes folder makes npulaunch build
mkdir -p "$T/none"
n=0
for id in $("$NPL" list --ids); do
	for how in --json --explain; do
		"$NPL" show "$how" "$id" >"$T/alone" 2>&1 || fail "show $how $id"
		"$NPL" --recipes "$T/none" show "$how" "$id" >"$T/whole" 2>&1 || fail "show $how $id (whole)"
		cmp -s "$T/alone" "$T/whole" || fail "show $how $id: built alone, it differs from the whole database's"
	done
	n=$((n + 1))
done
((n > 50)) || fail "only $n shipped recipes listed"
expect_rc 0 "$NPL" render glm-5.2-w4a8-3p1d-32p-in16k-out1k-50ms -o "$T/alone-r"
expect_rc 0 "$NPL" --recipes "$T/none" render glm-5.2-w4a8-3p1d-32p-in16k-out1k-50ms -o "$T/whole-r"
diff -r "$T/alone-r" "$T/whole-r" >/dev/null || fail "render by id: built alone, its files differ"
# a folder's recipe of a shipped id replaces the shipped one, by id as by query
mkdir -p "$T/over"
sed 's/^  max-running-requests: 80$/  max-running-requests: 79/' \
	"$NPL_SRC/recipes/kimi-k2.6/kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms.yaml" >"$T/over/k.yaml"
expect_rc 0 "$NPL" --recipes "$T/over" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --json
expect_eq "$(jq -c '[.. | objects | select(.flag? == "--max-running-requests") | .values] | unique' "$T/out")" \
	'[["79"]]' "a folder's recipe over the shipped one"
finish
