# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_roster_consent_global_optspecs
    string join \n dir= format= json q/quiet color= h/help V/version
end

function __fish_roster_consent_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_roster_consent_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_roster_consent_using_subcommand
    set -l cmd (__fish_roster_consent_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c roster-consent -n "__fish_roster_consent_needs_command" -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-consent -n "__fish_roster_consent_needs_command" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-consent -n "__fish_roster_consent_needs_command" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-consent -n "__fish_roster_consent_needs_command" -l json -d 'Print JSON, same as --format json'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -s V -l version -d 'Print version'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -f -a "arm" -d 'Accept pushes for the calling session until it ends or disarms'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -f -a "disarm" -d 'Refuse pushes for the calling session, whatever the repository\'s auto_arm says'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -f -a "status" -d 'Show whether the calling session accepts pushes, and why'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -f -a "should-arm" -d 'Exit 0 when the calling session should accept pushes now, else 1, printing nothing'
complete -c roster-consent -n "__fish_roster_consent_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -s p -l pid -d 'Name the session\'s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command' -r -f -a "(env _CLAP_COMPLETE_INDEX=3 ROSTER_COMPLETE=bash roster-consent -- roster-consent arm --pid '' 2>/dev/null)\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -l cwd -d 'Take DIR as the session\'s directory, where .roster.toml is looked for (default: the cwd of the session\'s record)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -l json -d 'Print JSON, same as --format json'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand arm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -s p -l pid -d 'Name the session\'s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command' -r -f -a "(env _CLAP_COMPLETE_INDEX=3 ROSTER_COMPLETE=bash roster-consent -- roster-consent disarm --pid '' 2>/dev/null)\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -l cwd -d 'Take DIR as the session\'s directory, where .roster.toml is looked for (default: the cwd of the session\'s record)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -l json -d 'Print JSON, same as --format json'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand disarm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -s p -l pid -d 'Name the session\'s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command' -r -f -a "(env _CLAP_COMPLETE_INDEX=3 ROSTER_COMPLETE=bash roster-consent -- roster-consent status --pid '' 2>/dev/null)\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -l cwd -d 'Take DIR as the session\'s directory, where .roster.toml is looked for (default: the cwd of the session\'s record)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -l json -d 'Print JSON, same as --format json'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -s p -l pid -d 'Name the session\'s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command' -r -f -a "(env _CLAP_COMPLETE_INDEX=3 ROSTER_COMPLETE=bash roster-consent -- roster-consent should-arm --pid '' 2>/dev/null)\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -l cwd -d 'Take DIR as the session\'s directory, where .roster.toml is looked for (default: the cwd of the session\'s record)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -l dir -d 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)' -r -F
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -l json -d 'Print JSON, same as --format json'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand should-arm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand help; and not __fish_seen_subcommand_from arm disarm status should-arm help" -f -a "arm" -d 'Accept pushes for the calling session until it ends or disarms'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand help; and not __fish_seen_subcommand_from arm disarm status should-arm help" -f -a "disarm" -d 'Refuse pushes for the calling session, whatever the repository\'s auto_arm says'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand help; and not __fish_seen_subcommand_from arm disarm status should-arm help" -f -a "status" -d 'Show whether the calling session accepts pushes, and why'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand help; and not __fish_seen_subcommand_from arm disarm status should-arm help" -f -a "should-arm" -d 'Exit 0 when the calling session should accept pushes now, else 1, printing nothing'
complete -c roster-consent -n "__fish_roster_consent_using_subcommand help; and not __fish_seen_subcommand_from arm disarm status should-arm help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
