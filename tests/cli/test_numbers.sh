# Numbers from users and results files: one strict reader for every number that comes from a
# flag, the environment or a file (decimal, finite, in range, else exit 2 with a message that
# names where it came from and what is accepted); router.sh reads NPULAUNCH_WAIT_TIMEOUT as the
# binary does and bounds each request alike; verify judges the last record whatever bytes
# precede it; status refuses a deployment with nothing to probe; bench --host is an address.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
B=$NPL_DATA/bench
K20=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
# every command here must end by itself: a hang is a failure, not a stuck test
TO=(timeout 20)

start_http ok
OK=$port
start_http hang
HANG=$port

# ---- numbers refused everywhere: each a usage error (exit 2), at once -----------------------
bad=(nan NaN inf -inf Infinity 1e999 1e3 99999999999999999999 0x10 -1 +1 ' 1' '1 ' .5 5. '1,5'
	'1 2' 1_000 $'1\n' 0b1 '' 1s)
for v in "${bad[@]}"; do
	expect_rc 2 "${TO[@]}" "$NPL" wait "http://127.0.0.1:$OK" --timeout "$v"
	expect_grep "$T/err" "npulaunch: wait: --timeout '$v' is not a number of seconds from 0 to 604800 (decimal, like 1.5)"
	expect_rc 2 "${TO[@]}" "$NPL" status "$T/none.json" --timeout "$v"
	expect_grep "$T/err" "npulaunch: status: --timeout '$v' is not a number of seconds from 0.001 to 3600 (decimal, like 1.5)"
	expect_rc 2 "${TO[@]}" "$NPL" verify "$B/pass.jsonl" $K20 --max-failed "$v"
	expect_grep "$T/err" "npulaunch: verify: --max-failed '$v' is not a percentage from 0 to 100 (decimal, like 1.5)"
	expect_rc 2 "${TO[@]}" "$NPL" bench $K20 --dry-run --port "$v"
	expect_grep "$T/err" "npulaunch: bench: --port '$v' is not a port from 1 to 65535"
	[[ -z $v ]] && continue   # an empty variable is an unset one
	expect_rc 2 "${TO[@]}" env NPULAUNCH_WAIT_TIMEOUT="$v" "$NPL" wait "http://127.0.0.1:$OK"
	expect_grep "$T/err" "npulaunch: wait: NPULAUNCH_WAIT_TIMEOUT '$v' is not a number of seconds from 0 to 604800 (decimal, like 1.5)"
done
# out of range, though well formed
expect_rc 2 "$NPL" wait "http://127.0.0.1:$OK" --timeout 604801
expect_rc 2 "$NPL" wait "http://127.0.0.1:$OK" --timeout 604800.0000000000000000001
expect_rc 2 "$NPL" status "$T/none.json" --timeout 0
expect_rc 2 "$NPL" status "$T/none.json" --timeout 3600.5
expect_rc 2 "$NPL" verify "$B/pass.jsonl" $K20 --max-failed 100.01
expect_rc 2 "$NPL" bench $K20 --dry-run --port 0
expect_rc 2 "$NPL" bench $K20 --dry-run --port 65536
# accepted: decimal, a fraction where it makes sense, leading zeros
expect_rc 0 "$NPL" wait "http://127.0.0.1:$OK" --timeout 1.5
expect_rc 0 "$NPL" wait "http://127.0.0.1:$OK" --timeout 0010
expect_rc 0 "$NPL" wait "http://127.0.0.1:$OK" --timeout 604800
expect_rc 0 env NPULAUNCH_WAIT_TIMEOUT=2.25 "$NPL" wait "http://127.0.0.1:$OK"
expect_rc 0 env NPULAUNCH_WAIT_TIMEOUT= "$NPL" wait "http://127.0.0.1:$OK"
expect_rc 0 "$NPL" verify "$B/pass.jsonl" $K20 --max-failed 2.5
expect_rc 0 "$NPL" verify "$B/pass.jsonl" $K20 --max-failed 100
expect_rc 0 "$NPL" bench $K20 --dry-run --port 08000
expect_grep "$T/out" "--port 8000 "
# a fractional timeout is kept, not rounded to whole seconds
SECONDS=0
expect_rc 1 "$NPL" wait "http://127.0.0.1:$HANG" --timeout 1.5
expect_grep "$T/err" "wait: 1 of 1 server not ready after 1.5s"
((SECONDS <= 4)) || fail "wait --timeout 1.5 on a hung server took ${SECONDS}s"

