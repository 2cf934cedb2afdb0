# Nothing lost, nothing escapes: tune and apply touch only the tuning files under the root, and
# the journal keeps every original. A hostile table on fake roots: tampered journals and
# manifests, symbolic links and FIFOs, journals that are no journal; a wider second apply, files
# over 4096 bytes or with NUL bytes, NPULAUNCH_ROOT's rule, an env file that leaves a program in
# the background, and the rendered scripts' journal and --revert on 1,024 CPUs. Every command
# that could hang runs under timeout.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
TO=20   # seconds before a hanging command counts as hung
ID=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
SITE=(--model-path /m --draft-model-path /d --ifname eth0)
export NPL_STUB_LOG=$T/calls
unset NPULAUNCH_ROOT

# fresh ROOT: a new fake root and a victim file outside it
fresh() {
	rm -rf "$T/r" "$T/r.bin" "$T/victim" "$T/outside"
	make_root "$T/r"
	printf 'precious\n' >"$T/victim"
	printf 'outside\n' >"$T/outside"
	R=$T/r J=$T/r/run/npulaunch/tune-journal.json
	before=$(state_of "$R")
}
intact() {  # WHAT: the victim and the outside file are as they were
	expect_eq "$(cat "$T/victim")" precious "$1: the file outside the root"
	expect_eq "$(cat "$T/outside")" outside "$1: the file a link names"
}
# v1 JOURNAL-PATH ROOT PATH CONTENTS: a journal of the old format with one entry
v1() {
	jq -n --arg root "$2" --arg path "$3" --arg c "$4" \
		'{format: "npulaunch-tune-journal/1", root: $root, entries: [{name: "x", path: $path, contents: $c}]}' >"$1"
}

# ---- 1. a tampered journal: revert writes only tuning files of its own root ----
fresh
mkdir -p "$R/run/npulaunch"
for p in "$T/victim" "$R/../victim" "$R/proc/sys/../../../victim" "$R/etc/motd"; do
	v1 "$J" "$R" "$p" X
	expect_rc 1 timeout $TO "$NPL" tune --revert --root "$R"
	expect_grep "$T/err" "$J: error: entry 1 (x): "
	intact "revert of a journal naming $p"
	[[ -e $J ]] || fail "a refused journal was removed ($p)"
done
[[ -e $R/etc/motd ]] && fail "revert created $R/etc/motd"
# the same in the current format
jq -n --arg root "$R" '{format: "npulaunch-tune-journal/2", root: $root, entries: [{name: "x", path: "/../victim", base64: "WAo="}]}' >"$J"
expect_rc 1 timeout $TO "$NPL" tune --revert --root "$R"
expect_grep "$T/err" "entry 1 (x): a path that is not a tuning file"
intact "a /2 journal naming /../victim"
# the journal of another root
mkdir -p "$T/r2/proc/sys/vm"
echo 60 >"$T/r2/proc/sys/vm/swappiness"
v1 "$J" "$T/r2" "$T/r2/proc/sys/vm/swappiness" X
expect_rc 1 timeout $TO "$NPL" tune --revert --root "$R"
expect_grep "$T/err" "the tuning journal is for the root $T/r2, not $R"
expect_eq "$(cat "$T/r2/proc/sys/vm/swappiness")" 60 "revert wrote another root's file"
# a FIFO among the files: refused, no hang
rm "$R/proc/sys/vm/swappiness"
mkfifo "$R/proc/sys/vm/swappiness"
v1 "$J" "$R" "$R/proc/sys/vm/swappiness" "60
"
expect_rc 1 timeout $TO "$NPL" tune --revert --root "$R"
expect_grep "$T/err" "not a regular file"
[[ -e $J ]] || fail "revert removed the journal after refusing a FIFO"

