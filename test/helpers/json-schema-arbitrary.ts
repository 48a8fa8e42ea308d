// fast-check arbitraries from the JSON Schema (2020-12, as an OpenAPI 3.1 document publishes it) of a
// request: values the schema accepts, drawn the way a schema-driven fuzzer (Schemathesis) draws them.
// Covers what the document uses: $ref into components, const, enum, anyOf/oneOf, a list of types, objects
// (required and optional properties, free-form records), arrays, strings (length, pattern, the date,
// date-time and uri formats), integers and numbers with their bounds, booleans and null. Date-times fall
// around `now` (a window in the next days, a range of the last ones), so that some requests get past the
// rules a schema cannot state. `known` offers, by property name, values of real resources (an order's id,
// an offer's) beside the generated ones, so that some requests reach the resource they name.

import fc from "fast-check";

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema documents, read by keyword.
export type JsonSchema = any;

export interface SchemaContext {
  /** components.schemas of the document, for $ref. */
  components: Record<string, JsonSchema>;
  /** Real values to offer, by property name. */
  known?: Record<string, readonly string[]>;
  /** The wall-clock time date-times are drawn around. */
  now: Date;
}

const DAY_MS = 86_400_000;

function dateTime(ctx: SchemaContext): fc.Arbitrary<string> {
  const now = ctx.now.getTime();
  // Whole quarter hours mostly (a window a rule accepts), any millisecond sometimes.
  return fc
    .oneof(
      fc
        .integer({ min: -30 * 96, max: 100 * 96 })
        .map((q) => Math.floor(now / 900_000) * 900_000 + q * 900_000),
      fc.integer({ min: now - 30 * DAY_MS, max: now + 100 * DAY_MS }),
    )
    .map((ms) => new Date(ms).toISOString());
}

function stringOf(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<string> {
  const maxLength: number = schema.maxLength ?? 64;
  const minLength: number = schema.minLength ?? 0;
  let arb: fc.Arbitrary<string>;
  if (schema.format === "date-time") arb = dateTime(ctx);
  else if (schema.format === "date") arb = dateTime(ctx).map((s) => s.slice(0, 10));
  else if (schema.format === "uri") arb = fc.webUrl({ withQueryParameters: true });
  else if (typeof schema.pattern === "string") {
    arb = fc.stringMatching(new RegExp(schema.pattern), { maxLength });
  } else {
    arb = fc.string({ minLength, maxLength: Math.min(maxLength, 80), unit: "grapheme" });
  }
  return arb.filter((s) => [...s].length >= minLength && s.length <= maxLength);
}

function numberOf(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const low = schema.exclusiveMinimum ?? schema.minimum ?? -1_000_000;
  const high = schema.exclusiveMaximum ?? schema.maximum ?? 1_000_000;
  // Huge bounds (zod's safe-integer range) would make nearly every value absurd: draw near zero mostly.
  const min = Math.max(low, -1_000_000_000);
  const max = Math.min(high, 1_000_000_000);
  const arb = integer
    ? fc.oneof(
        fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
        fc.integer({ min: Math.max(min, 0), max: Math.min(max, 100) }),
      )
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return arb.filter(
    (n) =>
      (schema.exclusiveMinimum === undefined || n > schema.exclusiveMinimum) &&
      (schema.exclusiveMaximum === undefined || n < schema.exclusiveMaximum) &&
      !Object.is(n, -0),
  );
}

function objectOf(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  if (Object.keys(properties).length === 0) {
    // A free-form record (z.record): a few members of any JSON.
    return fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
  }
  const model = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => {
      const generated = arbitraryOf(property, ctx);
      const real = ctx.known?.[name];
      return [name, real && real.length > 0 ? fc.oneof(generated, fc.constantFrom(...real)) : generated];
    }),
  );
  return fc.record(model, { requiredKeys: (schema.required ?? []) as string[] }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

/** Values `schema` accepts. */
export function arbitraryOf(schema: JsonSchema, ctx: SchemaContext): fc.Arbitrary<unknown> {
  if (schema === true || schema === undefined || Object.keys(schema).length === 0) {
    return fc.jsonValue({ maxDepth: 1 });
  }
  if (typeof schema.$ref === "string") {
    return arbitraryOf(ctx.components[schema.$ref.split("/").pop() as string], ctx);
  }
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choices)) {
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    return fc.oneof(...choices.map((choice: JsonSchema) => arbitraryOf({ ...rest, ...choice }, ctx)));
  }
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((type: string) => arbitraryOf({ ...schema, type }, ctx)));
  }
  switch (schema.type) {
    case "string":
      return stringOf(schema, ctx);
    case "integer":
      return numberOf(schema, true);
    case "number":
      return numberOf(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(arbitraryOf(schema.items ?? {}, ctx), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)),
      });
    case "object":
      return objectOf(schema, ctx);
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}
