complete -c roster-send -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-send -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-send -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-send -s t -l to -d 'The session to send to: its owner\'s pid, its session id, or the agent name of exactly one live session' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-send -- roster-send --to '' 2>/dev/null)\t''"
complete -c roster-send -s f -l from -d 'Send as the session of this pid (default: the session roster-send runs in, else the process that ran it)' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-send -- roster-send --from '' 2>/dev/null)\t''"
complete -c roster-send -l ttl -d 'How long the message waits for delivery before it expires: 30s, 10m, 2h, 1d (default 1h)' -r
complete -c roster-send -l wait -d 'Wait for the message\'s outcome, at most DURATION (default: until it expires)' -r
complete -c roster-send -s s -l status -d 'Say what became of the message ID: pending, delivered, expired or refused' -r
complete -c roster-send -l json -d 'Print JSON, same as --format json'
complete -c roster-send -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-send -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-send -s V -l version -d 'Print version'
