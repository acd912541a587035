// What the simulator encoded, read back for its tests with the same .proto (fixtures/rt-codec.ts).
import { feedMessageType } from '../../fixtures/rt-codec.ts';
import type { JsonBody } from './json.ts';

/** Decodes to plain objects: enums as names, 64-bit integers as numbers, repeated fields always arrays. */
export function decodeFeed(bytes: Uint8Array): JsonBody {
  const type = feedMessageType();
  return type.toObject(type.decode(bytes), { enums: String, longs: Number, arrays: true }) as JsonBody;
}
