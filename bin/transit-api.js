#!/usr/bin/env node
// The package's executable. The service is TypeScript run through tsx, the same loader the
// tests and benches use, so there is no separate build step for `npx transit-api`.
import { register } from 'tsx/esm/api';

register();
await import('../app/main.ts');
