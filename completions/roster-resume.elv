
use builtin;
use str;

set edit:completion:arg-completer[roster-resume] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-resume'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-resume'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -l 'The session that ended last'
            cand --last 'The session that ended last'
            cand -b 'Every session a reboot or a crash ended since this machine booted (not those that exited)'
            cand --boot 'Every session a reboot or a crash ended since this machine booted (not those that exited)'
            cand -p 'Print the command lines (cd DIR && COMMAND) instead of running them'
            cand --print 'Print the command lines (cd DIR && COMMAND) instead of running them'
            cand --here 'Run the one session in this terminal instead of a new tmux window'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
