#!/usr/bin/env bash
# The verbs' shared option parser seen from the command line, and what is generated from the
# option tables: every verb of `warplens --help` has a --help that lists every option its table has
# (read from the generated bash completion: both come from the one table), the completion scripts
# name every verb and option, are valid bash (bash -n) and zsh (zsh -n, where zsh is installed:
# scripts/deps.sh installs it), and complete verbs, options, choices and run's program; option
# syntax on real sessions: --opt=value, -oFILE, grouped short options, --, suggestions.
set -u
. "$(dirname "$0")/checks.sh"
W=$WARPLENS_BIN
S=$WARPLENS_TEST_DATA/demo-h100.wlsession

"$W" completion bash >comp.bash && ok || bad "completion bash"
"$W" completion zsh >comp.zsh && ok || bad "completion zsh"
check 'bash -n comp.bash' "bash -n on the bash completion"
if command -v zsh >/dev/null; then
    check 'zsh -n comp.zsh' "zsh -n on the zsh completion"
else
    echo "note: zsh not installed (scripts/deps.sh installs it): zsh -n skipped"
fi

# every verb: --help works and lists every option of its table; both scripts know verb and options
verbs=$("$W" --help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/{print $1}')
nverbs=0
for v in $verbs; do
    nverbs=$((nverbs + 1))
    "$W" "$v" --help >help.txt 2>&1 && ok || bad "$v --help fails"
    "$W" "$v" -h | cmp -s - help.txt && ok || bad "$v -h differs from --help"
    grep -q "^usage: warplens $v" help.txt && ok || bad "$v --help has no usage line"
    opts=$(sed -n "/^    $v)\$/,/^        ;;\$/p" comp.bash | sed -n 's/^        opts="\(.*\)"$/\1/p')
    [ -n "$opts" ] && ok || bad "bash completion has no options for $v"
    for o in $opts; do
        grep -qE -- "(^| |, )$o([ ,=[]|\$)" help.txt && ok || bad "$v --help does not list $o"
        case $o in --*) grep -qF -- "$o" comp.zsh && ok || bad "zsh completion lacks $v $o" ;; esac
    done
    grep -qE "^  $v\)\$" comp.zsh && ok || bad "zsh completion lacks verb $v"
    grep -qE "^    '$v:" comp.zsh && ok || bad "zsh completion does not describe $v"
done
[ "$nverbs" -ge 18 ] && ok || bad "only $nverbs verbs in warplens --help"
"$W" completion fish 2>err.txt; [ $? = 2 ] && grep -q "no completion for 'fish'" err.txt && ok || bad "completion fish"

# the bash completion completes: verbs, options, an option's choices, run's program
complete_words() { # WORDS... (the last one is being completed)
    bash -c '. ./comp.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warplens; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
check '[ "$(complete_words warplens expo)" = export ]' "complete a verb: $(complete_words warplens expo)"
check '[ "$(complete_words warplens export s.wlsession --fo)" = --format ]' "complete an option"
check '[ "$(complete_words warplens export s.wlsession --format "" | sort | tr "\n" " ")" = "jfr json perfetto " ]' \
    "complete --format's choices: $(complete_words warplens export s.wlsession --format '')"
check 'complete_words warplens run -q --metrics-kernel gemm bas | grep -qx bash' "run: the program is a command"
check '! complete_words warplens run -q bash --ver | grep -q -- --verbose' "run: nothing after the program is warplens'"
check 'complete_words warplens stats --t | grep -qx -- --top' "stats --t"

# option syntax on a real session
"$W" stats "$S" --top=2 --only=kernels >a.txt 2>&1 && "$W" stats --only kernels --top 2 -- "$S" >b.txt 2>&1 \
    && cmp -s a.txt b.txt && ok || bad "--opt=value and -- give the same as --opt value: $(head -3 a.txt)"
"$W" export "$S" -qoout.json && [ -s out.json ] && ok || bad "-qoFILE (grouped, attached value)"
"$W" export "$S" -q -o out2.json && cmp -s out.json out2.json && ok || bad "-o FILE equals -oFILE"
"$W" kernels "$S" --sotr total_ns >/dev/null 2>err.txt; [ $? = 2 ] \
    && [ "$(cat err.txt)" = "warplens kernels: unknown option '--sotr'; did you mean --sort?" ] && ok \
    || bad "suggestion: $(cat err.txt)"
"$W" kernels "$S" --top >/dev/null 2>err.txt; [ $? = 2 ] && grep -qx "warplens kernels: --top needs a value (N)" err.txt \
    && ok || bad "missing value: $(cat err.txt)"
"$W" info "$S" --check=yes 2>err.txt; [ $? = 2 ] && grep -q -- "--check takes no value" err.txt && ok || bad "flag with a value"
"$W" stats "$S" "$S" 2>err.txt; [ $? = 2 ] && grep -q "one session at a time" err.txt && ok || bad "two sessions"
"$W" stast "$S" 2>err.txt; [ $? = 2 ] && grep -q "did you mean stats?" err.txt && ok || bad "verb suggestion"
# run: options end at the program; its options after it are the program's
"$W" run -q --record=all -- sh -c 'echo "$@"' sh --quiet -o x >out.txt 2>err.txt
grep -qx -- "--quiet -o x" out.txt && ok || bad "run passes what follows the program untouched: $(cat out.txt err.txt)"

summary options_cli
