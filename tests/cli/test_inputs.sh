# Hostile inputs in bounded time and memory, and nothing from outside reaches
# the terminal raw:
# - every file npulaunch reads (site files, recipes and recipe folders, templates,
#   a bundle's manifest, verify's results, the recipe cache) must be a regular
#   file within a size limit: /dev/zero, a link to it, a FIFO and a huge file
#   are refused at once, named; a recipe folder that links back into itself is
#   an error, not an endless walk;
# - a flood of diagnostics prints the first NPL_DIAG_SHOWN (100) and counts the
#   rest, in linear time; a long source line is shown as a window;
# - control characters from recipes, site files, results files and servers are
#   escaped in list, show, diff, status, wait, verify and the diagnostics.
# Every command that could hang or run away runs under `timeout`: a hang fails
# the test instead of stalling the suite.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
ID=qwen3-8b-w8a8-1p-in3k5-out1k5-37ms
SITE=(--model-path /m --draft-model-path /d)

# run_t WANT CMD...: expect_rc under a timeout and, unless the binary is sanitised (its shadow
# memory needs the address space), a 2 GiB memory limit: a regression that reads /dev/zero
# fails here instead of exhausting the machine
if grep -qa __asan_init "$NPL"; then limit=unlimited; else limit=2097152; fi
run_t() {
	local want=$1
	shift
	expect_rc "$want" bash -c 'ulimit -v "$1" && shift && exec timeout 20 "$@"' _ "$limit" "$@"
}

# ---- reads: only regular files, within a limit -------------------------------------------------

mkfifo "$T/fifo.yaml" "$T/fifo.jsonl"
ln -s /dev/zero "$T/zero.yaml"
run_t 2 "$NPL" show $ID --site /dev/zero
expect_grep "$T/err" "npulaunch: error: cannot read '/dev/zero': a character device, not a regular file"
run_t 2 "$NPL" show $ID --site "$T/zero.yaml"
expect_grep "$T/err" "cannot read '$T/zero.yaml': a character device, not a regular file"
run_t 2 "$NPL" show $ID --site "$T/fifo.yaml"
expect_grep "$T/err" "cannot read '$T/fifo.yaml': a FIFO, not a regular file"
run_t 2 "$NPL" show $ID --site "$T"
expect_grep "$T/err" "cannot read '$T': a directory, not a regular file"
# process substitution is a pipe: refused too, the file is the way
run_t 2 bash -c '"$1" show "$2" --site <(echo "model-path: /m")' _ "$NPL" $ID
expect_grep "$T/err" "a FIFO, not a regular file"
# a site file over 16 MiB (sparse: no disk space needed)
truncate -s $((16 * 1024 * 1024 + 1)) "$T/big-site.yaml"
run_t 2 "$NPL" show $ID --site "$T/big-site.yaml"
expect_grep "$T/err" "cannot read '$T/big-site.yaml': larger than 16 MiB, the limit for this kind of file"

# verify's results: the same, with a larger limit
run_t 2 "$NPL" verify /dev/zero $ID
expect_grep "$T/err" "cannot read '/dev/zero': a character device, not a regular file"
run_t 2 "$NPL" verify "$T/fifo.jsonl" $ID
expect_grep "$T/err" "cannot read '$T/fifo.jsonl': a FIFO, not a regular file"
truncate -s $((256 * 1024 * 1024 + 1)) "$T/big.jsonl"
run_t 2 "$NPL" verify "$T/big.jsonl" $ID
expect_grep "$T/err" "cannot read '$T/big.jsonl': larger than 256 MiB, the limit for this kind of file"

# recipes: a file of a folder that links to /dev/zero, or is a FIFO; a file given to validate
mkdir -p "$T/r-zero" "$T/r-fifo"
ln -s /dev/zero "$T/r-zero/evil.yaml"
mkfifo "$T/r-fifo/evil.yaml"
run_t 5 "$NPL" --recipes "$T/r-zero" list
expect_grep "$T/err" "cannot read '$T/r-zero/evil.yaml': a character device, not a regular file"
run_t 5 env NPULAUNCH_RECIPES="$T/r-fifo" "$NPL" list
expect_grep "$T/err" "cannot read '$T/r-fifo/evil.yaml': a FIFO, not a regular file"
run_t 5 "$NPL" validate "$T/fifo.yaml"
expect_grep "$T/err" "cannot read '$T/fifo.yaml': a FIFO, not a regular file"
# a link to a regular recipe file is that file
mkdir -p "$T/r-link"
cp "$NPL_SRC/recipes/qwen3-8b/model.yaml" "$T/model.yaml"
sed -i 's/^id: qwen3-8b$/id: linked-model/' "$T/model.yaml"
ln -s "$T/model.yaml" "$T/r-link/model.yaml"
run_t 0 "$NPL" --recipes "$T/r-link" list --models
expect_grep "$T/out" "linked-model"

