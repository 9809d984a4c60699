// The VS Code client of `mbsim lsp`: starts the language server over stdio for .mbk files and
// passes the extension's settings to it (see README.md and the repository's docs/EDITOR.md).
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

/** The mbsim command: the setting, else the workspace's node_modules/.bin/mbsim, else `mbsim` on the PATH. */
function mbsimCommand(cfg) {
  const given = cfg.get('path');
  if (given) return given;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const local = join(folder.uri.fsPath, 'node_modules', '.bin', process.platform === 'win32' ? 'mbsim.cmd' : 'mbsim');
    if (existsSync(local)) return local;
  }
  return 'mbsim';
}

/** A client for the settings as they are now. */
function makeClient() {
  const cfg = vscode.workspace.getConfiguration('mbsim');
  // TransportKind.stdio adds `--stdio`, which `mbsim lsp` accepts.
  const run = { command: mbsimCommand(cfg), args: ['lsp'], transport: TransportKind.stdio, options: { shell: process.platform === 'win32' } };
  const clientOptions = {
    documentSelector: [{ scheme: 'file', language: 'mbk' }, { scheme: 'untitled', language: 'mbk' }],
    initializationOptions: {
      checkOnChange: cfg.get('checkOnChange'),
      checkDelayMs: cfg.get('checkDelayMs'),
      checkTimeoutMs: cfg.get('checkTimeoutMs'),
      maxStates: cfg.get('maxStates'),
    },
  };
  return new LanguageClient('mbsim', 'mbsim', { run, debug: run }, clientOptions);
}

async function activate(context) {
  client = makeClient();
  context.subscriptions.push({ dispose: () => client && client.stop() });
  // The server reads the settings when it starts: a change to one (mbsim.path, the bounds)
  // restarts it with the new ones, instead of waiting for a reload of the window.
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (e) => {
    if (!e.affectsConfiguration('mbsim')) return;
    const old = client;
    client = makeClient();
    // A server that never started (a wrong mbsim.path) has nothing to stop.
    await old.stop().catch(() => undefined);
    await client.start();
  }));
  await client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
