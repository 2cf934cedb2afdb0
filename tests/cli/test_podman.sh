#!/usr/bin/env bash
# render --target docker under Debian's real podman (issue 27): the run scripts start their role in
# a real container, from an image this test builds from local files (no registry): bash, busybox
# and, as python3, a recorder that writes what it was started with and what it sees (argv,
# environment, devices, mounts, current folder) and, when asked, holds like a server until a
# signal. Compared with the plan (the manifest) and with the bare script on the host: the argv,
# the environment, the devices, the mounts and their modes; then --tune: the host tuned while the
# container runs and put back when it ends, by SIGTERM or by the server failing; the benchmark
# writes its results into the folder it is run from.
# The host is an Ascend host as a container runtime sees it (tests/tools/podman_host.sh: stand-in
# device files, the driver's folders, overlays writing only into this test's folder, podman's
# storage and state there too), in a mount namespace of its own; the tuning goes to a simulated
# root (NPULAUNCH_ROOT). Needs root and podman (tests/install-deps.sh installs it); skips, saying
# why, only where the kernel or the sandbox refuses to run any container at all.
# shellcheck shell=bash source=lib.sh
source "$(dirname "$0")/lib.sh"
TOOLS=$NPL_SRC/tests/tools
if [[ $(id -u) != 0 ]]; then
	echo "skip: podman's containers need root here"
	finish
fi
if ! command -v podman >/dev/null; then
	[[ -z ${CI:-} ]] || fail "podman is not installed: tests/install-deps.sh installs it"
	echo "skip: podman is not installed (tests/install-deps.sh installs it)"
	finish
fi
if [[ -z ${NPL_PODMAN_HOST:-} ]]; then
	# this test again, inside the Ascend host's namespace
	NPL_PODMAN_HOST=1 "$TOOLS/podman_host.sh" "$T/host" bash "$0"
	exit
fi

# whatever a failure leaves running is stopped and removed (podman's state is this test's own)
trap 'podman rm -af -t 0 >/dev/null 2>&1; cleanup' EXIT
IMG=localhost/npl-recorder:test
cd "$T" || exit 1
MIX=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
REC=/var/queue_schedule/npl-record
mkdir -p "$T/models/m" "$T/models/d" "$T/bin"
echo '{}' >"$T/models/m/config.json"
echo '{}' >"$T/models/d/config.json"
SITE=(--model-path "$T/models/m" --draft-model-path "$T/models/d" --ifname eth0 --container-runtime podman)

