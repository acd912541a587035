// The schedule's coverage area (E028) and the distance of a vehicle to its trip's shape (E029),
// both derived once per loaded schedule or shape and cached on it.
import type { ScheduleIndex, ShapeLine } from '../../core/ports.ts';

/** The validator's buffers: a mile around the stops' box, 200 m around a trip's shape. */
export const AREA_BUFFER_M = 1_609;
export const SHAPE_BUFFER_M = 200;
const M_PER_DEG = 111_320;

export interface GeoBox {
  minLat: number;
  maxLat: number;
  minLon: number;
  maxLon: number;
}

const areas = new WeakMap<ScheduleIndex, GeoBox | null>();

/** The box around every located stop, grown by AREA_BUFFER_M; null when the schedule cannot list stops. */
export function scheduleArea(schedule: ScheduleIndex): GeoBox | null {
  const cached = areas.get(schedule);
  if (cached !== undefined) return cached;
  let box: GeoBox | null = null;
  for (const stop of schedule.stops?.() ?? []) {
    const { lat, lon } = stop;
    if (lat === null || lon === null || !validPosition(lat, lon) || (lat === 0 && lon === 0)) continue;
    if (!box) box = { minLat: lat, maxLat: lat, minLon: lon, maxLon: lon };
    else {
      if (lat < box.minLat) box.minLat = lat;
      if (lat > box.maxLat) box.maxLat = lat;
      if (lon < box.minLon) box.minLon = lon;
      if (lon > box.maxLon) box.maxLon = lon;
    }
  }
  if (box) {
    const dLat = AREA_BUFFER_M / M_PER_DEG;
    const cos = Math.max(0.01, Math.cos((Math.max(Math.abs(box.minLat), Math.abs(box.maxLat)) * Math.PI) / 180));
    const dLon = AREA_BUFFER_M / (M_PER_DEG * cos);
    box = {
      minLat: box.minLat - dLat,
      maxLat: box.maxLat + dLat,
      minLon: box.minLon - dLon,
      maxLon: box.maxLon + dLon,
    };
  }
  areas.set(schedule, box);
  return box;
}

/** WGS-84 bounds, NaN excluded. */
export const validPosition = (lat: number, lon: number): boolean =>
  lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180;

export const inBox = (box: GeoBox, lat: number, lon: number): boolean =>
  lat >= box.minLat && lat <= box.maxLat && lon >= box.minLon && lon <= box.maxLon;

/** Shape points per chunk: a vehicle is measured against the few chunks whose box it lies near. */
const CHUNK = 32;
/** Per shape, each chunk's box (minLat, maxLat, minLon, maxLon), built on the shape's first vehicle. */
const chunkBoxes = new WeakMap<ShapeLine, Float64Array>();

function boxesOf(shape: ShapeLine): Float64Array {
  let boxes = chunkBoxes.get(shape);
  if (boxes) return boxes;
  const n = shape.lat.length;
  const chunks = Math.max(1, Math.ceil((n - 1) / CHUNK));
  boxes = new Float64Array(chunks * 4);
  for (let c = 0; c < chunks; c++) {
    const from = c * CHUNK;
    const to = Math.min(n - 1, from + CHUNK);
    let minLat = Infinity;
    let maxLat = -Infinity;
    let minLon = Infinity;
    let maxLon = -Infinity;
    for (let i = from; i <= to; i++) {
      const lat = shape.lat[i]!;
      const lon = shape.lon[i]!;
      if (lat < minLat) minLat = lat;
      if (lat > maxLat) maxLat = lat;
      if (lon < minLon) minLon = lon;
      if (lon > maxLon) maxLon = lon;
    }
    boxes.set([minLat, maxLat, minLon, maxLon], c * 4);
  }
  chunkBoxes.set(shape, boxes);
  return boxes;
}

/**
 * Whether the point lies within `meters` of the shape's line. Distances on a local flat projection
 * around the point: exact enough at a few hundred metres, and no trigonometry per segment.
 */
export function nearShape(shape: ShapeLine, lat: number, lon: number, meters: number = SHAPE_BUFFER_M): boolean {
  const n = shape.lat.length;
  if (n === 0) return true;
  const kx = M_PER_DEG * Math.cos((lat * Math.PI) / 180);
  const ky = M_PER_DEG;
  const limit2 = meters * meters;
  if (n === 1) {
    const dx = (shape.lon[0]! - lon) * kx;
    const dy = (shape.lat[0]! - lat) * ky;
    return dx * dx + dy * dy <= limit2;
  }
  const boxes = boxesOf(shape);
  const dLat = meters / ky;
  const dLon = meters / Math.max(1, kx);
  for (let c = 0; c * 4 < boxes.length; c++) {
    const b = c * 4;
    if (
      lat < boxes[b]! - dLat ||
      lat > boxes[b + 1]! + dLat ||
      lon < boxes[b + 2]! - dLon ||
      lon > boxes[b + 3]! + dLon
    )
      continue;
    const from = c * CHUNK;
    const to = Math.min(n - 1, from + CHUNK);
    for (let i = from; i < to; i++) {
      const ax = (shape.lon[i]! - lon) * kx;
      const ay = (shape.lat[i]! - lat) * ky;
      const bx = (shape.lon[i + 1]! - lon) * kx;
      const by = (shape.lat[i + 1]! - lat) * ky;
      if (segmentDistance2(ax, ay, bx, by) <= limit2) return true;
    }
  }
  return false;
}

/** Squared distance from the origin to the segment a–b. */
function segmentDistance2(ax: number, ay: number, bx: number, by: number): number {
  const ex = bx - ax;
  const ey = by - ay;
  const len2 = ex * ex + ey * ey;
  let t = len2 === 0 ? 0 : -(ax * ex + ay * ey) / len2;
  if (t < 0) t = 0;
  else if (t > 1) t = 1;
  const px = ax + t * ex;
  const py = ay + t * ey;
  return px * px + py * py;
}
