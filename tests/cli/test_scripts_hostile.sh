# The scripts and the binary deploy the same thing, whatever the user sets:
# site values from the environment are checked alike by both, before the host
# changes; the scripts' own variables are out of reach of recipe and user
# environment; output that cannot be written is a failure; the small ones of
# issue 14 (a dead sysctl check, exit codes of duplicate addresses and --cpus).
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
K20=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
KPD=kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms
make_root "$T/root"
"$NPL" render $K20 --model-path /m --draft-model-path /d --ifname eth0 -o "$T/full" >/dev/null 2>&1 ||
	fail "render $K20 with its site values"

# ---- output that cannot be written (> /dev/full) ------------------------------------
# as coreutils' close_stdout: exit 1 and one message, for every command that prints
if [[ -w /dev/full ]]; then
	full() {  # CMD...: run with stdout on /dev/full; must exit 1 with one message
		"$@" >/dev/full 2>"$T/err"
		rc=$?
		[[ $rc == 1 ]] || fail "$* > /dev/full exited $rc, want 1"
		# one message (warnings about the recipe may come before it), with the reason when
		# the write that failed was the last one
		if [[ $(grep -c '^npulaunch: cannot write standard output' "$T/err") != 1 ]] || grep -q 'error:' "$T/err"; then
			fail "$* > /dev/full: want one message, got: $(cat "$T/err")"
		fi
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

# ---- site values from the environment: the scripts refuse what apply refuses ---------
# A role's script of a bundle rendered with no site values, and apply --dry-run of that role
# in the bundle, each with the same environment: both launch the same --host, or both refuse
# (exit 2) naming the variable, with the same message, and the script before it changed the
# host. (A script checks the values its role reads; apply reads every site variable, so the
# table sets each where the role reads it: DRAFT_MODEL_PATH on decode.)
expect_rc 0 "$NPL" render $KPD -o "$T/pd"
ncase=0 naccepted=0
site_case() {  # ROLE VAR=VALUE...: the environment over the base
	local role=$1 s_rc a_rc s_msg a_msg s_host a_host before a v same=1
	shift
	local -a e=(MODEL_PATH=/m DRAFT_MODEL_PATH=/d IFNAME=eth0 PREFILL_IPS=10.0.0.1 DECODE_IPS=10.0.0.2)
	if [[ $role == prefill ]]; then e+=(NPULAUNCH_NODE_IP=10.0.0.1); else e+=(NPULAUNCH_NODE_IP=10.0.0.2); fi
	e+=("$@")
	ncase=$((ncase + 1))
	before=$(state_of "$T/root")
	rm -f "$T/calls"
	(cd "$T/pd" && env "${e[@]}" NPULAUNCH_ROOT="$T/root" PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" \
		bash "./$role.sh") >"$T/s.out" 2>"$T/s.err"
	s_rc=$?
	(cd "$T/pd" && env "${e[@]}" NPULAUNCH_ROOT="$T/root" "$NPL" apply --role "$role" --dry-run) >"$T/a.out" 2>"$T/a.err"
	a_rc=$?
	if [[ $s_rc != "$a_rc" ]]; then
		fail "$(printf '%q ' "$@"): $role.sh exited $s_rc ($(head -c 300 "$T/s.err")), apply $a_rc ($(head -c 300 "$T/a.err"))"
		return
	fi
	if [[ $s_rc == 0 ]]; then
		naccepted=$((naccepted + 1))
		s_host=$(jq -r '.argv | index("--host") as $i | .[$i + 1]' "$T/calls")
		a_host=$(sed -n 's/^exec .* --host \([^ ]*\) .*/\1/p' "$T/a.out")
		expect_eq "$s_host" "$a_host" "$(printf '%q ' "$@"): --host of $role.sh and of apply"
		return
	fi
	[[ $s_rc == 2 ]] || fail "$(printf '%q ' "$@"): exited $s_rc, want 2"
	[[ -e $T/calls ]] && fail "$(printf '%q ' "$@"): $role.sh launched"
	expect_eq "$(state_of "$T/root")" "$before" "$(printf '%q ' "$@"): the host after a refusal"
	s_msg=$(head -n 1 "$T/s.err")
	s_msg=${s_msg#"$role.sh: "}
	# a valid address of no node of the list: each says so in its words
	[[ $s_msg == "this host ("* ]] && return
	same=0
	for a in "$@"; do
		[[ $s_msg == "${a%%=*} "* ]] && same=1
	done
	((same)) || fail "$(printf '%q ' "$@"): the message does not name the variable: $s_msg"
	# the same message where one value is at fault and quoting does not differ (${v@Q}, '%s');
	# where several are, each may name another first
	for a in "$@"; do
		v=${a#*=}
		[[ -n $v && $v != *[![:graph:]]* && $v != *"'"* ]] || same=0
	done
	((same)) || return 0
	a_msg=$(grep -m 1 '^npulaunch: error: ' "$T/a.err")
	expect_eq "$s_msg" "${a_msg#npulaunch: error: }" "$(printf '%q ' "$@"): the message"
}
# shellcheck disable=SC2088  # '~/m' is a path with a tilde, kept literal on purpose
paths=(/m / '/with space' "/it's" '/$(x)' relative ./m '~/m' ' /m' $'/a\nb' $'/a\rb' '')
for v in "${paths[@]}"; do
	site_case prefill "MODEL_PATH=$v"
	site_case decode "DRAFT_MODEL_PATH=$v"
done
ifnames=(eth0 bond0.100 a enp189s0f0np0xyz enp189s0f0np0xyz1 '_' '-x' '...' . .. 'eth0 ; x' 'eth0/x' 'eth:0'
	$'eth0\n' $'eth0\t' 'é' 'ethé' '$(x)' '*' '')
for v in "${ifnames[@]}"; do
	site_case prefill "IFNAME=$v"
done
addresses=(10.0.0.1 0.0.0.0 255.255.255.255 1.2.3.4 :: ::1 1:: 1::2 FD00::1 fd00:0:0::1 FD00:0:0::0:1
	0:0:0:0:0:0:0:0 0:0:0:0:0:0:0:1 2001:DB8:0:0:1:0:0:1 1:0:0:2:0:0:0:3 1:0:0:2:0:0:3:4 0:0:1:0:0:0:0:0
	0000:0000::0001 ::ffff:1.2.3.4 ::FFFF:1.2.3.4 ::1.2.3.4 ::0.0.0.1 ::0.0.1.0 ::ffff:0:0 ::ffff:1:2
	0:0:0:0:ffff:0:1.2.3.4 1:2:3:4:5:6:7:: ::2:3:4:5:6:7:8 1:2:3:4:5:6:1.2.3.4 1:2:3:4:5:6:7:8
	' 10.0.0.1 ' $'10.0.0.1\n'
	not-an-ip -rf '' 256.0.0.1 01.2.3.4 1.2.3 1.2.3.4.5 1.2.3.4/24 0x1.2.3.4 fe80::1%eth0 ::: 1::2::3
	:1::2 1::2: 12345::1 g::1 1:2:3:4:5:6:7 1:2:3:4:5:6:7:8:9 1:2:3:4:5:6:7::8 1:2:3:4:5:6:7:1.2.3.4
	::01.2.3.4 ::1.2.3 1.2.3.4:: '[::1]' '10.0.0.1;x' $'10.0.0.1\r' '10.0.0.1 10.0.0.1' '10.0.0.1 10.0.0.2'
	' ' '１.2.3.4')
# a fixed sample of strings over the characters of addresses
RANDOM=14
for i in $(seq 1 60); do
	v=
	for _ in $(seq 0 $((RANDOM % 14))); do
		c='0123456789abcdefABCDEF::..'
		v+=${c:RANDOM % ${#c}:1}
	done
	addresses+=("$v")
done
for v in "${addresses[@]}"; do
	site_case prefill "PREFILL_IPS=$v" "NPULAUNCH_NODE_IP=$v"
	site_case decode "DECODE_IPS=$v" "NPULAUNCH_NODE_IP=$v"
done
# NPULAUNCH_NODE_IP on its own: as the list, its own variable named
for v in 10.0.0.1 10.0.0.01 -rf '10.0.0.1 10.0.0.2' 10.0.0.2 '::ffff:10.0.0.1' '0:0:0:0:0:0:a00:1'; do
	site_case prefill "NPULAUNCH_NODE_IP=$v"
done
site_case prefill PREFILL_IPS=::ffff:10.0.0.1 NPULAUNCH_NODE_IP=0:0:0:0:0:ffff:a00:1
((ncase > 250 && naccepted > 60)) || fail "the site table ran $ncase cases, $naccepted accepted"
# the scripts check what they were rendered with too (a value edited at the top of the script)
sed -i 's|^MODEL_PATH=.*|MODEL_PATH=models/m  # --model-path|' "$T/pd/prefill.sh"
base=(MODEL_PATH=/m DRAFT_MODEL_PATH=/d IFNAME=eth0 PREFILL_IPS=10.0.0.1 DECODE_IPS=10.0.0.2 NPULAUNCH_NODE_IP=10.0.0.1)
run env "${base[@]}" NPULAUNCH_ROOT="$T/root" PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" bash "$T/pd/prefill.sh"
expect_eq "$rc" 2 "an edited MODEL_PATH"
expect_grep "$T/err" "prefill.sh: MODEL_PATH must be an absolute path, not 'models/m'"
# the router checks its lists as the servers do
run env "${base[@]}" PREFILL_IPS='10.0.0.1;x' NPULAUNCH_WAIT_TIMEOUT=0 PATH="$T/root.bin:$PATH" \
	NPL_STUB_LOG="$T/calls" bash "$T/pd/router.sh"
expect_eq "$rc" 2 "router.sh with a bad PREFILL_IPS"
expect_grep "$T/err" "router.sh: PREFILL_IPS '10.0.0.1;x' is not an IPv4 or IPv6 address"

# ---- the scripts' own names are out of reach of recipe and user environment ----------
# Every shell variable name the templates use, parsed out of them: expansions, assignments,
# local lists, read -a, printf -v, loops, arithmetic and subscripts; and the site variables the
# templates insert ({{{var}}}, {{{hosts_var}}}: site.c's table).
template_names() {  # FILE...
	local text line w
	# mustache tags out (they insert the plan's names and values, or numbers), comments out; each
	# grep below reads the whole text at once (they match within a line, as grep does)
	text=$(sed -e 's/{{[^}]*}}}*//g' -e 's/^[[:space:]]*#.*//' -e 's/[[:space:]]#[[:space:]].*//' "$@")
	grep -oE '\$\{?[#!]?[A-Za-z_][A-Za-z0-9_]*' <<<"$text" | sed -E 's/^\$\{?[#!]?//'
	grep -oE '(^|[^A-Za-z0-9_$])[A-Za-z_][A-Za-z0-9_]*\+?=' <<<"$text" | sed -E 's/^[^A-Za-z_]//; s/\+?=$//'
	while IFS= read -r line; do
		if [[ $line =~ ^[[:space:]]*(local|declare)[[:space:]] ]]; then
			for w in ${line#*"${BASH_REMATCH[1]}"}; do
				[[ $w == -* ]] && continue
				w=${w%%=*}
				[[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && printf '%s\n' "$w"
			done
		fi
	done <<<"$text"
	grep -oE '(read|printf)( -[a-z]+( '"''"')?)* -[av] [A-Za-z_][A-Za-z0-9_]*' <<<"$text" | sed -E 's/.* //'
	grep -oE 'for \(\( *[A-Za-z_][A-Za-z0-9_]*|for [A-Za-z_][A-Za-z0-9_]* in' <<<"$text" |
		sed -E 's/^for (\(\( *)?//; s/ in$//'
	grep -oE '\(\([^)]*\)\)|\$\{[A-Za-z_][A-Za-z0-9_]*\[[^]]*\]' <<<"$text" |
		sed -E 's/^\$\{[A-Za-z_][A-Za-z0-9_]*//' |
		grep -oE '(^|[^A-Za-z0-9_#$])[A-Za-z_][A-Za-z0-9_]*' | sed -E 's/^[^A-Za-z_]//'
	sed -n '/keys\[NPL_SITE_COUNT\] = {/,/^};/p' "$NPL_SRC/src/input/site.c" | grep -oE '"[A-Z][A-Z_]*"' | tr -d '"'
}
mapfile -t names < <(template_names "$NPL_SRC"/templates/*.tmpl | sort -u)
# SGLang's own switches the scripts read, never set, to follow the recipe's choice (a recipe
# that sets SGLANG_NUMA_BIND_V2 keeps SGLang's per-rank binding its own): a recipe may set them
honoured=" SGLANG_NUMA_BIND_V2 "
mapfile -t names < <(for n in "${names[@]}"; do [[ $honoured == *" $n "* ]] || echo "$n"; done)
for n in $honoured; do
	grep -q "\${$n+x}" "$NPL_SRC/templates/_affinity.sh.tmpl" || fail "$n is no longer read by the templates: take it off the list"
done
site_vars=" $(sed -n '/keys\[NPL_SITE_COUNT\] = {/,/^};/p' "$NPL_SRC/src/input/site.c" | grep -oE '"[A-Z][A-Z_]*"' | tr -d '"' | tr '\n' ' ')"
((${#names[@]} > 40)) && [[ " ${names[*]} " == *" npl_node "* && " ${names[*]} " == *" PREFILL_HOSTS "* ]] ||
	fail "the names parsed out of the templates look wrong: ${names[*]}"
# each is the scripts' (npl_*), npulaunch's (NPULAUNCH_*), a site variable, or bash's own: the
# classes npulaunch reserves; a template that names a variable otherwise fails here
for n in "${names[@]}"; do
	case $n in
	npl_* | NPULAUNCH_* | BASH_REMATCH | IFS | SECONDS | EPOCHREALTIME | EPOCHSECONDS) ;;
	*) [[ $site_vars == *" $n "* ]] || fail "the templates use '$n': a recipe's env could set it; call it npl_$n" ;;
	esac
done
# and none can be set or unset by a recipe (any layer, any role) or by --env/--unset-env:
# refused with a located message (exit 5), or naming the option (exit 2)
# (in groups of 80: a flush prints the first 100 messages of each step, and counts the rest)
mkdir -p "$T/envr" "$T/unsetr"
: >"$T/env.err"
: >"$T/unset.err"
for ((g = 0; g < ${#names[@]}; g += 80)); do
	group=("${names[@]:g:80}")
	for n in "${group[@]}"; do
		printf '  %s: x\n' "$n"
	done >"$T/env-lines"
	sed "/^env:\$/r $T/env-lines" "$NPL_SRC/recipes/kimi-k2.6/$K20.yaml" >"$T/envr/r.yaml"
	{ cat "$NPL_SRC/recipes/kimi-k2.6/$K20.yaml"; printf 'unset: [%s]\n' "$(IFS=,; echo "${group[*]}")"; } >"$T/unsetr/r.yaml"
	expect_rc 5 "$NPL" --recipes "$T/envr" show $K20
	cat "$T/err" >>"$T/env.err"
	expect_rc 5 "$NPL" --recipes "$T/unsetr" show $K20
	cat "$T/err" >>"$T/unset.err"
done
for n in "${names[@]}"; do
	grep -q "r.yaml:[0-9]*:3: error: environment variable '$n' is reserved: " "$T/env.err" ||
		fail "a recipe's env sets '$n' unrefused"
	grep -q "r.yaml:[0-9]*:[0-9]*: error: environment variable '$n' is reserved: " "$T/unset.err" ||
		fail "a recipe's unset removes '$n' unrefused"
	expect_rc 2 "$NPL" show $K20 --env "$n=x"
	expect_grep "$T/err" "npulaunch: error: --env $n=x: environment variable '$n' is reserved: "
	expect_rc 2 "$NPL" show $KPD --env "prefill:$n=/other"
	expect_rc 2 "$NPL" show $KPD --env "router:$n=/other"
	expect_rc 2 "$NPL" show $K20 --unset-env "$n"
	expect_grep "$T/err" "npulaunch: error: --unset-env $n: environment variable '$n' is reserved: "
done
# what the issue saw: --env MODEL_PATH=/other launched /other while the manifest said /m
expect_rc 2 "$NPL" render $KPD --model-path /m --env prefill:MODEL_PATH=/other -o "$T/other"
expect_grep "$T/err" "--env prefill:MODEL_PATH=/other: environment variable 'MODEL_PATH' is reserved: the scripts hold the site value --model-path in it"
[[ -e $T/other ]] && fail "a reserved --env left output"
# other names stay the recipe's to set, as before
expect_rc 0 "$NPL" show $K20 --env PATH_EXTRA=x --env Npl_x=1 --env MODEL_PATHS=x --unset-env http_proxy
# a recipe's own variable named as a template's local once was (npl_env_join's 'old') reaches
# the server as apply gives it
mkdir -p "$T/oldr"
sed '/^env:$/a\  old: {prepend: /new}' "$NPL_SRC/recipes/kimi-k2.6/$K20.yaml" >"$T/oldr/r.yaml"
expect_rc 0 "$NPL" --recipes "$T/oldr" render $K20 --model-path /m --draft-model-path /d --ifname eth0 -o "$T/old"
rm -f "$T/calls"
run env old=/inherited NPULAUNCH_ROOT="$T/root" PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" bash "$T/old/pd-mixed.sh"
expect_eq "$rc" 0 "pd-mixed.sh with a recipe variable 'old'"
expect_eq "$(jq -r '.env.old' "$T/calls")" "/new:/inherited" "the recipe's 'old' prepended by the script"
rm -f "$T/calls"
run env old=/inherited NPULAUNCH_ROOT="$T/root" PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls" "$NPL" apply "$T/old"
expect_eq "$rc" 0 "apply with a recipe variable 'old'"
expect_eq "$(jq -r '.env.old' "$T/calls")" "/new:/inherited" "the recipe's 'old' prepended by apply"
# The names in the parse are the names the scripts hold when they launch: at exec, every
# variable a rendered script has set (an exec function stands in, exported into the script's
# bash) is one of them, or bash's, or the environment's, or the plan's environment.
# shellcheck disable=SC2016
exec_probe='exec() { compgen -v >"$NPL_VARS"; builtin exec "$@"; }'
for script in pd-mixed:$K20 prefill:$KPD decode:$KPD router:$KPD bench:$KPD; do
	role=${script%%:*} id=${script#*:}
	expect_rc 0 "$NPL" render "$id" -o "$T/names-$role"
	e=(MODEL_PATH=/m DRAFT_MODEL_PATH=/d IFNAME=eth0 PREFILL_IPS=10.0.0.1 DECODE_IPS=10.0.0.2
		NPULAUNCH_ROOT="$T/root" NPULAUNCH_WAIT_TIMEOUT=0 PATH="$T/root.bin:$PATH" NPL_STUB_LOG="$T/calls"
		NPL_VARS="$T/vars")
	if [[ $role == decode ]]; then e+=(NPULAUNCH_NODE_IP=10.0.0.2); else e+=(NPULAUNCH_NODE_IP=10.0.0.1); fi
	rm -f "$T/vars"
	(cd "$T/names-$role" && env "${e[@]}" bash -c "$exec_probe; export -f exec; bash ./$role.sh") >/dev/null 2>&1 ||
		fail "$role.sh with the exec probe failed"
	# bash's own, as a function after a pipeline sees them (FUNCNAME, PIPESTATUS)
	env "${e[@]}" bash -c 'b() { compgen -v; }; true | true; b' >"$T/vars.base"
	jq -r '.roles[] | (.nodes[]?.env[]?.name), (.unset[]?.name)' "$T/names-$role/manifest.json" >>"$T/vars.base"
	[[ -s $T/vars ]] || fail "$role.sh: the exec probe saw nothing"
	while read -r v; do
		grep -qxF "$v" "$T/vars.base" && continue
		[[ " ${names[*]} " == *" $v "* || $v == npl_sysctl_[0-9]* ]] ||
			fail "$role.sh holds '$v' at exec, which the parse of the templates missed"
	done <"$T/vars"
done

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
expect_grep "$T/err" "dup.yaml:1:31: error: 'node-ip' '10.0.0.1' is given twice"
expect_rc 2 env NODE_IPS="10.0.0.1 10.0.0.1" NPULAUNCH_ROOT="$T/root" "$NPL" apply kimi-k2.6-w4a8-16p-in64k-out1k-100ms \
	--model-path /m --draft-model-path /d --ifname eth0 --dry-run
expect_grep "$T/err" "NODE_IPS '10.0.0.1' is given twice"
# a malformed --cpus is a usage error
expect_rc 2 env NPULAUNCH_ROOT="$T/root" "$NPL" apply "$T/full" --dry-run --cpus 0-x
expect_grep "$T/err" "--cpus '0-x' is not a CPU list"

finish
