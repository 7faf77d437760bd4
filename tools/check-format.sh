#!/usr/bin/env bash
# Checks that every C and C++ source follows .clang-format; prints the offending lines and
# exits non-zero otherwise. The classic listings in apps/classic are kept as the reports
# printed them, so they are not checked.
#   tools/check-format.sh          # check
#   tools/check-format.sh --fix    # rewrite the files in place
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' |
  grep -v -E '^apps/classic/(lat|thru|philo)\.c$|^apps/classic/prof\.h$')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run -Werror "${files[@]}"
  echo "check-format: ${#files[@]} files follow .clang-format"
fi
