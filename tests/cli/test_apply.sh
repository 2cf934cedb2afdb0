# tune and apply as an operator uses them, on fake roots: check/apply/revert
# on 1024 CPUs byte for byte, apply from a bundle and from a recipe, the role
# found from the node's address, --dry-run changing nothing, refusals that
# change nothing, a failed exec undoing the tuning, --cpus.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

# ---- tune on 1024 CPUs ----
R=$T/big
for c in $(seq 0 1023); do
	mkdir -p "$R/sys/devices/system/cpu/cpu$c/cpufreq"
	echo schedutil >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
	echo "performance schedutil powersave" >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors"
done
echo 0-1023 >"$R/sys/devices/system/cpu/online"
mkdir -p "$R/proc/sys/vm" "$R/proc/sys/kernel"
printf '60\n' >"$R/proc/sys/vm/swappiness"
printf '1\n' >"$R/proc/sys/kernel/numa_balancing"
printf '500000\n' >"$R/proc/sys/kernel/sched_migration_cost_ns"
snap() { (cd "$1" && find . -type f ! -path './run/*' -print0 | sort -z | xargs -0 md5sum | md5sum); }
before=$(snap "$R")
expect_rc 1 "$NPL" tune --check --root "$R"
expect_eq "$(wc -l <"$T/out")" 1027 "tune --check lists each difference"
expect_grep "$T/out" "$R/sys/devices/system/cpu/cpu1023/cpufreq/scaling_governor  schedutil -> performance"
expect_grep "$T/out" "$R/proc/sys/vm/swappiness"
expect_grep "$T/err" "1027 of 1027 settings differ"
expect_rc 1 "$NPL" tune --check --root "$R" --json
if command -v jq >/dev/null; then
	expect_eq "$(jq -r '"\(.cpus) \(.differences) \(.items | length) \(.items[1024].name) \(.items[1024].current) \(.items[1024].wanted)"' "$T/out")" \
		"1024 1027 1027 vm.swappiness 60 0" "tune --json"
fi
expect_rc 0 "$NPL" tune --apply --root "$R"
expect_grep "$T/err" "changed 1027 of 1027 settings (journal $R/run/npulaunch/tune-journal.json)"
expect_rc 0 "$NPL" tune --check --root "$R"
expect_grep "$T/err" "the host matches (1027 settings)"
cp "$R/run/npulaunch/tune-journal.json" "$T/journal.first"
expect_rc 0 "$NPL" tune --apply --root "$R"
expect_grep "$T/err" "the host already matches"
cmp -s "$R/run/npulaunch/tune-journal.json" "$T/journal.first" || fail "a second apply rewrote the journal"
expect_rc 0 "$NPL" tune --revert --root "$R"
expect_grep "$T/err" "restored 1027 files from the journal"
expect_eq "$(snap "$R")" "$before" "revert restores every file byte for byte"
[[ -e $R/run/npulaunch/tune-journal.json ]] && fail "revert left the journal"
expect_rc 1 "$NPL" tune --revert --root "$R"
expect_grep "$T/err" "no tuning journal: nothing to revert"
# the profile of a recipe, and NPULAUNCH_ROOT as the default root
expect_rc 1 env NPULAUNCH_ROOT="$R" "$NPL" tune deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms
expect_rc 2 "$NPL" tune --check --apply
expect_rc 2 "$NPL" tune --root relative

# ---- apply ----
make_root "$T/root"
export PATH="$T/root.bin:$PATH" NPULAUNCH_ROOT="$T/root" NPL_STUB_LOG="$T/calls"
ID=kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms
SITE=(--model-path /m --draft-model-path /d --ifname eth0 --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2)
before=$(state_of "$T/root")

