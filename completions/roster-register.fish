function __fish_roster_live_pids
    string replace -- /proc/ '' /proc/* | string match --regex -- '^(?:[2-9]|[1-9][0-9]+)$'
end

complete -c roster-register -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-register -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-register -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-register -s p -l pid -d 'Name the owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command' -r -f -a "parent\t''
(__fish_roster_live_pids)\t''"
complete -c roster-register -s a -l agent -d 'Register under this agent name ("" for anonymous; default: ROSTER_AGENT, then the recorded name on a refresh, then agent_name in .roster.toml)' -r
complete -c roster-register -s s -l session-id -d 'Record the harness\'s session id (default: the hook payload, ROSTER_SESSION_ID, the harness\'s export, else the recorded one)' -r
complete -c roster-register -l cwd -d 'Record DIR as the session\'s working directory (default: the payload\'s cwd; by hand the recorded one, else the current directory)' -r -F
complete -c roster-register -s H -l harness -d 'Record the harness by name (default: detected from the owner process, else the recorded one)' -r -f -a "claude-code\t''
codex\t''
gemini-cli\t''
cursor-agent\t''
copilot\t''
goose\t''
opencode\t''
aider\t''
amp\t''"
complete -c roster-register -l socket -d 'Record the harness\'s messaging socket (default: CLAUDE_CODE_MESSAGING_SOCKET when it exists)' -r -F
complete -c roster-register -l hook -d 'Run as a session-start hook: read the payload from stdin, print nothing, always exit 0, finish within 1 s' -r -f -a "claude-code\t''
codex\t''
gemini-cli\t''
cursor-agent\t''
copilot\t''
goose\t''
opencode\t''
aider\t''
amp\t''
auto\t''"
complete -c roster-register -l json -d 'Print JSON, same as --format json'
complete -c roster-register -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-register -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-register -s V -l version -d 'Print version'
