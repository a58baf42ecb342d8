/// Whether two byte strings are equal, in a time that depends on their lengths only, never
/// on where they differ: API keys (`Authorization`) and test codes (`IssuedCodeRule`).
package func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
    var left = a.makeIterator(), right = b.makeIterator()
    for _ in 0..<max(a.count, b.count) {
        difference |= (left.next() ?? 0) ^ (right.next() ?? 0)
    }
    return difference == 0
}