# --dry-run prints, changes nothing, launches nothing
expect_rc 0 env NPULAUNCH_NODE_IP=10.0.0.2 "$NPL" apply $ID "${SITE[@]}" --dry-run
expect_grep "$T/out" "# npulaunch apply --dry-run: decode of $ID, node 0 at 10.0.0.2"
expect_grep "$T/out" "tune $T/root/proc/sys/vm/swappiness  60 -> 0"
expect_grep "$T/out" "unset https_proxy"
expect_grep "$T/out" "source $T/root/usr/local/Ascend/ascend-toolkit/set_env.sh"
expect_grep "$T/out" "export ASCEND_MF_STORE_URL=tcp://10.0.0.1:24670"
expect_grep "$T/out" "exec python3 -m sglang.launch_server --model-path /m --disaggregation-mode decode --host 10.0.0.2"
expect_eq "$(state_of "$T/root")" "$before" "host after --dry-run"
[[ -e $T/calls || -e $T/root/run/npulaunch ]] && fail "--dry-run launched or journaled"

# the role from the node's address, a launch like the script's
expect_rc 0 env NPULAUNCH_NODE_IP=10.0.0.1 "$NPL" apply $ID "${SITE[@]}"
expect_grep "$T/err" "apply: prefill node 0 of $ID: 5 settings changed; exec python3"
expect_grep "$T/calls" '"--disaggregation-mode","prefill","--host","10.0.0.1"'
expect_eq "$(state_of "$T/root")" "performance performance 0 0 50000 " "host after apply"
[[ -e $T/root/run/npulaunch/tune-journal.json ]] || fail "apply left no journal"
expect_rc 0 "$NPL" tune --revert
expect_eq "$(state_of "$T/root")" "$before" "host after tune --revert"

# from a rendered bundle, site values from the manifest and the environment
expect_rc 0 "$NPL" render $ID --model-path /m --draft-model-path /d --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2 -o "$T/bundle"
rm -f "$T/calls"
(cd "$T/bundle" && IFNAME=bond1 NPULAUNCH_NODE_IP=10.0.0.2 "$NPL" apply --role decode) >"$T/out" 2>"$T/err" ||
	fail "apply in a bundle: $(cat "$T/err")"
expect_grep "$T/calls" '"GLOO_SOCKET_IFNAME":"bond1"'
expect_grep "$T/calls" '"--host","10.0.0.2"'
expect_rc 0 "$NPL" tune --revert

# refusals: nothing changed, nothing launched
rm -f "$T/calls"
expect_rc 2 env NPULAUNCH_NODE_IP=10.9.9.9 "$NPL" apply $ID "${SITE[@]}"
expect_grep "$T/err" "this node (10.9.9.9) is in no role's list: say which with --role"
expect_rc 2 env NPULAUNCH_NODE_IP=10.9.9.9 "$NPL" apply --role prefill $ID "${SITE[@]}"
expect_grep "$T/err" "this host (10.9.9.9) is not in the prefill-ip list (10.0.0.1)"
expect_rc 2 env NPULAUNCH_NODE_IP=10.0.0.1 "$NPL" apply --role prefill $ID --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2 --ifname eth0
expect_grep "$T/err" "model-path is not set: give --model-path, export MODEL_PATH, or render with --model-path"
expect_grep "$T/err" "apply: nothing was changed"
expect_rc 2 "$NPL" apply --role mixer $ID "${SITE[@]}"
expect_grep "$T/err" "has no role 'mixer' (its roles: prefill, decode, router, bench)"
mv "$T/root/usr/local/Ascend/nnal/atb/set_env.sh" "$T/atb.sh"
expect_rc 1 env NPULAUNCH_NODE_IP=10.0.0.1 "$NPL" apply $ID "${SITE[@]}"
expect_grep "$T/err" "cannot read $T/root/usr/local/Ascend/nnal/atb/set_env.sh: No such file or directory (is the Ascend toolkit installed on this node?)"
# an env file that is not a regular file: bash would wait on a FIFO for ever (the host tuned
# meanwhile), go on past a folder, and read /dev/zero until memory runs out
atb=$T/root/usr/local/Ascend/nnal/atb/set_env.sh
mkfifo "$atb"
expect_rc 1 timeout 20 env NPULAUNCH_NODE_IP=10.0.0.1 "$NPL" apply $ID "${SITE[@]}"
expect_grep "$T/err" "cannot read '$atb': a FIFO, not a regular file"
rm "$atb" && mkdir "$atb"
expect_rc 1 timeout 20 env NPULAUNCH_NODE_IP=10.0.0.1 "$NPL" apply $ID "${SITE[@]}"
expect_grep "$T/err" "cannot read '$atb': a directory, not a regular file"
rmdir "$atb" && ln -s /dev/zero "$atb"
expect_rc 1 timeout 20 env NPULAUNCH_NODE_IP=10.0.0.1 "$NPL" apply $ID "${SITE[@]}"
expect_grep "$T/err" "cannot read '$atb': a character device, not a regular file"
rm "$atb"
mv "$T/atb.sh" "$atb"
expect_eq "$(state_of "$T/root")" "$before" "host after refusals"
[[ -e $T/calls || -e $T/root/run/npulaunch/tune-journal.json ]] && fail "a refused apply launched or journaled"

