// schema.org Product markup in JSON-LD, as shopping agents and answer engines read it: a name, an image,
// an offer with a positive price in an ISO 4217 currency and a schema.org availability, an identifier
// (gtin, mpn or sku) and a brand.

import { Parser } from "htmlparser2";
import { type CheckId, type CheckResult, result } from "./scoring.js";
import { asDocument, isRecord, type Site } from "./site.js";

const CURRENCIES = new Set(Intl.supportedValuesOf("currency"));
const AVAILABILITY = /^https?:\/\/schema\.org\/[A-Za-z]+$/;
const IDENTIFIERS = ["gtin", "gtin8", "gtin12", "gtin13", "gtin14", "mpn", "sku"] as const;
const PRODUCT_FIELDS = ["name", "image", "offers", "identifier", "brand"] as const;
type ProductField = (typeof PRODUCT_FIELDS)[number];

/** The contents of every <script type="application/ld+json"> in a page. */
function jsonLdBlocks(html: string): string[] {
  const blocks: string[] = [];
  let current: string[] | null = null;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "script" && attributes.type?.trim().toLowerCase() === "application/ld+json")
          current = [];
      },
      ontext(text) {
        current?.push(text);
      },
      onclosetag(name) {
        if (name === "script" && current) {
          blocks.push(current.join(""));
          current = null;
        }
      },
    },
    { decodeEntities: false },
  );
  parser.write(html);
  parser.end();
  return blocks;
}

function hasType(node: Record<string, unknown>, type: string): boolean {
  const t = node["@type"];
  const matches = (v: unknown) => typeof v === "string" && (v === type || v.endsWith(`/${type}`));
  return Array.isArray(t) ? t.some(matches) : matches(t);
}

/** Every Product (or ProductGroup) object anywhere in the JSON-LD, @graph and nesting included. */
function findProducts(blocks: string[]): Record<string, unknown>[] {
  const products: Record<string, unknown>[] = [];
  let visited = 0;
  const walk = (node: unknown, depth: number): void => {
    if (depth > 32 || ++visited > 20_000) return;
    if (Array.isArray(node)) {
      for (const n of node) walk(n, depth + 1);
      return;
    }
    if (!isRecord(node)) return;
    if (hasType(node, "Product") || hasType(node, "ProductGroup")) products.push(node);
    for (const v of Object.values(node)) if (typeof v === "object" && v !== null) walk(v, depth + 1);
  };
  for (const block of blocks) {
    try {
      walk(JSON.parse(block), 0);
    } catch {
      // A block that is not JSON is skipped, as agents skip it.
    }
  }
  return products;
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);

function positive(v: unknown): boolean {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n > 0;
}

/** Which of the required fields the product has. */
function productFields(p: Record<string, unknown>): Record<ProductField, boolean> {
  const image = list(p.image).some(
    (i) =>
      (typeof i === "string" && i.trim() !== "") ||
      (isRecord(i) && typeof (i.url ?? i.contentUrl) === "string"),
  );
  const offers = list(p.offers).flatMap((o) =>
    isRecord(o) && Array.isArray(o.offers) ? [o, ...o.offers] : [o],
  );
  const goodOffer = offers.some((o) => {
    if (!isRecord(o)) return false;
    const spec = list(o.priceSpecification).find(isRecord);
    const price = [o.price, o.lowPrice, spec?.price].some(positive);
    const currency = [o.priceCurrency, spec?.priceCurrency].some(
      (c) => typeof c === "string" && CURRENCIES.has(c),
    );
    const availability = typeof o.availability === "string" && AVAILABILITY.test(o.availability);
    return price && currency && availability;
  });
  const brand = list(p.brand).some(
    (b) =>
      (typeof b === "string" && b.trim() !== "") ||
      (isRecord(b) && typeof b.name === "string" && b.name !== ""),
  );
  return {
    name: typeof p.name === "string" && p.name.trim() !== "",
    image,
    offers: goodOffer,
    identifier: IDENTIFIERS.some(
      (k) => (typeof p[k] === "string" && p[k] !== "") || typeof p[k] === "number",
    ),
    brand,
  };
}

const FIELD_TEXT: Record<ProductField, string> = {
  name: "name",
  image: "image",
  offers: "offers with a positive price, an ISO 4217 priceCurrency and a schema.org availability URL",
  identifier: "an identifier (gtin, mpn or sku)",
  brand: "brand",
};

export async function checkProductSchema(
  site: Site,
  id: Extract<CheckId, "product_schema_home" | "product_schema_product_page">,
  pageUrl: string | null,
  why: string,
): Promise<CheckResult> {
  const fix =
    'Embed schema.org Product JSON-LD (<script type="application/ld+json">) with name, image, offers ' +
    "(price > 0, priceCurrency, availability as https://schema.org/InStock etc.), gtin/mpn/sku and brand.";
  if (!pageUrl) return result(id, "fail", { url: null, http_status: null, detail: why }, fix);
  const doc = asDocument(await site.get(pageUrl), { htmlExpected: true });
  if (!doc.present) {
    return result(id, "fail", { url: doc.url, http_status: doc.status, detail: `The page ${doc.why}.` }, fix);
  }
  const products = findProducts(jsonLdBlocks(doc.text));
  if (products.length === 0) {
    return result(
      id,
      "fail",
      { url: doc.url, http_status: doc.status, detail: "No schema.org Product JSON-LD on the page." },
      fix,
    );
  }
  // Judge the most complete product on the page.
  const scored = products.map((p) => {
    const fields = productFields(p);
    return { fields, present: PRODUCT_FIELDS.filter((f) => fields[f]).length };
  });
  scored.sort((a, b) => b.present - a.present);
  const best = scored[0] as (typeof scored)[number];
  const missing = PRODUCT_FIELDS.filter((f) => !best.fields[f]);
  const details = { products: products.length, fields: best.fields };
  if (missing.length === 0) {
    return result(
      id,
      "pass",
      {
        url: doc.url,
        http_status: doc.status,
        detail: "Product JSON-LD with name, image, a priced offer, an identifier and brand.",
      },
      null,
      details,
    );
  }
  return result(
    id,
    "warn",
    {
      url: doc.url,
      http_status: doc.status,
      detail: `Product JSON-LD found, lacking ${missing.map((f) => FIELD_TEXT[f]).join("; ")}.`,
    },
    fix,
    details,
  );
}
