_roster__send() {
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
                cmd="roster__send"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        roster__send)
            opts="-q -t -f -s -h -V --dir --format --json --quiet --color --to --from --ttl --wait --status --help --version"
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
                --to)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-send -- roster-send --to '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-send -- roster-send --to '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-send -- roster-send --from '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                -f)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-send -- roster-send --from '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --status)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -s)
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
    complete -F _roster__send -o nosort -o bashdefault -o default roster-send
else
    complete -F _roster__send -o bashdefault -o default roster-send
fi
