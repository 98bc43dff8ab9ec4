complete -c roster-prune -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-prune -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-prune -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-prune -s o -l older-than -d 'Also remove unknown and problem entries older than DURATION (90m, 36h, 7d, 2w)' -r -f -a "1h\t''
1d\t''
7d\t''
2w\t''"
complete -c roster-prune -l pid -d 'With --current: name the owner process, a pid or `parent`' -r -f -a "(env _CLAP_COMPLETE_INDEX=2 ROSTER_COMPLETE=bash roster-prune -- roster-prune --pid '' 2>/dev/null)\t''"
complete -c roster-prune -l hook -d 'With --current: run as a session-end hook (read the payload if it comes, print nothing, always exit 0, finish within 500 ms)' -r -f -a "claude-code\t''
codex\t''
gemini-cli\t''
cursor-agent\t''
copilot\t''
goose\t''
opencode\t''
aider\t''
amp\t''
auto\t''"
complete -c roster-prune -l json -d 'Print JSON, same as --format json'
complete -c roster-prune -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-prune -s n -l dry-run -d 'Report what would be removed without removing anything'
complete -c roster-prune -l current -d 'Remove the calling session\'s own record and consent marker, alive or not'
complete -c roster-prune -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-prune -s V -l version -d 'Print version'
