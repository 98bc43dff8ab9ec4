
use builtin;
use str;

set edit:completion:arg-completer[roster-list] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-list'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-list'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand -A 'Show only sessions registered under this agent name ("" for the anonymous ones)'
            cand --agent 'Show only sessions registered under this agent name ("" for the anonymous ones)'
            cand -H 'Show only sessions of this harness (claude-code, codex, gemini-cli, ...; "" for an unknown one)'
            cand --harness 'Show only sessions of this harness (claude-code, codex, gemini-cli, ...; "" for an unknown one)'
            cand -i 'Show only the session with this session id ("" for the sessions without one)'
            cand --session-id 'Show only the session with this session id ("" for the sessions without one)'
            cand -C 'Show only sessions working in DIR or below it'
            cand --cwd 'Show only sessions working in DIR or below it'
            cand -s 'Show only sessions in these states, a comma list of working, idle, waiting (for their user), unknown'
            cand --state 'Show only sessions in these states, a comma list of working, idle, waiting (for their user), unknown'
            cand -c 'Show these columns, in this order: a comma list of pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason'
            cand --columns 'Show these columns, in this order: a comma list of pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason'
            cand --width 'Fit the table in N columns (default: $COLUMNS, else the terminal''s width; no limit into a pipe)'
            cand --since 'With --ended, only the sessions that ended within DURATION (90m, 36h, 7d, 2w)'
            cand --until-gone 'Print the events until the session with this owner pid or session id is gone, then exit 0'
            cand --host 'List the sessions of HOST through ssh (repeatable; `local` is this machine; see HOSTS)'
            cand --hosts-file 'List the sessions of each host FILE names, one a line (# starts a comment), as --host does'
            cand --connect-timeout 'Seconds ssh may take to connect to a host of --host'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand -a 'Show dead sessions too'
            cand --all 'Show dead sessions too'
            cand --no-adopt 'List roster''s own records only, not the sessions Claude Code (~/.claude/sessions) and Copilot CLI (~/.copilot/session-state) keep'
            cand -W 'Show every cell whole: full session ids, no cut to the terminal''s width'
            cand --wide 'Show every cell whole: full session ids, no cut to the terminal''s width'
            cand --no-legend 'Do not explain the table''s marks and CONSENT labels on stderr (each is said once otherwise)'
            cand --ended 'List the sessions that ended instead, newest first: when, how (exited, crashed, reboot, removed), harness, agent, directory, session id, and the command that resumes it (or none and why)'
            cand -w 'After the rows, print one event per change until interrupted (see EVENTS)'
            cand --watch 'After the rows, print one event per change until interrupted (see EVENTS)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
