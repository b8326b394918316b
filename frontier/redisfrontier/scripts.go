package redisfrontier

import "github.com/redis/go-redis/v9"

// Every script gets KEYS[1] = the meta key (prefix .. "meta"), which routes
// it to the crawl's slot on a cluster, and the common arguments
//
//	ARGV[1] now in ms ("" = Redis TIME), ARGV[2] worker id, ARGV[3] lease
//	TTL ms, ARGV[4] per-host in-flight limit, ARGV[5] per-host delay ms
//
// followed by its own from ARGV[6]. Each returns its result followed by the
// five counters pending, inflight, done, failed, hosts.
//
// Records are JSON arrays [seq, depth, url, source, attempts, seed, lasterr]
// (see record.go); Go sends new ones with seq 0 and the script writes the
// sequence number in. Numbers passed to redis.call go through num, since
// Lua's default conversion keeps only 14 digits.
const prelude = `
-- No meta hash: Redis lost the crawl's keys (see ErrLost). Write nothing,
-- or the crawl would look drained, or restart without its meta.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('LOST the meta hash ' .. KEYS[1] .. ' is gone')
end
local P = string.sub(KEYS[1], 1, -5)
local NOW
if ARGV[1] ~= '' then
  NOW = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local ME, TTL, LIMIT, DELAY = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local N, URLS, FLY = P .. 'n', P .. 'url', P .. 'fly'

local function num(x) return string.format('%.0f', x) end

-- A gap of more than half a lease since any script ran means Redis was
-- unreachable (or restarted): every worker gets a fresh lease rather than
-- losing its URLs to the first worker that reconnects.
local clock = tonumber(redis.call('GET', P .. 'clock') or '0')
if clock > 0 and NOW - clock > TTL / 2 then
  for _, w in ipairs(redis.call('ZRANGE', P .. 'workers', 0, -1)) do
    redis.call('ZADD', P .. 'workers', 'GT', num(NOW + TTL), w)
  end
end
if NOW > clock then redis.call('SET', P .. 'clock', num(NOW)) end
redis.call('ZADD', P .. 'workers', num(NOW + TTL), ME)

local function reply(t)
  local c = redis.call('HMGET', N, 'pending', 'inflight', 'done', 'failed', 'hosts')
  for k = 1, 5 do t[#t + 1] = tonumber(c[k] or '0') end
  return t
end

local function hdelay(h)
  local d = tonumber(redis.call('HGET', P .. 'delay', h) or '0')
  if d > DELAY then return d end
  return DELAY
end

-- headprio orders hosts by their queue head: depth, then sequence.
local function headprio(h)
  local d = redis.call('ZRANGE', P .. 'd:' .. h, 0, 0)
  if #d == 0 then return nil end
  local rec = redis.call('LINDEX', P .. 'q:' .. h .. ':' .. d[1], 0)
  local seq = 0
  if rec then seq = tonumber(string.match(rec, '^%[(%d+),')) or 0 end
  local depth = tonumber(d[1])
  if depth > 4095 then depth = 4095 end
  return depth * 1099511627776 + seq
end

-- schedule puts host h where its state says: in ready (by head) when it
-- has URLs, a free slot and its delay has passed; in wait (by the time its
-- delay passes) when only the delay holds it; in neither otherwise.
local function schedule(h)
  local prio = headprio(h)
  local hin = tonumber(redis.call('HGET', P .. 'hin', h) or '0')
  local last = redis.call('HGET', P .. 'last', h)
  local at = NOW
  if last then at = tonumber(last) + hdelay(h) end
  if prio == nil or hin >= LIMIT then
    redis.call('ZREM', P .. 'wait', h)
    redis.call('ZREM', P .. 'ready', h)
    if prio == nil and hin <= 0 then
      redis.call('HDEL', P .. 'hin', h)
      if at <= NOW then redis.call('HDEL', P .. 'last', h) end
    end
  elseif at <= NOW then
    redis.call('ZREM', P .. 'wait', h)
    redis.call('ZADD', P .. 'ready', num(prio), h)
  else
    redis.call('ZREM', P .. 'ready', h)
    redis.call('ZADD', P .. 'wait', num(at), h)
  end
end

local function push(h, depth, rec, front)
  local d = P .. 'd:' .. h
  if redis.call('EXISTS', d) == 0 then redis.call('HINCRBY', N, 'hosts', 1) end
  local q = P .. 'q:' .. h .. ':' .. depth
  if front then redis.call('LPUSH', q, rec) else redis.call('RPUSH', q, rec) end
  redis.call('ZADD', d, depth, depth)
end

-- pophead removes and returns host h's first record whose URL is pending,
-- and that URL; entries of URLs in another state are stale (see doc.go)
-- and dropped on the way.
local function pophead(h)
  local d = P .. 'd:' .. h
  while true do
    local first = redis.call('ZRANGE', d, 0, 0)
    if #first == 0 then return nil end
    local q = P .. 'q:' .. h .. ':' .. first[1]
    local rec = redis.call('LPOP', q)
    if redis.call('EXISTS', q) == 0 then
      redis.call('ZREM', d, first[1])
      if redis.call('EXISTS', d) == 0 then redis.call('HINCRBY', N, 'hosts', -1) end
    end
    if rec then
      local url = cjson.decode(rec)[3]
      if redis.call('HGET', URLS, url) == 'p' then return rec, url end
    end
  end
end

-- A call that is not idempotent (Next, Add, Alias) carries an id: its reply is
-- kept under P once:<id> for ONCE ms, and a second run of the call (its
-- first reply was lost and go-redis or Frontier.retry sent it again)
-- returns that reply instead of running again.
local ONCE = 2 * TTL
local function replayed(id)
  local r = redis.call('GET', P .. 'once:' .. id)
  if r then return tonumber(r) end
  return nil
end
local function remember(id, v)
  redis.call('SET', P .. 'once:' .. id, v, 'PX', num(ONCE))
  return v
end

local function splitfly(v)
  return string.match(v, '^([^\n]*)\n([^\n]*)\n([^\n]*)\n(.*)$')
end

-- requeue returns a leased URL to the front of its queue and its host.
local function requeue(url, v)
  local h, owner, start, rec = splitfly(v)
  redis.call('HDEL', FLY, url)
  redis.call('SREM', P .. 'w:' .. owner, url)
  redis.call('HSET', URLS, url, 'p')
  push(h, string.match(rec, '^%[%d+,(%d+),'), rec, true)
  redis.call('HINCRBY', P .. 'hin', h, -1)
  redis.call('HINCRBY', N, 'inflight', -1)
  redis.call('HINCRBY', N, 'pending', 1)
  return h
end

-- reclaim returns every URL leased by worker w and forgets w.
local function reclaim(w)
  local touched = {}
  for _, url in ipairs(redis.call('SMEMBERS', P .. 'w:' .. w)) do
    local v = redis.call('HGET', FLY, url)
    if v then touched[requeue(url, v)] = true end
  end
  redis.call('DEL', P .. 'w:' .. w)
  redis.call('ZREM', P .. 'workers', w)
  redis.call('HDEL', P .. 'waiting', w)
  for h in pairs(touched) do schedule(h) end
end

-- setdelays applies n SetHostDelay pairs from ARGV[i]; returns the next i.
local function setdelays(i)
  local n = tonumber(ARGV[i])
  i = i + 1
  for _ = 1, n do
    redis.call('HSET', P .. 'delay', ARGV[i], ARGV[i + 1])
    schedule(ARGV[i])
    i = i + 2
  end
  return i
end

-- addlinks queues the (url, host, record) triples from ARGV[i] whose URL
-- was never seen; returns how many.
local function addlinks(i)
  local added, touched = 0, {}
  while i + 2 <= #ARGV do
    local url, h, rec = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    i = i + 3
    if redis.call('HSETNX', URLS, url, 'p') == 1 then
      local seq = redis.call('INCR', P .. 'seq')
      push(h, string.match(rec, '^%[0,(%d+),'), '[' .. seq .. string.sub(rec, 3), false)
      touched[h] = true
      added = added + 1
    end
  end
  if added > 0 then redis.call('HINCRBY', N, 'pending', added) end
  for h in pairs(touched) do schedule(h) end
  return added
end

-- unlease ends this worker's lease on url before it is completed with
-- state target. It returns 'own' and the host and fly value when the lease
-- was ours; 'lost' when it expired and the URL went back to pending while
-- this worker still held it (the completion is accepted, its queue entry
-- becomes stale); 'replay' when the URL is already in state target (a retry
-- of a call whose reply was lost); or nil and why not.
local function unlease(url, held, target)
  local v = redis.call('HGET', FLY, url)
  if v then
    local h, owner = splitfly(v)
    if owner ~= ME then return nil, 'leased to another worker' end
    redis.call('HDEL', FLY, url)
    redis.call('SREM', P .. 'w:' .. ME, url)
    redis.call('HINCRBY', P .. 'hin', h, -1)
    redis.call('HINCRBY', N, 'inflight', -1)
    return 'own', h, v
  end
  if held == '1' then
    local st = redis.call('HGET', URLS, url)
    if st == target then return 'replay' end
    if st == 'p' then
      redis.call('HINCRBY', N, 'pending', -1)
      return 'lost'
    end
  end
  return nil, 'not leased'
end
`

