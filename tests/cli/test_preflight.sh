# preflight on fake nodes: a fake root (Ascend files, version files, a model, the kernel's socket
# table) and stand-in npu-smi / hccn_tool printing recorded real outputs (tests/data/preflight).
# A healthy node passes; each broken variant (an unhealthy die, a link down, a port taken, a
# shard missing, an interface without the node's address, a node not in the list, tools
# missing or hanging) fails or warns with its message and exit code, as text and as --json;
# apply stops before tuning when preflight fails; the rendered scripts stop before tuning on
# what they check. In a network namespace of its own (when one can be made): an interface
# without a carrier, and the node found by its own addresses.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
unset NPULAUNCH_PREFLIGHT

D=${NPL_DATA:?}/preflight
ID=kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms
SITE=(--model-path /models/kimi --ifname lo --prefill-ip 127.0.0.1 --decode-ip 127.0.0.2)
have_jq=0
command -v jq >/dev/null && have_jq=1

# json_status FILE CHECK: the status of a check in preflight --json's output
json_status() {
	jq -r --arg n "$2" '.checks[] | select(.name == $n) | .status' "$1"
}

# healthy_root DIR: a node that passes: the Ascend files, version files, a model whose index
# names two shards, a socket table with no listener, meminfo
healthy_root() {
	local r=$1
	make_root "$r"
	mkdir -p "$r/usr/local/Ascend/driver" "$r/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux" \
		"$r/proc/net" "$r/dev/shm" "$r/models/kimi"
	cp "$D/driver-version.info" "$r/usr/local/Ascend/driver/version.info"
	cp "$D/ascend_toolkit_install.info" "$r/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/"
	head -n 1 "$D/proc-net-tcp.txt" >"$r/proc/net/tcp"
	head -n 1 "$D/proc-net-tcp6.txt" >"$r/proc/net/tcp6"
	printf 'MemTotal:       2113900000 kB\nMemFree:        1000 kB\nMemAvailable:   1900000000 kB\n' >"$r/proc/meminfo"
	echo '{"architectures": ["KimiK25ForConditionalGeneration"]}' >"$r/models/kimi/config.json"
	cat >"$r/models/kimi/model.safetensors.index.json" <<-'EOF'
		{
		  "metadata": {"total_size": 2},
		  "weight_map": {
		    "language_model.model.embed_tokens.weight": "model-00001-of-00002.safetensors",
		    "language_model.lm_head.weight": "model-00002-of-00002.safetensors"
		  }
		}
	EOF
	: >"$r/models/kimi/model-00001-of-00002.safetensors"
	: >"$r/models/kimi/model-00002-of-00002.safetensors"
}

# tools DIR SMI LINK: stand-ins: npu-smi printing fixture SMI; hccn_tool answering -link with
# fixture LINK for device 3 (up for the others), -ip with an address each, -net_health Success
tools() {
	mkdir -p "$1"
	printf '#!/bin/sh\n[ "$1" = info ] || exit 2\ncat "%s/%s"\n' "$D" "$2" >"$1/npu-smi"
	cat >"$1/hccn_tool" <<-EOF
		#!/bin/sh
		case "\$3" in
		-link) if [ "\$2" = 3 ]; then cat "$D/$3"; else cat "$D/hccn-link-up.txt"; fi ;;
		-ip) echo "ipaddr:10.10.0.1\$2"; echo netmask:255.255.255.0 ;;
		-net_health) cat "$D/hccn-net-health-success.txt" ;;
		*) echo "unknown command" >&2; exit 1 ;;
		esac
	EOF
	chmod +x "$1/npu-smi" "$1/hccn_tool"
}

R=$T/root
healthy_root "$R"
tools "$T/tools" npu-smi-a3-16-ok.txt hccn-link-up.txt
SYSPATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
export NPULAUNCH_ROOT=$R NPL_STUB_LOG=$T/calls NPULAUNCH_NODE_IP=127.0.0.1
export PATH=$T/tools:$T/root.bin:$SYSPATH

