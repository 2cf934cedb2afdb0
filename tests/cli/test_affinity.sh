#!/usr/bin/env bash
# Affinity on a simulated A2 node (issue 26): the recorded 8x910B3 node of
# tests/data/topology (NPUs on NUMA nodes 6, 4, 0, 2; 192 CPUs on 8 nodes), its sysfs and procfs
# under a root prefix and a stand-in npu-smi printing the recorded outputs. apply --dry-run and
# preflight show each die's CPUs from the topology; a partial cpuset is honoured or, where a
# die's node has none of it, refused before anything changes; SGLANG_SET_CPU_AFFINITY in the
# launch environment wins and npulaunch binds nothing (said); --no-affinity and --cpus turn it
# off; apply pins the real server to its CPUs (read back from /proc/PID/status); irqbalance is
# stopped while the interrupts are bound and started again by tune --revert, also after SIGKILL;
# the round trip apply -> status --affinity -> a wrong binding reported -> revert runs in a
# mount namespace on a real, bound server.
# shellcheck shell=bash source=lib.sh
source "$(dirname "$0")/lib.sh"
SHAPES=$NPL_DATA/recipes/good/shapes
TOPO=$NPL_DATA/topology
PART=shape-moe-w8a8-a2-4p-first-card4-50ms      # cards 4-7 of an A2 node
SITE=(--model-path /models/m --ifname lo --node-ip 127.0.0.1)