# ---- 2. a tampered manifest: apply in a bundle writes only tuning files ----
fresh
expect_rc 0 "$NPL" render $ID "${SITE[@]}" -o "$T/bundle"
cp "$T/bundle/manifest.json" "$T/manifest.orig"
for p in /../victim /proc/sys/../../../victim /proc/sys/kernel/core_pattern /etc/passwd; do
	jq --arg p "$p" '(.roles[] | select(.tuning.sysctl) | .tuning.sysctl[0].paths) = [$p]' \
		"$T/manifest.orig" >"$T/bundle/manifest.json"
	rm -f "$T/calls"
	(cd "$T/bundle" && PATH="$R.bin:$PATH" timeout $TO "$NPL" apply --root "$R") >"$T/out" 2>"$T/err"
	[[ $? == 1 ]] || fail "apply of a manifest with the path $p: exit $?, want 1: $(cat "$T/err")"
	expect_grep "$T/err" "npulaunch: ./manifest.json: error: sysctl vm.swappiness: the path '$p' is not a tuning file"
	expect_grep "$T/err" "apply: nothing was changed"
	intact "apply of a manifest with the path $p"
	expect_eq "$(state_of "$R")" "$before" "the host after a refused manifest ($p)"
	[[ -e $T/calls ]] && fail "a refused manifest launched ($p)"
done
cp "$T/manifest.orig" "$T/bundle/manifest.json"

# ---- 22. what a manifest or the host holds reaches the terminal escaped ----
fresh
expect_rc 0 "$NPL" render $ID "${SITE[@]}" -o "$T/esc-bundle"
jq '(.roles[0].nodes[0].env) += [{"name": "X\u001b]0;t\u0007", "value": "v\u001b[2J", "origin": {"layer": "rule", "rule": "x"}}]' \
	"$T/esc-bundle/manifest.json" >"$T/esc.json" && mv "$T/esc.json" "$T/esc-bundle/manifest.json"
printf '60\033[2J\n' >"$R/proc/sys/vm/swappiness"
(cd "$T/esc-bundle" && PATH="$R.bin:$PATH" "$NPL" apply --root "$R" --dry-run) >"$T/out" 2>"$T/err"
[[ $? == 0 ]] || fail "apply --dry-run of a manifest with control characters: $(cat "$T/err")"
grep -q $'\033' "$T/out" && fail "apply --dry-run printed an escape character: $(cat -v "$T/out" | head -c 600)"
expect_grep "$T/out" "export X\x1b]0;t\x07=\$'v\x1b[2J'"
expect_grep "$T/out" "60\x1b[2J -> 0"
run "$NPL" tune --check --root "$R"
grep -q $'\033' "$T/out" && fail "tune --check printed an escape character"
expect_grep "$T/out" "60\x1b[2J -> 0"

# ---- 3. symbolic links: none is followed out of the tuning files ----
fresh
for target in "$T/outside" ../../../../outside ../../../etc/motd; do
	rm -f "$R/proc/sys/vm/swappiness"
	ln -sfn "$target" "$R/proc/sys/vm/swappiness"
	expect_rc 1 timeout $TO "$NPL" tune --apply --root "$R"
	expect_grep "$T/err" "cannot use vm.swappiness: a symbolic link leads out of the tuning files"
	expect_grep "$T/err" "tune: nothing was changed"
	intact "tune --apply through the link -> $target"