// nextScript: ARGV[6] call id, [7] the host of the URL this worker just
// finished when the call rides with that finish (FinishNext), else empty,
// [8] how long (ms) a worker's wait counts, [9..] delay pairs (count
// first). Returns {'item', record, start ms}, {'wait', ms (-1: unknown)}
// or {'yield'}. A second run of a call that handed out a URL still leased
// to this worker returns that URL again rather than leasing another one.
//
// A plain Next that finds nothing records that its worker waits (P
// waiting: worker -> ms). A call riding with a finish yields rather than
// take the slot its finish freed on a host at its in-flight limit while
// another worker waits (its finish and its next URL would otherwise be one
// step, and a worker joining a crawl whose host is at its limit with no
// delay would never get a URL).
var nextScript = redis.NewScript(prelude + `
local FREED, WINDOW = ARGV[7], tonumber(ARGV[8])
setdelays(9)
local once = P .. 'once:' .. ARGV[6]
local prev = redis.call('GET', once)
if prev then
  local v = redis.call('HGET', FLY, prev)
  if v then
    local _, owner, start, rec = splitfly(v)
    if owner == ME then return reply({'item', rec, start}) end
  end
end
for _, w in ipairs(redis.call('ZRANGEBYSCORE', P .. 'workers', '-inf', '(' .. num(NOW), 'LIMIT', 0, 8)) do
  if w ~= ME then reclaim(w) end
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', P .. 'retry', '-inf', num(NOW), 'LIMIT', 0, 100)) do
  redis.call('ZREM', P .. 'retry', m)
  local h, rec = string.match(m, '^([^\n]*)\n(.*)$')
  if redis.call('HGET', URLS, cjson.decode(rec)[3]) == 'p' then
    local seq = redis.call('INCR', P .. 'seq')
    local comma = string.find(rec, ',', 1, true)
    push(h, string.match(rec, '^%[%d+,(%d+),'), '[' .. seq .. string.sub(rec, comma), false)
    schedule(h)
  end
end
for _, h in ipairs(redis.call('ZRANGEBYSCORE', P .. 'wait', '-inf', num(NOW), 'LIMIT', 0, 256)) do
  schedule(h)
end
-- otherwaits reports whether another worker waited within WINDOW ms,
-- and forgets the waits older than that.
local function otherwaits()
  local ws, found = redis.call('HGETALL', P .. 'waiting'), false
  for i = 1, #ws, 2 do
    if tonumber(ws[i + 1]) < NOW - WINDOW then
      redis.call('HDEL', P .. 'waiting', ws[i])
    elseif ws[i] ~= ME then
      found = true
    end
  end
  return found
end
for _ = 1, 64 do
  local top = redis.call('ZRANGE', P .. 'ready', 0, 0)
  if #top == 0 then break end
  local h = top[1]
  if h == FREED and tonumber(redis.call('HGET', P .. 'hin', h) or '0') + 1 >= LIMIT and otherwaits() then
    return reply({'yield'})
  end
  local rec, url = pophead(h)
  if rec then
    redis.call('HSET', URLS, url, 'i')
    redis.call('HINCRBY', P .. 'hin', h, 1)
    redis.call('HSET', P .. 'last', h, num(NOW))
    redis.call('HSET', FLY, url, h .. '\n' .. ME .. '\n' .. num(NOW) .. '\n' .. rec)
    redis.call('SADD', P .. 'w:' .. ME, url)
    redis.call('HINCRBY', N, 'pending', -1)
    redis.call('HINCRBY', N, 'inflight', 1)
    redis.call('SET', once, url, 'PX', num(ONCE))
    redis.call('HDEL', P .. 'waiting', ME)
    schedule(h)
    return reply({'item', rec, num(NOW)})
  end
  schedule(h)
end
local wait = -1
local function sooner(key)
  local r = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #r > 0 then
    local d = tonumber(r[2]) - NOW
    if d < 0 then d = 0 end
    if wait < 0 or d < wait then wait = d end
  end
end
sooner(P .. 'wait')
sooner(P .. 'retry')
sooner(P .. 'workers')
if FREED == '' then redis.call('HSET', P .. 'waiting', ME, num(NOW)) end
return reply({'wait', num(wait)})
`)

