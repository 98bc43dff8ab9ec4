
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-send' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-send'
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
        'roster-send' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The session to send to: its owner''s pid, its session id, or the agent name of exactly one live session')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The session to send to: its owner''s pid, its session id, or the agent name of exactly one live session')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Send as the session of this pid (default: the session roster-send runs in, else the process that ran it)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Send as the session of this pid (default: the session roster-send runs in, else the process that ran it)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'How long the message waits for delivery before it expires: 30s, 10m, 2h, 1d (default 1h)')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait for the message''s outcome, at most DURATION (default: until it expires)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Say what became of the message ID: pending, delivered, expired or refused')
            [CompletionResult]::new('--status', '--status', [CompletionResultType]::ParameterName, 'Say what became of the message ID: pending, delivered, expired or refused')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
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
