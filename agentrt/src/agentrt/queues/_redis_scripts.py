"""The Lua scripts of the Redis Streams backend (:mod:`agentrt.queues._redis_streams`).

Each one is a step that must be atomic: Redis runs a script with no other
command in between, so a completion records its effect, hands on the
downstream entries and acknowledges the delivery as one step, a failure
re-queues or dead-letters as one step, a claim moves a waiting entry
into the stream and reads it for one consumer before anyone else can, and
a claimed entry is marked running only if its effect is not recorded yet,
and the stages' figures are read from one state of the store.
"""

from __future__ import annotations

__all__ = ["COMPLETE", "FAIL", "PROMOTE", "START", "STATS"]

# KEYS: stream, effects, records, record, seq, jobcost, then per emit: waiting
# set, waiting entries, record. ARGV: group, id, effect key, result, now,
# emits, job, cost, then per emit: 8 fields (the last one the fairness
# group) and the required effect keys.
COMPLETE = """
local applied = redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[4])
if applied == 1 then
  redis.call('HINCRBYFLOAT', KEYS[6], ARGV[7], -tonumber(ARGV[8]))
  local i = 9
  for e = 1, tonumber(ARGV[6]) do
    local item, stage, job = ARGV[i], ARGV[i+1], ARGV[i+2]
    local payload, key, cost, nreq = ARGV[i+3], ARGV[i+4], ARGV[i+5], tonumber(ARGV[i+6])
    local fgroup = ARGV[i+7]
    i = i + 8
    local ok = true
    for r = 1, nreq do
      if redis.call('HEXISTS', KEYS[2], ARGV[i]) == 0 then ok = false end
      i = i + 1
    end
    if ok then
      local wk, wf, rk = KEYS[4 + 3 * e], KEYS[5 + 3 * e], KEYS[6 + 3 * e]
      local seq = redis.call('INCR', KEYS[5])
      redis.call('ZADD', wk, seq, seq)
      redis.call('HSET', wf, seq, cjson.encode({item=item, stage=stage, job=job, payload=payload,
                 key=key, cost=cost, prior='0', at=ARGV[5], group=fgroup}))
      redis.call('HINCRBYFLOAT', KEYS[6], job, tonumber(cost))
      redis.call('HSET', rk, 'item', item, 'stage', stage, 'job', job, 'state', 'queued',
                 'attempts', '0', 'queued_at', ARGV[5])
      redis.call('SADD', KEYS[3], rk)
    end
  end
  redis.call('HSET', KEYS[4], 'state', 'done', 'finished_at', ARGV[5])
  redis.call('HDEL', KEYS[4], 'error')
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return applied
"""

# KEYS: stream, record, dead stream, seq, waiting set, waiting entries, jobcost,
# dead counts. ARGV: group, id, consumer (or ''), error, now, max deliveries,
# attempt. Only the entry's current owner may fail it; a retry goes back to
# waiting; a dead letter counts in its stage's dead count (read by STATS).
# Returns {state, 1} when this call recorded the failure, else {the record's
# state, 0} (the entry was taken over, finished or failed already).
FAIL = """
if ARGV[3] ~= '' then
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1, ARGV[3])
  if #p == 0 then return {redis.call('HGET', KEYS[2], 'state') or 'done', 0} end
end
local rows = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if #rows == 0 then return {redis.call('HGET', KEYS[2], 'state') or 'done', 0} end
local f = rows[1][2]
local t = {}
for k = 1, #f, 2 do t[f[k]] = f[k + 1] end
t['prior'] = ARGV[7]
for k = 1, #f, 2 do if f[k] == 'prior' then f[k + 1] = ARGV[7] end end
if tonumber(ARGV[7]) >= tonumber(ARGV[6]) then
  redis.call('HINCRBYFLOAT', KEYS[7], t['job'], -tonumber(t['cost'] or '0'))
  table.insert(f, 'error'); table.insert(f, ARGV[4])
  redis.call('XADD', KEYS[3], '*', unpack(f))
  redis.call('HINCRBY', KEYS[8], t['stage'], 1)
  redis.call('HSET', KEYS[2], 'state', 'dead', 'attempts', ARGV[7], 'finished_at', ARGV[5],
             'error', ARGV[4])
  return {'dead', 1}
end
t['at'] = ARGV[5]
local seq = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[5], seq, seq)
redis.call('HSET', KEYS[6], seq, cjson.encode(t))
redis.call('HSET', KEYS[2], 'state', 'failed', 'finished_at', ARGV[5], 'error', ARGV[4])
return {'failed', 1}
"""

