// The SQL dialects the one Kysely store runs on.

export type Dialect = "sqlite" | "postgres";
