
use builtin;
use str;

set edit:completion:arg-completer[roster-notify] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'roster-notify'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'roster-notify'= {
            cand --dir 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)'
            cand --format 'Print for people (text) or for scripts (json, the stable contract)'
            cand --color 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never'
            cand -b 'Where notices go, a comma list of desktop, terminal, ntfy, webhook, exec (beats [notify] backends; default desktop)'
            cand --backend 'Where notices go, a comma list of desktop, terminal, ntfy, webhook, exec (beats [notify] backends; default desktop)'
            cand -t 'Which moments to tell of, a comma list of waiting, turn-finished, crashed; the others are off (beats [notify])'
            cand --triggers 'Which moments to tell of, a comma list of waiting, turn-finished, crashed; the others are off (beats [notify])'
            cand --turn-finished-after 'The shortest turn whose end is told, in seconds (default 30)'
            cand --flap-window 'Seconds a session must stay out of waiting before its notice is withdrawn; a flap within it keeps one notice (default 3)'
            cand --timeout 'The longest one attempt of a backend may take, in seconds (default 10)'
            cand --ntfy-url 'The ntfy topic URL to publish to (beats [notify.ntfy] url)'
            cand --ntfy-token-env 'The environment variable that holds the ntfy access token (never the token itself)'
            cand --webhook-url 'The URL the webhook backend posts each notice to as JSON (beats [notify.webhook] url)'
            cand --ca-certificate 'A PEM file of the certificate authority to trust for ntfy and the webhook (a server of your own)'
            cand --exec 'The program the exec backend runs for each notice, with the notice as JSON on its stdin (beats [notify.exec] command)'
            cand --terminal-sequence 'The escape sequence of the terminal backend'
            cand --host 'Follow the sessions of another machine through your ssh: [USER@]HOST[:PORT]; repeatable; `local` is this one'
            cand --hosts-file 'Follow the machines listed in FILE (one a line), as --host does'
            cand --json 'Print JSON, same as --format json'
            cand -q 'Print nothing on success; errors still go to stderr'
            cand --quiet 'Print nothing on success; errors still go to stderr'
            cand --redact 'Leave paths and names (directory, project, branch, agent, session id, host) out of notices that leave the machine (ntfy, webhook, exec)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