# a launch that fails after tuning undoes the tuning (a PATH with bash but no python3)
mkdir -p "$T/onlybash"
ln -s "$(command -v bash)" "$T/onlybash/bash"
expect_rc 1 env NPULAUNCH_NODE_IP=10.0.0.1 PATH="$T/onlybash" "$NPL" apply $ID "${SITE[@]}"
expect_grep "$T/err" "cannot run python3: No such file or directory"
expect_grep "$T/err" "apply: the tuning was undone"
expect_eq "$(state_of "$T/root")" "$before" "host after a failed exec"
[[ -e $T/root/run/npulaunch/tune-journal.json ]] && fail "a failed exec left the journal"

# --cpus pins the server, checked against the online CPUs
echo 0-1 >"$T/root/sys/devices/system/cpu/online"
rm -f "$T/calls"
expect_rc 0 env NPULAUNCH_NODE_IP=10.0.0.2 "$NPL" apply $ID "${SITE[@]}" --cpus 0
expect_grep "$T/calls" '"cpus":"0"'
expect_rc 0 "$NPL" tune --revert
expect_rc 1 env NPULAUNCH_NODE_IP=10.0.0.2 "$NPL" apply $ID "${SITE[@]}" --cpus 0-3
expect_grep "$T/err" "--cpus: CPU 2 is not online"
expect_rc 2 env NPULAUNCH_NODE_IP=10.0.0.2 "$NPL" apply $ID "${SITE[@]}" --cpus x
expect_grep "$T/err" "--cpus 'x' is not a CPU list (like 0-63,128-191)"