done
[[ -e $R/etc/motd ]] && fail "apply created a file through a link"
# a folder on the way that is a link out of the root
rm -f "$R/proc/sys/vm/swappiness"
mkdir -p "$T/elsewhere/vm"
echo 60 >"$T/elsewhere/vm/swappiness"
rm -rf "$R/proc/sys/vm"
ln -s "$T/elsewhere/vm" "$R/proc/sys/vm"
expect_rc 1 timeout $TO "$NPL" tune --apply --root "$R"
expect_eq "$(cat "$T/elsewhere/vm/swappiness")" 60 "apply through a linked folder"
# and the scripts refuse it before any change
expect_rc 0 "$NPL" render $ID "${SITE[@]}" -o "$T/link-bundle"
rm -f "$T/calls"
state=$(cat "$R"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)
expect_rc 1 env PATH="$R.bin:$PATH" NPULAUNCH_ROOT="$R" timeout $TO bash "$T/link-bundle/pd-mixed.sh"
expect_grep "$T/err" "$R/proc/sys/vm/swappiness: a symbolic link leads out of the tuning files (to $T/elsewhere/vm/swappiness): refused"
expect_eq "$(cat "$T/elsewhere/vm/swappiness")" 60 "a script through a linked folder"
expect_eq "$(cat "$R"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)" "$state" "a script tuned before refusing a link"
[[ -e $T/calls || -e $J ]] && fail "a script launched or journaled through a linked folder"
# the kernel's own links (cpuN/cpufreq -> ../cpufreq/policyN) are followed, and revert is exact
fresh
for c in 0 1; do
	mkdir -p "$R/sys/devices/system/cpu/cpufreq"
	mv "$R/sys/devices/system/cpu/cpu$c/cpufreq" "$R/sys/devices/system/cpu/cpufreq/policy$c"
	ln -s ../cpufreq/policy$c "$R/sys/devices/system/cpu/cpu$c/cpufreq"
done
for mode in openat2 walk; do
	if [[ $mode == walk ]]; then export NPL_TEST_NO_OPENAT2=1; fi
	expect_rc 0 "$NPL" tune --apply --root "$R"
	expect_grep "$T/err" "changed 5 of 5 settings"
	expect_eq "$(cat "$R/sys/devices/system/cpu/cpufreq/policy1/scaling_governor")" performance "$mode: the governor through the kernel's link"
	expect_rc 0 "$NPL" tune --revert --root "$R"
	expect_eq "$(state_of "$R")" "$before" "$mode: revert through the kernel's link"
	# and a governor behind the kernel's link that links out is refused
	mv "$R/sys/devices/system/cpu/cpufreq/policy1/scaling_governor" "$T/gov1"
	ln -s "$T/outside" "$R/sys/devices/system/cpu/cpufreq/policy1/scaling_governor"
	expect_rc 1 timeout $TO "$NPL" tune --apply --root "$R"
	expect_grep "$T/err" "cpu1 governor: a symbolic link leads out of the tuning files"
	intact "$mode: a governor linked out"
	rm "$R/sys/devices/system/cpu/cpufreq/policy1/scaling_governor"
	mv "$T/gov1" "$R/sys/devices/system/cpu/cpufreq/policy1/scaling_governor"
done
unset NPL_TEST_NO_OPENAT2

# ---- 20. FIFOs and other files that are not regular: refused before any change, no hang ----
for f in proc/sys/vm/swappiness sys/devices/system/cpu/cpu1/cpufreq/scaling_governor \
	sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors; do
	fresh
	rm "$R/$f"
	mkfifo "$R/$f"
	expect_rc 1 timeout $TO "$NPL" tune --apply --root "$R"
	expect_grep "$T/err" "not a regular file (a FIFO, a device, a socket or a folder): refused"
	expect_grep "$T/err" "tune: nothing was changed"
	[[ -e $J ]] && fail "a refused FIFO ($f) left a journal"
	# the scripts refuse it too
	expect_rc 0 "$NPL" render $ID "${SITE[@]}" -o "$T/fifo-bundle"
	rm -f "$T/calls"
	expect_rc 1 env PATH="$R.bin:$PATH" NPULAUNCH_ROOT="$R" timeout $TO bash "$T/fifo-bundle/pd-mixed.sh"
	expect_grep "$T/err" "not a regular file"
	[[ -e $T/calls ]] && fail "a script launched with a FIFO as $f"
done
fresh
rm "$R/proc/sys/vm/swappiness"
mkdir "$R/proc/sys/vm/swappiness"
expect_rc 1 timeout $TO "$NPL" tune --apply --root "$R"
expect_grep "$T/err" "cannot use vm.swappiness: not a regular file"

