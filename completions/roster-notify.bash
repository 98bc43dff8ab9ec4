_roster__notify() {
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
                cmd="roster__notify"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        roster__notify)
            opts="-q -b -t -h -V --dir --format --json --quiet --color --backend --triggers --turn-finished-after --flap-window --redact --timeout --ntfy-url --ntfy-token-env --webhook-url --ca-certificate --exec --terminal-sequence --host --hosts-file --help --version"
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
                --backend)
                    COMPREPLY=($(compgen -W "desktop terminal ntfy webhook exec" -- "${cur}"))
                    return 0
                    ;;
                -b)
                    COMPREPLY=($(compgen -W "desktop terminal ntfy webhook exec" -- "${cur}"))
                    return 0
                    ;;
                --triggers)
                    COMPREPLY=($(compgen -W "waiting turn-finished crashed" -- "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -W "waiting turn-finished crashed" -- "${cur}"))
                    return 0
                    ;;
                --turn-finished-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flap-window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ntfy-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ntfy-token-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --webhook-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --terminal-sequence)
                    COMPREPLY=($(compgen -W "osc777 osc9" -- "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts-file)
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
    complete -F _roster__notify -o nosort -o bashdefault -o default roster-notify
else
    complete -F _roster__notify -o bashdefault -o default roster-notify
fi
