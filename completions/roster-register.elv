
use builtin;
use str;

set edit:completion:arg-completer[roster-register] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-register'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-register'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand -p 'Name the owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand --pid 'Name the owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command'
            cand -a 'Register under this agent name ("" for anonymous; default: ROSTER_AGENT, then the recorded name on a refresh, then agent_name in .roster.toml)'
            cand --agent 'Register under this agent name ("" for anonymous; default: ROSTER_AGENT, then the recorded name on a refresh, then agent_name in .roster.toml)'
            cand -s 'Record the harness''s session id (default: the hook payload, ROSTER_SESSION_ID, the harness''s export, else the recorded one)'
            cand --session-id 'Record the harness''s session id (default: the hook payload, ROSTER_SESSION_ID, the harness''s export, else the recorded one)'
            cand --cwd 'Record DIR as the session''s working directory (default: the payload''s cwd; by hand the recorded one, else the current directory)'
            cand -H 'Record the harness by name (default: detected from the owner process, else the recorded one)'
            cand --harness 'Record the harness by name (default: detected from the owner process, else the recorded one)'
            cand --socket 'Record the harness''s messaging socket (default: CLAUDE_CODE_MESSAGING_SOCKET when it exists)'
            cand --hook 'Run as a session-start hook: read the payload from stdin, print nothing, always exit 0, finish within 1 s'
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
