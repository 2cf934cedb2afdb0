# Hostile inputs in bounded time and memory:
# - every file npulaunch reads (site files, recipes and recipe folders, templates,
#   a bundle's manifest, verify's results, the recipe cache) must be a regular
#   file within a size limit: /dev/zero, a link to it, a FIFO and a huge file
#   are refused at once, named; a recipe folder that links back into itself is
#   an error, not an endless walk;
# - a flood of diagnostics prints the first NPL_DIAG_SHOWN (100) and counts the
#   rest, in linear time; a long source line is shown as a window.
# Every command that could hang or run away runs under `timeout`: a hang fails
# the test instead of stalling the suite.
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

# the recipe cache: a FIFO in its place is no cache, silently
export NPULAUNCH_CACHE="$T/fifo-cache"
expect_rc 0 "$NPL" list
cp "$T/out" "$T/want"
for f in "$T"/fifo-cache/recipes-*.cache; do rm "$f" && mkfifo "$f"; done
run_t 0 "$NPL" list
cmp -s "$T/out" "$T/want" || fail "a FIFO as the cache changed list's output"
expect_eq "$(cat "$T/err")" "" "list's messages with a FIFO as the cache"
export NPULAUNCH_CACHE="$T/cache"

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
expect_grep "$T/err" "npulaunch: validate: 58 recipes, 80000 errors"
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

finish
