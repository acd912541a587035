import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { decodeFeedMessage } from './decode.ts';
import { encodeFeed, FIXTURES_REAL, hasRealFixtures, header } from '../test/support/pipeline-fakes.ts';

const vehicleFeed = () =>
  encodeFeed({
    header: header(1_700_000_000),
    entity: [
      { id: 'a', vehicle: { vehicle: { id: 'bus-1' }, position: { latitude: 40.1, longitude: -73.9 } } },
      { id: 'b', vehicle: { vehicle: { id: 'bus-2' }, position: { latitude: 40.2, longitude: -73.8 } } },
    ],
  });

t.test('a well-formed feed decodes', async (t) => {
  const result = decodeFeedMessage(vehicleFeed());
  t.ok(result.ok);
  if (!result.ok) return;
  t.equal(result.message.entity.length, 2);
  t.equal(result.message.entity[1]!.vehicle!.vehicle!.id, 'bus-2');
});

t.test('unknown extensions and unknown fields are skipped, not fatal', async (t) => {
  const body = vehicleFeed();
  // append an extension (field 1001, string) to the FeedMessage and an unknown varint field 50
  const tail = protobuf.Writer.create()
    .uint32((1001 << 3) | 2)
    .string('agency extension')
    .uint32((50 << 3) | 0)
    .uint64(7)
    .finish();
  const withExtension = new Uint8Array(body.length + tail.length);
  withExtension.set(body);
  withExtension.set(tail, body.length);
  const result = decodeFeedMessage(withExtension);
  t.ok(result.ok, 'decoded');
  if (result.ok) t.equal(result.message.entity.length, 2);
});

t.test('an entity without its required id still decodes; the normalizer rejects the row', async (t) => {
  const body = encodeFeed({
    header: header(1_700_000_000),
    entity: [{ vehicle: { position: { latitude: 1, longitude: 2 } } }],
  });
  const result = decodeFeedMessage(body);
  t.ok(result.ok);
  if (result.ok) t.equal(result.message.entity[0]!.id, '', 'reads the default empty id');
});

t.test('a body cut inside a field is truncated_body', async (t) => {
  const body = vehicleFeed();
  const result = decodeFeedMessage(body.subarray(0, body.length - 5));
  t.equal(result.ok, false);
  if (!result.ok) t.equal(result.reason, 'truncated_body');
});

t.test('text and empty bodies are not_protobuf', async (t) => {
  for (const body of [
    Buffer.from('<html><body>502 Bad Gateway</body></html>'),
    new Uint8Array(0),
    Buffer.from('{"json": true}'),
  ]) {
    const result = decodeFeedMessage(body);
    t.equal(result.ok, false);
    if (!result.ok) t.equal(result.reason, 'not_protobuf', JSON.stringify(body.toString()));
  }
});

t.test('base64 text of a protobuf is base64_body; base64-looking garbage is not_protobuf', async (t) => {
  const result = decodeFeedMessage(Buffer.from(Buffer.from(vehicleFeed()).toString('base64')));
  t.equal(result.ok, false);
  if (!result.ok) t.equal(result.reason, 'base64_body');
  const garbage = decodeFeedMessage(Buffer.from('QUJDREVGR0hJSktMTU5PUA=='));
  t.equal(garbage.ok, false);
  if (!garbage.ok) t.equal(garbage.reason, 'not_protobuf');
});

t.test(
  'the real bad files are classified',
  { skip: !hasRealFixtures() && 'shared/fixtures-real is absent' },
  async (t) => {
    const read = (name: string) => readFileSync(join(FIXTURES_REAL, 'bad', name));
    const notPb = decodeFeedMessage(read('not-protobuf.pb'));
    t.same(notPb.ok ? null : notPb.reason, 'not_protobuf');
    const b64 = decodeFeedMessage(read('base64-instead-of-binary.pb64'));
    t.same(b64.ok ? null : b64.reason, 'base64_body');
    t.ok(decodeFeedMessage(read('header-timestamp-in-ms.pb')).ok, 'ms header decodes; the normalizer flags it');
    t.ok(decodeFeedMessage(read('latitude-out-of-range.pb')).ok, 'bad latitude decodes; the row is rejected later');
  },
);

t.test('a Buffer body decodes as its bytes do: non-ASCII and invalid UTF-8 strings alike', async (t) => {
  // 3-byte vehicle ids: UTF-8 text, a lone Latin-1 byte, a BOM, a cut sequence, a surrogate half
  const ids = [
    [0xe2, 0x82, 0xac],
    [0xe9, 0x61, 0x61],
    [0xef, 0xbb, 0xbf],
    [0xf0, 0x9f, 0x9a],
    [0xed, 0xa0, 0x80],
  ];
  const body = Buffer.from(
    encodeFeed({
      header: header(1_700_000_000),
      entity: ids.map((_, i) => ({
        id: `e${i}`,
        vehicle: { vehicle: { id: 'qqq' }, trip: { trip_id: 'x'.repeat(80) } },
      })),
    }),
  );
  let at = 0;
  for (const bytes of ids) {
    at = body.indexOf('qqq', at);
    Buffer.from(bytes).copy(body, at);
  }
  const fromBuffer = decodeFeedMessage(body);
  const fromBytes = decodeFeedMessage(new Uint8Array(body));
  t.ok(fromBuffer.ok && fromBytes.ok);
  if (!fromBuffer.ok || !fromBytes.ok) return;
  const read = (m: typeof fromBuffer.message) => m.entity.map((e) => e.vehicle!.vehicle!.id);
  // what Node's own UTF-8 decoding makes of each (U+FFFD for what is not UTF-8)
  t.same(
    read(fromBuffer.message),
    ids.map((b) => Buffer.from(b).toString('utf8')),
  );
  t.same(read(fromBytes.message), read(fromBuffer.message));
  t.equal(fromBuffer.message.entity[0]!.vehicle!.trip!.trip_id, 'x'.repeat(80));
});
