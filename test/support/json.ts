// A JSON document as a test reads it, field by field: an API answer (whose shape the tests check
// against the OpenAPI document with OpenApiValidator), a decoded feed, a config file. Typing each
// such document for the compiler would restate the schemas the tests exist to check.

// biome-ignore lint/suspicious/noExplicitAny: the one loosely typed JSON value of the tests (see above)
export type JsonBody = any;
