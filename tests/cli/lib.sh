# lib.sh: helpers of the command-line tests. Each test_*.sh sources this, runs
# npulaunch ($NPL) and calls fail for every unmet expectation; finish exits 1
# when anything failed.
# shellcheck shell=bash disable=SC2034  # the variables it sets are for the tests (PY, port, http_log)
set -u
: "${NPL:?NPL must name the npulaunch binary}"
T=$(mktemp -d "${TMPDIR:-/tmp}/npl-cli-XXXXXX")
# the fake hosts of these tests have no NPU, model or interface of the recipes: apply and the
# scripts skip their preflight checks (tests/cli/test_preflight.sh runs them, with
# NPULAUNCH_PREFLIGHT unset)
export NPULAUNCH_PREFLIGHT=0
# At exit, the http stubs started (start_http) are killed and $T removed (kept with NPL_KEEP set).
# Only by the test's own shell: a background command killed (SIGTERM) between bash's fork and its
# exec runs this EXIT trap too, and would remove $T under the test. A test that sets its own EXIT
# trap calls cleanup from it.
http_pids=()
cleanup() {
	[[ $BASHPID == "$$" ]] || return 0
	((${#http_pids[@]} == 0)) || kill "${http_pids[@]}" 2>/dev/null
	[[ -n ${NPL_KEEP:-} ]] && return 0
	# a file a test made append-only (cli.confine's failed write: chattr +a) stays so when the
	# test is stopped before its chattr -a; rm cannot remove it, chattr -a can
	rm -rf "$T" 2>/dev/null || { chattr -R -a "$T" 2>/dev/null; rm -rf "$T"; }
}
trap cleanup EXIT
nfail=0
# need_python MODULE...: PY = the system's python3 that imports every MODULE (Debian's
# python3-yaml, python3-jsonschema, ...: tests/install-deps.sh installs them); else the test
# fails, saying which is missing, and ends
need_python() {
	local p
	PY=
	for p in /usr/bin/python3 python3; do
		if "$p" -c "import $(IFS=,; echo "$*")" 2>/dev/null; then
			PY=$p
			return 0
		fi
	done
	fail "no python3 that imports $* (python3-yaml, python3-jsonschema): run tests/install-deps.sh"
	finish
}

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	nfail=$((nfail + 1))
}

# run CMD...: run with stdout in $T/out, stderr in $T/err, exit status in $rc
run() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# expect_rc WANT CMD...
expect_rc() {
	local want=$1
	shift
	run "$@"
	[[ $rc == "$want" ]] || fail "$* exited $rc, want $want; stderr: $(head -c 2000 "$T/err")"
}

# expect_eq GOT WANT WHAT
expect_eq() {
	[[ $1 == "$2" ]] || fail "$3: got [$1], want [$2]"
}

# expect_grep FILE PATTERN (fixed string)
expect_grep() {
	grep -qF -- "$2" "$1" || fail "$1 lacks [$2]: $(head -c 2000 "$1")"
}

# expect_nogrep FILE PATTERN (fixed string)
expect_nogrep() {
	! grep -qF -- "$2" "$1" || fail "$1 has [$2]"
}

finish() {
	if ((nfail)); then
		printf '%d failure(s)\n' "$nfail" >&2
		exit 1
	fi
	echo ok
	exit 0
}

# make_root DIR: a fake host root (2 CPUs with cpufreq, the sysctls, the Ascend
# env files) and a bin/ with the stub server as python3 and python next to it.
make_root() {
	local r=$1 c f
	for c in 0 1; do
		mkdir -p "$r/sys/devices/system/cpu/cpu$c/cpufreq"
		echo schedutil >"$r/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
		echo "performance schedutil" >"$r/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors"
	done
	mkdir -p "$r/proc/sys/vm" "$r/proc/sys/kernel"
	echo 60 >"$r/proc/sys/vm/swappiness"
	echo 1 >"$r/proc/sys/kernel/numa_balancing"
	echo 500000 >"$r/proc/sys/kernel/sched_migration_cost_ns"
	for f in ascend-toolkit/set_env.sh nnal/atb/set_env.sh \
		ascend-toolkit/latest/opp/vendors/customize/bin/set_env.bash \
		ascend-toolkit/latest/opp/vendors/custom_transformer/bin/set_env.bash; do
		mkdir -p "$(dirname "$r/usr/local/Ascend/$f")"
		echo ": sourced" >"$r/usr/local/Ascend/$f"
	done
	mkdir -p "$r.bin"
	ln -sf "${NPL_STUB:?}" "$r.bin/python3"
	ln -sf "$NPL_STUB" "$r.bin/python"
}

# state_of ROOT: the host state a script may change, one line
state_of() {
	cat "$1"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor "$1"/proc/sys/vm/swappiness \
		"$1"/proc/sys/kernel/numa_balancing "$1"/proc/sys/kernel/sched_migration_cost_ns | tr '\n' ' '
}

# start_http MODE [N]: an http_stub on a free loopback port; sets $port; killed at exit
start_http() {
	local f=$T/http-$RANDOM-$RANDOM
	"${NPL_HTTP_STUB:?}" "$@" "$f.log" >"$f.port" &
	http_pids+=($!)
	while [[ ! -s $f.port ]]; do sleep 0.05; done
	port=$(<"$f.port")
	http_log=$f.log
}

# sc [-s SHELL] FILE...: shellcheck FILE..., in one call, its output on stdout and its exit status.
# With NPL_SHELLCHECK_CACHE naming a folder (tests/run-all.sh makes one for each of its runs and
# shares it between its passes, the plain build's, the sanitizers' and the ordinary user's), a
# file this shellcheck passed before, byte for byte, under the same name suffix and options, is not
# checked again: its verdict cannot differ. A pass is recorded for each file of a clean call only.
sc() {
	local -a opts=() files sums=() todo=() keys=()
	local salt h i rc
	while [[ ${1:-} == -* ]]; do
		if [[ $1 == -s ]]; then opts+=("$1" "$2"); shift 2; else opts+=("$1"); shift; fi
	done
	if [[ -n ${NPL_SHELLCHECK_CACHE:-} && -d $NPL_SHELLCHECK_CACHE ]] &&
		mapfile -d '' -t sums < <(sha256sum -z -- "$@" 2>/dev/null | cut -z -c1-64) && ((${#sums[@]} == $#)); then
		files=("$@")
		salt=$({ shellcheck --version; printf '%s\n' "${opts[@]}"; } | sha256sum)
		for ((i = 0; i < $#; i++)); do
			h=${files[i]##*/}
			[[ $h == *.* ]] && h=${h##*.} || h=
			h=${salt:0:16}-${sums[i]}-$h
			[[ -e $NPL_SHELLCHECK_CACHE/$h ]] && continue
			todo+=("${files[i]}")
			keys+=("$h")
		done
	else
		todo=("$@")
	fi
	((${#todo[@]})) || return 0
	shellcheck "${opts[@]}" "${todo[@]}"
	rc=$?
	if ((rc == 0)); then
		for h in "${keys[@]}"; do
			: 2>/dev/null >"$NPL_SHELLCHECK_CACHE/$h"
		done
	fi
	return $rc
}
