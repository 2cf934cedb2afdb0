# list, show, --help on every command, --version, and exit codes of the CLI.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

# list: a header and 61 rows (22 seed + 39 upstream recipes), columns aligned
expect_rc 0 "$NPL" list
expect_eq "$(wc -l <"$T/out")" 62 "list lines"
expect_eq "$(head -1 "$T/out" | tr -s ' ')" "ID MODEL CARDS MODE DATASET TPOT TTFT E2E QUANTIZATION" "list header"
# every row's MODEL column starts where the header's does
col=$(head -1 "$T/out" | grep -bo 'MODEL' | head -1 | cut -d: -f1)
while IFS= read -r line; do
	[[ ${line:$col:1} != " " && ${line:$((col - 1)):1} == " " ]] || fail "misaligned row: $line"
done < <(tail -n +2 "$T/out")
expect_grep "$T/out" "kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-prefix90-100ms"
grep -q 'qwen3.5-397b-a17b-w4a8-8p-in3k5-out1k5-22.2ms .*Qwen3.5-397B-A17B .* 8  pd-mixed .*3.5k+1.5k .*22.2ms .*-  .*W4A8 INT8' "$T/out" ||
	fail "qwen 22.2ms row: $(grep 22.2ms "$T/out")"
expect_rc 0 "$NPL" list --model kimi-k2.6
expect_eq "$(wc -l <"$T/out")" 10 "kimi rows + header"
expect_rc 0 "$NPL" list Qwen3.5-397B-A17B
expect_eq "$(wc -l <"$T/out")" 11 "qwen rows + header"
expect_rc 3 "$NPL" list --model llama
expect_rc 0 "$NPL" list --json
if command -v jq >/dev/null; then
	expect_eq "$(jq length "$T/out")" 61 "list --json length"
	expect_eq "$(jq -r '.[] | select(.id == "kimi-k2.6-w4a8-1p1d-16p-in64k-out1k5-prefix90-100ms") | "\(.cards) \(.mode) \(.tpot_ms) \(.ttft_ms) \(.dataset)"' "$T/out")" \
		"16 pd-disagg 100 3000 64k+1.5k (90% prefix cache hit rate)" "list --json row"
	expect_eq "$(jq -r '[.[0] | keys[]] | join(",")' "$T/out")" \
		"cards,dataset,e2e,e2e_ms,file,hardware,id,mode,model,model_name,quantization,throughput,tier,title,tpot,tpot_ms,ttft,ttft_ms" "list --json keys"
else
	fail "jq is not installed (the README's first command installs it)"
fi

# show: readable, --explain names origins, --json is the plan
expect_rc 0 "$NPL" show kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2
expect_grep "$T/out" "deployment    pd-disagg, 16 cards: prefill 1 x 8 cards (tp-size 16, 1 node each); decode 1 x 8 cards (tp-size 16, 1 node each)"
expect_grep "$T/out" "node 0 at 10.0.0.1 (instance 0, rank 0)"
expect_grep "$T/out" "--prefill http://10.0.0.1:8000 8998"
expect_grep "$T/out" "--model-path <model-path>"
expect_rc 0 "$NPL" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --explain
grep -q -- '--tp-size 16 .*# rule tp-size: 2 dies per card x 8 cards' "$T/out" || fail "explain tp-size: $(grep tp-size "$T/out")"
grep -q -- '--reasoning-parser kimi_k2 .*# model kimi-k2.6 recipes/kimi-k2.6/model.yaml:' "$T/out" || fail "explain parser"
grep -q -- 'GLOO_SOCKET_IFNAME=<ifname> .*# site --ifname (rule socket-ifname)' "$T/out" || fail "explain ifname"
# every layer shows in --explain: hardware, defaults, site values, overrides
expect_rc 0 "$NPL" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --explain --model-path /m \
	--set mem-fraction-static=0.5 --env MY_FLAG=on --set bench:seed=7
grep -q -- '--device npu .*# hardware ascend-a3 recipes/hardware/ascend-a3.yaml:' "$T/out" || fail "explain hardware"
grep -q -- '--port 6688 .*# defaults recipes/defaults.yaml:' "$T/out" || fail "explain defaults"
grep -q -- '--model-path /m .*# site --model-path (rule model-path)' "$T/out" || fail "explain site"
grep -q -- '--mem-fraction-static 0.5 .*# override --set mem-fraction-static=0.5' "$T/out" || fail "explain override"
grep -q -- 'MY_FLAG=on .*# override --env MY_FLAG=on' "$T/out" || fail "explain env override"
grep -q -- '--seed 7 .*# override --set bench:seed=7' "$T/out" || fail "explain bench override"
grep -q -- 'tune    vm.swappiness=0 .*# hardware ascend-a3' "$T/out" || fail "explain tuning"
expect_rc 2 "$NPL" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --set tp-size=8
expect_grep "$T/err" "--set tp-size=8 contradicts the rule tp-size: pd-mixed has 16"
expect_rc 0 "$NPL" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --set tp-size=8 --force --explain
grep -q -- '--tp-size 8 .*# override --set tp-size=8' "$T/out" || fail "forced override"
expect_rc 0 "$NPL" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --json
if command -v jq >/dev/null; then
	expect_eq "$(jq -r '.format, .recipe.id, (.roles | map(.role) | join(","))' "$T/out" | tr '\n' ' ')" \
		"npulaunch-plan/1 kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms pd-mixed,bench " "show --json"
