# Readiness over HTTP against real servers on loopback: wait, status, and the
# router that never starts while a server still answers 503 (router.sh and
# apply --role router).
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

start_http ok
OK=$port
start_http warm 2
WARM=$port
WARM_LOG=$http_log
start_http hang
HANG=$port

# wait
expect_rc 0 "$NPL" wait "http://127.0.0.1:$OK" "http://127.0.0.1:$WARM/" --timeout 30
expect_grep "$T/out" "ready      http://127.0.0.1:$OK  (after "
expect_grep "$T/out" "ready      http://127.0.0.1:$WARM  (after "
expect_eq "$(grep -c ' 503$' "$WARM_LOG")" 2 "503s seen before ready"
SECONDS=0
expect_rc 1 "$NPL" wait "http://127.0.0.1:$HANG" --timeout 2
((SECONDS <= 6)) || fail "wait on a hung server took ${SECONDS}s for a 2s timeout"
expect_grep "$T/out" "not ready  http://127.0.0.1:$HANG  (no answer within"
expect_grep "$T/err" "wait: 1 of 1 server not ready after 2s"
# refused, timed out and no route are told apart; credentials in a URL are never printed
expect_rc 1 "$NPL" wait "http://admin:s3cret@127.0.0.1:$HANG" "http://127.0.0.1:1" --timeout 1
expect_grep "$T/out" "not ready  http://admin:***@127.0.0.1:$HANG  (no answer within"
expect_grep "$T/out" "not ready  http://127.0.0.1:1  (connection refused)"
expect_nogrep "$T/out" "s3cret"
if [[ $(id -u) == 0 ]] && command -v unshare >/dev/null; then
	# a namespace of our own with loopback only: 10.9.9.9 has no route, and nothing leaves
	run unshare -n sh -c "ip link set lo up; exec \"\$0\" wait http://10.9.9.9:8000 --timeout 1" "$NPL"
	expect_eq "$rc" 1 "wait with no route"
	expect_grep "$T/out" "not ready  http://10.9.9.9:8000  (no route to the host)"
fi
expect_rc 2 "$NPL" wait 10.0.0.1:8000
# a URL no request can use is refused at once (it was polled until the timeout, 30 minutes by
# default): libcurl's parser says why
expect_rc 2 timeout 20 "$NPL" wait 'http://[::1' --timeout 600
expect_grep "$T/err" "npulaunch: wait: 'http://[::1' is not a URL of a server: Bad IPv6 address"
expect_rc 2 timeout 20 "$NPL" wait http://127.0.0.1:99999 --timeout 600
expect_grep "$T/err" "'http://127.0.0.1:99999' is not a URL of a server: Port number was not a decimal number between 0 and 65535"
expect_rc 2 timeout 20 "$NPL" wait http://:80 --timeout 600
expect_grep "$T/err" "'http://:80' is not a URL of a server: No host part in the URL"
expect_rc 2 timeout 20 "$NPL" wait 'http://127.0.0.1:1 x' --timeout 600
# the refusal shows the URL as every other message does: its password as ***
expect_rc 2 timeout 20 "$NPL" wait 'http://u:secret@127.0.0.1:99999' --timeout 600
expect_grep "$T/err" "'http://u:***@127.0.0.1:99999' is not a URL of a server"
expect_nogrep "$T/err" secret
expect_rc 2 timeout 20 "$NPL" wait http://127.0.0.1:0 --timeout 600
expect_grep "$T/err" "'http://127.0.0.1:0' is not a URL of a server: port 0 is no server's"
# only http and https, whatever a URL names, also one read from a manifest (issue 25):
# gopher:// would send whatever listens there raw bytes
expect_rc 2 "$NPL" wait "gopher://127.0.0.1:1/_x"
start_http ok
"$NPL" render qwen3-8b-w8a8-1p-in3k5-out1k5-5ms -o "$T/gopher" --model-path /m --draft-model-path /d --ifname eth0 2>/dev/null ||
	fail "render for the gopher case"
sed -i "s|\"http://127.0.0.1:6688\"|\"gopher://127.0.0.1:$port/_GET%20/health%20HTTP/1.0%0D%0A%0D%0A\"|" "$T/gopher/manifest.json"
grep -q gopher "$T/gopher/manifest.json" || fail "the manifest's endpoint was not replaced"
# refused before anything is sent: the manifest's schema allows http://HOST:PORT only (issue 25, 5)
expect_rc 2 "$NPL" status "$T/gopher"
expect_grep "$T/err" "gopher/manifest.json: error: .roles[0].endpoints[0].url: a string matching ^http://"
sleep 0.3
expect_eq "$(wc -c <"$http_log")" 0 "bytes the server got from a gopher:// endpoint"
expect_rc 2 "$NPL" wait "http://127.0.0.1:$OK" --probe ping
expect_rc 0 "$NPL" wait "http://127.0.0.1:$OK" --probe generate --timeout 5

