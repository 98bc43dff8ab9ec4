//! Stand-in for an npm-installed harness entry point (`node_modules/.bin/gemini`,
//! `.bin/codex`, `.bin/copilot`) in the hook-mode tests, run as `node <dir>/.bin/<name>` so
//! that the process is a `node` whose script argument names the harness. It plays one of
//! three parts, chosen by the environment:
//!
//! - STAND_IN_RELAUNCH=1 and GEMINI_CLI_NO_RELAUNCH unset: Gemini CLI's relaunch. Starts
//!   `node --max-old-space-size=… <this script>` with GEMINI_CLI_NO_RELAUNCH=true and lives
//!   as long as that child.
//! - STAND_IN_NATIVE_BINARY set: the Codex and Copilot loaders. Starts the native binary
//!   (with STAND_IN_NATIVE_SCRIPT as its first argument) on the same stdio and lives as long
//!   as it.
//! - otherwise: Gemini CLI itself. Runs the session hooks the test asks for the way Gemini
//!   CLI does (`/bin/bash -c <command>`, the payload on a pipe closed once written), with the
//!   protocol of native-harness.sh: prints `ready <pid>`, then for each line <event> on stdin
//!   prints `done <event> <exit status> <microseconds the hook took>`; `exit` or the end of
//!   stdin ends the process without any session-end hook.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const environment = process.env;

if (environment.STAND_IN_RELAUNCH === '1' && environment.GEMINI_CLI_NO_RELAUNCH !== 'true') {
  runAsLongAs(
    process.execPath,
    ['--max-old-space-size=4096', __filename, ...process.argv.slice(2)],
    { ...environment, GEMINI_CLI_NO_RELAUNCH: 'true' },
  );
} else if (environment.STAND_IN_NATIVE_BINARY) {
  runAsLongAs(
    environment.STAND_IN_NATIVE_BINARY,
    [environment.STAND_IN_NATIVE_SCRIPT, ...process.argv.slice(2)],
    environment,
  );
} else {
  hostHooks(environment.STAND_IN_CONTROL_DIR);
}

function runAsLongAs(program, args, childEnvironment) {
  const child = spawn(program, args, { stdio: 'inherit', env: childEnvironment });
  child.on('error', (error) => {
    process.stderr.write(`stand-in: cannot start ${program}: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code) => process.exit(code === null ? 128 : code));
}

function hookShell() {
  switch (environment.STAND_IN_HOOK_SHELL || 'bash') {
    case 'sh': return ['/bin/sh', '-c'];
    case 'bash': return ['/bin/bash', '-c'];
    case 'bash-norc': return ['/bin/bash', '--norc', '--noprofile', '-c'];
    default:
      process.stderr.write(`stand-in: unknown STAND_IN_HOOK_SHELL ${environment.STAND_IN_HOOK_SHELL}\n`);
      process.exit(2);
  }
}

function hostHooks(controlDirectory) {
  const shell = hookShell();
  const pending = [];
  let running = false;
  const runNext = () => {
    if (running || pending.length === 0) return;
    const event = pending.shift();
    if (event === 'exit') process.exit(0);
    running = true;
    runHook(shell, path.join(controlDirectory, event), event, () => {
      running = false;
      runNext();
    });
  };
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (event) => {
    pending.push(event);
    runNext();
  });
  lines.on('close', () => {
    pending.push('exit');
    runNext();
  });
  process.stdout.write(`ready ${process.pid}\n`);
}

function runHook(shell, control, event, then) {
  const command = fs.readFileSync(`${control}.command`, 'utf8');
  const payload = fs.readFileSync(`${control}.payload`);
  const started = process.hrtime.bigint();
  const hook = spawn(shell[0], [...shell.slice(1), command], { stdio: ['pipe', 'pipe', 'pipe'], env: environment });
  const stdout = [];
  const stderr = [];
  hook.stdout.on('data', (chunk) => stdout.push(chunk));
  hook.stderr.on('data', (chunk) => stderr.push(chunk));
  hook.stdin.on('error', () => {});
  hook.stdin.end(payload);
  hook.on('close', (code) => {
    const microseconds = (process.hrtime.bigint() - started) / 1000n;
    fs.writeFileSync(`${control}.stdout`, Buffer.concat(stdout));
    fs.writeFileSync(`${control}.stderr`, Buffer.concat(stderr));
    process.stdout.write(`done ${event} ${code === null ? 128 : code} ${microseconds}\n`);
    then();
  });
}