# ---- a healthy node passes ----
expect_rc 0 "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "preflight: prefill of $ID, node 0 (127.0.0.1), root $R"
expect_grep "$T/out" "ok    driver       Ascend driver 23.0.7 ($R/usr/local/Ascend/driver/version.info)"
expect_grep "$T/out" "ok    toolkit      CANN toolkit 7.0.T10"
expect_grep "$T/out" "ok    env-files    2 env files present"
expect_grep "$T/out" "ok    npus         npu-smi 24.1.rc3.7 lists 16 dies; devices 0-15, which this node uses, are OK and held by no process"
expect_grep "$T/out" "ok    npu-network  16 devices: link up and an address each (device 0 10.10.0.10, device 1 10.10.0.11, ..., device 15 10.10.0.115); the tool's reachability probe succeeded"
expect_grep "$T/out" "ok    node         127.0.0.1 is node 0 of prefill-ip (127.0.0.1)"
expect_grep "$T/out" "ok    interface    lo is up and carries 127.0.0.1"
expect_grep "$T/out" "ok    ports        free: 8000 (--port), 8998 (--disaggregation-bootstrap-port), 24670 (ASCEND_MF_STORE_URL), 24699 (SGLANG_ZBAL_BOOTSTRAP_URL)"
expect_grep "$T/out" "ok    model        $R/models/kimi: config.json and the 2 shards model.safetensors.index.json names"
expect_grep "$T/out" "skip  draft-model  the prefill uses no draft model"
expect_grep "$T/out" "skip  sglang       the recipe states no SGLang version floor"
expect_grep "$T/out" "ok    memory       $R/dev/shm:"
expect_grep "$T/out" "host memory: 1.8 TiB available of 2.0 TiB"
# the fake host is not tuned yet: what apply will change is a warning
expect_grep "$T/out" "warn  host-tuning  5 of 5 settings differ: cpu0 governor schedutil -> performance"
expect_grep "$T/out" "preflight: 0 failed, 1 warned, 10 ok, 3 skipped"
# Kimi's launch environment sets SGLANG_SET_CPU_AFFINITY (its page does): SGLang binds
expect_grep "$T/out" "skip  affinity     npulaunch binds nothing: the launch environment sets SGLANG_SET_CPU_AFFINITY"
expect_rc 0 "$NPL" preflight $ID --role prefill "${SITE[@]}" --json
if ((have_jq)); then
	expect_eq "$(jq -r '"\(.format) \(.recipe) \(.role) \(.node) \(.address) \(.failed) \(.warned) \(.checks | length)"' "$T/out")" \
		"npulaunch-preflight/1 $ID prefill 0 127.0.0.1 0 1 14" "the JSON's summary"
	expect_eq "$(jq -r '[.checks[].name] | join(" ")' "$T/out")" \
		"driver toolkit sglang env-files npus affinity npu-network node interface ports model draft-model memory host-tuning" "the JSON's checks"
	expect_eq "$(jq -r '.checks[] | select(.name == "host-tuning") | .fix' "$T/out")" \
		"apply tunes them (journaled; npulaunch tune --revert puts them back)" "a check's fix"
	expect_eq "$(jq -r '.checks[] | select(.name == "npus") | .fix' "$T/out")" "null" "no fix when ok"
fi
# the decode role: its draft model too, and no bootstrap or store port of its own
mkdir -p "$R/models/eagle"
echo '{}' >"$R/models/eagle/config.json"
: >"$R/models/eagle/model.safetensors"
expect_rc 0 "$NPL" preflight $ID --role decode --model-path /models/kimi --ifname lo --prefill-ip 127.0.0.5 \
	--decode-ip 127.0.0.1 --draft-model-path /models/eagle
