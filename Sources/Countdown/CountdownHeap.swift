/// A binary min-heap of watched countdowns keyed by ``CountdownRecord/nextChange``. Each
/// record knows its index, so a changed key or a removal costs O(log n) and the ticker
/// touches only the countdowns whose displayed value changes.
struct CountdownHeap {
    private(set) var records: [CountdownRecord] = []

    var first: CountdownRecord? { records.first }
    var isEmpty: Bool { records.isEmpty }
    var count: Int { records.count }

    mutating func insert(_ record: CountdownRecord) {
        record.heapIndex = records.count
        records.append(record)
        siftUp(records.count - 1)
    }

    mutating func remove(_ record: CountdownRecord) {
        let index = record.heapIndex
        guard index >= 0 else { return }
        let last = records.count - 1
        if index != last {
            swapAt(index, last)
        }
        records.removeLast()
        record.heapIndex = -1
        if index < records.count {
            siftDown(index)
            siftUp(index)
        }
    }

    /// Restores order after `record.nextChange` changed.
    mutating func update(_ record: CountdownRecord) {
        guard record.heapIndex >= 0 else { return }
        siftDown(record.heapIndex)
        siftUp(record.heapIndex)
    }

    mutating func removeAll() {
        for record in records { record.heapIndex = -1 }
        records.removeAll()
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard records[child].nextChange < records[parent].nextChange else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let count = records.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            let right = left + 1
            var smallest = left
            if right < count, records[right].nextChange < records[left].nextChange { smallest = right }
            guard records[smallest].nextChange < records[parent].nextChange else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        records.swapAt(a, b)
        records[a].heapIndex = a
        records[b].heapIndex = b
    }
}
