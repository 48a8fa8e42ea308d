import { ORDER_PATH, QUOTE_PATH, validOrder, validQuote } from "../helpers/harness.js";
import { runSecuritySuite } from "../helpers/security-suite.js";

runSecuritySuite("dispatchQuote", (h, headers) => h.post(QUOTE_PATH, validQuote(), headers));
runSecuritySuite("dispatchOrder", (h, headers) => h.post(ORDER_PATH, validOrder(), headers));
runSecuritySuite("dispatchOrderStatus", (h, headers) =>
  h.get("/api/dispatch/v1/orders/ord_doesnotexist", headers),
);
