import t from 'tap';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readZipBuffer } from './zip.ts';
import { buildZip } from './zip-write.ts';

t.test('round trip, fixed bytes, names in order', async (t) => {
  const entries = [
    { name: 'agency.txt', data: Buffer.from('agency_id,agency_name\nA,Ågency\n') },
    { name: 'empty.txt', data: Buffer.alloc(0) },
    { name: 'big.txt', data: Buffer.from('x,y\n'.repeat(50_000)) },
    { name: 'stored.txt', data: 'kept as is', method: 'store' as const },
  ];
  const zip = buildZip(entries);
  t.ok(zip.equals(buildZip(entries)), 'deterministic');
  t.ok(zip.length < 10_000, 'deflated');
  const back = readZipBuffer(zip);
  t.same(
    back.map((e) => e.name),
    ['agency.txt', 'empty.txt', 'big.txt', 'stored.txt'],
  );
  back.forEach((e, i) => t.same(e.data, Buffer.from(entries[i]!.data), `${e.name} content`));
});

function hasPython(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

t.test(
  'an independent reader accepts the zip',
  { skip: hasPython() ? false : 'python3 not available to check the zip independently' },
  async (t) => {
    const path = join(t.testdir(), 'x.zip');
    writeFileSync(
      path,
      buildZip([
        { name: 'gtfs/', data: '', method: 'store' },
        { name: 'gtfs/stops.txt', data: 'stop_id\n1\n' },
      ]),
    );
    const script =
      'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; ' +
      'assert z.getinfo("gtfs/").is_dir(); print(z.read("gtfs/stops.txt").decode(), end="")';
    t.equal(execFileSync('python3', ['-c', script, path]).toString(), 'stop_id\n1\n');
  },
);