# a2_root DIR ALLOWED: the recorded A2 node under DIR, this process allowed CPUs ALLOWED
a2_root() {
	local r=$1 k bus node
	make_root "$r"
	mkdir -p "$r/proc/self" "$r/usr/local/sbin" "$r/sys/devices/system/cpu"
	printf 'Name:\tnpulaunch\nCpus_allowed_list:\t%s\n' "$2" >"$r/proc/self/status"
	echo 0-191 >"$r/sys/devices/system/cpu/online"
	for k in 0 1 2 3 4 5 6 7; do
		mkdir -p "$r/sys/devices/system/node/node$k"
		echo "$((24 * k))-$((24 * k + 23))" >"$r/sys/devices/system/node/node$k/cpulist"
	done
	# each die's node: the one its CPU Affinity in the recorded topology lies in
	for bus in c1:6 c2:6 81:4 82:4 01:0 02:0 41:2 42:2; do
		node=${bus#*:}
		mkdir -p "$r/sys/bus/pci/devices/0000:${bus%%:*}:00.0"
		echo "$node" >"$r/sys/bus/pci/devices/0000:${bus%%:*}:00.0/numa_node"
		echo "$((24 * node))-$((24 * node + 23))" >"$r/sys/bus/pci/devices/0000:${bus%%:*}:00.0/local_cpulist"
	done
	# each run logged in DIR/npu-smi.calls
	printf '#!/bin/sh\necho "$*" >>"%s/npu-smi.calls"\n[ "$1" = info ] || exit 2\nif [ "$2" = -t ]; then cat "%s"; else cat "%s"; fi\n' \
		"$r" "$TOPO/a2-910b3-topo.txt" "$TOPO/a2-910b3-npu-smi.txt" >"$r/usr/local/sbin/npu-smi"
	chmod +x "$r/usr/local/sbin/npu-smi"
}

# same_sets ROOT WHAT [RECIPES]: the rendered script's --affinity-only prints the lines apply
# --dry-run prints about the CPUs ("# affinity: ...", "cpus ..."), byte for byte, from the facts
# under ROOT (issue 26: apply and the scripts compute the same sets from the same facts)
same_sets() {
	local r=$1 what=$2 recipes=${3:-$SHAPES}
	rm -rf "$T/sb"
	"$NPL" --recipes "$recipes" render $PART "${SITE[@]}" -o "$T/sb" >/dev/null 2>&1 || fail "render $PART ($what)"
	run env NPULAUNCH_ROOT="$r" "$NPL" --recipes "$recipes" apply $PART "${SITE[@]}" --dry-run
	grep -E '^(# affinity: |cpus )' "$T/out" >"$T/want"
	[[ -s $T/want ]] || fail "$what: apply --dry-run says nothing about affinity: $(cat "$T/out" "$T/err")"
	run env NPULAUNCH_ROOT="$r" bash "$T/sb/pd-mixed.sh" --affinity-only
	expect_eq "$rc" 0 "$what: pd-mixed.sh --affinity-only's status ($(head -c 2000 "$T/err"))"
	expect_eq "$(cat "$T/out")" "$(cat "$T/want")" "$what: the script's sets against apply --dry-run's"
}

# ---- apply --dry-run: each die on its own node ------------------------------------------------
a2_root "$T/r" 0-191
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
expect_grep "$T/out" "# affinity: device 4: CPUs 0-11, NUMA node 0 (sysfs numa_node)"
expect_grep "$T/out" "# affinity: device 5: CPUs 12-23, NUMA node 0 (sysfs numa_node)"
expect_grep "$T/out" "# affinity: device 6: CPUs 48-59, NUMA node 2 (sysfs numa_node)"
expect_grep "$T/out" "# affinity: device 7: CPUs 60-71, NUMA node 2 (sysfs numa_node)"
expect_grep "$T/out" "cpus 0-23,48-71"
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run --json
expect_eq "$(jq -c '.affinity | [.policy, .cpus, .memory_nodes, [.dies[] | .device, .cpus, .numa_node]]' "$T/out")" \
	'["numa-local","0-23,48-71","0,2",[4,"0-11",0,5,"12-23",0,6,"48-59",2,7,"60-71",2]]' "apply --dry-run --json's affinity"
if command -v "${PY:=/usr/bin/python3}" >/dev/null && "$PY" -c 'import jsonschema' 2>/dev/null; then
	"$PY" - "$NPL_SRC/docs/json/apply.schema.json" "$T/out" <<-'EOF' || fail "apply --dry-run --json against docs/json/apply.schema.json"
		import json, sys, jsonschema
		jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
	EOF
fi
same_sets "$T/r" "the recorded A2 node"
# apply with its preflight asks npu-smi each question once: the preflight reads what the
# affinity's runs printed (a run takes seconds on a real node; apply ran both twice), and finds
# what preflight alone finds (here the model is missing: it stops apply)
rm -f "$T/r/npu-smi.calls"
run env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$SHAPES" preflight $PART "${SITE[@]}"
expect_eq "$(sort "$T/r/npu-smi.calls" | tr '\n' ' ')" "info info -t topo " "preflight's npu-smi runs"
grep -E '^(warn|fail)' "$T/out" >"$T/pf.want"
expect_grep "$T/pf.want" "npus         npu-smi info printed no process table"
rm -f "$T/r/npu-smi.calls"
run env NPULAUNCH_ROOT="$T/r" NPULAUNCH_PREFLIGHT=1 PATH="$T/r.bin:$PATH" NPL_STUB_LOG="$T/r.stub" \
	"$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}"
expect_eq "$rc" 1 "apply whose preflight fails"
expect_grep "$T/err" "npulaunch: apply: preflight failed: nothing was changed"
expect_eq "$(sort "$T/r/npu-smi.calls" | tr '\n' ' ')" "info info -t topo " "apply's npu-smi runs"
expect_eq "$(grep -E '^(warn|fail)' "$T/err")" "$(cat "$T/pf.want")" "apply's preflight findings against preflight's"
expect_eq "$(state_of "$T/r")" "schedutil schedutil 60 1 500000 " "the host untouched"
# the same without sysfs's numa_node: npu-smi's topology table says it
rm "$T"/r/sys/bus/pci/devices/*/numa_node
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
expect_grep "$T/out" "# affinity: device 6: CPUs 48-59, NUMA node 2 (npu-smi info -t topo (CPU Affinity 48-71), as $T/r/sys/bus/pci/devices/0000:41:00.0/numa_node is not there)"
same_sets "$T/r" "without numa_node: npu-smi's topology table"
# an npu-smi whose Bus-Id of die 4 would lead out of sysfs: that die has no device, so no node,
# in apply and in the script alike (even-slice, said)
a2_root "$T/h" 0-191
sed 's|0000:01:00.0|../../../..0|' "$TOPO/a2-910b3-npu-smi.txt" >"$T/h/smi.txt"
printf '#!/bin/sh\n[ "$1" = info ] || exit 2\nif [ "$2" = -t ]; then cat "%s"; else cat "%s"; fi\n' \
	"$TOPO/a2-910b3-topo.txt" "$T/h/smi.txt" >"$T/h/usr/local/sbin/npu-smi"
expect_rc 0 env NPULAUNCH_ROOT="$T/h" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
expect_grep "$T/out" "# affinity: device 4: CPUs 96-119, NUMA node unknown (npu-smi info did not list it)"
same_sets "$T/h" "a Bus-Id that is no PCI address"

# ---- preflight: the check "affinity" ------------------------------------------------------------
a2_root "$T/p" 0-191
run env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" preflight $PART "${SITE[@]}" --json
expect_eq "$(jq -r '.checks[] | select(.name == "affinity") | .status' "$T/out")" ok "preflight's affinity check"
expect_grep "$T/out" "device 4 CPUs 0-11 (node 0); device 5 CPUs 12-23 (node 0); device 6 CPUs 48-59 (node 2); device 7 CPUs 60-71 (node 2); the server on CPUs 0-23,48-71 of 192 this process may use"
# tune --dry-run: every die of the node, its set and why (no instance: all eight)
run env PATH="$T/p/usr/local/sbin:$PATH" "$NPL" tune --dry-run --hardware ascend-a2 --root "$T/p"
expect_eq "$rc" 0 "tune --dry-run with the A2 profile: $(cat "$T/err")"
expect_grep "$T/out" "affinity: numa-local (the plan's policy), at least 5 CPUs per die; CPUs 0-191 may be used (Cpus_allowed_list of $T/p/proc/self/status)"
expect_grep "$T/out" "  device 0 (0000:c1:00.0, NUMA node 6 from sysfs numa_node): CPUs 144-155, memory on node 6"
expect_grep "$T/out" "  device 7 (0000:42:00.0, NUMA node 2 from sysfs numa_node): CPUs 60-71, memory on node 2"
expect_grep "$T/out" "  the server: CPUs 0-23,48-71,96-119,144-167, memory on node(s) 0,2,4,6"
run env PATH="$T/p/usr/local/sbin:$PATH" "$NPL" tune --dry-run --hardware ascend-a2 --root "$T/p" --json
expect_eq "$(jq -c '[.affinity.dies[] | .cpus]' "$T/out")" '["144-155","156-167","96-107","108-119","0-11","12-23","48-59","60-71"]' \
	"tune --dry-run --json's affinity"
if [[ -n ${PY:-} ]] && "$PY" -c 'import jsonschema' 2>/dev/null; then
	"$PY" - "$NPL_SRC/docs/json/tune.schema.json" "$T/out" <<-'EOF' || fail "tune --dry-run --json against docs/json/tune.schema.json"
		import json, sys, jsonschema
		jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
	EOF
fi
# a cpuset without node 2 (Slurm's, a pod's): dies 6 and 7 have no CPU there: preflight fails,
# apply changes nothing
a2_root "$T/q" 0-23,96-119,144-167
run env NPULAUNCH_ROOT="$T/q" "$NPL" --recipes "$SHAPES" preflight $PART "${SITE[@]}" --json
expect_eq "$(jq -r '.checks[] | select(.name == "affinity") | .status' "$T/out")" fail "affinity with node 2 outside the cpuset"
expect_grep "$T/out" "affinity numa-local: device 6 is on NUMA node 2, whose CPUs (48-71) this process may not use"
run env NPULAUNCH_ROOT="$T/q" NPULAUNCH_PREFLIGHT=0 "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}"
expect_eq "$rc" 1 "apply whose affinity cannot be met"
expect_grep "$T/err" "error: affinity numa-local: device 6 is on NUMA node 2, whose CPUs (48-71) this process may not use"
expect_grep "$T/err" "apply: nothing was changed"
expect_eq "$(state_of "$T/q")" "schedutil schedutil 60 1 500000 " "the host untouched"
# fewer CPUs than the policy's minimum: 3 per die
a2_root "$T/f" 0-2,48-50
run env NPULAUNCH_ROOT="$T/f" "$NPL" --recipes "$SHAPES" preflight $PART "${SITE[@]}"
expect_grep "$T/out" "NUMA node 0 has 3 CPUs this process may use for its 2 dies: 1 each, fewer than the 5 per die the policy needs"
# a topology that cannot be read: a warning, nothing bound
a2_root "$T/w" 0-191
rm "$T/w/proc/self/status"
run env NPULAUNCH_ROOT="$T/w" "$NPL" --recipes "$SHAPES" preflight $PART "${SITE[@]}" --json
expect_eq "$(jq -r '.checks[] | select(.name == "affinity") | .status' "$T/out")" warn "affinity without Cpus_allowed_list"

# ---- one binding wins, never two -----------------------------------------------------------------
# show says which, from the plan alone
expect_rc 0 "$NPL" --recipes "$SHAPES" show $PART --explain
expect_grep "$T/out" "tune    affinity numa-local, at least 5 CPUs per die, its queue interrupts on its first two: apply and the scripts bind each server to its dies' CPUs and NUMA nodes, from the node's topology, and each rank to its die's node (SGLang's --numa-node, where the node's SGLang has it)"
# show --explain on the node: the sets each die of the role's first node gets here, as tune
# --dry-run prints them (under NPULAUNCH_ROOT as apply reads the node); nothing where the
# topology cannot be read
a2_root "$T/sx" 0-191
expect_rc 0 env NPULAUNCH_ROOT="$T/sx" "$NPL" --recipes "$SHAPES" show $PART --explain
expect_grep "$T/out" "            affinity: numa-local (the plan's policy), at least 5 CPUs per die; CPUs 0-191 may be used (Cpus_allowed_list of $T/sx/proc/self/status)"
expect_grep "$T/out" "              device 4 (0000:01:00.0, NUMA node 0 from sysfs numa_node): CPUs 0-11, memory on node 0; none of its 0 MSI interrupts is a queue's in /proc/interrupts: none bound"
expect_grep "$T/out" "              device 7 (0000:42:00.0, NUMA node 2 from sysfs numa_node): CPUs 60-71, memory on node 2; none"
expect_grep "$T/out" "              the server: CPUs 0-23,48-71, memory on node(s) 0,2"
# a server role each (1P1D): their sets from one asking of npu-smi, each question once
rm -f "$T/sx/npu-smi.calls"
expect_rc 0 env NPULAUNCH_ROOT="$T/sx" "$NPL" --recipes "$SHAPES" show shape-moe-w8a8-1p1d-a2-16p-in8k-out1k-50ms --explain
expect_eq "$(grep -c '^              the server: CPUs 0-23,48-71,96-119,144-167, memory on node(s) 0,2,4,6$' "$T/out")" 2 "show --explain's sets, one a role"
expect_eq "$(sort "$T/sx/npu-smi.calls" | tr '\n' ' ')" "info info -t topo " "show --explain's npu-smi runs"
expect_rc 0 env NPULAUNCH_ROOT="$T/sx" "$NPL" --recipes "$SHAPES" show $PART
expect_nogrep "$T/out" "device 4 ("
mkdir -p "$T/empty-root"
expect_rc 0 env NPULAUNCH_ROOT="$T/empty-root" PATH=/usr/bin:/bin "$NPL" --recipes "$SHAPES" show $PART --explain
expect_nogrep "$T/out" "device 4 ("
[[ ! -s $T/err ]] || expect_nogrep "$T/err" "npu-smi"
# diff says where two recipes' bindings differ: A2's policy against A3's, a recipe's own minimum
expect_rc 1 "$NPL" --recipes "$SHAPES" diff $PART shape-moe-w8a8-1p-one-die-50ms
expect_grep "$T/out" "  ~ tuning affinity.policy: numa-local -> even-slice"
expect_nogrep "$T/out" "affinity.min_cpus_per_die"
mkdir -p "$T/ownd"
cp "$SHAPES"/*.yaml "$T/ownd/"
printf 'tuning:\n  affinity: {min_cpus_per_die: 8, irqs: false}\n' >>"$T/ownd/a2-part.yaml"
expect_rc 1 "$NPL" --recipes "$T/ownd" diff shape-moe-w8a8-a2-16p-in8k-out1k-50ms $PART --json
expect_eq "$(jq -c '[.. | objects | select(has("tuning")) | .tuning[]] | unique' "$T/out")" \
	'[{"name":"affinity.irqs","a":true,"b":false},{"name":"affinity.min_cpus_per_die","a":5,"b":8}]' "diff --json of the affinity"
if [[ -n ${PY:-} ]] && "$PY" -c 'import jsonschema' 2>/dev/null; then
	"$PY" - "$NPL_SRC/docs/json/diff.schema.json" "$T/out" <<-'EOF' || fail "diff --json of the affinity against docs/json/diff.schema.json"
		import json, sys, jsonschema
		jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
	EOF
fi
expect_rc 1 "$NPL" --recipes "$T/ownd" diff shape-moe-w8a8-a2-16p-in8k-out1k-50ms $PART
expect_grep "$T/out" "  ~ tuning affinity.irqs: true -> false"
expect_rc 0 "$NPL" show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
expect_grep "$T/out" "affinity even-slice, at least 5 CPUs per die, its queue interrupts on its first two: npulaunch binds nothing (the launch environment sets SGLANG_SET_CPU_AFFINITY"
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run \
	--env SGLANG_SET_CPU_AFFINITY=1
expect_grep "$T/out" "# affinity: npulaunch binds nothing: the launch environment sets SGLANG_SET_CPU_AFFINITY: SGLang binds each rank itself"
expect_nogrep "$T/out" "cpus "
run env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" preflight $PART "${SITE[@]}" --env SGLANG_SET_CPU_AFFINITY=true --json
expect_eq "$(jq -r '.checks[] | select(.name == "affinity") | .status' "$T/out")" skip "affinity under SGLANG_SET_CPU_AFFINITY"
# a shipped recipe whose page sets it: SGLang's; unset, npulaunch's
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" apply kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms "${SITE[@]}" \
	--draft-model-path /models/d --dry-run
expect_grep "$T/out" "# affinity: npulaunch binds nothing"
run env NPULAUNCH_ROOT="$T/r" "$NPL" apply kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms "${SITE[@]}" \
	--draft-model-path /models/d --dry-run --unset-env SGLANG_SET_CPU_AFFINITY
expect_nogrep "$T/out" "# affinity: npulaunch binds nothing"
# per run: --no-affinity; --cpus pins to its list instead
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run --no-affinity
expect_grep "$T/out" "# affinity: npulaunch binds nothing: --no-affinity"
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run --cpus 1
expect_grep "$T/out" "cpus 1"
expect_nogrep "$T/out" "# affinity: device"
# per recipe: tuning.affinity.policy none
mkdir -p "$T/own"
cp "$SHAPES"/*.yaml "$T/own/"
printf 'tuning:\n  affinity:\n    policy: none\n' >>"$T/own/a2-part.yaml"
expect_rc 0 env NPULAUNCH_ROOT="$T/r" "$NPL" --recipes "$T/own" apply $PART "${SITE[@]}" --dry-run
expect_grep "$T/out" "# affinity: npulaunch binds nothing: its tuning.affinity.policy is none"

# ---- status --affinity: the running server read back ---------------------------------------------
# a server process of this node (its command line has the instance's --port) with two threads:
# one within its dies' CPUs, one on every CPU (SGLang's own binding, or none, would leave it
# there); its memory preferred on the dies' nodes
expect_rc 0 env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run --json
port=$(jq -r '.instances[0].argv | index("--port") as $i | .[$i + 1]' "$T/out")
mkdir -p "$T/p/proc/4242/task/4242" "$T/p/proc/4242/task/4243" "$T/p/proc/77"
printf 'python3\0-m\0sglang.launch_server\0--port\0%s\0' "$port" >"$T/p/proc/4242/cmdline"
printf 'bash\0-c\0sleep 1\0' >"$T/p/proc/77/cmdline"
printf 'Name:\tpython3\nCpus_allowed_list:\t0-23,48-71\n' >"$T/p/proc/4242/task/4242/status"
printf 'Name:\tpython3\nCpus_allowed_list:\t0-191\n' >"$T/p/proc/4242/task/4243/status"
printf '7f0000000000 prefer (many):0,2 anon=3 dirty=3\n7f0000100000 default file=/x\n' >"$T/p/proc/4242/numa_maps"
run env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" status --affinity $PART "${SITE[@]}"
expect_eq "$rc" 1 "status --affinity with a thread off its dies"
expect_grep "$T/out" "pd-mixed node 0: process 4242 thread 4242: cpus 0-23,48-71 ok (its dies': 0-23,48-71)"
expect_grep "$T/out" "pd-mixed node 0: process 4242 thread 4243: cpus 0-191 MISMATCH (its dies': 0-23,48-71)"
expect_grep "$T/out" "pd-mixed node 0: process 4242 thread 4242: memory prefer (many):0,2 ok (its dies': 0,2)"
expect_grep "$T/err" "status: --affinity: 1 mismatch"
printf 'Name:\tpython3\nCpus_allowed_list:\t12-23\n' >"$T/p/proc/4242/task/4243/status"
expect_rc 0 env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" status --affinity $PART "${SITE[@]}" --json
expect_eq "$(jq -c '[.[] | [.pid, .tid, .what, .found, .ok]]' "$T/out")" \
	'[[4242,4242,"cpus","0-23,48-71",true],[4242,4243,"cpus","12-23",true],[4242,4242,"memory","prefer (many):0,2",true]]' \
	"status --affinity --json"
if [[ -n ${PY:-} ]] && "$PY" -c 'import jsonschema' 2>/dev/null; then
	"$PY" - "$NPL_SRC/docs/json/status.schema.json" "$T/out" <<-'EOF' || fail "status --affinity --json against docs/json/status.schema.json"
		import json, sys, jsonschema
		jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
	EOF
fi
printf '7f0000000000 default anon=3\n' >"$T/p/proc/4242/numa_maps"
run env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" status --affinity $PART "${SITE[@]}"
expect_eq "$rc" 1 "status --affinity with the memory policy not the dies'"
expect_grep "$T/out" "memory default MISMATCH (its dies': 0,2)"
# the ranks SGLang starts (children of the server, their command lines without --port: process
# titles) are read back too: a rank on its die's node (--numa-node: bound to node 0) is within,
# a grandchild too; a rank off the dies' CPUs, or bound to a node not the dies', is a mismatch;
# a process that is not the server's is not looked at
printf '7f0000000000 prefer (many):0,2 anon=3\n' >"$T/p/proc/4242/numa_maps"
printf 'Name:\tpython3\nCpus_allowed_list:\t12-23\n' >"$T/p/proc/4242/task/4243/status"
for c in 4250:4242 4251:4242 4260:4250 4300:77; do
	mkdir -p "$T/p/proc/${c%:*}/task/${c%:*}"
	printf 'sglang::scheduler_TP0\0' >"$T/p/proc/${c%:*}/cmdline"
	printf '%s (sglang::schedul) S %s 1 1 0 -1\n' "${c%:*}" "${c#*:}" >"$T/p/proc/${c%:*}/stat"
	printf 'Name:\tsglang::schedul\nCpus_allowed_list:\t0-23\n' >"$T/p/proc/${c%:*}/task/${c%:*}/status"
	printf '7f0000000000 bind:0 anon=3\n' >"$T/p/proc/${c%:*}/numa_maps"
done
printf '4242 (python3) S 1 1 1 0 -1\n' >"$T/p/proc/4242/stat"
printf '77 (bash) S 1 1 1 0 -1\n' >"$T/p/proc/77/stat"
printf 'Name:\tsglang::schedul\nCpus_allowed_list:\t0-191\n' >"$T/p/proc/4300/task/4300/status"
expect_rc 0 env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" status --affinity $PART "${SITE[@]}"
expect_grep "$T/out" "pd-mixed node 0: process 4250 thread 4250: cpus 0-23 ok (its dies': 0-23,48-71)"
expect_grep "$T/out" "pd-mixed node 0: process 4260 thread 4260: memory bind:0 ok (its dies': 0,2)"
expect_nogrep "$T/out" "process 4300"
printf 'Name:\tsglang::schedul\nCpus_allowed_list:\t0-47\n' >"$T/p/proc/4251/task/4251/status"
printf '7f0000000000 bind:4 anon=3\n' >"$T/p/proc/4260/numa_maps"
run env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" status --affinity $PART "${SITE[@]}"
expect_eq "$rc" 1 "status --affinity with a rank off its dies"
expect_grep "$T/out" "pd-mixed node 0: process 4251 thread 4251: cpus 0-47 MISMATCH (its dies': 0-23,48-71)"
expect_grep "$T/out" "pd-mixed node 0: process 4260 thread 4260: memory bind:4 MISMATCH (its dies': 0,2)"
expect_grep "$T/err" "status: --affinity: 2 mismatches"
rm -r "$T/p/proc/4242" "$T/p/proc/4250" "$T/p/proc/4251" "$T/p/proc/4260"
run env NPULAUNCH_ROOT="$T/p" "$NPL" --recipes "$SHAPES" status --affinity $PART "${SITE[@]}"
expect_eq "$rc" 1 "status --affinity with no server running"
expect_grep "$T/out" "pd-mixed node 0: no server with --port $port runs here"
expect_rc 2 "$NPL" --recipes "$SHAPES" status $PART "${SITE[@]}" --root "$T/p"
expect_grep "$T/err" "--root goes with --affinity"

# ---- docker: the container's cpuset is the dies' CPUs, computed on the host ----------------------
# (the stand-in docker of tests/tools/fake_docker.sh records its argv and runs the command with
# the container's environment, as cli.docker uses it)
expect_rc 0 "$NPL" --recipes "$SHAPES" render $PART "${SITE[@]}" --target docker -o "$T/dk"
run env NPULAUNCH_ROOT="$T/p" NPULAUNCH_PREFLIGHT=0 NPL_FAKE_DOCKER=1 NPL_DOCKER_LOG="$T/dk.log" NPL_STUB_LOG="$T/dk.stub" \
	PATH="$T/p.bin:$PATH" bash -c 'ln -sf "$0" "$1/docker" && exec bash "$2/docker-pd-mixed.sh"' \
	"$NPL_SRC/tests/tools/fake_docker.sh" "$T/p.bin" "$T/dk"
expect_eq "$rc" 0 "docker-pd-mixed.sh with the A2 topology: $(tail -c 2000 "$T/err")"
expect_grep "$T/dk.log" '"--cpuset-cpus", "0-23,48-71"'
rm -f "$T/p.bin/docker"
# where the policy cannot be met, no container starts
a2_root "$T/q2" 0-23,96-119,144-167
run env NPULAUNCH_ROOT="$T/q2" NPULAUNCH_PREFLIGHT=0 NPL_DOCKER_LOG="$T/dk2.log" \
	PATH="$T/q2.bin:$PATH" bash -c 'ln -sf "$0" "$1/docker" && exec bash "$2/docker-pd-mixed.sh"' \
	"$NPL_SRC/tests/tools/fake_docker.sh" "$T/q2.bin" "$T/dk"
expect_eq "$rc" 1 "docker-pd-mixed.sh whose dies' node has none of the cpuset"
expect_grep "$T/err" "device 6 is on NUMA node 2, whose CPUs (48-71) this process may not use"
[[ ! -s $T/dk2.log ]] || fail "a container was started: $(cat "$T/dk2.log")"

# ---- the dies' queue interrupts: journaled with the tuning, put back byte for byte -------------
# device 4 (bus 01): its submission queue's interrupt on its first CPU, its completion queue's on
# its second; its other MSI interrupt is not a queue's
a2_root "$T/i" 0-191
for irq in 2752 2753 2754; do
	mkdir -p "$T/i/sys/bus/pci/devices/0000:01:00.0/msi_irqs" "$T/i/proc/irq/$irq"
	touch "$T/i/sys/bus/pci/devices/0000:01:00.0/msi_irqs/$irq"
	printf '0-191\n' >"$T/i/proc/irq/$irq/smp_affinity_list"
done
printf '           CPU0       CPU1\n2752:   0   0  ITS-MSI 1 Edge  devdrv-functional_cq\n2753:  12   0  ITS-MSI 2 Edge  sq_send_trigger_irq\n2754:  12   0  ITS-MSI 3 Edge  cq_update_irq\n' \
	>"$T/i/proc/interrupts"
expect_rc 0 env NPULAUNCH_ROOT="$T/i" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
expect_grep "$T/out" "tune $T/i/proc/irq/2753/smp_affinity_list  0-191 -> 0"
expect_grep "$T/out" "tune $T/i/proc/irq/2754/smp_affinity_list  0-191 -> 1"
expect_nogrep "$T/out" "proc/irq/2752"
run env NPULAUNCH_ROOT="$T/i" NPULAUNCH_PREFLIGHT=0 PATH="$T/i.bin:$PATH" NPL_STUB_LOG="$T/i.stub" \
	"$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}"
expect_eq "$rc" 0 "apply with the dies' interrupts: $(cat "$T/err")"
expect_eq "$(cat "$T/i/proc/irq/2753/smp_affinity_list" "$T/i/proc/irq/2754/smp_affinity_list" "$T/i/proc/irq/2752/smp_affinity_list" | tr '\n' ' ')" \
	"0 1 0-191 " "the interrupts' CPUs while the server runs"
expect_rc 0 "$NPL" tune --revert --root "$T/i"
expect_eq "$(cat "$T/i/proc/irq/2753/smp_affinity_list" "$T/i/proc/irq/2754/smp_affinity_list" | tr '\n' ' ')" \
	"0-191 0-191 " "the interrupts put back"
expect_eq "$(state_of "$T/i")" "schedutil schedutil 60 1 500000 " "the rest put back"
# an interrupt file that cannot be written: nothing changes
a2_root "$T/j" 0-191
mkdir -p "$T/j/sys/bus/pci/devices/0000:01:00.0/msi_irqs/2753" "$T/j/proc/irq/2753"
printf '2753:  12   0  ITS-MSI 2 Edge  sq_send_trigger_irq\n' >"$T/j/proc/interrupts"
mkfifo "$T/j/proc/irq/2753/smp_affinity_list"
run env NPULAUNCH_ROOT="$T/j" NPULAUNCH_PREFLIGHT=0 PATH="$T/j.bin:$PATH" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}"
expect_eq "$rc" 1 "apply with a FIFO for an interrupt's file"
expect_grep "$T/err" "irq 2753 (device 4 sq_send_trigger_irq)"
expect_eq "$(state_of "$T/j")" "schedutil schedutil 60 1 500000 " "the host untouched"

# ---- irqbalance: stopped while the interrupts are bound, journaled, started by tune --revert -----
# The root's own systemctl is asked (a stand-in here: the unit's state in ROOT/run/sim-systemd,
# each call logged), never the one on PATH. After SIGKILL of the running server, tune --revert
# puts back every interrupt file and the service's state byte for byte.
irq_root() {  # DIR STATE: the interrupt node above, irqbalance.service in STATE
	local r=$1 irq
	a2_root "$r" 0-191
	for irq in 2752 2753 2754; do
		mkdir -p "$r/sys/bus/pci/devices/0000:01:00.0/msi_irqs" "$r/proc/irq/$irq"
		touch "$r/sys/bus/pci/devices/0000:01:00.0/msi_irqs/$irq"
		printf '0-191\n' >"$r/proc/irq/$irq/smp_affinity_list"
	done
	cp "$T/i/proc/interrupts" "$r/proc/interrupts"
	mkdir -p "$r/usr/bin" "$r/run/sim-systemd"
	printf '%s\n' "$2" >"$r/run/sim-systemd/irqbalance.service"
	cat >"$r/usr/bin/systemctl" <<EOF
#!/bin/sh
# a stand-in systemctl: the unit's state in a file
printf '%s\n' "\$*" >>"$r/run/sim-systemd/calls"
f="$r/run/sim-systemd/\$2"
[ -f "\$f" ] || { echo "Unit \$2 could not be found." >&2; exit 4; }
case \$1 in
is-active) cat "\$f"; [ "\$(cat "\$f")" = active ] ;;
stop) [ ! -e "$r/run/sim-systemd/refuse" ] || { echo "Failed to stop \$2: Access denied" >&2; exit 1; }; echo inactive >"\$f" ;;
start) echo active >"\$f" ;;
*) exit 2 ;;
esac
EOF
	chmod +x "$r/usr/bin/systemctl"
}
host_bytes() {  # DIR: every byte the round trip may touch
	(cd "$1" && cat proc/irq/*/smp_affinity_list run/sim-systemd/irqbalance.service && state_of .) | sha256sum
}
irq_applied() {  # DIR: irq_root DIR active, its bytes in $before, then apply there (the server exits)
	irq_root "$1" active
	before=$(host_bytes "$1")
	run env NPULAUNCH_ROOT="$1" NPULAUNCH_PREFLIGHT=0 PATH="$1.bin:$PATH" NPL_STUB_LOG="$1.stub" \
		"$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}"
	expect_eq "$rc" 0 "apply on $1: $(cat "$T/err")"
}
irq_root "$T/k" active
before=$(host_bytes "$T/k")
expect_rc 0 env NPULAUNCH_ROOT="$T/k" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
expect_grep "$T/out" "tune irqbalance.service  active -> inactive  (irqbalance would move the interrupts bound above; tune --revert starts it)"
expect_eq "$(cat "$T/k/run/sim-systemd/calls")" "is-active irqbalance.service" "a dry run only asks"
expect_rc 0 env NPULAUNCH_ROOT="$T/k" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run --json
jq -e '.tuning[] | select(.name == "irqbalance.service") | .current == "active" and .wanted == "inactive"' "$T/out" >/dev/null ||
	fail "apply --dry-run --json lists irqbalance: $(cat "$T/out")"
