# bench and verify: the benchmark command with its results file, and the
# verdict on bench_serving's records in their real format (tests/data/bench):
# a pass, a TPOT miss, a TTFT miss, a run that produced nothing, a broken file.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
B=$NPL_DATA/bench
K20=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
KP=kimi-k2.6-w4a8-1p1d-16p-in64k-out1k5-prefix90-100ms

# bench: bench.sh's command against the entry point, with --output-file
expect_rc 0 "$NPL" bench $K20 --dry-run
expect_eq "$(cat "$T/out")" "python -m sglang.bench_serving --dataset-name random --backend sglang --host 127.0.0.1 --port 6688 --max-concurrency 64 --num-prompts 256 --random-input-len 3500 --random-output-len 1500 --random-range-ratio 1 --max-attempts 5 --warmup-requests 0 --seed 1 --output-file bench-results.jsonl" "bench --dry-run"
# a PD-mixed server on two nodes listens on the first node's address
expect_rc 0 "$NPL" bench kimi-k2.6-w4a8-16p-in64k-out1k-100ms --node-ip 10.0.0.1 --node-ip 10.0.0.2 --dry-run --output-file 'my results.jsonl'
expect_grep "$T/out" "--host 10.0.0.1 --port 6688"
expect_grep "$T/out" "--output-file 'my results.jsonl'"
expect_rc 2 "$NPL" bench kimi-k2.6-w4a8-16p-in64k-out1k-100ms --dry-run
expect_grep "$T/err" "the benchmark's entry point needs --node-ip"
expect_rc 0 "$NPL" bench $K20 --host 10.9.0.1 --port 30000 --dry-run
expect_grep "$T/out" "--host 10.9.0.1 --port 30000"
# ... and so does the bundle's bench.sh (issue 25, 12: one answer to "where is the server"): the
# plan's entry point, the first node's address, given at render or from NODE_IPS when run
make_root "$T/r16"
expect_rc 0 "$NPL" render kimi-k2.6-w4a8-16p-in64k-out1k-100ms --node-ip 10.0.0.1 --node-ip 10.0.0.2 -o "$T/b16"
expect_eq "$(jq -r '.roles[0].endpoints[0].url' "$T/b16/manifest.json")" 'http://${node-ip[0]|url}:6688' "the entry point"
rm -f "$T/calls"
expect_rc 0 env PATH="$T/r16.bin:$PATH" NPL_STUB_LOG="$T/calls" bash "$T/b16/bench.sh"
expect_grep "$T/calls" '"--host","10.0.0.1","--port","6688"'
expect_rc 0 "$NPL" render kimi-k2.6-w4a8-16p-in64k-out1k-100ms -o "$T/b16e"
rm -f "$T/calls"
expect_rc 0 env PATH="$T/r16.bin:$PATH" NPL_STUB_LOG="$T/calls" NODE_IPS="10.0.0.3 10.0.0.4" bash "$T/b16e/bench.sh"
expect_grep "$T/calls" '"--host","10.0.0.3","--port","6688"'
expect_rc 2 env PATH="$T/r16.bin:$PATH" NPL_STUB_LOG="$T/calls" bash "$T/b16e/bench.sh"
expect_grep "$T/err" "NODE_IPS"
# where the entry point is the loopback (one node), bench.sh reads no site value
expect_rc 0 "$NPL" render $K20 -o "$T/b20"
expect_nogrep "$T/b20/bench.sh" "NODE_IPS"
# and it runs: the stub stands in for python; proxies are cleared; a benchmark that writes
# nothing is said to
make_root "$T/root"
rm -f "$T/calls"
expect_rc 1 env PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" http_proxy=http://proxy.invalid:1 "$NPL" bench $K20
expect_grep "$T/calls" '"--output-file","bench-results.jsonl"'
grep -q http_proxy "$T/calls" && fail "bench left http_proxy set"
expect_grep "$T/err" "bench: sglang.bench_serving ended well but wrote no results to bench-results.jsonl"
expect_rc 1 env PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" NPL_STUB_EXIT=3 "$NPL" bench $K20
expect_grep "$T/err" "sglang.bench_serving failed (exit 3)"

