complete -c roster-focus -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-focus -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-focus -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-focus -s s -l state -d 'With --next-waiting: choose among sessions in these states, a comma list of working, idle, waiting' -r -f -a "working\t''
idle\t''
waiting\t''"
complete -c roster-focus -s A -l agent -d 'With --next-waiting: choose among the sessions of this agent name' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-focus -- roster-focus --agent '' 2>/dev/null)\t''"
complete -c roster-focus -l client -d 'The tmux client to switch (as `tmux list-clients` names it; default: the most recently active one)' -r
complete -c roster-focus -l host -d 'Go to the session on another machine, through your ssh: [USER@]HOST[:PORT] (a Host of your ssh config too)' -r
complete -c roster-focus -l json -d 'Print JSON, same as --format json'
complete -c roster-focus -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-focus -s n -l next-waiting -d 'The live session that has waited longest for its user (with --state, in those states instead)'
complete -c roster-focus -s p -l print -d 'Print the command that goes there instead of running it'
complete -c roster-focus -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-focus -s V -l version -d 'Print version'