# a one-node mixed recipe needs no --role and no address
rm -f "$T/calls"
expect_rc 0 "$NPL" apply kimi-k2.6 --tpot 20ms --model-path /m --draft-model-path /d --ifname eth0
expect_grep "$T/calls" '"--host","127.0.0.1","--port","6688"'
expect_rc 0 "$NPL" tune --revert
# dry runs and checks that always answer: the whole plan is printed whatever the host lacks,
# then what a real run would stop on (exit non-zero); --check and --dry-run only read
D=$T/dry
make_root "$D"
rm "$D/proc/sys/kernel/sched_migration_cost_ns" "$D/usr/local/Ascend/nnal/atb/set_env.sh"
dry_before=$(state_of "$D")
expect_rc 2 "$NPL" apply kimi-k2.6 --tpot 20ms --ifname eth0 --dry-run --root "$D"
expect_grep "$T/out" "tune $D/proc/sys/vm/swappiness  60 -> 0"
expect_grep "$T/out" "tune sysctl kernel.sched_migration_cost_ns -> 50000  (not on this host: see below)"
expect_grep "$T/out" "exec python3 -m sglang.launch_server --model-path '<model-path>' --host 127.0.0.1"
expect_grep "$T/out" "--speculative-draft-model-path '<draft-model-path>'"
expect_grep "$T/err" "apply: --dry-run: a real run would stop on:"
expect_grep "$T/err" "model-path is not set: give --model-path"
expect_grep "$T/err" "sysctl kernel.sched_migration_cost_ns: none of $D/proc/sys/kernel/sched_migration_cost_ns"
expect_grep "$T/err" "cannot read $D/usr/local/Ascend/nnal/atb/set_env.sh"
expect_rc 1 "$NPL" apply kimi-k2.6 --tpot 20ms --ifname eth0 --model-path /m --draft-model-path /d --dry-run --root "$D"
expect_grep "$T/out" "exec python3 -m sglang.launch_server --model-path /m --host 127.0.0.1"
expect_eq "$(state_of "$D")" "$dry_before" "the host after dry runs"
expect_rc 1 "$NPL" tune --dry-run --root "$D"
expect_grep "$T/err" "sysctl kernel.sched_migration_cost_ns: none of"
make_root "$D"
dry_before=$(state_of "$D")
expect_rc 0 "$NPL" tune --dry-run --root "$D"
grep -qE "^$D/proc/sys/vm/swappiness +60 -> 0$" "$T/out" || fail "tune --dry-run lacks the swappiness change: $(cat "$T/out")"
expect_grep "$T/err" "tune: --dry-run: --apply would change 5 of 5 settings; nothing was changed"
expect_eq "$(state_of "$D")" "$dry_before" "the host after tune --dry-run"
[[ -e $D/run/npulaunch ]] && fail "tune --dry-run journaled"
expect_rc 2 "$NPL" tune --dry-run --apply --root "$D"
# as an ordinary user on a host that is root's: --check reads and compares; --dry-run and
# apply --dry-run say that --apply could not write, and print everything first
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
	chmod a+rx "$T"
	chmod -R a+rX "$D" "$D.bin"
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp "$@"; }
	expect_rc 1 nobody "$NPL" tune --check --root "$D"
	grep -qE "^$D/proc/sys/vm/swappiness +60 -> 0$" "$T/out" || fail "tune --check as nobody lacks the swappiness difference: $(cat "$T/out" "$T/err")"
	expect_nogrep "$T/err" "Permission denied"
	expect_grep "$T/err" "5 of 5 settings differ"
	expect_rc 1 nobody "$NPL" tune --dry-run --root "$D"
	expect_grep "$T/err" "cannot write vm.swappiness: Permission denied (run as root)"
	expect_rc 1 nobody "$NPL" apply kimi-k2.6 --tpot 20ms --ifname eth0 --model-path /m --draft-model-path /d --dry-run --root "$D"
	expect_grep "$T/out" "tune $D/proc/sys/vm/swappiness  60 -> 0"
	expect_grep "$T/out" "exec python3 -m sglang.launch_server --model-path /m"
	expect_grep "$T/err" "cannot write vm.swappiness: Permission denied (run as root)"
	echo 0 >"$D/proc/sys/vm/swappiness"
	echo 0 >"$D/proc/sys/kernel/numa_balancing"
	echo 50000 >"$D/proc/sys/kernel/sched_migration_cost_ns"
	for c in 0 1; do echo performance >"$D/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"; done
	expect_rc 0 nobody "$NPL" tune --check --root "$D"
	expect_grep "$T/err" "the host matches (5 settings)"
	chmod go-rx "$T"
fi

# instances that share a node: apply starts each with its own devices and port, stays their
# parent, and when one ends stops the others and exits with its status (as prefill.sh does)
SH=(--recipes "$NPL_DATA/recipes/good/shapes")
SHID=shape-moe-w8a8-4p1d-a2-24p-shared-50ms
SHSITE=(--model-path /m --ifname eth0 --prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 --decode-ip 10.0.0.3)
mkdir -p "$T/fake"
cat >"$T/fake/python3" <<'PY'
#!/bin/bash
# a server that stays up, except the one on port 8001, which ends with status 3
echo "$$ $ASCEND_RT_VISIBLE_DEVICES $*" >>"$FAKE_LOG"
# (once both have started, however slow the machine)
if [[ " $* " == *" --port 8001 "* ]]; then
	for _ in $(seq 200); do (($(wc -l <"$FAKE_LOG") >= 2)) && break; sleep 0.05; done
	exit 3
