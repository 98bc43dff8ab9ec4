# Stand-in for a native harness binary (claude, codex, copilot, opencode) in the hook-mode
# tests. It runs as a copy of bash named like the harness, so that its argv[0], comm and exe
# say what the real binary's say, and runs the session hooks the test asks for the way the
# real harness does: the hook command under a shell, the payload on a pipe that is closed
# once written.
#
# Environment:
#   STAND_IN_CONTROL_DIR  holds <event>.command and <event>.payload; receives <event>.stdout
#                         and <event>.stderr
#   STAND_IN_HOOK_SHELL   how the harness runs a hook command: sh (`sh -c`, Claude Code),
#                         bash (`/bin/bash -c`, Codex, opencode) or bash-norc
#                         (`/bin/bash --norc --noprofile -c`, Copilot CLI)
#   STAND_IN_PID_EXPORT   a variable the harness sets to its own pid (CLAUDE_PID), if any
#   STAND_IN_COMM         the name the harness gives its own process (MainThread), if any
#
# Protocol: prints `ready <pid>`; then for each line <event> read from stdin runs that hook
# and prints `done <event> <exit status> <microseconds the hook took>`. The line `exit`, or
# the end of stdin, ends the process without any session-end hook.

set -u
if [ -n "${STAND_IN_COMM:-}" ]; then
    printf '%s' "$STAND_IN_COMM" >"/proc/$$/comm"
fi
if [ -n "${STAND_IN_PID_EXPORT:-}" ]; then
    export "$STAND_IN_PID_EXPORT=$$"
fi
case "${STAND_IN_HOOK_SHELL:-sh}" in
    sh) hook_shell=(/bin/sh -c) ;;
    bash) hook_shell=(/bin/bash -c) ;;
    bash-norc) hook_shell=(/bin/bash --norc --noprofile -c) ;;
    *)
        echo "stand-in: unknown STAND_IN_HOOK_SHELL ${STAND_IN_HOOK_SHELL}" >&2
        exit 2
        ;;
esac

echo "ready $$"
while IFS= read -r event; do
    if [ "$event" = exit ]; then
        exit 0
    fi
    control="$STAND_IN_CONTROL_DIR/$event"
    hook_command=$(<"$control.command")
    started=${EPOCHREALTIME/[.,]/}
    cat "$control.payload" | "${hook_shell[@]}" "$hook_command" >"$control.stdout" 2>"$control.stderr"
    status=$?
    finished=${EPOCHREALTIME/[.,]/}
    echo "done $event $status $((finished - started))"
done
