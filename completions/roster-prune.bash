_roster__prune() {
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
                cmd="roster__prune"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        roster__prune)
            opts="-q -o -n -h -V --dir --format --json --quiet --color --older-than --dry-run --current --pid --hook --help --version"
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
                --older-than)
                    COMPREPLY=($(compgen -W "1h 1d 7d 2w" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "1h 1d 7d 2w" -- "${cur}"))
                    return 0
                    ;;
                --pid)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-prune -- roster-prune --pid '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --hook)
                    COMPREPLY=($(compgen -W "claude-code codex gemini-cli cursor-agent copilot goose opencode aider amp auto" -- "${cur}"))
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
    complete -F _roster__prune -o nosort -o bashdefault -o default roster-prune
else
    complete -F _roster__prune -o bashdefault -o default roster-prune
fi
