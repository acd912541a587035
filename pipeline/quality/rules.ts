// Every feed rule we check, as data: MobilityData's gtfs-realtime-validator ids and titles
// (github.com/MobilityData/gtfs-realtime-validator, RULES.md), our own words for what a finding
// means for the data we serve, and what the pipeline does with the entity. The checks are in the
// other files of this folder; docs/guides/feed-quality.md is written from this table.

export const SEVERITIES = ['error', 'warning'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * What the pipeline does with an entity a rule fired on, under today's normalization rules (a
 * finding never changes it): `kept` stored and served as sent; `counted` stored and served, and
 * the problem also shows in a figure the service already had (a reject reason read back, the
 * schedule match rate, freshness); `rejected` not stored, counted under a reject reason.
 */
export const HANDLINGS = ['kept', 'counted', 'rejected'] as const;
export type Handling = (typeof HANDLINGS)[number];

/** What a rule needs besides the snapshot itself; without it the rule is not evaluated. */
export type RuleNeed = 'schedule' | 'previous' | 'clock';

export interface RuleSpec {
  id: string;
  severity: Severity;
  /** the validator's title (ours for the T rules) */
  title: string;
  /** what the finding means for the data the service serves, in our words */
  meaning: string;
  handling: Handling;
  /** what happens to the entity, in one sentence */
  effect: string;
  /**
   * A finding of this rule in a feed's last snapshot makes its data unusable as served: the feed
   * shows `degraded` on /status. Every other finding is counted and explained, and a feed whose
   * only problem is findings stays `operational`.
   */
  unusable: boolean;
  needs: RuleNeed | null;
}

const rule = (spec: RuleSpec): RuleSpec => Object.freeze(spec);