# ---- 4. a second apply with a wider profile journals the new files ----
fresh
echo 0 >"$R/sys/devices/system/cpu/online"
expect_rc 0 "$NPL" tune --apply --root "$R"
expect_grep "$T/err" "changed 4 of 4 settings"
echo 0-1 >"$R/sys/devices/system/cpu/online"
expect_rc 0 "$NPL" tune --apply --root "$R"
expect_grep "$T/err" "changed 1 of 5 settings"
expect_eq "$(jq '.entries | length' "$J")" 5 "the journal gains the new file"
expect_rc 0 "$NPL" tune --revert --root "$R"
expect_eq "$(state_of "$R")" "$before" "revert after a wider second apply"
# first value wins: a file changed between two applies goes back to the first value
fresh
expect_rc 0 "$NPL" tune --apply --root "$R"
echo 33 >"$R/proc/sys/vm/swappiness"
expect_rc 0 "$NPL" tune --apply --root "$R"
expect_rc 0 "$NPL" tune --revert --root "$R"
expect_eq "$(state_of "$R")" "$before" "revert to the first values"

# ---- 5. a journal path that holds no journal stops apply before the first change ----
fresh
mkdir -p "$T/jdir"
: >"$T/jempty"
echo '{"format": "npulaunch-tune-journal/2"}' >"$T/jhalf"
mkdir -p "$T/jfile"
: >"$T/jfile/f"
for j in "$T/jempty" "$T/jdir" /dev/full "$T/jhalf" "$T/jfile/f/journal.json"; do
	expect_rc 1 timeout $TO "$NPL" tune --apply --root "$R" --journal "$j"
	expect_grep "$T/err" "tune: every change was undone"
	expect_eq "$(state_of "$R")" "$before" "the host after apply with the journal $j"
	rm -f "$T/calls"
	expect_rc 1 env PATH="$R.bin:$PATH" timeout $TO "$NPL" apply $ID "${SITE[@]}" --root "$R" --journal "$j"
	expect_eq "$(state_of "$R")" "$before" "the host after apply (launch) with the journal $j"
	[[ -e $T/calls ]] && fail "apply launched with the journal $j"
done
[[ -s $T/jempty ]] && fail "the empty journal was written"
# a default journal that is a link is refused as well
mkdir -p "$R/run/npulaunch"
ln -s "$T/victim" "$J"
expect_rc 1 timeout $TO "$NPL" tune --apply --root "$R"
expect_grep "$T/err" "it is a symbolic link: refused"
intact "a journal that is a link"
rm "$J"

# ---- 6. a damaged journal restores nothing, fails, and is kept ----
for damage in '.entries[3] |= (if has("base64") then .base64 = 5 else .contents = 5 end)' \
	'del(.entries[2].path)' '.entries[1] = 7' '.entries[0].path = "/proc/sys/vm/../../../victim"' \
	'.entries += [.entries[0]]' '.entries[4].base64 = "not base64!"' '.root = "/"' '.format = "x"' \
	'.entries[4].base64 = "WAp="' '.entries[4].base64 = "WAo"' '.entries[4].base64 = " WAo="'; do
	# (the last three: stray low bits, no padding, a blank: base64 that is not strict and canonical)
	fresh
	expect_rc 0 "$NPL" tune --apply --root "$R"
	tuned=$(state_of "$R")
	jq "$damage" "$J" >"$J.new" && mv "$J.new" "$J"
	cp "$J" "$T/damaged"
	expect_rc 1 "$NPL" tune --revert --root "$R"
	expect_grep "$T/err" "$J: error: "
	expect_eq "$(state_of "$R")" "$tuned" "revert of a journal damaged by $damage restored something"
	cmp -s "$J" "$T/damaged" || fail "revert of a journal damaged by $damage did not keep it"
	# apply refuses it too, before any change
	echo 60 >"$R/proc/sys/vm/swappiness"
	expect_rc 1 "$NPL" tune --apply --root "$R"
	expect_eq "$(cat "$R/proc/sys/vm/swappiness")" 60 "apply with a journal damaged by $damage"
	intact "a journal damaged by $damage"