expect_grep "$T/out" "ok    ports        free: 8001 (--port)"
expect_grep "$T/out" "ok    draft-model  $R/models/eagle: config.json and 1 weight file (no index)"
# the router: its port only
expect_rc 0 "$NPL" preflight $ID --role router "${SITE[@]}"
expect_grep "$T/out" "ok    ports        free: 6688 (--port)"
expect_grep "$T/out" "skip  npus         the router uses no NPU"

# ---- broken variants: each a failure (exit 1) with what was found ----
# one unhealthy die
tools "$T/alarm" npu-smi-a3-16-alarm.txt hccn-link-up.txt
expect_rc 1 env PATH="$T/alarm:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "fail  npus         die 5 (NPU 2, chip 1): health Alarm"
expect_grep "$T/out" "fix: stop what holds the dies"
expect_grep "$T/out" "preflight: 1 failed,"
expect_rc 1 env PATH="$T/alarm:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}" --json
((have_jq)) && expect_eq "$(json_status "$T/out" npus) $(jq .failed "$T/out")" "fail 1" "an unhealthy die in JSON"
# a die held by a process (and too few dies for the instance)
tools "$T/busy" npu-smi-a3-busy.txt hccn-link-up.txt
expect_rc 1 env PATH="$T/busy:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "fail  npus         npu-smi lists 4 dies; this node's instances use 16 (devices 0-15); die 3 (NPU 1, chip 1): process 990711 (python) holds 7746 MB"
# a downed link
tools "$T/down" npu-smi-a3-16-ok.txt hccn-link-down.txt
expect_rc 1 env PATH="$T/down:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "fail  npu-network  device 3: link DOWN"
expect_rc 1 env PATH="$T/down:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}" --json
((have_jq)) && expect_eq "$(json_status "$T/out" npu-network)" "fail" "a downed link in JSON"
# a busy port: the socket table of a host with a listener on 8000 and one on [::]:8998
cp "$D/proc-net-tcp.txt" "$R/proc/net/tcp"
cp "$D/proc-net-tcp6.txt" "$R/proc/net/tcp6"
expect_rc 1 "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "fail  ports        port 8000 (--port) is in use: a socket listens on 0.0.0.0:8000; port 8998 (--disaggregation-bootstrap-port) is in use: a socket listens on [::]:8998"
expect_grep "$T/out" "fix: stop what listens there (ss -ltnp names it), or render with other ports"
expect_rc 1 "$NPL" preflight $ID --role prefill "${SITE[@]}" --json
((have_jq)) && expect_eq "$(json_status "$T/out" ports)" "fail" "a busy port in JSON"
head -n 1 "$D/proc-net-tcp.txt" >"$R/proc/net/tcp"
head -n 1 "$D/proc-net-tcp6.txt" >"$R/proc/net/tcp6"
# a missing shard
mv "$R/models/kimi/model-00002-of-00002.safetensors" "$T/shard"
expect_rc 1 "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "fail  model        1 of the 2 weight shards model.safetensors.index.json names is missing: model-00002-of-00002.safetensors"
expect_rc 1 "$NPL" preflight $ID --role prefill "${SITE[@]}" --json
((have_jq)) && expect_eq "$(json_status "$T/out" model)" "fail" "a missing shard in JSON"
mv "$T/shard" "$R/models/kimi/model-00002-of-00002.safetensors"
# an interface without the node's address
expect_rc 1 env NPULAUNCH_NODE_IP=127.0.0.5 "$NPL" preflight $ID --role prefill --model-path /models/kimi --ifname lo \
	--prefill-ip 127.0.0.5 --decode-ip 127.0.0.2
expect_grep "$T/out" "fail  interface    lo does not carry this node's address 127.0.0.5 (it has: 127.0.0.1"
expect_rc 1 env NPULAUNCH_NODE_IP=127.0.0.5 "$NPL" preflight $ID --role prefill --model-path /models/kimi --ifname lo \
	--prefill-ip 127.0.0.5 --decode-ip 127.0.0.2 --json
