complete -c roster-state -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-state -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-state -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-state -l hook -d 'Run as a harness\'s hook: read the payload, record the state, finish within 500 ms; prints only a delivery (see MESSAGES)' -r -f -a "claude-code\t''
codex\t''
gemini-cli\t''
cursor-agent\t''
copilot\t''
goose\t''
opencode\t''
aider\t''
amp\t''
auto\t''"
complete -c roster-state -l harness -d 'Do what the hook does, and say what happened (to try a hook by hand)' -r -f -a "claude-code\t''
codex\t''
gemini-cli\t''
cursor-agent\t''
copilot\t''
goose\t''
opencode\t''
aider\t''
amp\t''"
complete -c roster-state -s e -l event -d 'The event, as the harness\'s hook configuration names it (default: the payload\'s event name)' -r
complete -c roster-state -s p -l pid -d 'Name the session\'s owner when the payload\'s session id names no record: a pid or `parent`' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-state -- roster-state --pid '' 2>/dev/null)\t''"
complete -c roster-state -l json -d 'Print JSON, same as --format json'
complete -c roster-state -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-state -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-state -s V -l version -d 'Print version'
