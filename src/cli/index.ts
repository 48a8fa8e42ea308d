// Operator CLI entry point: `npm run cli -- <command>` (see run.ts for the commands).

import { runCli } from "./run.js";

const code = await runCli(process.argv.slice(2));
// `serve` keeps running; every other command ends with its exit code.
if (process.argv[2] !== "serve") process.exitCode = code;