((have_jq)) && expect_eq "$(json_status "$T/out" interface)" "fail" "an interface without the address in JSON"
# an interface that is not there
expect_rc 1 "$NPL" preflight $ID --role prefill --model-path /models/kimi --ifname nosuch0 --prefill-ip 127.0.0.1 --decode-ip 127.0.0.2
expect_grep "$T/out" "fail  interface    no interface 'nosuch0' on this host (it has: lo"
# a node not in the list: the node check fails; the ports of an unknown node are not checked
expect_rc 1 env NPULAUNCH_NODE_IP=10.9.9.9 "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "fail  node         this host (10.9.9.9) is not in the prefill-ip list (127.0.0.1)"
expect_grep "$T/out" "fix: run it on one of those nodes, or set NPULAUNCH_NODE_IP to this node's address in the list"
expect_grep "$T/out" "skip  ports        this node is not in the node list: its ports are not known"
expect_rc 1 env NPULAUNCH_NODE_IP=10.9.9.9 "$NPL" preflight $ID --role prefill "${SITE[@]}" --json
((have_jq)) && expect_eq "$(json_status "$T/out" node) $(jq -r '"\(.node) \(.address)"' "$T/out")" "fail null null" \
	"a node not in the list in JSON"
# without --role, a node in no list is a usage error, as for apply
expect_rc 2 env NPULAUNCH_NODE_IP=10.9.9.9 "$NPL" preflight $ID "${SITE[@]}"
expect_grep "$T/err" "npulaunch: preflight: this node (10.9.9.9) is in no role's list: say which with --role"
# a site value missing: the check that needs it fails and says what to give
expect_rc 1 env -u MODEL_PATH "$NPL" preflight $ID --role prefill --ifname lo --prefill-ip 127.0.0.1 --decode-ip 127.0.0.2
expect_grep "$T/out" "fail  model        model-path is not set"
expect_grep "$T/out" "fix: give --model-path, or export MODEL_PATH"
# a version file missing is a warning, an env file missing a failure
mv "$R/usr/local/Ascend/driver/version.info" "$T/version.info"
rm "$R/usr/local/Ascend/nnal/atb/set_env.sh"
expect_rc 1 "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "warn  driver       no Ascend driver version file: none of $R/usr/local/Ascend/driver/version.info exists"
expect_grep "$T/out" "fail  env-files    cannot read '$R/usr/local/Ascend/nnal/atb/set_env.sh': No such file or directory"
mv "$T/version.info" "$R/usr/local/Ascend/driver/version.info"
echo : >"$R/usr/local/Ascend/nnal/atb/set_env.sh"

# ---- missing, broken and hanging tools: warnings, never failures ----
expect_rc 0 env PATH="$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "warn  npus         npu-smi not found (looked in PATH, $R/usr/local/sbin, $R/usr/local/bin, $R/usr/local/Ascend/driver/tools): the NPUs were not checked"
expect_grep "$T/out" "warn  npu-network  hccn_tool not found (looked in PATH, $R/usr/local/sbin, $R/usr/local/bin, $R/usr/local/Ascend/driver/tools): the NPU network was not checked"
expect_rc 0 env PATH="$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}" --json
((have_jq)) && expect_eq "$(json_status "$T/out" npus) $(json_status "$T/out" npu-network) $(jq .failed "$T/out")" \
	"warn warn 0" "missing tools in JSON"
