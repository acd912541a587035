import t from 'tap';
import { modeForRouteType } from './route-type.ts';

t.test('route_type → mode', async (t) => {
  const cases: [number, string | null][] = [
    [0, 'streetcar'],
    [900, 'streetcar'],
    [906, 'streetcar'],
    [907, null],
    [1, 'rail'],
    [2, 'rail'],
    [100, 'rail'],
    [109, 'rail'],
    [117, 'rail'],
    [118, null],
    [400, 'rail'],
    [405, 'rail'],
    [3, 'bus'],
    [200, 'bus'],
    [209, 'bus'],
    [700, 'bus'],
    [715, 'bus'],
    [716, 'bus'],
    [717, null],
    [11, 'bus'],
    [800, 'bus'],
    [12, 'rail'],
    [801, null],
    [4, null],
    [5, null],
    [7, null],
    [1000, null],
    [1100, null],
    [-1, null],
  ];
  for (const [type, mode] of cases) t.equal(modeForRouteType(type), mode, `route_type ${type}`);
});

t.test('a missing or non-integer route_type has no mode', async (t) => {
  t.equal(modeForRouteType(null), null);
  t.equal(modeForRouteType(undefined), null);
  t.equal(modeForRouteType(2.5), null);
  t.equal(modeForRouteType(Number.NaN), null);
});