// addScript: ARGV[6] call id, ARGV[7..] (url, host, record) triples.
// Returns {added}.
var addScript = redis.NewScript(prelude + `
local r = replayed(ARGV[6])
if r then return reply({r}) end
return reply({remember(ARGV[6], addlinks(7))})
`)

// retryFailedScript queues again the URLs of ARGV[7..] (url, host,
// record) triples that the crawl recorded as failed: ARGV[6] call id.
// Returns {queued}.
var retryFailedScript = redis.NewScript(prelude + `
local r = replayed(ARGV[6])
if r then return reply({r}) end
local i, queued, touched = 7, 0, {}
while i + 2 <= #ARGV do
  local url, h, rec = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  i = i + 3
  local st = redis.call('HGET', URLS, url)
  if st and string.sub(st, 1, 2) == 'f:' then
    redis.call('HSET', URLS, url, 'p')
    local seq = redis.call('INCR', P .. 'seq')
    push(h, string.match(rec, '^%[0,(%d+),'), '[' .. seq .. string.sub(rec, 3), false)
    touched[h] = true
    queued = queued + 1
  end
end
if queued > 0 then
  redis.call('HINCRBY', N, 'failed', -queued)
  redis.call('HINCRBY', N, 'pending', queued)
end
for h in pairs(touched) do schedule(h) end
return reply({remember(ARGV[6], queued)})
`)

