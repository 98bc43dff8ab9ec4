
use builtin;
use str;

set edit:completion:arg-completer[roster-state] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-state'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-state'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --hook 'Run as a harness''s hook: read the payload, record the state, finish within 500 ms; prints only a delivery (see MESSAGES)'
            cand --harness 'Do what the hook does, and say what happened (to try a hook by hand)'
            cand -e 'The event, as the harness''s hook configuration names it (default: the payload''s event name)'
            cand --event 'The event, as the harness''s hook configuration names it (default: the payload''s event name)'
            cand -p 'Name the session''s owner when the payload''s session id names no record: a pid or `parent`'
            cand --pid 'Name the session''s owner when the payload''s session id names no record: a pid or `parent`'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
