#!/bin/sh
# Build the seed corpora from the repository and run each libFuzzer target.
#   tests/fuzz/run.sh BUILD_DIR SECONDS    (BUILD_DIR configured with -DNPL_FUZZ=ON, clang)
# Corpora and crashes go to BUILD_DIR/fuzz/; a finding exits non-zero.
set -eu
build=${1:?usage: run.sh BUILD_DIR SECONDS}
secs=${2:?usage: run.sh BUILD_DIR SECONDS}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/fuzz
mkdir -p "$work/recipe" "$work/site" "$work/template" "$work/journal" "$work/results" "$work/page" "$work/manifest" \
	"$work/crashes"

# recipes: each shipped recipe with its defaults, hardware and model as one file,
# the tests' own recipes, and the bad ones
for r in "$src"/recipes/*/*.yaml; do
	case $r in */model.yaml | */hardware/* | */engine/*) continue ;; esac
	model=$(dirname "$r")/model.yaml
	hw=$src/recipes/hardware/$(sed -n 's/^hardware: //p' "$r").yaml
	if [ ! -f "$model" ] || [ ! -f "$hw" ]; then continue; fi
	{ cat "$src/recipes/defaults.yaml"; echo ---; cat "$hw"; echo ---; cat "$model"; echo ---; cat "$r"; } \
		>"$work/recipe/$(basename "$r")"
done
for r in "$src"/tests/data/recipes/*/*/*.yaml "$src"/tests/data/recipes/*/*.yaml; do
	[ -f "$r" ] && cp "$r" "$work/recipe/t-$(echo "$r" | md5sum | cut -c1-8).yaml"
done
printf 'model-path: /m\nifname: eth0\nprefill-ip: [10.0.0.1, fe80::1]\n' >"$work/site/a.yaml"
# shellcheck disable=SC2016  # a literal $(x) in the seed
printf 'node-ip: 10.0.0.1\ndraft-model-path: "/d $(x)"\ndecode-ip: [10.0.0.2]\n' >"$work/site/b.yaml"
cp "$src"/templates/*.tmpl "$work/template/"
# journals: one of each format, as tune and the scripts write them
printf '{\n\t"format": "npulaunch-tune-journal/2",\n\t"root": "/",\n\t"entries": [\n\t\t{"name": "vm.swappiness", "path": "/proc/sys/vm/swappiness", "base64": "NjAK"},\n\t\t{"name": "cpu0 governor", "path": "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "base64": "c2NoZWR1dGlsCg=="}\n\t]\n}\n' >"$work/journal/v2.json"
# apply's: an interrupt's file and irqbalance, stopped while the interrupts are bound
printf '{\n\t"format": "npulaunch-tune-journal/2",\n\t"root": "/",\n\t"entries": [\n\t\t{"name": "irq 2753 (device 0 sq_send_trigger_irq)", "path": "/proc/irq/2753/smp_affinity_list", "base64": "MC0xOTEK"},\n\t\t{"name": "irqbalance.service", "unit": "irqbalance.service", "state": "active"}\n\t]\n}\n' >"$work/journal/irq.json"
printf '{"format": "npulaunch-tune-journal/1", "root": "/tmp/root", "entries": [{"name": "x", "path": "/tmp/root/proc/sys/kernel/numa_balancing", "contents": "1\\n"}]}\n' >"$work/journal/v1.json"

# results: bench_serving's records as the tests have them (a pass, misses, nothing, broken)
cp "$src"/tests/data/bench/*.jsonl "$work/results/"
# pages: every best-practice page of the test data, in its three forms
for p in "$src"/tests/data/pages/*/*.mdx "$src"/tests/data/pages/*/*.txt; do
	cp "$p" "$work/page/$(basename "$(dirname "$p")")-$(basename "$p")"
done

# manifests: bundles of a PD-disaggregated and a PD-mixed recipe for each target, as render writes them
for t in scripts k8s docker slurm; do
	for id in deepseek-r1-w4a8-1p1d-16p-in3k5-out1k5-50ms qwen3-8b-w8a8-1p-in3k5-out1k5-5ms; do
		out=$work/bundle-$t-$id
		rm -rf "$out"
		"$build/npulaunch" render "$id" --target "$t" -o "$out" --model-path /m --draft-model-path /d \
			--ifname eth0 --image img:1 --slurm-partition p >/dev/null 2>&1 || true
		[ ! -f "$out/manifest.json" ] || cp "$out/manifest.json" "$work/manifest/$t-$id.json"
	done
done

# the targets side by side, as many at a time as there are CPUs (each fuzzes on one), each for
# SECONDS as before; their reports in order once all are done
targets="recipe site template journal results page manifest"
for t in $targets; do rm -f "$work/$t.rc"; done
jobs=$(nproc 2>/dev/null || echo 1)
n=0
for t in $targets; do
	{
		rc=0
		"$build/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="$work/crashes/$t-" "$work/$t" >"$work/$t.log" 2>&1 || rc=$?
		echo "$rc" >"$work/$t.rc"
	} &
	n=$((n + 1))
	[ $((n % jobs)) -ne 0 ] || wait
done
wait
rc=0
for t in $targets; do
	echo "fuzz_$t: ${secs}s"
	[ "$(cat "$work/$t.rc")" = 0 ] || rc=1
	grep -E '^stat::number_of_executed_units|^stat::new_units_added|^#[0-9]+.*DONE' "$work/$t.log" || true
	if grep -q -E 'ERROR: (libFuzzer|AddressSanitizer|UndefinedBehaviorSanitizer)|runtime error' "$work/$t.log"; then
		rc=1
		tail -40 "$work/$t.log"
	fi
done
exit $rc
