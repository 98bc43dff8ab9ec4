_roster__focus() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="roster__focus"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        roster__focus)
            opts="-q -n -s -A -p -h -V --dir --format --json --quiet --color --next-waiting --state --agent --print --client --host --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --state)
                    COMPREPLY=($(compgen -W "working idle waiting" -- "${cur}"))
                    return 0
                    ;;
                -s)
                    COMPREPLY=($(compgen -W "working idle waiting" -- "${cur}"))
                    return 0
                    ;;
                --agent)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-focus -- roster-focus --agent '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-focus -- roster-focus --agent '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --client)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _roster__focus -o nosort -o bashdefault -o default roster-focus
else
    complete -F _roster__focus -o bashdefault -o default roster-focus
fi
