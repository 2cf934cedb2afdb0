# The recipe cache changes nothing but speed: every command prints the same
# with no cache, a cold cache and a warm one; a changed file is re-read; a
# broken recipe is reported on every run; a damaged or foreign cache is
# ignored; NPULAUNCH_CACHE=off writes nothing.
. "$(dirname "$0")/lib.sh"
C=$T/c
db=$T/db
mkdir -p "$db"
# the shipped recipes, one document per file, as a folder that overrides the compiled-in ones
cp -r "$NPL_SRC/recipes/." "$db/"
rm -rf "$db/engine"
kimi="kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"
# a copy with a recipe that names an unknown model: an error located in a file that the
# warm runs take from the cache unread
db2=$T/db2
cp -r "$db" "$db2"
sed -i 's/^model: kimi-k2.6$/model: kimi-k2.7/' "$db2/kimi-k2.6/$kimi.yaml"
# older than the cache's 2 s racy window, so that warm runs trust the files' stat data and
# do not read them (a file changed more recently is read and hashed)
sleep 2.1

# same CMD...: the output and exit status with no cache, cold and warm are one
# (DB: the recipe folder, $db unless set)
same() {
	local what=$* db=${DB:-$db}
	NPULAUNCH_CACHE=off run "$NPL" --recipes "$db" "$@"
	local want_rc=$rc want_out want_err
	want_out=$(cat "$T/out")
	want_err=$(cat "$T/err")
	rm -rf "$C"
	for pass in cold warm; do
		NPULAUNCH_CACHE=$C run "$NPL" --recipes "$db" "$@"
		expect_eq "$rc" "$want_rc" "$what ($pass): exit status"
		expect_eq "$(cat "$T/out")" "$want_out" "$what ($pass): stdout"
		expect_eq "$(cat "$T/err")" "$want_err" "$what ($pass): stderr"
	done
}

same list
same list --json
same list kimi-k2.6 --tpot 30ms
same list --cards 16 --mode pd-disagg
same list --dataset 64k+1k --json
same show "$kimi"
same show kimi-k2.6 --tpot 20ms --json
same render "$kimi" --dry-run
same validate
# the source line under an error in a recipe the cache gave unread
DB=$db2 same list
expect_grep "$T/err" "kimi-k2.6/$kimi.yaml:4:8: error: unknown model 'kimi-k2.7'"
expect_grep "$T/err" "4 | model: kimi-k2.7"
DB=$db2 same validate

# the warm runs read the cache: one file per recipe folder, private
ls "$C"/recipes-*.cache >/dev/null 2>&1 || fail "no cache file in $C"
[[ $(stat -c %a "$C") == 700 ]] || fail "cache folder mode $(stat -c %a "$C"), want 700"
for f in "$C"/recipes-*.cache; do
	[[ $(stat -c %a "$f") == 600 ]] || fail "$f mode $(stat -c %a "$f"), want 600"
done

# a rendered bundle is byte for byte the same from a warm cache
NPULAUNCH_CACHE=off expect_rc 0 "$NPL" render "$kimi" -o "$T/r-off"
NPULAUNCH_CACHE=$C expect_rc 0 "$NPL" render "$kimi" -o "$T/r-warm"
diff -r "$T/r-off" "$T/r-warm" >"$T/d" || fail "render differs with a warm cache: $(head -c 2000 "$T/d")"

# a changed file is read again: its new TPOT shows at once
f=$(grep -l "tpot: " "$db"/*.yaml "$db"/*/*.yaml 2>/dev/null | head -1)
NPULAUNCH_CACHE=$C expect_rc 0 "$NPL" --recipes "$db" list --json
sed -i 's/^tpot: .*/tpot: 777ms/' "$f"
NPULAUNCH_CACHE=$C expect_rc 0 "$NPL" --recipes "$db" list --json
expect_grep "$T/out" '777ms'

# a broken recipe is never cached: reported the same on every run
mkdir -p "$T/bad"
cp "$NPL_DATA/recipes/bad/wrong-type/"*.yaml "$T/bad/"
NPULAUNCH_CACHE=$C expect_rc 5 "$NPL" --recipes "$T/bad" list
cp "$T/err" "$T/err1"
NPULAUNCH_CACHE=$C expect_rc 5 "$NPL" --recipes "$T/bad" list
cmp -s "$T/err1" "$T/err" || fail "a broken recipe is reported differently on the second run"

# a recipe whose body breaks after it was cached: the bytes differ, so it is parsed again
g=$(grep -l "^flags:" "$db"/*.yaml "$db"/*/*.yaml 2>/dev/null | head -1)
if [[ -n $g ]]; then
	cp "$g" "$T/g.orig"
	sed -i 's/^flags:$/flags: [oops/' "$g"
	NPULAUNCH_CACHE=$C expect_rc 5 "$NPL" --recipes "$db" list
	expect_grep "$T/err" "invalid YAML"
	cp "$T/g.orig" "$g"
else
	fail "no recipe with a flags block in $db"
fi

# damaged caches: truncated, garbage, world-writable; all ignored, output unchanged
NPULAUNCH_CACHE=off run "$NPL" --recipes "$db" list --json
cp "$T/out" "$T/want"
NPULAUNCH_CACHE=$C expect_rc 0 "$NPL" --recipes "$db" list --json
for damage in truncate garbage flip chmod; do
	for f in "$C"/recipes-*.cache; do
		case $damage in
		truncate) head -c 100 "$f" >"$f.x" && cat "$f.x" >"$f" && rm "$f.x" ;;
		garbage) head -c 5000 /dev/urandom >"$f" ;;
		flip) printf '\377\377\377\377' | dd of="$f" bs=1 seek=60 conv=notrunc 2>/dev/null ;;
		chmod) chmod 666 "$f" ;;
		esac
	done
	NPULAUNCH_CACHE=$C expect_rc 0 "$NPL" --recipes "$db" list --json
	cmp -s "$T/out" "$T/want" || fail "a $damage cache changed the output: $(diff "$T/want" "$T/out" | head -20)"
	# and the run after it repairs the cache
	NPULAUNCH_CACHE=$C expect_rc 0 "$NPL" --recipes "$db" list --json
	cmp -s "$T/out" "$T/want" || fail "the run after a $damage cache differs"
	rm -rf "$C"
	NPULAUNCH_CACHE=$C expect_rc 0 "$NPL" --recipes "$db" list --json
done

# off means off: nothing written
rm -rf "$C"
NPULAUNCH_CACHE=off expect_rc 0 "$NPL" --recipes "$db" list
[[ -e $C ]] && fail "NPULAUNCH_CACHE=off wrote $C"
# XDG_CACHE_HOME and HOME are the defaults
(unset NPULAUNCH_CACHE; XDG_CACHE_HOME=$T/xdg "$NPL" list >/dev/null) || fail "list with XDG_CACHE_HOME failed"
ls "$T"/xdg/npulaunch/recipes-*.cache >/dev/null 2>&1 || fail "no cache under XDG_CACHE_HOME"
(unset NPULAUNCH_CACHE XDG_CACHE_HOME; HOME=$T/home "$NPL" list >/dev/null) || fail "list with HOME failed"
ls "$T"/home/.cache/npulaunch/recipes-*.cache >/dev/null 2>&1 || fail "no cache under HOME/.cache"
finish
