import Foundation

/// What a cluster's replies and redirects say, read apart from the client that acts on them:
/// `CLUSTER SLOTS` as owners and replicas, a `MOVED`/`ASK` target, a script as the node an
/// `ASK` named runs it (pure functions, tested on their own), a command's redirections so
/// far, and the log line of a map read.
extension RedisClusterClient {
    /// `script` as the node an `ASK` named runs it (`RedisArguments.nameFirstKeyOnly`): its
    /// first key named, the others taken from ARGV after their count, and a `MGET` made one
    /// `GET` per key (a command on several keys is refused there while one is missing).
    static func askedVariant(of script: RedisScript) -> RedisScript {
        let shim = """
            -- The call after ASK (RedisClusterClient.askedVariant): KEYS[1] alone, the
            -- other keys first in ARGV after their count.
            local KEYS, ARGV = (function(keys, args)
              local count, named, rest = tonumber(args[1]), {keys[1]}, {}
              for i = 1, count do named[i + 1] = args[i + 1] end
              for i = count + 2, #args do rest[#rest + 1] = args[i] end
              return named, rest
            end)(KEYS, ARGV)
            local function mgetByKey(...)
              local values = {}
              for i, key in ipairs({...}) do values[i] = redis.call('GET', key) end
              return values
            end

            """
        let source = script.source.replacing("redis.call('MGET', ", with: "mgetByKey(").replacing("call('MGET', ", with: "mgetByKey(")
        return RedisScript(shim + source)
    }

    /// `MOVED 3999 127.0.0.1:6381` → 127.0.0.1:6381.
    static func redirect(_ message: String, prefix: String) -> RedisConfiguration.HostPort? {
        guard message.hasPrefix(prefix) else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count == 3 else { return nil }
        return RedisConfiguration.HostPort(authority: parts[2])
    }

    /// `CLUSTER SLOTS`: [[start, end, [host, port, id], replicas...], ...] → owner per slot.
    /// An empty host means the node that answered (a node that never learned its own
    /// address, such as the only master of a cluster, names itself so).
    static func slotMap(_ reply: RedisReply, askedNode: RedisConfiguration.HostPort) -> [RedisConfiguration.HostPort?]? {
        guard case .array(let ranges) = reply, !ranges.isEmpty else { return nil }
        var owners = [RedisConfiguration.HostPort?](repeating: nil, count: ClusterSlot.count)
        for range in ranges {
            guard case .array(let fields) = range, fields.count >= 3,
                  let start = fields[0].integer, let end = fields[1].integer,
                  case .array(let master) = fields[2], master.count >= 2,
                  let host = master[0].string, let port = master[1].integer,
                  start >= 0, end < ClusterSlot.count, start <= end else { return nil }
            let address = RedisConfiguration.HostPort(host: host.isEmpty ? askedNode.host : host, port: port)
            for slot in start...end { owners[slot] = address }
        }
        return owners
    }

    /// The replicas `CLUSTER SLOTS` names (after each range's master), to ask for the map
    /// when no master answers.
    static func replicas(_ reply: RedisReply, askedNode: RedisConfiguration.HostPort) -> [RedisConfiguration.HostPort] {
        guard case .array(let ranges) = reply else { return [] }
        var found: Set<RedisConfiguration.HostPort> = []
        for range in ranges {
            guard case .array(let fields) = range, fields.count > 3 else { continue }
            for case .array(let node) in fields[3...] where node.count >= 2 {
                guard let host = node[0].string, let port = node[1].integer else { continue }
                found.insert(RedisConfiguration.HostPort(host: host.isEmpty ? askedNode.host : host, port: port))
            }
        }
        return found.sorted { $0.description < $1.description }
    }

    /// One command's way through redirections: the `MOVED`/`ASK` hops since its last
    /// `TRYAGAIN`, and, from its first `TRYAGAIN`, when it must stop retrying and the next
    /// wait between tries.
    struct Redirections {
        var hops = 0
        var deadline: ContinuousClock.Instant? = nil
        var wait: Duration = RedisClusterClient.firstTryAgainWait
    }

    /// A map read that moved slots (counting those `MOVED` moved since the last read)
    /// or changed the set of masters is info; the first map, and a map unchanged, debug.
    func logRemap(from old: [RedisConfiguration.HostPort?], to new: [RedisConfiguration.HostPort?], wasKnown: Bool) {
        guard logger.isEnabled(.info) else {
            slotsMovedSinceRefresh = 0
            return
        }
        let changed = zip(old, new).reduce(0) { $0 + ($1.0 != $1.1 ? 1 : 0) } + slotsMovedSinceRefresh
        slotsMovedSinceRefresh = 0
        let masters = Set(new.compactMap { $0 })
        let names = masters.map(\.description).sorted().joined(separator: ", ")
        let unowned = new.reduce(0) { $0 + ($1 == nil ? 1 : 0) }
        let line = "redis cluster: slot map read, \(changed) slot\(changed == 1 ? "" : "s") changed owner"
            + (unowned > 0 ? ", \(unowned) without a master" : "") + "; masters \(names)"
        if wasKnown && (changed > 0 || masters != Set(old.compactMap { $0 })) { logger.info(line) } else { logger.debug(line) }
    }
}
