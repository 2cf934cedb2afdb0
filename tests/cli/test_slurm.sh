# test_slurm.sh: render --target slurm. Everywhere: the batch job's shape pinned by golden files
# (8-card mixed, 1P1D with a two-node decode, 2P1D), shellcheck over every recipe's job, the
# Slurm site values and their messages, role scripts that no Slurm value changes. As root with
# Slurm installed (tests/install-deps.sh): a real Slurm cluster of three nodes on this machine
# (tests/slurm/cluster.sh: each node in its own network, UTS and mount namespace, its own fake
# host root) runs the 1P1D job with the two-node decode against a stand-in SGLang
# (tests/slurm/fake): with the role scripts and with npulaunch apply in the steps, each rank
# receiving the plan's argv and environment (tests/slurm/check_records.py against
# manifest.json), the roots tuned while it runs and put back byte for byte when it ends; the
# benchmark and its verdict; one decode rank killed ends the job as failed within 10 s; scancel
# ends it; a short allocation and a missing site value stop it before any step. Nothing leaves
# the namespaces and loopback. NPL_REGEN=1 writes the golden files instead of comparing.
# as root it makes namespaces and writes below $T: never without lib.sh's $T
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh" || exit 1
[[ -d ${T:-} ]] || exit 1
S=$NPL_SRC/tests/slurm
SH=(--recipes "$NPL_DATA/recipes/good/shapes")
D2=shape-moe-w8a8-1p1d-24p-decode2n-50ms
MIXED=shape-moe-w8a8-8p-spec-null-50ms
P2=shape-moe-w8a8-2p1d-24p-in8k-out1k-50ms

# ---- the job's shape, pinned --------------------------------------------------------------
# golden NAME ID ARGS...: render ID --target slurm ARGS and compare slurm.sbatch and
# slurm-step.sh with tests/slurm/expected/NAME.* (the version in the header left out)
golden() {
	local name=$1 id=$2 f
	shift 2
	expect_rc 0 "$NPL" "${SH[@]}" render "$id" --target slurm "$@" -o "$T/g/$name"
	for f in slurm.sbatch slurm-step.sh; do
		sed -E 's/npulaunch [0-9]+\.[0-9]+\.[0-9]+[^ ]*/npulaunch VERSION/' "$T/g/$name/$f" >"$T/g/$name.$f"
		if [[ -n ${NPL_REGEN:-} ]]; then
			cp "$T/g/$name.$f" "$S/expected/$name.$f"
		elif ! diff -u "$S/expected/$name.$f" "$T/g/$name.$f" >"$T/diff"; then
			fail "$name: $f differs from tests/slurm/expected/$name.$f (NPL_REGEN=1 writes it): $(head -c 3000 "$T/diff")"
		fi
	done
}
golden mixed-8p "$MIXED" --model-path /models/m --ifname eth0 --slurm-partition npu,npu-b \
	--slurm-account llm --slurm-time 2-00:00:00 --slurm-gres npu --slurm-log-dir "/shared/npl logs" --bench
golden 1p1d-decode2n "$D2" --ifname eth0 --slurm-gres npu:910c --slurm-router-node node3
golden 2p1d "$P2" --model-path /models/m --ifname eth0 --slurm-npulaunch /opt/npulaunch/bin/npulaunch --bench
# what the files say, beyond their bytes
# an A3 node: 8 cards of 2 dies, a device file each (/dev/davinci0-15)
expect_grep "$T/g/mixed-8p/slurm.sbatch" '#SBATCH --gres=npu:16'
expect_grep "$T/g/mixed-8p/slurm.sbatch" '#SBATCH --partition=npu,npu-b'
expect_grep "$T/g/mixed-8p/slurm.sbatch" "npl_logs='/shared/npl logs'/\$SLURM_JOB_ID"
expect_nogrep "$T/g/mixed-8p/slurm.sbatch" 'npl_need'
expect_grep "$T/g/1p1d-decode2n/slurm.sbatch" '#SBATCH --nodes=3'
expect_grep "$T/g/1p1d-decode2n/slurm.sbatch" '#SBATCH --nodelist=node3'
expect_grep "$T/g/1p1d-decode2n/slurm.sbatch" 'npl_need MODEL_PATH model-path'
expect_grep "$T/g/1p1d-decode2n/slurm.sbatch" 'npl_start decode-0 --nodes=2 --ntasks=2'
expect_nogrep "$T/g/1p1d-decode2n/slurm.sbatch" 'npl_start bench'
expect_nogrep "$T/g/1p1d-decode2n/slurm.sbatch" '#SBATCH --partition'
expect_grep "$T/g/2p1d/slurm.sbatch" 'npl_start prefill-1 --nodes=1'
expect_grep "$T/g/2p1d/slurm.sbatch" '#SBATCH --nodes=3'
expect_nogrep "$T/g/2p1d/slurm.sbatch" '#SBATCH --gres'
expect_grep "$T/g/2p1d/slurm-step.sh" "npl_npulaunch=/opt/npulaunch/bin/npulaunch"
# an A2 node: 8 one-die cards, 8 device files, 8 logical devices per server node
expect_rc 0 "$NPL" "${SH[@]}" render shape-moe-w8a8-a2-16p-in8k-out1k-50ms --target slurm --slurm-gres npu --ifname eth0 \
	--model-path /m -o "$T/a2"