fi
expect_rc 3 "$NPL" show no-such-recipe
expect_rc 2 "$NPL" show

# help for the program and every command; version names the recipe database
for cmd in list show render; do
	expect_rc 0 "$NPL" "$cmd" --help
	expect_grep "$T/out" "usage: npulaunch $cmd"
	expect_grep "$T/out" "Examples:"
	expect_rc 0 "$NPL" "$cmd" -h
done
expect_rc 0 "$NPL" --help
expect_grep "$T/out" "Exit codes:"
expect_rc 0 "$NPL" --version
expect_grep "$T/out" "npulaunch 0."
expect_grep "$T/out" "recipe database 2026."
expect_rc 2 "$NPL"
expect_rc 2 "$NPL" lst
expect_grep "$T/err" "unknown command 'lst' (did you mean 'list'?)"
expect_rc 2 "$NPL" --frobnicate list

# --recipes adds recipes, NPULAUNCH_RECIPES too
mkdir -p "$T/r"
sed 's/40ms/45ms/' "$NPL_DATA/recipes/bad/duplicate-id/a.yaml" >"$T/r/mine.yaml"
expect_rc 0 "$NPL" --recipes "$T/r" list --model kimi-k2.6
expect_grep "$T/out" "kimi-k2.6-w4a8-8p-in8k-out1k-45ms"
expect_rc 0 env NPULAUNCH_RECIPES="$T/r" "$NPL" list
expect_eq "$(wc -l <"$T/out")" 63 "list with one more recipe"
expect_rc 2 "$NPL" --recipes "$T/nope" list
expect_grep "$T/err" "recipe folder '$T/nope' does not exist or is not a folder"
# global options after the command as before it, in both spellings; -- ends them
expect_rc 0 "$NPL" list --recipes "$T/r" --model kimi-k2.6
expect_grep "$T/out" "kimi-k2.6-w4a8-8p-in8k-out1k-45ms"
expect_rc 0 "$NPL" list --model kimi-k2.6 --recipes="$T/r"
expect_grep "$T/out" "kimi-k2.6-w4a8-8p-in8k-out1k-45ms"
expect_rc 0 "$NPL" show --templates "$NPL_SRC/templates" kimi-k2.6-w4a8-8p-in8k-out1k-45ms --recipes "$T/r"
expect_rc 2 "$NPL" list --recipes
expect_grep "$T/err" "npulaunch: list: option '--recipes' needs a value"
expect_grep "$T/err" "Try 'npulaunch list --help' for more information."
# and before the command, where it said "unknown option '--recipes'"
expect_rc 2 "$NPL" --recipes
expect_grep "$T/err" "npulaunch: option '--recipes' needs a value"
expect_rc 2 "$NPL" --templates
expect_grep "$T/err" "npulaunch: option '--templates' needs a value"
expect_rc 2 "$NPL" list -- --recipes "$T/r"
# a warning of one kind is said once a run, the others counted; --quiet says none
expect_rc 0 "$NPL" render --all -o "$T/all"
expect_eq "$(grep -c 'is not in upstream sglang.bench_serving' "$T/err")" 1 "the --max-attempts warning of render --all"
expect_grep "$T/err" "npulaunch: warning: the same for 7 more: deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms, kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms, qwen3-30b-a3b-bf16-1p-in1k-out100, "
expect_rc 0 "$NPL" render --all -o "$T/all" --check --quiet
expect_eq "$(wc -c <"$T/err")" 0 "render --all --quiet: standard error"
expect_rc 0 "$NPL" -q validate
expect_nogrep "$T/err" ": warning: "
expect_grep "$T/err" "validate: 61 recipes, 0 errors, 8 warnings"
# conflicting or ambiguous options are refused, not guessed
expect_rc 2 "$NPL" list kimi-k2.6 --tpot 20
expect_grep "$T/err" "npulaunch: list: --tpot '20' needs a unit: 20ms or 20s"
expect_rc 2 "$NPL" list --ids --json
expect_grep "$T/err" "--ids and --json: give one (--json holds the ids)"
expect_rc 2 "$NPL" list --ids --models
expect_grep "$T/err" "give one of --ids, --models, --profiles"
expect_rc 2 "$NPL" list --models kimi-k2.6
expect_rc 2 "$NPL" tune --check --revert
expect_rc 2 "$NPL" apply kimi-k2.6 --tpot 20ms --json
expect_grep "$T/err" "--json reports a dry run: give --dry-run too"
# help and version as commands; an option error points to the command's help
expect_rc 0 "$NPL" help
expect_grep "$T/out" "Commands:"
expect_rc 0 "$NPL" help tune
expect_grep "$T/out" "usage: npulaunch tune"
expect_nogrep "$T/out" "cannot be,"
expect_rc 2 "$NPL" help tun
expect_grep "$T/err" "no command 'tun' (did you mean 'tune'?)"
expect_rc 0 "$NPL" version
expect_grep "$T/out" "recipe database 2026."
expect_rc 2 "$NPL" render kimi-k2.6 --tpot 20ms --mode mixed
expect_grep "$T/err" "Try 'npulaunch render --help' for more information."
finish
