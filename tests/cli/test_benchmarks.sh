# Several benchmarks on one deployment (a recipe's `benchmarks:`, issue 24): the recipe key and
# its errors, the plan's launches, bench.sh, bench, apply --role bench and verify, each running or
# judging every benchmark in turn. The recipe: tests/data/benchmarks.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
need_python jsonschema yaml
D=$NPL_DATA/benchmarks
ID=qwen3-8b-w8a8-1p-in16k-ttft-tpot
R=(--recipes "$D")
SITE=(--model-path /m --draft-model-path /d --ifname eth0)
common='--dataset-name random --backend sglang --host 127.0.0.1 --port 6688 --max-concurrency 32 --num-prompts 128 --random-input-len 16000'
TTFT="python -m sglang.bench_serving $common --random-output-len 1 --random-range-ratio 1 --tokenize-prompt --seed 1 --request-rate 0.4"
TPOT="python -m sglang.bench_serving $common --random-output-len 1000 --random-range-ratio 1 --tokenize-prompt --request-rate inf"
# schema: the JSON documents below are checked against docs/json
valid() {  # SCHEMA FILE
	"$PY" -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' "$NPL_SRC/docs/json/$1" "$2" ||
		fail "$2 does not follow $1"
}

# ---- the recipe key: a list of two or more, each named, what it changes of bench
expect_rc 0 "$NPL" validate "$D"
bad() {  # MESSAGE YAML: the recipe with its benchmarks replaced, refused where it says
	local d=$T/bad$((++nbad))
	mkdir -p "$d/q"
	sed '/^benchmarks:/,$d' "$D/qwen3-8b/$ID.yaml" >"$d/q/r.yaml"
	printf '%s\n' "$2" >>"$d/q/r.yaml"
	expect_rc 5 "$NPL" validate "$d"
	expect_grep "$T/err" "$1"
}
nbad=0
bad "r.yaml:22:3: error: 'benchmarks' is a list of two or more benchmarks, each with a name" \
	$'benchmarks:\n  - name: one'
bad "error: a benchmark needs a 'name' (ttft, tpot)" $'benchmarks:\n  - output: 1\n  - name: b'
bad "error: benchmark 'a' is named twice" $'benchmarks:\n  - name: a\n  - name: a'
bad "error: a benchmark's name is lower-case letters, digits and '-' (ttft, tpot), not 'TTFT run'" \
	$'benchmarks:\n  - name: TTFT run\n  - name: b'
bad "unknown key 'env'" $'benchmarks:\n  - name: a\n    env: {X: 1}\n  - name: b'
# two benchmarks whose runs verify could not tell apart (only the seed differs)
bad "error: benchmarks 'a' and 'b' run the same workload (dataset, concurrency, lengths, request rate): their results could not be told apart" \
	$'benchmarks:\n  - name: a\n  - name: b\n    flags: {seed: 2}'
mkdir -p "$T/model/m" && printf 'kind: model\nid: mm\nname: MM\nbenchmarks: []\n' >"$T/model/m/model.yaml"
expect_rc 5 "$NPL" validate "$T/model"
expect_grep "$T/err" "model.yaml:4:1: error: key 'benchmarks' does not belong in a model (it is a key of a recipe)"

# ---- the plan: one launch per benchmark, named, on the one node, each its bench flags changed
expect_rc 0 "$NPL" "${R[@]}" show $ID --json
cp "$T/out" "$T/show.json"
valid show.schema.json "$T/show.json"
got=$(jq -r '.roles[] | select(.role == "bench") | .nodes[] | "\(.index) \(.name) \((.launch + [.flags[] | .flag, .values[]]) | join(" "))"' "$T/show.json")
expect_eq "$got" "0 ttft $TTFT
0 tpot $TPOT" "the benchmarks in the plan"
expect_rc 0 "$NPL" "${R[@]}" show $ID
expect_eq "$(grep -E '^  (benchmark|exec)' "$T/out" | tail -4)" "  benchmark ttft (run to its end, then the next)
  exec    python -m sglang.bench_serving
  benchmark tpot (the last)
  exec    python -m sglang.bench_serving" "show: the benchmarks in turn"
