/// libFuzzer's entry over QuenchConfig's TOML parser (`.ci/fuzz-config` builds
/// it with Sources/QuenchConfig/TOMLParser.swift alone): any bytes give a
/// document or an error at a place inside the text, and never stop the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        _ = try TOMLParser.parse(bytes)
    } catch {
        let lines = bytes.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        // A place outside the text is a bug too: stop, so libFuzzer keeps the input.
        if error.line < 1 || error.line > lines || error.column < 1 || error.message.isEmpty {
            fatalError("error outside the text: \(error)")
        }
    }
    return 0
}
