complete -c roster-list -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-list -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-list -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-list -s A -l agent -d 'Show only sessions registered under this agent name ("" for the anonymous ones)' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --agent '' 2>/dev/null)\t''"
complete -c roster-list -s H -l harness -d 'Show only sessions of this harness (claude-code, codex, gemini-cli, ...; "" for an unknown one)' -r -f -a "claude-code\t''
codex\t''
gemini-cli\t''
cursor-agent\t''
copilot\t''
goose\t''
opencode\t''
aider\t''
amp\t''"
complete -c roster-list -s i -l session-id -d 'Show only the session with this session id ("" for the sessions without one)' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --session-id '' 2>/dev/null)\t''"
complete -c roster-list -s C -l cwd -d 'Show only sessions working in DIR or below it' -r -F
complete -c roster-list -s s -l state -d 'Show only sessions in these states, a comma list of working, idle, waiting (for their user), unknown' -r -f -a "working\t''
idle\t''
waiting\t''
unknown\t''"
complete -c roster-list -s c -l columns -d 'Show these columns, in this order: a comma list of pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason' -r
complete -c roster-list -l width -d 'Fit the table in N columns (default: $COLUMNS, else the terminal\'s width; no limit into a pipe)' -r
complete -c roster-list -l since -d 'With --ended, only the sessions that ended within DURATION (90m, 36h, 7d, 2w)' -r
complete -c roster-list -l until-gone -d 'Print the events until the session with this owner pid or session id is gone, then exit 0' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-list -- roster-list --until-gone '' 2>/dev/null)\t''"
complete -c roster-list -l host -d 'List the sessions of HOST through ssh (repeatable; `local` is this machine; see HOSTS)' -r
complete -c roster-list -l hosts-file -d 'List the sessions of each host FILE names, one a line (# starts a comment), as --host does' -r -F
complete -c roster-list -l connect-timeout -d 'Seconds ssh may take to connect to a host of --host' -r
complete -c roster-list -l json -d 'Print JSON, same as --format json'
complete -c roster-list -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-list -s a -l all -d 'Show dead sessions too'
complete -c roster-list -l no-adopt -d 'List roster\'s own records only, not the sessions Claude Code (~/.claude/sessions) and Copilot CLI (~/.copilot/session-state) keep'
complete -c roster-list -s W -l wide -d 'Show every cell whole: full session ids, no cut to the terminal\'s width'
complete -c roster-list -l no-legend -d 'Do not explain the table\'s marks and CONSENT labels on stderr (each is said once otherwise)'
complete -c roster-list -l ended -d 'List the sessions that ended instead, newest first: when, how (exited, crashed, reboot, removed), harness, agent, directory, session id, and the command that resumes it (or none and why)'
complete -c roster-list -s w -l watch -d 'After the rows, print one event per change until interrupted (see EVENTS)'
complete -c roster-list -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-list -s V -l version -d 'Print version'
