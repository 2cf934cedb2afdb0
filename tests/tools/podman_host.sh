#!/usr/bin/env bash
# podman_host.sh DIR CMD...: run CMD (as root) in a mount namespace of its own that looks like an
# Ascend host to a container runtime, while nothing outside DIR changes on the real one:
#   /dev          a copy on a tmpfs, with stand-ins for the NPUs' device files (character devices
#                 of /dev/null's numbers: davinci0-15, davinci_manager, devmm_svm, hisi_hdc) and a
#                 /dev/shm of its own;
#   /usr/local, /etc, /var
#                 overlays whose changes land in DIR: the driver's folders and the toolkit's
#                 set_env.sh files under /usr/local/Ascend, /etc/ascend_install.info; /var takes
#                 what the run scripts create there (/var/queue_schedule).
# podman itself keeps its images, containers and state in DIR (CONTAINERS_STORAGE_CONF,
# CONTAINERS_CONF), so the machine's own containers and images are neither seen nor touched.
# Used by tests/cli/test_podman.sh; the rest of the machine never sees any of it.
set -euo pipefail
# a step that fails says which (a failure seen once in a parallel run was not reproduced)
trap 'echo "podman_host.sh: line $LINENO: failed ($?): $BASH_COMMAND" >&2' ERR
if [[ ${1:-} != --inside ]]; then
	dir=$1
	shift
	mkdir -p "$dir"
	exec unshare --mount --propagation private -- "$0" --inside "$dir" "$@"
fi
dir=$2
shift 2

# ---- /dev: a copy with the NPUs' stand-ins ----
mkdir -p "$dir/dev"
mount -t tmpfs -o mode=755 npl-dev "$dir/dev"
cp -a -x /dev/. "$dir/dev/"
for n in $(seq 0 15) _manager; do mknod -m 666 "$dir/dev/davinci$n" c 1 3; done
mknod -m 666 "$dir/dev/devmm_svm" c 1 3
mknod -m 666 "$dir/dev/hisi_hdc" c 1 3
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$dir/dev/pts" 2>/dev/null ||
	mount --rbind /dev/pts "$dir/dev/pts"
mount -t tmpfs -o mode=1777 npl-shm "$dir/dev/shm"
mount --move "$dir/dev" /dev

# ---- /usr/local, /etc, /var: overlays writing into DIR ----
for d in usr/local etc var; do
	u=$dir/overlay/${d//\//-}
	mkdir -p "$u/up" "$u/work"
	mount -t overlay npl-overlay -o "lowerdir=/$d,upperdir=$u/up,workdir=$u/work" "/$d"
done
mkdir -p /usr/local/Ascend/driver /usr/local/Ascend/firmware /usr/local/sbin
echo "Version=24.1.rc3 (stand-in of tests/tools/podman_host.sh)" >/usr/local/Ascend/driver/version.info
for f in ascend-toolkit/set_env.sh nnal/atb/set_env.sh; do
	mkdir -p "$(dirname "/usr/local/Ascend/$f")"
	echo ": sourced" >"/usr/local/Ascend/$f"
done
echo "UserName=HwHiAiUser" >/etc/ascend_install.info

# ---- podman's own storage and state ----
mkdir -p "$dir/podman/root" "$dir/podman/run" "$dir/podman/tmp"
cat >"$dir/podman/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$dir/podman/root"
runroot = "$dir/podman/run"
EOF
# runc: Debian's default runtime, crun, refuses a host whose cgroups are in hybrid mode (v1 and
# v2 at once, as on this project's machines); runc runs there and wherever crun does
cat >"$dir/podman/containers.conf" <<EOF
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$dir/podman/events.log"
tmp_dir = "$dir/podman/tmp"
EOF
# a root without CAP_SYS_RESOURCE (a sandbox's) cannot raise the open-file and process limits
# podman gives its containers by default (1048576, 4194304): they get what such a root may set
cap=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
if (((16#$cap >> 24 & 1) == 0)); then
	printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=4096:4096"]\n' "$(ulimit -Hn)" "$(ulimit -Hn)" \
		>>"$dir/podman/containers.conf"
fi
export CONTAINERS_STORAGE_CONF=$dir/podman/storage.conf CONTAINERS_CONF=$dir/podman/containers.conf
exec "$@"
