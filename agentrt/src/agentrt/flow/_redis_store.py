"""Limits and retry budget shared by many processes through Redis.

N replicas that each keep a provider's TPM in memory send N times the
limit together (LiteLLM's rate limits multiply by the number of replicas
unless Redis is configured). Here the buckets and the retry budget live in
one Redis hash per endpoint (resp. per budget) and every change runs as a
Lua script, which Redis executes atomically: two workers can never both
take the last tokens.

Time: by default the scripts read Redis's own ``TIME`` (one clock for all
workers, whatever their machines' clocks say), multiplied by ``time_scale``
so a time-scaled simulator and its clients agree on what a minute is.
Tests pass a ``clock`` instead, whose ``now()`` is sent with each call.

A worker that dies holding budget counters leaves them behind until the
key expires (``ttl_s`` after the last use); keep ``ttl_s`` short.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from agentrt._clock import Clock
from agentrt.flow._gate import with_headroom
from agentrt.flow._ratelimit import HeaderView, Reservation
from agentrt.flow._retry import RetryBudgetRules, RetryVerdict

__all__ = ["RedisRateGate", "RedisRetryBudget"]

# ARGV: now ('' = Redis TIME), time_scale, rpm, tpm, op, a, b, ttl_ms
_BUCKETS = """
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = (tonumber(t[1]) + tonumber(t[2]) / 1000000) * tonumber(ARGV[2])
else
  now = tonumber(ARGV[1])
end
local caps = {r = tonumber(ARGV[3]), t = tonumber(ARGV[4])}
local op, a, b = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
local lv, up = {}, {}
for _, k in ipairs({'r', 't'}) do
  local cap = caps[k]
  if cap > 0 then
    local l = tonumber(redis.call('HGET', KEYS[1], k .. 'l'))
    local u = tonumber(redis.call('HGET', KEYS[1], k .. 'u'))
    if l == nil then l = cap; u = now end
    if now > u then l = math.min(cap, l + (now - u) * cap / 60); u = now end
    lv[k] = l; up[k] = u
  end
end
local blocked = tonumber(redis.call('HGET', KEYS[1], 'blocked')) or -1
local result = {'ok'}
if op == 'reserve' then
  local wait = math.max(0, blocked - now)
  local need = {r = 1, t = a}
  for _, k in ipairs({'r', 't'}) do
    if lv[k] ~= nil then
      if need[k] > caps[k] then
        return {'never', '0'}
      end
      wait = math.max(wait, (need[k] - lv[k]) * 60 / caps[k])
    end
  end
  if wait > 0 then
    result = {'wait', tostring(wait)}
  else
    for _, k in ipairs({'r', 't'}) do
      if lv[k] ~= nil then lv[k] = lv[k] - need[k] end
    end
    result = {'ok', tostring(now)}
  end
elseif op == 'settle' then
  if lv['t'] ~= nil then lv['t'] = math.min(caps['t'], lv['t'] + a - b) end
elseif op == 'cancel' then
  if lv['r'] ~= nil then lv['r'] = math.min(caps['r'], lv['r'] + 1) end
  if lv['t'] ~= nil then lv['t'] = math.min(caps['t'], lv['t'] + a) end
elseif op == 'observe' then
  local age = tonumber(ARGV[9])
  local seen = {r = a, t = b}
  for _, k in ipairs({'r', 't'}) do
    if lv[k] ~= nil and seen[k] >= 0 then
      lv[k] = math.min(lv[k], seen[k] + age * caps[k] / 60)
    end
  end
elseif op == 'block' then
  redis.call('HSET', KEYS[1], 'blocked', tostring(math.max(blocked, now + a)))
end
for _, k in ipairs({'r', 't'}) do
  if lv[k] ~= nil then
    redis.call('HSET', KEYS[1], k .. 'l', tostring(lv[k]), k .. 'u', tostring(up[k]))
  end
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[8]))
return result
"""

# ARGV: op, share, min_in_flight, ratio, burst, ttl_ms
_BUDGET = """
local op = ARGV[1]
local share, minf, ratio, burst = tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4]), tonumber(ARGV[5])
local bratio, window, minsamples = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local recentn = tonumber(ARGV[10])
local active = tonumber(redis.call('HGET', KEYS[1], 'active')) or 0
local retrying = tonumber(redis.call('HGET', KEYS[1], 'retrying')) or 0
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance')) or burst
local samples = tonumber(redis.call('HGET', KEYS[1], 'samples')) or 0
local fseen = tonumber(redis.call('HGET', KEYS[1], 'fseen')) or 0
local frate = tonumber(redis.call('HGET', KEYS[1], 'frate')) or 0
local recent = redis.call('HGET', KEYS[1], 'recent') or ''
local out = 1
if op == 'start' then
  active = active + 1
  balance = math.min(burst, balance + ratio)
  redis.call('HINCRBY', KEYS[1], 'calls', 1)
elseif op == 'finish' then
  active = math.max(0, active - 1)
elseif op == 'ok' or op == 'fail' then
  samples = samples + 1
  local alpha = math.max(1 / window, 1 / samples)
  local x = '0'
  if op == 'fail' then x = '1'; fseen = fseen + 1 end
  frate = frate + alpha * (tonumber(x) - frate)
  recent = string.sub(recent .. x, -recentn)
