import GateRuntime

/// The error `body` throws, or nil: for the tests of flags and policies refused at start.
func configurationError(_ body: () throws(ConfigurationError) -> Void) -> ConfigurationError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}
