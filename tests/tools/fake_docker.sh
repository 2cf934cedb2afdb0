#!/usr/bin/env bash
# fake_docker.sh: stands in for docker (and podman) in the tests. For run, it appends its arguments as
# one JSON line {"argv": [...]} to $NPL_DOCKER_LOG, then runs the container's command as
# docker run would on a host network: the options read (--rm, --name, --net=host, --ipc=host,
# --shm-size, --privileged, --device, -v, --cpuset-cpus), the environment only PATH, HOME and the -e
# variables (NAME=VALUE, or NAME: the caller's value when it has one), plus NPL_STUB_LOG and
# NPL_STUB_HOLD_MS for the stub server. The image is the first word that is no option; the command follows it. The
# mounts are not made: the tests mount nothing a command would miss (the bundle, the model and
# the Ascend files are at the same paths inside as outside). An option it does not know fails
# it (exit 125, as docker does), so a script that passes one shows. Called as podman, it refuses
# --shm-size beside --ipc=host, as podman does (exit 125, "Error: invalid config provided: cannot
# set shmsize when running in the {host } IPC Namespace": podman's PR #15810, recorded there by
# its maintainers); docker ignores it.
set -u
# docker info: the daemon answers
[[ ${1:-} == info ]] && exit 0
npl_json() {  # STRING: as a JSON string
	local s=$1 out='' c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		'"') out+='\"' ;;
		'\') out+='\\' ;;
		$'\n') out+='\n' ;;
		$'\t') out+='\t' ;;
		*) if [[ $c < ' ' ]]; then printf -v c '\\u%04x' "'$c"; fi; out+=$c ;;
		esac
	done
	printf '"%s"' "$out"
}
# (and whether the host it runs on, $NPULAUNCH_ROOT, holds a tuning journal as it starts)
{
	printf '{"argv": ['
	first=1
	for a in "$@"; do
		((first)) || printf ', '
		first=0
		npl_json "$a"
	done
	printf '], "tuned": %s}\n' "$([[ -e ${NPULAUNCH_ROOT:-/nonexistent}/run/npulaunch/tune-journal.json ]] && echo true || echo false)"
} >>"${NPL_DOCKER_LOG:-/dev/null}"
[[ ${1:-} == run ]] || { echo "fake docker: only run" >&2; exit 125; }
shift
env=()
ipc_host=0 shm=0
while (($#)); do
	case $1 in
	--ipc=host) ipc_host=1; shift ;;
	--shm-size) shm=1; (($# >= 2)) || exit 125; shift 2 ;;
	--rm | --net=host | --privileged) shift ;;
	--cpuset-cpus) (($# >= 2)) || exit 125; shift 2 ;;   # recorded above; the command runs where this script runs
	--name | --device | -v) (($# >= 2)) || exit 125; shift 2 ;;
	-e)
		(($# >= 2)) || exit 125
		if [[ $2 == *=* ]]; then
			env+=("$2")
		elif [[ -n ${!2+x} ]]; then
			env+=("$2=${!2}")
		fi
		shift 2
		;;
	-*) echo "fake docker: unknown option $1" >&2; exit 125 ;;
	*) break ;;
	esac
done
if [[ ${0##*/} == podman ]] && ((ipc_host && shm)); then
	echo "Error: invalid config provided: cannot set shmsize when running in the {host } IPC Namespace" >&2
	exit 125
fi
(($# >= 2)) || { echo "fake docker: no image and command" >&2; exit 125; }
shift   # the image
[[ -n ${NPL_STUB_HOLD_MS:-} ]] && env+=("NPL_STUB_HOLD_MS=$NPL_STUB_HOLD_MS")
exec env -i PATH="$PATH" HOME=/root NPL_STUB_LOG="${NPL_STUB_LOG:-}" "${env[@]}" "$@"
