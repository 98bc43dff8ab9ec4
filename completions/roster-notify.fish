complete -c roster-notify -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-notify -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-notify -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-notify -s b -l backend -d 'Where notices go, a comma list of desktop, terminal, ntfy, webhook, exec (beats [notify] backends; default desktop)' -r -f -a "desktop\t''
terminal\t''
ntfy\t''
webhook\t''
exec\t''"
complete -c roster-notify -s t -l triggers -d 'Which moments to tell of, a comma list of waiting, turn-finished, crashed; the others are off (beats [notify])' -r -f -a "waiting\t''
turn-finished\t''
crashed\t''"
complete -c roster-notify -l turn-finished-after -d 'The shortest turn whose end is told, in seconds (default 30)' -r
complete -c roster-notify -l flap-window -d 'Seconds a session must stay out of waiting before its notice is withdrawn; a flap within it keeps one notice (default 3)' -r
complete -c roster-notify -l timeout -d 'The longest one attempt of a backend may take, in seconds (default 10)' -r
complete -c roster-notify -l ntfy-url -d 'The ntfy topic URL to publish to (beats [notify.ntfy] url)' -r
complete -c roster-notify -l ntfy-token-env -d 'The environment variable that holds the ntfy access token (never the token itself)' -r
complete -c roster-notify -l webhook-url -d 'The URL the webhook backend posts each notice to as JSON (beats [notify.webhook] url)' -r
complete -c roster-notify -l ca-certificate -d 'A PEM file of the certificate authority to trust for ntfy and the webhook (a server of your own)' -r -F
complete -c roster-notify -l exec -d 'The program the exec backend runs for each notice, with the notice as JSON on its stdin (beats [notify.exec] command)' -r
complete -c roster-notify -l terminal-sequence -d 'The escape sequence of the terminal backend' -r -f -a "osc777\t''
osc9\t''"
complete -c roster-notify -l host -d 'Follow the sessions of another machine through your ssh: [USER@]HOST[:PORT]; repeatable; `local` is this one' -r
complete -c roster-notify -l hosts-file -d 'Follow the machines listed in FILE (one a line), as --host does' -r -F
complete -c roster-notify -l json -d 'Print JSON, same as --format json'
complete -c roster-notify -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-notify -l redact -d 'Leave paths and names (directory, project, branch, agent, session id, host) out of notices that leave the machine (ntfy, webhook, exec)'
complete -c roster-notify -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-notify -s V -l version -d 'Print version'
