import struct ResendGateClient.Decision

/// The Swift kit's reasons, read in a file of their own: the kit's `Decision` has the gate's
/// name, and its module the name of a type in it.
enum KitReasons {
    static let known = Decision.Reason.known.map(\.rawValue)
}