: >"$T/k/run/sim-systemd/calls"
# the server stays up; SIGKILL takes apply (execed into it) down without a word
env NPULAUNCH_ROOT="$T/k" NPULAUNCH_PREFLIGHT=0 PATH="$T/k.bin:$PATH" NPL_STUB_LOG="$T/k.stub" NPL_STUB_HOLD_MS=60000 \
	"$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" >"$T/k.out" 2>"$T/k.err" &
pid=$!
w=0
while ((w++ < 200)) && [[ ! -s $T/k.stub ]]; do sleep 0.05; done
[[ -s $T/k.stub ]] || fail "the server did not start: $(cat "$T/k.err")"
expect_eq "$(cat "$T/k/run/sim-systemd/irqbalance.service")" "inactive" "irqbalance while the server runs"
expect_eq "$(cat "$T/k/run/sim-systemd/calls" | tr '\n' ' ')" "is-active irqbalance.service stop irqbalance.service " \
	"systemctl's calls by apply"
expect_eq "$(cat "$T/k/proc/irq/2753/smp_affinity_list" "$T/k/proc/irq/2754/smp_affinity_list" | tr '\n' ' ')" "0 1 " \
	"the interrupts' CPUs while the server runs"
expect_grep "$T/k/run/npulaunch/tune-journal.json" '{"name": "irqbalance.service", "unit": "irqbalance.service", "state": "active"}'
kill -KILL "$pid"
wait "$pid" 2>/dev/null
expect_rc 0 "$NPL" tune --revert --root "$T/k"
expect_eq "$(host_bytes "$T/k")" "$before" "interrupts, irqbalance and the rest after SIGKILL and tune --revert"
expect_eq "$(tail -n 1 "$T/k/run/sim-systemd/calls")" "start irqbalance.service" "revert starts irqbalance"
[[ ! -e $T/k/run/npulaunch/tune-journal.json ]] || fail "the journal is left after the revert"
# the role script's --revert reads apply's journal too: interrupts and irqbalance
expect_rc 0 "$NPL" --recipes "$SHAPES" render $PART "${SITE[@]}" -o "$T/sv"
irq_applied "$T/v"
expect_eq "$(cat "$T/v/run/sim-systemd/irqbalance.service")" "inactive" "irqbalance after apply"
run env NPULAUNCH_ROOT="$T/v" bash "$T/sv/pd-mixed.sh" --revert
expect_eq "$rc" 0 "pd-mixed.sh --revert of apply's journal: $(cat "$T/err")"
expect_eq "$(host_bytes "$T/v")" "$before" "interrupts, irqbalance and the rest after the script's --revert"
[[ ! -e $T/v/run/npulaunch/tune-journal.json ]] || fail "the journal is left after the script's revert"
# the script too runs no systemctl that is a link out of the root: nothing restored, journal kept
irq_applied "$T/v2"
mv "$T/v2/usr/bin/systemctl" "$T/outside-systemctl2"
ln -s "$T/outside-systemctl2" "$T/v2/usr/bin/systemctl"
run env NPULAUNCH_ROOT="$T/v2" bash "$T/sv/pd-mixed.sh" --revert
expect_eq "$rc" 1 "pd-mixed.sh --revert with a systemctl that links out of the root"
expect_grep "$T/err" "cannot start irqbalance.service again: there is no systemctl under $T/v2 (usr/bin, bin); nothing was restored"
expect_nogrep "$T/v2/run/sim-systemd/calls" "start"
[[ -e $T/v2/run/npulaunch/tune-journal.json ]] || fail "the journal is gone after a refused revert"
# an inactive irqbalance is left alone and not journaled
irq_root "$T/m" inactive
run env NPULAUNCH_ROOT="$T/m" NPULAUNCH_PREFLIGHT=0 PATH="$T/m.bin:$PATH" NPL_STUB_LOG="$T/m.stub" \
	"$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}"