export const RULES = [
  rule({
    id: 'T001',
    severity: 'error',
    title: 'Not a GTFS-Realtime message',
    meaning:
      'The body is not a FeedMessage: an HTML or JSON page, base64 text, a body cut short, a gzip of something else. Nothing in it can be read.',
    handling: 'rejected',
    effect: 'The poll fails (decode_error) and nothing is stored; the feed keeps its previous data until it expires.',
    unusable: true,
    needs: null,
  }),
  rule({
    id: 'E001',
    severity: 'error',
    title: 'Not in POSIX time',
    meaning:
      'A timestamp or time is not seconds since 1970 (before 2005 or after 2100): usually milliseconds. Times off by a factor of 1,000 place predictions and positions in another millennium.',
    handling: 'counted',
    effect:
      'Header, vehicle and trip update timestamps in milliseconds are read back (header_timestamp_ms); stop time event times are stored as sent.',
    unusable: true,
    needs: null,
  }),
  rule({
    id: 'E002',
    severity: 'error',
    title: 'stop_time_updates not strictly sorted',
    meaning:
      "A trip's updates do not follow its stop order (by stop_sequence, or the schedule's order of their stop_ids). A repeat of the update just before is E036 instead.",
    handling: 'kept',
    effect: 'Each update is placed on its scheduled stop by stop_sequence (or stop_id), whatever its position.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E003',
    severity: 'error',
    title: 'GTFS-rt trip_id does not exist in GTFS data',
    meaning:
      'A trip the schedule does not have (and not marked ADDED or NEW): its stops cannot be given scheduled times, so delays are unknown unless trip matching finds it another way (NYCT ids, start time).',
    handling: 'counted',
    effect:
      'Stored as an unscheduled trip (in_schedule false) unless trip matching resolves it; counted in the match rate.',
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E004',
    severity: 'error',
    title: 'GTFS-rt route_id does not exist in GTFS data',
    meaning:
      'A route the schedule does not have: its mode and line come from feeds[].mode or feeds[].route_aliases, or stay unknown.',
    handling: 'kept',
    effect: 'Stored with the route id as sent.',
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E011',
    severity: 'error',
    title: 'GTFS-rt stop_id does not exist in GTFS data',
    meaning: 'A stop the schedule does not have: no name, no station, no coordinates for it.',
    handling: 'kept',
    effect: 'Stored with the stop id as sent; its station is the stop id itself.',
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E012',
    severity: 'error',
    title: 'Header timestamp should be greater than or equal to all other timestamps',
    meaning: 'An entity says it was measured after the feed was made: one of the two clocks is wrong.',
    handling: 'kept',
    effect: "Stored with the entity's own timestamp.",
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E016',
    severity: 'error',
    title: 'trip_ids with schedule_relationship ADDED must not be in GTFS data',
    meaning: 'A trip marked as added outside the schedule has a scheduled trip id: either the mark or the id is wrong.',
    handling: 'kept',
    effect: 'Stored as the feed marks it (added).',
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E017',
    severity: 'error',
    title: 'GTFS-rt content changed but has the same header timestamp',
    meaning:
      'Two different bodies carry the same header time: usually several servers behind a load balancer, each with its own copy. Freshness cannot tell the newer one.',
    handling: 'kept',
    effect: 'Stored as a new snapshot (its hash differs).',
    unusable: false,
    needs: 'previous',
  }),
  rule({
    id: 'E018',
    severity: 'error',
    title: 'GTFS-rt header timestamp decreased between two sequential iterations',
    meaning:
      'The feed went back in time: this body is older than one already received, so the live data just went back to an older state.',
    handling: 'kept',
    effect: 'Stored, and it replaces the newer snapshot in the live state.',
    unusable: true,
    needs: 'previous',
  }),
  rule({
    id: 'E020',
    severity: 'error',
    title: 'Invalid start_time format',
    meaning:
      'A trip start time is not HH:MM:SS (H:MM:SS and hours past 24 allowed): trip matching by start time cannot use it.',
    handling: 'kept',
    effect: 'The trip is matched by its id alone.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E021',
    severity: 'error',
    title: 'Invalid start_date format',
    meaning: 'A trip start date is not a real YYYYMMDD date: the service day comes from the feed time instead.',
    handling: 'kept',
    effect: "The trip's service date is taken from the snapshot's time.",
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E022',
    severity: 'error',
    title: 'Sequential stop_time_update times are not increasing',
    meaning: 'A stop is predicted at or before the stop before it: the trip would travel back in time.',
    handling: 'kept',
    effect: 'Each prediction is stored as sent (one finding per update).',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E024',
    severity: 'error',
    title: 'trip direction_id does not match GTFS data',
    meaning: "The trip's direction differs from the schedule's: direction filters may show it on the wrong side.",
    handling: 'kept',
    effect: "Stored with the schedule's direction when the trip is matched.",
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E025',
    severity: 'error',
    title: 'stop_time_update departure time is before arrival time',
    meaning: 'A vehicle is predicted to leave a stop before it arrives there.',
    handling: 'kept',
    effect: 'The arrival time is used for the stop (departure when there is no arrival).',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E026',
    severity: 'error',
    title: 'Invalid vehicle position',
    meaning: 'Latitude outside ±90 or longitude outside ±180 (or one of them missing): the position is not on Earth.',
    handling: 'rejected',
    effect:
      'The vehicle is rejected (lat_lon_out_of_range), or placed at its stop when the position lacks a coordinate.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E027',
    severity: 'error',
    title: 'Invalid vehicle bearing',
    meaning: 'A bearing outside 0–360 degrees: map arrows point nowhere meaningful.',
    handling: 'kept',
    effect: 'Stored as sent.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E028',
    severity: 'error',
    title: 'Vehicle position outside agency coverage area',
    meaning:
      "A vehicle more than 1,609 m (a mile) outside the box around the schedule's stops: a swapped latitude and longitude, a test vehicle, a GPS without a fix.",
    handling: 'kept',
    effect: 'Stored and served where the feed puts it.',
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E029',
    severity: 'error',
    title: 'Vehicle position far from trip shape',
    meaning:
      "A vehicle more than 200 m from its trip's shape (shapes.txt), with no DETOUR alert for the trip or route in the same feed: a wrong trip assignment, or a detour not announced.",
    handling: 'kept',
    effect: 'Stored with its trip as the feed assigns it.',
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E032',
    severity: 'error',
    title: 'Alert does not have an informed_entity',
    meaning: 'An alert that names nothing it applies to: it cannot be filtered by mode, route or stop.',
    handling: 'kept',
    effect: 'Stored; it reaches clients that ask for every alert.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E033',
    severity: 'error',
    title: 'Alert informed_entity does not have any specifiers',
    meaning: 'An informed entity with no agency, route, route type, trip or stop: it selects nothing.',
    handling: 'kept',
    effect: 'Stored; the empty selector is ignored when the alert is filtered.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E035',
    severity: 'error',
    title: 'GTFS-rt trip.trip_id does not belong to GTFS-rt trip.route_id in GTFS trips.txt',
    meaning: 'The trip and the route it names disagree with the schedule: one of the two ids is wrong.',
    handling: 'kept',
    effect: "The schedule's route of the trip is used once the trip is matched.",
    unusable: false,
    needs: 'schedule',
  }),
  rule({
    id: 'E036',
    severity: 'error',
    title: 'Sequential stop_time_updates have the same stop_sequence',
    meaning: 'The same stop of a trip is predicted twice in a row, possibly with different times.',
    handling: 'rejected',
    effect:
      'The second update is rejected (duplicate_stop_time) on a scheduled trip, or when it repeats the stop_id too.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E037',
    severity: 'error',
    title: 'Sequential stop_time_updates have the same stop_id',
    meaning: 'Two updates in a row name the same stop: a repeated row, unless the trip loops back to it.',
    handling: 'kept',
    effect: 'Each is placed by its stop_sequence, or on the next scheduled visit of the stop.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E038',
    severity: 'error',
    title: 'Invalid header.gtfs_realtime_version',
    meaning: 'The header names a version other than 1.0 or 2.0: consumers may read its fields differently.',
    handling: 'kept',
    effect: 'Read as the current version.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E039',
    severity: 'error',
    title: 'FULL_DATASET feeds should not include entity.is_deleted',
    meaning: 'A full snapshot carries deletion marks, which only mean something in a differential feed.',
    handling: 'kept',
    effect: 'Entities marked deleted are left out, as absent from the snapshot.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E040',
    severity: 'error',
    title: "stop_time_update doesn't contain stop_id or stop_sequence",
    meaning: 'An update that does not say which stop it is for.',
    handling: 'rejected',
    effect: 'The update is rejected (missing_stop).',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E041',
    severity: 'error',
    title: "trip doesn't have any stop_time_updates",
    meaning:
      'A trip update with no stop updates, not canceled or deleted and without a trip-wide delay: it predicts nothing.',
    handling: 'kept',
    effect: 'The trip is stored as observed, with no arrival rows.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E042',
    severity: 'error',
    title: 'arrival or departure provided for NO_DATA stop_time_update',
    meaning: 'An update says it has no data and gives times anyway: which one is true is unclear.',
    handling: 'kept',
    effect: 'NO_DATA wins: the times are ignored and the stop gets no prediction.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E043',
    severity: 'error',
    title: "stop_time_update doesn't have arrival or departure",
    meaning: 'A scheduled stop update without any time: it predicts nothing for its stop.',
    handling: 'kept',
    effect: 'The stop takes the delay carried from the stop before, if any.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E044',
    severity: 'error',
    title: "stop_time_update arrival/departure doesn't have delay or time",
    meaning: 'An arrival or departure given empty: neither a time nor a delay.',
    handling: 'kept',
    effect: 'The empty event is ignored; the other one (or the carried delay) is used.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E048',
    severity: 'error',
    title: 'header timestamp not populated (GTFS-rt v2.0 and higher)',
    meaning: "A version 2 feed without a header time: the feed's age cannot be read from it.",
    handling: 'counted',
    effect: 'Freshness counts from when the body last changed instead.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E049',
    severity: 'error',
    title: 'header incrementality not populated (GTFS-rt v2.0 and higher)',
    meaning: 'A version 2 feed that does not say whether it is a full snapshot.',
    handling: 'kept',
    effect: 'Read as a full dataset.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'E050',
    severity: 'error',
    title: 'timestamp is in the future',
    meaning: "A time more than 60 s ahead of this server's clock: the producer's clock (or ours) is off.",
    handling: 'counted',
    effect: 'Kept up to freshness.max_future_s ahead; beyond it rejected (timestamp_future).',
    unusable: false,
    needs: 'clock',
  }),
  rule({
    id: 'E052',
    severity: 'error',
    title: 'vehicle.id is not unique',
    meaning: 'Two vehicles of one snapshot carry the same id: a map shows one where there are two.',
    handling: 'rejected',
    effect: 'The first is kept, the next ones are rejected (duplicate_entity).',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'W001',
    severity: 'warning',
    title: 'timestamp not populated',
    meaning: 'A vehicle or trip update (or a version 1 header) without its own time: its age is the snapshot’s.',
    handling: 'kept',
    effect: "The entity takes the header's time (or the poll's).",
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'W002',
    severity: 'warning',
    title: 'vehicle_id not populated',
    meaning: 'A vehicle or trip update without a vehicle id: predictions cannot be tied to a vehicle.',
    handling: 'kept',
    effect: 'The vehicle is named by its label, its NYCT train id or its entity id.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'W004',
    severity: 'warning',
    title: 'vehicle speed is unrealistic',
    meaning: 'A speed above 26 m/s (about 60 mph) or below 0: often miles or kilometres per hour sent as m/s.',
    handling: 'kept',
    effect: 'Stored as sent.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'W006',
    severity: 'warning',
    title: 'trip missing trip_id',
    meaning:
      'A trip named only by route, direction and start time: it is found only if exactly one scheduled trip fits.',
    handling: 'counted',
    effect: 'Matched by route and start time (trip matching, `start`); unmatched otherwise.',
    unusable: false,
    needs: null,
  }),
  rule({
    id: 'W007',
    severity: 'warning',
    title: 'Refresh interval is more than 35 seconds',
    meaning:
      'The header time advanced by more than 35 s between two snapshots received one after the other: the feed is refreshed slowly. Not evaluated when feeds[].interval_s is over 35 s, or after a failed poll.',
    handling: 'kept',
    effect: 'Stored; the data is as old as the feed says.',
    unusable: false,
    needs: 'previous',
  }),
  rule({
    id: 'W008',
    severity: 'warning',
    title: 'Header timestamp is older than 65 seconds',
    meaning: 'The snapshot was more than 65 s old when received: every vehicle on the map is at least that late.',
    handling: 'counted',
    effect: 'Stored; freshness turns stale after freshness.stale_after_s.',
    unusable: false,
    needs: 'clock',
  }),
  rule({
    id: 'W009',
    severity: 'warning',
    title: 'schedule_relationship not populated',
    meaning: 'A trip (or one of its stop updates) does not say whether it runs as scheduled, added or canceled.',
    handling: 'kept',
    effect: 'Read as SCHEDULED.',
    unusable: false,
    needs: null,
  }),
] as const satisfies readonly RuleSpec[];

