// Unsubscribe link tokens of notification messages (/n/unsubscribe/<token>): `<notification id>.<mac>`,
// the mac 22 base64url characters of HMAC-SHA256(secret, "unsubscribe v1" || 0x00 || id). The message row
// names the account, mode and address the link opts out; the secret is derived from the audit signing key
// (as tracking links' is), so hosts sharing the key share the links. Checked in constant time.

import { createHmac, timingSafeEqual } from "node:crypto";

const ID = /^ntf_[0-9A-Za-z]{8,40}$/;
const MAC = /^[0-9A-Za-z_-]{22}$/;

export class UnsubscribeTokens {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 32) throw new Error("the unsubscribe secret must be at least 32 bytes");
  }

  private macOf(id: string): string {
    return createHmac("sha256", this.secret)
      .update(`unsubscribe v1\u0000${id}`, "utf8")
      .digest()
      .subarray(0, 16)
      .toString("base64url");
  }

  tokenOf(notificationId: string): string {
    return `${notificationId}.${this.macOf(notificationId)}`;
  }

  /** The notification a valid token names; null for any other string. */
  check(token: string): string | null {
    const [id, mac, ...rest] = token.split(".");
    if (id === undefined || mac === undefined || rest.length > 0 || !ID.test(id) || !MAC.test(mac))
      return null;
    const ok = timingSafeEqual(Buffer.from(this.macOf(id), "utf8"), Buffer.from(mac, "utf8"));
    return ok ? id : null;
  }
}
