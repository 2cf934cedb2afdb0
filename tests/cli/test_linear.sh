# Linear in every input size (issue 25, 7): the duplicate checks and lookups over a site file's
# addresses and node labels, repeated --set of one flag, distinct --set flags and --env
# variables. Judged by the instructions valgrind counts (the same on any machine, whatever its
# load), never by a clock: 4x the input may take at most 6x the instructions (linear gives about
# 4, quadratic about 16). The times themselves are bench/run.sh's rows. Skipped without valgrind.
# Then the checks still catch what they caught, at any size.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
K=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms

if ! command -v valgrind >/dev/null; then
	echo "skip: no valgrind to count instructions"
elif grep -qa __asan_init "$NPL"; then
	echo "skip: valgrind cannot run a sanitizer build"
else
	# instructions CMD...: the instructions the command executed (callgrind's total)
	instructions() {
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
			sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p'
	}
	# linear WHAT N CMD-MAKER: CMD-MAKER N prints the command's words, one a line
	linear() {
		local what=$1 n=$2 make=$3 a b
		mapfile -t c1 < <("$make" "$n")
		mapfile -t c4 < <("$make" $((4 * n)))
		a=$(instructions "$NPL" "${c1[@]}")
		b=$(instructions "$NPL" "${c4[@]}")
		if [[ -z $a || -z $b ]]; then
			fail "$what: no instruction count from valgrind"
			return
		fi
		echo "$what: $n -> $a, $((4 * n)) -> $b instructions ($(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b / a }')x)"
		((b <= 6 * a)) || fail "$what: 4x the input took $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b / a }')x the instructions (linear: about 4)"
	}
	ips() {
		awk -v n="$1" 'BEGIN { print "prefill-ip:"; for (i = 1; i <= n; i++)
			printf "  - 10.%d.%d.%d\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' >"$T/ips$1.yaml"
		printf '%s\n' validate --site "$T/ips$1.yaml" -q
	}
	labels() {
		awk -v n="$1" 'BEGIN { print "node-selector:"; for (i = 1; i <= n; i++) printf "  - k%d=v\n", i }' >"$T/labels$1.yaml"
		printf '%s\n' validate --site "$T/labels$1.yaml" -q
	}
	same() {
		printf '%s\n' show "$K"
		awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "--set\ncuda-graph-bs-decode=%d\n", i }'
	}
	distinct() {
		printf '%s\n' show "$K" --allow-unknown
		awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "--set\nbench:x%d=1\n", i }'
	}
	envs() {
		printf '%s\n' show "$K"
		awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "--env\nX_%d=1\n", i }'
	}
	linear "validate --site, prefill-ip addresses" 2000 ips
	linear "validate --site, node-selector labels" 2000 labels
	linear "show, --set of one flag repeated" 1000 same
	linear "show, --set of distinct flags" 250 distinct
	linear "show, --env of distinct variables" 1000 envs
fi

# the checks hold at any size: a duplicate address or label anywhere in a long list
awk 'BEGIN { print "prefill-ip:"; for (i = 1; i <= 3000; i++) printf "  - 10.0.%d.%d\n", int(i / 256), i % 256;
	print "  - 10.0.5.100" }' >"$T/dup.yaml"
expect_rc 2 "$NPL" validate --site "$T/dup.yaml"
expect_grep "$T/err" "dup.yaml:3002:5: error: 'prefill-ip' '10.0.5.100' is given twice: each node has an address of its own"
expect_rc 2 "$NPL" show "$K" --prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 --prefill-ip 10.0.0.001
expect_grep "$T/err" "is not an IPv4 or IPv6 address"
expect_rc 2 "$NPL" show "$K" --prefill-ip fe80::1 --prefill-ip 10.0.0.2 --prefill-ip FE80:0::1
expect_grep "$T/err" "--prefill-ip 'FE80:0::1' is given twice"
awk 'BEGIN { print "node-selector:"; for (i = 1; i <= 3000; i++) printf "  - k%d=v\n", i; print "  - k77=w" }' >"$T/dupl.yaml"
expect_rc 2 "$NPL" validate --site "$T/dupl.yaml"
expect_grep "$T/err" "the label 'k77' is given twice"
# the same address in two lists is no duplicate; render --all hides a list from the recipes of
# the other shape, and the next value is checked against what is left
printf 'prefill-ip: [10.0.0.1]\ndecode-ip: [10.0.0.1]\nnode-ip: [10.0.0.1]\n' >"$T/three.yaml"
expect_rc 0 "$NPL" validate --site "$T/three.yaml"
# a repeated --set keeps every value in order and names every option in its origin; a repeated
# --env is one variable, the last value
expect_rc 0 "$NPL" show "$K" --json --set cuda-graph-bs-decode=1 --set cuda-graph-bs-decode=2 \
	--set cuda-graph-bs-decode=3 --env A_B=1 --env A_B=2
python3 - "$T/out" <<'PY' || fail "repeated --set and --env in the plan"
import json, sys
d = json.load(open(sys.argv[1]))
node = d["roles"][0]["nodes"][0]
f = [f for f in node["flags"] if f["flag"] == "--cuda-graph-bs-decode"]
assert len(f) == 1 and f[0]["values"] == ["1", "2", "3"], f
assert f[0]["origin"]["option"] == " ".join("--set cuda-graph-bs-decode=%d" % i for i in (1, 2, 3)), f
e = [e for e in node["env"] if e["name"] == "A_B"]
assert len(e) == 1 and e[0]["value"] == "2", e
PY
finish
