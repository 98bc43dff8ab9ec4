complete -c roster-resume -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-resume -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-resume -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-resume -l json -d 'Print JSON, same as --format json'
complete -c roster-resume -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-resume -s l -l last -d 'The session that ended last'
complete -c roster-resume -s b -l boot -d 'Every session a reboot or a crash ended since this machine booted (not those that exited)'
complete -c roster-resume -s p -l print -d 'Print the command lines (cd DIR && COMMAND) instead of running them'
complete -c roster-resume -l here -d 'Run the one session in this terminal instead of a new tmux window'
complete -c roster-resume -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-resume -s V -l version -d 'Print version'
