#!/bin/bash
# bench/run.sh: build a Release npulaunch and measure it; prints a Markdown table.
#
#   bench/run.sh [--reps N] [--quick] [--build DIR]
#
# Every row is the median of N runs (default 21; --quick: 3 runs and 1,000
# recipes instead of 10,000, for CI, which does not judge the times) with the
# largest peak RSS of those runs. Ratios compare numbers of the same run.
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
	-h|--help) sed -n '2,12p' "$0"; exit 0 ;;
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
export NPULAUNCH_CACHE=$W/cache
"$src/bench/gen-db.sh" 1000 "$W/db1000"
((big != 1000)) && "$src/bench/gen-db.sh" "$big" "$W/db$big"
# as on a user's machine, the recipe files are older than the cache's 2 s racy window: warm
# runs know them by their stat data and do not read them (docs/performance.md)
sleep 2.1
kimi="kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"

declare -A med rss
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
"$npl" list >/dev/null   # the compiled-in recipes' cache, as after any first run

row version -- "$npl" --version
row list22 -- "$npl" list
row show22 -- "$npl" show "$kimi"
row renderall --setup "rm -rf '$W/all'" -- "$npl" render --all -o "$W/all"
# the lower bound of writing the same folders and files, each through a renamed temporary
"$npl" render --all -o "$W/all" 2>/dev/null
(cd "$W/all" && find . -mindepth 1 -type d -printf 'D %P\n' | sort && find . -type f -printf 'F %P %s\n' | sort) >"$W/all.list"
nfiles=$(grep -c '^F' "$W/all.list")
row floorwrite --setup "rm -rf '$W/fw'" -- "$floor" write "$W/fw" "$W/all.list"
row render1 --setup "rm -rf '$W/one'" -- "$npl" render "$kimi" -o "$W/one"
for n in "${sizes[@]}"; do
	row "cold$n" --setup "rm -f '$W'/cache/recipes-*.cache; '$npl' list >/dev/null" -- \
		"$npl" --recipes "$W/db$n" list
	"$npl" --recipes "$W/db$n" list >/dev/null
	row "list$n" -- "$npl" --recipes "$W/db$n" list
	mid=$(find "$W/db$n" -name "*-g$(printf %05d $((n / 2))).yaml")
	mid=$(basename "$mid" .yaml)
	row "show$n" -- "$npl" --recipes "$W/db$n" show "$mid"
done
# the lower bound of noticing that none of the files changed: one fstatat each
row floorwalk -- "$floor" walk "$W/db$big"

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
		'$timeit' $reps --setup 'sh $W/reset' -- '$npl' tune --apply --root '$R' --hardware ascend-a3 &&
		'$timeit' $reps --setup 'sh $W/reset' -- bash '$W/shell-lines' &&
		'$timeit' $reps --setup 'sh $W/reset' -- '$floor' tune '$R' 1024")
	{ read -r m1 _ _ r1; read -r m2 _ _ r2; read -r m3 _ _ r3; } <<<"$out"
	med[tune]=$m1 rss[tune]=$r1 med[shell]=$m2 rss[shell]=$r2 med[floor]=$m3 rss[floor]=$r3
	# the shell lines really tuned the fake root, not this host
	sh "$W/reset"
	unshare -m bash -c "mount --make-rprivate / && mount --bind '$R/proc/sys' /proc/sys && bash '$W/shell-lines'" >/dev/null
	[[ $(cat "$R/proc/sys/vm/swappiness") == 0 && $(cat "$R/sys/devices/system/cpu/cpu1023/cpufreq/scaling_governor") == performance ]] ||
		{ echo "bench/run.sh: the shell lines did not tune the fake root" >&2; exit 1; }
	tune_rows=1
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
line() { printf '| %s | %s | %s | %s |\n' "$1" "${med[$2]}" "$(mb "${rss[$2]}")" "$3"; }

echo "| what | median ms | peak RSS MB | target |"
echo "| --- | ---: | ---: | --- |"
line "npulaunch --version (start-up)" version ""
line "list (22 recipes)" list22 ""
line "show $kimi" show22 ""
line "render --all (22 recipes, $nfiles files)" renderall "< 10 ms"
line "lower bound: write the same files (static C, no work)" floorwrite ""
line "render $kimi" render1 "< 8 MB peak RSS"
for n in "${sizes[@]}"; do
	line "list, $n recipes, first run (no cache)" "cold$n" ""
	line "list, $n recipes" "list$n" "$([[ $n == 10000 ]] && echo '< 100 ms')"
	line "show one of $n recipes" "show$n" ""
done
line "lower bound: fstatat each of the $big files (static C)" floorwalk ""
if ((tune_rows)); then
	line "tune --apply, 1,024 CPUs + 3 sysctls" tune ""
	line "the seed pages' shell lines, same fake root" shell ""
	line "lower bound: open, write, close per file (static C, no checks)" floor ""
fi
echo
((big != 1000)) && echo "list $big / list 1000: $(ratio "${med[list$big]}" "${med[list1000]}")x the time for $((big / 1000))x the recipes"
if ((tune_rows)); then
	echo "tuning: npulaunch is $(ratio "${med[shell]}" "${med[tune]}")x faster than the shell lines (target >= 10x);" \
		"the lower bound is $(ratio "${med[shell]}" "${med[floor]}")x faster than them"
fi
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), Linux $(uname -r), $(cc --version | head -1)"
echo "runs: $reps per row, medians; $(date -u +%Y-%m-%d)"
