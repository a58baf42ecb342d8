import CLibevent
#if canImport(Glibc)
import Glibc
#endif

/// Gives memory back once a crowd of connections has left: glibc returns only the free
/// top of a heap, so after 900 connections holding 64 KiB each had closed, RSS stayed at
/// 103 MB (33 MB before, 109 MB at the peak). `malloc_trim(0)` frees every whole free page,
/// but walks and locks the arenas: so only from the 200 ms housekeeping, at most once a
/// second, after `minimumDrop` connections closed since the peak or what they hold fell
/// by `minimumHeldDrop` (a crowd shed as it came never raises the count: 3 000 clients of
/// 170 KB of headers, 40 at a time, left RSS 16 MB up). Loop-confined.
struct MemoryTrim {
    static let minimumDrop: Int64 = 64
    static let minimumHeldDrop = 2 << 20
    static let interval: Duration = .seconds(1)

    /// Whether glibc's allocator serves this process: a sanitizer's replaces it, and glibc's
    /// `malloc_trim` then walks arenas it never set up (a SEGV seen under AddressSanitizer).
    static let glibcAllocates = dlsym(nil, "__asan_init") == nil && dlsym(nil, "__tsan_init") == nil

    private var peak: Int64 = 0
    private var peakHeld = 0
    private var lastTrim = ContinuousClock.now

    /// Trims when enough of the open connections, or of what they hold (bytes), have left.
    mutating func check(openConnections: Int64, held: Int) {
        peak = max(peak, openConnections)
        peakHeld = max(peakHeld, held)
        guard peak - openConnections >= Self.minimumDrop || peakHeld - held >= Self.minimumHeldDrop else { return }
        let now = ContinuousClock.now
        guard now - lastTrim >= Self.interval else { return }
        if Self.glibcAllocates { malloc_trim(0) }
        lastTrim = now
        peak = openConnections
        peakHeld = held
    }
}
