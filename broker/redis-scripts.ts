// Lua run inside Redis: each script is atomic there, which is what makes a count shared by every
// node exact (no read-modify-write race between edges).

/**
 * One key's exact 5-minute window as a list of accepted request times (ms), oldest first, at
 * most the quota long: the in-process SlidingWindowLimiter's ring, kept in Redis.
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

/** Gives back one accepted request (a 304): removes one entry equal to ARGV[1], newest first. */
export const REDIS_REFUND_LUA = `
return redis.call('LREM', KEYS[1], -1, ARGV[1])
`;