# ---- the image: bash, busybox, the recorder as python3, the toolkit's env files ----------------
cat >"$T/recorder" <<'EOF'
#!/bin/sh
# python3 of the test's image: records its start in the next numbered folder of npl-record in the
# container's one writable host folder: a server's /var/queue_schedule, the benchmark's current
# folder (the results folder); holds while npl-hold is there, and exits with the status in
# npl-exit when that is there
d=/var/queue_schedule/npl-record
[ -d /var/queue_schedule ] || d=$PWD/npl-record
mkdir -p "$d"
r=$d/$(ls "$d" | wc -l)
mkdir "$r.tmp"
printf '%s\0' "$@" >"$r.tmp/argv"
cat /proc/self/environ >"$r.tmp/env"
cat /proc/self/mountinfo >"$r.tmp/mountinfo"
for f in /dev/*; do [ -c "$f" ] && echo "$f"; done >"$r.tmp/devices"
pwd >"$r.tmp/pwd"
grep Cpus_allowed_list /proc/self/status >"$r.tmp/cpus"
echo "written by the recorder" >npl-recorder-wrote 2>/dev/null
mv "$r.tmp" "$r"
if [ -e /var/queue_schedule/npl-hold ]; then
	trap 'echo TERM >"$r/signal"; exit 143' TERM
	trap 'echo INT >"$r/signal"; exit 130' INT
	sleep 600 &
	wait $!
fi
[ -e /var/queue_schedule/npl-exit ] && exit "$(cat /var/queue_schedule/npl-exit)"
exit 0
EOF
R=$T/rootfs
mkdir -p "$R/bin" "$R/usr/bin" "$R/tmp" "$R/root" "$R/proc" "$R/sys" "$R/dev" "$R/etc"
cp /bin/bash "$R/bin/bash"
for l in $(ldd /bin/bash | grep -oE '/[^ ]*lib[^ ]+'); do
	mkdir -p "$R$(dirname "$l")"
	cp -L "$l" "$R$l"
done
cp "$(command -v busybox)" "$R/bin/busybox" || fail "busybox (Debian's busybox-static) is not installed"
for a in $("$R/bin/busybox" --list); do [[ -e $R/bin/$a ]] || ln -s busybox "$R/bin/$a"; done
install -m 755 "$T/recorder" "$R/usr/bin/python3"
install -m 755 "$T/recorder" "$T/bin/python3"
ln -s python3 "$R/usr/bin/python"
ln -s python3 "$T/bin/python"
# the toolkit's env files where the image has them, and where the tuned case's and the affinity
# case's root prefixes put them: their host changes go to simulated roots ($T/r, $T/x:
# NPULAUNCH_ROOT), which the container inherits (-e NPULAUNCH_ROOT)
for p in "" "$T/r" "$T/x"; do
	for f in ascend-toolkit/set_env.sh nnal/atb/set_env.sh; do
		mkdir -p "$(dirname "$R$p/usr/local/Ascend/$f")"
		echo ": sourced" >"$R$p/usr/local/Ascend/$f"
	done
done
tar -C "$R" -cf "$T/rootfs.tar" .
podman import -q --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' "$T/rootfs.tar" "$IMG" >/dev/null 2>"$T/err" ||
	fail "podman import: $(cat "$T/err")"
if ! podman run --rm --net=host "$IMG" true 2>"$T/err"; then
	echo "skip: podman runs no container on this machine: $(cat "$T/err")"
	finish
fi

# run_script ROOT BUNDLE SCRIPT [ARG...]: SCRIPT as root on this host, its host changes under ROOT
# ('' for none: only with --no-tune or a bundle rendered without --tune, so that nothing but
# this test's overlays can change)
run_script() {
	local root=$1 dir=$2 script=$3
	shift 3
	exec env -i PATH="$T/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root NPULAUNCH_PREFLIGHT=0 \
		${root:+NPULAUNCH_ROOT="$root"} CONTAINERS_CONF="$CONTAINERS_CONF" \
		CONTAINERS_STORAGE_CONF="$CONTAINERS_STORAGE_CONF" bash "$dir/$script" "$@"
}
make_root "$T/r"
# run_in CMD...: run CMD in a subshell (run_script ends its shell), as run does
run_in() {
	("$@") >"$T/out" 2>"$T/err"
	rc=$?
}
# last_record: the folder of the recorder's last start
last_record() { find "$REC" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' | sort -t/ -k5 -n | tail -n 1; }
# env_of RECORD: its environment, one NAME=VALUE a line, sorted, without what a container or a
# shell sets of its own (and the podman configuration this test gives its scripts)
env_of() {
	tr '\0' '\n' <"$1/env" | grep -vE '^(PATH|HOME|HOSTNAME|container|PWD|SHLVL|_|TERM|CONTAINERS_CONF|CONTAINERS_STORAGE_CONF)=' | sort
}

# ---- one node, no tuning: the container starts the plan's server -------------------------------
expect_rc 0 "$NPL" render $MIX --target docker "${SITE[@]}" --image "$IMG" --privileged=false -o "$T/mix"
[[ ! -e /var/queue_schedule ]] || fail "the host view has /var/queue_schedule before the run"
run_in run_script "" "$T/mix" docker-pd-mixed.sh
[[ $rc == 0 ]] || fail "docker-pd-mixed.sh under podman: exit $rc: $(tail -c 3000 "$T/err")"
[[ -d /var/queue_schedule ]] || fail "/var/queue_schedule (DirectoryOrCreate) was not made on the host"
c=$(last_record)
[[ -n $c ]] || { fail "the container's server did not start: $(tail -c 3000 "$T/err")"; finish; }
# the argv: the plan's, the site values in place
jq -r '.roles[0].nodes[0] | (.launch[1:] + [.flags[] | .flag, .values[]])[]' "$T/mix/manifest.json" |
	sed "s|\${model-path}|$T/models/m|; s|\${draft-model-path}|$T/models/d|; s|\${ifname}|eth0|" >"$T/plan-argv"
tr '\0' '\n' <"$c/argv" >"$T/got-argv"
expect_eq "$(cat "$T/got-argv")" "$(cat "$T/plan-argv")" "the container's argv and the plan's"
expect_eq "$(head -n 2 "$T/got-argv" | tr '\n' ' ')" "-m sglang.launch_server " "the server launched"
# the environment: the bare script's, on this host
run_in run_script "" "$T/mix" pd-mixed.sh --no-tune
b=$(last_record)
[[ $b != "$c" ]] || fail "the bare pd-mixed.sh did not start its server: $(tail -c 2000 "$T/err")"
expect_eq "$(env_of "$c")" "$(env_of "$b")" "the container's environment and the bare script's"
cmp -s "$c/argv" "$b/argv" || fail "the container's argv differs from the bare script's"
# shellcheck disable=SC2016 # the plan's ${ifname}, literally
for v in $(jq -r '.roles[0].nodes[0].env[] | .name + "=" + .value' "$T/mix/manifest.json" | sed 's/\${ifname}/eth0/'); do
	grep -qxF -- "$v" <(env_of "$c") || fail "the plan's $v is not in the container's environment"
done
# the devices: every one of the plan's, a character device in the container
for dev in $(jq -r '.container.devices.value[]' "$T/mix/manifest.json"); do
	grep -qxF "$dev" "$c/devices" || fail "the plan's device $dev is not in the container: $(tr '\n' ' ' <"$c/devices")"
done
# the mounts: the plan's host folders and files, the model's and the bundle's, at their paths,
# read-only but the one the container writes
mount_opts() { awk -v p="$2" '$5 == p { split($6, o, ","); print o[1] }' "$1/mountinfo"; }
while read -r path kind; do
	want=ro
	[[ $kind == DirectoryOrCreate ]] && want=rw
	expect_eq "$(mount_opts "$c" "$path")" "$want" "the container's mount of $path ($kind)"
done < <(jq -r '.container.mounts.value[] | .path + " " + .kind' "$T/mix/manifest.json")
for p in "$T/models/m" "$T/models/d" "$T/mix"; do
	expect_eq "$(mount_opts "$c" "$p")" ro "the container's mount of $p"
done
expect_eq "$(awk '$5 == "/dev/shm"' "$c/mountinfo" | wc -l)" 1 "the container's /dev/shm: the host's (--ipc=host)"
expect_eq "$(podman ps -aq | wc -l)" 0 "containers left after the server ended"

# ---- the benchmark: results in the folder it is run from --------------------------------------
mkdir -p "$T/res"
(cd "$T/res" && run_script "" "$T/mix" docker-bench.sh) >"$T/out" 2>"$T/err"
rc=$?
[[ $rc == 0 ]] || fail "docker-bench.sh under podman: exit $rc: $(tail -c 3000 "$T/err")"
c=$T/res/npl-record/0
expect_eq "$(sed -n 2p <(tr '\0' '\n' <"$c/argv"))" "sglang.bench_serving" "the benchmark launched"
expect_eq "$(cat "$c/pwd")" "$T/res" "the benchmark's current folder"
expect_eq "$(cat "$T/res/npl-recorder-wrote" 2>/dev/null)" "written by the recorder" "what the benchmark wrote, in the results folder"
expect_eq "$(mount_opts "$c" "$T/res")" rw "the results folder's mount"

# ---- --tune: the host tuned while the container runs, put back when it ends -------------------
expect_rc 0 "$NPL" render $MIX --target docker "${SITE[@]}" --image "$IMG" --tune -o "$T/tuned"
mkdir -p /var/queue_schedule
# held_start: docker-pd-mixed.sh in the background, its server held; $! is the script
held_start() {
	touch /var/queue_schedule/npl-hold
	n0=$(find "$REC" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' | wc -l)
	(run_script "$T/r" "$T/tuned" docker-pd-mixed.sh) >"$T/held.out" 2>"$T/held.err" &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		(($(find "$REC" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' | wc -l) > n0)) && break
		sleep 0.1
	done
	c=$(last_record)
	(($(find "$REC" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' | wc -l) > n0)) ||
		fail "the held container did not start: $(tail -c 3000 "$T/held.err")"
}
held_start
expect_eq "$(state_of "$T/r")" "performance performance 0 0 50000 " "the host tuned while the container runs"
expect_eq "$(podman ps -q | wc -l)" 1 "the running container"
kill -TERM "$pid"
wait "$pid"
rc=$?
expect_eq "$rc" 143 "docker-pd-mixed.sh after SIGTERM: the server's status"
expect_eq "$(cat "$c/signal" 2>/dev/null)" TERM "the signal the server got"
expect_eq "$(state_of "$T/r")" "schedutil schedutil 60 1 500000 " "the host put back after SIGTERM"
[[ ! -e $T/r/run/npulaunch/tune-journal.json ]] || fail "the tuning journal is left after SIGTERM"
expect_eq "$(podman ps -aq | wc -l)" 0 "containers left after SIGTERM"
# SIGINT (Ctrl-C) likewise
held_start
kill -INT "$pid"
wait "$pid"
rc=$?
expect_eq "$rc" 130 "docker-pd-mixed.sh after SIGINT: the server's status"
expect_eq "$(state_of "$T/r")" "schedutil schedutil 60 1 500000 " "the host put back after SIGINT"
expect_eq "$(podman ps -aq | wc -l)" 0 "containers left after SIGINT"
# the server fails (a bad flag, a missing model): its status, and the host put back
rm -f /var/queue_schedule/npl-hold
echo 3 >/var/queue_schedule/npl-exit
run_in run_script "$T/r" "$T/tuned" docker-pd-mixed.sh
expect_eq "$rc" 3 "docker-pd-mixed.sh whose server failed"
expect_eq "$(state_of "$T/r")" "schedutil schedutil 60 1 500000 " "the host put back after the server failed"
rm -f /var/queue_schedule/npl-exit
# a journal that can no longer be read: said, with the command, and exit 1
held_start
echo '{"not": "a journal"}' >"$T/r/run/npulaunch/tune-journal.json"
kill -TERM "$pid"
wait "$pid"
rc=$?
expect_eq "$rc" 1 "docker-pd-mixed.sh whose revert failed"
expect_grep "$T/held.err" "docker-pd-mixed.sh: the host's tuning could not be put back: run bash $T/tuned/pd-mixed.sh --revert on this node"
expect_eq "$(podman ps -aq | wc -l)" 0 "containers left after a failed revert"

# ---- affinity: the container's cpuset, computed on the host --------------------------------------
# An A2 node whose dies each sit alone on a NUMA node whose one CPU is CPU 1 (every machine has
# CPUs 0 and 1; tests/cli/test_affinity.sh builds the same): docker-ROLE.sh asks the role script
# for the dies' CPUs on the host and podman confines the container to them: the server in it
# runs on CPU 1 alone
SHAPES=$NPL_DATA/recipes/good/shapes
PART=shape-moe-w8a8-a2-4p-first-card4-50ms
X=$T/x
make_root "$X"
mkdir -p "$X/proc/self" "$X/usr/local/sbin" "$X/sys/devices/system/cpu" "$T/own"
printf 'Name:\tbash\nCpus_allowed_list:\t1\n' >"$X/proc/self/status"
echo 0-1 >"$X/sys/devices/system/cpu/online"
k=0
for b in c1 c2 81 82 01 02 41 42; do
	mkdir -p "$X/sys/bus/pci/devices/0000:$b:00.0" "$X/sys/devices/system/node/node$k"
	echo $k >"$X/sys/bus/pci/devices/0000:$b:00.0/numa_node"
	echo 1 >"$X/sys/bus/pci/devices/0000:$b:00.0/local_cpulist"
	echo 1 >"$X/sys/devices/system/node/node$k/cpulist"
	k=$((k + 1))
done
printf '#!/bin/sh\n[ "$1" = info ] || exit 2\n[ "$2" = -t ] && exit 2\ncat "%s"\n' "$NPL_DATA/topology/a2-910b3-npu-smi.txt" \
	>"$X/usr/local/sbin/npu-smi"
chmod +x "$X/usr/local/sbin/npu-smi"
cp "$SHAPES"/*.yaml "$T/own/"
printf 'tuning:\n  affinity:\n    min_cpus_per_die: 1\n' >>"$T/own/a2-part.yaml"
expect_rc 0 "$NPL" --recipes "$T/own" render $PART --model-path "$T/models/m" --ifname eth0 \
	--target docker --container-runtime podman --image "$IMG" --privileged=false -o "$T/aff"
rm -f /var/queue_schedule/npl-hold /var/queue_schedule/npl-exit
n0=$(find "$REC" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' | wc -l)
run_in run_script "$X" "$T/aff" docker-pd-mixed.sh
[[ $rc == 0 ]] || fail "docker-pd-mixed.sh with the affinity: exit $rc: $(tail -c 3000 "$T/err")"
c=$(last_record)
(($(find "$REC" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' | wc -l) > n0)) || fail "the affinity case's server did not start"
expect_eq "$(tr -d ' \t' <"$c/cpus")" "Cpus_allowed_list:1" "the container's server's CPUs (its dies', computed on the host)"
finish
