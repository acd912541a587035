// A command's arguments are wrong: the person at the terminal is told what to fix, without a
// stack, and the command exits 2. Thrown by the CLI's parsing (cli/) and by the operations
// (admin/operations/), which give the same answer whether run by the CLI or inside the service.
export class UsageError extends Error {}
