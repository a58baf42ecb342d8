/// The package's one first-in, first-out queue, over one reused array: the Redis client's
/// pending commands wait here in the order their replies come back, the server's countdown
/// streams and followed releases keep their age order here. Inlinable, so that each module using
/// it specializes it: unspecialized, every append and pop looked up the generic type's
/// metadata at run time (the Redis client does both for each command). Public only for
/// that: this compiler does not specialize `package` inlinable code in another module, and
/// GateRuntime is no product of the package.
public struct FIFO<Element> {
    @usableFromInline var storage: [Element?] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { head == storage.count }
    @inlinable public var count: Int { storage.count - head }
    @inlinable public var first: Element? { isEmpty ? nil : storage[head] }

    @inlinable public mutating func append(_ element: Element) {
        storage.append(element)
    }

    @inlinable public mutating func popFirst() -> Element? {
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
    @inlinable public mutating func removeAll() -> [Element] {
        let elements = storage[head...].compactMap { $0 }
        storage.removeAll(keepingCapacity: true)
        head = 0
        return elements
    }

    /// Puts `element` back at the front (after `popFirst()`, into the slot it left).
    @inlinable public mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

    /// Drops every element for which `shouldRemove` is true, keeping the order of the rest.
    @inlinable public mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        storage.removeSubrange(..<head)
        storage.removeAll { $0.map(shouldRemove) ?? true }
        head = 0
    }
}