fi
exec sleep 300
PY
chmod +x "$T/fake/python3"
expect_rc 0 env NPULAUNCH_NODE_IP=10.0.0.2 "$NPL" "${SH[@]}" apply --role prefill $SHID "${SHSITE[@]}" --dry-run
expect_grep "$T/out" "# instance 3, slot 1 of this node: started beside the others"
expect_grep "$T/out" "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7"
expect_grep "$T/out" "start python3 -m sglang.launch_server --model-path /m --disaggregation-mode prefill --host 10.0.0.2 --port 8001 --disaggregation-bootstrap-port 9001"
expect_rc 3 timeout 60 env NPULAUNCH_NODE_IP=10.0.0.2 PATH="$T/fake:$PATH" FAKE_LOG="$T/fake.log" \
	"$NPL" "${SH[@]}" apply --role prefill $SHID "${SHSITE[@]}"
expect_grep "$T/err" "instance 3 ended (exit 3): stopping the others"
expect_eq "$(wc -l <"$T/fake.log")" 2 "instances started on the shared node"
expect_grep "$T/fake.log" " 0,1,2,3 -m sglang.launch_server"
expect_grep "$T/fake.log" " 4,5,6,7 -m sglang.launch_server"
while read -r pid _; do
	kill -0 "$pid" 2>/dev/null && fail "instance $pid still runs after apply ended"
done <"$T/fake.log"
# a signal to apply reaches every instance
rm -f "$T/fake.log"
sed -i 's/exit 3/exec sleep 300/' "$T/fake/python3"
env NPULAUNCH_NODE_IP=10.0.0.2 PATH="$T/fake:$PATH" FAKE_LOG="$T/fake.log" \
	"$NPL" "${SH[@]}" apply --role prefill $SHID "${SHSITE[@]}" >"$T/out" 2>"$T/err" &
apid=$!
for _ in $(seq 100); do [[ -s $T/fake.log && $(wc -l <"$T/fake.log") == 2 ]] && break; sleep 0.1; done
kill -TERM "$apid"
wait "$apid"
expect_eq "$?" 143 "apply's status after SIGTERM"
while read -r pid _; do
	kill -0 "$pid" 2>/dev/null && fail "instance $pid still runs after SIGTERM to apply"
done <"$T/fake.log"
expect_rc 0 "$NPL" tune --revert
# an instance that ignores SIGTERM is killed once NPULAUNCH_STOP_TIMEOUT (a fraction) has passed
rm -f "$T/fake.log"
cat >"$T/fake/python3" <<'PY'
#!/bin/bash
echo "$$ $ASCEND_RT_VISIBLE_DEVICES $*" >>"$FAKE_LOG"
if [[ " $* " == *" --port 8001 "* ]]; then
	for _ in $(seq 200); do (($(wc -l <"$FAKE_LOG") >= 2)) && break; sleep 0.05; done
	exit 4
fi
trap '' TERM
while :; do sleep 0.1; done
PY
expect_rc 4 timeout 60 env NPULAUNCH_NODE_IP=10.0.0.2 PATH="$T/fake:$PATH" FAKE_LOG="$T/fake.log" NPULAUNCH_STOP_TIMEOUT=0.5 \
	"$NPL" "${SH[@]}" apply --role prefill $SHID "${SHSITE[@]}"
while read -r pid _; do
	kill -0 "$pid" 2>/dev/null && fail "instance $pid, which ignores SIGTERM, still runs after apply ended"
done <"$T/fake.log"
expect_rc 0 "$NPL" tune --revert
expect_rc 0 "$NPL" apply --help
finish
