// The strict exposition parser the metrics tests rely on: it must refuse what Prometheus refuses.
import t from 'tap';
import { ExpositionError, parsePrometheusText, sampleValue } from './prometheus-text.ts';

const GOOD = `# HELP http_requests_total Requests, by "route" and status.
# TYPE http_requests_total counter
http_requests_total{route="listAlerts",status="200"} 3
http_requests_total{route="a\\\\b \\"q\\"\\n",status="404"} 1 1700000000000
# a comment
# TYPE lat histogram
lat_bucket{le="0.1"} 1
lat_bucket{le="1"} 2
lat_bucket{le="+Inf"} 3
lat_sum 2.5
lat_count 3
# TYPE up gauge
up NaN
temp -Inf
`;

t.test('a valid exposition', async (t) => {
  const f = parsePrometheusText(GOOD);
  t.equal(f.get('http_requests_total')?.type, 'counter');
  t.equal(f.get('http_requests_total')?.help, 'Requests, by "route" and status.');
  t.equal(sampleValue(f, 'http_requests_total', { route: 'listAlerts' }), 3);
  t.equal(sampleValue(f, 'http_requests_total', { route: 'a\\b "q"\n' }), 1, 'escapes decoded');
  t.equal(f.get('http_requests_total')?.samples[1]?.timestampMs, 1_700_000_000_000);
  t.equal(f.get('lat')?.samples.length, 5, 'histogram samples grouped under the family');
  t.ok(Number.isNaN(sampleValue(f, 'up')!));
  t.equal(f.get('temp')?.type, 'untyped');
  t.equal(
    sampleValue(parsePrometheusText('x Nan\ny +inf\n'), 'y'),
    Number.POSITIVE_INFINITY,
    "Go's ParseFloat spellings",
  );
  t.same([...parsePrometheusText('').keys()], []);
});

const BAD: Array<[string, string, RegExp]> = [
  ['no final line feed', 'x 1', /end with a line feed/],
  ['bad metric name', '1x 1\n', /must start with a metric name/],
  ['bad label name', 'x{1a="b"} 1\n', /bad label name/],
  ['reserved label name', 'x{__name__="b"} 1\n', /reserved/],
  ['unquoted label value', 'x{a=b} 1\n', /must be quoted/],
  ['bad escape', 'x{a="\\t"} 1\n', /bad escape/],
  ['unterminated value', 'x{a="b} 1\n', /unterminated|expected/],
  ['label twice', 'x{a="1",a="2"} 1\n', /given twice/],
  ['not a number', 'x 1,5\n', /not a number/],
  ['no value', 'x{a="1"}\n', /expected a value/],
  ['duplicate series', 'x{a="1"} 1\nx{a="1"} 2\n', /duplicate series/],
  ['TYPE after samples', 'x 1\n# TYPE x gauge\n', /TYPE for x after its samples/],
  ['unknown type', '# TYPE x meter\n', /unknown type/],
  ['second HELP', '# HELP x a\n# HELP x b\n', /second HELP/],
  ['split family', 'x{a="1"} 1\ny 1\nx{a="2"} 1\n', /not together/],
  ['negative counter', '# TYPE x counter\nx -1\n', /counter x\{\} is -1/],
  ['suffixed sample in a counter', '# TYPE x counter\nx_sum 1\nx 2\n', /x_sum in counter family x|not together/],
  ['histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /no le="\+Inf"/],
  ['histogram +Inf not count', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n', /is not _count/],
  [
    'histogram not cumulative',
    '# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n',
    /not cumulative/,
  ],
  ['histogram without _sum', '# TYPE h histogram\nh_bucket{le="+Inf"} 1\nh_count 1\n', /_sum or _count missing/],
  ['bucket without le', '# TYPE h histogram\nh_bucket 1\nh_sum 1\nh_count 1\n', /without an le label/],
];

for (const [what, text, message] of BAD) {
  t.test(`refused: ${what}`, async (t) => {
    t.throws(() => parsePrometheusText(text), message);
    try {
      parsePrometheusText(text);
    } catch (err) {
      t.type(err, ExpositionError);
    }
  });
}
