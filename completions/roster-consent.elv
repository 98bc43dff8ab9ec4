
use builtin;
use str;

set edit:completion:arg-completer[roster-consent] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-consent'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-consent'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand arm 'Accept pushes for the calling session until it ends or disarms'
            cand disarm 'Refuse pushes for the calling session, whatever the repository''s auto_arm says'
            cand status 'Show whether the calling session accepts pushes, and why'
            cand should-arm 'Exit 0 when the calling session should accept pushes now, else 1, printing nothing'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roster-consent;arm'= {
            cand -p 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --pid 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --cwd 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)'
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roster-consent;disarm'= {
            cand -p 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --pid 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --cwd 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)'
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roster-consent;status'= {
            cand -p 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --pid 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --cwd 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)'
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roster-consent;should-arm'= {
            cand -p 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --pid 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --cwd 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)'
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'roster-consent;help'= {
            cand arm 'Accept pushes for the calling session until it ends or disarms'
            cand disarm 'Refuse pushes for the calling session, whatever the repository''s auto_arm says'
            cand status 'Show whether the calling session accepts pushes, and why'
            cand should-arm 'Exit 0 when the calling session should accept pushes now, else 1, printing nothing'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'roster-consent;help;arm'= {
        }
        &'roster-consent;help;disarm'= {
        }
        &'roster-consent;help;status'= {
        }
        &'roster-consent;help;should-arm'= {
        }
        &'roster-consent;help;help'= {
        }
    ]
    $completions[$command]
}
