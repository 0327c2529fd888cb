#if canImport(Glibc)
import Glibc
import Testing
import Threading

@Suite("system clock")
struct SystemClockTests {
    @Test("the kernel's clocks: the wall clock as time(2) has it, the boot's monotonic clock moving on, a boot id")
    func kernelClock() throws {
        let clock = KernelClock()
        let a = clock.read()
        var spin = 0
        for i in 0..<2_000_000 { spin &+= i }
        #expect(spin != 1)
        let b = clock.read()
        #expect(abs(a.wall - Double(time(nil))) < 2)
        #expect(a.sinceBoot > 0 && b.sinceBoot >= a.sinceBoot)
        #expect(b.wall >= a.wall - 1)
        // boot_id is a UUID: 36 characters with four dashes.
        #expect(clock.bootID.count == 36 && clock.bootID.filter { $0 == "-" }.count == 4, "\(clock.bootID)")
        #expect(KernelClock().bootID == clock.bootID, "one boot, one id")
        // adjtimex answers here (no seccomp filter in the test process): synchronised or not, but known.
        #expect(a.synchronized != nil)
    }
}
#endif
