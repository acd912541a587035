import t from 'tap';
import { Router } from './router.ts';

t.test('static routes win over parameters; methods are told apart', async (t) => {
  const r = new Router<string>();
  r.add('GET', '/api/v1/bus/realtime', 'list');
  r.add('GET', '/api/v1/bus/{route_id}/realtime', 'one');
  r.add('GET', '/api/v1/bus/{route_id}/{what}', 'any');
  r.add('POST', '/api/v1/webhooks/endpoints', 'create');
  r.add('DELETE', '/api/v1/webhooks/endpoints/{id}', 'delete');
  t.same(r.match('GET', '/api/v1/bus/realtime'), { kind: 'found', route: 'list', params: {} });
  t.same(r.match('GET', '/api/v1/bus/39/realtime'), { kind: 'found', route: 'one', params: { route_id: '39' } });
  t.same(r.match('GET', '/api/v1/bus/39/reliability'), {
    kind: 'found',
    route: 'any',
    params: { route_id: '39', what: 'reliability' },
  });
  t.same(r.match('GET', '/api/v1/bus/Green%2FB/realtime'), {
    kind: 'found',
    route: 'one',
    params: { route_id: 'Green/B' },
  });
  t.same(r.match('GET', '/api/v1/bus/%E0%A4%A/realtime'), { kind: 'not_found' }, 'malformed escapes');
  t.same(r.match('GET', '/api/v1/bus//realtime'), { kind: 'not_found' }, 'empty parameter');
  t.same(r.match('GET', '/api/v1/webhooks/endpoints'), { kind: 'method_not_allowed', allow: ['POST'] });
  t.same(r.match('PUT', '/api/v1/webhooks/endpoints/abc'), { kind: 'method_not_allowed', allow: ['DELETE'] });
  t.same(r.match('GET', '/nothing'), { kind: 'not_found' });
  t.throws(() => r.add('GET', '/api/v1/bus/realtime', 'again'), /duplicate route/);
  t.throws(() => r.add('GET', '/api/v1/bus/{other}/realtime', 'again'), /duplicate route/);
  t.throws(() => r.add('GET', 'relative', 'x'), /must start with/);
});
