// The layering rules `npm run lint` checks (dependency-cruiser). Dependencies point one way:
//   transports -> operations -> domain;  operations -> storage ports;  workers -> operations, domain;
//   the composition (main.ts, cli/, services/, sim/) may use any layer; nothing imports a transport
//   but the composition; and no import forms a cycle.
// The libraries beside the layers (audit/, auth/, net/, probe/, webhooks/) serve operations and storage
// and import neither.

const LIBRARIES = "^src/(audit|auth|net|probe|webhooks)/";
const COMPOSITION = "^src/(main\\.ts|bootstrap\\.ts|cluster-metrics\\.ts|cli/|services/|sim/)";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
      comment: "domain/ is pure logic: it imports only domain/, the error codes and the zipcodes data.",
      from: { path: "^src/domain/" },
      to: {
        pathNot: ["^src/domain/", "^src/errors\\.ts$", "^src/types/", "node_modules/zipcodes"],
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
