// Fixture storefronts on 127.0.0.1 for the readiness probe's tests and benchmark: an exemplary store, an
// empty one, partial ones, and hostile ones. Each runs its own HTTP server on a free port; `stats` counts
// the requests in flight across all of them (the benchmark checks the outbound cap with it).

import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";

export interface Storefront {
  origin: string;
  port: number;
  /** Requests received, by path. */
  hits: Map<string, number>;
  /** Requests received and not yet answered or abandoned by the client. */
  readonly open: number;
  connections: number;
  close(): Promise<void>;
}

export const stats = { inFlight: 0, peakInFlight: 0 };

type Reply = {
  status?: number;
  type?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Never answer (the socket stays open until the server closes). */
  hang?: boolean;
  /** Answer after this long. */
  delayMs?: number;
};
export type Routes = (path: string, origin: string) => Reply | undefined;

export const PRODUCT_JSON_LD = {
  "@context": "https://schema.org",
  "@type": "Product",
  name: "Brass Kitchen Faucet",
  image: ["https://cdn.shop.example/faucet.jpg"],
  sku: "FAUCET-01",
  gtin13: "0123456789012",
  brand: { "@type": "Brand", name: "Acme Fixtures" },
  offers: {
    "@type": "Offer",
    price: "129.00",
    priceCurrency: "USD",
    availability: "https://schema.org/InStock",
  },
};

export function htmlPage(title: string, jsonLd: unknown[] = []): string {
  const scripts = jsonLd
    .map((j) => `<script type="application/ld+json">${JSON.stringify(j)}</script>`)
    .join("\n");
  return `<!doctype html><html><head><title>${title}</title>${scripts}</head><body><h1>${title}</h1></body></html>`;
}

const json = (value: unknown, headers: Record<string, string> = {}): Reply => ({
  type: "application/json",
  body: JSON.stringify(value),
  headers,
});

export const ACP_DOCUMENT = {
  protocol: { name: "acp", version: "2026-01-30", supported_versions: ["2025-09-29", "2026-01-30"] },
  api_base_url: "https://shop.example/acp",
  transports: ["rest"],
  capabilities: { services: ["checkout", "orders"] },
};

export const UCP_PROFILE = {
  ucp: {
    version: "2026-04-08",
    services: {
      "dev.ucp.shopping": [
        {
          version: "2026-04-08",
          spec: "https://ucp.dev/2026-04-08/specification/overview",
          transport: "rest",
          endpoint: "https://shop.example/ucp/v1",
          schema: "https://ucp.dev/2026-04-08/services/shopping/rest.openapi.json",
        },
      ],
    },
    capabilities: {
      "dev.ucp.shopping.checkout": [
        {
          version: "2026-04-08",
          spec: "https://ucp.dev/2026-04-08/specification/checkout",
          schema: "https://ucp.dev/2026-04-08/schemas/shopping/checkout.json",
        },
      ],
    },
    payment_handlers: {
      "com.example.pay": [
        {
          id: "card",
          version: "2026-04-08",
          spec: "https://pay.example/spec",
          schema: "https://pay.example/schema",
        },
      ],
    },
  },
};

export const AGENT_CARD = {
  name: "Shop agent",
  description: "Answers product questions and places orders.",
  version: "1.0.0",
  supportedInterfaces: [
    { url: "https://shop.example/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
  ],
  capabilities: {},
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "buy", name: "Buy", description: "Place an order", tags: ["commerce"] }],
};

/** Everything a probe looks for, valid: grade A. */
export const exemplary: Routes = (path, origin) => {
  switch (path) {
    case "/":
      return { type: "text/html", body: htmlPage("Acme Fixtures", [PRODUCT_JSON_LD]) };
    case "/products/brass-faucet":
      return { type: "text/html", body: htmlPage("Brass Kitchen Faucet", [PRODUCT_JSON_LD]) };
    case "/robots.txt":
      return {
        type: "text/plain",
        body: `User-agent: *\nAllow: /\nDisallow: /cart\n\nUser-agent: GPTBot\nDisallow: /\n\nSitemap: ${origin}/sitemap.xml\n`,
      };
    case "/sitemap.xml":
      return {
        type: "application/xml",
        body: `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/</loc></url><url><loc>${origin}/about?a=1&amp;b=2</loc></url><url><loc>${origin}/products/brass-faucet</loc></url></urlset>`,
      };
    case "/.well-known/acp.json":
      return json(ACP_DOCUMENT, { "cache-control": "public, max-age=3600" });
    case "/.well-known/ucp":
      return json(UCP_PROFILE, { "cache-control": "public, max-age=3600" });
    case "/.well-known/agent-card.json":
      return json(AGENT_CARD);
    case "/llms.txt":
      return {
        type: "text/plain",
        body: `# Acme Fixtures\n\n> Kitchen and bath fixtures.\n\n## Products\n\n- [Brass faucet](${origin}/products/brass-faucet): our best seller\n`,
      };
    case "/llms-full.txt":
      return { type: "text/plain", body: "# Acme Fixtures\n\nEvery product, in full.\n" };
    default:
      return undefined;
  }
};

