#!/usr/bin/env node
// Below Node 20 the CLI would fail somewhere inside with an error nobody can act on: one line instead.
const major = Number(process.versions.node.split(".")[0]);
if (major < 20) {
  process.stderr.write(`factory needs Node.js 20 or newer; this is Node ${process.versions.node}. Install Node 20 or newer and run it again.\n`);
  process.exit(2);
}
// Node 22.1 and newer keep the compiled code of the CLI's modules on disk (in the OS temp directory):
// a command's start no longer compiles them every time. Node 20 has no such cache.
const { enableCompileCache } = await import("node:module");
enableCompileCache?.();
await import("../dist/cli.js");