expect_grep "$T/a2/slurm.sbatch" '#SBATCH --gres=npu:8'
expect_grep "$T/a2/slurm.sbatch" 'slurm-step.sh" server pd-mixed pd-mixed-0 0,1,2,3,4,5,6,7 "${npl_hosts[@]:0:2}"'
# the steps tune their nodes unless the site says not to: then nothing of the tuning is in the
# job (no mark, no revert step), and the role scripts launch with --no-tune
expect_grep "$T/g/mixed-8p/slurm-step.sh" 'bash "./$npl_role.sh" &'
expect_grep "$T/g/mixed-8p/slurm.sbatch" 'slurm-step.sh" revert'
expect_rc 0 "$NPL" "${SH[@]}" render "$MIXED" --target slurm --tune=false --model-path /m --ifname eth0 -o "$T/nt"
expect_grep "$T/nt/slurm-step.sh" 'bash "./$npl_role.sh" --no-tune &'
expect_nogrep "$T/nt/slurm-step.sh" 'tuned/'
expect_nogrep "$T/nt/slurm.sbatch" 'revert'
expect_nogrep "$T/nt/slurm.sbatch" 'needs root'
expect_rc 0 "$NPL" "${SH[@]}" render "$MIXED" --target slurm --tune=false --model-path /m --ifname eth0 \
	--slurm-npulaunch /opt/npl/npulaunch -o "$T/nt2"
expect_grep "$T/nt2/slurm-step.sh" '"$npl_npulaunch" apply --role "$npl_role" --no-tune &'
expect_rc 2 "$NPL" "${SH[@]}" render "$MIXED" --target slurm --tune=no
expect_grep "$T/err" "--tune takes true or false, not 'no'"
# a job that would tune, run by a user who is not root, stops before anything (as nobody, with
# Slurm's variables set by hand: it stops before it asks Slurm anything)
if ((EUID == 0)) && command -v setpriv >/dev/null; then
	chmod -R a+rX "$T/g/mixed-8p"
	chmod a+x "$T"
	(cd "$T/g/mixed-8p" && SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		env -u NPULAUNCH_ROOT bash slurm.sbatch) >"$T/out" 2>"$T/err"
	expect_eq "$?" 2 "a tuning job as nobody"
	expect_grep "$T/err" "slurm.sbatch: the steps tune the nodes (the cpufreq governor and sysctls), which needs root, and this job runs as nobody: submit it as root, or render again with --tune=false where the site tunes the nodes otherwise"
fi

