// The process's logger: JSON lines (pino) on standard output, API keys redacted wherever they appear.

import type { FastifyBaseLogger } from "fastify";
import { type DestinationStream, pino } from "pino";
import type { Config } from "./config.js";

export function createLogger(
  config: Pick<Config, "LOG_LEVEL">,
  destination?: DestinationStream,
): FastifyBaseLogger {
  return pino(
    {
      level: config.LOG_LEVEL,
      redact: {
        paths: ['req.headers["x-api-key"]', "req.headers.authorization", "headers.x-api-key"],
        censor: "[redacted]",
      },
    },
    // Asynchronous writes: lines logged while a write is in flight go out together in the next one,
    // instead of one blocking write per line. pino flushes what is pending when the process exits.
    destination ?? (config.LOG_LEVEL === "silent" ? undefined : pino.destination({ dest: 1, sync: false })),
  );
}
