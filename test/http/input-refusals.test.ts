// Input a store would change or refuse is refused first, the same on SQLite and PostgreSQL: bodies are
// I-JSON (400 invalid_json naming the problem and its pointer), every string of every input is text
// without C0 controls (422 naming the field), bodies are UTF-8 and may be gzip, deflate or br encoded.

import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createHarness,
  type Harness,
  ORDER_PATH,
  QUOTE_PATH,
  validOrder,
  validQuote,
} from "../helpers/harness.js";
import { expectProblem } from "../helpers/security-suite.js";

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await createHarness();
  key = await h.key("refusals", "test", { ratePerMinute: 100_000, burst: 100_000 });
});

const post = (url: string, payload: string | Buffer, headers: Record<string, string> = {}) =>
  h.app.inject({
    method: "POST",
    url,
    headers: { "content-type": "application/json", "x-api-key": key, ...headers },
    payload,
  });

const order = (overrides: Record<string, unknown> = {}) => validOrder(overrides);
const located = (extra: Record<string, unknown>) => ({ location: { ...validOrder().location, ...extra } });

describe("C0 control characters in any string field", () => {
  const orderFields: Array<[string, (bad: string) => Record<string, unknown>]> = [
    ["description", (bad) => order({ description: `leak${bad}here` })],
    ["location.address", (bad) => order(located({ address: `1${bad} Market St` }))],
    ["location.name", (bad) => order(located({ name: `Store${bad}12` }))],
    ["location.city", (bad) => order(located({ city: `San${bad}Francisco` }))],
    ["reference_id", (bad) => order({ reference_id: `WO${bad}1` })],
  ];

  for (const [field, body] of orderFields) {
    it(`refuses NUL in the order's ${field} with 422 naming it`, async () => {
      const problem = expectProblem(
        await post(ORDER_PATH, JSON.stringify(body("\u0000"))),
        422,
        "validation_failed",
      );
      expect(problem.errors).toEqual([{ field, message: expect.stringContaining("U+0000") }]);
    });
  }

  it("refuses NUL in the quote's location.city with 422 naming it", async () => {
    const body = validQuote({ location: { state: "TX", zip: "78701", city: "Aus\u0000tin" } });
    const problem = expectProblem(await post(QUOTE_PATH, JSON.stringify(body)), 422, "validation_failed");
    expect(problem.errors).toEqual([{ field: "location.city", message: expect.stringContaining("U+0000") }]);
  });

  it("refuses every C0 control but tab, line feed and carriage return", async () => {
    for (let c = 0; c < 0x20; c++) {
      const char = String.fromCharCode(c);
      const res = await post(QUOTE_PATH, JSON.stringify(validQuote({ description: `a${char}b` })));
      if (char === "\t" || char === "\n" || char === "\r") expect(res.statusCode, `U+${c}`).toBe(200);
      else expectProblem(res, 422, "validation_failed");
    }
  });

  it("stores tab, line feed and carriage return as sent", async () => {
    const description = "line one\r\n\tline two\n";
    const res = await post(ORDER_PATH, JSON.stringify(order({ description })));
    expect(res.statusCode, res.body).toBe(200);
    const read = await h.get(`/api/dispatch/v1/orders/${res.json().order_id}`, { "x-api-key": key });
    expect(read.json().description).toBe(description);
  });

  it("reports a control character beside the schema's own errors", async () => {
    const body = order({ description: "a\u0001b", urgency: "whenever" });
    const problem = expectProblem(await post(ORDER_PATH, JSON.stringify(body)), 422, "validation_failed");
    expect(problem.errors.map((e: { field: string }) => e.field).sort()).toEqual(["description", "urgency"]);
  });

  it("refuses NUL in query and path inputs too", async () => {
    const auth = { "x-api-key": key };
    for (const url of [
      "/api/dispatch/v1/orders?reference_id=a%00b",
      "/api/audit?order_id=ord_%00",
      "/api/dispatch/v1/orders/ord_%00",
    ]) {
      expectProblem(await h.get(url, auth), 422, "validation_failed");
    }
  });
});

