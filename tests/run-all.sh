#!/bin/sh
# The whole test suite, as CI runs it: install what is missing, then build and
# run every test plainly, build gcc Release and gcc Debug with their unit
# tests, run every test under AddressSanitizer+UndefinedBehaviorSanitizer (a clang Debug build),
# run each libFuzzer target briefly, run the benchmark quickly (bench/run.sh
# --quick: it must work; its times are for docs/performance.md, not a gate), and (when run as root) the tests
# labelled user, whose outcome can differ for an ordinary user, once more as one. Warnings are errors.
# Build folders: build/, build-gcc-Release/ (the benchmark's too), build-gcc-Debug/, build-asan/, build-tsan/, build-fuzz/
# (and /tmp/npulaunch-user-build).
set -eu
cd "$(dirname "$0")/.."
tests/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n==== %s\n' "$*"; }
# The verdict of shellcheck on a script depends on its bytes, not on how npulaunch was built: the passes
# below share one record of the scripts it passed (tests/cli/lib.sh: sc), made for this run only
NPL_SHELLCHECK_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/npl-shellcheck-XXXXXX")
chmod 755 "$NPL_SHELLCHECK_CACHE"
export NPL_SHELLCHECK_CACHE
trap 'rm -rf "$NPL_SHELLCHECK_CACHE"' EXIT

step "plain build and tests"
cmake -S . -B build -DNPL_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

step "the other build types, with the tests: gcc Release (-O3 finds what -O2 does not) and gcc Debug; unit tests only"
for cfg in gcc:Release gcc:Debug; do
	cc=${cfg%%:*} type=${cfg#*:}
	cmake -S . -B "build-$cc-$type" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$type" -DNPL_WERROR=ON >/dev/null
	cmake --build "build-$cc-$type" -j"$jobs"
	ctest --test-dir "build-$cc-$type" --output-on-failure -j"$jobs" -L unit
done

step "AddressSanitizer + UndefinedBehaviorSanitizer: clang Debug"
# clang's: the same sanitizers, and a process of it starts and exits (the leak scan) in about two
# thirds of gcc's time (npulaunch --help 59 ms against 80 to 94 on the AMD machine of 2026-12-07),
# which the thousands of runs of the golden and cli tests add up (this pass 791 s against 850 s
# there, side by side; the spread between two runs is about as large); gcc Debug is built and
# unit-tested above
cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang -DNPL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DNPL_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
# The verdict of shellcheck on the rendered scripts and on the project's own shell does not depend
# on how npulaunch was built: the plain pass runs both, the sanitizer and ordinary-user passes skip them
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir build-asan --output-on-failure -j"$jobs" -E '^(cli\.shellcheck|lint\.shell)$'

step "ThreadSanitizer: render --all's workers (cli.jobs with a clang -fsanitize=thread npulaunch)"
cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang -DNPL_TSAN=ON -DNPL_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug -DNPL_WERROR=ON >/dev/null
cmake --build build-tsan -j"$jobs" --target npulaunch
# a report is an exit status of 66 and text on standard error: cli.jobs compares both
TSAN_OPTIONS=halt_on_error=1:exitcode=66 NPL_JOBS_COUNTS=4 NPL="$PWD/build-tsan/npulaunch" NPL_SRC="$PWD" bash tests/cli/test_jobs.sh

step "fuzzing: each libFuzzer target for 20s (the longer run: tests/fuzz/run.sh build-fuzz 600)"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DNPL_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$jobs"
tests/fuzz/run.sh build-fuzz 20

step "benchmark, quick: a Release build (warnings are errors there too) and its table; times are not judged"
bench/run.sh --quick --build build-gcc-Release

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	step "as an ordinary user (nobody): the tests labelled user, whose outcome can differ for one"
	ub=/tmp/npulaunch-user-build
	rm -rf "$ub"
	setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp TMPDIR=/tmp sh -c \
		"cmake -S '$PWD' -B '$ub' >/dev/null && cmake --build '$ub' -j$jobs >/dev/null && ctest --test-dir '$ub' --output-on-failure -j$jobs -L user"
	rm -rf "$ub"
fi
step "all tests passed"
