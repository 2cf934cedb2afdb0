# The result cache (include/npulaunch/rcache.h) changes nothing but speed: list, show and render
# print and write with a warm entry exactly what they do with no cache; every input a run read
# (a recipe file, a recipe folder's entries, a site file, a template, the environment, the
# current folder, a symbolic link on the way) invalidates it when it changes; a damaged,
# foreign or failed entry is never used; render's commit checks run on a hit too.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { fail "python3 is not installed"; finish; }
C=$T/rc
export NPULAUNCH_CACHE=$C
kimi="kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"
db=$T/db
mkdir -p "$db/kimi-k2.6" "$db/qwen"
cp "$NPL_SRC/recipes/kimi-k2.6/$kimi.yaml" "$NPL_SRC/recipes/kimi-k2.6/kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms.yaml" \
	"$NPL_SRC/recipes/kimi-k2.6/model.yaml" "$db/kimi-k2.6/"
cp "$NPL_SRC"/recipes/qwen3-8b/*.yaml "$db/qwen/"
tm=$T/tmpl
cp -r "$NPL_SRC/templates" "$tm"
printf 'model-path: /models/kimi\ndraft-model-path: /models/eagle\n' >"$T/site.yaml"
ln -s "$db" "$T/link"
cp -r "$db" "$T/db2"
# untouched until their own check, so that an entry of theirs is kept (nothing racy) first
for d in add remove rename; do cp -r "$db" "$T/$d"; done
sed 's/^title: .*/title: A new recipe/' "$db/kimi-k2.6/$kimi.yaml" >"$T/remove/kimi-k2.6/new.yaml"
mkdir "$T/rename/sub" && cp "$T/remove/kimi-k2.6/new.yaml" "$T/rename/sub/"
sed -i 's/max-running-requests: 80$/max-running-requests: 77/' "$T/db2/kimi-k2.6/$kimi.yaml"
# older than the 2 s racy window: a run that read a file changed more recently keeps nothing
sleep 2.1

entries() { find "$C" -name 'result-*' ! -name '*.tmp' 2>/dev/null | sort; }
# the one entry's inode: unchanged by a hit, new when a miss stores it again
inode() { stat -c %i $(entries) 2>/dev/null | tr '\n' ' '; }

# same WHAT CMD...: stdout, stderr and exit status with the cache as with none (exit 0 unless
# WANT_RC says otherwise)
same() {
	local what=$1
	shift
	NPULAUNCH_CACHE=off run "$@"
	expect_eq "$rc" "${WANT_RC:-0}" "$what: exit status with no cache"
	local want_rc=$rc want_out want_err
	want_out=$(cat "$T/out")
	want_err=$(cat "$T/err")
	run "$@"
	expect_eq "$rc" "$want_rc" "$what: exit status"
	expect_eq "$(cat "$T/out")" "$want_out" "$what: stdout"
	expect_eq "$(cat "$T/err")" "$want_err" "$what: stderr"
}

# ---- a hit replays the run ----------------------------------------------------------------
for cmd in "list" "list --json" "show $kimi" "show $kimi --explain" "list kimi-k2.6 --tpot 20ms"; do
	rm -rf "$C"
	# shellcheck disable=SC2086
	same "$cmd (cold)" "$NPL" --recipes "$db" $cmd
	expect_eq "$(entries | wc -l)" 1 "$cmd: one entry kept"
	before=$(inode)
	# shellcheck disable=SC2086
	same "$cmd (warm)" "$NPL" --recipes "$db" $cmd
	expect_eq "$(inode)" "$before" "$cmd: the second run is a hit (the entry is not rewritten)"
done
# the compiled-in recipes, and a warning grouped over several recipes, replayed whole
rm -rf "$C"
same "render --all (cold)" "$NPL" render --all -o "$T/all"
rm -rf "$T/all.off" && NPULAUNCH_CACHE=off "$NPL" render --all -o "$T/all.off" 2>/dev/null
before=$(inode)
rm -rf "$T/all"
same "render --all (warm)" "$NPL" render --all -o "$T/all"
expect_eq "$(inode)" "$before" "render --all: the second run is a hit"
expect_grep "$T/err" "the same for"
diff -r "$T/all" "$T/all.off" >"$T/diff" || fail "render --all from the cache differs: $(head -20 "$T/diff")"
expect_rc 0 "$NPL" render --all -o "$T/all" --check

