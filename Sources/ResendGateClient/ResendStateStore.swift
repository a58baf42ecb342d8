import Countdown
import Foundation

/// Where a ``ResendButtonModel`` keeps its countdown across launches: `UserDefaults`, or
/// anything that stores data by key (a keychain wrapper, an in-memory store in tests).
public protocol ResendStateStore: AnyObject {
    /// The data saved under `key`, if any.
    func savedData(forKey key: String) -> Data?
    /// Saves `data` under `key`; nil removes it.
    func save(_ data: Data?, forKey key: String)
}

extension UserDefaults: ResendStateStore {
    /// `data(forKey:)`.
    public func savedData(forKey key: String) -> Data? {
        data(forKey: key)
    }

    /// `set(_:forKey:)`, or `removeObject(forKey:)` for nil.
    public func save(_ data: Data?, forKey key: String) {
        if let data { set(data, forKey: key) } else { removeObject(forKey: key) }
    }
}
