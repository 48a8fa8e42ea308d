// The layering rules `npm run lint` checks (dependency-cruiser). Dependencies point one way:
//   transports -> operations -> domain;  operations -> storage ports;  workers -> operations, domain;
//   the composition (main.ts, cli/, services/, sim/) may use any layer; nothing imports a transport
//   but the composition; and no import forms a cycle, between files or between folders.
// Inside operations/: registry.ts lists them all; kernel/ (what every operation runs through) imports no
// subject folder; a subject imports another only along the map in SUBJECT_IMPORTS (docs/development.md).
// The libraries beside the layers (audit/, auth/, net/, probe/, webhooks/) serve operations and storage:
// they never import operations, and of storage only its port (store.ts) and the rows it names
// (schema.ts), because the key service, console sessions and the outbox are written against the store
// port. The audit log owns its own port (audit/persistence.ts), which storage implements, so storage may
// import audit/ and no other library.

const LIBRARIES = "^src/(audit|auth|net|probe|webhooks)/";
const SUBJECTS = [
  "orders",
  "matching",
  "pool",
  "evals",
  "audit",
  "webhooks",
  "probe",
  "requests",
  "notifications",
];
/** Which subject folders of operations/ a subject may import (besides kernel/ and itself). */
const SUBJECT_IMPORTS = {
  orders: ["matching"],
  matching: [],
  pool: ["orders"],
  evals: ["orders", "audit"],
  audit: ["matching"],
  webhooks: [],
  probe: [],
  requests: ["orders"],
  // The service report's link (orders); tracking/ and sites/ (the link a message carries, the account's
  // owner) are not in this list's subjects.
  notifications: ["orders"],
};
const subjectRules = SUBJECTS.map((subject) => {
  const others = SUBJECTS.filter((s) => s !== subject && !SUBJECT_IMPORTS[subject].includes(s));
  return {
    name: `operations-${subject}-imports-only-its-neighbours`,
    severity: "error",
    comment: `operations/${subject}/ may import kernel/ and ${SUBJECT_IMPORTS[subject].join(", ") || "no other subject"}.`,
    from: { path: `^src/operations/${subject}/` },
    to: { path: others.length ? `^src/operations/(${others.join("|")})/` : "^$" },
  };
});
const COMPOSITION = "^src/(main\\.ts|bootstrap\\.ts|cluster-metrics\\.ts|cli/|services/|sim/)";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...subjectRules,
    {
      name: "kernel-imports-no-subject",
      severity: "error",
      comment: "operations/kernel/ is what every operation runs through: it knows no subject.",
      from: { path: "^src/operations/kernel/" },
      to: { path: "^src/operations/(?!kernel/)" },
    },
    {
      name: "no-folder-cycles",
      severity: "error",
      comment: "Two folders that import each other are one module in two places: move the shared part down.",
      scope: "folder",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-circular",
      severity: "error",
      comment:
        "An import cycle ties modules that should stand apart: break it by moving the shared part down.",
      from: {},
      to: { circular: true },
    },
    {
      name: "domain-is-pure",
      severity: "error",
      comment:
        "domain/ is pure logic: it imports only domain/, the error codes, the zipcodes data and rrule (recurrence rules, no I/O).",
      from: { path: "^src/domain/" },
      to: {
        pathNot: [
          "^src/domain/",
          "^src/errors\\.ts$",
          "^src/types/",
          "node_modules/zipcodes",
          "node_modules/rrule",
        ],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "nothing-imports-a-transport",
      severity: "error",
      comment: "Transports translate protocols; only the composition wires them.",
      from: { path: "^src/", pathNot: ["^src/transports/", COMPOSITION] },
      to: { path: "^src/transports/" },
    },
    {
      name: "operations-stay-below-workers-and-composition",
      severity: "error",
      from: { path: "^src/operations/" },
      to: { path: ["^src/workers/", COMPOSITION] },
    },
    {
      name: "storage-serves-upward-only",
      severity: "error",
      comment: "storage/ implements ports: it knows the domain's values, never the operations or workers.",
      from: { path: "^src/storage/" },
      to: { path: ["^src/operations/", "^src/workers/", "^src/transports/", COMPOSITION] },
    },
    {
      name: "workers-use-operations-and-domain",
      severity: "error",
      from: { path: "^src/workers/" },
      to: { path: ["^src/transports/", COMPOSITION] },
    },
    {
      name: "libraries-stay-below-operations",
      severity: "error",
      from: { path: LIBRARIES },
      to: { path: ["^src/operations/", "^src/workers/", "^src/transports/", COMPOSITION] },
    },
    {
      name: "libraries-use-the-store-port-only",
      severity: "error",
      comment:
        "A library reaches storage through its port (store.ts) and row types (schema.ts), never an implementation.",
      from: { path: LIBRARIES },
      to: { path: "^src/storage/", pathNot: "^src/storage/(store|schema)\\.ts$" },
    },
    {
      name: "the-audit-log-knows-no-storage",
      severity: "error",
      comment:
        "Storage implements the audit log's port (audit/persistence.ts): the log imports nothing of it.",
      from: { path: "^src/audit/" },
      to: { path: "^src/storage/" },
    },
    {
      name: "storage-imports-only-the-audit-library",
      severity: "error",
      comment: "Of the libraries, storage uses only the audit log, whose records it keeps.",
      from: { path: "^src/storage/" },
      to: { path: "^src/(auth|net|probe|webhooks)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
