// A real SMTP server for tests (smtp-server on 127.0.0.1, a port of its own), keeping every message it
// accepts parsed (mailparser). Its mode can change between attempts: accept, refuse (an SMTP error code at
// RCPT TO) or hang (the connection is taken and never greeted).

import type { Socket } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export type SinkMode = { kind: "accept" } | { kind: "refuse"; code: number } | { kind: "hang" };

export interface SmtpSink {
  url: string;
  received: ParsedMail[];
  mode: SinkMode;
  /** Resolves once `n` messages have been received in all. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const received: ParsedMail[] = [];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const hung = new Set<Socket>();
  const sink: SmtpSink = {
    url: "",
    received,
    mode: { kind: "accept" },
    waitFor(n) {
      if (received.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ n, resolve }));
    },
    async close() {
      for (const socket of hung) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    closeTimeout: 100,
    onConnect(_session, callback) {
      // Hanging: never greeted, the client's greeting timeout ends the attempt (close() drops it).
      if (sink.mode.kind !== "hang") callback();
    },
    onRcptTo(_address, _session, callback) {
      const mode = sink.mode;
      if (mode.kind === "refuse") {
        return callback(
          Object.assign(new Error("Mailbox unavailable, try later"), { responseCode: mode.code }),
        );
      }
      callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push(mail);
          for (const w of waiting.splice(0)) {
            if (received.length >= w.n) w.resolve();
            else waiting.push(w);
          }
          callback();
        })
        .catch(callback);
    },
  });
  server.server.on("connection", (socket: Socket) => {
    hung.add(socket);
    socket.on("close", () => hung.delete(socket));
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
  sink.url = `smtp://127.0.0.1:${port}`;
  return sink;
}
