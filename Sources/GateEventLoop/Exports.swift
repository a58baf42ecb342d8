// The event loop's users take the runtime's helpers (logger, configuration errors) with it.
@_exported import GateRuntime
