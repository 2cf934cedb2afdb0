# The scripts and the binary deploy the same thing, whatever the user sets:
# site values from the environment are checked alike by both, before the host
# changes; the scripts' own variables are out of reach of recipe and user
# environment; output that cannot be written is a failure; the small ones of
# issue 14 (a dead sysctl check, exit codes of duplicate addresses and --cpus).
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
K20=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
KPD=kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms
make_root "$T/root"

# ---- output that cannot be written (> /dev/full) ------------------------------------
# as coreutils' close_stdout: exit 1 and one message, for every command that prints
if [[ -w /dev/full ]]; then
	"$NPL" render $K20 --model-path /m --draft-model-path /d --ifname eth0 -o "$T/full" >/dev/null 2>&1 ||
		fail "render for the /dev/full checks"
	full() {  # CMD...: run with stdout on /dev/full; must exit 1 with one message
		"$@" >/dev/full 2>"$T/err"
		rc=$?
		[[ $rc == 1 ]] || fail "$* > /dev/full exited $rc, want 1"
		# one message (warnings about the recipe may come before it), with the reason when
		# the write that failed was the last one
		[[ $(grep -c '^npulaunch: cannot write standard output' "$T/err") == 1 ]] && ! grep -q 'error:' "$T/err" ||
			fail "$* > /dev/full: want one message, got: $(cat "$T/err")"
	}
	full "$NPL" --help
	full "$NPL" --version
	full "$NPL" list
	full "$NPL" list --json
	full "$NPL" show $K20
	full "$NPL" show $K20 --json
	full "$NPL" show $K20 --explain
	full "$NPL" render $K20
	full "$NPL" diff $K20 kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms
	full "$NPL" validate --json
	full "$NPL" verify "$NPL_DATA/bench/pass.jsonl" $K20
	full "$NPL" verify "$NPL_DATA/bench/pass.jsonl" $K20 --json
	full "$NPL" bench $K20 --dry-run
	full "$NPL" tune --check --root "$T/root" --json
	full env NPULAUNCH_ROOT="$T/root" "$NPL" apply "$T/full" --dry-run
	for c in list validate show render diff apply tune wait status bench verify; do
		full "$NPL" $c --help
	done
	"$NPL" --version >/dev/full 2>"$T/err"
	expect_grep "$T/err" "npulaunch: cannot write standard output: No space left on device"
	# list --json is larger than stdio's buffer: it fails while it is written, not only at the end
	expect_rc 0 "$NPL" list --json
	(($(wc -c <"$T/out") > 16384)) || fail "list --json is too small to fill the buffer"
fi

# ---- the small ones -------------------------------------------------------------------
# a sysctl name with an empty component is not one (it rendered /proc/sys/vm//weird)
mkdir -p "$T/sysctl"
{ cat "$NPL_SRC/recipes/kimi-k2.6/$K20.yaml"; printf 'tuning:\n  sysctl:\n    vm..weird: 1\n'; } >"$T/sysctl/r.yaml"
expect_rc 5 "$NPL" --recipes "$T/sysctl" validate
expect_grep "$T/err" "error: 'vm..weird' is not a sysctl name (like vm.swappiness)"
grep -q "r.yaml:[0-9]*:5: error: 'vm..weird'" "$T/err" || fail "the sysctl name is not located: $(cat "$T/err")"
# the same address twice in a node list is the user's site value (2), not the database (5)
expect_rc 2 "$NPL" render deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms --prefill-ip 10.0.0.1 \
	--prefill-ip 10.0.0.1 --decode-ip 10.0.0.3 --decode-ip 10.0.0.5 -o "$T/dup"
expect_grep "$T/err" "npulaunch: error: --prefill-ip '10.0.0.1' is given twice: each node has an address of its own"
[[ -e $T/dup ]] && fail "a duplicate address left output"
# canonically the same is the same
expect_rc 2 "$NPL" show kimi-k2.6-w4a8-16p-in64k-out1k-100ms --node-ip fd00::1 --node-ip FD00:0::1
expect_grep "$T/err" "--node-ip 'FD00:0::1' is given twice"
printf 'node-ip: [10.0.0.1, 10.0.0.2, 10.0.0.1]\n' >"$T/dup.yaml"
expect_rc 2 "$NPL" show kimi-k2.6-w4a8-16p-in64k-out1k-100ms --site "$T/dup.yaml"
expect_grep "$T/err" "dup.yaml:1:31: error: --node-ip '10.0.0.1' is given twice"
expect_rc 2 env NODE_IPS="10.0.0.1 10.0.0.1" NPULAUNCH_ROOT="$T/root" "$NPL" apply kimi-k2.6-w4a8-16p-in64k-out1k-100ms \
	--model-path /m --draft-model-path /d --ifname eth0 --dry-run
expect_grep "$T/err" "NODE_IPS '10.0.0.1' is given twice"
# a malformed --cpus is a usage error
expect_rc 2 env NPULAUNCH_ROOT="$T/root" "$NPL" apply "$T/full" --dry-run --cpus 0-x
expect_grep "$T/err" "--cpus '0-x' is not a CPU list"

finish
