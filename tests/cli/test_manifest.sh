# A bundle's manifest of the wrong shape is refused with a located message, never a crash
# (issue 25, 5): every command that reads one checks it against docs/json/manifest.schema.json
# (compiled in) first. status and apply's router wait request only the endpoints the plan derives.
# Then tests/tools/manifest_fuzz.py mutates real manifests of every target and runs apply, bench,
# verify, status and wait on each, with python3-jsonschema's verdict on the schema file as the
# oracle of npulaunch's.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
PD=deepseek-r1-w4a8-1p1d-16p-in3k5-out1k5-50ms
RESULTS=$NPL_DATA/bench/pass.jsonl

need_python jsonschema referencing

# a network namespace of our own when one can be made: nothing a command requests can leave it
# (the fixed code sends nothing to a tampered endpoint anyway; this guards a regression)
NS=()
if unshare -rn true 2>/dev/null; then
	NS=(unshare -rn)
fi

expect_rc 0 "$NPL" render "$PD" -o "$T/b" --model-path /m --ifname lo --prefill-ip 127.0.0.1 --decode-ip 127.0.0.1

# mutate EXPR: a copy of the bundle at $T/m whose manifest d had EXPR done to it (python)
mutate() {
	rm -rf "$T/m"
	cp -r "$T/b" "$T/m"
	"$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); $1; json.dump(d, open(sys.argv[1], 'w'))" \
		"$T/m/manifest.json" || fail "mutate $1"
}

# refused CMD... : exit 2 and the message, located at the manifest and the JSON path
refused() {
	local want=$1
	shift
	(cd "$T/m" && "${NS[@]}" "$@" >"$T/out" 2>"$T/err")
	rc=$?
	[[ $rc == 2 ]] || fail "$* exited $rc, want 2: $(head -c 1000 "$T/err")"
	expect_grep "$T/err" "npulaunch: $want"
}

# a number where a string belongs: these three crashed (SIGSEGV) before
mutate 'd["roles"][3]["nodes"][0]["launch"][0] = 5'
for c in "apply --dry-run --role bench" "bench --dry-run" "verify $RESULTS ."; do
	# shellcheck disable=SC2086  # the words of c
	refused "./manifest.json: error: .roles[3].nodes[0].launch[0]: a string is expected, not the integer 5" "$NPL" $c
done
# a key given twice: cJSON takes the first, Python's json the last; refused, whichever it is
rm -rf "$T/m" && cp -r "$T/b" "$T/m"
"$PY" -c 'import sys, re
t = open(sys.argv[1]).read()
t = t.replace("\"site\":\t{", "\"site\":\t{\"prefill-ip\": [\"127.0.0.2\"], ", 1)
open(sys.argv[1], "w").write(t)' "$T/m/manifest.json"
grep -q '"prefill-ip": \["127.0.0.2"\]' "$T/m/manifest.json" || fail "the duplicate key was not planted"
for c in "apply --dry-run --role prefill" "bench --dry-run" "verify $RESULTS ." "status --timeout 0.2" "preflight"; do
	# shellcheck disable=SC2086  # the words of c
	refused "./manifest.json: error: .site.prefill-ip: the key is given twice (which one counts depends on the reader)" "$NPL" $c
done
mutate 'd["roles"][0]["role"] = 5'
refused './manifest.json: error: .roles[0].role: "pd-mixed", "prefill" or "decode" is expected, not the integer 5' \
	"$NPL" status --timeout 0.2
mutate 'd["roles"][2]["endpoints"][0]["url"] = 5'
refused "./manifest.json: error: .roles[2].endpoints[0].url: a string is expected, not the integer 5" \
	"$NPL" status --timeout 0.2
mutate 'd["roles"][1]["nodes"][0]["flags"][0]["origin"] = None'
refused "./manifest.json: error: .roles[1].nodes[0].flags[0].origin: an object is expected, not null" \
	"$NPL" apply --dry-run --role decode
mutate 'del d["roles"][0]["endpoints"]'
refused "./manifest.json: error: .roles[0].endpoints: missing: the field is required" "$NPL" bench --dry-run
mutate 'd["roles"][0]["nodes"][0]["env"][0]["zz"] = 1'
refused "./manifest.json: error: .roles[0].nodes[0].env[0].zz: no such field here" "$NPL" apply --dry-run --role prefill
mutate 'd["roles"][0]["tp_size"] = 1e300'
refused "./manifest.json: error: .roles[0].tp_size: a number <= 1000000 is expected, not the integer 1e+300" \
	"$NPL" apply --dry-run --role prefill
mutate 'd["files"]["\x1bx"] = {"sha256": "0" * 64}'
refused './manifest.json: error: .files["\x1bx"]: no such field here' "$NPL" bench --dry-run
# the site values a hand-edited manifest carries are checked as the flags' are (apply exported
# GLOO_SOCKET_IFNAME='eth0; rm -rf /' and passed --model-path relative before)
mutate 'd["site"]["ifname"] = "eth0; rm -rf /"'
refused "./manifest.json: error: the site's ifname 'eth0; rm -rf /' is not a network interface name" \
	"$NPL" apply --dry-run --role prefill
