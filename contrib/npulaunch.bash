# bash completion for npulaunch: commands, their options (read from each
# command's --help: its usage lines and Options section, so they stay current),
# the global options (from npulaunch --help), recipe ids and model names (from
# npulaunch list), and the values some options take.
# tests/cli/test_cli_docs.sh checks that it offers exactly what the help names.

# _npulaunch_opts [CMD]: the long options the help names (a word like --gres=NAME is another
# program's); without CMD the global options
_npulaunch_opts() {
	if [[ -n $1 ]]; then
		npulaunch help "$1" 2>/dev/null | sed -n '1,/^$/p; /^Options:/,/^\(Examples\|Exit status\):/p'
	else
		npulaunch --help 2>/dev/null | sed -n '/^Global options:/,/^$/p'
	fi | grep -o -- '--[a-z][a-z0-9-]*=\{0,1\}' | grep -v '=$' | sort -u
}
_npulaunch() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmd="" i w opts words
	local -a global=()

	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--recipes | --templates)
			global+=("$w" "${COMP_WORDS[i + 1]}")
			((i++))
			;;
		-*) ;;
		*)
			cmd=$w
			break
			;;
		esac
	done
	case $prev in
	--recipes | --templates | -o | --output | --root | --site | --journal | --slurm-log-dir | --slurm-npulaunch)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	--role)
		mapfile -t COMPREPLY < <(compgen -W "pd-mixed prefill decode router bench" -- "$cur")
		return 0
		;;
	--mode)
		mapfile -t COMPREPLY < <(compgen -W "pd-mixed pd-disagg" -- "$cur")
		return 0
		;;
	--probe)
		mapfile -t COMPREPLY < <(compgen -W "health generate" -- "$cur")
		return 0
		;;
	--model)
		words=$(npulaunch "${global[@]}" list --models 2>/dev/null | awk 'NR > 1 { print $1; print $2 }')
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return 0
		;;
	--hardware)
		words=$(npulaunch "${global[@]}" list --profiles 2>/dev/null | awk 'NR > 1 { print $1 }')
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return 0
		;;
	--model-path | --draft-model-path | --tpot | --ttft | --e2e | --dataset | --prefix-cache | --cards | \
		--ifname | --node-ip | --prefill-ip | --decode-ip | --set | --unset | --env | \
		--unset-env | --timeout | --cpus | --slurm-partition | --slurm-account | --slurm-time | \
		--slurm-gres | --slurm-router-node)
		return 0
		;;
	--target)
		mapfile -t COMPREPLY < <(compgen -W "scripts k8s rbg docker slurm" -- "$cur")
		return 0
		;;
	--npu-unit)
		mapfile -t COMPREPLY < <(compgen -W "card die" -- "$cur")
		return 0
		;;
	--container-runtime)
		mapfile -t COMPREPLY < <(compgen -W "docker podman auto" -- "$cur")
		return 0
		;;
	--image | --router-image | --registry | --namespace | --name-prefix | --npu-resource | \
		--node-selector | --model-volume | --model-mount | --scheduler | --shm-size | --server-cpus | \
		--server-memory | --router-cpus | --router-memory | --router-node-selector | --toleration | \
		--image-pull-secret | --priority-class | --startup-timeout)
		return 0
		;;
	esac
	if [[ -z $cmd ]]; then
		words=$(npulaunch --help 2>/dev/null | sed -n 's/^  \([a-z]\+\)  .*/\1/p')
		[[ $cur == -* ]] && words=$(_npulaunch_opts)
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return 0
	fi
	if [[ $cur == -* ]]; then
		# the command's own, and the global ones that may follow it (not --help, --version)
		opts="$(_npulaunch_opts "$cmd") $(_npulaunch_opts | grep -vx -e --help -e --version)"
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return 0
	fi
	case $cmd in
	list | show | render | diff | apply | preflight | tune | status | bench)
		words="$(npulaunch "${global[@]}" list --ids 2>/dev/null) $(npulaunch "${global[@]}" list --models 2>/dev/null | awk 'NR > 1 { print $1; print $2 }')"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		[[ $cmd == apply || $cmd == preflight || $cmd == status || $cmd == bench ]] && mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur")
		;;
	validate | verify | import | drift)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	esac
	return 0
}
complete -F _npulaunch npulaunch