# ---- shellcheck: every recipe's job, with and without the benchmark ------------------------
if command -v shellcheck >/dev/null; then
	expect_rc 0 "$NPL" "${SH[@]}" render --all --target slurm -o "$T/all"
	expect_rc 0 "$NPL" "${SH[@]}" render --all --target slurm --bench --slurm-npulaunch /usr/bin/npulaunch \
		--slurm-gres npu --slurm-router-node n1 -o "$T/allb"
	n=$(find "$T/all" "$T/allb" -name slurm.sbatch | wc -l)
	((n >= 2 * 80)) || fail "render --all --target slurm gave $n jobs"
	# many recipes share a shape, their files differing only by the recipe's id and title:
	# one of each
	for d in "$T"/all*/*/; do
		for f in slurm.sbatch slurm-step.sh; do
			sed -e "s/$(basename "$d")/ID/g" -e '2,4d' "$d/$f" >"$T/one"
			h=$(md5sum <"$T/one" | cut -c1-32)
			[[ -e $T/sc-$h.sh ]] || cp "$T/one" "$T/sc-$h.sh"
		done
	done
	sc "$T"/sc-*.sh >"$T/sc" 2>&1 || fail "shellcheck: $(head -c 3000 "$T/sc")"
else
	fail "shellcheck is not installed (the README's first command installs it)"
fi

# ---- the site values and their messages ---------------------------------------------------
R=("$NPL" "${SH[@]}" render "$D2")
expect_rc 2 "${R[@]}" --target slurm --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2 --decode-ip 10.0.0.3 -o "$T/x"
expect_grep "$T/err" "npulaunch: render: --prefill-ip: --target slurm takes the nodes and their addresses from the allocation; drop it"
[[ ! -e $T/x ]] || fail "a refused render wrote $T/x"
printf 'decode-ip: [10.0.0.2, 10.0.0.3]\n' >"$T/addr.yaml"
expect_rc 2 "$NPL" "${SH[@]}" render --all --target slurm --site "$T/addr.yaml" -o "$T/x"
expect_grep "$T/err" "npulaunch: render: --decode-ip: --target slurm takes the nodes and their addresses from the allocation; drop it"
[[ ! -e $T/x ]] || fail "a refused render --all wrote $T/x"
expect_rc 2 "$NPL" "${SH[@]}" render "$MIXED" --target slurm --slurm-router-node n1
expect_grep "$T/err" "npulaunch: error: --slurm-router-node: recipe '$MIXED' has no router (pd-mixed): drop it"
expect_rc 2 "${R[@]}" --target slurm --slurm-time '1 day'
expect_grep "$T/err" "npulaunch: error: --slurm-time '1 day' is not a Slurm time limit (MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS or UNLIMITED)"
expect_rc 2 "${R[@]}" --target slurm --slurm-log-dir logs
expect_grep "$T/err" "npulaunch: error: --slurm-log-dir must be an absolute path, not 'logs'"
expect_rc 2 "${R[@]}" --target slurm --slurm-gres 'npu:8'
expect_rc 0 "${R[@]}" --target slurm --slurm-gres 'npu:910c'
expect_rc 2 "${R[@]}" --slurm-partition npu --strict
expect_grep "$T/err" "error: --slurm-partition: render (the scripts) has no use for it (a value of --target slurm); --strict refuses it"
expect_rc 0 "${R[@]}" --slurm-partition npu
expect_grep "$T/err" "note: --slurm-partition: render (the scripts) has no use for it (a value of --target slurm): ignored (--strict refuses it)"
expect_rc 2 "${R[@]}" --bench
expect_grep "$T/err" "npulaunch: render: --bench is for a job that runs the deployment: give --target slurm"
expect_rc 2 "${R[@]}" --target kubernetes
expect_grep "$T/err" "npulaunch: render: unknown target 'kubernetes' (scripts, k8s, rbg, docker, slurm)"
expect_rc 0 "$NPL" "${SH[@]}" show "$MIXED" --slurm-partition npu
# a site file may hold the cluster's Slurm values for every target; a bad one is located
printf 'model-path: /models/m\nslurm-partition: part-x\nslurm-time: "30"\n' >"$T/site.yaml"
expect_rc 0 "${R[@]}" --site "$T/site.yaml" -o "$T/s1"
expect_rc 0 "${R[@]}" --site "$T/site.yaml" --target slurm -o "$T/s2"
expect_grep "$T/s2/slurm.sbatch" '#SBATCH --partition=part-x'
expect_grep "$T/s2/slurm.sbatch" '#SBATCH --time=30'
printf 'slurm-partiton: npu\nslurm-account: "a b"\n' >"$T/bad.yaml"
expect_rc 2 "${R[@]}" --site "$T/bad.yaml" --target slurm
expect_grep "$T/err" "bad.yaml:1:1: error: unknown site key 'slurm-partiton' (did you mean 'slurm-partition'?)"
expect_grep "$T/err" "bad.yaml:2:16: error: 'slurm-account' 'a b' is not an account name (letters, digits, '_', '.', '-')"
# the Slurm values never reach the role scripts: the servers' are those of the scripts target;
# the router listens on its node's address, which the job gives (ENTRY_IP), not on loopback,
# and the benchmark connects there
for f in prefill.sh decode.sh; do
	cmp -s "$T/s1/$f" "$T/s2/$f" || fail "$f differs between --target scripts and --target slurm"
done
expect_grep "$T/s1/router.sh" '--host 127.0.0.1'
expect_grep "$T/s2/router.sh" '--host "${ENTRY_IP[0]}"'
expect_grep "$T/s2/bench.sh" '--host "${ENTRY_IP[0]}"'
diff <(sed 's/--host 127.0.0.1/--host "${ENTRY_IP[0]}"/' "$T/s1/router.sh") "$T/s2/router.sh" | grep '^[<>]' | grep -v 'ENTRY_IP\|--entry-ip\|ENTRY_HOST\|entry point' >"$T/d" &&
	fail "router.sh differs between the targets beyond the entry address: $(cat "$T/d")"
expect_rc 2 "${R[@]}" --target slurm --entry-ip 10.0.0.1
expect_grep "$T/err" "npulaunch: render: --entry-ip: --target slurm takes the nodes and their addresses from the allocation; drop it"
expect_nogrep "$T/s2/prefill.sh" 'part-x'
expect_grep "$T/s2/manifest.json" '"slurm-partition":	"part-x"'
# what the job needs from its environment, and what it does not (the addresses)
expect_rc 0 "${R[@]}" --target slurm --ifname eth0 -o "$T/s3"
expect_grep "$T/err" "npulaunch: $D2: not given: --model-path (MODEL_PATH); the job stops until they are set"
# a recipe cannot put a Slurm value in a server's environment
mkdir -p "$T/rec"
cat >"$T/rec/r.yaml" <<'EOF'
kind: recipe
title: Shape-MoE W8A8 8P SLURM-ENV 50ms
model: shape-moe
hardware: ascend-a3
cards: 8
mode: pd-mixed
quantization: W8A8 INT8
dataset: 8k+1k
tpot: 50ms
env:
  PART: {value: {site: slurm-partition}}
bench: {dataset: random, input: 8000, output: 1000, concurrency: 32, prompts: 64}
EOF
cp "$NPL_DATA/recipes/good/shapes/model.yaml" "$T/rec/"
expect_rc 5 "$NPL" --recipes "$T/rec" validate
expect_grep "$T/err" "'slurm-partition' is not a site value an environment variable can hold"

# ---- a real Slurm cluster -------------------------------------------------------------------
skip_cluster() {
	echo "SKIP: the Slurm cluster part: $*" >&2
	finish
	exit 0
}
((EUID == 0)) || skip_cluster "not root (it makes network namespaces and runs slurmd)"
for c in slurmctld slurmd sbatch srun scontrol munged nsenter unshare ip flock python3 curl; do
	command -v "$c" >/dev/null || [[ -x /usr/sbin/$c ]] ||
		skip_cluster "$c is not installed (tests/install-deps.sh installs slurmctld, slurmd, slurm-client and munge)"
done
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || skip_cluster "python3 is older than 3.10"
# one cluster on the machine at a time (the namespaces and the bridge have fixed names)
exec 9>/run/npl-slurm-test.lock
flock -w 120 9 || { fail "another run has held /run/npl-slurm-test.lock for 120 s"; finish; }

chmod 755 "$T"  # munge's socket is below it
export NPL_SLURM_BASE=$T/slurm
CL=$S/cluster.sh
trap '[[ $BASHPID != "$$" ]] || "$CL" down >/dev/null 2>&1; cleanup' EXIT
t_start=$SECONDS
# (the daemons must not keep the lock: 9>&-)
"$CL" up >"$T/up" 2>&1 9>&- || { fail "the cluster did not come up: $(cat "$T/up")"; finish; }

# each node's fake host root (NPULAUNCH_ROOT=BASE/root is a different one on each), and a copy
mkroot() {
	local r=$1 c f
	for c in 0 1; do
		mkdir -p "$r/sys/devices/system/cpu/cpu$c/cpufreq"
		echo schedutil >"$r/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
		echo "performance schedutil" >"$r/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors"
	done
	mkdir -p "$r/proc/sys/vm" "$r/proc/sys/kernel"
	echo 60 >"$r/proc/sys/vm/swappiness"
	echo 1 >"$r/proc/sys/kernel/numa_balancing"
	printf '500000\n\n' >"$r/proc/sys/kernel/sched_migration_cost_ns"  # bytes a rewrite would lose
	for f in ascend-toolkit/set_env.sh nnal/atb/set_env.sh; do
		mkdir -p "$(dirname "$r/usr/local/Ascend/$f")"
		echo ": sourced" >"$r/usr/local/Ascend/$f"
	done
}
roots() {  # every file of the nodes' roots with its checksum
	(cd "$NPL_SLURM_BASE/roots" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
for n in 1 2 3 4 5; do mkroot "$NPL_SLURM_BASE/roots/node$n"; done
roots >"$T/roots.before"
tuned() {  # NODE: its root is tuned as the hardware profile says
	local r=$NPL_SLURM_BASE/roots/$1
	[[ $(cat "$r/proc/sys/vm/swappiness" "$r/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor") == $'0\nperformance' ]]
}
reverted() {  # WHAT: the roots hold what they held before, byte for byte
	roots >"$T/roots.after"
	diff -u "$T/roots.before" "$T/roots.after" >"$T/diff" || fail "$1: the roots are not put back: $(cat "$T/diff")"
}

# the stand-in SGLang: python3/python on PATH, its modules on PYTHONPATH; npulaunch on PATH for
# the verdict; a proxy set (the plan unsets it) that would go nowhere
mkdir -p "$T/bin" "$T/rec"
# the interpreter itself, not a wrapper that runs it by its full path (pyenv's shims): argv[0] stays python3
py=$(python3 -c 'import sys; print(sys.executable)')
ln -s "$py" "$T/bin/python3"
ln -s "$py" "$T/bin/python"
ln -s "$NPL" "$T/bin/npulaunch"
JOBENV=(PATH="$T/bin:$PATH" PYTHONPATH="$S/fake" NPL_FAKE_RECORDS="$T/rec" NPL_FAKE_TIMEOUT=30
	NPULAUNCH_ROOT="$NPL_SLURM_BASE/root" NPULAUNCH_WAIT_TIMEOUT=30
	https_proxy=http://10.200.0.10:9 http_proxy=http://10.200.0.10:9)
printf '{"model-path": "/models/m", "ifname": "eth0", "prefill-ip": ["10.200.0.11"], "decode-ip": ["10.200.0.12", "10.200.0.13"], "entry-ip": ["10.200.0.11"]}\n' >"$T/site.json"
WHERE=(prefill:0=node1 decode:0=node2 decode:1=node3 router=node1)

# submit DIR ENV... -- SBATCH-ARG...: sbatch in DIR from the controller; $job
submit() {
	local dir=$1 e=()
	shift
	while (($#)) && [[ $1 != -- ]]; do e+=("$1"); shift; done
	shift
	rm -f "$T"/rec/*
	job=$(cd "$dir" && env "${JOBENV[@]}" "${e[@]}" "$CL" ctl sbatch --parsable "$@" slurm.sbatch 2>"$T/sbatch.err")
	[[ $job =~ ^[0-9]+$ ]] || fail "sbatch in $dir: $job $(cat "$T/sbatch.err")"
}
# state: JobState and ExitCode of $job into $state and $exit
state() {
	local s
	s=$("$CL" ctl scontrol show job "$job" 2>&1)
	state=$(grep -o 'JobState=[A-Z_]*' <<<"$s")
	state=${state#JobState=}
	exit=$(grep -o ' ExitCode=[0-9:]*' <<<"$s")
	exit=${exit# ExitCode=}
}
# wait_end SECONDS: until $job has ended (not pending, running or completing); $took its seconds
wait_end() {
	local t0=$EPOCHREALTIME
	while :; do
		state
		case $state in PENDING | CONFIGURING | RUNNING | COMPLETING | "") ;; *) break ;; esac
		if (($(date +%s) - ${t0%.*} > $1)); then
			fail "job $job still $state after $1 s"
			break
		fi
		sleep 0.1
	done
	took=$(echo "$EPOCHREALTIME - $t0" | bc)
}
# wait_router DIR [n1..n5]: until the router on that node (n1) answers /health at the node's
# address, from the controller's host (a login node)
wait_router() {
	local i n=${2:-n1}
	for ((i = 0; i < 200; i++)); do
		"$CL" net ctl curl -sf --noproxy '*' --max-time 1 -o /dev/null "http://10.200.0.1${n#n}:6688/health" && return 0
		state
		[[ $state == RUNNING || $state == PENDING || $state == CONFIGURING ]] || break
		sleep 0.1
	done
	fail "job $job: the router never answered ($state $exit): $(cat "$1"/*.out 2>/dev/null | tail -n 20)"
	return 1
}
joblog() { cat "$1/$2-$job.out" 2>/dev/null; }

# -- A: the role scripts in the steps, with the benchmark; no --model-path given at render time
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --slurm-gres npu --ifname eth0 --bench -o "$T/A"
# a site value missing, then too few nodes: the job stops before any step
submit "$T/A" --
wait_end 20
expect_eq "$state $exit" "FAILED 2:0" "job without MODEL_PATH"
joblog "$T/A" "$D2" >"$T/log"
expect_grep "$T/log" "slurm.sbatch: MODEL_PATH is not set: submit with MODEL_PATH=... sbatch slurm.sbatch (sbatch passes the environment on), or render again with --model-path"
submit "$T/A" MODEL_PATH=/models/m -- --nodes=2
wait_end 20
expect_eq "$state $exit" "FAILED 2:0" "job on two nodes"
joblog "$T/A" "$D2" >"$T/log"
expect_grep "$T/log" "slurm.sbatch: this deployment needs 3 nodes (prefill 1 node, decode 2 nodes (1 instance over 2 nodes each)); the allocation has 2 (node1 node2): submit it without --nodes, or with --nodes=3"
[[ -z $(ls "$T/rec") ]] || fail "a job that stopped early started: $(ls "$T/rec")"
reverted "the early stops"
# now whole: every server up, the router, the benchmark through it, the verdict
submit "$T/A" MODEL_PATH=/models/m --
wait_end 30
expect_eq "$state $exit" "COMPLETED 0:0" "job A (role scripts, benchmark)"
joblog "$T/A" "$D2" >"$T/log"
expect_grep "$T/log" "slurm.sbatch: the benchmark ended (status 0: passed): ending the job"
expect_grep "$T/A/logs/$job/bench.log" "verdict: PASS"
expect_grep "$T/A/logs/$job/bench.log" "requests completed    16"
for f in prefill-0-rank0 decode-0-rank0 decode-0-rank1 router bench; do
	[[ -s $T/A/logs/$job/$f.log ]] || fail "job A: no log $f.log: $(ls "$T/A/logs/$job")"
done
python3 "$S/check_records.py" "$T/A/manifest.json" "$T/rec" "$T/site.json" "${WHERE[@]}" bench=node1 >"$T/check" ||
	fail "job A: $(cat "$T/check")"
expect_grep "$T/check" "5 processes checked, 0 differences"
# each server started on a tuned node, with the devices Slurm does not name: on A3 one logical
# device per die, the 16 dies of the node's 8 cards (not 8: that is half of them)
for f in "$T"/rec/server-*.json; do
	jq -e '.root["/proc/sys/vm/swappiness"] == "0\n" and .root["/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"] == "performance\n" and .env.ASCEND_RT_VISIBLE_DEVICES == "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"' \
		"$f" >/dev/null || fail "job A: $f: not started on a tuned node with its 16 dies: $(jq -c '[.root, .env.ASCEND_RT_VISIBLE_DEVICES]' "$f")"
done
reverted "job A"
# what the jobs wrote in the bundle (their output, the steps' logs) is theirs: render --check is clean
ls "$T/A"/"$D2"-*.out >/dev/null 2>&1 || fail "job A: no job output in the bundle: $(ls "$T/A")"
[[ -d $T/A/logs ]] || fail "job A: no logs folder in the bundle"
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --slurm-gres npu --ifname eth0 --bench -o "$T/A" --check
# and a file that is no job's still is extra
touch "$T/A/notes.txt"
expect_rc 1 "$NPL" "${SH[@]}" render "$D2" --target slurm --slurm-gres npu --ifname eth0 --bench -o "$T/A" --check
expect_grep "$T/out" "extra $T/A/notes.txt"
rm -f "$T/A/notes.txt"

# -- B: npulaunch apply in the steps, the router on the site's node (beside decode rank 1); scancel
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --slurm-gres npu --ifname eth0 --model-path /models/m \
	--slurm-npulaunch "$NPL" --slurm-log-dir "$T/logs B" --slurm-router-node node3 -o "$T/B"
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --slurm-gres npu --ifname eth0 --model-path /models/m \
	--slurm-npulaunch "$NPL" --slurm-log-dir "$T/logs B" --slurm-router-node node3 -o "$T/B" --check
submit "$T/B" --
if wait_router "$T/B" n3; then
	"$CL" net ctl curl -sf --noproxy '*' --max-time 2 -X POST -d '{}' http://10.200.0.13:6688/generate >"$T/gen" ||
		fail "job B: POST /generate through the router failed"
	jq -e '.backends | length == 2' "$T/gen" >/dev/null || fail "job B: /generate: $(cat "$T/gen")"
	# the router's node is asked for by name: Slurm gives the job the nodes around it
	joblog "$T/B" "$D2" >"$T/log"
	expect_grep "$T/log" "slurm.sbatch:   router: node3 (10.200.0.13)"
	expect_grep "$T/log" "slurm.sbatch:   entry point: http://10.200.0.13:6688"
	# the job's own "follow it" line, run as printed on the login node: every endpoint up, the
	# router's at its node's address
	cmd=$(sed -n 's/^slurm.sbatch:   follow it: //p' "$T/log")
	"$CL" ctl env PATH="$T/bin:$PATH" bash -c "$cmd" >"$T/status" 2>&1 || fail "job B: $cmd: $(cat "$T/status")"
	expect_grep "$T/status" "router   -         http://10.200.0.13:6688  up"
	python3 "$S/check_records.py" "$T/B/manifest.json" "$T/rec" "$T/site.json" log="$T/log" >"$T/check" ||
		fail "job B: $(cat "$T/check")"
	for n in $(sed -n 's/^slurm.sbatch:   \(prefill\|decode\): \([^(]*\) (.*/\2/p' "$T/log"); do
		tuned "$n" || fail "job B: $n is not tuned while the job runs"
	done
	[[ -s "$T/logs B/$job/decode-0-rank1.log" ]] || fail "job B: no decode rank 1 log in the site's folder"
	"$CL" ctl scancel "$job"
	wait_end 20
	expect_eq "$state" CANCELLED "job B after scancel"
	reverted "job B after scancel"