# a deployment of the tests' own whose servers are the stubs
start_http ok
P=$port
start_http ok
E=$port
start_http warm 1000000
D=$port
D_LOG=$http_log
mkdir -p "$T/recipes"
cat >"$T/recipes/ports.yaml" <<YAML
kind: recipe
title: Kimi-K2.6 W4A8 1P1D 16P PORTS 100ms
model: kimi-k2.6
hardware: ascend-a3
cards: 16
mode: pd-disagg
quantization: W4A8 INT8
dataset: 8k+1k
tpot: 100ms
ports: {prefill: $P, decode: $D, entry: $E, bootstrap: 18998}
speculative: {steps: 3}
bench: {dataset: random, input: 8000, output: 1000, concurrency: 1, prompts: 1}
YAML
ID=kimi-k2.6-w4a8-1p1d-16p-ports-100ms
SITE=(--model-path /m --draft-model-path /d --ifname lo --prefill-ip 127.0.0.1 --decode-ip 127.0.0.1)
expect_rc 0 "$NPL" --recipes "$T/recipes" render $ID "${SITE[@]}" -o "$T/b"

# status: a row per endpoint; the decode still warming is down; exit 1
expect_rc 1 "$NPL" status "$T/b"
expect_grep "$T/out" "prefill  0         http://127.0.0.1:$P"
expect_grep "$T/out" "/models/Stub-Model"
grep -q "decode .* http://127.0.0.1:$D .* down .*(HTTP 503)" "$T/out" || fail "status decode row: $(cat "$T/out")"
grep -q "router .* -  .* http://127.0.0.1:$E .* up" "$T/out" || fail "status router row: $(cat "$T/out")"
expect_grep "$T/err" "status: 1 of 3 endpoints down"
expect_rc 1 "$NPL" status "$T/b" --json
if command -v jq >/dev/null; then
	expect_eq "$(jq -r 'map("\(.role):\(.up):\(.code):\(.model)") | join(" ")' "$T/out")" \
		"prefill:true:200:/models/Stub-Model decode:false:503:null router:true:200:/models/Stub-Model" "status --json"
fi
(cd "$T/b" && "$NPL" status) >"$T/out" 2>&1 && fail "status in a bundle with a server down exited 0"
expect_rc 2 "$NPL" --recipes "$T/recipes" status $ID --model-path /m
expect_grep "$T/err" "the prefill endpoint needs --prefill-ip"

# the router never starts while a server still answers 503
make_root "$T/root"
export PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls"
before=$(grep -c . "$D_LOG")
expect_rc 1 env NPULAUNCH_WAIT_TIMEOUT=2 bash "$T/b/router.sh"
expect_grep "$T/err" "router.sh: ready: http://127.0.0.1:$P"
expect_grep "$T/err" "router.sh: not starting: not ready after 2s: http://127.0.0.1:$D"
[[ -e $T/calls ]] && fail "router.sh launched the router while decode answered 503"
(($(grep -c ' 503$' "$D_LOG") > before)) || fail "router.sh did not ask the decode server"
expect_rc 1 env NPULAUNCH_WAIT_TIMEOUT=2 NPULAUNCH_ROOT="$T/root" "$NPL" --recipes "$T/recipes" apply --role router $ID "${SITE[@]}"
expect_grep "$T/err" "apply: not starting the router: 1 of 2 servers not ready after 2s"
[[ -e $T/calls ]] && fail "apply launched the router while decode answered 503"

# once every server answers, both start it
start_http warm 2
D2=$port
D2_LOG=$http_log
sed -i "s/decode: $D,/decode: $D2,/" "$T/recipes/ports.yaml"
expect_rc 0 "$NPL" --recipes "$T/recipes" render $ID "${SITE[@]}" -o "$T/b2"
expect_rc 0 env NPULAUNCH_WAIT_TIMEOUT=30 bash "$T/b2/router.sh"
expect_grep "$T/err" "router.sh: ready: http://127.0.0.1:$D2"
expect_grep "$T/calls" '"sglang_router.launch_router","--pd-disaggregation"'
expect_eq "$(tail -1 "$D2_LOG")" "GET /health 200" "the router started after decode answered 200"
rm -f "$T/calls"
expect_rc 0 env NPULAUNCH_WAIT_TIMEOUT=30 NPULAUNCH_ROOT="$T/root" "$NPL" --recipes "$T/recipes" apply --role router $ID "${SITE[@]}"
expect_grep "$T/calls" '"sglang_router.launch_router","--pd-disaggregation"'
# without curl the scripts speak HTTP over bash's /dev/tcp
mkdir -p "$T/nocurl"
for tool in bash sleep timeout head; do ln -s "$(command -v $tool)" "$T/nocurl/$tool"; done
ln -s "$NPL_STUB" "$T/nocurl/python"
rm -f "$T/calls"
expect_rc 0 env PATH="$T/nocurl" NPULAUNCH_WAIT_TIMEOUT=30 bash "$T/b2/router.sh"
expect_grep "$T/err" "router.sh: ready: http://127.0.0.1:$D2"
expect_grep "$T/calls" "launch_router"
rm -f "$T/calls"
expect_rc 1 env PATH="$T/nocurl" NPULAUNCH_WAIT_TIMEOUT=2 bash "$T/b/router.sh"
expect_grep "$T/err" "not ready after 2s: http://127.0.0.1:$D"
[[ -e $T/calls ]] && fail "router.sh without curl launched the router while decode answered 503"
# NPULAUNCH_WAIT_TIMEOUT=0: no waiting at all
rm -f "$T/calls"
expect_rc 0 env NPULAUNCH_WAIT_TIMEOUT=0 bash "$T/b/router.sh"
expect_grep "$T/calls" "launch_router"
expect_rc 2 env NPULAUNCH_WAIT_TIMEOUT=soon bash "$T/b/router.sh"
finish