# where the hardware profile says the driver keeps its tools (under the root) when PATH lacks them
mkdir -p "$R/usr/local/Ascend/driver/tools"
cp "$T/down/hccn_tool" "$R/usr/local/Ascend/driver/tools/"
expect_rc 1 env PATH="$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "fail  npu-network  device 3: link DOWN"
rm -r "$R/usr/local/Ascend/driver/tools"
# a layout npulaunch does not know, and a tool that fails, are warnings that say so
tools "$T/a5" npu-smi-a5-unknown.txt hccn-link-up.txt
expect_rc 0 env PATH="$T/a5:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "warn  npus         npu-smi info printed a layout npulaunch does not know (line 2: a device table whose first column is not 'NPU Name'): the NPUs were not checked"
printf '#!/bin/sh\ncat "%s/npu-smi-error.txt"\nexit 255\n' "$D" >"$T/a5/npu-smi"
expect_rc 0 env PATH="$T/a5:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}"
expect_grep "$T/out" "warn  npus         'npu-smi info' failed (exit 255): DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3): the NPUs were not checked"
# tools that never answer cost their timeout once each; what they print is escaped
mkdir -p "$T/hang"
printf '#!/bin/sh\nprintf "\\033[31mred"\nsleep 60\n' >"$T/hang/npu-smi"
printf '#!/bin/sh\nsleep 60 &\nexec sleep 60\n' >"$T/hang/hccn_tool"
chmod +x "$T/hang/npu-smi" "$T/hang/hccn_tool"
SECONDS=0
expect_rc 0 env PATH="$T/hang:$SYSPATH" "$NPL" preflight $ID --role prefill "${SITE[@]}" --timeout 0.5
((SECONDS < 10)) || fail "hanging tools took ${SECONDS}s"
expect_grep "$T/out" "warn  npus         'npu-smi info' did not finish within 0.5s (stopped; it is not run again): the NPUs were not checked"
expect_grep "$T/out" "warn  npu-network  'hccn_tool -i 0 -link -g' did not finish within 0.5s"
grep -q $'\033' "$T/out" && fail "a tool's escape sequence reached the terminal"
expect_rc 2 "$NPL" preflight $ID --role prefill "${SITE[@]}" --timeout 0
expect_grep "$T/err" "--timeout"
expect_rc 2 "$NPL" preflight $ID --role nosuch "${SITE[@]}"
expect_grep "$T/err" "recipe '$ID' has no role 'nosuch' (its roles: prefill, decode, router, bench)"

# the hardware profile's preflight key is checked as strictly as the rest
mkdir -p "$T/hw"
sed 's/^  driver_version:/  driver_versoin:/' "$NPL_SRC/recipes/hardware/ascend-a3.yaml" >"$T/hw/a3.yaml"
expect_rc 5 "$NPL" --recipes "$T/hw" validate
expect_grep "$T/err" "hw/a3.yaml:30:3: error: unknown key 'driver_versoin' in 'preflight' (did you mean 'driver_version'?)"
sed 's|^  tool_path: \[/usr/local/sbin,|  tool_path: [usr/local/sbin,|' "$NPL_SRC/recipes/hardware/ascend-a3.yaml" >"$T/hw/a3.yaml"
expect_rc 5 "$NPL" --recipes "$T/hw" validate
expect_grep "$T/err" "error: 'usr/local/sbin' is not an absolute path"