done
# a file that cannot be restored: nothing is, and the journal stays
fresh
expect_rc 0 "$NPL" tune --apply --root "$R"
tuned=$(state_of "$R")
rm "$R/proc/sys/kernel/numa_balancing"
expect_rc 1 "$NPL" tune --revert --root "$R"
expect_grep "$T/err" "cannot restore kernel.numa_balancing (entry 4): No such file or directory"
expect_grep "$T/err" "nothing was restored; the journal is kept"
[[ -e $J ]] || fail "a failed revert removed the journal"
echo 0 >"$R/proc/sys/kernel/numa_balancing"
expect_rc 0 "$NPL" tune --revert --root "$R"
expect_eq "$(state_of "$R")" "$before" "revert once the file is back"

# ---- 7. any bytes round-trip: over 4096 bytes, NUL bytes ----
fresh
{ printf '60\n'; head -c 6000 /dev/zero | tr '\0' 'y'; printf '\0tail\0\n'; } >"$R/proc/sys/vm/swappiness"
printf '1\0\0\n' >"$R/proc/sys/kernel/numa_balancing"
cp "$R/proc/sys/vm/swappiness" "$T/swap.orig"
cp "$R/proc/sys/kernel/numa_balancing" "$T/numa.orig"
expect_rc 0 "$NPL" tune --apply --root "$R"
expect_eq "$(cat "$R/proc/sys/vm/swappiness")" 0 "apply over a large file"
expect_rc 0 "$NPL" tune --revert --root "$R"
cmp "$R/proc/sys/vm/swappiness" "$T/swap.orig" >/dev/null || fail "a file of 6,009 bytes with NUL bytes did not round-trip"
cmp "$R/proc/sys/kernel/numa_balancing" "$T/numa.orig" >/dev/null || fail "a file with NUL bytes did not round-trip"

# ---- 10. NPULAUNCH_ROOT: absolute or unset; empty is / ----
fresh
mkdir -p "$T/cwd"
make_root "$T/cwd/relroot"
rel_before=$(state_of "$T/cwd/relroot")
expect_rc 0 "$NPL" render $ID "${SITE[@]}" -o "$T/relb"
rm -f "$T/calls"
(cd "$T/cwd" && PATH="$R.bin:$PATH" NPULAUNCH_ROOT=relroot timeout $TO bash "$T/relb/pd-mixed.sh") >"$T/out" 2>"$T/err"
[[ $? == 2 ]] || fail "a script with NPULAUNCH_ROOT=relroot did not stop: $(cat "$T/err")"
expect_grep "$T/err" "NPULAUNCH_ROOT must be an absolute path, not 'relroot'"
expect_eq "$(state_of "$T/cwd/relroot")" "$rel_before" "a script tuned ./relroot"
[[ -e $T/calls ]] && fail "a script with a relative NPULAUNCH_ROOT launched"
(cd "$T/cwd" && NPULAUNCH_ROOT=relroot "$NPL" tune --apply) >"$T/out" 2>"$T/err"
[[ $? == 2 ]] || fail "tune with NPULAUNCH_ROOT=relroot did not stop"
expect_grep "$T/err" "NPULAUNCH_ROOT must be an absolute path, not 'relroot'"
(cd "$T/cwd" && NPULAUNCH_ROOT=relroot "$NPL" apply $ID "${SITE[@]}" --dry-run) >"$T/out" 2>"$T/err"
[[ $? == 2 ]] || fail "apply with NPULAUNCH_ROOT=relroot did not stop"
expect_grep "$T/err" "NPULAUNCH_ROOT must be an absolute path, not 'relroot'"
# every command that reads the node under the root says the same, before it reads anything
# (status --affinity and show --explain took a relative one as it came, or as /)
for c in "preflight $ID" "status --affinity $ID" "show $ID --explain"; do
	# shellcheck disable=SC2086 # c is words
	(cd "$T/cwd" && NPULAUNCH_ROOT=relroot "$NPL" $c "${SITE[@]}") >"$T/out" 2>"$T/err"
	rc=$?
	[[ $rc == 2 ]] || fail "$c with NPULAUNCH_ROOT=relroot exited $rc, not 2: $(cat "$T/err")"
	expect_grep "$T/err" "NPULAUNCH_ROOT must be an absolute path, not 'relroot'"
	[[ -s $T/out ]] && fail "$c with NPULAUNCH_ROOT=relroot printed: $(head -c 300 "$T/out")"