describe("I-JSON bodies", () => {
  it("refuses an escaped lone surrogate with 400 invalid_json and its pointer", async () => {
    for (const lone of ["\\ud800", "\\uDBFF", "\\udc00", "\\ude00\\ud83d"]) {
      const text = JSON.stringify(order()).replace('"Rooftop unit', `"Rooftop ${lone}unit`);
      const problem = expectProblem(await post(ORDER_PATH, text), 400, "invalid_json");
      expect(problem.detail).toMatch(/lone surrogate/);
      expect(problem.pointer).toBe("/description");
    }
  });

  it("refuses a lone surrogate in a member name", async () => {
    const problem = expectProblem(
      await post(QUOTE_PATH, '{"trade":"plumbing","\\ud800":1}'),
      400,
      "invalid_json",
    );
    expect(problem.detail).toMatch(/member name holds a lone surrogate/);
  });

  it("accepts a surrogate pair, escaped or not", async () => {
    const escaped = JSON.stringify(order()).replace('"Rooftop unit', '"Rooftop \\ud83d\\ude00 unit');
    const res = await post(ORDER_PATH, escaped);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().description).toBe("Rooftop \u{1f600} unit not cooling");
  });

  it("refuses a body that is not UTF-8, a lone surrogate's bytes among them", async () => {
    for (const bad of [[0xed, 0xa0, 0x80], [0xff], [0xc3], [0xe2, 0x28, 0xa1], [0xc0, 0xaf]]) {
      const before = Buffer.from('{"trade":"plumbing","location":{"state":"TX"},"description":"a');
      const payload = Buffer.concat([before, Buffer.from(bad), Buffer.from('"}')]);
      const problem = expectProblem(await post(QUOTE_PATH, payload), 400, "invalid_json");
      expect(problem.detail).toContain(`not valid UTF-8 (the first bad byte is at offset ${before.length})`);
    }
  });

  it("refuses duplicate member names, at any depth, naming the member", async () => {
    const top = '{"trade":123,"location":{"state":"TX"},"urgency":"urgent","trade":"plumbing"}';
    const problem = expectProblem(await post(QUOTE_PATH, top), 400, "invalid_json");
    expect(problem.detail).toMatch(/"trade" appears twice/);
    expect(problem.pointer).toBe("/trade");

    const nested = '{"trade":"plumbing","location":{"state":"TX", "zip" :"78701","state":"CA"}}';
    expect(expectProblem(await post(QUOTE_PATH, nested), 400, "invalid_json").pointer).toBe(
      "/location/state",
    );

    const inArray = '{"a":[{"x":1},{"x":1,"y\\/":2,"y/":3}]}';
    expect(expectProblem(await post(QUOTE_PATH, inArray), 400, "invalid_json").pointer).toBe("/a/1/y~1");

    // Escaped and unescaped spellings of one name are the same name.
    const spelled = '{"trade":"plumbing","tr\\u0061de":"hvac","location":{"state":"TX"}}';
    expect(expectProblem(await post(QUOTE_PATH, spelled), 400, "invalid_json").pointer).toBe("/trade");
  });

  it("accepts the same name in different objects, and strings that look like members", async () => {
    const body = order({ description: 'he said "state": "TX", then \\": twice', reference_id: '"a":' });
    const res = await post(ORDER_PATH, JSON.stringify(body));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().description).toBe(body.description);
  });

  it("refuses a number beyond the IEEE 754 double range", async () => {
    for (const n of ["1e400", "-1e400", `1${"0".repeat(400)}`]) {
      const text = `{"trade":"plumbing","location":{"state":"TX"},"nte_cents":${n}}`;
      const problem = expectProblem(await post(QUOTE_PATH, text), 400, "invalid_json");
      expect(problem.detail).toMatch(/IEEE 754 double range/);
      expect(problem.pointer).toBe("/nte_cents");
    }
  });

  it("refuses a __proto__ member, however it is spelled", async () => {
    for (const name of ["__proto__", "\\u005f_proto__"]) {
      const text = `{"trade":"plumbing","location":{"state":"TX","${name}":{"x":1}}}`;
      const problem = expectProblem(await post(QUOTE_PATH, text), 400, "invalid_json");
      expect(problem.pointer).toBe("/location/__proto__");
    }
  });

  it("refuses a JSON null body as not the object an operation takes (422 on body), and reads no body as {}", async () => {
    const secret = "/api/dispatch/v1/webhooks/secret";
    for (const path of [secret, QUOTE_PATH]) {
      const problem = expectProblem(await post(path, "null"), 422, "validation_failed");
      expect(problem.errors.map((e: { field: string }) => e.field)).toEqual(["body"]);
    }
    // Without a body (and its Content-Type), a body whose members are all optional is {}.
    const bare = await h.app.inject({ method: "POST", url: secret, headers: { "x-api-key": key } });
    expect(bare.statusCode, bare.body).toBe(200);
  });

  it("still answers malformed and empty bodies 400 invalid_json", async () => {
    expectProblem(await post(QUOTE_PATH, '{"trade":'), 400, "invalid_json");
    expectProblem(await post(QUOTE_PATH, ""), 400, "invalid_json");
  });

  it("holds the MCP and A2A endpoints' bodies to the same rules", async () => {
    const duplicate = '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}';
    const surrogate = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\\udfff"}}';
    // A JSON-RPC endpoint answers in JSON-RPC: a parse error (-32700) saying what is wrong and where.
    for (const path of ["/api/mcp", "/api/a2a"]) {
      const headers = { accept: "application/json, text/event-stream" };
      for (const [body, where] of [
        [duplicate, "at /id"],
        [surrogate, "at /params/x"],
      ] as const) {
        const res = await post(path, body, headers);
        expect(res.statusCode).toBe(400);
        expect(res.json().error.code).toBe(-32700);
        expect(res.json().error.message).toMatch(new RegExp(`invalid_json: .*${where}`));
      }
    }
  });
});

