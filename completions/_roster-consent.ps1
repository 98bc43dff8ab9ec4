
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'roster-consent' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'roster-consent'
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
        'roster-consent' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('arm', 'arm', [CompletionResultType]::ParameterValue, 'Accept pushes for the calling session until it ends or disarms')
            [CompletionResult]::new('disarm', 'disarm', [CompletionResultType]::ParameterValue, 'Refuse pushes for the calling session, whatever the repository''s auto_arm says')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether the calling session accepts pushes, and why')
            [CompletionResult]::new('should-arm', 'should-arm', [CompletionResultType]::ParameterValue, 'Exit 0 when the calling session should accept pushes now, else 1, printing nothing')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roster-consent;arm' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roster-consent;disarm' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roster-consent;status' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roster-consent;should-arm' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--pid', '--pid', [CompletionResultType]::ParameterName, 'Name the session''s owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Take DIR as the session''s directory, where .roster.toml is looked for (default: the cwd of the session''s record)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Use DIR as the roster directory (beats ROSTER_DIR and the default $XDG_STATE_HOME/roster, else ~/.local/state/roster)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Print for people (text) or for scripts (json, the stable contract)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour the output: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON, same as --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing on success; errors still go to stderr')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'roster-consent;help' {
            [CompletionResult]::new('arm', 'arm', [CompletionResultType]::ParameterValue, 'Accept pushes for the calling session until it ends or disarms')
            [CompletionResult]::new('disarm', 'disarm', [CompletionResultType]::ParameterValue, 'Refuse pushes for the calling session, whatever the repository''s auto_arm says')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether the calling session accepts pushes, and why')
            [CompletionResult]::new('should-arm', 'should-arm', [CompletionResultType]::ParameterValue, 'Exit 0 when the calling session should accept pushes now, else 1, printing nothing')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'roster-consent;help;arm' {
            break
        }
        'roster-consent;help;disarm' {
            break
        }
        'roster-consent;help;status' {
            break
        }
        'roster-consent;help;should-arm' {
            break
        }
        'roster-consent;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