# ---- apply runs preflight first: a failure stops it before it tunes ----
mv "$R/models/kimi/model-00002-of-00002.safetensors" "$T/shard"
before=$(state_of "$R")
expect_rc 1 "$NPL" apply $ID --role prefill "${SITE[@]}"
expect_grep "$T/err" "fail  model        1 of the 2 weight shards model.safetensors.index.json names is missing"
expect_grep "$T/err" "npulaunch: apply: preflight failed: nothing was changed (--no-preflight skips it)"
expect_eq "$(state_of "$R")" "$before" "host state after a failed preflight"
[[ -e $R/run/npulaunch/tune-journal.json ]] && fail "a failed preflight left a tuning journal"
[[ -e $T/calls ]] && fail "a failed preflight launched something"
expect_rc 2 env NPULAUNCH_PREFLIGHT=maybe "$NPL" apply $ID --role prefill "${SITE[@]}"
expect_grep "$T/err" "NPULAUNCH_PREFLIGHT 'maybe' is not 0 (skip the preflight checks) or 1"
# --no-preflight (or NPULAUNCH_PREFLIGHT=0) skips it: the launch goes on
expect_rc 0 "$NPL" apply $ID --role prefill "${SITE[@]}" --no-preflight
expect_grep "$T/calls" '"--model-path","/models/kimi"'
expect_eq "$(state_of "$R")" "performance performance 0 0 50000 " "host state after apply --no-preflight"
expect_rc 0 "$NPL" tune --revert
rm -f "$T/calls"
expect_rc 0 env NPULAUNCH_PREFLIGHT=0 "$NPL" apply $ID --role prefill "${SITE[@]}"
expect_rc 0 "$NPL" tune --revert
rm -f "$T/calls"
# --no-tune: the launch leaves the host's tuning alone (a Slurm job of --tune=false, a step
# that tuned before): no setting changed, no journal
expect_rc 0 env NPULAUNCH_PREFLIGHT=0 "$NPL" apply $ID --role prefill "${SITE[@]}" --no-tune
expect_grep "$T/calls" '"--model-path","/models/kimi"'
expect_grep "$T/err" "0 settings changed"
expect_eq "$(state_of "$R")" "$before" "host state after apply --no-tune"
[[ -e $R/run/npulaunch/tune-journal.json ]] && fail "apply --no-tune left a tuning journal"
rm -f "$T/calls"
mv "$T/shard" "$R/models/kimi/model-00002-of-00002.safetensors"
# passing, with warnings: printed, and the launch goes on
expect_rc 0 "$NPL" apply $ID --role prefill "${SITE[@]}"
expect_grep "$T/err" "warn  host-tuning  5 of 5 settings differ"
expect_grep "$T/calls" '"--model-path","/models/kimi"'
expect_rc 0 "$NPL" tune --revert
rm -f "$T/calls"
# --dry-run never runs it
mv "$R/models/kimi/model-00002-of-00002.safetensors" "$T/shard"
expect_rc 0 "$NPL" apply $ID --role prefill "${SITE[@]}" --dry-run
expect_nogrep "$T/err" "preflight"

