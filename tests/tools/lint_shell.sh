#!/bin/bash
# lint_shell.sh SRC: the project's own shell (the command-line tests and their lib.sh, the
# test tools, the benchmark, the installer, CI) passes shellcheck at warning level, as the
# scripts npulaunch writes do. Notes and style hints (SC2016's single-quoted $, say) are the
# author's call. The generated scripts the tests keep (tests/data, tests/slurm/expected) are
# npulaunch's output, checked by cli.shellcheck and the golden tests, not here.
set -u
src=${1:?usage: lint_shell.sh SRC}
cd "$src" || exit 1
command -v shellcheck >/dev/null || {
	echo "lint_shell.sh: shellcheck is not installed (tests/install-deps.sh installs it)" >&2
	exit 1
}
mapfile -t files < <(find .ci/run bench tests -type f \( -name '*.sh' -o -path .ci/run \) \
	-not -path 'tests/data/*' -not -path 'tests/slurm/expected/*' | sort)
((${#files[@]} >= 40)) || { echo "lint_shell.sh: only ${#files[@]} shell files under $src" >&2; exit 1; }
# -x -P SCRIPTDIR: a test's '# shellcheck source=lib.sh' is followed, so the variables lib.sh
# sets for it count as set
shellcheck -S warning -x -P SCRIPTDIR -f gcc "${files[@]}" && exit 0
echo "lint_shell.sh: the shell above does not pass shellcheck (${#files[@]} files checked)" >&2
exit 1
