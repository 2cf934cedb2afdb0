# The help, the bash completion and the man page describe the same command line, the one that
# exists. For every command `npulaunch help` lists, its options are those its help names (the
# usage lines and the Options section); then
#   1. the completion (contrib/npulaunch.bash) offers exactly those after the command, with the global
#      options that may follow a command (--recipes, --templates, --quiet);
#   2. the man page names each of them in the command's section, or in the shared section the
#      command refers to (QUERIES, SITE VALUES, CLUSTER VALUES, OVERRIDES);
#   3. every option the help, the completion or the command's man section presents is one the
#      command takes: `npulaunch CMD --opt --help` (or --opt=x) is not refused.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
MAN=$NPL_SRC/docs/npulaunch.1
COMPLETION=$NPL_SRC/contrib/npulaunch.bash
mkdir -p "$T/bin"
ln -s "$NPL" "$T/bin/npulaunch"
export PATH="$T/bin:$PATH"

expect_rc 0 "$NPL" help
mapfile -t cmds < <(sed -n '/^Commands:/,/^$/s/^  \([a-z]\{1,\}\)  .*/\1/p' "$T/out")
((${#cmds[@]} >= 14)) || fail "help lists ${#cmds[@]} commands: ${cmds[*]}"
# the global options that may follow a command: those of `npulaunch help` but --help and --version
mapfile -t globals < <(sed -n '/^Global options:/,/^$/p' "$T/out" | grep -o -- '--[a-z][a-z0-9-]*' |
	grep -vx -e --help -e --version | sort -u)
((${#globals[@]} >= 3)) || fail "help lists ${#globals[@]} global options: ${globals[*]}"

# help_opts CMD: the long options the command's help names: its usage lines and its Options
# section (not the prose, not the examples); a word like --gres=NAME is another program's
help_opts() {
	"$NPL" help "$1" | sed -n '1,/^$/p; /^Options:/,/^\(Examples\|Exit status\):/p' |
		grep -o -- '--[a-z][a-z0-9-]*=\{0,1\}' | grep -v '=$' | sort -u
}

# completion_opts CMD: what `npulaunch CMD --<TAB>` offers
completion_opts() {
	bash -c 'source "$1"; COMP_WORDS=(npulaunch "$2" --); COMP_CWORD=2; _npulaunch; printf "%s\n" "${COMPREPLY[@]}"' \
		npl "$COMPLETION" "$1" | sort -u
}

# man_section CMD: the roff text of the command's .SS sections (render has two)
man_section() {
	awk -v c="$1" '/^\.S[HS] /{ on = ($1 == ".SS" && $2 == c) } on' "$MAN"
}
# man_shared NAME: the text of a shared .SH section
man_shared() {
	awk -v s="$1" '/^\.SH /{ on = (substr($0, 5) == s) } on' "$MAN"
}
# roff_opts: the long options named in roff text on standard input
roff_opts() {
	grep -o -- '\\-\\-[a-z0-9]\{1,\}\(\\-[a-z0-9]\{1,\}\)*' | sed 's/\\-/-/g' | sort -u
}

# accepts CMD OPT: the command takes the option, as a switch (CMD OPT --help prints the help) or
# with a value (CMD OPT=x --help prints the help, or refuses the value x but not the option); help
# and version, which read nothing but their one option, are asked without --help
accepts() {
	local c=$1 o=$2 h=--help
	[[ $c == help || $c == version || $o == --help ]] && h=
	run "$NPL" "$c" "$o" $h
	[[ $rc == 0 ]] && grep -q "^usage: npulaunch" "$T/out" && return 0
	[[ $rc == 0 && -z $h ]] && return 0
	run "$NPL" "$c" "$o=x" $h
	[[ $rc == 0 ]] && grep -q "^usage: npulaunch" "$T/out" && return 0
	[[ $rc == 0 && -z $h ]] && return 0
	[[ $rc != 0 ]] && ! grep -q -e "unknown option" -e "unexpected argument" -e "'$o'" -e "'$o=x'" "$T/err"
}

for c in "${cmds[@]}"; do
	mapfile -t hopts < <(help_opts "$c")
	[[ $c == help ]] || ((${#hopts[@]})) || fail "$c: its help names no option"
	# 1. the completion: exactly the help's options and the global ones
	want=$(printf '%s\n' "${hopts[@]}" "${globals[@]}" | sort -u | tr '\n' ' ')
	got=$(completion_opts "$c" | tr '\n' ' ')
	[[ $got == "$want" ]] || fail "$c: the completion offers [$got], its help names [$want]"
	# 2. the man page: each option in the command's section or a shared section it refers to
	man_section "$c" >"$T/man"
	[[ -s $T/man ]] || { fail "the man page has no section for $c"; continue; }
	# the options the section presents: its synopsis lines and the lines that set one in bold
	# (not the SGLang flags and the other commands its prose names)
	grep -e '^\.SS' -e '^\.BR\{0,1\} \\-\\-' "$T/man" | roff_opts >"$T/man-own"
	cp "$T/man" "$T/man-all"
	grep -qi 'quer' "$T/man" && man_shared QUERIES >>"$T/man-all"
	grep -qi 'site values' "$T/man" && man_shared "SITE VALUES" >>"$T/man-all"
	grep -qi 'overrides' "$T/man" && man_shared OVERRIDES >>"$T/man-all"
	grep -q 'CLUSTER VALUES' "$T/man" && man_shared "CLUSTER VALUES" >>"$T/man-all"
	roff_opts <"$T/man-all" >"$T/man-opts"
	for o in "${hopts[@]}"; do
		[[ $o == --help ]] && continue
		grep -qx -- "$o" "$T/man-opts" || fail "$c: the man page does not name $o (its help does)"
	done
	# 3. every option named for the command is one it takes
	# shellcheck disable=SC2046  # an option is one word: the lists are split on purpose
	for o in $(printf '%s\n' "${hopts[@]}" $(completion_opts "$c") $(cat "$T/man-own") | sort -u); do
		accepts "$c" "$o" || fail "$c does not take $o (named by its help, the completion or the man page): $(head -c 300 "$T/err")"
	done
done
# each option of a shared section is taken by the commands that refer to it (one at least)
for s in QUERIES "SITE VALUES" OVERRIDES "CLUSTER VALUES"; do
	for o in $(man_shared "$s" | roff_opts); do
		ok=
		for c in show render; do
			accepts "$c" "$o" && ok=1 && break
		done
		[[ -n $ok ]] || fail "the man page's $s names $o, which neither show nor render takes"
	done
done
# the man page's SYNOPSIS and the completion before a command: the global options
man_shared SYNOPSIS | roff_opts >"$T/syn"
for o in "${globals[@]}" --help --version; do
	grep -qx -- "$o" "$T/syn" || grep -q -- "^\.B.*${o//-/\\\\-}" "$MAN" || fail "the man page does not name the global option $o"
done
got=$(bash -c 'source "$1"; COMP_WORDS=(npulaunch --); COMP_CWORD=1; _npulaunch; printf "%s\n" "${COMPREPLY[@]}"' npl "$COMPLETION" | sort -u | tr '\n' ' ')
want=$(printf '%s\n' "${globals[@]}" --help --version | sort -u | tr '\n' ' ')
[[ $got == "$want" ]] || fail "npulaunch --<TAB> offers [$got], help's global options are [$want]"
# the values the completion offers for --target are the targets render takes
got=$(bash -c 'source "$1"; COMP_WORDS=(npulaunch render x --target ""); COMP_CWORD=4; _npulaunch; printf "%s\n" "${COMPREPLY[@]}"' npl "$COMPLETION" | sort | tr '\n' ' ')
for t in $got; do
	expect_rc 0 "$NPL" render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --target "$t" --model-path /m --draft-model-path /d --ifname eth0 --slurm-gres npu
done
expect_eq "$got" "docker k8s rbg scripts slurm " "npulaunch render --target <TAB>"
# the README names every command and every global option
for c in "${cmds[@]}"; do
	grep -q -e "npulaunch $c\b" -e "\`$c\`" "$NPL_SRC/README.md" || fail "README.md does not name the command $c"
done
for o in "${globals[@]}"; do
	grep -q -- "$o\b" "$NPL_SRC/README.md" || fail "README.md does not name the global option $o"
done
finish
