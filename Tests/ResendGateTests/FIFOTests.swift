import GateRuntime
import RedisClient
@testable import ResendGate
import Testing

/// The package's one queue: order kept through pops, put-backs, filtering and compaction.
struct FIFOTests {
    @Test func putBackAndFilterKeepTheOrder() {
        var queue = FIFO<Int>()
        for value in 1...5 { queue.append(value) }
        #expect(queue.popFirst() == 1)
        #expect(queue.popFirst() == 2)
        queue.prepend(2)
        queue.prepend(1)
        #expect(queue.count == 5)
        queue.removeAll { $0 % 2 == 0 }
        #expect(queue.removeAll() == [1, 3, 5])
        #expect(queue.isEmpty)
        queue.prepend(9)
        queue.append(10)
        #expect(queue.popFirst() == 9)
        #expect(queue.first == 10)
    }

    /// Past 1 024 pops the array is compacted; a put-back after that still lands first.
    @Test func compactionKeepsTheOrder() {
        var queue = FIFO<Int>()
        for value in 0..<3_000 { queue.append(value) }
        for expected in 0..<1_600 { #expect(queue.popFirst() == expected) }
        queue.prepend(1_599)
        #expect(queue.count == 1_401)
        #expect(queue.popFirst() == 1_599)
        #expect(queue.popFirst() == 1_600)
        #expect(queue.removeAll().last == 2_999)
    }
}