fi

# -- C: one decode rank dies: the job fails within 10 s, and every node is put back
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --ifname eth0 --model-path /models/m -o "$T/C"
submit "$T/C" --
if wait_router "$T/C"; then
	pid=$(jq -r 'select(.program == "server" and .node == "node3") | .pid' "$T"/rec/server-node3-*.json)
	[[ $pid =~ ^[0-9]+$ ]] || fail "job C: no decode rank 1 server: $pid"
	kill -KILL "$pid"
	wait_end 10
	expect_eq "$state" FAILED "job C after a decode rank died"
	(($(echo "$took < 10" | bc))) || fail "job C ended $took s after a decode rank died"
	joblog "$T/C" "$D2" >"$T/log"
	expect_grep "$T/log" "slurm.sbatch: step decode-0 ended (status"
	expect_grep "$T/C/logs/$job/decode-0-rank1.log" "decode-0, rank 1: status 137"
	reverted "job C"
fi

# -- D: every server fails at once (a missing model): every node is put back, each time (the
# job's own scancel --signal=TERM reaches the steps while they revert), and the job says so
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --ifname eth0 --model-path /models/m -o "$T/D"
for i in 1 2 3; do
	submit "$T/D" NPL_FAKE_SERVER_EXIT=1 --
	wait_end 30
	expect_eq "$state" FAILED "job D$i (every server failed)"
	joblog "$T/D" "$D2" >"$T/log"
	expect_grep "$T/log" "slurm.sbatch: every node's tuning is put back"
	reverted "job D$i (every server failed)"
	[[ -z $(ls "$T/D/logs/$job/tuned" 2>/dev/null) ]] || fail "job D$i: marks left: $(ls "$T/D/logs/$job/tuned")"
