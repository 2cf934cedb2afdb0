# Every command by the same rules (issue 17): --help (usage, examples, exit 0), an unknown option
# (exit 2, naming it and pointing to that command's help), --json where the command reports (one document on
# standard output that parses, messages on standard error), and the exit codes of the README's
# table. The commands are the ones `npulaunch help` lists: a new one is walked without an edit.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
K20=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
make_root "$T/root"
expect_rc 0 "$NPL" render $K20 --model-path /m --draft-model-path /d --ifname eth0 -o "$T/b"

expect_rc 0 "$NPL" help
mapfile -t cmds < <(sed -n '/^Commands:/,/^$/s/^  \([a-z]\{1,\}\)  .*/\1/p' "$T/out")
((${#cmds[@]} >= 14)) || fail "help lists ${#cmds[@]} commands: ${cmds[*]}"
for c in "${cmds[@]}"; do
	expect_rc 0 "$NPL" "$c" --help
	expect_grep "$T/out" "usage: npulaunch $c"
	expect_grep "$T/out" "Examples:"
	expect_rc 0 "$NPL" help "$c"
	expect_grep "$T/out" "usage: npulaunch $c"
	expect_rc 2 "$NPL" "$c" --no-such-option
	# (help takes a command's name: "no command '--no-such-option'")
	[[ $c == help ]] || expect_grep "$T/err" "npulaunch: $c: unknown option '--no-such-option'"
	expect_grep "$T/err" "Try 'npulaunch $c --help' for more information."
	[[ -s $T/out ]] && fail "$c --no-such-option printed on standard output: $(head -c 300 "$T/out")"
done

# --json: WANT-EXIT COMMAND ARGS...; one JSON document, nothing else, on standard output
json() {
	local want=$1
	shift
	expect_rc "$want" "$@" --json
	jq -e . "$T/out" >/dev/null 2>&1 || fail "$* --json: standard output is not one JSON document: $(head -c 300 "$T/out")"
	[[ $(jq -s length "$T/out" 2>/dev/null) == 1 ]] || fail "$* --json: more than one document"
	seen[$2]=1
}
declare -A seen
json 0 "$NPL" list
json 0 "$NPL" list --models
json 0 "$NPL" list --profiles
json 0 "$NPL" validate
json 0 "$NPL" show $K20
json 0 "$NPL" render $K20
json 0 "$NPL" render $K20 --model-path /m --draft-model-path /d --ifname eth0 -o "$T/b" --check
json 1 "$NPL" diff $K20 kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms
json 0 env PATH="$T/root.bin:$PATH" "$NPL" apply $K20 --model-path /m --draft-model-path /d --ifname eth0 --root "$T/root" --dry-run
seen[apply]=1
json 1 "$NPL" tune --check --root "$T/root"
json 0 "$NPL" tune --dry-run --root "$T/root"
json 1 "$NPL" preflight $K20 --model-path /m --draft-model-path /d --ifname eth0 --root "$T/root"
json 1 "$NPL" wait http://127.0.0.1:1 --timeout 0.2
json 1 "$NPL" status "$T/b" --timeout 0.2
json 0 "$NPL" bench $K20 --dry-run
json 0 "$NPL" verify "$NPL_DATA/bench/pass.jsonl" $K20
json 0 "$NPL" version
json 0 "$NPL" import "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx" -o "$T/imported"
json 0 "$NPL" drift "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx"
# every command that reports has --json (help only points to the others)
for c in "${cmds[@]}"; do
	[[ $c == help || -n ${seen[$c]:-} ]] || fail "no --json walk for $c"
done

# the exit codes of the README's table
expect_rc 0 "$NPL" show $K20
expect_rc 1 "$NPL" diff $K20 kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms
expect_rc 2 "$NPL" show $K20 --model-path relative
expect_rc 2 "$NPL" frobnicate
expect_rc 3 "$NPL" show no-such-recipe
expect_rc 3 "$NPL" show kimi-k2.6 --tpot 1ms
expect_rc 4 "$NPL" show qwen3.5-397b-a17b --tpot 20ms
mkdir -p "$T/badrecipes" && printf 'kind: recipe\ntitle: [\n' >"$T/badrecipes/x.yaml"
expect_rc 5 "$NPL" list --recipes "$T/badrecipes"
# the table itself lists these codes
for code in 0 1 2 3 4 5; do
	grep -q "^| $code | " "$NPL_SRC/README.md" || fail "README's exit-code table lacks $code"
done
finish
