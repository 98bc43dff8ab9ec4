
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-focus' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-focus'
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
        'roster-focus' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'With --next-waiting: choose among sessions in these states, a comma list of working, idle, waiting')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'With --next-waiting: choose among sessions in these states, a comma list of working, idle, waiting')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'With --next-waiting: choose among the sessions of this agent name')
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'With --next-waiting: choose among the sessions of this agent name')
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'The tmux client to switch (as `tmux list-clients` names it; default: the most recently active one)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'Go to the session on another machine, through your ssh: [USER@]HOST[:PORT] (a Host of your ssh config too)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The live session that has waited longest for its user (with --state, in those states instead)')
            [CompletionResult]::new('--next-waiting', '--next-waiting', [CompletionResultType]::ParameterName, 'The live session that has waited longest for its user (with --state, in those states instead)')
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Print the command that goes there instead of running it')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the command that goes there instead of running it')
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
