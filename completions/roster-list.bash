_roster__list() {
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
                cmd="roster__list"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        roster__list)
            opts="-q -a -A -H -i -C -s -c -W -w -h -V --dir --format --json --quiet --color --all --agent --harness --session-id --cwd --state --no-adopt --columns --wide --width --no-legend --ended --since --watch --until-gone --host --hosts-file --connect-timeout --help --version"
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
                --agent)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --agent '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --agent '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --harness)
                    COMPREPLY=($(compgen -W "claude-code codex gemini-cli cursor-agent copilot goose opencode aider amp" -- "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -W "claude-code codex gemini-cli cursor-agent copilot goose opencode aider amp" -- "${cur}"))
                    return 0
                    ;;
                --session-id)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --session-id '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --session-id '' 2>/dev/null)" -- "${cur}"))
                    return 0
                    ;;
                --cwd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state)
                    COMPREPLY=($(compgen -W "working idle waiting unknown" -- "${cur}"))
                    return 0
                    ;;
                -s)
                    COMPREPLY=($(compgen -W "working idle waiting unknown" -- "${cur}"))
                    return 0
                    ;;
                --columns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --width)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-gone)
                    COMPREPLY=($(compgen -W "$(_CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --until-gone '' 2>/dev/null)" -- "${cur}"))
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
                --connect-timeout)
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
    complete -F _roster__list -o nosort -o bashdefault -o default roster-list
else
    complete -F _roster__list -o bashdefault -o default roster-list
fi