elseif op == 'try' then
  local cap = math.max(minf, math.floor(share * active))
  local rate = frate
  if samples < window then rate = fseen / (samples + active) end
  local brownout = samples >= minsamples and rate >= bratio
  local known = #recent
  local _, recentfails = string.gsub(recent, '1', '')
  local suspect = known >= math.max(1, math.floor(recentn / 2)) and recentfails / known >= bratio
    and active >= 2 * math.max(1, minf)
  if retrying >= cap then
    out = 0
    if cap <= 0 then out = 2 end
    redis.call('HINCRBY', KEYS[1], 'denied', 1)
  elseif brownout and balance < 1 then
    out = 2
    redis.call('HINCRBY', KEYS[1], 'denied', 1)
  elseif (not brownout) and suspect then
    out = 0
    redis.call('HINCRBY', KEYS[1], 'denied', 1)
  else
    retrying = retrying + 1
    if brownout then balance = balance - 1 end
    redis.call('HINCRBY', KEYS[1], 'retries', 1)
  end
elseif op == 'rfinish' then
  retrying = math.max(0, retrying - 1)
end
redis.call('HSET', KEYS[1], 'active', active, 'retrying', retrying, 'balance', tostring(balance),
  'samples', samples, 'fseen', fseen, 'frate', tostring(frate), 'recent', recent)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]))
return out
"""

_VERDICTS: dict[int, RetryVerdict] = {0: "busy", 1: "granted", 2: "refused"}


class RedisRateGate:
    """One endpoint's RPM/TPM buckets in the Redis hash ``key`` (``1 - headroom`` of them)."""

    def __init__(
        self,
        redis: Redis,
        key: str,
        *,
        rpm: int | None,
        tpm: int | None,
        headroom: float = 0.03,
        time_scale: float = 1.0,
        clock: Clock | None = None,
        ttl_s: float = 600.0,
    ) -> None:
        self.redis = redis
        self.key = key
        self.rpm = with_headroom(rpm, headroom) or 0
        self.tpm = with_headroom(tpm, headroom) or 0
        self.time_scale = time_scale
        self.clock = clock
        self.ttl_ms = int(ttl_s * 1000)
        self._script = redis.register_script(_BUCKETS)

    async def _run(self, op: str, a: float = 0.0, b: float = 0.0, c: float = 0.0) -> Any:
        now = "" if self.clock is None else repr(self.clock.now())
        args: list[str | float] = [
            now,
            self.time_scale,
            self.rpm,
            self.tpm,
            op,
            a,
            b,
            self.ttl_ms,
            c,
        ]
        return await self._script(keys=[self.key], args=args)

    async def reserve(self, tokens: float) -> Reservation | float:
        kind, value = (_text(x) for x in await self._run("reserve", tokens))
        if kind == "never":
            return float("inf")
        if kind == "wait":
            return max(float(value), 1e-6)
        return Reservation(tokens, float(value))

    async def settle(self, reservation: Reservation, charged_tokens: float) -> None:
        await self._run("settle", reservation.tokens, charged_tokens)

    async def cancel(self, reservation: Reservation) -> None:
        await self._run("cancel", reservation.tokens)

    async def observe(self, view: HeaderView, age_s: float) -> None:
        r = -1.0 if view.remaining_requests is None else view.remaining_requests
        t = -1.0 if view.remaining_tokens is None else view.remaining_tokens
        await self._run("observe", r, t, max(0.0, age_s))

    async def block_for(self, seconds: float) -> None:
        await self._run("block", seconds)


class RedisRetryBudget:
    """The retry budget's counters in the Redis hash ``key`` (see RetryBudget)."""

    def __init__(
        self,
        redis: Redis,
        key: str,
        rules: RetryBudgetRules | None = None,
        *,
        ttl_s: float = 600.0,
    ) -> None:
        self.redis = redis
        self.key = key
        r = rules or RetryBudgetRules()
        self._params = [
            r.share,
            r.min_in_flight,
            r.ratio,
            r.burst,
            int(ttl_s * 1000),
            r.brownout_ratio,
            r.window,
            r.min_samples,
            r.recent,
        ]
        self._script = redis.register_script(_BUDGET)

    async def _run(self, op: str) -> int:
        return int(await self._script(keys=[self.key], args=[op, *self._params]))

    async def call_started(self) -> None:
        await self._run("start")

    async def call_finished(self) -> None:
        await self._run("finish")

    async def record(self, *, ok: bool) -> None:
        await self._run("ok" if ok else "fail")

    async def ask_retry(self) -> RetryVerdict:
        return _VERDICTS[await self._run("try")]

    async def try_retry(self) -> bool:
        return await self.ask_retry() == "granted"

    async def retry_finished(self) -> None:
        await self._run("rfinish")

    async def counters(self) -> dict[str, float]:
        """The numeric counters (the ``recent`` outcome string is left out)."""
        raw = await self.redis.hgetall(self.key)
        return {_text(k): float(_text(v)) for k, v in raw.items() if _text(k) != "recent"}


def _text(x: object) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)