# diff names a benchmark's flag by its benchmark
mkdir -p "$T/two/q" && cp "$D/qwen3-8b/$ID.yaml" "$T/two/q/"
sed 's/request-rate: 0.4/request-rate: 0.5/; s/^title: .*/title: "Qwen3-8B W8A8 1P IN16K TTFT TPOT B"/' \
	"$D/qwen3-8b/$ID.yaml" >"$T/two/q/b.yaml"
expect_rc 1 "$NPL" --recipes "$T/two" diff $ID $ID-b
expect_eq "$(tail -2 "$T/out")" "bench:
  ~ --request-rate (ttft): 0.4 -> 0.5" "diff of a benchmark's flag"
# each flag says where it came from: the benchmark's own key, or bench's
expect_eq "$(jq -r '.roles[] | select(.role == "bench") | .nodes[0].flags[] | select(.flag == "--request-rate" or .flag == "--random-output-len") | .origin.at' "$T/show.json" | sed 's/.*yaml://')" \
	"23:13
25:7" "where the ttft benchmark's own values come from"

# ---- bench.sh: each in turn (the first in a subshell), the last by exec; a failure stops it
make_root "$T/root"
expect_rc 0 "$NPL" "${R[@]}" render $ID "${SITE[@]}" -o "$T/b"
sc "$T/b/bench.sh"
rm -f "$T/calls"
expect_rc 0 env PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" bash "$T/b/bench.sh"
expect_eq "$(jq -r '.argv | join(" ")' "$T/calls")" "$TTFT
$TPOT" "what bench.sh ran, in order"
rm -f "$T/calls"
expect_rc 3 env PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" NPL_STUB_EXIT=3 bash "$T/b/bench.sh"
expect_eq "$(wc -l <"$T/calls")" 1 "benchmarks bench.sh ran after the first failed"
# a recipe with one benchmark keeps its bench.sh as it was: one exec, no subshell
expect_rc 0 "$NPL" render qwen3-8b-w8a8-1p-in3k5-out1k5-5ms "${SITE[@]}" -o "$T/one"
expect_eq "$(grep -c '^exec python -m sglang.bench_serving' "$T/one/bench.sh") $(grep -c '^($' "$T/one/bench.sh")" "1 0" "one benchmark's bench.sh"

