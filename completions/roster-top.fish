complete -c roster-top -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-top -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-top -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-top -l host -d 'Show the sessions of another machine too, through your ssh: [USER@]HOST[:PORT] (repeatable; this machine\'s are always shown)' -r
complete -c roster-top -l json -d 'Print JSON, same as --format json'
complete -c roster-top -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-top -l summary -d 'Print one line for a status bar (`3 working · 1 waiting: permission (api) · 2 idle`) and exit'
complete -c roster-top -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-top -s V -l version -d 'Print version'