expect_eq "$rc" 0 "apply with irqbalance inactive: $(cat "$T/err")"
expect_eq "$(cat "$T/m/run/sim-systemd/calls")" "is-active irqbalance.service" "an inactive irqbalance is only asked"
expect_nogrep "$T/m/run/npulaunch/tune-journal.json" "irqbalance"
# systemctl refuses to stop it: nothing changes, no journal is left
irq_root "$T/n" active
touch "$T/n/run/sim-systemd/refuse"
before=$(host_bytes "$T/n")
run env NPULAUNCH_ROOT="$T/n" NPULAUNCH_PREFLIGHT=0 PATH="$T/n.bin:$PATH" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}"
expect_eq "$rc" 1 "apply when irqbalance cannot be stopped"
expect_grep "$T/err" "$T/n/usr/bin/systemctl: error: systemctl stop irqbalance.service failed (status 1): Failed to stop irqbalance.service: Access denied"
expect_eq "$(host_bytes "$T/n")" "$before" "the host after a refused stop"
[[ ! -e $T/n/run/npulaunch/tune-journal.json ]] || fail "a journal is left after a refused stop"
# tune --revert needs the root's systemctl to start it again: without one nothing is restored
irq_applied "$T/o"
mv "$T/o/usr/bin/systemctl" "$T/o/systemctl.away"
run "$NPL" tune --revert --root "$T/o"
expect_eq "$rc" 1 "tune --revert without systemctl"
expect_grep "$T/err" "tune-journal.json: error: cannot start irqbalance.service again: there is no systemctl under $T/o (usr/bin, bin)"
expect_eq "$(cat "$T/o/proc/irq/2753/smp_affinity_list")" "0" "nothing restored without systemctl"
mv "$T/o/systemctl.away" "$T/o/usr/bin/systemctl"
expect_rc 0 "$NPL" tune --revert --root "$T/o"
expect_eq "$(cat "$T/o/proc/irq/2753/smp_affinity_list" "$T/o/run/sim-systemd/irqbalance.service" | tr '\n' ' ')" "0-191 active " \
	"restored once systemctl is back"