# ---- npulaunch bench: each in turn into one file, or the one named
expect_rc 0 "$NPL" "${R[@]}" bench $ID --dry-run "${SITE[@]}"
expect_eq "$(cat "$T/out")" "$TTFT --output-file bench-results.jsonl
$TPOT --output-file bench-results.jsonl" "bench --dry-run"
expect_rc 0 "$NPL" "${R[@]}" bench $ID --dry-run --json "${SITE[@]}"
valid bench.schema.json "$T/out"
expect_eq "$(jq -c '[.[] | .benchmark, (.argv | length)]' "$T/out")" '["ttft",28,"tpot",26]' "bench --dry-run --json"
expect_rc 0 "$NPL" "${R[@]}" bench $ID --dry-run --json --benchmark tpot "${SITE[@]}"
valid bench.schema.json "$T/out"
expect_eq "$(jq -r '"\(.benchmark) \(.argv | join(" "))"' "$T/out")" "tpot $TPOT --output-file bench-results.jsonl" "bench --benchmark tpot"
expect_rc 2 "$NPL" "${R[@]}" bench $ID --dry-run --benchmark e2e "${SITE[@]}"
expect_grep "$T/err" "npulaunch: bench: --benchmark 'e2e': the recipe's benchmarks are ttft, tpot"
expect_rc 2 "$NPL" bench qwen3-8b-w8a8-1p-in3k5-out1k5-5ms --dry-run --benchmark ttft "${SITE[@]}"
expect_grep "$T/err" "the recipe's benchmarks are one, without a name"
expect_rc 0 "$NPL" bench qwen3-8b-w8a8-1p-in3k5-out1k5-5ms --dry-run --json "${SITE[@]}"
valid bench.schema.json "$T/out"
expect_eq "$(jq -r '.benchmark' "$T/out")" null "one benchmark's bench --json"
# run: a stand-in bench_serving that appends a record; the first that fails stops the rest
mkdir -p "$T/fakebin"
cat >"$T/fakebin/python" <<'PY'
#!/bin/bash
printf '%s\n' "$*" >>"$CALLS"
out= ; while (($#)); do [[ $1 == --output-file ]] && out=$2; shift; done
echo '{"completed": 1}' >>"${out:-x.jsonl}"
exit "${FAKE_EXIT:-0}"
PY
chmod +x "$T/fakebin/python"
(cd "$T/b" && rm -f bench-results.jsonl && CALLS=$T/calls2 PATH="$T/fakebin:$PATH" "$NPL" bench --json) >"$T/out" 2>"$T/err" ||
	fail "npulaunch bench in the bundle: $(cat "$T/err")"
valid bench.schema.json "$T/out"
expect_eq "$(jq -c '[.[] | .benchmark, .status, .results]' "$T/out")" '["ttft",0,true,"tpot",0,true]' "bench --json of a run"
expect_eq "$(wc -l <"$T/b/bench-results.jsonl")" 2 "records bench appended"
rm -f "$T/calls2"
(cd "$T/b" && CALLS=$T/calls2 FAKE_EXIT=4 PATH="$T/fakebin:$PATH" "$NPL" bench) >"$T/out" 2>"$T/err"
[[ $? == 1 ]] || fail "bench with a failing benchmark did not exit 1"
expect_eq "$(wc -l <"$T/calls2")" 1 "benchmarks bench ran after the first failed"

# ---- apply --role bench: the same, the first as a child, the last by exec
expect_rc 0 "$NPL" apply --role bench "$T/b" --dry-run
expect_eq "$(grep -E '^(# the|run|exec)' "$T/out" | sed 's/^\(run\|exec\) .*python /\1 python /')" "# the ttft benchmark: run to its end before the next
run $TTFT
# the tpot benchmark
exec $TPOT" "apply --role bench --dry-run"
expect_rc 0 "$NPL" apply --role bench "$T/b" --dry-run --json
valid apply.schema.json "$T/out"
expect_eq "$(jq -c '[.instances[] | .benchmark]' "$T/out")" '["ttft","tpot"]' "apply --dry-run --json"
rm -f "$T/calls"
expect_rc 0 env PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" "$NPL" apply --role bench "$T/b"
expect_eq "$(jq -r '.argv | join(" ")' "$T/calls")" "$TTFT
$TPOT" "what apply --role bench ran, in order"
rm -f "$T/calls"
expect_rc 5 env PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" NPL_STUB_EXIT=5 "$NPL" apply --role bench "$T/b"
expect_grep "$T/err" "the ttft benchmark failed (exit 5): the next is not run"
expect_eq "$(wc -l <"$T/calls")" 1 "benchmarks apply ran after the first failed"

# ---- verify: each benchmark judged on its last run, another's records passed over
rec() {  # OUT_LEN RATE TTFT_MS: a bench_serving record (tests/data/bench/pass.jsonl's) of this recipe
	sed -n 2p "$NPL_DATA/bench/pass.jsonl" | jq -c --argjson o "$1" --argjson r "$2" --argjson t "$3" \
		'.max_concurrency = 32 | .random_input_len = 16000 | .random_output_len = $o | .request_rate = $r
		| .completed = 128 | .median_ttft_ms = $t'
}
{ rec 1000 1.7976931348623157e+308 900; rec 1 0.4 950; rec 1000 1.7976931348623157e+308 800; } >"$T/r.jsonl"
expect_rc 0 "$NPL" "${R[@]}" verify "$T/r.jsonl" $ID
expect_eq "$(grep -E '^benchmark|record|^verdict' "$T/out")" "benchmark ttft
$ID: record 2 of 3 ($T/r.jsonl:2)
verdict: PASS
benchmark tpot
$ID: record 3 of 3 ($T/r.jsonl:3)
verdict: PASS" "verify of two benchmarks"
expect_rc 0 "$NPL" "${R[@]}" verify "$T/r.jsonl" $ID --json
valid verify.schema.json "$T/out"
expect_eq "$(jq -c '[.[] | .benchmark, .record, .verdict]' "$T/out")" '["ttft",2,"pass","tpot",3,"pass"]' "verify --json of two benchmarks"
# no run of one of them: that one is invalid, and so is the whole
rec 1 0.4 950 >"$T/ttft.jsonl"
expect_rc 1 "$NPL" "${R[@]}" verify "$T/ttft.jsonl" $ID --json
valid verify.schema.json "$T/out"
expect_eq "$(jq -c '[.[] | .verdict, .record, .reasons]' "$T/out")" \
	'["pass",1,[],"invalid",0,["none of the 1 records is a run of the tpot benchmark"]]' "verify without a tpot run"
# a rate of inf as bench_serving writes it (Infinity, which JSON has not): a run of the inf
# benchmark only, not of one at another rate with the same lengths
mkdir -p "$T/rate/q"
sed '/^benchmarks:/,$d; s/^title: .*/title: "Qwen3-8B W8A8 1P IN16K RATES"/' "$D/qwen3-8b/$ID.yaml" >"$T/rate/q/r.yaml"
printf 'benchmarks:\n  - name: slow\n    flags: {request-rate: 1}\n  - name: fast\n    flags: {request-rate: inf}\n' >>"$T/rate/q/r.yaml"
{ rec 1000 1 900; rec 1000 0 800 | sed 's/"request_rate":0/"request_rate":Infinity/'; } >"$T/rates.jsonl"
expect_rc 0 "$NPL" --recipes "$T/rate" verify "$T/rates.jsonl" qwen3-8b-w8a8-1p-in16k-rates --json
expect_eq "$(jq -c '[.[] | .benchmark, .record]' "$T/out")" '["slow",1,"fast",2]' "runs at rate 1 and at Infinity"
# in the bundle: each from the newest file that holds a run of it, as bench.sh leaves them
rm -f "$T/b"/*.jsonl
rec 1 0.4 950 >"$T/b/sglang_1206_128_16000_1.jsonl"
touch -d '1 hour ago' "$T/b/sglang_1206_128_16000_1.jsonl"
rec 1000 1.7976931348623157e+308 800 >"$T/b/sglang_1206_128_16000_1000.jsonl"
(cd "$T/b" && "$NPL" verify --json) >"$T/out" 2>"$T/err" || fail "verify in a bundle of two benchmarks: $(cat "$T/err")"
expect_eq "$(jq -r '.[] | "\(.benchmark) \(.file) \(.verdict)"' "$T/out")" "ttft ./sglang_1206_128_16000_1.jsonl pass
tpot ./sglang_1206_128_16000_1000.jsonl pass" "verify in the bundle"

# ---- import: MiMo-V2.5-Pro's page (no metadata table, no section title, two benchmarks) imports
# with --meta giving what the page lacks, and its recipe runs both benchmarks against the model
PG=$NPL_DATA/pages/upstream-2026/mimo_v2_5_pro.mdx
expect_rc 5 "$NPL" import "$PG" -o "$T/imp"
expect_grep "$T/err" "mimo_v2_5_pro.mdx:13:5: error: the section gives no Model: a recipe needs one (import --meta Model=NAME gives it)"
[[ -e $T/imp ]] && fail "import without the metadata wrote $(ls -R "$T/imp")"
expect_rc 2 "$NPL" import "$PG" -o "$T/imp" --meta Colour=red
expect_grep "$T/err" "npulaunch: import: --meta 'Colour': not a metadata key"
expect_rc 2 "$NPL" import "$PG" -o "$T/imp" --meta Title
expect_grep "$T/err" "npulaunch: import: --meta 'Title' is not KEY=VALUE"
# --meta never replaces what a page gives: Qwen3-8B's page imports the same with other values
Q8=$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx
expect_rc 0 "$NPL" import "$Q8" -o "$T/q8"
expect_rc 0 "$NPL" import "$Q8" -o "$T/q8" --meta "Hardware=Atlas 800T A2" --meta Cards=99 --meta Title=Other --check
META=(--meta "Title=MiMo-V2.5-Pro MXFP4 1P1D 8P IN16K OUT1K" --meta Model=MiMo-V2.5-Pro --meta "Hardware=Atlas 800I A3"
	--meta Cards=8 --meta "Deploy Mode=PD Disaggregation" --meta Quantization=MXFP4 --meta Dataset=16k+1k)
expect_rc 0 "$NPL" import "$PG" -o "$T/imp" "${META[@]}"
MI=mimo-v2.5-pro-mxfp4-1p1d-8p-in16k-out1k
Y=$T/imp/mimo-v2.5-pro/$MI.yaml
expect_grep "$T/err" "warning: metadata: the page's section gives no metadata for these; given at import (--meta): Title MiMo-V2.5-Pro MXFP4 1P1D 8P IN16K OUT1K, Model MiMo-V2.5-Pro"
# the title is not the page's: provenance names the page alone (drift finds the recipe by it)
expect_eq "$("$PY" -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))["provenance"]))' "$Y")" \
	'{"page": "mimo_v2_5_pro.mdx"}' "the imported MiMo recipe's provenance"
expect_eq "$("$PY" -c 'import json, sys, yaml; d = yaml.safe_load(open(sys.argv[1]))
print(json.dumps([d["bench"], d["benchmarks"], d["ports"], sorted(d["deviations"])], sort_keys=True))' "$Y")" \
	'[{"concurrency": 32, "dataset": "random", "flags": {"model": {"site": "model-path"}, "tokenize-prompt": true}, "input": 16000, "prompts": 128}, [{"flags": {"request-rate": 0.4}, "name": "ttft", "output": 1}, {"flags": {"request-rate": "inf"}, "name": "tpot", "output": 1000}], {"bootstrap": 8996, "decode": 20001, "mf_store": 24669, "prefill": 10001}, ["metadata", "router-prefill"]]' \
	"the imported MiMo recipe's benchmarks, ports and deviations"
expect_rc 0 "$NPL" import "$PG" -o "$T/imp" "${META[@]}" --check
expect_rc 0 "$NPL" --recipes "$T/imp" bench $MI --model-path /models/mimo --dry-run
expect_eq "$(cat "$T/out")" "python -m sglang.bench_serving --dataset-name random --backend sglang --host 127.0.0.1 --port 6688 --max-concurrency 32 --num-prompts 128 --random-input-len 16000 --random-output-len 1 --random-range-ratio 1 --model /models/mimo --tokenize-prompt --request-rate 0.4 --output-file bench-results.jsonl
python -m sglang.bench_serving --dataset-name random --backend sglang --host 127.0.0.1 --port 6688 --max-concurrency 32 --num-prompts 128 --random-input-len 16000 --random-output-len 1000 --random-range-ratio 1 --model /models/mimo --tokenize-prompt --request-rate inf --output-file bench-results.jsonl" \
	"the MiMo recipe's benchmarks: the page's, against the model given"
finish
