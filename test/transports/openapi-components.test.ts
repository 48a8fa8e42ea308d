// leanComponents: the component schemas the document uses, each under its own name.

import { describe, expect, it } from "vitest";
import { leanComponents } from "../../src/transports/http/openapi-components.js";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe("leanComponents", () => {
  it("drops unused forms, names an input-only schema after itself, and merges identical forms", () => {
    const doc = {
      openapi: "3.1.0",
      paths: {
        "/a": {
          post: {
            requestBody: { content: { "application/json": { schema: ref("AInput") } } },
            responses: { 200: { content: { "application/json": { schema: ref("Same") } } } },
          },
        },
        "/b": { post: { requestBody: { content: { "application/json": { schema: ref("SameInput") } } } } },
      },
      webhooks: {
        hook: { post: { requestBody: { content: { "application/json": { schema: ref("W") } } } } },
      },
      components: {
        securitySchemes: { key: { type: "apiKey", in: "header", name: "x-api-key" } },
        schemas: {
          A: { type: "object" },
          AInput: { type: "object", properties: { part: ref("PartInput") } },
          Part: { type: "string" },
          PartInput: { type: "string" },
          Same: { type: "integer" },
          SameInput: { type: "integer" },
          W: { type: "object" },
          WInput: { type: "object" },
          Unused: { type: "null" },
        },
      },
    };
    const lean = leanComponents(doc) as typeof doc;
    expect(Object.keys(lean.components.schemas).sort()).toEqual(["A", "Part", "Same", "W"]);
    expect(lean.components.schemas.A).toEqual({ type: "object", properties: { part: ref("Part") } });
    expect(lean.paths["/a"].post.requestBody.content["application/json"].schema).toEqual(ref("A"));
    expect(lean.paths["/b"].post.requestBody?.content["application/json"].schema).toEqual(ref("Same"));
    expect(lean.components.securitySchemes).toEqual(doc.components.securitySchemes);
  });

  it("keeps both forms of a schema used both ways when they differ", () => {
    const doc = {
      paths: {
        "/c": {
          post: {
            requestBody: { content: { "application/json": { schema: ref("CInput") } } },
            responses: { 200: { content: { "application/json": { schema: ref("C") } } } },
          },
        },
      },
      components: {
        schemas: {
          C: { type: "object", required: ["n"] },
          CInput: { type: "object" },
        },
      },
    };
    const lean = leanComponents(doc) as typeof doc;
    expect(Object.keys(lean.components.schemas).sort()).toEqual(["C", "CInput"]);
  });
});