done
(cd "$T/cwd" && NPULAUNCH_ROOT=relroot "$NPL" status --affinity $ID "${SITE[@]}" --root /) >"$T/out" 2>"$T/err"
expect_nogrep "$T/err" "absolute"
expect_eq "$(state_of "$T/cwd/relroot")" "$rel_before" "tune tuned ./relroot"
# empty: the host's own files (read only here)
run env NPULAUNCH_ROOT= "$NPL" tune --check
[[ $rc == 0 || $rc == 1 ]] || fail "tune --check with NPULAUNCH_ROOT= exited $rc: $(cat "$T/err")"
expect_nogrep "$T/err" "absolute"
run env NPULAUNCH_ROOT= "$NPL" apply $ID "${SITE[@]}" --dry-run
expect_nogrep "$T/err" "absolute"

# ---- 21. an env file that starts a program in the background does not hold apply ----
fresh
cat >>"$R/usr/local/Ascend/ascend-toolkit/set_env.sh" <<EOF
sleep 300 &
echo \$! >"$T/bg.pid"
EOF
rm -f "$T/calls"
expect_rc 0 env PATH="$R.bin:$PATH" timeout $TO "$NPL" apply $ID "${SITE[@]}" --root "$R"
# under timeout, apply returned while the program it could have waited for still runs
kill -0 "$(cat "$T/bg.pid")" 2>/dev/null || fail "the env file's background program is gone: did apply wait for it?"
[[ -e $T/calls ]] || fail "apply did not launch with a background program in an env file"
[[ -s $T/bg.pid ]] && kill "$(cat "$T/bg.pid")" 2>/dev/null
expect_rc 0 "$NPL" tune --revert --root "$R"

# ---- 8. the rendered scripts journal, and are undone by tune --revert and by --revert ----
B=$T/big
mkdir -p "$B"/sys/devices/system/cpu/cpu{0..1023}/cpufreq   # one mkdir, not 1,024
for c in $(seq 0 1023); do
	echo schedutil >"$B/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
	echo "performance schedutil" >"$B/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors"
done
echo 0-1023 >"$B/sys/devices/system/cpu/online"
mkdir -p "$B/proc/sys/vm" "$B/proc/sys/kernel" "$B/usr/local/Ascend"
cp -a "$R/usr/local/Ascend/." "$B/usr/local/Ascend/"
sed -i '/sleep 300/d; /bg.pid/d' "$B/usr/local/Ascend/ascend-toolkit/set_env.sh"
printf '60\n' >"$B/proc/sys/vm/swappiness"
printf '1\n' >"$B/proc/sys/kernel/numa_balancing"
{ printf '500000\n'; head -c 5000 /dev/zero; } >"$B/proc/sys/kernel/sched_migration_cost_ns"
snap() { (cd "$1" && find . -type f ! -path './run/*' -print0 | sort -z | xargs -0 md5sum | md5sum); }
orig=$(snap "$B")
# a signal at any moment of tune --apply: the host is untouched, or the journal holds every
# original that changed, and tune --revert puts the host back byte for byte
for delay in 0 0.002 0.005 0.01 0.02 0.04 0.08; do
	for sig in KILL TERM INT; do
		"$NPL" tune --apply --root "$B" >/dev/null 2>&1 &
		tp=$!
		sleep "$delay"
		kill -s "$sig" "$tp" 2>/dev/null
		wait "$tp" 2>/dev/null
		if [[ -e $B/run/npulaunch/tune-journal.json ]]; then
			"$NPL" tune --revert --root "$B" >"$T/out" 2>"$T/err" || fail "revert after SIG$sig at ${delay}s: $(cat "$T/err")"
		fi
		expect_eq "$(snap "$B")" "$orig" "the host after SIG$sig at ${delay}s into tune --apply, and revert"
	done