// finishScript completes a URL as done or failed: ARGV[6] url, [7] state
// ('d:outcome' or 'f:reason'), [8] held ('1' if this worker holds it),
// [9] counter ('done' or 'failed'), [10..] link triples. Returns {'ok'} or
// {'notinflight', why}.
var finishScript = redis.NewScript(prelude + `
local url, st, held, counter = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local how, h = unlease(url, held, st)
if not how then return reply({'notinflight', h}) end
if how == 'replay' then return reply({'ok'}) end
addlinks(10)
redis.call('HSET', URLS, url, st)
redis.call('HINCRBY', N, counter, 1)
if how == 'own' then schedule(h) end
return reply({'ok'})
`)

// retryScript: ARGV[6] url, [7] after ms, [8] reason, [9] held. Returns
// {'ok'} or {'notinflight', why}.
var retryScript = redis.NewScript(prelude + `
local url, after, reason, held = ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9]
local how, h, v = unlease(url, held, 'p')
if not how then return reply({'notinflight', h}) end
if how == 'lost' then redis.call('HINCRBY', N, 'pending', 1) end
if how ~= 'own' then return reply({'ok'}) end
local _, _, _, rec = splitfly(v)
local it = cjson.decode(rec)
rec = cjson.encode({0, it[2], it[3], it[4], it[5] + 1, it[6], reason})
redis.call('ZADD', P .. 'retry', num(NOW + after), h .. '\n' .. rec)
redis.call('HSET', URLS, url, 'p')
redis.call('HINCRBY', N, 'pending', 1)
schedule(h)
return reply({'ok'})
`)

