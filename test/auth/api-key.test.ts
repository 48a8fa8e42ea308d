import { describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey, keyHint, parseApiKey, sameHash } from "../../src/auth/api-key.js";

describe("API key format", () => {
  it("generates fsd_<mode>_ keys with a 36-character base62 token that verify", () => {
    for (const mode of ["live", "test"] as const) {
      const key = generateApiKey(mode);
      expect(key).toMatch(new RegExp(`^fsd_${mode}_[0-9A-Za-z]{36}$`));
      expect(parseApiKey(key)).toEqual({ ok: true, mode });
    }
  });

  it("rejects a key with one character changed by its checksum", () => {
    const key = generateApiKey("live");
    const i = 15;
    const swapped = key.slice(0, i) + (key[i] === "a" ? "b" : "a") + key.slice(i + 1);
    expect(parseApiKey(swapped)).toEqual({ ok: false, reason: "checksum" });
  });

  it("rejects malformed keys", () => {
    for (const bad of [
      "",
      "fsd_live_",
      "sk_live_abc",
      `fsd_prod_${"a".repeat(36)}`,
      `fsd_live_${"a".repeat(35)}!`,
    ]) {
      expect(parseApiKey(bad)).toEqual({ ok: false, reason: "malformed" });
    }
  });

  it("hashes with SHA-256 and compares hashes in constant time", () => {
    const key = generateApiKey("test");
    const h = hashApiKey(key);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(sameHash(h, hashApiKey(key))).toBe(true);
    expect(sameHash(h, hashApiKey(generateApiKey("test")))).toBe(false);
  });

  it("hints show the mode and the last 4 characters only", () => {
    const key = generateApiKey("live");
    expect(keyHint(key)).toBe(`fsd_live_...${key.slice(-4)}`);
  });
});
