# Site files as first-class input (issue 17): located errors with the key as written, YAML's
# null said as such, two files merged in order (a key in both refused), one rule for a value a
# recipe or target has no use for (a note, said once a run; an error under --strict), and
# validate --site.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
K20=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
PD=kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms
NODRAFT=deepseek-r1-w4a8-8p-in3k5-out1k5-50ms

# ---- located, with the key as the file writes it ----
printf 'model-path: relative\nifname: eth0\n' >"$T/rel.yaml"
expect_rc 2 "$NPL" render $K20 --site "$T/rel.yaml"
expect_grep "$T/err" "npulaunch: $T/rel.yaml:1:13: error: 'model-path' must be an absolute path, not 'relative'"
printf 'model-path: ~\nifname:\n' >"$T/null.yaml"
expect_rc 2 "$NPL" render $K20 --site "$T/null.yaml"
expect_grep "$T/err" "$T/null.yaml:1:13: error: 'model-path' is empty (YAML reads '~' as null): give its value, or leave the key out"
expect_grep "$T/err" "$T/null.yaml:2:8: error: 'ifname' is empty"
printf 'prefill-ip: [10.0.0.1, nope]\n' >"$T/ip.yaml"
expect_rc 2 "$NPL" render $PD --site "$T/ip.yaml"
expect_grep "$T/err" "$T/ip.yaml:1:24: error: 'prefill-ip' 'nope' is not an IPv4 or IPv6 address"

# ---- validate --site: every problem, located, without a recipe ----
printf 'model-path: rel\nifnam: eth0\ndecode-ip: 10.0.0.2\n' >"$T/bad.yaml"
expect_rc 2 "$NPL" validate --site "$T/bad.yaml"
expect_grep "$T/err" "$T/bad.yaml:1:13: error: 'model-path' must be an absolute path, not 'rel'"
expect_grep "$T/err" "$T/bad.yaml:2:1: error: unknown site key 'ifnam' (did you mean 'ifname'?)"
expect_grep "$T/err" "npulaunch: validate: 1 site file, 1 key, 2 errors"
expect_rc 2 "$NPL" validate --site "$T/bad.yaml" --json
expect_eq "$(jq -c '[.errors, [.problems[] | .line]]' "$T/out")" "[2,[1,2]]" "validate --site --json"
printf 'model-path: /m\nifname: eth0\nprefill-ip: 10.0.0.1\ndecode-ip: 10.0.0.2\n' >"$T/cluster.yaml"
expect_rc 0 "$NPL" validate --site "$T/cluster.yaml"
expect_grep "$T/err" "npulaunch: validate: 1 site file, 4 keys, 0 errors"
expect_rc 2 "$NPL" validate --site "$T/cluster.yaml" recipes/

# ---- one site file for every recipe of a cluster: what a recipe has no use for is a note ----
# (an address list of a PD cluster for a one-node recipe, as a draft model for a recipe without one)
expect_rc 0 "$NPL" render $K20 --site "$T/cluster.yaml" --draft-model-path /d -o "$T/k20"
expect_grep "$T/err" "note: --prefill-ip: recipe '$K20' has no use for it (it is not a pd-disagg recipe): ignored (--strict refuses it)"
expect_grep "$T/err" "note: --decode-ip: recipe '$K20' has no use for it"
expect_rc 0 "$NPL" render $NODRAFT --site "$T/cluster.yaml" --draft-model-path /d -o "$T/nd"
expect_grep "$T/err" "note: --draft-model-path: recipe '$NODRAFT' has no use for it (it has no draft model): ignored (--strict refuses it)"
# the same rule for every key under --strict: refused, nothing written
expect_rc 2 "$NPL" render $NODRAFT --site "$T/cluster.yaml" --draft-model-path /d --strict -o "$T/nd2"
expect_grep "$T/err" "error: --draft-model-path: recipe '$NODRAFT' has no use for it (it has no draft model); --strict refuses it"
expect_grep "$T/err" "error: --prefill-ip: recipe '$NODRAFT' has no use for it (it is not a pd-disagg recipe); --strict refuses it"
[[ -e $T/nd2 ]] && fail "a refused render wrote $T/nd2"
# another target's value too (a site file holds every target's): a note, or under --strict an error
printf 'slurm-partition: npu\nnamespace: llm\n' >"$T/targets.yaml"
expect_rc 0 "$NPL" render $K20 --site "$T/cluster.yaml" --site "$T/targets.yaml" --draft-model-path /d -o "$T/k20b"
expect_grep "$T/err" "note: --slurm-partition: render (the scripts) has no use for it (a value of --target slurm)"
expect_grep "$T/err" "note: --namespace: render (the scripts) has no use for it (a value of --target k8s, rbg or docker)"
expect_rc 2 "$NPL" render $K20 --site "$T/targets.yaml" --strict
# render --all: the note said once, with the recipes it applies to counted
expect_rc 0 "$NPL" render --all --draft-model-path /d -o "$T/all"
expect_eq "$(grep -c 'note: --draft-model-path' "$T/err")" 1 "the unused-value note of render --all"
grep -qE '^npulaunch: note: the same for [0-9]+ more: ' "$T/err" || fail "render --all does not count the others: $(tail -n 3 "$T/err")"

# ---- two site files: merged in order; a key in both is refused, naming both; flags win ----
printf 'model-path: /m\n' >"$T/a.yaml"
printf 'ifname: eth0\ndraft-model-path: /d\n' >"$T/b.yaml"
printf 'model-path: /other\n' >"$T/c.yaml"
expect_rc 0 "$NPL" show $K20 --site "$T/a.yaml" --site "$T/b.yaml" --json
expect_eq "$(jq -r '.site["model-path"], .site.ifname' "$T/out" | tr '\n' ' ')" "/m eth0 " "two site files merged"
expect_rc 2 "$NPL" show $K20 --site "$T/a.yaml" --site "$T/c.yaml"
expect_grep "$T/err" "'model-path' is in both $T/a.yaml and $T/c.yaml: give it in one site file (or as --model-path, which wins)"
expect_rc 0 "$NPL" show $K20 --site "$T/a.yaml" --site "$T/c.yaml" --model-path /flag --json
expect_eq "$(jq -r '.site["model-path"]' "$T/out")" "/flag" "a flag wins over two files"
finish
