
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-state' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-state'
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
        'roster-state' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--hook', '--hook', [CompletionResultType]::ParameterName, 'Run as a harness''s hook: read the payload, record the state, finish within 500 ms; prints only a delivery (see MESSAGES)')
            [CompletionResult]::new('--harness', '--harness', [CompletionResultType]::ParameterName, 'Do what the hook does, and say what happened (to try a hook by hand)')
            [CompletionResult]::new('-e', '-e', [CompletionResultType]::ParameterName, 'The event, as the harness''s hook configuration names it (default: the payload''s event name)')
            [CompletionResult]::new('--event', '--event', [CompletionResultType]::ParameterName, 'The event, as the harness''s hook configuration names it (default: the payload''s event name)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Name the session''s owner when the payload''s session id names no record: a pid or `parent`')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Name the session''s owner when the payload''s session id names no record: a pid or `parent`')
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
