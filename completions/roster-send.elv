
use builtin;
use str;

set edit:completion:arg-completer[roster-send] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-send'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-send'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand -t 'The session to send to: its owner''s pid, its session id, or the agent name of exactly one live session'
            cand --to 'The session to send to: its owner''s pid, its session id, or the agent name of exactly one live session'
            cand -f 'Send as the session of this pid (default: the session roster-send runs in, else the process that ran it)'
            cand --from 'Send as the session of this pid (default: the session roster-send runs in, else the process that ran it)'
            cand --ttl 'How long the message waits for delivery before it expires: 30s, 10m, 2h, 1d (default 1h)'
            cand --wait 'Wait for the message''s outcome, at most DURATION (default: until it expires)'
            cand -s 'Say what became of the message ID: pending, delivered, expired or refused'
            cand --status 'Say what became of the message ID: pending, delivered, expired or refused'
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
