import Testing
@testable import QuenchWeb

/// `listen` against this machine's addresses (given here), before any bind.
@Suite struct ListenAddressCheckTests {
    static let here: [[UInt8]] = [[127, 0, 0, 1], [192, 168, 1, 23], Array(repeating: 0, count: 15) + [1],
                                  [0xFE, 0x80] + Array(repeating: 0, count: 13) + [7]]

    @Test func addressesOfThisMachineWildcardsAndLoopbackPass() {
        for host in ["0.0.0.0", "::", "127.0.0.1", "127.0.0.2", "::1", "192.168.1.23", "fe80::7", "fe80::7%eth0", "localhost"] {
            #expect(ListenAddressCheck.check(host, interfaces: Self.here) == .ok, "\(host)")
        }
    }

    @Test func anAddressNoInterfaceHasIsNamedWithTheAddressesThereAre() {
        #expect(ListenAddressCheck.check("192.168.1.50", interfaces: Self.here)
                == .notOnThisMachine(address: "192.168.1.50", here: ["192.168.1.23", "fe80::7"]))
        #expect(ListenAddressCheck.check("2001:db8::5", interfaces: Self.here)
                == .notOnThisMachine(address: "2001:db8::5", here: ["192.168.1.23", "fe80::7"]))
    }

    @Test func aNameThatDoesNotResolveSaysSo() {
        guard case .unresolved(let name, let reason) = ListenAddressCheck.check("no-such-host.invalid", interfaces: Self.here) else {
            Issue.record("a name that cannot resolve passed")
            return
        }
        #expect(name == "no-such-host.invalid" && !reason.isEmpty)
    }
}
