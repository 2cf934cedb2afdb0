#!/bin/bash
# bench/run.sh: build a Release npulaunch and measure it; prints a Markdown table.
#
#   bench/run.sh [--reps N] [--quick] [--build DIR]
#
# Every row is a cold run (npulaunch keeps no state) and the median of N runs (default 21; --quick: 3 runs and 1,000
# recipes instead of 10,000, for CI, which does not judge the times) with the
# largest peak RSS of those runs. Ratios compare numbers of the same run; a row and its
# floor run in turn, round after round, so that a noisy machine weighs on both alike.
# The tuning rows need root for the shell lines' sysctl -w (a private mount
# namespace puts the fake root's /proc/sys in place); without root they are
# skipped. See docs/performance.md for the method and the numbers.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
reps=21 quick=0 build=$src/build-bench
while (($#)); do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--quick) quick=1 reps=3; shift ;;
	--build) build=$2; shift 2 ;;
	-h|--help) sed -n '2,13p' "$0"; exit 0 ;;
	*) echo "bench/run.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
big=10000
((quick)) && big=1000
sizes=(1000)
((big != 1000)) && sizes+=("$big")

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNPL_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target npulaunch >/dev/null
cc -O2 -Wall -Werror -o "$build/timeit" "$src/bench/timeit.c"
# the lower bounds: static when the C library allows it, the fastest start there is
cc -O2 -Wall -Werror -static -o "$build/floor" "$src/bench/floor.c" 2>/dev/null ||
	cc -O2 -Wall -Werror -o "$build/floor" "$src/bench/floor.c"
floor=$build/floor
npl=$build/npulaunch
timeit=$build/timeit

# in memory when /dev/shm is there: sysfs and procfs are, and a disk's journal would
# time ext4, not npulaunch (the tuning rows write 1,024 files)
tmp=${TMPDIR:-/tmp}
[[ -d /dev/shm && -w /dev/shm ]] && tmp=/dev/shm
W=$(mktemp -d "$tmp/npl-bench-XXXXXX")
trap 'rm -rf "$W"' EXIT
"$src/bench/gen-db.sh" 1000 "$W/db1000"
((big != 1000)) && "$src/bench/gen-db.sh" "$big" "$W/db$big"
kimi="kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"

declare -A med rss nfiles
# row KEY [--setup LINE] -- CMD...: measure and remember median and peak RSS
row() {
	local key=$1 out
	shift
	local m r
	out=$("$timeit" "$reps" "$@")
	read -r m _ _ r <<<"$out"
	med[$key]=$m
	rss[$key]=$r
}
# floor_list DIR: the folders and files under DIR, for floor write
floor_list() {
	(cd "$1" && find . -mindepth 1 -type d -printf 'D %P\n' | sort && find . -type f -printf 'F %P %s\n' | sort)
}
site=(--model-path /models/m --draft-model-path /models/d --ifname eth0)

