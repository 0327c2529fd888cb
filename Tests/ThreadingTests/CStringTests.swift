import Glibc
import Testing
import Threading

/// What C calls write into buffers, read back as Swift strings.
@Suite struct CStringTests {
    @Test func aBufferIsReadUpToItsNulOrWhole() {
        #expect(String(nulTerminated: [0x61, 0x62, 0, 0x63]) == "ab")
        #expect(String(nulTerminated: [0x61, 0x62]) == "ab", "no NUL: all of it, not past its end")
        #expect(String(nulTerminated: []) == "")
        #expect(String(nulTerminated: [CChar(bitPattern: 0xC3), CChar(bitPattern: 0xA9), 0]) == "é")
    }

    @Test func theWorkingDirectoryIsGetcwds() {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        #expect(getcwd(&buffer, buffer.count) != nil)
        #expect(workingDirectory() == String(nulTerminated: buffer) && workingDirectory()?.hasPrefix("/") == true)
    }
}
