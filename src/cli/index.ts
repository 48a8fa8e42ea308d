// Operator CLI entry point: `npm run cli -- <command>` (see run.ts for the commands). Reads `.env` first,
// as the server does, so both work on the same settings.

import { loadEnvFile } from "../config.js";
import { runCli } from "./run.js";

let code: number;
try {
  loadEnvFile();
  code = await runCli(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  code = 1;
}
// `serve` keeps running; every other command ends with its exit code.
if (process.argv[2] !== "serve" || code !== 0) process.exitCode = code;