done
# and with the preflight on (lib.sh turns it off), a missing model stops every server before its
# node is tuned: no step touches a node, so none has anything to put back
submit "$T/D" NPULAUNCH_PREFLIGHT=1 --
wait_end 30
expect_eq "$state" FAILED "job D4 (no model on the nodes)"
# The first rank to fail ends the job, whose scancel --signal=TERM may reach a slower rank before
# its own preflight has said anything, or its step before it started (both seen under load):
# each rank that ran either says why or was ended by the job (143, or -1 as srun reports a killed
# step), and at least one says why
said=0
for f in prefill-0-rank0 decode-0-rank0 decode-0-rank1; do
	[[ -e $T/D/logs/$job/$f.log ]] || continue
	if grep -qF "preflight: MODEL_PATH: $NPL_SLURM_BASE/root/models/m is not a folder" "$T/D/logs/$job/$f.log"; then
		said=$((said + 1))
	else
		# ended by the job: TERM (143), or -1 when srun reports the step killed
		grep -Eq "${f%-rank*}, rank ${f##*-rank}: status (143|-1)\$" "$T/D/logs/$job/$f.log" ||
			fail "job D4: $f neither says why nor was ended by the job: $(tail -3 "$T/D/logs/$job/$f.log")"
	fi
	expect_nogrep "$T/D/logs/$job/$f.log" "restored"