# ---- render: site file, templates; the commit's checks run on a hit ------------------------
r=("$NPL" --recipes "$db" --templates "$tm" render "$kimi" --site "$T/site.yaml" --ifname eth0)
rm -rf "$C"
expect_rc 0 "${r[@]}" -o "$T/b1"
before=$(inode)
expect_rc 0 "${r[@]}" -o "$T/b1"
expect_eq "$(inode)" "$before" "render: the second run is a hit"
NPULAUNCH_CACHE=off "${r[@]}" -o "$T/b1.off" 2>/dev/null
diff -r "$T/b1" "$T/b1.off" >"$T/diff" || fail "render from the cache differs: $(head -20 "$T/diff")"
echo '# edited' >>"$T/b1/pd-mixed.sh"
expect_rc 1 "${r[@]}" -o "$T/b1"
expect_eq "$(inode)" "$before" "render into an edited bundle: a hit"
expect_grep "$T/err" "pd-mixed.sh"
expect_grep "$T/b1/pd-mixed.sh" "# edited"

# ---- every input invalidates ---------------------------------------------------------------
check_render() {   # WHAT: the bundle the cache gives is the one no cache gives
	rm -rf "$T/o" "$T/o.off"
	run "${r[@]}" -o "$T/o"
	NPULAUNCH_CACHE=off "${r[@]}" -o "$T/o.off" >/dev/null 2>&1
	diff -r "$T/o" "$T/o.off" >"$T/diff" || fail "$1: render gives a stale bundle: $(head -20 "$T/diff")"
}
rm -rf "$C"
check_render "first"
check_render "again"
printf 'model-path: /models/kimi-v2\ndraft-model-path: /models/eagle\n' >"$T/site.yaml"
check_render "the site file changed"
grep -q /models/kimi-v2 "$T/o/pd-mixed.sh" || fail "the changed site value is not in the script"
sed -i '1a # a template line' "$tm/server.sh.tmpl"
check_render "a template changed"
grep -q '# a template line' "$T/o/pd-mixed.sh" || fail "the changed template is not in the script"
# the same size, the same second: only the stat data's nanoseconds and ctime tell
f=$db/kimi-k2.6/$kimi.yaml
sed -i 's/max-running-requests: 80$/max-running-requests: 81/' "$f"
check_render "a recipe file changed (same size)"
same "show after a recipe changed" "$NPL" --recipes "$db" show "$kimi"
expect_grep "$T/out" "max-running-requests 81"
# kept ITEM DIR: list DIR is kept in the cache (a hit next time)
kept() {
	rm -rf "$C"
	same "list $1 (cold)" "$NPL" --recipes "$2" list
	before=$(inode)
	same "list $1 (warm)" "$NPL" --recipes "$2" list
	[[ -n $before && $(inode) == "$before" ]] || fail "list $1: not kept"
}
kept "before a recipe is added" "$T/add"
sed 's/^title: .*/title: A new recipe/' "$f" >"$T/add/kimi-k2.6/new.yaml"
same "list after a recipe was added" "$NPL" --recipes "$T/add" list
expect_grep "$T/out" "a-new-recipe"
kept "before a recipe is removed" "$T/remove"
expect_grep "$T/out" "a-new-recipe"
rm "$T/remove/kimi-k2.6/new.yaml"
same "list after a recipe was removed" "$NPL" --recipes "$T/remove" list
expect_nogrep "$T/out" "a-new-recipe"
kept "before a folder is renamed" "$T/rename"
expect_grep "$T/out" "a-new-recipe"
mv "$T/rename/sub" "$T/rename/.sub"
same "list after a folder was renamed (hidden)" "$NPL" --recipes "$T/rename" list
expect_nogrep "$T/out" "a-new-recipe"
same "show through a link" "$NPL" --recipes "$T/link" show "$kimi"
ln -sfn "$T/db2" "$T/link"
same "show after the link moved" "$NPL" --recipes "$T/link" show "$kimi"
expect_grep "$T/out" "max-running-requests 77"
NPULAUNCH_RECIPES=$db same "a recipe folder from the environment" "$NPL" show "$kimi"
expect_grep "$T/out" "max-running-requests 81"
NPULAUNCH_RECIPES=$T/db2 same "another folder in the environment" "$NPL" show "$kimi"
expect_grep "$T/out" "max-running-requests 77"
mkdir -p "$T/w1/rel" "$T/w2/rel"
cp -r "$db/kimi-k2.6" "$T/w1/rel/"
cp -r "$T/db2/kimi-k2.6" "$T/w2/rel/"
(cd "$T/w1" && same "a relative folder, here" "$NPL" --recipes rel show "$kimi")
(cd "$T/w2" && same "the same relative name, elsewhere" "$NPL" --recipes rel show "$kimi")
expect_grep "$T/out" "max-running-requests 77"

