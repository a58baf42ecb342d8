import Foundation
import ResendGateTestSupport
import Testing

/// `.ownThread` really moves a synchronous test off the cooperative pool: the suites that
/// block rely on it to leave the pool's two threads to everything else.
@Suite("The ownThread trait", .ownThread)
struct OwnThreadTraitTests {
    private let threadOfInit = Thread.current.name

    @Test func aSynchronousTestRunsOnItsOwnNamedThread() {
        #expect(Thread.current.name == "t:aSynchronousT")
    }

    @Test func theSuiteIsMadeOnTheTestsThread() {
        #expect(threadOfInit == "t:theSuiteIsMad")
    }

    @Test(arguments: [1, 2]) func eachCaseOfAParameterizedTestGetsOne(_ number: Int) {
        #expect(Thread.current.name == "t:eachCaseOfAPa")
    }
}
