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

finish
