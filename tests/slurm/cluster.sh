#!/bin/bash
# cluster.sh: a real Slurm cluster of five nodes on this machine, for the tests. As root:
# slurmctld and one slurmd per node (Debian 12's Slurm 22.05), each host (ctl, node1..node5)
# in its own network, UTS and mount namespace on a private bridge, with addresses
# (10.200.0.0/24) that exist only inside those namespaces, and a munged of its own on a socket
# of its own. Each node sees its own fake host root at BASE/root (BASE/roots/NODE bound there in
# its mount namespace), so that NPULAUNCH_ROOT=BASE/root is another host on every node.
#   cluster.sh up | down | ctl CMD... | net n1..n5 CMD... | on n1..n5 CMD...
# ctl runs a client command (sbatch, squeue, scontrol, scancel) on the controller's host; net
# runs CMD in a node's network namespace (to reach what listens on its loopback); on runs it as
# the node, as an operator would there (its root at BASE/root, its host name).
# BASE (state, logs, roots) is $NPL_SLURM_BASE. The names of the namespaces, veths and bridge
# carry a tag of this run (BASE/tag): a namespace of an earlier run may outlive its deletion
# for minutes (its closing TCP sockets hold it) and keep its names. The daemons are stopped by
# the PIDs that up recorded (BASE/pids; /run/npl-slurm-test.* for a run that died before its
# down, cleaned up by the next up), and what still runs inside the namespaces (a job's
# slurmstepd outlives slurmd) by the PIDs found there. Needs slurmctld slurmd slurm-client munge
# (tests/install-deps.sh).
set -uo pipefail
H=$(cd "$(dirname "$0")" && pwd)
BASE=${NPL_SLURM_BASE:?NPL_SLURM_BASE must name a folder for the cluster}
export SLURM_CONF=$BASE/etc/slurm.conf
STALE=/run/npl-slurm-test
HOSTS=(ctl n1 n2 n3 n4 n5)
declare -A ADDR=([ctl]=10.200.0.10 [n1]=10.200.0.11 [n2]=10.200.0.12 [n3]=10.200.0.13 [n4]=10.200.0.14 [n5]=10.200.0.15)
declare -A NAME=([ctl]=ctl [n1]=node1 [n2]=node2 [n3]=node3 [n4]=node4 [n5]=node5)
TAG=$(cat "$BASE/tag" 2>/dev/null)

# host_exec HOST CMD...: CMD as HOST (nsenter, not `ip netns exec`, which remounts /sys and
# hides /sys/fs/cgroup from slurmd); with NPL_EXEC=exec, in place of this shell
host_exec() {
	local h=$1 ns=npl$TAG-$1 bind=
	shift
	[[ $h == ctl ]] || bind="mount --bind $BASE/roots/${NAME[$h]} $BASE/root && "
	${NPL_EXEC:-} nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private \
		sh -c "mount --bind /etc/netns/$ns/hosts /etc/hosts && ${bind}hostname ${NAME[$h]} && exec \"\$@\"" sh "$@"
}

net_down() {  # TAG
	local h
	[[ -n $1 ]] || return 0
	for h in "${HOSTS[@]}"; do
		ip netns del "npl$1-$h" 2>/dev/null
		rm -rf "/etc/netns/npl$1-$h"
	done
	ip link del "nplbr$1" 2>/dev/null
	true
}

net_up() {
	local h ns n
	ip link add "nplbr$TAG" type bridge || return 1
	ip link set "nplbr$TAG" up
	for h in "${HOSTS[@]}"; do
		ns=npl$TAG-$h
		ip netns add "$ns" || return 1
		ip link add "v$TAG$h" type veth peer name eth0 netns "$ns" || return 1
		ip link set "v$TAG$h" master "nplbr$TAG" up
		ip -n "$ns" addr add "${ADDR[$h]}/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" link set lo up
		mkdir -p "/etc/netns/$ns"
		{
			echo '127.0.0.1 localhost'
			for n in "${HOSTS[@]}"; do echo "${ADDR[$n]} ${NAME[$n]}"; done
		} >"/etc/netns/$ns/hosts"
	done
}

