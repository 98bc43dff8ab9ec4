
use builtin;
use str;

set edit:completion:arg-completer[roster-focus] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-focus'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-focus'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand -s 'With --next-waiting: choose among sessions in these states, a comma list of working, idle, waiting'
            cand --state 'With --next-waiting: choose among sessions in these states, a comma list of working, idle, waiting'
            cand -A 'With --next-waiting: choose among the sessions of this agent name'
            cand --agent 'With --next-waiting: choose among the sessions of this agent name'
            cand --client 'The tmux client to switch (as `tmux list-clients` names it; default: the most recently active one)'
            cand --host 'Go to the session on another machine, through your ssh: [USER@]HOST[:PORT] (a Host of your ssh config too)'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -n 'The live session that has waited longest for its user (with --state, in those states instead)'
            cand --next-waiting 'The live session that has waited longest for its user (with --state, in those states instead)'
            cand -p 'Print the command that goes there instead of running it'
            cand --print 'Print the command that goes there instead of running it'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
