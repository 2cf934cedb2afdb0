# render -o: an empty -o is refused (it would name the current folder, or / for --all).
. "$(dirname "$0")/lib.sh"
PD=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms

# files DIR: the names in DIR, hidden ones too, on one line
files() { (cd "$1" && ls -A | tr '\n' ' ' | sed 's/ $//'); }

# ---- 12: an empty -o is a usage error, not "/" or the current folder
mkdir "$T/cwd"
cd "$T/cwd" || exit 1
expect_rc 2 "$NPL" render $PD -o ""
expect_grep "$T/err" "npulaunch: render: -o needs a folder, not an empty name"
expect_rc 2 "$NPL" render --all -o ""
expect_rc 2 "$NPL" render --all --output= --check
cd - >/dev/null || exit 1
expect_eq "$(files "$T/cwd")" "" "files written by render -o ''"
[[ -e /$PD ]] && fail "render --all -o '' wrote into /"

finish