done
((said > 0)) || fail "job D4: no rank says its model is missing"
[[ -z $(ls "$T/rec") ]] || fail "job D4: a server started: $(ls "$T/rec")"
reverted "job D4 (no model on the nodes)"

# -- E: many nodes: a prefill node and a decode instance over four, the servers all failing;
# then whole, with the role scripts: every rank of the five nodes gets the plan and its 16 dies
D4=shape-moe-w8a8-1p1d-40p-decode4n-50ms
expect_rc 0 "$NPL" "${SH[@]}" render "$D4" --target slurm --slurm-gres npu --ifname eth0 --model-path /models/m -o "$T/E"
submit "$T/E" NPL_FAKE_SERVER_EXIT=1 --
wait_end 30
expect_eq "$state" FAILED "job E (five nodes, every server failed)"
joblog "$T/E" "$D4" >"$T/log"
expect_grep "$T/log" "slurm.sbatch:   decode: node2 node3 node4 node5 (10.200.0.12 10.200.0.13 10.200.0.14 10.200.0.15)"
expect_grep "$T/log" "slurm.sbatch: every node's tuning is put back"
reverted "job E (five nodes, every server failed)"
submit "$T/E" --
if wait_router "$T/E"; then
	joblog "$T/E" "$D4" >"$T/log"
	python3 "$S/check_records.py" "$T/E/manifest.json" "$T/rec" "$T/site.json" log="$T/log" >"$T/check" ||
		fail "job E: $(cat "$T/check")"
	expect_grep "$T/check" "6 processes checked, 0 differences"
	for n in 1 2 3 4 5; do tuned node$n || fail "job E: node$n is not tuned while the job runs"; done
	"$CL" ctl scancel "$job"
	wait_end 20
	expect_eq "$state" CANCELLED "job E after scancel"
	reverted "job E after scancel"
