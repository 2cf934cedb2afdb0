#!/usr/bin/env bash
# render --target docker: the role scripts and a docker-ROLE.sh per role that runs its script in a
# container (docker or podman) with the hardware's devices and files, the host's network and
# /dev/shm; tuning on the host first when asked, else a note. A stand-in docker
# (tests/tools/fake_docker.sh) records its arguments and runs the command with the container's
# environment: each node launches the plan's argv and environment, as the bare script does. As
# root, every node of a deployment gets a network namespace with its address
# (tests/tools/k8s_sim.py docker), where the script inside finds its node by hostname -I.
# shellcheck shell=bash source=lib.sh
source "$(dirname "$0")/lib.sh"
TOOLS=$NPL_SRC/tests/tools
GOLDEN=$NPL_DATA/k8s/golden/docker
SHAPES=$NPL_DATA/recipes/good/shapes
SITE=(--model-path /models/m --draft-model-path /models/d --ifname eth0)
export NPL_FAKE_DOCKER=$TOOLS/fake_docker.sh

# ---- every shipped recipe renders; the scripts pass shellcheck --------------------------------
expect_rc 0 "$NPL" render --all --target docker "${SITE[@]}" -o "$T/all"
expect_grep "$T/err" "note: the hosts are not tuned (render with --tune for docker-ROLE.sh to run ROLE.sh --tune-only on the host first)"
n=$(find "$T/all" -name 'docker-*.sh' | wc -l)
(($(find "$T/all" -name manifest.json | wc -l) == 61 && n >= 2 * 61)) || fail "docker bundles: $n run scripts"
# every file of every bundle (each run script too) is recorded in its manifest: a re-render
# updates them, and an edited one is told apart (in every target's folder alike)
for tg in docker slurm k8s; do
	[[ $tg == docker ]] || "$NPL" render --all --target "$tg" "${SITE[@]}" -o "$T/all-$tg" -q 2>/dev/null || fail "render --all --target $tg"
	d=$T/all
	[[ $tg == docker ]] || d=$T/all-$tg
	for b in "$d"/*/; do
		want=$(cd "$b" && find . -maxdepth 1 -type f -printf '%P\n' | sort | tr '\n' ' ')
		got=$(jq -r '.files | keys | .[]' "$b/manifest.json" | sort | tr '\n' ' ')
		[[ $want == "$got" ]] || { fail "--target $tg: $b: manifest records [$got], the folder holds [$want]"; break; }
	done
done
if command -v shellcheck >/dev/null; then
	find "$T/all/deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms" "$T/all/qwen3-8b-w8a8-1p-in3k5-out1k5-37ms" \
		-name 'docker-*.sh' -print0 | xargs -0 shellcheck -s bash >"$T/sc" 2>&1 || fail "shellcheck: $(head -30 "$T/sc")"
fi
# (a docker run option -e NAME=VALUE is the container's variable, not one of the script's)
for v in $(grep -oP '(?<!-e )\b[A-Za-z_][A-Za-z0-9_]*=' "$NPL_SRC/templates/docker/run.sh.tmpl" | tr -d = | sort -u); do
	[[ $v == npl_* ]] || fail "run.sh.tmpl assigns '$v': call it npl_$v"
done

# ---- what it refuses ----------------------------------------------------------------------------
ID=deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms
expect_rc 2 "$NPL" render $ID --target docker --ifname eth0 -o "$T/x"
expect_grep "$T/err" "error: render --target docker of '$ID' needs --model-path"
# a value the target has no use for: a note, as for any site value; refused under --strict
expect_rc 2 "$NPL" render $ID --target docker --model-path /models/m --ifname eth0 --model-volume pvc:models --strict -o "$T/x"
expect_grep "$T/err" "error: --model-volume: render --target docker has no use for it (a Kubernetes value: the containers run on the host"
expect_rc 2 "$NPL" render $ID --target docker --model-path /models/m --ifname eth0 --namespace llm --gang --strict
expect_grep "$T/err" "error: --namespace: render --target docker has no use for it"
expect_grep "$T/err" "error: --gang: render --target docker has no use for it"
expect_rc 0 "$NPL" render $ID --target docker "${SITE[@]}" --namespace llm
expect_grep "$T/err" "note: --namespace: render --target docker has no use for it (a Kubernetes value: the containers run on the host, with its devices and the model where it is): ignored (--strict refuses it)"
expect_rc 2 "$NPL" render $ID --target docker "${SITE[@]}" --container-runtime containerd
expect_grep "$T/err" "error: --container-runtime 'containerd': docker, podman or auto"
# a path docker's -v would split (issue 25): refused, not rendered into a spec docker refuses
expect_rc 2 "$NPL" render $ID --target docker --model-path /data/a:b --ifname eth0 -o "$T/x"
expect_grep "$T/err" "error: render --target docker: --model-path '/data/a:b' holds ':', which a container's mount cannot carry"
expect_rc 2 "$NPL" render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --target docker --model-path /m --draft-model-path /d:1 --ifname eth0 -o "$T/x"
expect_grep "$T/err" "error: render --target docker: --draft-model-path '/d:1' holds ':'"
[[ ! -e $T/x ]] || fail "a refused render wrote $T/x"
# the docker target's hosts know their addresses: they may be given
expect_rc 0 "$NPL" render $ID --target docker "${SITE[@]}" --prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 \
	--decode-ip 10.0.0.3 --decode-ip 10.0.0.4 -o "$T/addr"
expect_grep "$T/addr/prefill.sh" "PREFILL_IPS=(10.0.0.1 10.0.0.2)"

# ---- one node, without root: docker-pd-mixed.sh runs pd-mixed.sh in the stand-in container ----
MIX=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
expect_rc 0 "$NPL" render $MIX --target docker "${SITE[@]}" --image registry.example.com/sglang:a3 \
	--shm-size 16Gi --privileged=false -o "$T/mix"
# the servers share the host's IPC namespace: a size of /dev/shm has no use there (podman refuses
# the two together; the podman run below proves the scripts do not pass it)
expect_grep "$T/err" "shm-size"
expect_grep "$T/err" "the servers share the host's IPC namespace (--ipc=host) and so its /dev/shm"
make_root "$T/r1"
ln -s "$NPL_FAKE_DOCKER" "$T/r1.bin/docker"
# the system's commands but no container runtime, whatever this machine has installed: each case
# puts the runtime it means (the fake) in ROOT.bin
mkdir -p "$T/sysbin"
for f in /bin/* /usr/bin/*; do
	case ${f##*/} in docker | podman | nerdctl) continue ;; esac
	[[ -x $f && ! -e $T/sysbin/${f##*/} ]] && ln -s "$f" "$T/sysbin/${f##*/}"
done
runc_bg() {  # ROOT BUNDLE SCRIPT: runc in the background, its server held 60 s; $! is SCRIPT's process
	(exec env -i PATH="$1.bin:$T/sysbin" HOME=/root NPULAUNCH_PREFLIGHT=0 NPULAUNCH_ROOT="$1" NPL_STUB_LOG="$1.stub" \
		NPL_DOCKER_LOG="$1.docker" NPL_STUB_HOLD_MS=60000 bash "$2/$3") >"$1.out" 2>"$1.err" &
}
runc() {  # ROOT BUNDLE SCRIPT: run SCRIPT as on the host ROOT, its python3 the stub
	env -i PATH="$1.bin:$T/sysbin" HOME=/root NPULAUNCH_PREFLIGHT=0 NPULAUNCH_ROOT="$1" NPL_STUB_LOG="$1.stub" \
		NPL_DOCKER_LOG="$1.docker" ${RESULTS:+NPULAUNCH_RESULTS="$RESULTS"} bash "$2/$3"
}
run runc "$T/r1" "$T/mix" docker-pd-mixed.sh
[[ $rc == 0 ]] || fail "docker-pd-mixed.sh: exit $rc: $(cat "$T/err")"
expect_grep "$T/err" "docker-pd-mixed.sh: note: the hosts are not tuned"
expect_eq "$(state_of "$T/r1")" "schedutil schedutil 60 1 500000 " "the host untouched without --tune"
jq -c '.argv' "$T/r1.docker" >"$T/argv"
expect_grep "$T/argv" '"run","--rm","--name","kimi-k2-6-pd-mixed","--net=host","--ipc=host","--device","/dev/davinci0"'
expect_nogrep "$T/argv" '--shm-size'
expect_grep "$T/argv" '"-v","/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro"'
expect_grep "$T/argv" '"-v","/var/queue_schedule:/var/queue_schedule",'
expect_grep "$T/argv" '"-v","/models/m:/models/m:ro","-v","/models/d:/models/d:ro"'
expect_grep "$T/argv" "\"-v\",\"$T/mix:$T/mix:ro\""
expect_grep "$T/argv" '"-e","MODEL_PATH","-e","DRAFT_MODEL_PATH","-e","IFNAME","-e","NPULAUNCH_NODE_IP"'
expect_grep "$T/argv" "\"registry.example.com/sglang:a3\",\"bash\",\"$T/mix/pd-mixed.sh\",\"--no-tune\"]"
expect_nogrep "$T/argv" "--privileged"
# the container launched the plan's argv and environment, as the bare script does
env -i PATH="$T/r1.bin:$T/sysbin" HOME=/root NPULAUNCH_PREFLIGHT=0 NPULAUNCH_ROOT="$T/r1" NPL_STUB_LOG="$T/r1.ref" \
	bash "$T/mix/pd-mixed.sh" --no-tune >/dev/null 2>&1 || fail "bare pd-mixed.sh"
jq -c '.argv' "$T/r1.stub" >"$T/got"
jq -c '.argv' "$T/r1.ref" >"$T/want"
cmp -s "$T/got" "$T/want" || fail "the container's argv differs from the bare script's: $(cat "$T/got" "$T/want")"
expect_eq "$(jq -cS '.env | del(.NPL_STUB_LOG, .PWD, .SHLVL, ._)' "$T/r1.stub")" \
	"$(jq -cS '.env | del(.NPL_STUB_LOG, .PWD, .SHLVL, ._)' "$T/r1.ref")" "the container's environment"
jq -r '.roles[0].nodes[0] | [.launch[], (.flags[] | .flag, .values[])] | @json' "$T/mix/manifest.json" |
	sed 's/"\${model-path}"/"\/models\/m"/; s/"\${draft-model-path}"/"\/models\/d"/; s/^\["python3"/["python3"/' >"$T/plan"
expect_eq "$(cat "$T/got")" "$(cat "$T/plan")" "the container's argv and the plan's"

# the benchmark: the bundle is read-only in its container, so its results go to the folder it is
# run from, mounted writable (bench_serving writes in its current folder)
mkdir -p "$T/res"
cd "$T/res" || exit 1
run runc "$T/r1" "$T/mix" docker-bench.sh
cd - >/dev/null || exit 1
[[ $rc == 0 ]] || fail "docker-bench.sh: exit $rc: $(cat "$T/err")"
tail -n 1 "$T/r1.docker" | jq -c '.argv' >"$T/argv"
expect_grep "$T/argv" "\"-v\",\"$T/mix:$T/mix:ro\",\"-v\",\"$T/res:$T/res\",\"-e\",\"NPULAUNCH_RESULTS=$T/res\""
expect_eq "$(tail -n 1 "$T/r1.stub" | jq -r '.env.PWD')" "$T/res" "the benchmark's current folder: the results folder"
expect_eq "$(tail -n 1 "$T/r1.stub" | jq -r '.argv[2]')" "sglang.bench_serving" "the benchmark launched"
# a results folder that is not there stops it before any container
n=$(wc -l <"$T/r1.docker")
RESULTS=$T/nowhere run runc "$T/r1" "$T/mix" docker-bench.sh
expect_eq "$rc" 2 "docker-bench.sh with a missing results folder"
expect_grep "$T/err" "docker-bench.sh: the results folder $T/nowhere does not exist"
expect_eq "$(wc -l <"$T/r1.docker")" "$n" "no container for a missing results folder"

# --tune: the script's own tuning on the host first, journaled, and put back when the container
# ends; podman when docker is not there
expect_rc 0 "$NPL" render $MIX --target docker "${SITE[@]}" --tune --container-runtime auto -o "$T/tuned"
# runtime ROOT: the stand-in as podman, noting the host's state when the container starts
runtime() {
	printf '#!/bin/sh\ncat "$NPULAUNCH_ROOT"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor "$NPULAUNCH_ROOT"/proc/sys/vm/swappiness | tr "\\n" " " >"%s"\nexec "%s" "$@"\n' \
		"$1.during" "$NPL_FAKE_DOCKER" >"$1.bin/podman"
	chmod +x "$1.bin/podman"
}
make_root "$T/r2"
runtime "$T/r2"
run runc "$T/r2" "$T/tuned" docker-pd-mixed.sh
[[ $rc == 0 ]] || fail "docker-pd-mixed.sh --tune: exit $rc: $(cat "$T/err")"
expect_nogrep "$T/err" "not tuned"
expect_eq "$(cat "$T/r2.during")" "performance performance 0 " "the host tuned while the container ran"
expect_eq "$(state_of "$T/r2")" "schedutil schedutil 60 1 500000 " "the host put back when the container ended"
[[ ! -e $T/r2/run/npulaunch/tune-journal.json ]] || fail "the tuning journal is left on the host"
# SIGTERM to the script: passed to the container, then the host put back; the container's status
make_root "$T/r5"
runtime "$T/r5"
runc_bg "$T/r5" "$T/tuned" docker-pd-mixed.sh
pid=$!
for ((i = 0; i < 200; i++)); do [[ -s $T/r5.stub ]] && break; sleep 0.05; done
[[ -s $T/r5.stub ]] || fail "the held container did not start: $(cat "$T/r5.err")"
kill -TERM "$pid"
wait "$pid"
rc=$?
expect_eq "$rc" 143 "docker-pd-mixed.sh after SIGTERM: the container's status"
expect_eq "$(state_of "$T/r5")" "schedutil schedutil 60 1 500000 " "the host put back after SIGTERM"
# a journal that can no longer be read: said, with the command, and exit 1
make_root "$T/r6"
runtime "$T/r6"
runc_bg "$T/r6" "$T/tuned" docker-pd-mixed.sh
pid=$!
for ((i = 0; i < 200; i++)); do [[ -s $T/r6.stub ]] && break; sleep 0.05; done
echo '{"not": "a journal"}' >"$T/r6/run/npulaunch/tune-journal.json"
kill -TERM "$pid"
wait "$pid"
rc=$?
expect_eq "$rc" 1 "docker-pd-mixed.sh whose revert failed"
expect_grep "$T/r6.err" "docker-pd-mixed.sh: the host's tuning could not be put back: run bash $T/tuned/pd-mixed.sh --revert on this node"
[[ -s $T/r2.docker ]] || fail "podman (auto, no docker on PATH) was not run"
# auto: a docker CLI whose daemon does not answer is passed over for podman; with neither
# usable, it stops before anything changes, saying why
make_root "$T/r4"
# a docker CLI with no daemon: docker info fails with docker's own message; nothing else may run
printf '#!/bin/sh\necho "docker $*" >>"%s"\n[ "$1" = info ] || exit 125\necho "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2\nexit 1\n' \
	"$T/r4.nodaemon" >"$T/r4.bin/docker"
chmod +x "$T/r4.bin/docker"
run runc "$T/r4" "$T/tuned" docker-pd-mixed.sh
expect_eq "$rc" 2 "docker-pd-mixed.sh with a daemonless docker and no podman"
expect_grep "$T/err" "docker is on PATH but its daemon does not answer (docker info), and podman is not on PATH"
expect_eq "$(state_of "$T/r4")" "schedutil schedutil 60 1 500000 " "the host untouched when no runtime answers"
ln -s "$NPL_FAKE_DOCKER" "$T/r4.bin/podman"
run runc "$T/r4" "$T/tuned" docker-pd-mixed.sh
[[ $rc == 0 ]] || fail "docker-pd-mixed.sh, daemonless docker and podman: exit $rc: $(cat "$T/err")"
[[ -s $T/r4.docker ]] || fail "podman (auto, docker's daemon not answering) was not run"
expect_eq "$(cat "$T/r4.nodaemon")" $'docker info\ndocker info' "docker asked only whether its daemon answers"
expect_eq "$(state_of "$T/r4")" "schedutil schedutil 60 1 500000 " "the host put back when podman's container ended"
# a runtime that is not there stops it before anything changes
expect_rc 0 "$NPL" render $MIX --target docker "${SITE[@]}" --tune --container-runtime podman -o "$T/pod"
make_root "$T/r3"
ln -s "$NPL_FAKE_DOCKER" "$T/r3.bin/docker"
run runc "$T/r3" "$T/pod" docker-pd-mixed.sh
expect_eq "$rc" 2 "docker-pd-mixed.sh without podman"
expect_grep "$T/err" "docker-pd-mixed.sh: podman is not on PATH"
expect_eq "$(state_of "$T/r3")" "schedutil schedutil 60 1 500000 " "the host untouched when the runtime is missing"

# ---- goldens: the run scripts of three shapes ------------------------------------------------------
declare -A GOLD=([kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms]="" [deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms]="" \
	[shape-moe-w8a8-4p1d-72p-in32k-out1k-50ms]="--recipes $SHAPES")
for id in "${!GOLD[@]}"; do
	# shellcheck disable=SC2086
	expect_rc 0 "$NPL" ${GOLD[$id]} render "$id" --target docker "${SITE[@]}" -o "$T/gold/$id"
	mkdir -p "$T/norm/$id"
	for f in "$T/gold/$id"/docker-*.sh; do
		sed 's/npulaunch [0-9][0-9a-z.+-]*[0-9a-z]/npulaunch VERSION/' "$f" >"$T/norm/$id/$(basename "$f")"
	done
	if [[ ${NPL_UPDATE_GOLDEN:-} == 1 ]]; then
		rm -rf "${GOLDEN:?}/$id" && mkdir -p "$GOLDEN" && cp -r "$T/norm/$id" "$GOLDEN/$id"
	fi
	diff -ru "$GOLDEN/$id" "$T/norm/$id" >"$T/diff" ||
		fail "docker $id differs from its golden (NPL_UPDATE_GOLDEN=1 to accept): $(head -40 "$T/diff")"
done

# ---- as root: every node of a deployment in a network namespace of its own ----------------------
if [[ $(id -u) != 0 ]] || ! command -v ip >/dev/null || ! command -v nsenter >/dev/null; then
	echo "skip: the multi-node simulation needs root, ip and nsenter (network namespaces)"
	finish
fi
PY=python3
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
{ echo '#!/usr/bin/env bash'; declare -f make_root; echo "NPL_STUB=$NPL_STUB"; echo 'make_root "$1"'; } >"$T/make-root.sh"
chmod +x "$T/make-root.sh"
export NPL_MAKE_ROOT=$T/make-root.sh
runs=(
	"2p1d render deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms ${SITE[*]}"
	"mixed16 render kimi-k2.6-w4a8-16p-in64k-out1k-100ms ${SITE[*]} --tune"
	"shared --recipes $SHAPES render shape-moe-w8a8-4p1d-a2-24p-shared-50ms ${SITE[*]}"
	"1p1d2n render deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms ${SITE[*]} --tune"
)
for r in "${runs[@]}"; do
	read -r name args <<<"$r"
	mkdir -p "$T/sim/$name.roots"
	tune=()
	[[ " $args " == *" --tune "* ]] && tune=(--tune)
	# shellcheck disable=SC2086
	if ! "$NPL" $args --target docker -o "$T/sim/$name" >"$T/sim/$name.out" 2>&1; then
		fail "render $args: $(cat "$T/sim/$name.out")"
		continue
	fi
	run "$PY" "$TOOLS/k8s_sim.py" docker "$T/sim/$name" "$T/sim/$name.roots" "${tune[@]}"
	[[ $rc == 0 ]] || fail "simulated docker $args: $(tail -c 3000 "$T/out")"
done
finish
