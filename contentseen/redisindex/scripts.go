package redisindex

import "github.com/redis/go-redis/v9"

// The writing scripts take KEYS = keys.all: meta, seq, e, pend, d, then one
// hash per table; the read-only ones the keys they read. Every key carries
// the crawl's {NAME} hash tag, so on a cluster they share one slot. Seqs
// are passed to redis.call through num, since Lua's default conversion
// keeps only 14 digits; in bucket and digest values they are 8 bytes
// big-endian (pack8).
const prelude = lostCheck + `
local SEQ, E, PEND, D = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local ZERO = string.rep('\0', 16)

local function num(x) return string.format('%.0f', x) end
local function pack8(s) return struct.pack('>I4I4', math.floor(s / 4294967296), s % 4294967296) end

local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function popcount(v)
  local n = 0
  while v ~= 0 do v = bit.band(v, v - 1); n = n + 1 end
  return n
end

-- dist is the Hamming distance of the fingerprints of records a and b.
local function dist(a, b)
  local a1, a2 = struct.unpack('>I4I4', a, 2)
  local b1, b2 = struct.unpack('>I4I4', b, 2)
  return popcount(bit.bxor(a1, b1)) + popcount(bit.bxor(a2, b2))
end

local function digest(r) return string.sub(r, 10, 25) end

-- bucketof returns the bucket of record r in table t (1-based).
local function bucketof(r, t)
  local w = string.byte(r, 159)
  local at = 160 + (t - 1) * w
  return string.sub(r, at, at + w - 1)
end

local function idof(r)
  local at = 160 + string.byte(r, 158) * string.byte(r, 159)
  local n = string.byte(r, at) * 256 + string.byte(r, at + 1)
  return string.sub(r, at + 2, at + 1 + n)
end

-- insert records entry seq with record r, pending until deadline (nil:
-- committed).
local function insert(seq, r, deadline)
  local s = num(seq)
  redis.call('HSET', E, s, r)
  if deadline then redis.call('ZADD', PEND, num(deadline), s) end
  local rec = string.sub(r, 2, 9) .. pack8(seq)
  for t = 6, #KEYS do
    local b = bucketof(r, t - 5)
    local v = redis.call('HGET', KEYS[t], b) or ''
    redis.call('HSET', KEYS[t], b, v .. rec)
  end
  local d = digest(r)
  if d ~= ZERO then
    local v = redis.call('HGET', D, d) or ''
    redis.call('HSET', D, d, v .. pack8(seq))
  end
end

-- cut returns v without the size-byte record ending in tail (its seq), or
-- v when there is none.
local function cut(v, tail, size)
  local from = 1
  while true do
    local p = string.find(v, tail, from, true)
    if not p then return v end
    local start = p + #tail - size
    if start >= 1 and (start - 1) % size == 0 then
      return string.sub(v, 1, start - 1) .. string.sub(v, start + size)
    end
    from = p + 1
  end
end

local function setordel(key, field, v)
  if v == '' then redis.call('HDEL', key, field) else redis.call('HSET', key, field, v) end
end

-- remove deletes entry s (a string) with record r.
local function remove(s, r)
  redis.call('HDEL', E, s)
  redis.call('ZREM', PEND, s)
  local tail = pack8(tonumber(s))
  for t = 6, #KEYS do
    local b = bucketof(r, t - 5)
    local v = redis.call('HGET', KEYS[t], b)
    if v then setordel(KEYS[t], b, cut(v, tail, 16)) end
  end
  local d = digest(r)
  if d ~= ZERO then
    local v = redis.call('HGET', D, d)
    if v then setordel(D, d, cut(v, tail, 8)) end
  end
end

-- epoch returns the index's generation and the end (ms) of its settle
-- window, starting a new generation when the server is not the process
-- that ran the last script (its run_id changed: a restart or a failover,
-- which may have lost the last second of writes). A new generation makes
-- claims wait until t + settle, while the workers replay their recent
-- claims (replayScript), and moves the seq counter jump ahead, so that a
-- token from before the restart is stale whatever was lost.
local function epoch(t, settle, jump)
  local id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
  local m = redis.call('HMGET', KEYS[1], 'run', 'gen', 'settle')
  if m[1] == id then return tonumber(m[2] or '0'), tonumber(m[3] or '0') end
  local gen = tonumber(m[2] or '0') + 1
  redis.call('INCRBY', SEQ, jump)
  redis.call('HSET', KEYS[1], 'run', id, 'gen', gen, 'settle', num(t + settle))
  return gen, t + settle
end

-- settling starts every script that claims (ARGV settle ms and seq jump
-- at the positions given): it returns the reply refusing the claim while
-- the server settles after a restart, or nil, and the generation, which
-- the reply of a claim carries (Index.claimed).
local function settling(t, settleAt)
  local gen, till = epoch(t, tonumber(ARGV[settleAt]), tonumber(ARGV[settleAt + 1]))
  if t < till then return {'settling', gen, till - t}, gen end
  return nil, gen
end

-- purge removes up to 64 pending entries whose lease ended at t or
-- before; the rest go with the next calls (Lookup and Claim ignore them
-- meanwhile).
local function purge(t)
  for _, s in ipairs(redis.call('ZRANGE', PEND, '-inf', num(t), 'BYSCORE', 'LIMIT', 0, 64)) do
    local r = redis.call('HGET', E, s)
    if r then remove(s, r) else redis.call('ZREM', PEND, s) end
  end
end
`