fi

# -- F: a node whose tuning cannot be put back (its journal spoiled while the job runs): the
# job's output names it and the command that puts it back, which does once the journal is whole
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --ifname eth0 --model-path /models/m -o "$T/F"
submit "$T/F" --
if wait_router "$T/F"; then
	j=$NPL_SLURM_BASE/roots/node2/run/npulaunch/tune-journal.json
	cp "$j" "$T/journal"
	echo '{"spoiled": ' >"$j"
	"$CL" ctl scancel --signal=TERM "$job"  # the steps end, as a failed step ends them
	wait_end 30
	joblog "$T/F" "$D2" >"$T/log"
	expect_grep "$T/log" "slurm.sbatch: putting back the tuning the steps left on node2"
	expect_grep "$T/log" "slurm.sbatch: the tuning of 1 node(s) is NOT put back; on each, as root:"
	expect_grep "$T/log" "slurm.sbatch:   node2: cd $T/F && NPULAUNCH_ROOT=$NPL_SLURM_BASE/root bash ./decode.sh --revert"
	expect_eq "$(grep -c ' NOT put back' "$T/log")" 1 "job F: nodes listed"
	expect_eq "$exit" "1:0" "job F's exit code (a node left tuned)"
	# the listed command, run on node2 as it stands, with the journal whole
	cp "$T/journal" "$j"
	cmd=$(sed -n 's/^slurm.sbatch:   node2: //p' "$T/log")
	"$CL" on n2 bash -c "$cmd" >"$T/out" 2>&1 || fail "job F: the listed command failed: $cmd: $(cat "$T/out")"
	reverted "job F, after the listed command"
