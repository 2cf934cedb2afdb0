# tune keeps each file open from its check to its write (one open per file), with the
# descriptor limit raised to its hard limit for that; below it, the files past the budget are
# opened again to be written; the limit is put back before apply executes the server.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
R=$T/r
mkdir -p "$R/proc/sys/vm" "$R/proc/sys/kernel"
for ((c = 0; c < 1024; c++)); do
	mkdir -p "$R/sys/devices/system/cpu/cpu$c/cpufreq"
	echo "performance schedutil" >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_available_governors"
	echo schedutil >"$R/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
done
echo 0-1023 >"$R/sys/devices/system/cpu/online"
echo 60 >"$R/proc/sys/vm/swappiness"
echo 1 >"$R/proc/sys/kernel/numa_balancing"
echo 500000 >"$R/proc/sys/kernel/sched_migration_cost_ns"
govs() { cat "$R"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor | sort | uniq -c | tr -s ' \n' ' '; }
sysctls() { cat "$R/proc/sys/vm/swappiness" "$R/proc/sys/kernel/numa_balancing" "$R/proc/sys/kernel/sched_migration_cost_ns" | tr '\n' ' '; }
before_g=$(govs)
before_s=$(sysctls)
hard=$(ulimit -Hn)
# no room to keep any (100), room for some (200), a low soft limit under a high hard one
for lim in "-n 100" "-n 200" "-Sn 64"; do
	[[ $lim == "-Sn 64" && $hard != unlimited && $hard -le 1100 ]] && continue
	# shellcheck disable=SC2086
	(ulimit $lim && exec "$NPL" tune --apply --root "$R" --hardware ascend-a3) >"$T/out" 2>"$T/err"
	expect_eq "$?" 0 "tune --apply under ulimit $lim: exit status ($(head -c 500 "$T/err"))"
	expect_grep "$T/err" "changed 1027 of 1027 settings"
	expect_eq "$(govs)" " 1024 performance " "governors after tune --apply under ulimit $lim"
	expect_eq "$(sysctls)" "0 0 50000 " "sysctls after tune --apply under ulimit $lim (cut to the new length)"
	expect_rc 0 "$NPL" tune --revert --root "$R"
	expect_eq "$(govs)" "$before_g" "governors after revert (ulimit $lim)"
	expect_eq "$(sysctls)" "$before_s" "sysctls after revert (ulimit $lim)"
done

# apply: the program it executes starts with the descriptor limit apply was given
make_root "$T/root"
rm -f "$T/root.bin/python3"   # a link to the stub: write a file of its own, not through it
cat >"$T/root.bin/python3" <<EOF
#!/bin/sh
ulimit -Sn >"$T/nofile"
exec "$NPL_STUB" "\$@"
EOF
chmod +x "$T/root.bin/python3"
export PATH="$T/root.bin:$PATH" NPULAUNCH_ROOT="$T/root" NPL_STUB_LOG="$T/calls"
ID=kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms
SITE=(--model-path /m --draft-model-path /d --ifname eth0 --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2)
if [[ $hard == unlimited || $hard -gt 300 ]]; then
	(ulimit -Sn 300 && NPULAUNCH_NODE_IP=10.0.0.1 exec "$NPL" apply $ID "${SITE[@]}") >"$T/out" 2>"$T/err"
	expect_eq "$?" 0 "apply under ulimit -Sn 300: exit status ($(head -c 500 "$T/err"))"
	expect_grep "$T/err" "settings changed; exec python3"
	expect_eq "$(cat "$T/nofile" 2>/dev/null)" 300 "the descriptor limit of the program apply executes"
	expect_rc 0 "$NPL" tune --revert
fi
finish