# the other numbers users give: query budgets, cards, hit rates, datasets, CPU lists
for v in nan 0x10 +5 ' 5' 1e3 99999999999999999999; do
	expect_rc 2 "$NPL" list kimi-k2.6 --cards "$v"
	expect_rc 2 "$NPL" list kimi-k2.6 --prefix-cache "$v"
	expect_rc 2 "$NPL" list kimi-k2.6 --tpot "$v"
done
for v in .5ms 5.ms +5ms ' 5ms' 0x5ms; do
	expect_rc 2 "$NPL" list kimi-k2.6 --tpot "$v"
	expect_grep "$T/err" "--tpot '$v' is not a duration"
done
for v in '2147483647p_30+256' '99999999999x1024 (30)+1024' '1024x99999999999 (30)+1024' \
	'+1024x1024 (30)+1024' '1024x+1024 (30)+1024' '64k+1k (+90%)' '64k+1k (99999999999%)' \
	'64k+1k ( 90%)'; do
	expect_rc 2 "$NPL" list kimi-k2.6 --dataset "$v"
	expect_grep "$T/err" "--dataset"
done
expect_rc 0 "$NPL" list kimi-k2.6 --dataset '1024x1024 (30)+1024'
expect_rc 0 "$NPL" list kimi-k2.6 --dataset '64k+1k (90%)'
make_root "$T/root"
SITE=(--model-path /m --draft-model-path /d --ifname lo)
for v in ' 1' '+1' '0x1' '1-+1' '99999999999999999999' '1, 0'; do
	run env NPULAUNCH_NODE_IP=127.0.0.1 "$NPL" apply $K20 "${SITE[@]}" --root "$T/root" --dry-run --cpus "$v"
	((rc != 0)) || fail "apply --cpus '$v' was accepted"
	expect_grep "$T/err" "--cpus '$v' is not a CPU list"
done

# flag values the rules compute with (--set): beyond an int they are no numbers to them, so no
# overflow (UBSan in the sanitizer build would stop the command)
for set in 'speculative-num-steps=9223372036854775807 speculative-eagle-topk=1' \
	'cuda-graph-bs-decode=99999999999999999999 dp-size=16' 'dp-size=99999999999999999999' \
	'tp-size=-9223372036854775808 dp-size=-1'; do
	args=()
	for kv in $set; do args+=(--set "$kv"); done
	run "$NPL" render $K20 "${args[@]}" --force "${SITE[@]}" -o "$T/set-bundle"
	((rc <= 2)) || fail "render --set $set exited $rc"
	expect_nogrep "$T/err" "runtime error"
done

# a recipe's numbers: the loader's own located messages, the same strict reader
mkdir -p "$T/recipes"
sed -e 's/^title: .*/title: Kimi-K2.6 W4A8 8P IMG NUMBERS 50ms/' -e 's/resolution: 1024x1024/resolution: +1024x1024/' \
	"$NPL_SRC/recipes/kimi-k2.6/kimi-k2.6-w4a8-8p-in1024x1024-30-out1024-50ms.yaml" >"$T/recipes/img.yaml"
expect_rc 5 "$NPL" --recipes "$T/recipes" validate
expect_grep "$T/err" "img.yaml:"
expect_grep "$T/err" "'resolution' must be WIDTHxHEIGHT, like 1920x1080"
sed -i 's/resolution: +1024x1024/resolution: 99999999999x1024/' "$T/recipes/img.yaml"
expect_rc 5 "$NPL" --recipes "$T/recipes" validate
expect_grep "$T/err" "'resolution' must be WIDTHxHEIGHT, like 1920x1080"
sed -i -e 's/resolution: 99999999999x1024/resolution: 1024x1024/' -e 's/^tpot: 50ms/tpot: 50.ms/' "$T/recipes/img.yaml"
expect_rc 5 "$NPL" --recipes "$T/recipes" validate
expect_grep "$T/err" "'tpot' must be a duration like 20ms or 5s, not '50.ms'"
rm "$T/recipes/img.yaml"