describe("Content-Type charset and Content-Encoding", () => {
  const quote = JSON.stringify(validQuote());

  it("decodes gzip, deflate and br bodies", async () => {
    const encoded: Array<[string, Buffer]> = [
      ["gzip", gzipSync(quote)],
      ["x-gzip", gzipSync(quote)],
      ["deflate", deflateSync(quote)],
      ["br", brotliCompressSync(quote)],
      ["GZip", gzipSync(quote)],
      ["identity", Buffer.from(quote)],
      ["identity, gzip", gzipSync(quote)],
    ];
    for (const [coding, payload] of encoded) {
      const res = await post(QUOTE_PATH, payload, { "content-encoding": coding });
      expect(res.statusCode, `${coding}: ${res.body}`).toBe(200);
      expect(res.json().trade).toBe("plumbing");
    }
  });

  it("parses a decoded body as I-JSON too", async () => {
    const payload = gzipSync('{"trade":"plumbing","trade":"hvac","location":{"state":"TX"}}');
    const problem = expectProblem(
      await post(QUOTE_PATH, payload, { "content-encoding": "gzip" }),
      400,
      "invalid_json",
    );
    expect(problem.pointer).toBe("/trade");
  });

  it("answers 415 with Accept-Encoding to any other coding, or more than one", async () => {
    for (const coding of ["zstd", "compress", "gzip, br", "bogus"]) {
      const res = await post(QUOTE_PATH, quote, { "content-encoding": coding });
      const problem = expectProblem(res, 415, "unsupported_media_type");
      expect(problem.detail).toMatch(/Content-Encoding/);
      expect(res.headers["accept-encoding"]).toBe("gzip, deflate, br");
    }
  });

  it("answers 400 to a body that is not what its Content-Encoding says", async () => {
    const res = await post(QUOTE_PATH, quote, { "content-encoding": "gzip" });
    expect(expectProblem(res, 400, "invalid_request").detail).toMatch(/not valid gzip data/);
  });

  it("stops a decompression bomb at the 1 MiB limit counted after decoding", async () => {
    const bomb = gzipSync(Buffer.alloc(16 * 1024 * 1024, 0x20)); // 16 MiB of spaces in about 16 KiB
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await post(QUOTE_PATH, bomb, { "content-encoding": "gzip" });
    expect(expectProblem(res, 413, "payload_too_large").detail).toMatch(/once decoded/);
    // Just under the limit once decoded is fine.
    const padded = gzipSync(quote + " ".repeat(1024 * 1024 - quote.length));
    expect((await post(QUOTE_PATH, padded, { "content-encoding": "gzip" })).statusCode).toBe(200);
  });

  it("answers 415 to a charset other than UTF-8", async () => {
    for (const type of ["application/json; charset=utf-16", "application/json;charset=iso-8859-1"]) {
      const problem = expectProblem(
        await post(QUOTE_PATH, quote, { "content-type": type }),
        415,
        "unsupported_media_type",
      );
      expect(problem.detail).toMatch(/charset/);
    }
    for (const type of ["application/json; charset=UTF-8", 'application/json; charset="utf-8"']) {
      expect((await post(QUOTE_PATH, quote, { "content-type": type })).statusCode).toBe(200);
    }
  });
});
