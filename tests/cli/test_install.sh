# Installed like the tools operators already use: cmake --install to a
# prefix, the binary working from any folder, the man page, bash completion,
# and a Debian package with its runtime dependencies.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${NPL_BUILD:?NPL_BUILD must name the build folder}"

expect_rc 0 cmake --install "$NPL_BUILD" --prefix "$T/inst"
for f in bin/npulaunch share/man/man1/npulaunch.1 share/bash-completion/completions/npulaunch \
	share/doc/npulaunch/README.md share/doc/npulaunch/LICENSE share/doc/npulaunch/recipes.md \
	share/doc/npulaunch/operators-guide.md share/doc/npulaunch/architecture.md; do
	[[ -f $T/inst/$f ]] || fail "not installed: $f"
done
# the installed binary needs nothing from the source tree
(cd / && "$T/inst/bin/npulaunch" list) >"$T/out" 2>"$T/err" || fail "installed list from /: $(cat "$T/err")"
expect_eq "$(wc -l <"$T/out")" 62 "installed list"
(cd / && "$T/inst/bin/npulaunch" render kimi-k2.6 --tpot 20ms -o "$T/r") >/dev/null 2>&1 || fail "installed render from /"
[[ -x $T/r/pd-mixed.sh ]] || fail "installed render wrote no script"

# the man page renders and documents every command and every option
if command -v man >/dev/null; then
	MANWIDTH=200 man -l "$T/inst/share/man/man1/npulaunch.1" >"$T/man.txt" 2>"$T/man.err" || fail "man -l: $(cat "$T/man.err")"
	expect_grep "$T/man.txt" "npulaunch - deploy SGLang on Ascend NPUs"
	expect_grep "$T/man.txt" "EXIT STATUS"
else
	fail "man is not installed (the README's first command installs it)"
fi
"$NPL" --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p' >"$T/cmds"
(($(wc -l <"$T/cmds") >= 9)) || fail "too few commands in --help: $(cat "$T/cmds")"
while read -r cmd; do
	grep -q "^\.SS $cmd" "$NPL_SRC/docs/npulaunch.1" || fail "the man page lacks the command $cmd"
	grep -q "^| \`$cmd\`\|npulaunch $cmd" "$NPL_SRC/README.md" || fail "the README never shows npulaunch $cmd"
	"$NPL" "$cmd" --help >"$T/help" || fail "$cmd --help"
	grep -q "^usage: npulaunch $cmd" "$T/help" || fail "$cmd --help has no synopsis"
	grep -q "^Examples:" "$T/help" || fail "$cmd --help has no examples"
	for opt in $(grep -o -- '--[a-z][a-z-]*' "$T/help" | sort -u); do
		grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$NPL_SRC/docs/npulaunch.1" ||
			fail "the man page never mentions $cmd's $opt"
	done
done <"$T/cmds"
# the exit codes the man page lists are the README's
sed -n '/^.SH EXIT STATUS/,/^.SH EXAMPLES/p' "$NPL_SRC/docs/npulaunch.1" | sed -n 's/^\.B \([0-9]\)$/\1/p' | tr '\n' ' ' >"$T/man.codes"
sed -n '/^## Exit codes/,/^## /p' "$NPL_SRC/README.md" | sed -n 's/^| \([0-9]\) |.*/\1/p' | tr '\n' ' ' >"$T/readme.codes"
expect_eq "$(cat "$T/man.codes")" "0 1 2 3 4 5 " "exit codes in the man page"
expect_eq "$(cat "$T/readme.codes")" "0 1 2 3 4 5 " "exit codes in the README"

# bash completion: npulaunch re<TAB> is render; ids, models, options, values
complete_words() {
	PATH="$T/inst/bin:$PATH" bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _npulaunch; printf "%s\n" "${COMPREPLY[@]}"' \
		npl "$T/inst/share/bash-completion/completions/npulaunch" "$@"
}
expect_eq "$(complete_words npulaunch re)" "render" "npulaunch re<TAB>"
expect_eq "$(complete_words npulaunch va)" "validate" "npulaunch va<TAB>"
expect_eq "$(complete_words npulaunch show qwen3.5-397b-a17b-w4a8-8p-in3k5-out1k5-22)" "qwen3.5-397b-a17b-w4a8-8p-in3k5-out1k5-22.2ms" "recipe ids"
expect_eq "$(complete_words npulaunch render Kimi)" "Kimi-K2.6" "model names"
expect_eq "$(complete_words npulaunch render kimi-k2.6 --tp)" "--tpot" "options"
expect_eq "$(complete_words npulaunch apply --role pre)" "prefill" "--role values"
expect_eq "$(complete_words npulaunch render x --mode pd-d)" "pd-disagg" "--mode values"
expect_eq "$(complete_words npulaunch list --model kimi)" "kimi-k2.6" "--model values"
expect_eq "$(complete_words npulaunch list --hardware ascend-a | tr '\n' ' ')" "ascend-a2 ascend-a3 " "--hardware values"

# the Debian package
if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
	(cd "$NPL_BUILD" && cpack -G DEB -B "$T/pkg") >"$T/cpack.log" 2>&1 || fail "cpack: $(tail -5 "$T/cpack.log")"
	deb=$(ls "$T"/pkg/npulaunch_*.deb 2>/dev/null | head -1)
	if [[ -n $deb ]]; then
		dpkg-deb -c "$deb" | awk '{print $6}' >"$T/contents"
		for f in ./usr/bin/npulaunch ./usr/share/man/man1/npulaunch.1 ./usr/share/bash-completion/completions/npulaunch; do
			grep -qxF "$f" "$T/contents" || fail "the package lacks $f"
		done
		deps=$(dpkg-deb -f "$deb" Depends)
		for d in libyaml-0-2 libcjson1 libcurl4 libc6; do
			[[ $deps == *"$d"* ]] || fail "the package does not depend on $d: $deps"
		done
		dpkg-deb -x "$deb" "$T/x"
		(cd / && "$T/x/usr/bin/npulaunch" --version) >"$T/out" 2>&1 || fail "the packaged binary: $(cat "$T/out")"
		expect_grep "$T/out" "recipe database"
	else
		fail "cpack made no package: $(tail -5 "$T/cpack.log")"
	fi
else
	fail "cpack or dpkg-deb is missing"
fi
finish
