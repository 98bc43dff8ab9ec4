
use builtin;
use str;

set edit:completion:arg-completer[roster-prune] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-prune'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-prune'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand -o 'Also remove unknown and problem entries older than DURATION (90m, 36h, 7d, 2w)'
            cand --older-than 'Also remove unknown and problem entries older than DURATION (90m, 36h, 7d, 2w)'
            cand --pid 'With --current: name the owner process, a pid or `parent`'
            cand --hook 'With --current: run as a session-end hook (read the payload if it comes, print nothing, always exit 0, finish within 500 ms)'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -n 'Report what would be removed without removing anything'
            cand --dry-run 'Report what would be removed without removing anything'
            cand --current 'Remove the calling session''s own record and consent marker, alive or not'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
