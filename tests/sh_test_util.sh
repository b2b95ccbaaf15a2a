# sh_test_util.sh — helpers of the shell tests (tests/*/test_*.sh), sourced
# with `. "$(dirname "$0")/../sh_test_util.sh"`:
#   check DESCRIPTION COMMAND...  runs COMMAND; when it fails, prints
#                                 "FAILED: DESCRIPTION" and counts it in $fails
#   has TEXT FILE                 succeeds when FILE contains TEXT (grep, -- so
#                                 TEXT may start with -); else prints FILE
fails=0
check() { # check DESCRIPTION COMMAND...
  desc=$1
  shift
  if "$@"; then :; else
    echo "FAILED: $desc"
    fails=$((fails + 1))
  fi
}
has() { grep -q -- "$1" "$2" || { echo "  missing '$1' in:"; sed 's/^/    /' "$2"; return 1; }; }
