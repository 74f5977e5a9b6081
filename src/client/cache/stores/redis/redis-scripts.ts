/**
 * The Lua scripts of a `RedisCacheStore`: each change is one script, atomic on the server and one
 * round trip, touching only the keys of one cache key (one Cluster slot: redis-keys.ts) and announcing
 * itself on the changes channel in the same step, so no instance hears of a change before it is made.
 * They are sent whole with EVAL each time (the server keeps them compiled by their hash): an EVALSHA
 * answered NOSCRIPT after a restart would be sent again after a lookup issued meanwhile, which would
 * then miss the write it followed on the same connection.
 */

/**
 * Stores one variant. KEYS: the entries hash. ARGV: the variant's body field, its meta field, the
 * value (empty: only drop the stored variant, for an entry declined), its deleteAt, now (ms), the most
 * variants kept, the channel, the notice. Drops the variants of no use any more and the oldest past the
 * bound, and makes the hash expire with its last useful variant.
 */
export const storeVariant = `
local hash = KEYS[1]
local bodyField, metaField, value = ARGV[1], ARGV[2], ARGV[3]
local deleteAt, now, most = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local metaFields = {}
for _, field in ipairs(redis.call('HKEYS', hash)) do
    if string.sub(field, 1, 2) == 'm:' and field ~= metaField then
        metaFields[#metaFields + 1] = field
    end
end
local kept, newest = {}, 0
if #metaFields > 0 then
    local metas = redis.call('HMGET', hash, unpack(metaFields))
    for i, meta in ipairs(metas) do
        local variant = string.sub(metaFields[i], 3)
        local sequence, endOfUse = string.match(meta or '', '^(%d+) (%d+)$')
        sequence, endOfUse = tonumber(sequence), tonumber(endOfUse)
        if sequence == nil or endOfUse <= now then
            redis.call('HDEL', hash, 'm:' .. variant, 'b:' .. variant)
        else
            kept[#kept + 1] = { variant = variant, sequence = sequence, deleteAt = endOfUse }
            newest = math.max(newest, sequence)
        end
    end
end
redis.call('HDEL', hash, bodyField, metaField)
if value ~= '' and deleteAt > now then
    redis.call('HSET', hash, bodyField, value, metaField, string.format('%d %s', newest + 1, ARGV[4]))
    kept[#kept + 1] = { variant = string.sub(metaField, 3), sequence = newest + 1, deleteAt = deleteAt }
end
table.sort(kept, function(a, b) return a.sequence > b.sequence end)
local lastUse = 0
for i, item in ipairs(kept) do
    if i > most then
        redis.call('HDEL', hash, 'm:' .. item.variant, 'b:' .. item.variant)
    else
        lastUse = math.max(lastUse, item.deleteAt)
    end
end
if lastUse > 0 then
    redis.call('PEXPIREAT', hash, string.format('%d', lastUse))
else
    redis.call('DEL', hash)
end
redis.call('PUBLISH', ARGV[7], ARGV[8])
return math.min(#kept, most)
`;

/** Drops every variant of a cache key. KEYS: the entries hash. ARGV: the channel, the notice. */
export const dropVariants = `
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
`;

/**
 * Takes a fill lock. KEYS: the lock, the pass mark. ARGV: the token, its time to live (ms).
 * Answers 'pass' while the key is marked uncacheable (no lock taken), 'acquired' or 'held'.
 */
export const takeLock = `
if redis.call('EXISTS', KEYS[2]) == 1 then
    return 'pass'
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 'acquired'
end
return 'held'
`;

/**
 * Releases a fill lock if `token` still holds it (compare and delete): 1, else 0 and nothing changed.
 * KEYS: the lock, the pass mark. ARGV: the token, how long to mark the key uncacheable (ms, 0: not),
 * the channel, the notice.
 */
export const releaseLock = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
end
redis.call('DEL', KEYS[1])
if tonumber(ARGV[2]) > 0 then
    redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;

/** Where a fill stands. KEYS: the lock, the pass mark. Answers 'pass', 'held' or 'released'. */
export const lockState = `
if redis.call('EXISTS', KEYS[2]) == 1 then
    return 'pass'
end
if redis.call('EXISTS', KEYS[1]) == 1 then
    return 'held'
end
return 'released'
`;
