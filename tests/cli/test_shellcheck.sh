# test_shellcheck.sh: every shipped recipe rendered with every shape of site values the
# scripts can have (none; all; each alone; each left out) gives scripts that
# pass shellcheck. Model paths and the interface are offered to every recipe;
# addresses only to the recipes that need them, as many as their plan asks for
# (show --json: needs). One shellcheck call per combination, over the scripts
# no earlier combination produced byte for byte.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
if ! command -v shellcheck >/dev/null; then
	fail "shellcheck is not installed (the README's first command installs it)"
	finish
fi

scalars=(model-path draft-model-path ifname)
addrs=(node-ip prefill-ip decode-ip)
declare -A value=([model-path]=/models/m [draft-model-path]=/models/d [ifname]=eth0)
declare -A base=([node-ip]=10.0.1. [prefill-ip]=10.0.2. [decode-ip]=10.0.3.)

expect_rc 0 "$NPL" list --json
mapfile -t ids < <(jq -r '.[].id' "$T/out")
((${#ids[@]} >= 22)) || fail "list --json gave ${#ids[@]} recipes"
# per recipe: the site keys it takes, and each address key's count
declare -A keys count
for id in "${ids[@]}"; do
	expect_rc 0 "$NPL" show "$id" --json
	keys[$id]="${scalars[*]}"
	while read -r k n; do
		count[$id:$k]=$n
		keys[$id]+=" $k"
	done < <(jq -r --arg a "${addrs[*]}" \
		'.needs[] | select(.key as $k | $a | split(" ") | index($k)) | "\(.key) \(.count)"' "$T/out")
done

# args ID KEY...: the site flags that give KEY...
args() {
	local id=$1 k i
	shift
	a=()
	for k in "$@"; do
		if [[ -n ${value[$k]:-} ]]; then
			a+=("--$k" "${value[$k]}")
		else
			for ((i = 1; i <= ${count[$id:$k]}; i++)); do
				a+=("--$k" "${base[$k]}$i")
			done
		fi
	done
}

# has ID KEY: whether the recipe takes KEY
has() { [[ " ${keys[$1]} " == *" $2 "* ]]; }

declare -A seen
combo=()  # combination number -> name
ncombos=0 nchecked=0
jobs_max=$(nproc 2>/dev/null || echo 2)
# check NAME: render each recipe with the site values combination NAME picks (none, all,
# only:KEY, without:KEY), and shellcheck the scripts no earlier combination gave, in one
# call in the background (at most one per CPU at a time; results read at the end)
check() {
	local name=$1 id f h dir
	local -a files=() pick mine
	for id in "${ids[@]}"; do
		read -r -a mine <<<"${keys[$id]}"
		pick=()
		case $name in
		none) ;;
		all) pick=("${mine[@]}") ;;
		only:*)
			has "$id" "${name#only:}" || continue
			pick=("${name#only:}")
			;;
		without:*)
			has "$id" "${name#without:}" || continue
			for f in "${mine[@]}"; do
				[[ $f == "${name#without:}" ]] || pick+=("$f")
			done
			;;
		esac
		args "$id" "${pick[@]}"
		dir=$T/r/$name/$id
		expect_rc 0 "$NPL" render "$id" "${a[@]}" -o "$dir"
		while read -r h f; do
			[[ -n ${seen[$h]:-} ]] && continue
			seen[$h]=1
			files+=("$f")
		done < <(sha1sum "$dir"/*.sh)
	done
	ncombos=$((ncombos + 1))
	((${#files[@]})) || return 0
	nchecked=$((nchecked + ${#files[@]}))
	while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n; done
	{
		sc "${files[@]}" >"$T/sc.$ncombos" 2>&1
		echo $? >"$T/sc.$ncombos.rc"
	} &
	combo[ncombos]=$name
}

check all
for k in "${scalars[@]}" "${addrs[@]}"; do
	check "only:$k"
	check "without:$k"
done
# none last: its scripts are render --all's, which cli.render checks early in the same pass;
# with the record of tests/run-all.sh (NPL_SHELLCHECK_CACHE) those found passed by then, here or
# in the combinations that give the same bytes, are not checked twice. The union checked is the
# same in any order (all now takes the bench.sh that none took first).
check none
wait
for n in "${!combo[@]}"; do
	[[ $(<"$T/sc.$n.rc") == 0 ]] || fail "shellcheck, site values ${combo[$n]}: $(head -c 4000 "$T/sc.$n")"
done
# the combinations reached every address key and checked the disaggregated roles
expect_eq "$ncombos" 14 "combinations"
grep -q '^DECODE_IPS=(10.0.3.1)  #' "$T"/r/all/*/router.sh || fail "no router.sh got --decode-ip"
grep -q '^NODE_IPS=(10.0.1.1 10.0.1.2)  #' "$T"/r/all/*/pd-mixed.sh || fail "no pd-mixed.sh got --node-ip twice"
((nchecked > 0)) || fail "no script checked"
finish
