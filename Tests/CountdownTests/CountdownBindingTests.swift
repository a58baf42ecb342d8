import Dispatch
import Countdown
import Testing

/// Issue 25: a list cell reused for another row must stop showing the old row's countdown
/// without the app cancelling by hand, and show the new one's value in the same frame.
@MainActor @Suite struct CountdownBindingTests {
    @Test func aReusedCellShowsOnlyItsNewCountdownAndAtOnce() async {
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("row-1", remaining: .seconds(10))
        center.start("row-2", remaining: .seconds(30))
        let cell = CountdownBinding()
        var shown: [String] = []
        cell.bind(to: "row-1", in: center) { event in shown.append("1: \(event)") }
        #expect(shown.count == 1, "the first value before bind returns: \(shown)")
        cell.bind(to: "row-2", in: center) { event in shown.append("2: \(event)") }
        #expect(shown.count == 2 && cell.id == "row-2")
        clock.advance(by: .seconds(1))
        await drainMain()
        #expect(shown.count == 3 && shown.allSatisfy { !$0.hasPrefix("1:") || $0 == shown[0] }, "\(shown)")
        cell.unbind()
        clock.advance(by: .seconds(1))
        await drainMain()
        #expect(shown.count == 3 && cell.id == nil)
        #expect(center.watchedCount == 0, "nothing left subscribed")
    }

    /// Issue 37: a cell that holds its binding and is passed to the handler as its owner is
    /// freed with its last reference (a handler capturing it kept it alive until `unbind`).
    @Test func aCellBoundAsOwnerIsFreed() async {
        @MainActor final class Cell {
            let binding = CountdownBinding()
            var shown: [CountdownEvent] = []
        }
        let (center, clock) = makeVirtualCenter(tolerance: .zero)
        center.start("row-1", remaining: .seconds(10))
        var cell: Cell? = Cell()
        cell?.binding.bind(to: "row-1", in: center, owner: cell!) { cell, event in cell.shown.append(event) }
        #expect(cell?.shown.count == 1)
        weak let freed = cell
        cell = nil
        #expect(freed == nil, "the binding's handler kept the cell alive")
        clock.advance(by: .seconds(1))
        await drainMain()
        #expect(center.watchedCount == 0, "the center let go of the freed cell's subscription")
    }

    private func drainMain() async {
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
    }
}