done
rm -f "$B"/run/npulaunch/.tune-journal.json.*
expect_rc 0 "$NPL" render $ID "${SITE[@]}" -o "$T/sb"
script() { env PATH="$R.bin:$PATH" NPULAUNCH_ROOT="$B" timeout 120 bash "$T/sb/pd-mixed.sh" "$@"; }
rm -f "$T/calls"
expect_rc 0 script
[[ -e $T/calls ]] || fail "the script did not launch"
expect_eq "$(cat "$B/sys/devices/system/cpu/cpu1023/cpufreq/scaling_governor")" performance "the script's tuning"
[[ -f $B/run/npulaunch/tune-journal.json ]] || fail "the script left no journal"
expect_eq "$(jq -r '"\(.format) \(.root) \(.entries | length)"' "$B/run/npulaunch/tune-journal.json")" \
	"npulaunch-tune-journal/2 $B 1027" "the script's journal"
expect_rc 0 "$NPL" tune --revert --root "$B"
expect_grep "$T/err" "restored 1027 files from the journal"
expect_eq "$(snap "$B")" "$orig" "tune --revert undoes the script byte for byte"
# its own --revert, on a node without npulaunch; it launches nothing
expect_rc 0 script
rm -f "$T/calls"
expect_rc 0 script --revert
expect_grep "$T/err" "restored 1027 files from the journal"
expect_eq "$(snap "$B")" "$orig" "the script's --revert undoes it byte for byte"
[[ -e $B/run/npulaunch/tune-journal.json ]] && fail "--revert left the journal"
[[ -e $T/calls ]] && fail "--revert launched"
expect_rc 1 script --revert
expect_grep "$T/err" "no tuning journal: nothing to revert"
# and --revert undoes what npulaunch tuned; a script keeps an existing journal's originals
expect_rc 0 "$NPL" tune --apply --root "$B"
printf '7\n' >"$B/proc/sys/vm/swappiness"
expect_rc 0 script
expect_rc 0 script --revert
expect_eq "$(snap "$B")" "$orig" "--revert after tune --apply and the script: the first values"
# a second script run with a wider host: the new file is journaled
echo 0-1022 >"$B/sys/devices/system/cpu/online"
mv "$B/sys/devices/system/cpu/cpu1023" "$T/cpu1023"
expect_rc 0 script
mv "$T/cpu1023" "$B/sys/devices/system/cpu/cpu1023"
echo 0-1023 >"$B/sys/devices/system/cpu/online"
expect_rc 0 script
expect_rc 0 "$NPL" tune --revert --root "$B"
expect_eq "$(snap "$B")" "$orig" "revert after a wider second script run"
# --tune-only tunes (journaled) and launches nothing; --no-tune launches and touches nothing
rm -f "$T/calls"
expect_rc 0 script --tune-only
[[ -e $T/calls ]] && fail "--tune-only launched"
expect_eq "$(cat "$B/sys/devices/system/cpu/cpu1023/cpufreq/scaling_governor")" performance "--tune-only's tuning"
expect_grep "$T/err" "the host is tuned (journal $B/run/npulaunch/tune-journal.json); nothing launched"
expect_rc 0 "$NPL" tune --revert --root "$B"
expect_eq "$(snap "$B")" "$orig" "tune --revert after --tune-only"
# a write that fails after every check passed (an append-only file: writable to access(2), but
# not to O_TRUNC) undoes what the run wrote, the journal too, and says so: with no journal, and
# with an earlier one the run added to; --tune-only and a launch alike
mkdir -p "$B/proc/sys/kernel" && : >"$T/append-probe"
if chattr +a "$T/append-probe" 2>/dev/null; then
	chattr -a "$T/append-probe"
	last=$(jq -r '.entries[-1].path' <<<"$(script --tune-only 2>/dev/null; cat "$B/run/npulaunch/tune-journal.json")")
	expect_rc 0 "$NPL" tune --revert --root "$B"
	[[ $last == /proc/sys/* ]] || fail "the last file the script tunes: '$last'"
	for mode in --tune-only "" journal; do
		rm -f "$T/calls"
		if [[ $mode == journal ]]; then
			expect_rc 0 "$NPL" tune --apply --root "$B"
			cp "$B/run/npulaunch/tune-journal.json" "$T/j.before"
			expect_rc 0 "$NPL" tune --revert --root "$B" && cp "$T/j.before" "$B/run/npulaunch/tune-journal.json"
			# an entry the earlier journal lacks, so that the run adds to it
			python3 -c 'import sys, re
t = open(sys.argv[1]).read()
t = re.sub(r"\n[^\n]*\"path\": \"" + re.escape(sys.argv[2]) + r"\"[^\n]*", "", t)
print(re.sub(r",(\n\t\])", r"\1", t), end="")' "$T/j.before" "$last" >"$B/run/npulaunch/tune-journal.json"
			cp "$B/run/npulaunch/tune-journal.json" "$T/j.before"
			mode=
		fi
		chattr +a "$B$last"
		# shellcheck disable=SC2086  # an empty mode is no argument
		expect_rc 1 script $mode
		chattr -a "$B$last"
		expect_grep "$T/err" "cannot write $B$last"
		expect_grep "$T/err" "every change this run made was undone"
		[[ -e $T/calls ]] && fail "a failed tuning launched ($mode)"
		expect_eq "$(snap "$B")" "$orig" "the host after a write failed part-way ($mode)"
		if [[ -e $T/j.before ]]; then
			cmp -s "$T/j.before" "$B/run/npulaunch/tune-journal.json" || fail "the earlier journal was not put back as it was"
			rm -f "$T/j.before" "$B/run/npulaunch/tune-journal.json"
		else
			[[ -e $B/run/npulaunch/tune-journal.json ]] && fail "a failed tuning left its journal ($mode)"
		fi
	done
else
	echo "SKIP: this file system has no append-only attribute (chattr +a): the failed-write case is not run"
fi
rm -f "$T/append-probe"
expect_rc 0 script --no-tune
[[ -e $T/calls ]] || fail "--no-tune did not launch"
expect_eq "$(snap "$B")" "$orig" "--no-tune changed the host"
[[ -e $B/run/npulaunch/tune-journal.json ]] && fail "--no-tune journaled"
expect_rc 2 script --tune
expect_grep "$T/err" "unknown option '--tune': pd-mixed.sh takes --revert, --tune-only or --no-tune"
expect_rc 2 script --no-tune --revert
expect_eq "$(snap "$B")" "$orig" "a script given a wrong option changed the host"
# a journal the script cannot read stops it before any change
mkdir -p "$B/run/npulaunch"
echo '{"format": "x"}' >"$B/run/npulaunch/tune-journal.json"
expect_rc 1 script
expect_grep "$T/err" "tune-journal.json: not a tuning journal"
expect_eq "$(snap "$B")" "$orig" "a script with a bad journal changed the host"
expect_rc 1 script --revert
expect_eq "$(snap "$B")" "$orig" "--revert of a bad journal changed the host"
rm "$B/run/npulaunch/tune-journal.json"
# a tampered journal's path is refused by --revert
printf '{\n\t"format": "npulaunch-tune-journal/2",\n\t"root": "%s",\n\t"entries": [\n\t\t{"name": "x", "path": "/proc/sys/../../../victim", "base64": "WAo="}\n\t]\n}\n' "$B" \
	>"$B/run/npulaunch/tune-journal.json"
expect_rc 1 script --revert
expect_grep "$T/err" "entry 1 (x): not a tuning file"
expect_eq "$(cat "$T/victim")" precious "--revert of a tampered journal"
rm "$B/run/npulaunch/tune-journal.json"
finish