# a recipe folder that links back into itself, or twice to one folder: an error, at once
mkdir -p "$T/r-loop/sub"
cp "$T/model.yaml" "$T/r-loop/sub/model.yaml"
ln -s .. "$T/r-loop/sub/up"
ln -s sub "$T/r-loop/again"
for i in 1 2 3 4 5 6; do ln -s . "$T/r-loop/sub/self$i"; done
run_t 5 "$NPL" --recipes "$T/r-loop" list
expect_grep "$T/err" "recipe folder '$T/r-loop/sub' is '$T/r-loop/again' again (a symbolic link?); each folder is read once"
expect_grep "$T/err" "recipe folder '$T/r-loop/again/up' is '$T/r-loop' again"
expect_grep "$T/err" "recipe folder '$T/r-loop/again/self1' is '$T/r-loop/again' again"
expect_nogrep "$T/err" "duplicate model id"

# templates
mkdir -p "$T/tmpl"
cp "$NPL_SRC"/templates/* "$T/tmpl/"
rm "$T/tmpl/server.sh.tmpl"
mkfifo "$T/tmpl/server.sh.tmpl"
run_t 1 "$NPL" --templates "$T/tmpl" render $ID "${SITE[@]}" -o "$T/r-tmpl"
expect_grep "$T/err" "cannot read '$T/tmpl/server.sh.tmpl': a FIFO, not a regular file"
[[ -e $T/r-tmpl ]] && fail "render with a FIFO template left output"

# a bundle's manifest: a FIFO, a link to /dev/zero
expect_rc 0 "$NPL" render $ID "${SITE[@]}" -o "$T/b"
mv "$T/b/manifest.json" "$T/manifest.json"
mkfifo "$T/b/manifest.json"
run_t 2 "$NPL" status "$T/b"
expect_grep "$T/err" "cannot read '$T/b/manifest.json': a FIFO, not a regular file"
rm "$T/b/manifest.json"
ln -s /dev/zero "$T/b/manifest.json"
run_t 2 "$NPL" status "$T/b"
expect_grep "$T/err" "cannot read '$T/b/manifest.json': a character device, not a regular file"
rm "$T/b/manifest.json"
mv "$T/manifest.json" "$T/b/manifest.json"

# ---- a flood of diagnostics: the first 100, the rest counted, in linear time -------------------

# run_flood WANT_MORE DIR: validate DIR; 100 messages with their source lines, then the count
run_flood() {
	run_t 5 "$NPL" validate "$2"
	expect_eq "$(grep -c '^npulaunch: .*error: ' "$T/err")" 100 "$2: error messages shown"
	grep -qE "^npulaunch: [0-9]+ more messages not shown \\($1 errors" "$T/err" ||
		fail "$2: no count of the messages not shown: $(tail -3 "$T/err")"
	expect_eq "$(grep -cE '^ *[0-9]+ \| ' "$T/err")" 100 "$2: source lines shown"
}
mkdir -p "$T/keys" "$T/docs"
{
	printf 'kind: model\nid: many-keys\nname: Many Keys\n'
	for ((i = 0; i < 80000; i++)); do printf 'k%d: 1\n' $i; done
} >"$T/keys/model.yaml"
run_flood 79900 "$T/keys"
expect_grep "$T/err" "npulaunch: validate: 61 recipes, 80000 errors"
yes -- --- | head -n 200000 >"$T/docs/docs.yaml"
run_flood 199900 "$T/docs"
# a 10 MB line: a window of it
mkdir -p "$T/long"
{
	printf 'kind: model\nid: long-line\nname: Long Line\nlong: '
	head -c 10000000 /dev/zero | tr '\0' a
	printf '\n'
} >"$T/long/model.yaml"
run_t 5 "$NPL" validate "$T/long"
(($(wc -c <"$T/err") < 20000)) || fail "a 10 MB line made $(wc -c <"$T/err") bytes of messages"
expect_grep "$T/err" "    4 | long: $(printf 'a%.0s' {1..114})..."

# ---- terminal controls from recipes, site files, results and servers are escaped --------------

# expect_clean FILE WHAT: no C0 control but the newline, no DEL, no C1 control (as UTF-8)
expect_clean() {
	! LC_ALL=C grep -qP '[\x01-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$1" ||
		fail "$2: raw control characters: $(od -c "$1" | grep -m3 -E '033|007|302')"
}
mkdir -p "$T/evil"
cp "$NPL_SRC/recipes/qwen3-8b/model.yaml" "$T/evil/model.yaml"
sed -i 's/^id: qwen3-8b$/id: evil-model/; s/^name: .*/name: "Evil\\e]0;owned\\a\\e[2J\\u009b31m"/' "$T/evil/model.yaml"
sed -e 's/^model: qwen3-8b$/model: evil-model/' \
	-e 's/^title: .*/title: Evil W8A8 1P IN3K5 OUT1K5 37ms/' \
	-e 's/^quantization: .*/quantization: "W8A8\\e[2J"/' \
	-e 's/^  SGLANG_SCHEDULER_DECREASE_PREFILL_IDLE: 1$/  EVIL_VAR: "\\e]0;env\\a"/' \
	"$NPL_SRC/recipes/qwen3-8b/$ID.yaml" >"$T/evil/evil.yaml"