# a tampered journal naming another service is refused whole, located
irq_root "$T/t" active
mkdir -p "$T/t/run/npulaunch"
printf '{\n\t"format": "npulaunch-tune-journal/2",\n\t"root": "%s",\n\t"entries": [\n\t\t{"name": "sshd.service", "unit": "sshd.service", "state": "active"}\n\t]\n}\n' \
	"$T/t" >"$T/t/run/npulaunch/tune-journal.json"
run "$NPL" tune --revert --root "$T/t"
expect_eq "$rc" 1 "tune --revert of a journal naming sshd.service"
expect_grep "$T/err" "tune-journal.json: error: entry 1 (a service): a unit that is not one tuning stops (only irqbalance.service)"
expect_eq "$(cat "$T/t/run/sim-systemd/calls" 2>/dev/null)" "" "no systemctl call for a tampered journal"
# a root's systemctl that is a link out of the root (to the real host's, say) is none: not run
irq_root "$T/sl" active
mv "$T/sl/usr/bin/systemctl" "$T/outside-systemctl"
ln -s "$T/outside-systemctl" "$T/sl/usr/bin/systemctl"
expect_rc 0 env NPULAUNCH_ROOT="$T/sl" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
expect_nogrep "$T/out" "irqbalance"
[[ ! -s $T/sl/run/sim-systemd/calls ]] || fail "a systemctl outside the root was run: $(cat "$T/sl/run/sim-systemd/calls")"
# no systemctl, irqbalance running: said, not stopped
irq_root "$T/u" active
rm "$T/u/usr/bin/systemctl"
mkdir -p "$T/u/proc/4242"
echo irqbalance >"$T/u/proc/4242/comm"
run env NPULAUNCH_ROOT="$T/u" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
expect_grep "$T/err" "warning: irqbalance runs (pid 4242) and there is no systemctl under $T/u to stop it"