fi

# -- G: --tune=false (a user who is not root, nodes the site tunes): the servers start on nodes
# that nothing tunes, and the job leaves them as they were
expect_rc 0 "$NPL" "${SH[@]}" render "$D2" --target slurm --ifname eth0 --model-path /models/m --tune=false -o "$T/G"
submit "$T/G" --
if wait_router "$T/G"; then
	joblog "$T/G" "$D2" >"$T/log"
	python3 "$S/check_records.py" "$T/G/manifest.json" "$T/rec" "$T/site.json" log="$T/log" >"$T/check" ||
		fail "job G: $(cat "$T/check")"
	for f in "$T"/rec/server-*.json; do
		jq -e '.root["/proc/sys/vm/swappiness"] == "60\n"' "$f" >/dev/null || fail "job G: $f: started on a tuned node"
	done
	"$CL" ctl scancel "$job"
	wait_end 20
	reverted "job G"
	[[ ! -e $T/G/logs/$job/tuned ]] || fail "job G: marks in a job that tunes nothing"
fi

# -- H: shipped A3 recipes end to end: Kimi-K2.6 1P1D (a node each) with its benchmarks, and
# PD-mixed over two nodes; every rank with its node's 16 dies, every node put back after
# success, cancel and every server failing
printf '{"model-path": "/models/m", "draft-model-path": "/models/d", "ifname": "eth0"}\n' >"$T/site-k.json"
for id in kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms kimi-k2.6-w4a8-16p-in64k-out1k-100ms; do
	d=$T/H-$id
	expect_rc 0 "$NPL" render "$id" --target slurm --slurm-gres npu --ifname eth0 --model-path /models/m \
		--draft-model-path /models/d --bench -o "$d"
	expect_grep "$d/slurm.sbatch" '#SBATCH --nodes=2'
	submit "$d" --
	wait_end 60
	joblog "$d" "$id" >"$T/log"
	expect_eq "$state $exit" "COMPLETED 0:0" "job $id: $(tail -n 5 "$T/log")"
	expect_grep "$T/log" "slurm.sbatch: the benchmark ended (status 0: passed): ending the job"
	python3 "$S/check_records.py" "$d/manifest.json" "$T/rec" "$T/site-k.json" log="$T/log" >"$T/check" ||
		fail "job $id: $(cat "$T/check")"
	for f in "$T"/rec/server-*.json; do
		jq -e '.env.ASCEND_RT_VISIBLE_DEVICES == "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" and .root["/proc/sys/vm/swappiness"] == "0\n"' \
			"$f" >/dev/null || fail "job $id: $f: not its node's 16 dies on a tuned node"
	done
	reverted "job $id"
	submit "$d" NPL_FAKE_SERVER_EXIT=1 --
	wait_end 30
	expect_eq "$state" FAILED "job $id (every server failed)"
	reverted "job $id (every server failed)"
done
expect_rc 0 "$NPL" render kimi-k2.6-w4a8-16p-in64k-out1k-100ms --target slurm --ifname eth0 --model-path /models/m \
	--draft-model-path /models/d -o "$T/H2"
submit "$T/H2" --
for ((i = 0; i < 200; i++)); do
	[[ $(ls "$T"/rec/server-*.json 2>/dev/null | wc -l) == 2 ]] && break
	sleep 0.1
done
"$CL" ctl scancel "$job"
wait_end 20
expect_eq "$state" CANCELLED "job H2 after scancel"
reverted "job H2 (PD-mixed over two nodes, cancelled)"
echo "the Slurm stage took $((SECONDS - t_start)) s" >&2
finish