# ---- the rendered scripts check what bash can, before they touch the host ----
expect_rc 0 "$NPL" render $ID -o "$T/b"
run_script() {  # SCRIPT [VAR=VALUE...]: run a rendered script on the fake root
	local s=$1
	shift
	run env -i PATH="$T/tools:$T/root.bin:$SYSPATH" NPULAUNCH_ROOT="$R" NPL_STUB_LOG="$T/calls" \
		MODEL_PATH=/models/kimi IFNAME=lo PREFILL_IPS=127.0.0.1 DECODE_IPS=127.0.0.2 NPULAUNCH_NODE_IP=127.0.0.1 \
		"$@" bash "$T/b/$s"
}
# a missing shard
before=$(state_of "$R")
run_script prefill.sh
expect_eq "$rc" 1 "prefill.sh with a shard missing"
expect_grep "$T/err" "prefill.sh: preflight: MODEL_PATH: 1 of the 2 weight shards its index names missing in $R/models/kimi: model-00002-of-00002.safetensors"
expect_grep "$T/err" "prefill.sh: preflight failed: nothing was changed (NPULAUNCH_PREFLIGHT=0 skips these checks)"
expect_eq "$(state_of "$R")" "$before" "host state after a script's failed preflight"
[[ -e $R/run/npulaunch/tune-journal.json ]] && fail "a script's failed preflight left a tuning journal"
[[ -e $T/calls ]] && fail "a script's failed preflight launched something"
mv "$T/shard" "$R/models/kimi/model-00002-of-00002.safetensors"
# a busy port
cp "$D/proc-net-tcp.txt" "$R/proc/net/tcp"
cp "$D/proc-net-tcp6.txt" "$R/proc/net/tcp6"
run_script prefill.sh
expect_eq "$rc" 1 "prefill.sh with its ports taken"
expect_grep "$T/err" "prefill.sh: preflight: port 8000 (--port) is in use: stop what listens there (ss -ltnp names it)"
expect_grep "$T/err" "prefill.sh: preflight: port 8998 (--disaggregation-bootstrap-port) is in use"
expect_eq "$(state_of "$R")" "$before" "host state after a busy port"
# decode.sh listens on 8001 only: it goes on
run_script decode.sh NPULAUNCH_NODE_IP=127.0.0.2 DRAFT_MODEL_PATH=/models/eagle
expect_eq "$rc" 1 "decode.sh without 127.0.0.2 on lo"
expect_grep "$T/err" "decode.sh: preflight: lo does not carry this node's address 127.0.0.2 (it has: 127.0.0.1"
head -n 1 "$D/proc-net-tcp.txt" >"$R/proc/net/tcp"
head -n 1 "$D/proc-net-tcp6.txt" >"$R/proc/net/tcp6"
# an interface without the node's address, one that does not exist, a missing env file
run_script prefill.sh PREFILL_IPS=127.0.0.5 NPULAUNCH_NODE_IP=127.0.0.5
expect_eq "$rc" 1 "prefill.sh on an interface without its address"
expect_grep "$T/err" "prefill.sh: preflight: lo does not carry this node's address 127.0.0.5 (it has: 127.0.0.1"
run_script prefill.sh IFNAME=nosuch0
expect_eq "$rc" 1 "prefill.sh on an interface that is not there"
expect_grep "$T/err" "prefill.sh: preflight: no interface 'nosuch0' on this host (IFNAME)"
rm "$R/usr/local/Ascend/nnal/atb/set_env.sh"
run_script prefill.sh
expect_eq "$rc" 1 "prefill.sh without an env file"
expect_grep "$T/err" "prefill.sh: preflight: cannot read $R/usr/local/Ascend/nnal/atb/set_env.sh: is the Ascend toolkit installed on this node?"
echo : >"$R/usr/local/Ascend/nnal/atb/set_env.sh"
expect_eq "$(state_of "$R")" "$before" "host state after the scripts' refusals"
[[ -e $T/calls ]] && fail "a script's failed preflight launched something"
# NPULAUNCH_PREFLIGHT=0 skips the checks; a value that is neither is refused
mv "$R/models/kimi/model-00002-of-00002.safetensors" "$T/shard"
run_script prefill.sh NPULAUNCH_PREFLIGHT=0
expect_eq "$rc" 0 "prefill.sh with NPULAUNCH_PREFLIGHT=0"
expect_grep "$T/calls" '"--model-path","/models/kimi"'
run_script prefill.sh --revert
run_script prefill.sh NPULAUNCH_PREFLIGHT=yes
expect_eq "$rc" 2 "prefill.sh with NPULAUNCH_PREFLIGHT=yes"
expect_grep "$T/err" "prefill.sh: NPULAUNCH_PREFLIGHT 'yes' is not 0 (skip the preflight checks) or 1"
# --tune-only and --revert do not launch: no preflight
run env -i PATH="$T/tools:$T/root.bin:$SYSPATH" NPULAUNCH_ROOT="$R" bash "$T/b/prefill.sh" --tune-only
expect_eq "$rc" 0 "prefill.sh --tune-only with a shard missing"
expect_nogrep "$T/err" "preflight"
run env -i PATH="$T/tools:$T/root.bin:$SYSPATH" NPULAUNCH_ROOT="$R" bash "$T/b/prefill.sh" --revert
expect_eq "$rc" 0 "prefill.sh --revert with a shard missing"
mv "$T/shard" "$R/models/kimi/model-00002-of-00002.safetensors"
# healthy: it passes, tunes and launches
rm -f "$T/calls"
run_script prefill.sh
expect_eq "$rc" 0 "prefill.sh on a healthy node"
expect_grep "$T/err" "prefill.sh: preflight passed"
expect_grep "$T/calls" '"--model-path","/models/kimi"'
expect_eq "$(state_of "$R")" "performance performance 0 0 50000 " "host state after a passed preflight"
run_script prefill.sh --revert
# without npu-smi or ip on PATH: warnings, and the launch goes on
rm -f "$T/calls"
mkdir -p "$T/nobin"
for t in bash cat grep sed base64 mktemp realpath mv rm mkdir hostname; do
	p=$(command -v $t) && ln -sf "$p" "$T/nobin/$t"