# NPULAUNCH_STOP_TIMEOUT (apply's grace for instances that share a node): the same reader
for v in nan inf 0x10 -1 1e3 3601; do
	expect_rc 2 env NPULAUNCH_STOP_TIMEOUT="$v" NPULAUNCH_NODE_IP=127.0.0.1 "$NPL" apply $K20 "${SITE[@]}" --root "$T/root" --dry-run
	expect_grep "$T/err" "npulaunch: apply: NPULAUNCH_STOP_TIMEOUT '$v' is not a number of seconds from 0 to 3600 (decimal, like 1.5)"
done
expect_rc 0 env NPULAUNCH_STOP_TIMEOUT=2.5 NPULAUNCH_NODE_IP=127.0.0.1 "$NPL" apply $K20 "${SITE[@]}" --root "$T/root" --dry-run

# ---- NPULAUNCH_WAIT_TIMEOUT: router.sh and apply --role router read it alike ---------------
start_http ok
P=$port
start_http ok
E=$port
start_http warm 1000000
D=$port
cat >"$T/recipes/ports.yaml" <<YAML
kind: recipe
title: Kimi-K2.6 W4A8 1P1D 16P NUMBERS 100ms
model: kimi-k2.6
hardware: ascend-a3
cards: 16
mode: pd-disagg
quantization: W4A8 INT8
dataset: 8k+1k
tpot: 100ms
ports: {prefill: $P, decode: $OK, entry: $E, bootstrap: 18998}
speculative: {steps: 3}
bench: {dataset: random, input: 8000, output: 1000, concurrency: 1, prompts: 1}
YAML
ID=kimi-k2.6-w4a8-1p1d-16p-numbers-100ms
RSITE=(--model-path /m --draft-model-path /d --ifname lo --prefill-ip 127.0.0.1 --decode-ip 127.0.0.1)
expect_rc 0 "$NPL" --recipes "$T/recipes" render $ID "${RSITE[@]}" -o "$T/ready"
sed -i "s/decode: $OK,/decode: $D,/" "$T/recipes/ports.yaml"
expect_rc 0 "$NPL" --recipes "$T/recipes" render $ID "${RSITE[@]}" -o "$T/warm"
export PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls"
apply_router=("$NPL" apply --role router "$T/ready")
for v in "${bad[@]}" 604801 604800.5 604800.0000000000000000001; do
	[[ -z $v ]] && continue
	want="NPULAUNCH_WAIT_TIMEOUT '$v' is not a number of seconds from 0 to 604800 (decimal, like 1.5)"
	rm -f "$T/calls"
	expect_rc 2 "${TO[@]}" env NPULAUNCH_WAIT_TIMEOUT="$v" bash "$T/ready/router.sh"
	expect_grep "$T/err" "router.sh: $want"
	expect_rc 2 "${TO[@]}" env NPULAUNCH_WAIT_TIMEOUT="$v" NPULAUNCH_ROOT="$T/root" "${apply_router[@]}"
	expect_grep "$T/err" "npulaunch: apply: $want"
	expect_rc 2 "${TO[@]}" env NPULAUNCH_WAIT_TIMEOUT="$v" "${apply_router[@]}" --dry-run
	[[ -e $T/calls ]] && fail "NPULAUNCH_WAIT_TIMEOUT='$v' started the router"
done
for v in 0 1.5 0010 604800 604800.000 ''; do
	rm -f "$T/calls"
	expect_rc 0 "${TO[@]}" env NPULAUNCH_WAIT_TIMEOUT="$v" bash "$T/ready/router.sh"
	expect_grep "$T/calls" "launch_router"
	rm -f "$T/calls"
	expect_rc 0 "${TO[@]}" env NPULAUNCH_WAIT_TIMEOUT="$v" NPULAUNCH_ROOT="$T/root" "${apply_router[@]}"
	expect_grep "$T/calls" "launch_router"