# ---- the rendered script: the same sets as apply, from the same facts --------------------------
# a partial cpuset; numa_node -1 on one die (the topology table says its node); each core's two
# threads apart (CPU c and c+12 of a node): a die's slice takes whole cores
a2_root "$T/s" 0-9,12-23,48-71
same_sets "$T/s" "a partial cpuset"
echo -1 >"$T/s/sys/bus/pci/devices/0000:02:00.0/numa_node"
same_sets "$T/s" "numa_node -1"
for ((c = 0; c < 192; c++)); do
	mkdir -p "$T/s/sys/devices/system/cpu/cpu$c/topology"
	b=$((c / 24 * 24 + c % 12))
	echo "$b,$((b + 12))" >"$T/s/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list"
done
same_sets "$T/s" "SMT siblings"
expect_grep "$T/out" "# affinity: device 6: CPUs 48-53,60-65, NUMA node 2 (sysfs numa_node)"
# even-slice: every die on node 0 (slice k of the allowed CPUs for die k); without a node for
# any die (npu-smi gone: only the instance's devices are known), numa-local falls back to it
a2_root "$T/e" 0-191
for b in c1 c2 81 82 01 02 41 42; do echo 0 >"$T/e/sys/bus/pci/devices/0000:$b:00.0/numa_node"; done
mkdir -p "$T/own2"
cp "$SHAPES"/*.yaml "$T/own2/"
printf 'tuning:\n  affinity:\n    policy: even-slice\n' >>"$T/own2/a2-part.yaml"
same_sets "$T/e" "even-slice" "$T/own2"
expect_grep "$T/out" "cpus 96-191"
rm "$T/e/usr/local/sbin/npu-smi"
same_sets "$T/e" "no npu-smi"
# a fact that cannot be read: nothing bound, said alike
rm "$T/e/proc/self/status"
same_sets "$T/e" "no Cpus_allowed_list"
expect_grep "$T/err" "warning: $T/e/proc/self/status: no Cpus_allowed_list: the CPUs this process may use are not known: the server is not bound"
# per run: --no-affinity, NPULAUNCH_AFFINITY=0
run env NPULAUNCH_ROOT="$T/r" bash "$T/sb/pd-mixed.sh" --no-affinity --affinity-only
expect_eq "$(cat "$T/out")" "# affinity: npulaunch binds nothing: --no-affinity" "pd-mixed.sh --no-affinity --affinity-only"
run env NPULAUNCH_ROOT="$T/r" NPULAUNCH_AFFINITY=0 bash "$T/sb/pd-mixed.sh" --affinity-only
expect_eq "$(cat "$T/out")" "# affinity: npulaunch binds nothing: NPULAUNCH_AFFINITY=0" "NPULAUNCH_AFFINITY=0"
expect_rc 2 env NPULAUNCH_ROOT="$T/r" NPULAUNCH_AFFINITY=yes bash "$T/sb/pd-mixed.sh" --affinity-only
# a policy that cannot be met stops the script before it tunes: exit 1, the host untouched
run env NPULAUNCH_ROOT="$T/q" PATH="$T/q.bin:$PATH" bash "$T/sb/pd-mixed.sh"
expect_eq "$rc" 1 "pd-mixed.sh whose affinity cannot be met"
expect_grep "$T/err" "affinity numa-local: device 6 is on NUMA node 2, whose CPUs (48-71) this process may not use (Cpus_allowed_list of $T/q/proc/self/status: 0-23,96-119,144-167)"
expect_grep "$T/err" "the affinity policy cannot be met: nothing was changed"
expect_eq "$(state_of "$T/q")" "schedutil schedutil 60 1 500000 " "the host untouched by the script"
run env NPULAUNCH_ROOT="$T/f" bash "$T/sb/pd-mixed.sh" --affinity-only
expect_eq "$rc" 1 "pd-mixed.sh --affinity-only with too few CPUs"
expect_grep "$T/err" "NUMA node 0 has 3 CPUs this process may use for its 2 dies: 1 each, fewer than the 5 per die the policy needs"
# where SGLang binds (SGLANG_SET_CPU_AFFINITY) or the policy is none, the script holds no affinity code
"$NPL" --recipes "$SHAPES" render $PART "${SITE[@]}" --env SGLANG_SET_CPU_AFFINITY=on -o "$T/sg" >/dev/null 2>&1 ||
	fail "render with SGLANG_SET_CPU_AFFINITY"
expect_nogrep "$T/sg/pd-mixed.sh" "npl_aff"
expect_nogrep "$T/sg/pd-mixed.sh" "taskset"
"$NPL" --recipes "$T/own" render $PART "${SITE[@]}" -o "$T/pn" >/dev/null 2>&1 || fail "render with policy none"
expect_nogrep "$T/pn/pd-mixed.sh" "npl_aff"
expect_rc 2 env NPULAUNCH_ROOT="$T/r" bash "$T/pn/pd-mixed.sh" --affinity-only

# ---- each rank on its die's node: SGLang's own --numa-node, where this node's SGLang has it -----
# The server's python asks a real python3 for the sglang package (PYTHONPATH names a folder with
# what SGLang's sources hold: server_args.py's numa_node since 0.5.2, environ.py's
# SGLANG_NUMA_BIND_V2 since 0.5.6) and is the stub server otherwise; numactl is a stand-in on
# PATH. The list is indexed by gpu id: cards 4-7 (--base-gpu-id 4) on nodes 0 0 2 2, the
# unused ids 0-3 given the first rank's.
a2_root "$T/rk" 0-191
for v in new 052 old; do mkdir -p "$T/sgl-$v/sglang/srt" && : >"$T/sgl-$v/sglang/__init__.py"; done
mkdir -p "$T/rk.tools"
echo 'numa_node: Optional[List[int]] = None' >"$T/sgl-new/sglang/srt/server_args.py"
echo 'SGLANG_NUMA_BIND_V2 = EnvBool(True)' >"$T/sgl-new/sglang/srt/environ.py"
cp "$T/sgl-new/sglang/srt/server_args.py" "$T/sgl-052/sglang/srt/"
echo 'SGLANG_SET_CPU_AFFINITY = EnvBool(False)' >"$T/sgl-052/sglang/srt/environ.py"
echo 'dist_init_addr: Optional[str] = None' >"$T/sgl-old/sglang/srt/server_args.py"
real_py=$(type -P python3) || fail "python3 is needed"
rm -f "$T/rk.bin/python3"
cat >"$T/rk.bin/python3" <<-EOF
#!/usr/bin/env bash
[[ \$1 != -c ]] || exec "$real_py" \${NPL_PY_NO_SITE:+-S} "\$@"
exec -a python3 "$NPL_STUB" "\$@"
EOF
chmod +x "$T/rk.bin/python3"
printf '#!/bin/sh\nexit 0\n' >"$T/rk.tools/numactl"
chmod +x "$T/rk.tools/numactl"
ranks() {  # WHAT WANT [ENV...]: apply --dry-run and the script's --affinity-only say WANT about the ranks, alike
	local what=$1 want=$2
	shift 2
	PATH="$T/rk.bin:$PATH" same_sets "$T/rk" "$what" >/dev/null
	run env NPULAUNCH_ROOT="$T/rk" PATH="$T/rk.bin:$PATH" "$@" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
	expect_grep "$T/out" "# affinity: ranks: $want"
	run env NPULAUNCH_ROOT="$T/rk" PATH="$T/rk.bin:$PATH" "$@" bash "$T/sb/pd-mixed.sh" --affinity-only
	expect_grep "$T/out" "# affinity: ranks: $want"
	expect_eq "$(grep -c '^# affinity: ranks:' "$T/out")" 1 "$what: one ranks line"
}
ranks "SGLang 0.5.6 and numactl" "--numa-node 0 0 0 0 0 0 2 2: SGLang starts each rank under numactl on its die's NUMA node (CPUs and memory)" \
	PYTHONPATH="$T/sgl-new" PATH="$T/rk.tools:$T/rk.bin:$PATH"
# a PATH without numactl, whatever this machine has: its programs but that one, linked
mkdir -p "$T/no-numactl"
for f in /usr/local/bin/* /usr/bin/* /bin/*; do
	[[ ${f##*/} == numactl || -e $T/no-numactl/${f##*/} ]] || ln -s "$f" "$T/no-numactl/${f##*/}"
done
ranks "no numactl" "numactl is not on the server's PATH (SGLang starts each rank under it): install it (Debian: numactl) to bind each rank; the ranks share the server's CPUs" \
	PYTHONPATH="$T/sgl-new" PATH="$T/rk.bin:$T/no-numactl"
ranks "SGLang 0.5.2" "this SGLang binds a rank through libnuma.so, which ends the rank where the library is missing (before 0.5.6): left off, the ranks share the server's CPUs" \
	PYTHONPATH="$T/sgl-052" PATH="$T/rk.tools:$T/rk.bin:$PATH"
ranks "SGLang 0.5.1" "this SGLang has no --numa-node (0.5.2 added it): the ranks share the server's CPUs" \
	PYTHONPATH="$T/sgl-old" PATH="$T/rk.tools:$T/rk.bin:$PATH"
# (python -S: without site-packages, whatever this machine has installed, no sglang is found)
ranks "no sglang" "python3 found no sglang package: the ranks share the server's CPUs" PATH="$T/rk.tools:$T/rk.bin:$PATH" \
	NPL_PY_NO_SITE=1
ranks "SGLANG_NUMA_BIND_V2 set" "the launch environment sets SGLANG_NUMA_BIND_V2=0: SGLang's choice is the recipe's" \
	PYTHONPATH="$T/sgl-new" PATH="$T/rk.tools:$T/rk.bin:$PATH" SGLANG_NUMA_BIND_V2=0
run env NPULAUNCH_ROOT="$T/rk" PYTHONPATH="$T/sgl-new" PATH="$T/rk.tools:$T/rk.bin:$PATH" "$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run --json
expect_eq "$(jq -r '.affinity.ranks' "$T/out")" "--numa-node 0 0 0 0 0 0 2 2: SGLang starts each rank under numactl on its die's NUMA node (CPUs and memory)" \
	"apply --dry-run --json's affinity.ranks"
expect_eq "$(jq -c '.instances[0].argv[-9:]' "$T/out")" '["--numa-node","0","0","0","0","0","0","2","2"]' "the dry run's argv"
# the server is started with it, by apply and by the script alike
run env NPULAUNCH_ROOT="$T/rk" NPULAUNCH_PREFLIGHT=0 PYTHONPATH="$T/sgl-new" PATH="$T/rk.tools:$T/rk.bin:$PATH" NPL_STUB_LOG="$T/rk.apply" \
	"$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --no-tune
expect_eq "$rc" 0 "apply with the ranks bound: $(cat "$T/err")"
expect_grep "$T/err" "npulaunch: apply: affinity ranks: --numa-node 0 0 0 0 0 0 2 2"
run env NPULAUNCH_ROOT="$T/rk" PYTHONPATH="$T/sgl-new" PATH="$T/rk.tools:$T/rk.bin:$PATH" NPL_STUB_LOG="$T/rk.script" \
	bash "$T/sb/pd-mixed.sh" --no-tune
expect_eq "$rc" 0 "pd-mixed.sh with the ranks bound: $(cat "$T/err")"
expect_grep "$T/err" "pd-mixed.sh: affinity ranks: --numa-node 0 0 0 0 0 0 2 2"
expect_eq "$(jq -c '.argv[-9:]' "$T/rk.apply")" '["--numa-node","0","0","0","0","0","0","2","2"]' "apply's server argv"
expect_eq "$(jq -c .argv "$T/rk.script")" "$(jq -c .argv "$T/rk.apply")" "the script's server argv against apply's"
# the cluster targets run the same role script on the node (Kubernetes: from the ConfigMap, by
# entrypoint.sh; Slurm: by slurm-step.sh): on the same node, the same sets and ranks as apply
run env NPULAUNCH_ROOT="$T/rk" PATH="$T/rk.tools:$T/rk.bin:$PATH" PYTHONPATH="$T/sgl-new" \
	"$NPL" --recipes "$SHAPES" apply $PART "${SITE[@]}" --dry-run
grep -E '^(# affinity: |cpus )' "$T/out" >"$T/want.rk"
expect_grep "$T/want.rk" "# affinity: ranks: --numa-node 0 0 0 0 0 0 2 2"
for target in k8s rbg slurm; do
	rm -rf "$T/tg"
	"$NPL" --recipes "$SHAPES" render $PART "${SITE[@]:0:4}" --target $target -o "$T/tg" >"$T/tg.out" 2>&1 ||
		fail "render --target $target: $(cat "$T/tg.out")"
	if [[ -f $T/tg/configmap.yaml ]]; then
		"$PY" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["pd-mixed.sh"], end="")' \
			"$T/tg/configmap.yaml" >"$T/tg/pd-mixed.sh"
	fi
	# (Slurm's scripts take the job's nodes as ENTRY_IP, which slurm-step.sh sets)
	run env NPULAUNCH_ROOT="$T/rk" PATH="$T/rk.tools:$T/rk.bin:$PATH" PYTHONPATH="$T/sgl-new" ENTRY_IP=127.0.0.1 \
		NPULAUNCH_NODE_IP=127.0.0.1 bash "$T/tg/pd-mixed.sh" --affinity-only
	expect_eq "$(cat "$T/out")" "$(cat "$T/want.rk")" "--target $target: its role script's sets against apply --dry-run's ($(head -c 500 "$T/err"))"
