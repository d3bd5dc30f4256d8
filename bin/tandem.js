#!/usr/bin/env node
// Entry point of the `tandem` command: runs the compiled CLI (built by `npm install`).
import { main } from '../dist/daemon/cli/main.js';
main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