# the benchmark flow in one place: a stand-in bench_serving that appends a record where the real
# one does (--output-file, else BACKEND_MMDD_PROMPTS_IN_OUT.jsonl in the current folder); bench.sh,
# apply --role bench and npulaunch bench keep the results in the bundle, and verify finds them
mkdir -p "$T/fakebin" "$T/elsewhere"
cat >"$T/fakebin/python" <<PY
#!/bin/bash
out=
while ((\$#)); do [[ \$1 == --output-file ]] && out=\$2; shift; done
[[ -n \$out ]] || out=sglang_\$(date +%m%d)_256_3500_1500.jsonl
sed -n 2p "$B/pass.jsonl" >>"\$out"
PY
chmod +x "$T/fakebin/python"
expect_rc 0 "$NPL" render $K20 -o "$T/bb" --model-path /m --draft-model-path /d --ifname eth0
(cd "$T/elsewhere" && PATH="$T/fakebin:$PATH" bash "$T/bb/bench.sh") || fail "bench.sh with the stand-in"
ls "$T/bb"/sglang_*_256_3500_1500.jsonl >/dev/null 2>&1 || fail "bench.sh's results are not in the bundle: $(ls "$T/bb" "$T/elsewhere")"
[[ -z $(ls "$T/elsewhere") ]] || fail "bench.sh wrote into the current folder"
(cd "$T/bb" && "$NPL" verify) >"$T/out" 2>"$T/err" || fail "verify in the bundle: $(cat "$T/err" "$T/out")"
expect_grep "$T/err" "verify: the newest results of the bundle: ./sglang_"
expect_grep "$T/out" "verdict: PASS"
(cd "$T/elsewhere" && PATH="$T/fakebin:$PATH" "$NPL" bench "$T/bb") >"$T/out" 2>"$T/err" || fail "npulaunch bench BUNDLE: $(cat "$T/err")"
[[ -s $T/bb/bench-results.jsonl ]] || fail "npulaunch bench BUNDLE wrote elsewhere: $(ls "$T/elsewhere")"
expect_rc 0 "$NPL" verify "$T/bb"
expect_grep "$T/err" "verify: the newest results of the bundle: $T/bb/bench-results.jsonl"
rm -f "$T/bb"/sglang_*.jsonl
(cd "$T/elsewhere" && PATH="$T/fakebin:$PATH" "$NPL" apply --role bench "$T/bb") >"$T/out" 2>"$T/err" || fail "apply --role bench BUNDLE: $(cat "$T/err")"
ls "$T/bb"/sglang_*_256_3500_1500.jsonl >/dev/null 2>&1 || fail "apply --role bench's results are not in the bundle"
[[ -z $(ls "$T/elsewhere") ]] || fail "apply --role bench wrote into the current folder"
expect_rc 2 "$NPL" verify
expect_grep "$T/err" "which results? give bench_serving's results file, or run verify in a bundle"
mkdir -p "$T/nobench" && cp "$T/bb/manifest.json" "$T/nobench/"
expect_rc 2 "$NPL" verify "$T/nobench"
expect_grep "$T/err" "no benchmark results in $T/nobench: run bench.sh or npulaunch bench there first"

# verify: each fixture judged, with a clear verdict
expect_rc 0 "$NPL" verify "$B/pass.jsonl" $K20
expect_grep "$T/out" "$K20: record 2 of 2 ($B/pass.jsonl:2)"
grep -q '^  median TPOT  *18.42 ms  *20.00 ms  *ok$' "$T/out" || fail "pass table: $(cat "$T/out")"
expect_grep "$T/out" "verdict: PASS"
expect_rc 1 "$NPL" verify "$B/tpot-miss.jsonl" $K20
expect_grep "$T/out" "verdict: MISS: median TPOT 23.91 ms exceeds the 20 ms target"
grep -q '^  median TPOT  *23.91 ms  *20.00 ms  *FAIL$' "$T/out" || fail "tpot-miss table: $(cat "$T/out")"
expect_rc 1 "$NPL" verify "$B/ttft-miss.jsonl" $KP
expect_grep "$T/out" "verdict: MISS: median TTFT 4182.5 ms exceeds the 3000 ms target"
grep -q '^  median TPOT  *71.30 ms  *100.00 ms  *ok$' "$T/out" || fail "ttft-miss TPOT row: $(cat "$T/out")"
# a run that produced nothing never passes, whatever its numbers say
expect_rc 1 "$NPL" verify "$B/zero-output.jsonl" $K20
expect_grep "$T/out" "verdict: INVALID: no request completed; no output tokens; no TPOT was measured"
# a file that is not JSON lines: refused, located
expect_rc 2 "$NPL" verify "$B/broken.jsonl" $K20
expect_grep "$T/err" "npulaunch: $B/broken.jsonl:2:167: error: not valid JSON"
printf '\n\n' >"$T/empty.jsonl"
expect_rc 2 "$NPL" verify "$T/empty.jsonl" $K20
expect_grep "$T/err" "$T/empty.jsonl: error: no result records"
printf '[1, 2]\n' >"$T/array.jsonl"
expect_rc 2 "$NPL" verify "$T/array.jsonl" $K20
expect_grep "$T/err" "$T/array.jsonl:1:1: error: not a result record (a JSON object)"
expect_rc 2 "$NPL" verify "$T/missing.jsonl" $K20
# results of another workload are not the recipe's measurement
expect_rc 1 "$NPL" verify "$B/pass.jsonl" kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms
expect_grep "$T/out" "verdict: INVALID: 512 of 768 requests failed (66.7%, at most 0% may); the run's max concurrency is 64, the recipe's 192"
# failed requests: none by default, a share with --max-failed
sed 's/"completed": 256/"completed": 250/' "$B/pass.jsonl" >"$T/failed.jsonl"
expect_rc 1 "$NPL" verify "$T/failed.jsonl" $K20
expect_grep "$T/out" "6 of 256 requests failed (2.3%, at most 0% may)"
expect_rc 0 "$NPL" verify "$T/failed.jsonl" $K20 --max-failed 5
# --json, with stable keys
expect_rc 1 "$NPL" verify "$B/ttft-miss.jsonl" $KP --json
if command -v jq >/dev/null; then
	expect_eq "$(jq -r '"\(.verdict) \(.valid) \(.pass) \(.record)/\(.records)"' "$T/out")" "miss true false 1/1" "verify --json"
	# numbers as numbers, the comparison named, the reasons a list
	expect_eq "$(jq -c '.checks[] | select(.key == "median_ttft")' "$T/out")" \
		'{"name":"median TTFT","key":"median_ttft","value":4182.5,"unit":"ms","target":3000,"comparison":"<=","ok":false}' "verify --json TTFT check"
	expect_eq "$(jq -c '.checks[] | select(.key == "requests_completed") | [.value, .target, .comparison]' "$T/out")" '[8,8,">="]' "verify --json requests"
	expect_eq "$(jq -c '.checks[] | select(.key == "p99_tpot") | [.target, .comparison, .ok]' "$T/out")" '[null,null,null]' "verify --json information"
	expect_eq "$(jq -c '.reasons' "$T/out")" '["median TTFT 4182.5 ms exceeds the 3000 ms target"]' "verify --json reasons"
	expect_eq "$(jq -r '[keys[]] | join(",")' "$T/out")" "checks,file,line,pass,reasons,recipe,record,records,targets,valid,verdict" "verify --json keys"
fi
# in a bundle, the recipe is the bundle's
expect_rc 0 "$NPL" render $K20 -o "$T/bundle"
(cd "$T/bundle" && "$NPL" verify "$B/pass.jsonl") >"$T/out" 2>&1 || fail "verify in a bundle: $(cat "$T/out")"
expect_grep "$T/out" "verdict: PASS"
finish