printf 'notes: "\\e]0;notes\\a"\n' >>"$T/evil/evil.yaml"
EV=evil-w8a8-1p-in3k5-out1k5-37ms
expect_rc 0 "$NPL" --recipes "$T/evil" list
expect_clean "$T/out" "list"
expect_grep "$T/out" 'Evil\x1b]0;owned\x07\x1b[2J\u009b31m'
expect_grep "$T/out" 'W8A8\x1b[2J'
expect_rc 0 "$NPL" --recipes "$T/evil" list --models
expect_clean "$T/out" "list --models"
printf 'model-path: "/models/\\e]0;site\\a"\n' >"$T/evil-site.yaml"
expect_rc 0 "$NPL" --recipes "$T/evil" show $EV --explain --site "$T/evil-site.yaml" --draft-model-path /d
expect_clean "$T/out" "show"
expect_clean "$T/err" "show's messages"
expect_grep "$T/out" 'EVIL_VAR='
expect_grep "$T/out" '\x1b]0;env\x07'
expect_grep "$T/out" '/models/\x1b]0;site\x07'
expect_grep "$T/out" '\x1b]0;notes\x07'
# --json is JSON's own escaping
expect_rc 0 "$NPL" --recipes "$T/evil" show $EV --json "${SITE[@]}"
expect_eq "$(jq -r .recipe.quantization "$T/out")" $'W8A8\e[2J' "show --json quantization"
run "$NPL" --recipes "$T/evil" diff $EV $ID
expect_eq "$rc" 1 "diff exit status"
expect_clean "$T/out" "diff"
expect_grep "$T/out" '\x1b]0;env\x07'
# a query names the model: its name in the selection message
expect_rc 0 "$NPL" --recipes "$T/evil" show evil-model --tpot 40ms "${SITE[@]}"
expect_clean "$T/err" "the selection message"
# diagnostics: a quoted value and a source line
printf 'kind: model\nid: x\nname: X\n"\\e]0;key\\a": 1\n' >"$T/evil/bad.yaml"
expect_rc 5 "$NPL" --recipes "$T/evil" list
expect_clean "$T/err" "a diagnostic"
expect_grep "$T/err" "unknown key '\\x1b]0;key\\x07' in a model"
rm "$T/evil/bad.yaml"

# verify: a reason quoting the results, and a source line of a broken results file
jq -c '.dataset_name = "random\u001b]0;verify\u0007"' "$NPL_DATA/bench/pass.jsonl" >"$T/evil.jsonl"
run "$NPL" verify "$T/evil.jsonl" kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
expect_clean "$T/out" "verify"
expect_grep "$T/out" 'random\x1b]0;verify\x07'
printf '{"a": 1}\n{"\e]0;x\a": \e[2J}\n' >"$T/evil-broken.jsonl"
expect_rc 2 "$NPL" verify "$T/evil-broken.jsonl" kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
expect_clean "$T/err" "verify's source line"
expect_grep "$T/err" '    2 | {"\x1b]0;x\x07": \x1b[2J}'

# status: the served model path of a server; wait: a URL from outside
start_http hostile
cp -r "$T/evil" "$T/evil-st"
printf 'ports: {entry: %s}\n' "$port" >>"$T/evil-st/evil.yaml"
expect_rc 0 "$NPL" --recipes "$T/evil-st" render $EV "${SITE[@]}" -o "$T/bs"
run "$NPL" status "$T/bs"
expect_clean "$T/out" "status"
expect_grep "$T/out" '/models/\x1b]0;owned\x07\x1b[2J\u009b31mX'
# (refused: a control character is no part of a URL; the message shows it escaped)
run_t 2 "$NPL" wait $'http://127.0.0.1:1/\e]0;wait\a' --timeout 1
expect_clean "$T/out" "wait"
expect_clean "$T/err" "wait's messages"
finish