# together "KEY..." TIMEIT-COMMANDS...: measure the commands in turn, round after round, so that
# the machine's noise falls on a row and its floor alike (their ratio is what is judged)
together() {
	local keys k=0 m r
	read -ra keys <<<"$1"
	shift
	while read -r m _ _ r; do
		med[${keys[k]}]=$m
		rss[${keys[k]}]=$r
		k=$((k + 1))
	done < <("$timeit" "$reps" "$@")
	((k == ${#keys[@]})) || { echo "bench/run.sh: timeit measured $k of ${#keys[@]} commands" >&2; exit 1; }
}

# every row is a cold run: npulaunch keeps no state between runs, so each run starts from nothing
together "help version list show render1" -- "$npl" --help ::: -- "$npl" --version ::: -- "$npl" list ::: \
	-- "$npl" show "$kimi" ::: --setup "rm -rf '$W/one'" -- "$npl" render "$kimi" -o "$W/one"
# render --all for every target, each next to the floor of writing its own files
targets=(scripts k8s rbg docker slurm)
for tg in "${targets[@]}"; do
	args=(render --all -o "$W/all-$tg")
	[[ $tg != scripts ]] && args+=(--target "$tg" "${site[@]}")
	"$npl" "${args[@]}" -q 2>/dev/null || { echo "bench/run.sh: render --all --target $tg failed" >&2; exit 1; }
	floor_list "$W/all-$tg" >"$W/all-$tg.list"
	nfiles[$tg]=$(grep -c '^F' "$W/all-$tg.list")
	together "all-$tg floor-$tg" --setup "rm -rf '$W/all-$tg'" -- "$npl" "${args[@]}" -q ::: \
		--setup "rm -rf '$W/fw'" -- "$floor" write "$W/fw" "$W/all-$tg.list"
done
# list and show of each database size and the lower bound of looking at each file (one fstatat
# each), all in turn: the ratio of 10,000 to 1,000 recipes is judged
dbkeys="" cmds=()
for n in "${sizes[@]}"; do
	mid=$(find "$W/db$n" -name "*-g$(printf %05d $((n / 2))).yaml")
	mid=$(basename "$mid" .yaml)
	dbkeys+=" list$n show$n floorwalk$n"
	cmds+=(-- "$npl" --recipes "$W/db$n" list ::: -- "$npl" --recipes "$W/db$n" show "$mid" :::
		-- "$floor" walk "$W/db$n" :::)
done
together "$dbkeys" "${cmds[@]:0:${#cmds[@]}-1}"
# render --all over each generated database, few runs
for n in "${sizes[@]}"; do
	out=$("$timeit" 3 --setup "rm -rf '$W/gen$n'" -- "$npl" --recipes "$W/db$n" render --all -o "$W/gen$n" -q)
	read -r m _ _ r <<<"$out"
	med[gen$n]=$m rss[gen$n]=$r
	rm -rf "$W/gen$n"
done

# every input that is a list, at n and 4n: its duplicate checks and lookups must stay linear
# (issue 25, 7): a site file's addresses and node labels, repeated --set of one flag, distinct
# --set flags, --env variables. Each pair is measured in this run; the ratio is what is judged.
kn=20000 kf=2000
((quick)) && kn=5000 kf=500
for n in "$kn" $((4 * kn)); do
	awk -v n="$n" 'BEGIN { print "prefill-ip:"; for (i = 1; i <= n; i++)
		printf "  - 10.%d.%d.%d\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' >"$W/ips$n.yaml"
	awk -v n="$n" 'BEGIN { print "node-selector:"; for (i = 1; i <= n; i++) printf "  - k%d=v\n", i }' >"$W/labels$n.yaml"
	row "in-ips$n" -- "$npl" validate --site "$W/ips$n.yaml" -q
	row "in-labels$n" -- "$npl" validate --site "$W/labels$n.yaml" -q
done
for n in "$kf" $((4 * kf)); do
	mapfile -t same < <(awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "--set\ncuda-graph-bs-decode=%d\n", i }')
	mapfile -t distinct < <(awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "--set\nx%d=1\n", i }')
	mapfile -t envs < <(awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "--env\nX_%d=1\n", i }')
	row "in-same$n" -- "$npl" show "$kimi" "${same[@]}"
	row "in-distinct$n" -- "$npl" show "$kimi" --allow-unknown "${distinct[@]}"
	row "in-env$n" -- "$npl" show "$kimi" "${envs[@]}"
done

# tuning 1,024 CPUs: npulaunch tune --apply against the seed pages' shell lines
R=$W/root
mkdir -p "$R/proc/sys/vm" "$R/proc/sys/kernel"
for ((c = 0; c < 1024; c++)); do
	mkdir -p "$R/sys/devices/system/cpu/cpu$c/cpufreq"
	# as on real hardware: tune checks that the CPU offers the governor
	echo "conservative ondemand userspace powersave performance schedutil" \
		>"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors"
done
echo 0-1023 >"$R/sys/devices/system/cpu/online"
cat >"$W/reset" <<EOF
printf 'schedutil\n' | tee '$R'/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor >/dev/null
echo 60 >'$R/proc/sys/vm/swappiness'
echo 1 >'$R/proc/sys/kernel/numa_balancing'
echo 500000 >'$R/proc/sys/kernel/sched_migration_cost_ns'
rm -f '$R/run/npulaunch/tune-journal.json'
EOF
for ((c = 0; c < 1024; c++)); do
	echo schedutil >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
done
cat >"$W/shell-lines" <<EOF
echo performance | tee '$R'/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor >/dev/null
sysctl -w vm.swappiness=0
sysctl -w kernel.numa_balancing=0
sysctl -w kernel.sched_migration_cost_ns=50000
EOF
tune_rows=0
if [[ $(id -u) == 0 ]] && command -v unshare >/dev/null && command -v sysctl >/dev/null; then
	# one namespace for both, so that neither pays for it: /proc/sys there is the fake root's
	out=$(unshare -m bash -c "mount --make-rprivate / && mount --bind '$R/proc/sys' /proc/sys &&
		'$timeit' $reps --setup 'sh $W/reset' -- '$npl' tune --apply --root '$R' --hardware ascend-a3 \
			::: --setup 'sh $W/reset' -- bash '$W/shell-lines' ::: --setup 'sh $W/reset' -- '$floor' tune '$R' 1024")
	{ read -r m1 _ _ r1; read -r m2 _ _ r2; read -r m3 _ _ r3; } <<<"$out"
	med[tune]=$m1 rss[tune]=$r1 med[shell]=$m2 rss[shell]=$r2 med[floor]=$m3 rss[floor]=$r3
	# the shell lines really tuned the fake root, not this host
	sh "$W/reset"
	unshare -m bash -c "mount --make-rprivate / && mount --bind '$R/proc/sys' /proc/sys && bash '$W/shell-lines'" >/dev/null
	[[ $(cat "$R/proc/sys/vm/swappiness") == 0 && $(cat "$R/sys/devices/system/cpu/cpu1023/cpufreq/scaling_governor") == performance ]] ||
		{ echo "bench/run.sh: the shell lines did not tune the fake root" >&2; exit 1; }
	tune_rows=1
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# judge RATIO LIMIT: met or missed
judge() { awk -v r="$1" -v l="$2" 'BEGIN { print (r <= l ? "met" : "**missed**") }'; }
# line WHAT KEY [FLOOR-KEY LIMIT]: a row, with its ratio to a floor and the target
line() {
	local r="" t=""
	if [[ -n ${3:-} ]]; then
		r="$(ratio "${med[$2]}" "${med[$3]}")x"
		[[ -n ${4:-} ]] && t="<= ${4}x: $(judge "${r%x}" "$4")"
	fi
	printf '| %s | %s | %s | %s | %s |\n' "$1" "${med[$2]}" "$(mb "${rss[$2]}")" "$r" "$t"
}

nrec=$("$npl" list --ids | wc -l)
echo "| what | median ms | peak RSS MB | ratio to its floor | target |"
echo "| --- | ---: | ---: | ---: | --- |"
line "floor: npulaunch --help" help
line "npulaunch --version" version help
line "list ($nrec recipes)" list help 1.5
line "show $kimi" show help 1.5
line "render $kimi" render1 help 2.0
for tg in "${targets[@]}"; do
	line "render --all --target $tg ($nrec recipes, ${nfiles[$tg]} files)" "all-$tg" "floor-$tg" 2.0
	line "floor: write the same ${nfiles[$tg]} files (static C)" "floor-$tg"
done
for n in "${sizes[@]}"; do
	line "list, $n recipes in a --recipes folder" "list$n" "floorwalk$n"
	line "show one of $n recipes" "show$n" "floorwalk$n"
	line "render --all, $n recipes (3 runs)" "gen$n"
	line "floor: fstatat each of the $n files (static C)" "floorwalk$n"
done
# inline WHAT KIND N: a row of an input size, with the ratio of 4N to N
inline() {
	local r
	r=$(ratio "${med[in-$2$((4 * $3))]}" "${med[in-$2$3]}")
	line "$1, $3" "in-$2$3"
	printf '| %s | %s | %s | %s | %s |\n' "$1, $(($3 * 4))" "${med[in-$2$(($3 * 4))]}" \
		"$(mb "${rss[in-$2$(($3 * 4))]}")" "${r}x the time of $3" "<= 5x (linear 4, quadratic 16): $(judge "$r" 5)"
}
inline "validate --site, prefill-ip addresses" ips "$kn"
inline "validate --site, node-selector labels" labels "$kn"
inline "show, --set of one flag repeated" same "$kf"
inline "show, --set of distinct flags (unknown: did-you-mean each)" distinct "$kf"
inline "show, --env of distinct variables" env "$kf"
if ((tune_rows)); then
	line "tune --apply, 1,024 CPUs + 3 sysctls" tune floor 1.5
	line "the seed pages' shell lines, same fake root" shell floor
	line "floor: open, write, close per file (static C, no checks)" floor
fi
echo
if ((big != 1000)); then
	for k in list show gen; do
		r=$(ratio "${med[$k$big]}" "${med[${k}1000]}")
		echo "linear: $k $big / $k 1000: ${r}x the time for $((big / 1000))x the recipes ($(judge "$r" 11) <= 11)"
	done
fi
if ((tune_rows)); then
	echo "tuning: npulaunch is $(ratio "${med[shell]}" "${med[tune]}")x faster than the shell lines;" \
		"the floor is $(ratio "${med[shell]}" "${med[floor]}")x faster than them"
fi
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), Linux $(uname -r), $(cc --version | head -1)"
echo "runs: $reps per row, medians (render --all over the generated databases: 3); $(date -u +%Y-%m-%d)"
