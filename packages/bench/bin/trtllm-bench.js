#!/usr/bin/env node
// The command is the build's dist/cli.js. This shim is committed so that the command's file exists
// before the first build: `pnpm install` in a fresh clone links it without a warning (issue #53).
import '../dist/cli.js';
