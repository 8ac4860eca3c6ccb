#!/usr/bin/env bash
# Man pages from the CLI's own help: warplens.1 from `warplens --help` and warplens-<verb>.1 from
# `warplens <verb> --help` for every verb that lists, so a page says exactly what --help says and
# cannot drift from it. Run by the build (CMakeLists.txt, target warplens_man) after the CLI is
# linked; a verb whose --help fails or prints nothing fails the build.
#   man-pages.sh WARPLENS_BINARY OUT_DIR VERSION
set -euo pipefail
cli=$1 out=$2 version=$3
mkdir -p "$out"

# roff: backslashes as \e, hyphens as \- (so options copy and search as ASCII), a line starting
# with . or ' is text, not a request; the help's own layout is kept (.nf).
to_roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\([.']\)/\\\\\&\1/"; }

page() { # NAME SECTION-TITLE ONE-LINE HELP-FILE
    local name=$1 what=$2 help=$3 upper
    upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
    {
        printf '.TH %s 1 "" "warplens %s" "warplens manual"\n' "$upper" "$version"
        printf '.SH NAME\n%s \\- %s\n' "$(printf '%s' "$name" | to_roff)" "$(printf '%s' "$what" | to_roff)"
        printf '.SH SYNOPSIS AND OPTIONS\n.nf\n'
        to_roff <"$help"
        printf '.fi\n.SH SEE ALSO\n'
        if [ "$name" = warplens ]; then
            printf 'warplens\\-<command>(1) for each command above; the README and docs/ (installed under share/doc/warplens)\n'
        else
            printf 'warplens(1)\n'
        fi
    } >"$out/$name.1.tmp"
    mv "$out/$name.1.tmp" "$out/$name.1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" --help >"$tmp/main"
page warplens "a GPU profiler that makes the CPU<->GPU boundary visible" "$tmp/main"

# the verbs: the lines of the "commands:" block, "  <verb>  <summary>"
n=0
while IFS= read -r line; do
    verb=$(printf '%s' "$line" | awk '{print $1}')
    summary=$(printf '%s' "$line" | sed -e 's/^ *[^ ]* *//')
    if ! "$cli" "$verb" --help >"$tmp/$verb" 2>"$tmp/$verb.err" || [ ! -s "$tmp/$verb" ]; then
        echo "man-pages: \`warplens $verb --help\` failed or printed nothing:" >&2
        cat "$tmp/$verb.err" >&2
        exit 1
    fi
    page "warplens-$verb" "$summary" "$tmp/$verb"
    n=$((n + 1))
done < <(sed -n '/^commands:/,/^$/p' "$tmp/main" | grep -E '^  [a-z][a-z0-9-]* ')
if [ "$n" -eq 0 ]; then
    echo "man-pages: no commands found in \`warplens --help\`" >&2
    exit 1
fi
echo "$n" >"$out/.verbs"
