// Values by service date, then trip id: what change-only history looks a poll's trips up in. A
// trip observation names its trip by the two, and a poll brings thousands: nested maps need no
// joined key string built and hashed per row, and a poll's rows share one or two dates, so the
// date's own map is remembered from one lookup to the next.

export class TripIndex<V> {
  private readonly dates = new Map<string, Map<string, V>>();
  private lastDate: string | null = null;
  private lastTrips: Map<string, V> | null = null;

  get(serviceDate: string, tripId: string): V | undefined {
    return this.tripsOn(serviceDate)?.get(tripId);
  }

  set(serviceDate: string, tripId: string, value: V): void {
    let trips = this.tripsOn(serviceDate);
    if (!trips) {
      trips = new Map();
      this.dates.set(serviceDate, trips);
      this.lastDate = serviceDate;
      this.lastTrips = trips;
    }
    trips.set(tripId, value);
  }

  delete(serviceDate: string, tripId: string): void {
    const trips = this.tripsOn(serviceDate);
    if (!trips?.delete(tripId) || trips.size > 0) return;
    this.dates.delete(serviceDate);
    this.lastDate = null;
    this.lastTrips = null;
  }

  private tripsOn(serviceDate: string): Map<string, V> | undefined {
    if (serviceDate === this.lastDate) return this.lastTrips!;
    const trips = this.dates.get(serviceDate);
    if (trips) {
      this.lastDate = serviceDate;
      this.lastTrips = trips;
    }
    return trips;
  }
}
