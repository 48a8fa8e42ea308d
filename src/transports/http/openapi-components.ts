// The OpenAPI document's component schemas, one per named zod schema. fastify-type-provider-zod writes
// every schema of the registry twice, as read (output, `Order`) and as written (input, `OrderInput`),
// whether or not anything refers to both. Here only the forms the document uses are kept, under the
// schema's own name: a request schema is published as its input form (`QuoteRequest`), a response schema
// as its output form. Only a schema used both ways whose two forms differ keeps the `Input` twin. Each
// loses the `$id` (`#/components/schemas/...`, a fragment JSON Schema 2020-12 forbids there, which zod
// writes from `.meta({ id })`) and the `$schema` it is written with: the document's own dialect applies.

import type { SwaggerTransformObject } from "@fastify/swagger";
import { jsonSchemaTransformObject } from "fastify-type-provider-zod";

const PREFIX = "#/components/schemas/";
const INPUT = "Input";

type Json = unknown;

function collectRefs(value: Json, into: Set<string>): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, into);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string" && item.startsWith(PREFIX)) {
        into.add(item.slice(PREFIX.length));
      } else {
        collectRefs(item, into);
      }
    }
  }
  return into;
}

function renameRefs(value: Json, names: Map<string, string>): Json {
  if (Array.isArray(value)) return value.map((item) => renameRefs(item, names));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (key === "$ref" && typeof item === "string" && item.startsWith(PREFIX)) {
        const name = item.slice(PREFIX.length);
        return [key, `${PREFIX}${names.get(name) ?? name}`];
      }
      return [key, renameRefs(item, names)];
    }),
  );
}

/**
 * Keeps the component schemas reachable from the paths and webhooks; an `XInput` used where `X` is not
 * (or whose content equals `X`'s) becomes `X`.
 */
export function leanComponents(document: Record<string, Json>): Record<string, Json> {
  const components = (document.components ?? {}) as Record<string, Json>;
  const schemas = (components.schemas ?? {}) as Record<string, Json>;
  const { components: _components, ...roots } = document;
  // Reachable: referred to from outside the schemas (paths, webhooks, other components), then transitively.
  const reachable = new Set<string>();
  const pending = [
    ...collectRefs(roots, new Set()),
    ...collectRefs({ ...components, schemas: undefined }, new Set()),
  ];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (reachable.has(name) || !(name in schemas)) continue;
    reachable.add(name);
    pending.push(...collectRefs(schemas[name], new Set()));
  }

  const names = new Map<string, string>();
  for (const name of reachable) {
    if (!name.endsWith(INPUT)) continue;
    const base = name.slice(0, -INPUT.length);
    if (!(base in schemas)) continue; // a schema whose own name ends in "Input"
    if (!reachable.has(base)) names.set(name, base);
  }
  // Used both ways: one component when the two forms say the same thing.
  for (const name of reachable) {
    if (!name.endsWith(INPUT) || names.has(name)) continue;
    const base = name.slice(0, -INPUT.length);
    if (!reachable.has(base)) continue;
    const asInput = JSON.stringify(renameRefs(schemas[name], new Map([[name, base]])));
    if (asInput === JSON.stringify(schemas[base])) names.set(name, base);
  }

  const kept: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    if (!reachable.has(name)) continue;
    const target = names.get(name) ?? name;
    if (target !== name && reachable.has(target)) continue; // merged into its identical twin
    const { $id: _id, $schema: _dialect, ...body } = schema as Record<string, Json>;
    kept[target] = renameRefs(body, names);
  }
  const rest = renameRefs(roots, names) as Record<string, Json>;
  const otherComponents = renameRefs({ ...components, schemas: undefined }, names) as Record<string, Json>;
  return { ...rest, components: { ...otherComponents, schemas: kept } };
}

/** fastify-type-provider-zod's transformObject, then only the component schemas the document uses. */
export const leanJsonSchemaTransformObject: SwaggerTransformObject = (input) =>
  leanComponents(
    jsonSchemaTransformObject(input) as unknown as Record<string, Json>,
  ) as unknown as ReturnType<SwaggerTransformObject>;