done
# a die that shares its node with another instance's die: the rank could leave the server's CPUs
mkdir -p "$T/own3"
cp "$SHAPES"/*.yaml "$T/own3/"
sed -e 's/4P FIRST-CARD4/1P CARD4/' -e 's/^cards: 4/cards: 1/' -e 's/cards: 4, first_card: 4/cards: 1, first_card: 4/' \
	"$SHAPES/a2-part.yaml" >"$T/own3/a2-card4.yaml"
rm -rf "$T/sb3"
"$NPL" --recipes "$T/own3" render shape-moe-w8a8-a2-1p-card4-50ms "${SITE[@]}" -o "$T/sb3" >/dev/null 2>&1 || fail "render the card-4 recipe"
for w in apply script; do
	if [[ $w == apply ]]; then
		run env NPULAUNCH_ROOT="$T/rk" PYTHONPATH="$T/sgl-new" PATH="$T/rk.tools:$T/rk.bin:$PATH" \
			"$NPL" --recipes "$T/own3" apply shape-moe-w8a8-a2-1p-card4-50ms "${SITE[@]}" --dry-run
	else
		run env NPULAUNCH_ROOT="$T/rk" PYTHONPATH="$T/sgl-new" PATH="$T/rk.tools:$T/rk.bin:$PATH" bash "$T/sb3/pd-mixed.sh" --affinity-only
	fi
	expect_grep "$T/out" "# affinity: ranks: device 4 shares NUMA node 0 with a die of another instance: the ranks share the server's CPUs"
done

# ---- the real server pinned: a topology whose dies' CPUs are this machine's -------------------
# each die of the instance alone on a NUMA node whose one CPU is CPU 1 (every machine this runs
# on has CPUs 0 and 1): the server is pinned to CPU 1, as /proc/self/status of the exec'd
# program says
a2_root "$T/x" 1
echo 0-1 >"$T/x/sys/devices/system/cpu/online"
k=0
for b in c1 c2 81 82 01 02 41 42; do
	echo $k >"$T/x/sys/bus/pci/devices/0000:$b:00.0/numa_node"
	echo 1 >"$T/x/sys/bus/pci/devices/0000:$b:00.0/local_cpulist"
	echo 1 >"$T/x/sys/devices/system/node/node$k/cpulist"
	k=$((k + 1))
done
mkdir -p "$T/own1"
cp "$SHAPES"/*.yaml "$T/own1/"
printf 'tuning:\n  affinity:\n    min_cpus_per_die: 1\n' >>"$T/own1/a2-part.yaml"
rm -f "$T/x.bin/python3"   # make_root's is a link to the stub server: not written through
printf '#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status >"%s"\n' "$T/x.pinned" >"$T/x.bin/python3"
chmod +x "$T/x.bin/python3"
expect_rc 0 env NPULAUNCH_ROOT="$T/x" NPULAUNCH_PREFLIGHT=0 PATH="$T/x.bin:$PATH" \
	"$NPL" --recipes "$T/own1" apply $PART "${SITE[@]}" --no-tune
expect_eq "$(tr -d ' \t' <"$T/x.pinned" 2>/dev/null)" "Cpus_allowed_list:1" "the server's CPUs, read back"
# without the binding: both CPUs
expect_rc 0 env NPULAUNCH_ROOT="$T/x" NPULAUNCH_PREFLIGHT=0 PATH="$T/x.bin:$PATH" \
	"$NPL" --recipes "$T/own1" apply $PART "${SITE[@]}" --no-tune --no-affinity
expect_eq "$(tr -d ' \t' <"$T/x.pinned" 2>/dev/null)" "Cpus_allowed_list:0-1" "the server's CPUs without the binding"
# the rendered script pins it alike (taskset), and not with --no-affinity
rm -f "$T/x.pinned"
"$NPL" --recipes "$T/own1" render $PART "${SITE[@]}" -o "$T/xb" >/dev/null 2>&1 || fail "render for the pinned run"
expect_rc 0 env NPULAUNCH_ROOT="$T/x" PATH="$T/x.bin:$PATH" bash "$T/xb/pd-mixed.sh" --no-tune
expect_eq "$(tr -d ' \t' <"$T/x.pinned" 2>/dev/null)" "Cpus_allowed_list:1" "the script's server's CPUs, read back"
expect_grep "$T/err" "affinity numa-local: the server on CPUs 1"
expect_rc 0 env NPULAUNCH_ROOT="$T/x" PATH="$T/x.bin:$PATH" bash "$T/xb/pd-mixed.sh" --no-tune --no-affinity
expect_eq "$(tr -d ' \t' <"$T/x.pinned" 2>/dev/null)" "Cpus_allowed_list:0-1" "the script's server without the binding"

# ---- the round trip on a simulated host in a mount namespace of its own: apply (tuned, bound) ->
# status --affinity reads the running server back -> a wrong binding is reported -> revert.
# The server's real /proc/PID is bound into the root's proc, in the namespace only; the host's
# own tuning files are never touched (the root's are the simulated ones).
if unshare -m --propagation private true 2>/dev/null; then
	# one card of an A2 node whose die is on NUMA node 0 (which every kernel has) with CPU 1:
	# apply binds the server's CPUs and its memory (preferred node 0) for real
	a2_root "$T/y" 1
	echo 0-1 >"$T/y/sys/devices/system/cpu/online"
	echo 0 >"$T/y/sys/bus/pci/devices/0000:c1:00.0/numa_node"
	echo 1 >"$T/y/sys/bus/pci/devices/0000:c1:00.0/local_cpulist"
	echo 1 >"$T/y/sys/devices/system/node/node0/cpulist"
	for b in 01 02; do echo 1 >"$T/y/sys/bus/pci/devices/0000:$b:00.0/numa_node"; done   # node 0 its alone
	mkdir -p "$T/own2"
	cp "$SHAPES"/*.yaml "$T/own2/"
	cat >"$T/own2/a2-one.yaml" <<-'EOF'
	# PD mixed on card 0 of an A2 node, its die given one CPU at least
	kind: recipe
	title: Shape-MoE W8A8 A2 1P ROUND-TRIP 50ms
	model: shape-moe
	hardware: ascend-a2
	cards: 1
	mode: pd-mixed
	quantization: W8A8 INT8
	dataset: 8k+1k
	tpot: 50ms
	topology:
	  pd-mixed: {instances: 1, cards: 1}
	bench: {dataset: random, input: 8000, output: 1000, concurrency: 4, prompts: 8}
	tuning:
	  affinity: {min_cpus_per_die: 1}
	EOF
	before=$(state_of "$T/y")
	rm -f "$T/y.bin/python3"
	printf '#!/bin/sh\n[ "$1" != -c ] || exit 0   # the sglang probe: none\nsleep 60 &\nwait\n' >"$T/y.bin/python3"
	chmod +x "$T/y.bin/python3"
	cat >"$T/rt.sh" <<-'EOF'
	# the round trip, in its own mount namespace: $1 root, $2 recipes, $3 results folder
	R=$1 RC=$2 O=$3; shift 3
	env NPULAUNCH_ROOT="$R" NPULAUNCH_PREFLIGHT=0 PATH="$R.bin:$PATH" "$NPL" --recipes "$RC" apply "$@" >"$O/apply.out" 2>"$O/apply.err" &
	pid=$!
	n=0
	while ((n++ < 100)) && ! grep -qs sglang "/proc/$pid/cmdline"; do sleep 0.05; done
	cp "/proc/$pid/status" "$O/server.status"
	mkdir -p "$R/proc/$pid" && mount --bind "/proc/$pid" "$R/proc/$pid"
	env NPULAUNCH_ROOT="$R" "$NPL" --recipes "$RC" status --affinity "$@" >"$O/ok.out" 2>"$O/ok.err"
	echo $? >"$O/ok.rc"
	taskset -p -c 0 "$pid" >/dev/null
	env NPULAUNCH_ROOT="$R" "$NPL" --recipes "$RC" status --affinity "$@" >"$O/bad.out" 2>"$O/bad.err"
	echo $? >"$O/bad.rc"
	cp "$R/run/npulaunch/tune-journal.json" "$O/journal" 2>/dev/null
	pkill -P "$pid"; kill "$pid"; wait "$pid"
	umount "$R/proc/$pid" && rmdir "$R/proc/$pid"
	"$NPL" tune --revert --root "$R" >"$O/revert.out" 2>"$O/revert.err"
	echo $? >"$O/revert.rc"
	EOF
	mkdir -p "$T/rt"
	unshare -m --propagation private bash "$T/rt.sh" "$T/y" "$T/own2" "$T/rt" shape-moe-w8a8-a2-1p-round-trip-50ms "${SITE[@]}"
	expect_eq "$(tr -d ' \t' <"$T/rt/server.status" | grep Cpus_allowed_list:)" "Cpus_allowed_list:1" "the running server's CPUs"
	expect_eq "$(cat "$T/rt/ok.rc")" 0 "status --affinity of the bound server: $(cat "$T/rt/ok.out" "$T/rt/ok.err")"
	expect_grep "$T/rt/ok.out" "cpus 1 ok (its dies': 1)"
	expect_grep "$T/rt/ok.out" "memory prefer"
	expect_eq "$(cat "$T/rt/bad.rc")" 1 "status --affinity after taskset moved the server: $(cat "$T/rt/bad.out")"
	expect_grep "$T/rt/bad.out" "cpus 0 MISMATCH (its dies': 1)"
	[[ -s $T/rt/journal ]] || fail "apply journaled nothing: $(cat "$T/rt/apply.err")"
	expect_eq "$(cat "$T/rt/revert.rc")" 0 "tune --revert after the server: $(cat "$T/rt/revert.err")"
	expect_eq "$(state_of "$T/y")" "$before" "the simulated host after the round trip"
	
else
	echo "SKIP: the round trip in a mount namespace: unshare -m is not allowed here"
fi
finish
