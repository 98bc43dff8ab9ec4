# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_roster_hooks_global_optspecs
    string join \n format= json q/quiet color= dir= h/help V/version
end

function __fish_roster_hooks_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_roster_hooks_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_roster_hooks_using_subcommand
    set -l cmd (__fish_roster_hooks_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -l dir -d 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)' -r -F
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -l json -d 'Print JSON, same as --format json'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -s V -l version -d 'Print version'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -f -a "print" -d 'Show the hook entries install would merge, for adding them by hand'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -f -a "install" -d 'Merge roster\'s hooks (session start and end, and each state event) into a harness\'s configuration'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -f -a "uninstall" -d 'Remove exactly the hooks install added, its backup and the directories it created'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -f -a "status" -d 'Say for each harness whether roster\'s hooks are installed'
complete -c roster-hooks -n "__fish_roster_hooks_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -s s -l scope -d 'Edit the user\'s file (every project) or the current project\'s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)' -r -f -a "user\t'The user\'s file, read in every project'
project\t'The current directory\'s project file'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -l bin-dir -d 'Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in project files, else the directory roster-hooks runs from)' -r -F
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -l dir -d 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)' -r -F
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -l json -d 'Print JSON, same as --format json'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print" -s V -l version -d 'Print version'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -s s -l scope -d 'Edit the user\'s file (every project) or the current project\'s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)' -r -f -a "user\t'The user\'s file, read in every project'
project\t'The current directory\'s project file'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -l bin-dir -d 'Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in project files, else the directory roster-hooks runs from)' -r -F
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -l dir -d 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)' -r -F
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -l json -d 'Print JSON, same as --format json'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install" -s V -l version -d 'Print version'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -s s -l scope -d 'Edit the user\'s file (every project) or the current project\'s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)' -r -f -a "user\t'The user\'s file, read in every project'
project\t'The current directory\'s project file'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -l dir -d 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)' -r -F
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -l json -d 'Print JSON, same as --format json'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall" -s V -l version -d 'Print version'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -s s -l scope -d 'Report only files of this scope (default: every scope)' -r -f -a "user\t'The user\'s file, read in every project'
project\t'The current directory\'s project file'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -l format -d 'Print for people (text) or for scripts (json, the stable contract)' -r -f -a "text\t''
json\t''"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -l color -d 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set or TERM is dumb'
always\t'Always, even into a pipe or file'
never\t'Never'"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -l dir -d 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)' -r -F
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -l json -d 'Print JSON, same as --format json'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -s q -l quiet -d 'Print nothing on success; errors still go to stderr'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status" -s V -l version -d 'Print version'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand help; and not __fish_seen_subcommand_from print install uninstall status help" -f -a "print" -d 'Show the hook entries install would merge, for adding them by hand'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand help; and not __fish_seen_subcommand_from print install uninstall status help" -f -a "install" -d 'Merge roster\'s hooks (session start and end, and each state event) into a harness\'s configuration'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand help; and not __fish_seen_subcommand_from print install uninstall status help" -f -a "uninstall" -d 'Remove exactly the hooks install added, its backup and the directories it created'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand help; and not __fish_seen_subcommand_from print install uninstall status help" -f -a "status" -d 'Say for each harness whether roster\'s hooks are installed'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand help; and not __fish_seen_subcommand_from print install uninstall status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand print; and not __fish_seen_subcommand_from claude-code codex gemini-cli cursor-agent copilot opencode amp" -f -a "claude-code codex gemini-cli cursor-agent copilot opencode amp"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand install; and not __fish_seen_subcommand_from claude-code codex gemini-cli cursor-agent copilot opencode amp" -f -a "claude-code codex gemini-cli cursor-agent copilot opencode amp"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand uninstall; and not __fish_seen_subcommand_from claude-code codex gemini-cli cursor-agent copilot opencode amp" -f -a "claude-code codex gemini-cli cursor-agent copilot opencode amp"
complete -c roster-hooks -n "__fish_roster_hooks_using_subcommand status; and not __fish_seen_subcommand_from claude-code codex gemini-cli cursor-agent copilot opencode amp" -f -a "claude-code codex gemini-cli cursor-agent copilot opencode amp"
