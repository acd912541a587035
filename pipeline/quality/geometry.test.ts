import t from 'tap';
import type { ScheduleIndex, ScheduledStop } from '../../core/ports.ts';
import { AREA_BUFFER_M, inBox, nearShape, scheduleArea } from './geometry.ts';

const line = (points: [number, number][]) => ({
  lat: Float32Array.from(points.map((p) => p[0])),
  lon: Float32Array.from(points.map((p) => p[1])),
});

t.test('nearShape: within 200 m of any segment, not just of a point', async (t) => {
  // a straight line north along -122.0, 11 km long, one point per 10 m (many chunks)
  const points = Array.from({ length: 1_000 }, (_, i): [number, number] => [37 + i * 0.0001, -122]);
  const shape = line(points);
  t.ok(nearShape(shape, 37.05, -122), 'on it');
  t.ok(nearShape(shape, 37.05, -122 + 0.002), '~180 m east');
  t.notOk(nearShape(shape, 37.05, -122 + 0.0025), '~220 m east');
  t.notOk(nearShape(shape, 36.99, -122), '~1.1 km south of its start');
  t.ok(
    nearShape(
      line([
        [37, -122],
        [37.1, -122],
      ]),
      37.05,
      -121.999,
    ),
    'the middle of one long segment',
  );
  t.ok(nearShape(line([[37, -122]]), 37.001, -122), 'a one-point shape: the distance to it');
  t.notOk(nearShape(line([[37, -122]]), 37.01, -122));
});

t.test('scheduleArea: the stops box plus a mile, cached per schedule; none without stops', async (t) => {
  let calls = 0;
  const stops: ScheduledStop[] = [
    { stop_id: 'a', name: null, lat: 37.0, lon: -122.0, station_id: 'a' },
    { stop_id: 'b', name: null, lat: 37.5, lon: -121.5, station_id: 'b' },
    { stop_id: 'c', name: null, lat: null, lon: null, station_id: 'c' },
    { stop_id: 'z', name: null, lat: 0, lon: 0, station_id: 'z' },
  ];
  const schedule = {
    stops: () => {
      calls++;
      return stops;
    },
  } as unknown as ScheduleIndex;
  const box = scheduleArea(schedule)!;
  t.ok(inBox(box, 37.2, -121.8));
  t.ok(inBox(box, 37.0 - (AREA_BUFFER_M - 100) / 111_320, -122), 'within the buffer');
  t.notOk(inBox(box, 37.0 - (AREA_BUFFER_M + 100) / 111_320, -122), 'past it');
  t.notOk(inBox(box, 0.001, 0.001), 'null island is no stop');
  scheduleArea(schedule);
  t.equal(calls, 1, 'computed once');
  t.equal(scheduleArea({} as ScheduleIndex), null);
});
