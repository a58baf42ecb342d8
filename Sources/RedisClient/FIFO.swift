/// A first-in, first-out queue over one reused array: replies come back in the
/// order commands went out, so pending commands wait here in that order.
struct FIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Empties the queue and returns what it held, oldest first.
    mutating func removeAll() -> [Element] {
        let elements = storage[head...].compactMap { $0 }
        storage.removeAll(keepingCapacity: true)
        head = 0
        return elements
    }
}