done
# a fractional timeout holds in the script too, and each request is bounded as in the binary (2s)
rm -f "$T/calls"
SECONDS=0
expect_rc 1 "${TO[@]}" env NPULAUNCH_WAIT_TIMEOUT=1.5 bash "$T/warm/router.sh"
expect_grep "$T/err" "router.sh: not starting: not ready after 1.5s: http://127.0.0.1:$D"
((SECONDS <= 4)) || fail "router.sh with a 1.5s timeout took ${SECONDS}s"
sed -i "s/decode: $D,/decode: $HANG,/" "$T/recipes/ports.yaml"
expect_rc 0 "$NPL" --recipes "$T/recipes" render $ID "${RSITE[@]}" -o "$T/hang"
for tool in curl ''; do
	p=$PATH
	if [[ -z $tool ]]; then
		mkdir -p "$T/nocurl"
		for t in bash sleep timeout head; do ln -sf "$(command -v $t)" "$T/nocurl/$t"; done
		p=$T/nocurl
	fi
	SECONDS=0
	expect_rc 1 "${TO[@]}" env PATH="$p" NPULAUNCH_WAIT_TIMEOUT=1 bash "$T/hang/router.sh"
	expect_grep "$T/err" "not ready after 1s: http://127.0.0.1:$HANG"
	((SECONDS <= 3)) || fail "router.sh (${tool:-/dev/tcp}) on a hung server with a 1s timeout took ${SECONDS}s"
	SECONDS=0
	expect_rc 1 "${TO[@]}" env PATH="$p" NPULAUNCH_WAIT_TIMEOUT=3 bash "$T/hang/router.sh"
	((SECONDS <= 5)) || fail "router.sh (${tool:-/dev/tcp}) on a hung server with a 3s timeout took ${SECONDS}s"
done
[[ -e $T/calls ]] && fail "router.sh started the router while a server hung"

# ---- verify: the last record, whatever bytes precede it -------------------------------------
# a PASS, a NUL, then a MISS: the MISS is judged
{ cat "$B/pass.jsonl"; printf '\0\n'; cat "$B/tpot-miss.jsonl"; } >"$T/nul.jsonl"
expect_rc 1 "$NPL" verify "$T/nul.jsonl" $K20
expect_grep "$T/out" "record 3 of 3 ($T/nul.jsonl:4)"
expect_grep "$T/out" "verdict: MISS: median TPOT 23.91 ms exceeds the 20 ms target"
{ cat "$B/pass.jsonl"; printf 'x\0y\n'; cat "$B/tpot-miss.jsonl"; } >"$T/nul.jsonl"
expect_rc 1 "$NPL" verify "$T/nul.jsonl" $K20
expect_grep "$T/out" "verdict: MISS: median TPOT 23.91 ms exceeds the 20 ms target"
expect_grep "$T/err" "nul.jsonl:3:2: warning: not valid JSON: line skipped"
# NUL padding as a crash leaves it, before and after the last record
{ cat "$B/pass.jsonl"; head -c 4096 /dev/zero; cat "$B/tpot-miss.jsonl"; head -c 100 /dev/zero; } >"$T/pad.jsonl"
expect_rc 1 "$NPL" verify "$T/pad.jsonl" $K20
expect_grep "$T/out" "verdict: MISS"
# a NUL inside the last record: it cannot be judged, and an earlier one does not stand in
{ cat "$B/pass.jsonl"; sed 's/"completed"/"comp\x00leted"/' "$B/tpot-miss.jsonl"; } >"$T/nulin.jsonl"
expect_rc 2 "$NPL" verify "$T/nulin.jsonl" $K20
expect_grep "$T/err" "nulin.jsonl:3:"
expect_grep "$T/err" "error: not valid JSON"
# other junk before the last record is skipped with a warning; the last one is judged
{ printf 'garbage\n[1]\n'; cat "$B/tpot-miss.jsonl"; } >"$T/junk.jsonl"
expect_rc 1 "$NPL" verify "$T/junk.jsonl" $K20
expect_grep "$T/out" "record 1 of 1 ($T/junk.jsonl:3)"
expect_grep "$T/err" "junk.jsonl:2:1: warning: not a result record (a JSON object): line skipped"
# a truncated last record: refused, not replaced by the one before
{ cat "$B/pass.jsonl"; head -c 300 "$B/tpot-miss.jsonl"; } >"$T/trunc.jsonl"
expect_rc 2 "$NPL" verify "$T/trunc.jsonl" $K20
# duplicate keys: the last value counts, as Python's json reads it
sed 's/^{/{"median_tpot_ms": 10.0, /' "$B/tpot-miss.jsonl" >"$T/dup.jsonl"
expect_rc 1 "$NPL" verify "$T/dup.jsonl" $K20
expect_grep "$T/out" "verdict: MISS: median TPOT 23.91 ms exceeds the 20 ms target"
sed 's/}$/, "median_tpot_ms": 30.0}/' "$B/pass.jsonl" >"$T/dup2.jsonl"
expect_rc 1 "$NPL" verify "$T/dup2.jsonl" $K20
expect_grep "$T/out" "median TPOT 30.00 ms exceeds the 20 ms target"
sed 's/}$/, "completed": 0}/' "$B/pass.jsonl" >"$T/dup3.jsonl"
expect_rc 1 "$NPL" verify "$T/dup3.jsonl" $K20
expect_grep "$T/out" "verdict: INVALID"
# completed: a whole number, at most the prompts; numbers beyond a double are no numbers
for c in 300 256.5 255.5 1e400 -1e400 '"256"' true 1E400; do
	sed "s/\"completed\": 256/\"completed\": $c/" "$B/pass.jsonl" >"$T/c.jsonl"
	expect_rc 1 "$NPL" verify "$T/c.jsonl" $K20 --max-failed 50
	expect_grep "$T/out" "verdict: INVALID"
	jq -e '.verdict == "invalid"' <("$NPL" verify "$T/c.jsonl" $K20 --max-failed 50 --json) >/dev/null ||
		fail "completed $c: not invalid in --json"