// aliasScript: ARGV[6] url, [7] state, [8] call id. Returns {1} if url
// was seen, {0} if it is now recorded.
var aliasScript = redis.NewScript(prelude + `
local r = replayed(ARGV[8])
if r then return reply({r}) end
if redis.call('HSETNX', URLS, ARGV[6], ARGV[7]) == 0 then return reply({remember(ARGV[8], 1)}) end
redis.call('HINCRBY', N, 'done', 1)
return reply({remember(ARGV[8], 0)})
`)

// renewScript renews this worker's lease (the prelude does), applies delay
// pairs from ARGV[7] (count first), and returns to their queues the URLs
// leased to this worker longer than ARGV[6] ms ago that it does not hold
// (the rest of ARGV): a Next whose reply never arrived. Returns {'ok'}.
var renewScript = redis.NewScript(prelude + `
local grace = tonumber(ARGV[6])
local i = setdelays(7)
local held = {}
for k = i, #ARGV do held[ARGV[k]] = true end
local touched = {}
for _, url in ipairs(redis.call('SMEMBERS', P .. 'w:' .. ME)) do
  if not held[url] then
    local v = redis.call('HGET', FLY, url)
    local _, owner, start = nil, nil, nil
    if v then _, owner, start = splitfly(v) end
    if not v or owner ~= ME then
      redis.call('SREM', P .. 'w:' .. ME, url)
    elseif tonumber(start) < NOW - grace then
      touched[requeue(url, v)] = true
    end
  end
end
for h in pairs(touched) do schedule(h) end
return reply({'ok'})
`)

// leaveScript returns every URL leased to this worker to its queue and
// forgets the worker. Returns {'ok'}.
var leaveScript = redis.NewScript(prelude + `
reclaim(ME)
return reply({'ok'})
`)

// lostCheck starts the scripts without the prelude, whose KEYS[3] is the
// meta key.
const lostCheck = `
if redis.call('EXISTS', KEYS[3]) == 0 then
  return redis.error_reply('LOST the meta hash ' .. KEYS[3] .. ' is gone')
end
`

// claimScript: KEYS[1] the budget counter, KEYS[2] the call's once key,
// KEYS[3] the meta key, ARGV[1] the maximum, ARGV[2] how long the once key
// lives (ms). Returns 1 and keeps the claim if the counter stays within
// the maximum, else 0; a second run of the call returns the first run's
// answer.
var claimScript = redis.NewScript(lostCheck + `
local r = redis.call('GET', KEYS[2])
if r then return tonumber(r) end
local ok = 1
if redis.call('INCR', KEYS[1]) > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  ok = 0
end
redis.call('SET', KEYS[2], ok, 'PX', ARGV[2])
return ok
`)

// returnScript: KEYS[1] the budget counter, KEYS[2] the call's once key,
// KEYS[3] the meta key, ARGV[1] how long the once key lives (ms). Gives
// one claim back, once per call however often the call is sent. Returns 1.
var returnScript = redis.NewScript(lostCheck + `
if redis.call('SET', KEYS[2], 1, 'NX', 'PX', ARGV[1]) then
  redis.call('DECR', KEYS[1])
end
return 1
`)

// metaScript: KEYS[1] meta, KEYS[2..] keys that only a frontier writes;
// ARGV field/value pairs. It creates the meta hash in an empty namespace
// and returns {}; returns {'nometa'} if the namespace holds frontier keys
// without one; otherwise returns the existing meta hash as a flat list.
var metaScript = redis.NewScript(`
local m = redis.call('HGETALL', KEYS[1])
if #m > 0 then return m end
for k = 2, #KEYS do
  if redis.call('EXISTS', KEYS[k]) == 1 then return {'nometa'} end
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return {}
`)

var scripts = []*redis.Script{nextScript, addScript, finishScript, retryScript, retryFailedScript, aliasScript, renewScript, leaveScript, claimScript, returnScript, metaScript}