export type RuleId = (typeof RULES)[number]['id'];
export const RULE_IDS = RULES.map((r) => r.id) as readonly RuleId[];

const BY_ID = new Map<string, RuleSpec>(RULES.map((r) => [r.id, r]));
/** Position of each rule in RULES, for tallies kept in arrays. */
export const RULE_INDEX = new Map<string, number>(RULES.map((r, i) => [r.id, i]));

export function ruleSpec(id: string): RuleSpec | undefined {
  return BY_ID.get(id);
}

/** The validator's rules we do not check, and why: the guide lists them. */
export const NOT_CHECKED: readonly { ids: string; why: string }[] = [
  { ids: 'E006, E013, E019, W005', why: 'frequency-based trips (frequencies.txt) are not loaded with the schedule' },
  {
    ids: 'E009, E045, E046, E051',
    why: "the updates' fit to each trip's scheduled stop list is what trip matching and arrivals already resolve",
  },
  { ids: 'E010, E015', why: 'stop location_type is not loaded with the schedule' },
  { ids: 'E023', why: 'trip start times are compared with the schedule by trip matching (`start`)' },
  { ids: 'E030, E031, E034', why: "alert selectors' agency and trip-to-route checks are not implemented yet" },
  { ids: 'E047, W003', why: 'they compare two feeds; each feed is checked on its own' },
];