# ---- what is never kept, and what is never trusted ------------------------------------------
rm -rf "$C"
expect_rc 3 "$NPL" show no-such-recipe
expect_rc 3 "$NPL" show no-such-recipe
expect_eq "$(entries | wc -l)" 0 "a failed run keeps nothing"
rm -rf "$C"
NPULAUNCH_CACHE=off "$NPL" list >/dev/null
[[ ! -e $C ]] || fail "NPULAUNCH_CACHE=off wrote $C"
NPULAUNCH_RESULT_CACHE=off "$NPL" list >/dev/null
expect_eq "$(entries | wc -l)" 0 "NPULAUNCH_RESULT_CACHE=off keeps no result"
[[ -n $(find "$C" -name 'recipes-*' 2>/dev/null) ]] || fail "NPULAUNCH_RESULT_CACHE=off turned the recipe cache off too"
# damaged entries (of the compiled-in recipes': nothing else to invalidate them): every byte
# of the header, and bytes all over the rest, flipped; truncated
rm -rf "$C"
NPULAUNCH_CACHE=off "$NPL" list >"$T/want"
"$NPL" list >/dev/null
e=$(entries)
cp "$e" "$T/entry"
size=$(stat -c %s "$e")
python3 - "$size" >"$T/offsets" <<'EOF'
import random, sys
n = int(sys.argv[1])
random.seed(7)
print(*sorted(set(list(range(min(n, 176))) + random.sample(range(n), min(n, 120)))))
EOF
bad=0
for off in $(cat "$T/offsets"); do
	cp "$T/entry" "$e"
	printf '\x5a' | dd of="$e" bs=1 seek="$off" conv=notrunc status=none
	cmp -s "$e" "$T/entry" && { printf '\xa5' | dd of="$e" bs=1 seek="$off" conv=notrunc status=none; }
	"$NPL" list >"$T/got" 2>"$T/err"
	{ [[ $? == 0 ]] && cmp -s "$T/got" "$T/want" && [[ ! -s $T/err ]]; } || { bad=$((bad + 1)); fail "a byte flipped at $off: list printed something else"; }
	((bad > 3)) && break
done
for len in 0 8 100 $((size / 2)) $((size - 1)); do
	head -c "$len" "$T/entry" >"$e"
	"$NPL" list >"$T/got" 2>"$T/err" && cmp -s "$T/got" "$T/want" ||
		fail "an entry cut to $len bytes: list printed something else"
done
# foreign: writable by the group, or a symbolic link, is not ours
cp "$T/entry" "$e" && chmod 664 "$e"
run "$NPL" list
expect_eq "$(cat "$T/out")" "$(cat "$T/want")" "a group-writable entry"
[[ $(stat -c %a "$e") == 600 ]] || fail "a group-writable entry was used, not replaced"
rm -f "$e" && cp "$T/entry" "$T/elsewhere" && ln -s "$T/elsewhere" "$e"
run "$NPL" list
expect_eq "$(cat "$T/out")" "$(cat "$T/want")" "an entry that is a symbolic link"
[[ ! -L $e ]] || fail "an entry that is a symbolic link was kept"
# a hit whose output cannot be written fails as a miss does
before=$(inode)
if [[ -w /dev/full ]]; then
	"$NPL" list >/dev/full 2>"$T/err"
	expect_eq "$?" 1 "list > /dev/full from the cache: exit status"
	expect_grep "$T/err" "cannot write standard output"
	expect_eq "$(inode)" "$before" "list > /dev/full: a hit"
fi
finish