done
run env -i PATH="$T/nobin:$T/root.bin" NPULAUNCH_ROOT="$R" NPL_STUB_LOG="$T/calls" MODEL_PATH=/models/kimi IFNAME=lo \
	PREFILL_IPS=127.0.0.1 DECODE_IPS=127.0.0.2 NPULAUNCH_NODE_IP=127.0.0.1 bash "$T/b/prefill.sh" --no-tune
expect_eq "$rc" 0 "prefill.sh without npu-smi and ip"
expect_grep "$T/err" "prefill.sh: warning: preflight: ip not found: the interface lo was not checked"
expect_grep "$T/err" "prefill.sh: warning: preflight: npu-smi not found on PATH"
expect_grep "$T/calls" '"--model-path","/models/kimi"'

# ---- in a network namespace of its own: a link without a carrier, the node found by its address ----
if unshare -rn true 2>/dev/null && command -v ip >/dev/null; then
	cat >"$T/ns.sh" <<-'EOF'
		. "$NPL_SRC/tests/cli/lib.sh"
		unset NPULAUNCH_PREFLIGHT NPULAUNCH_NODE_IP
		ip link set lo up
		ip link add enp1 type veth peer name enp1peer || { echo "no veth: skipped"; exit 0; }
		ip addr add 10.20.0.11/24 dev enp1
		ip link set enp1 up
		S=(--model-path /models/kimi --ifname enp1 --prefill-ip 10.20.0.11 --decode-ip 10.20.0.12)
		# its peer down: no carrier
		expect_rc 1 "$NPL" preflight "$ID" --role prefill "${S[@]}"
		expect_grep "$T/out" "fail  interface    enp1 is up but has no carrier: its link is down"
		run bash "$B/prefill.sh"
		expect_eq "$rc" 1 "prefill.sh on a link without a carrier"
		expect_grep "$T/err" "prefill.sh: preflight: enp1 is up but has no carrier: its link is down"
		ip link set enp1peer up
		# the node found among this host's own addresses, with no NPULAUNCH_NODE_IP
		expect_rc 0 "$NPL" preflight "$ID" "${S[@]}"
		expect_grep "$T/out" "preflight: prefill of $ID, node 0 (10.20.0.11)"
		expect_grep "$T/out" "ok    interface    enp1 is up and carries 10.20.0.11"
		run bash "$B/prefill.sh" --no-tune
		expect_eq "$rc" 0 "prefill.sh on enp1 with its address"
		expect_grep "$T/err" "prefill.sh: preflight passed"
		# the address removed: it exists nowhere but in the list
		ip addr del 10.20.0.11/24 dev enp1
		expect_rc 1 "$NPL" preflight "$ID" --role prefill "${S[@]}"
		expect_grep "$T/out" "fail  node         this host ("
		expect_grep "$T/out" ") is not in the prefill-ip list (10.20.0.11)"
		finish
	EOF
	run env ID=$ID B="$T/b" MODEL_PATH=/models/kimi IFNAME=enp1 PREFILL_IPS=10.20.0.11 DECODE_IPS=10.20.0.12 \
		unshare -rn bash "$T/ns.sh"
	[[ $rc == 0 ]] || fail "in a network namespace: $(cat "$T/err")"
else
	echo "no network namespace can be made here: its part skipped" >&2
fi
finish
