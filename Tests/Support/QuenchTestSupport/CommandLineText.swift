import Testing

/// Issue 24: a library's error text names no program, option or environment
/// variable (the command line and the page each add their own advice).
public func expectNoCommandLineText(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
    for word in ["`quench", "--", "QUENCH_"] {
        #expect(!text.contains(word), "'\(word)' in: \(text)", sourceLocation: sourceLocation)
    }
}
