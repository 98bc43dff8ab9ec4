
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-notify' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-notify'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'roster-notify' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('-b', '-b', [CompletionResultType]::ParameterName, 'Where notices go, a comma list of desktop, terminal, ntfy, webhook, exec (beats [notify] backends; default desktop)')
            [CompletionResult]::new('--backend', '--backend', [CompletionResultType]::ParameterName, 'Where notices go, a comma list of desktop, terminal, ntfy, webhook, exec (beats [notify] backends; default desktop)')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Which moments to tell of, a comma list of waiting, turn-finished, crashed; the others are off (beats [notify])')
            [CompletionResult]::new('--triggers', '--triggers', [CompletionResultType]::ParameterName, 'Which moments to tell of, a comma list of waiting, turn-finished, crashed; the others are off (beats [notify])')
            [CompletionResult]::new('--turn-finished-after', '--turn-finished-after', [CompletionResultType]::ParameterName, 'The shortest turn whose end is told, in seconds (default 30)')
            [CompletionResult]::new('--flap-window', '--flap-window', [CompletionResultType]::ParameterName, 'Seconds a session must stay out of waiting before its notice is withdrawn; a flap within it keeps one notice (default 3)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'The longest one attempt of a backend may take, in seconds (default 10)')
            [CompletionResult]::new('--ntfy-url', '--ntfy-url', [CompletionResultType]::ParameterName, 'The ntfy topic URL to publish to (beats [notify.ntfy] url)')
            [CompletionResult]::new('--ntfy-token-env', '--ntfy-token-env', [CompletionResultType]::ParameterName, 'The environment variable that holds the ntfy access token (never the token itself)')
            [CompletionResult]::new('--webhook-url', '--webhook-url', [CompletionResultType]::ParameterName, 'The URL the webhook backend posts each notice to as JSON (beats [notify.webhook] url)')
            [CompletionResult]::new('--ca-certificate', '--ca-certificate', [CompletionResultType]::ParameterName, 'A PEM file of the certificate authority to trust for ntfy and the webhook (a server of your own)')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'The program the exec backend runs for each notice, with the notice as JSON on its stdin (beats [notify.exec] command)')
            [CompletionResult]::new('--terminal-sequence', '--terminal-sequence', [CompletionResultType]::ParameterName, 'The escape sequence of the terminal backend')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Follow the sessions of another machine through your ssh: [USER@]HOST[:PORT]; repeatable; `local` is this one')
            [CompletionResult]::new('--hosts-file', '--hosts-file', [CompletionResultType]::ParameterName, 'Follow the machines listed in FILE (one a line), as --host does')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--redact', '--redact', [CompletionResultType]::ParameterName, 'Leave paths and names (directory, project, branch, agent, session id, host) out of notices that leave the machine (ntfy, webhook, exec)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
