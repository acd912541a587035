import t from 'tap';
import { VersionWatch } from './version-watch.ts';
import { logInto } from '../test/support/logs.ts';

t.test('a moved version notifies its channel once per check, whatever the number of bumps', async (t) => {
  let live = 1;
  let reliability = 'a';
  const notified: string[][] = [];
  const watch = new VersionWatch({
    sources: [
      { channel: 'live', read: () => live },
      { channel: 'reliability', read: () => reliability },
    ],
    onChange: (channels) => notified.push([...channels]),
  });
  t.same(watch.check(), [], 'nothing moved since construction');
  live += 5;
  t.same(watch.check(), ['live']);
  reliability = 'b';
  live++;
  t.same(watch.check(), ['live', 'reliability']);
  t.same(watch.check(), []);
  t.same(notified, [['live'], ['live', 'reliability']], 'onChange only when something moved');
});

t.test('a failing source is logged and skipped; the timer runs until stopped', async (t) => {
  let version = 0;
  let broken = false;
  const logged: string[] = [];
  const seen: string[][] = [];
  const watch = new VersionWatch({
    sources: [
      {
        channel: 'bad',
        read: () => {
          if (broken) throw new Error('down');
          return 1;
        },
      },
      { channel: 'live', read: () => version },
    ],
    onChange: (channels) => seen.push([...channels]),
    intervalMs: 5,
    log: logInto((message) => logged.push(message)),
  }).start();
  broken = true;
  version = 1;
  const deadline = Date.now() + 5_000;
  while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  watch.stop();
  t.same(seen[0], ['live'], 'the healthy source still notifies');
  t.match(logged[0], /version of bad could not be read/);
  version = 2;
  await new Promise((r) => setTimeout(r, 30));
  t.equal(seen.length, 1, 'nothing after stop');
});