// lostCheck starts every script but metaScript: without the meta hash
// (KEYS[1]) Redis lost the crawl's keys (restarted without its
// append-only file, flushed, evicting under maxmemory), and an index
// started again from nothing would store copies of pages stored before.
// The scripts then write nothing and fail with LOST (ErrLost).
const lostCheck = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('LOST the meta hash ' .. KEYS[1] .. ' is gone')
end
`

// metaScript returns the meta hash, creates it (ARGV: field, value, ...)
// when the namespace is empty, or returns {'nometa'} when the namespace
// holds index keys without one.
var metaScript = newScript(`
local m = redis.call('HGETALL', KEYS[1])
if #m > 0 then return m end
for k = 2, #KEYS do
  if redis.call('EXISTS', KEYS[k]) == 1 then return {'nometa'} end
end
redis.call('HSET', KEYS[1], unpack(ARGV))
-- A new index starts generation 1 on this server, with no settle window.
local id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
redis.call('HSET', KEYS[1], 'run', id, 'gen', 1, 'settle', 0)
return {}
`)

// lookupScript reads, in one atomic step, the token, the entries with the
// digest and the buckets a Lookup probes. KEYS: meta, seq, d, e, pend, then
// one hash per table; ARGV: the digest (empty for none), then per table the
// number of buckets and their names. It returns
//
//	{token, now ms, n, n times (seq, record, lease end or false), bucket value or false...}
//
// An exact copy (same digest) is thus judged from one round trip; the
// distances to the bucket records are computed by the caller.
var lookupScript = newScript(lostCheck + `
local t = redis.call('TIME')
local out = {tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), 0}
if ARGV[1] ~= '' then
  local v = redis.call('HGET', KEYS[3], ARGV[1])
  if v then
    for i = 1, #v, 8 do
      local hi, lo = struct.unpack('>I4I4', v, i)
      local s = string.format('%.0f', hi * 4294967296 + lo)
      out[#out + 1] = hi * 4294967296 + lo
      out[#out + 1] = redis.call('HGET', KEYS[4], s)
      out[#out + 1] = redis.call('ZSCORE', KEYS[5], s)
      out[3] = out[3] + 1
    end
  end
end
local at = 2
for k = 6, #KEYS do
  local n = tonumber(ARGV[at])
  local vs = redis.call('HMGET', KEYS[k], unpack(ARGV, at + 1, at + n))
  for i = 1, n do out[#out + 1] = vs[i] end
  at = at + n + 1
end
return out
`)

// entriesScript returns the server time (ms) and, for each seq of ARGV,
// its record and its lease end (false for a committed entry), or false,
// false for one that is gone. KEYS: meta, e, pend.
var entriesScript = newScript(lostCheck + `
local t = redis.call('TIME')
local out = {tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}
for i = 1, #ARGV do
  out[#out + 1] = redis.call('HGET', KEYS[2], ARGV[i])
  out[#out + 1] = redis.call('ZSCORE', KEYS[3], ARGV[i])
end
return out
`)

// claimScript inserts a pending entry unless a live entry within K or
// with its digest was claimed after the token. ARGV: token, K, max lag,
// lease ms, record, settle ms, seq jump (see epoch). It returns
//
//	{'settling', gen, ms left}           the server restarted: no claim until the workers replayed theirs
//	{'ahead', seq} or {'stale', seq}     the token is ahead or too old
//	{'ok', seq, deadline, gen}           inserted
//	{'conflict', seq, now, s, r, dl...}  not inserted: entries s with record r, lease end dl (false: committed)
//
// A pending entry with the very same record (ID included) is this claim
// retried after its reply was lost: it is returned as inserted.
var claimScript = newScript(prelude + `
local t = now()
local refuse, gen = settling(t, 6)
if refuse then return refuse end
purge(t)
local cur = tonumber(redis.call('GET', SEQ) or '0')
local tok, K, MAXLAG, LEASE, r = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
if tok > cur then return {'ahead', cur} end
if cur - tok > MAXLAG then return {'stale', cur} end
local d = digest(r)
local out = {'conflict', cur, t}
for s = tok + 1, cur do
  local ss = num(s)
  local c = redis.call('HGET', E, ss)
  if c then
    local dl = redis.call('ZSCORE', PEND, ss)
    if not dl or tonumber(dl) > t then
      if dl and c == r then return {'ok', s, tonumber(dl), gen} end
      if dist(r, c) <= K or (d ~= ZERO and digest(c) == d) then
        out[#out + 1] = s; out[#out + 1] = c; out[#out + 1] = dl or false
      end
    end
  end
end
if #out > 3 then return out end
local seq = redis.call('INCR', SEQ)
insert(seq, r, t + LEASE)
return {'ok', seq, t + LEASE, gen}
`)

// healScript returns {gen, settle end, now} (ms), starting a new
// generation when the server restarted (epoch). KEYS as the writing
// scripts; ARGV: settle ms, seq jump.
var healScript = newScript(prelude + `
local t = now()
local gen, till = epoch(t, tonumber(ARGV[1]), tonumber(ARGV[2]))
return {gen, till, t}
`)

// replayScript makes the index hold again a worker's recent claims after
// a restart that may have lost them (Index.Heal). ARGV: settle ms, seq
// jump, then per claim its state ('c' confirmed, 'p' pending, 'r'
// released), its seq, its lease end (ms) and its record. An entry with
// the claim's ID (at its seq, or found in its first table's bucket) is
// the claim itself: confirmed again when it was, removed when it was
// released. A claim not found is inserted with a new seq (so that every
// claim whose token is older sees it): committed when it was confirmed,
// pending until its lease end when that is still ahead. It returns {gen,
// settle end, now, then for each claim its seq now (0: none) and 1 if the
// script wrote it again, else 0}. Replaying twice changes nothing.
var replayScript = newScript(prelude + `
local t = now()
local gen, till = epoch(t, tonumber(ARGV[1]), tonumber(ARGV[2]))
local out = {gen, till, t}

-- find returns the seq (a string) of the entry with record r's ID: at
-- seq s, else among its first table's records with its fingerprint.
local function find(s, r)
  local id = idof(r)
  local c = redis.call('HGET', E, s)
  if c and idof(c) == id then return s end
  local v = redis.call('HGET', KEYS[6], bucketof(r, 1))
  if not v then return nil end
  local fp = string.sub(r, 2, 9)
  for i = 1, #v, 16 do
    if string.sub(v, i, i + 7) == fp then
      local hi, lo = struct.unpack('>I4I4', v, i + 8)
      local ss = num(hi * 4294967296 + lo)
      c = redis.call('HGET', E, ss)
      if c and idof(c) == id then return ss end
    end
  end
  return nil
end

for i = 3, #ARGV, 4 do
  local state, s, dl, r = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local got = find(s, r)
  local seq, wrote = 0, 0
  if state == 'c' then
    if got then
      wrote = redis.call('ZREM', PEND, got)
      seq = tonumber(got)
    else
      seq = redis.call('INCR', SEQ)
      insert(seq, r, nil)
      wrote = 1
    end
  elseif state == 'p' then
    if got then
      seq = tonumber(got)
    elseif dl > t then
      seq = redis.call('INCR', SEQ)
      insert(seq, r, dl)
      wrote = 1
    end
  elseif got and redis.call('ZSCORE', PEND, got) then
    remove(got, r)
    wrote = 1
  end
  out[#out + 1] = seq
  out[#out + 1] = wrote
end
return out
`)

// confirmScript commits pending entry ARGV[1] claimed with ID ARGV[2]:
// 'ok' (also for one committed already) or 'lost' (gone, another ID, or
// its lease ended: then it is purged).
var confirmScript = newScript(prelude + `
local t = now()
purge(t)
local r = redis.call('HGET', E, ARGV[1])
if not r or idof(r) ~= ARGV[2] then return 'lost' end
local dl = redis.call('ZSCORE', PEND, ARGV[1])
if not dl then return 'ok' end
if tonumber(dl) <= t then remove(ARGV[1], r); return 'lost' end
redis.call('ZREM', PEND, ARGV[1])
return 'ok'
`)

// releaseScript removes pending entry ARGV[1] claimed with ID ARGV[2]:
// 'ok' (also when gone or another ID's) or 'committed'.
var releaseScript = newScript(prelude + `
local r = redis.call('HGET', E, ARGV[1])
if not r or idof(r) ~= ARGV[2] then return 'ok' end
if not redis.call('ZSCORE', PEND, ARGV[1]) then return 'committed' end
remove(ARGV[1], r)
return 'ok'
`)

// loadScript inserts committed entries, one per record of ARGV, and
// returns the last seq. It does what insert does for each, but with a few
// calls for the whole batch (the records in one HSET, each table's
// buckets read with one HMGET and written with one HSET), about a tenth
// of the calls of inserting one by one.
var loadScript = newScript(prelude + `
local n = #ARGV
local first = redis.call('INCRBY', SEQ, n) - n + 1
local recs = {}
local add = {} -- add[k][name] = the bytes to append to field name of KEYS[k]
for k = 5, #KEYS do add[k] = {} end
for i = 1, n do
  local r, seq = ARGV[i], first + i - 1
  recs[#recs + 1] = num(seq)
  recs[#recs + 1] = r
  local tail = pack8(seq)
  local rec = string.sub(r, 2, 9) .. tail
  for k = 6, #KEYS do
    local b = bucketof(r, k - 5)
    add[k][b] = (add[k][b] or '') .. rec
  end
  local d = digest(r)
  if d ~= ZERO then add[5][d] = (add[5][d] or '') .. tail end
end
redis.call('HSET', E, unpack(recs))
for k = 5, #KEYS do
  local names = {}
  for b in pairs(add[k]) do names[#names + 1] = b end
  if #names > 0 then
    local old = redis.call('HMGET', KEYS[k], unpack(names))
    local kv = {}
    for i, b in ipairs(names) do
      kv[#kv + 1] = b
      kv[#kv + 1] = (old[i] or '') .. add[k][b]
    end
    redis.call('HSET', KEYS[k], unpack(kv))
  end
end
return first + n - 1
`)

// scriptSources are the sources of every script, which Open loads into
// the server's script cache.
var scriptSources []string

// newScript returns a script and records its source for Open. (Open loads
// the sources with SCRIPT LOAD itself: go-redis v9.23's Script.Load on a
// pipeline sets the script's hash to the empty reply it has before the
// pipeline runs, after which every Run sends EVALSHA "", gets NOSCRIPT and
// sends the whole source with EVAL: two round trips a call.)
func newScript(src string) *redis.Script {
	scriptSources = append(scriptSources, src)
	return redis.NewScript(src)
}

// reserveScript gives ARGV[1] seqs at once to BulkLoad and returns the
// first. KEYS: meta, seq.
var reserveScript = newScript(lostCheck + `
local n = tonumber(ARGV[1])
return redis.call('INCRBY', KEYS[2], n) - n + 1
`)

// appendScript appends to fields of one hash of the index: ARGV is field,
// bytes, field, bytes... with each field once. KEYS: meta, the hash.
// BulkLoad writes every key with it, each bucket once per call.
var appendScript = newScript(lostCheck + `
local names = {}
for i = 1, #ARGV, 2 do names[#names + 1] = ARGV[i] end
local old = redis.call('HMGET', KEYS[2], unpack(names))
local kv = {}
for i, name in ipairs(names) do
  kv[#kv + 1] = name
  kv[#kv + 1] = (old[i] or '') .. ARGV[2 * i]
end
redis.call('HSET', KEYS[2], unpack(kv))
return #names
`)