done
sed 's/"completed": 256/"completed": 300/' "$B/pass.jsonl" >"$T/c.jsonl"
expect_rc 1 "$NPL" verify "$T/c.jsonl" $K20
expect_grep "$T/out" "300 requests completed, more than the 256 prompts sent"
sed 's/"completed": 256/"completed": 255.5/' "$B/pass.jsonl" >"$T/c.jsonl"
expect_rc 1 "$NPL" verify "$T/c.jsonl" $K20 --max-failed 50
expect_grep "$T/out" "'completed' is 255.5, not a whole number"
sed 's/"completed": 256/"completed": 256.0/' "$B/pass.jsonl" >"$T/c.jsonl"
expect_rc 0 "$NPL" verify "$T/c.jsonl" $K20
for k in total_output_tokens median_tpot_ms; do
	sed "s/\"$k\": [0-9.]*/\"$k\": 1e400/" "$B/pass.jsonl" >"$T/c.jsonl"
	expect_rc 1 "$NPL" verify "$T/c.jsonl" $K20
	expect_grep "$T/out" "verdict: INVALID"
	grep -q '  ok$' <(grep -E 'output tokens|median TPOT' "$T/out" | grep -F -- "$(echo $k | sed 's/total_output_tokens/output tokens/; s/median_tpot_ms/median TPOT/')") &&
		fail "$k 1e400 judged ok: $(cat "$T/out")"
done
# a bundle whose manifest lost its target is refused, not judged without it (nor a crash)
expect_rc 0 "$NPL" render $K20 -o "$T/bundle"
jq 'del(.recipe.tpot_ms)' "$T/bundle/manifest.json" >"$T/m.json" && mv "$T/m.json" "$T/bundle/manifest.json"
expect_rc 2 "$NPL" verify "$B/pass.jsonl" "$T/bundle"
expect_grep "$T/err" "bundle/manifest.json: error: .recipe.tpot_ms: missing: the field is required"
# ---- status: a deployment with nothing to probe is not "all up" -----------------------------
printf '{"format": "npulaunch-plan/1", "recipe": {"id": "x"}, "roles": []}\n' >"$T/none.json"
expect_rc 2 "$NPL" status "$T/none.json"
expect_grep "$T/err" "none.json: error: .recipe.title: missing: the field is required"
expect_rc 2 "$NPL" status "$T/none.json" --json
printf '{"format": "npulaunch-plan/1", "recipe": {"id": "x"}, "roles": [{"role": "bench", "program": "bench", "endpoints": []}]}\n' >"$T/none.json"
expect_rc 2 "$NPL" status "$T/none.json"

# ---- bench --host: an address, as the site values are ----------------------------------------
for h in '' -rf 'not an ip' '10.0.0.1; x' 10.0.0.256 'http://10.0.0.1' '[::1]' $'10.0.0.1\n'; do
	expect_rc 2 "$NPL" bench $K20 --dry-run --host "$h"
	expect_grep "$T/err" "npulaunch: bench: --host '$h' is not an IPv4 or IPv6 address"
done
expect_rc 0 "$NPL" bench $K20 --dry-run --host 10.9.0.1
expect_grep "$T/out" "--host 10.9.0.1 --port 6688"
expect_rc 0 "$NPL" bench $K20 --dry-run --host 0:0:0:0:0:0:0:1
expect_grep "$T/out" "--host ::1 --port 6688"

finish
