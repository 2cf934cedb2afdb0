#!/bin/sh
# Install the Debian 12 packages npulaunch needs to build and test, if any is
# missing (Slurm and munge too: tests/cli/test_slurm.sh runs a real cluster, as
# root; podman, runc and busybox-static: tests/cli/test_podman.sh runs real
# containers). Root runs apt-get directly; others through sudo when there is one.
set -eu
pkgs="build-essential cmake pkg-config libyaml-dev libcjson-dev libcurl4-openssl-dev nettle-dev
libcmocka-dev shellcheck jq curl clang libclang-rt-14-dev
acl man-db dpkg-dev file python3-yaml python3-jsonschema python3-kubernetes iproute2
slurmctld slurmd slurm-client munge podman runc busybox-static"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing"
if [ "$(id -u)" = 0 ]; then
	sudo=
elif command -v sudo >/dev/null; then
	sudo=sudo
else
	echo "install-deps: not root and no sudo: install these as root:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