mutate 'd["site"]["model-path"] = "relative"'
refused "./manifest.json: error: the site's model-path must be an absolute path, not 'relative'" "$NPL" bench --dry-run
# a NUL in a string (\u0000): cJSON would end the string there, and /m read as the whole value
mutate 'd["site"]["model-path"] = "/m\x00 --evil"'
grep -qF '\u0000' "$T/m/manifest.json" || fail "the NUL was not planted"
refused './manifest.json: error: a string holds \u0000 (a NUL, which would cut the value short)' \
	"$NPL" apply --dry-run --role prefill
# but a backslash before the letters u0000 in a value render takes is text, not a NUL: the
# bundle render wrote is read back
expect_rc 0 "$NPL" render "$PD" -o "$T/bs" --model-path '/m/\u0000x' --ifname lo --prefill-ip 127.0.0.1 --decode-ip 127.0.0.1
grep -qF '\\u0000x' "$T/bs/manifest.json" || fail "the manifest does not hold the escaped backslash"
(cd "$T/bs" && "${NS[@]}" "$NPL" bench --dry-run >"$T/out" 2>"$T/err")
expect_eq "$?" 0 "bench --dry-run in a bundle whose model path holds a backslash and u0000"
# an env file whose path climbs out of --root (joined to it, it named the host's /etc/passwd)
mutate 'd["roles"][0]["source"][0]["path"] = "/usr/local/Ascend/../../../etc/passwd"'
(cd "$T/m" && NPULAUNCH_NODE_IP=127.0.0.1 "${NS[@]}" "$NPL" apply --dry-run --role prefill --root "$T/m" \
	--no-preflight >"$T/out" 2>"$T/err")
expect_eq "$?" 1 "apply with an env file that climbs out of the root"
expect_grep "$T/err" "the env file '/usr/local/Ascend/../../../etc/passwd' is not an absolute path without '..' parts"
# a manifest named as a file: its own path in the message
mutate 'd["needs"] = {}'
refused "$T/m/manifest.json: error: .needs: an array is expected, not an object" "$NPL" bench --dry-run "$T/m/manifest.json"
# trailing text after the document: not one JSON document
mutate 'pass'
echo '{}' >>"$T/m/manifest.json"
refused "./manifest.json: error: not a npulaunch manifest" "$NPL" bench --dry-run

# status requests only what the plan derives for each role: http(s)://ADDRESS:PORT, the address
# one of the role's nodes has, the port one they listen on; a tampered endpoint is refused before
# any request (the loopback ports below are nobody's, and nothing is sent to them)
mutate 'd["roles"][2]["endpoints"][0]["url"] = "http://10.1.2.3:6688"'
refused "status: the router endpoint http://10.1.2.3:6688: its host is no address of the role's nodes" \
	"$NPL" status --timeout 0.2
mutate 'd["roles"][0]["endpoints"][0]["url"] = "http://127.0.0.1:22"'
refused "status: the prefill endpoint http://127.0.0.1:22: its port is none the role's nodes listen on" \
	"$NPL" status --timeout 0.2
mutate 'd["roles"][0]["endpoints"][0]["url"] = "http://evil.example:8000"'
refused "status: the prefill endpoint http://evil.example:8000: its host is not an IP address" \
	"$NPL" status --timeout 0.2
# the endpoints come from the site addresses, which are checked as the flags' are when the
# manifest is read: a name or a URL path there never reaches a request
mutate 'd["site"]["prefill-ip"] = ["evil.example"]'
refused "./manifest.json: error: the site's prefill-ip 'evil.example' is not an IPv4 or IPv6 address" \
	"$NPL" status --timeout 0.2
mutate 'd["site"]["decode-ip"] = ["127.0.0.1/x?"]'
refused "./manifest.json: error: the site's decode-ip '127.0.0.1/x?' is not an IPv4 or IPv6 address" \
	"$NPL" status --timeout 0.2
# apply's router waits for the servers by the same endpoints
mutate 'd["roles"][0]["endpoints"][0]["url"] = "http://evil.example:8000"'
(cd "$T/m" && NPULAUNCH_NODE_IP=127.0.0.1 NPULAUNCH_WAIT_TIMEOUT=1 "${NS[@]}" "$NPL" apply --role router --root "$T/m" --no-preflight >"$T/out" 2>"$T/err")
expect_eq "$?" 2 "apply --role router with a tampered endpoint"
expect_grep "$T/err" "apply: the prefill endpoint http://evil.example:8000: its host is not an IP address"

# the schema file and the compiled-in one agree (the build embeds docs/json/manifest.schema.json);
# the mutation fuzzer, with jsonschema's verdict as the oracle, over every target
SECS=${NPL_MANIFEST_FUZZ_SECONDS:-30}
run "$PY" "$NPL_SRC/tests/tools/manifest_fuzz.py" "$NPL" "$NPL_SRC" "$T/fuzz" --seconds "$SECS"
[[ $rc == 0 ]] || fail "manifest_fuzz.py: $(head -c 6000 "$T/out") $(head -c 2000 "$T/err")"
cat "$T/out"
finish
