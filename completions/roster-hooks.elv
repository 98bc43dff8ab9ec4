
use builtin;
use str;

set edit:completion:arg-completer[roster-hooks] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-hooks'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-hooks'= {
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --dir 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand print 'Show the hook entries install would merge, for adding them by hand'
            cand install 'Merge roster''s hooks (session start and end, and each state event) into a harness''s configuration'
            cand uninstall 'Remove exactly the hooks install added, its backup and the directories it created'
            cand status 'Say for each harness whether roster''s hooks are installed'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roster-hooks;print'= {
            cand -s 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)'
            cand --scope 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)'
            cand --bin-dir 'Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in project files, else the directory roster-hooks runs from)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --dir 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'roster-hooks;install'= {
            cand -s 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)'
            cand --scope 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)'
            cand --bin-dir 'Call roster-register, roster-prune and roster-state in DIR (default: by name through PATH in project files, else the directory roster-hooks runs from)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --dir 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'roster-hooks;uninstall'= {
            cand -s 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)'
            cand --scope 'Edit the user''s file (every project) or the current project''s file (default: user; copilot only has project; codex, gemini-cli and cursor-agent only user)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --dir 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'roster-hooks;status'= {
            cand -s 'Report only files of this scope (default: every scope)'
            cand --scope 'Report only files of this scope (default: every scope)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --dir 'Make the installed hooks use DIR as the roster directory (they get --dir DIR; default: ROSTER_DIR or the default when they run)'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'roster-hooks;help'= {
            cand print 'Show the hook entries install would merge, for adding them by hand'
            cand install 'Merge roster''s hooks (session start and end, and each state event) into a harness''s configuration'
            cand uninstall 'Remove exactly the hooks install added, its backup and the directories it created'
            cand status 'Say for each harness whether roster''s hooks are installed'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roster-hooks;help;print'= {
        }
        &'roster-hooks;help;install'= {
        }
        &'roster-hooks;help;uninstall'= {
        }
        &'roster-hooks;help;status'= {
        }
        &'roster-hooks;help;help'= {
        }
    ]
    $completions[$command]
}