# kill_pids FILE: TERM each daemon it lists that is still ours (its command line names a Slurm
# configuration or munge socket of these tests), then KILL what is left after 2 s
kill_pids() {
	local f=$1 p i
	local -a live=() pids=()
	[[ -f $f ]] || return 0
	mapfile -t pids <"$f"
	for p in "${pids[@]}"; do
		[[ $p =~ ^[0-9]+$ ]] || continue
		if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q 'etc/slurm.conf\|munge-run/munge.sock'; then
			kill -TERM "$p" 2>/dev/null && live+=("$p")
		fi
	done
	for ((i = 0; i < 40 && ${#live[@]}; i++)); do
		sleep 0.05
		for p in "${!live[@]}"; do kill -0 "${live[$p]}" 2>/dev/null || unset 'live[p]'; done
	done
	for p in "${live[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -f "$f"
}

up() {
	local n i
	# a run that died before its down left daemons and namespaces: end them first
	kill_pids "$STALE.pids"
	end_ns_pids "$(cat "$STALE.tag" 2>/dev/null)"
	net_down "$(cat "$STALE.tag" 2>/dev/null)"
	TAG=$(printf '%04x' $((RANDOM % 65536)))
	mkdir -p "$BASE"/{etc,state,log,run,dev,root,munge,munge-run} "$BASE"/spool/node{1..5} "$BASE"/roots/node{1..5}
	echo "$TAG" >"$BASE/tag"
	echo "$TAG" >"$STALE.tag"
	sed "s|@BASE@|$BASE|g" "$H/slurm.conf.in" >"$BASE/etc/slurm.conf"
	printf 'NodeName=node[1-5] Name=npu File=%s/dev/davinci[0-15]\n' "$BASE" >"$BASE/etc/gres.conf"
	for i in {0..15}; do [[ -e $BASE/dev/davinci$i ]] || mknod "$BASE/dev/davinci$i" c 1 3; done
	net_up || { echo "cluster: cannot make the network namespaces" >&2; net_down "$TAG"; return 1; }
	# munged of our own, owned by munge: its key and files in BASE/munge (0700), its socket in
	# BASE/munge-run (which munged wants open to all, as /run/munge is)
	head -c 1024 /dev/urandom >"$BASE/munge/munge.key"
	chown munge:munge "$BASE/munge" "$BASE/munge/munge.key" "$BASE/munge-run"
	chmod 0700 "$BASE/munge"
	chmod 0755 "$BASE/munge-run"
	chmod 0400 "$BASE/munge/munge.key"
	setsid setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F \
		--socket="$BASE/munge-run/munge.sock" --key-file="$BASE/munge/munge.key" \
		--pid-file="$BASE/munge/munged.pid" --seed-file="$BASE/munge/seed" \
		--log-file="$BASE/munge/munged.log" </dev/null >>"$BASE/log/munged.stdout" 2>&1 &
	echo $! >"$BASE/pids"
	cp "$BASE/pids" "$STALE.pids"
	for ((i = 0; i < 100; i++)); do [[ -S $BASE/munge-run/munge.sock ]] && break; sleep 0.05; done
	if [[ ! -S $BASE/munge-run/munge.sock ]]; then
		echo "cluster: munged did not start: $(tail -n 3 "$BASE/log/munged.stdout")" >&2
		return 1
	fi
	# the daemons, each from setsid with stdin from /dev/null (a daemon that keeps the caller's
	# terminal can hang the calling shell); -D keeps them in the foreground and every program on
	# the way execs the next, so that $! is the daemon's own PID
	for h in "${HOSTS[@]}"; do
		if [[ $h == ctl ]]; then
			set -- /usr/sbin/slurmctld -D -i -f "$SLURM_CONF"
		else
			set -- /usr/sbin/slurmd -D -f "$SLURM_CONF"
		fi
		setsid bash -c "$(declare -p NAME BASE TAG); $(declare -f host_exec); NPL_EXEC=exec host_exec $h $*" \
			</dev/null >"$BASE/log/${NAME[$h]}.stdout" 2>&1 &
		echo $! >>"$BASE/pids"
	done
	cp "$BASE/pids" "$STALE.pids"
	n=$((SECONDS + 20))
	while ((SECONDS < n)); do
		[[ $(host_exec ctl timeout 2 sinfo -h -o '%T %D' 2>/dev/null) == "idle 5" ]] && return 0
		sleep 0.1
	done
	echo "cluster: the nodes did not come up: $(host_exec ctl timeout 2 sinfo -h -N -o '%N %T' 2>&1 | tr '\n' ' ')" >&2
	return 1
}

# ns_pids TAG: the processes inside the namespaces of that run (a job's slurmstepd and its
# tasks outlive the slurmd that started them)
ns_pids() {
	local h ino p
	[[ -n $1 ]] || return 0
	for h in "${HOSTS[@]}"; do
		ino=$(stat -L -c %i "/run/netns/npl$1-$h" 2>/dev/null) || continue
		for p in /proc/[0-9]*; do
			[[ $(readlink "$p/ns/net" 2>/dev/null) == "net:[$ino]" ]] && echo "${p#/proc/}"
		done
	done
}

down() {
	local i
	if [[ -f $BASE/pids && -n $TAG ]]; then
		host_exec ctl timeout 5 scancel --full --user=root >/dev/null 2>&1
		for ((i = 0; i < 50; i++)); do
			[[ -z $(host_exec ctl timeout 2 squeue -h 2>/dev/null) ]] && break
			sleep 0.1
		done
	fi
	kill_pids "$BASE/pids"
	end_ns_pids "$TAG"
	rm -f "$STALE.pids" "$STALE.tag"
	net_down "$TAG"
}

# end_ns_pids TAG: TERM, then KILL, what still runs inside that run's namespaces
end_ns_pids() {
	local p i
	local -a live
	mapfile -t live < <(ns_pids "$1")
	((${#live[@]})) || return 0
	kill -TERM "${live[@]}" 2>/dev/null
	for ((i = 0; i < 40; i++)); do
		sleep 0.05
		mapfile -t live < <(ns_pids "$1")
		((${#live[@]})) || return 0
	done
	for p in "${live[@]}"; do kill -KILL "$p" 2>/dev/null; done
}

case ${1:-} in
up) up ;;
down) down ;;
ctl) shift; host_exec ctl "$@" ;;
net) h=$2; shift 2; nsenter --net="/run/netns/npl$TAG-$h" "$@" ;;
on) h=$2; shift 2; host_exec "$h" "$@" ;;
*) echo "usage: $0 up|down|ctl CMD...|net n1..n5 CMD...|on n1..n5 CMD..." >&2; exit 2 ;;
esac