# KEYS: waiting set, waiting entries, stream, served, seq. ARGV: seq, group,
# consumer. Moves one waiting entry into the stream and reads it for the
# consumer in one step: nobody else can read it first. False when another
# claimer won. The same step gives the entry's fairness group the stage's
# next claim ticket, so the ticket says served exactly when the entry left
# the waiting set (an entry from before groups is in group '').
PROMOTE = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return false end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if not raw then return false end
local t = cjson.decode(raw)
redis.call('HSET', KEYS[4], t['group'] or '', redis.call('INCR', KEYS[5]))
local flat = {}
for k, v in pairs(t) do table.insert(flat, k); table.insert(flat, v) end
redis.pcall('XGROUP', 'CREATE', KEYS[3], ARGV[2], '0', 'MKSTREAM')
redis.call('XADD', KEYS[3], '*', unpack(flat))
return redis.call('XREADGROUP', 'GROUP', ARGV[2], ARGV[3], 'COUNT', '1', 'STREAMS', KEYS[3], '>')
"""

# KEYS: record, effects, stream. ARGV: effect key, attempt, now, group, id.
# A reclaim may take an entry whose first holder completes it before this
# runs: then the record must stay done and the entry goes (0); else the
# record says running (1). One step, so no completion lands in between.
START = """
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('XACK', KEYS[3], ARGV[4], ARGV[5])
  redis.call('XDEL', KEYS[3], ARGV[5])
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'running', 'attempts', ARGV[2], 'started_at', ARGV[3])
return 1
"""

# KEYS: dead counts, dead stream, then per stage: waiting set, waiting entries,
# stream. ARGV: the stages. Per stage: {queued, in flight, dead, the oldest
# live entry's enqueue time as written ('' when none)}. The dead counts are
# kept by FAIL; when they do not add up to the dead stream's length (a store
# from before them, a worker of an older version) they are counted again
# from the stream, once. Cost: O(stages + entries in flight) — the waiting
# set's oldest is its lowest seq; entries in flight are read to find theirs.
STATS = """
local total = redis.call('XLEN', KEYS[2])
local sum = 0
for _, n in ipairs(redis.call('HVALS', KEYS[1])) do sum = sum + tonumber(n) end
if sum ~= total then
  local counts = {}
  for _, row in ipairs(redis.call('XRANGE', KEYS[2], '-', '+')) do
    local f = row[2]
    for k = 1, #f, 2 do
      if f[k] == 'stage' then counts[f[k + 1]] = (counts[f[k + 1]] or 0) + 1 end
    end
  end
  redis.call('DEL', KEYS[1])
  for s, n in pairs(counts) do redis.call('HSET', KEYS[1], s, n) end
end
local out = {}
for i = 1, #ARGV do
  local w, wf, q = KEYS[3 * i], KEYS[3 * i + 1], KEYS[3 * i + 2]
  local oldest, raw = nil, ''
  local first = redis.call('ZRANGE', w, 0, 0)
  if #first > 0 then
    local entry = redis.call('HGET', wf, first[1])
    if entry then
      raw = tostring(cjson.decode(entry)['at'] or '')
      oldest = tonumber(raw)
    end
  end
  for _, row in ipairs(redis.call('XRANGE', q, '-', '+')) do
    local f = row[2]
    for k = 1, #f, 2 do
      if f[k] == 'at' then
        local at = tonumber(f[k + 1])
        if at and (oldest == nil or at < oldest) then oldest, raw = at, f[k + 1] end
      end
    end
  end
  if oldest == nil then raw = '' end
  table.insert(out, {redis.call('ZCARD', w), redis.call('XLEN', q),
                     tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0'), raw})
end
return out
"""
