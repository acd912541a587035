import t from 'tap';
import { LOCAL_FILE, publicText, publicUrl } from './public-text.ts';

t.test('a URL keeps scheme, host, port and path; loses user:password, query and fragment', async (t) => {
  t.equal(
    publicUrl('https://user:pa55@feeds.example.org:8443/rt/vehicles.pb?token=s3cret#x'),
    'https://feeds.example.org:8443/rt/vehicles.pb',
  );
  t.equal(publicUrl('http://feeds.example.org/?key=1'), 'http://feeds.example.org');
  t.equal(publicUrl('redis://:pw@cache:6379/0'), 'redis://cache:6379/0');
  t.equal(publicUrl('file:///home/agency/private/feed.pb'), LOCAL_FILE);
  t.equal(publicUrl('not a url'), '(hidden)');
});

t.test('the messages feeds and schedules produce, as the public sees them', async (t) => {
  const cases: Array<[string, string]> = [
    ["ENOENT: no such file or directory, stat '/home/op/private-dir/agency-secret-feed.pb'", 'file not found'],
    ["EACCES: permission denied, open '/srv/x.zip'", 'permission denied'],
    ['fetch failed: ECONNREFUSED', 'fetch failed: connection refused'],
    ['fetch failed: ENOTFOUND', 'fetch failed: host not found'],
    ['connect ECONNREFUSED 127.0.0.1:9', 'connection refused 127.0.0.1:9'],
    [
      'GTFS download failed: http://127.0.0.1:5000/gtfs.zip?token=SECRET: fetch failed: ECONNREFUSED',
      'GTFS download failed: http://127.0.0.1:5000/gtfs.zip: fetch failed: connection refused',
    ],
    [
      'GTFS download failed: https://u:p@x.org/g.zip#frag: HTTP 403',
      'GTFS download failed: https://x.org/g.zip: HTTP 403',
    ],
    ['GTFS source not found: /var/lib/agency/secret/gtfs.zip', `GTFS source not found: ${LOCAL_FILE}`],
    ['GTFS source not found: file:///var/lib/agency/gtfs.zip', `GTFS source not found: ${LOCAL_FILE}`],
    ['cannot read "C:\\Users\\op\\feed.pb"', `cannot read ${LOCAL_FILE}`],
    [
      'Request cannot be constructed from a URL that includes credentials: ' +
        'http://user:pass@127.0.0.1:1/feed.pb?token=S#f',
      'the URL holds a user name and password, which the HTTP client refuses',
    ],
    ['HTTP 503', 'HTTP 503'],
    [
      'no complete response within 10000 ms (12 bytes of body read)',
      'no complete response within 10000 ms (12 bytes of body read)',
    ],
    ['body over max_bytes (52428800)', 'body over max_bytes (52428800)'],
    ['decode failed: invalid wire type 7 at offset 3', 'decode failed: invalid wire type 7 at offset 3'],
    ['header timestamp 1/2 of the way', 'header timestamp 1/2 of the way'],
    ['EFOO: something odd', 'EFOO: something odd'],
  ];
  for (const [raw, shown] of cases) t.equal(publicText(raw), shown, raw);
  t.equal(publicText(null), null);
});

t.test('configured values are replaced however the message words them', async (t) => {
  const url = 'http://user:pass@127.0.0.1:7/feed.pb?token=SECRET#frag';
  t.equal(
    publicText(`poll failed: could not fetch ${url} (odd wording)`, { locations: [url] }),
    'poll failed: could not fetch http://127.0.0.1:7/feed.pb (odd wording)',
  );
  const file = 'file:///srv/private%20dir/feed.pb';
  t.equal(
    publicText('cannot open /srv/private dir/feed.pb now', { locations: [file] }),
    `cannot open ${LOCAL_FILE} now`,
  );
  t.equal(
    publicText('source gtfs/metro.zip is busy', { locations: ['gtfs/metro.zip'] }),
    `source ${LOCAL_FILE} is busy`,
  );
  t.equal(
    publicText('server said: bad key Bearer abc/def+123', { values: ['Bearer abc/def+123'] }),
    'server said: bad key (hidden)',
  );
  t.notMatch(publicText(`x ${url} y`), /SECRET|pass|frag/, 'the generic rules alone drop them too');
});
