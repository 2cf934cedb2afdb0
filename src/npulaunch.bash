# bash completion for npulaunch: commands, their options (read from each
# command's --help, so they stay current), recipe ids and model names (from
# npulaunch list), and the values some options take.
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
	--target)
		mapfile -t COMPREPLY < <(compgen -W "scripts slurm" -- "$cur")
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
	--model-path | --draft-model-path | --tpot | --ttft | --dataset | --prefix-cache | --cards | \
		--ifname | --node-ip | --prefill-ip | --decode-ip | --set | --unset | --env | \
		--unset-env | --timeout | --cpus | --slurm-partition | --slurm-account | --slurm-time | \
		--slurm-gres | --slurm-router-node)
		return 0
		;;
	--target)
		mapfile -t COMPREPLY < <(compgen -W "scripts k8s rbg docker" -- "$cur")
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
		--node-selector | --model-volume | --model-mount | --scheduler | --shm-size)
		return 0
		;;
	esac
	if [[ -z $cmd ]]; then
		words=$(npulaunch --help 2>/dev/null | sed -n 's/^  \([a-z]\+\)  .*/\1/p')
		[[ $cur == -* ]] && words="--recipes --templates --help --version"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return 0
	fi
	if [[ $cur == -* ]]; then
		opts=$(npulaunch "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return 0
	fi
	case $cmd in
	list | show | render | diff | apply | preflight | tune | status | bench)
		words="$(npulaunch "${global[@]}" list --ids 2>/dev/null) $(npulaunch "${global[@]}" list --models 2>/dev/null | awk 'NR > 1 { print $1; print $2 }')"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		[[ $cmd == apply || $cmd == preflight || $cmd == status || $cmd == bench ]] && mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur")
		;;
	validate | verify)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	esac
	return 0
}
complete -F _npulaunch npulaunch