/** The same store answering each request after `ms` (a store across a real network). */
export function slowed(routes: Routes, ms: number): Routes {
  return (path, origin) => {
    const reply = routes(path, origin) ?? { status: 404, type: "text/plain", body: "not found" };
    return { ...reply, delayMs: ms };
  };
}

/** Nothing at all: every path 404. Grade F. */
export const empty: Routes = () => undefined;

/** Every path answers 200 with the same HTML page (a soft 404). */
export const softNotFound: Routes = () => ({ type: "text/html", body: htmlPage("Welcome") });

/**
 * Half right: ACP valid without a cache lifetime, UCP behind a redirect, an agent card without skills,
 * a home page without Product markup, a product page lacking brand and identifier, robots.txt blocking
 * two AI agents from product pages and naming no sitemap, a sitemap index, llms.txt without an H1, no
 * llms-full.txt.
 */
export const partial: Routes = (path, origin) => {
  const { brand: _b, sku: _s, gtin13: _g, ...incomplete } = PRODUCT_JSON_LD;
  switch (path) {
    case "/":
      return { type: "text/html", body: htmlPage("Half Shop") };
    case "/shop/items/lamp":
      return { type: "text/html", body: htmlPage("Lamp", [{ "@graph": [{ ...incomplete, name: "Lamp" }] }]) };
    case "/robots.txt":
      return {
        type: "text/plain",
        body: "User-agent: *\nAllow: /\n\nUser-agent: Claude-User\nUser-agent: PerplexityBot\nDisallow: /shop/\n",
      };
    case "/sitemap.xml":
      return {
        type: "application/xml",
        body: `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/sitemap-pages.xml</loc></sitemap></sitemapindex>`,
      };
    case "/sitemap-pages.xml":
      return {
        type: "application/xml",
        body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/</loc></url><url><loc>${origin}/shop/items/lamp</loc></url></urlset>`,
      };
    case "/.well-known/acp.json":
      return json(ACP_DOCUMENT);
    case "/.well-known/ucp":
      return { status: 301, headers: { location: `${origin}/ucp-profile.json` } };
    case "/ucp-profile.json":
      return json(UCP_PROFILE, { "cache-control": "public, max-age=3600" });
    case "/.well-known/agent-card.json": {
      const { skills: _skills, ...card } = AGENT_CARD;
      return json(card);
    }
    case "/llms.txt":
      return { type: "text/plain", body: "Half Shop sells lamps.\n" };
    default:
      return undefined;
  }
};

/** A 10 MiB home page. */
export const hugeBody: Routes = (path) =>
  path === "/" ? { type: "text/html", body: Buffer.alloc(10 * 1024 * 1024, 0x61) } : undefined;

/** A 20 KiB gzip body that inflates to 200 MiB, on every path. */
let bomb: Buffer | null = null;
export const compressionBomb: Routes = () => {
  bomb ??= gzipSync(Buffer.alloc(200 * 1024 * 1024, 0), { level: 9 });
  return { type: "text/html", headers: { "content-encoding": "gzip" }, body: bomb };
};

/** Accepts connections and never answers. */
export const neverAnswers: Routes = () => ({ hang: true });

/** The home page redirects to `target`. */
export function redirectTo(target: string): Routes {
  return (path) => (path === "/" ? { status: 302, headers: { location: target } } : undefined);
}

export async function startStorefront(routes: Routes): Promise<Storefront> {
  const hits = new Map<string, number>();
  const sockets = new Set<Socket>();
  let connections = 0;
  let open = 0;
  let origin = "";
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    stats.inFlight++;
    open++;
    stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      stats.inFlight--;
      open--;
    };
    res.on("close", finish);
    // Links point back at the host the client asked for (a test may reach the fixture by a public name).
    const reply = routes(path, req.headers.host ? `http://${req.headers.host}` : origin);
    if (reply?.hang) return;
    if (!reply) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const send = () => {
      res.writeHead(reply.status ?? 200, {
        ...(reply.type ? { "content-type": reply.type } : {}),
        ...reply.headers,
      });
      res.end(reply.body);
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  });
  server.on("connection", (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    hits,
    get open() {
      return open;
    },
    get connections() {
      return connections;
    },
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, "close").catch(() => undefined);
    },
  };
}
