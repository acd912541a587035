// Lua run inside Redis: each script is atomic there, which is what makes a count shared by every
// node exact (no read-modify-write race between edges).

/**
 * One key's exact 5-minute window as a list of accepted request times (ms), oldest first, at
 * most the quota long: the in-process SlidingWindowLimiter's ring, kept in Redis. One call per
 * request: the first shared limiter, kept for bench/broker's Redis–NATS comparison; the limiter
 * now spends leases (REDIS_LEASES_LUA).
 * KEYS[1] the list; ARGV: nowMs (0: Redis's own clock, the one every node shares), windowMs,
 * quota, 'take' | 'peek'. Returns {takenAtMs or -1, count, oldestMs or -1, nowMs}.
 */
export const REDIS_WINDOW_LUA = `
local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local win = tonumber(ARGV[2])
local quota = tonumber(ARGV[3])
local horizon = now - win
while true do
  local oldest = redis.call('LINDEX', KEYS[1], 0)
  if not oldest or tonumber(oldest) > horizon then break end
  redis.call('LPOP', KEYS[1])
end
local count = redis.call('LLEN', KEYS[1])
local taken = -1
if ARGV[4] == 'take' and count < quota then
  local newest = redis.call('LINDEX', KEYS[1], -1)
  local stamp = now
  -- a clock stepping back must not break the order the trimming relies on
  if newest and tonumber(newest) > stamp then stamp = tonumber(newest) end
  redis.call('RPUSH', KEYS[1], stamp)
  redis.call('PEXPIRE', KEYS[1], win)
  count = count + 1
  taken = stamp
end
local oldest = redis.call('LINDEX', KEYS[1], 0)
return {taken, count, oldest and tonumber(oldest) or -1, now}
`;

/**
 * The shared windows as leases (broker/limiter.ts): one call carries every operation an edge has
 * for one event-loop turn, on any number of rate-limit keys. Each key is a sorted set (grant id →
 * the instant its requests count as made) and a hash (grant id → how many requests, '#' → their
 * sum), trimmed of grants older than the window before each key's first operation.
 * KEYS: per rate-limit key its sorted set then its hash. ARGV: nowMs (0: Redis's own clock, the one
 * every node shares), windowMs, leaseMs, then 6 values per operation: key number (1-based), kind,
 * grant id, a, b, c:
 *   g  grant a lease: a = quota, b = wanted, c = needed now. Grants at most a quarter of what is
 *      left beyond what is needed, never past the quota; counted as made at now + leaseMs (the
 *      last instant the edge may spend it) until the edge says otherwise.
 *   f  finalize a grant: a = requests it served (0 removes it), b = the instant of its last one
 *      (broker clock). Setting, so sending it twice is harmless; a grant already gone is left gone.
 *   m  merge requests served without the broker: a = count, b = ms since the last one. Setting too.
 *   p  peek.
 * Returns {nowMs, then per operation: granted, total counted, oldest instant or -1}.
 */
export const REDIS_LEASES_LUA = `
local now = tonumber(ARGV[1])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local win = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local horizon = now - win
local trimmed = {}
local out = {now}
for i = 4, #ARGV, 6 do
  local k = tonumber(ARGV[i])
  local z = KEYS[k * 2 - 1]
  local h = KEYS[k * 2]
  if not trimmed[k] then
    trimmed[k] = true
    local old = redis.call('ZRANGEBYSCORE', z, '-inf', horizon)
    if #old > 0 then
      local gone = 0
      for j = 1, #old do
        gone = gone + tonumber(redis.call('HGET', h, old[j]) or '0')
        redis.call('HDEL', h, old[j])
      end
      redis.call('ZREMRANGEBYSCORE', z, '-inf', horizon)
      redis.call('HINCRBY', h, '#', -gone)
    end
  end
  local kind = ARGV[i + 1]
  local id = ARGV[i + 2]
  local a = tonumber(ARGV[i + 3])
  local b = tonumber(ARGV[i + 4])
  local c = tonumber(ARGV[i + 5])
  local total = tonumber(redis.call('HGET', h, '#') or '0')
  local granted = 0
  local changed = false
  if kind == 'g' then
    local room = a - total
    if room > 0 then
      granted = math.min(b, math.floor(room / 4))
      if granted < c then granted = c end
      if granted > room then granted = room end
    end
    if granted > 0 then
      redis.call('ZADD', z, now + lease, id)
      redis.call('HSET', h, id, granted)
      total = redis.call('HINCRBY', h, '#', granted)
      changed = true
    end
  elseif kind == 'f' or kind == 'm' then
    local old = redis.call('HGET', h, id)
    if old or kind == 'm' then
      if a > 0 then
        redis.call('HSET', h, id, a)
        if kind == 'f' then redis.call('ZADD', z, b, id) else redis.call('ZADD', z, now - b, id) end
      else
        redis.call('HDEL', h, id)
        redis.call('ZREM', z, id)
      end
      total = redis.call('HINCRBY', h, '#', a - tonumber(old or '0'))
      changed = true
    end
  end
  if changed then
    redis.call('PEXPIRE', z, win + lease)
    redis.call('PEXPIRE', h, win + lease)
  end
  local first = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
  out[#out + 1] = granted
  out[#out + 1] = total
  out[#out + 1] = first[2] and tonumber(first[2]) or -1
end
return out
`;
