/// A cache of recent results that no client can grow past two bounds: a number of
/// entries and a number of bytes (an estimate: each entry's own bytes, as its owner
/// counts them, plus `entryOverhead` for its slot in a dictionary).
///
/// It holds two generations of at most half of each bound: a hit in the old generation
/// is promoted into the young one, and when the young one would pass half of either
/// bound, the old one is dropped and the young one takes its place. That bounds memory
/// without the bookkeeping of an exact LRU. An entry larger than half the byte bound is
/// never kept. Not thread-safe: its owner confines it to one loop or guards it.
public struct GenerationalCache<Key: Hashable, Value> {
    /// What one entry costs beyond its own bytes: its key and value inline in a
    /// dictionary's storage, with the storage's spare capacity.
    public static var entryOverhead: Int { 128 }

    public let maximumEntries: Int
    public let maximumBytes: Int
    private let generationEntries: Int
    private let generationBytes: Int
    private var young: [Key: (value: Value, bytes: Int)] = [:]
    private var old: [Key: (value: Value, bytes: Int)] = [:]
    private var youngBytes = 0
    private var oldBytes = 0

    /// A cache that keeps at most `maximumEntries` entries and `maximumBytes` bytes.
    public init(maximumEntries: Int, maximumBytes: Int) {
        self.maximumEntries = max(2, maximumEntries)
        self.maximumBytes = max(2 * Self.entryOverhead, maximumBytes)
        generationEntries = self.maximumEntries / 2
        generationBytes = self.maximumBytes / 2
    }

    /// The value kept for `key`, promoting it when it was found in the old generation.
    public mutating func value(for key: Key) -> Value? {
        if let hit = young[key] { return hit.value }
        guard let hit = old[key] else { return nil }
        store(key, hit.value, cost: hit.bytes)
        return hit.value
    }

    /// Keeps `value` for `key`; `bytes` is what the entry holds outside the dictionary
    /// (the heap storage of its strings, say).
    public mutating func insert(_ value: Value, for key: Key, bytes: Int) {
        store(key, value, cost: Self.entryOverhead + max(0, bytes))
    }

    private mutating func store(_ key: Key, _ value: Value, cost: Int) {
        guard cost <= generationBytes else { return }
        let replaced = young[key]?.bytes ?? 0
        if young.count - (replaced > 0 ? 1 : 0) >= generationEntries || youngBytes - replaced + cost > generationBytes {
            old = young
            oldBytes = youngBytes
            young.removeAll(keepingCapacity: true)
            youngBytes = 0
        }
        if let previous = young.updateValue((value, cost), forKey: key) { youngBytes -= previous.bytes }
        youngBytes += cost
    }

    /// How many entries are kept (an entry promoted from the old generation counts twice
    /// until that generation is dropped: it is stored twice).
    public var count: Int { young.count + old.count }

    /// The estimated bytes kept: never more than `maximumBytes`.
    public var bytes: Int { youngBytes + oldBytes }
}

extension String {
    /// The bytes a string holds on the heap, as cache entries count them: its UTF-8 and
    /// a header (short strings live inline, so this overestimates them).
    package var estimatedHeapBytes: Int { utf8.count + 32 }
}
