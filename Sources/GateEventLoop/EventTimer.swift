import CLibevent

/// A one-shot timer on an `EventLoop`: arm it with `schedule(after:)`, disarm it
/// with `cancel()`. Confined to its loop's thread.
public final class EventTimer {
    private var event: OpaquePointer!
    private let action: () -> Void
    /// Held so that the libevent base outlives this timer's event: its owner may release
    /// its own reference to the loop first (Swift releases stored properties in declaration
    /// order), and `event_free` on an event whose base is already freed locks freed memory.
    private let loop: EventLoop

    /// A timer that runs `action` on `loop` each time it fires.
    public init(loop: EventLoop, action: @escaping () -> Void) {
        self.action = action
        self.loop = loop
        event = event_new(loop.base, -1, 0, { _, _, context in
            Unmanaged<EventTimer>.fromOpaque(context!).takeUnretainedValue().action()
        }, Unmanaged.passUnretained(self).toOpaque())
        precondition(event != nil, "event_new failed")
    }

    deinit {
        event_free(event)
    }

    /// Fires once after `delay`, replacing any earlier schedule.
    public func schedule(after delay: Duration) {
        let microseconds = max(0, Int((delay / .microseconds(1)).rounded(.up)))
        var tv = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
        event_add(event, &tv)
    }

    /// Whether the timer will fire.
    public var isScheduled: Bool {
        event_pending(event, Int16(EV_TIMEOUT), nil) != 0
    }

    /// Disarms the timer; it will not fire until scheduled again.
    public func cancel() {
        event_del(event)
    }
}
