#if os(Linux)
import BluetoothWire
import GATT
import QuenchCore
import QuenchGateway
import QuenchProfiles
import QuenchSimulatedDevices
import Testing

/// The simulated devices speak the real wire formats: a GATT client finds the
/// profile's real attribute table and decodes what is indicated; a broadcaster's
/// reports are real advertisements, each reported twice.
@Suite("simulated devices")
struct SimulatedDevicesTests {
    static let address = BluetoothAddress("F0:F1:F2:F3:F4:F5")!

    @Test("a simulated Weight Scale: service 0x181D, indications that decode to the readings streamed")
    func weightScaleOverGATT() throws {
        let readings = (0..<6).map { Reading(t: 0.05 * Double($0), value: 500 + Double($0) * 5) }
        let peripheral = SimulatedPeripheral(address: Self.address, profile: .weightScale, readings: readings, unit: .g)
        defer { peripheral.shutdown() }
        let device = LiveDevice(address: Self.address, profile: .weightScale, calibration: try BottleCalibration(unit: .g))
        // The stop outlives the link: its eventfd is what wakes the bearer.
        let stop = StopSignal()
        let bearer = try peripheral.connect(to: device, timeout: 2, stop: stop)
        defer { bearer.close() }
        let client = GATTClient(bearer: bearer)
        try client.exchangeMTU()
        let characteristic = try #require(try client.characteristic(BluetoothUUID(uuid16: 0x2A9D), inService: BluetoothUUID(uuid16: 0x181D)))
        #expect(characteristic.properties.contains(.indicate))
        try client.subscribe(to: characteristic, mode: .indications)
        var grams: [Double] = []
        while grams.count < readings.count, let update = try client.nextValue(timeout: 5) {
            for r in try DeviceProfile.weightScale.decode(update.value) { grams.append(try #require(r.value(in: .g))) }
        }
        // The SIG scale sends 5 g steps: each reading within half a step.
        #expect(grams.count == readings.count)
        for (g, r) in zip(grams, readings) { #expect(abs(g - r.value!) <= 2.5) }
        #expect(peripheral.waitUntilFinished(timeout: 5))
        #expect(peripheral.sent == readings.count && peripheral.lost == 0)
        withExtendedLifetime(stop) {}
    }

    @Test("shutdown ends every connection's GATT server thread: a link replaced, one dropped, the last open")
    func shutdownJoinsItsServerThreads() throws {
        let readings = (0..<3).map { Reading(t: 0.05 * Double($0), value: 500) }
        let peripheral = SimulatedPeripheral(address: Self.address, profile: .weightScale, readings: readings, unit: .g)
        let device = LiveDevice(address: Self.address, profile: .weightScale, calibration: try BottleCalibration(unit: .g))
        let stop = StopSignal()
        var bearers = [try peripheral.connect(to: device, timeout: 2, stop: stop)]
        bearers.append(try peripheral.connect(to: device, timeout: 2, stop: stop))  // replaces the first
        peripheral.dropLink()
        bearers.append(try peripheral.connect(to: device, timeout: 2, stop: stop))
        // The last link is open, with its client end still held: its server is running.
        #expect(peripheral.serverThreadsRunning >= 1)
        peripheral.shutdown()
        #expect(peripheral.serverThreadsRunning == 0, "none left running once shutdown returns")
        for bearer in bearers { bearer.close() }
        withExtendedLifetime(stop) {}
    }

    @Test("a simulated Mi Scale: Mi service data in a real advertisement, each one reported twice")
    func miScaleBroadcasts() throws {
        let readings = (0..<4).map { Reading(t: 0.02 * Double($0), value: 800) }
        let broadcaster = SimulatedBroadcaster(address: Self.address, readings: readings, unit: .g)
        let source = broadcaster.source(stoppedBy: StopSignal())
        var reports: [AdvertisingReport] = []
        while let report = try source.next(until: .now + .seconds(2)) { reports.append(report) }
        #expect(reports.count == 2 * readings.count)
        #expect(broadcaster.frames == readings.count && broadcaster.isFinished)
        for pair in stride(from: 0, to: reports.count, by: 2) {
            #expect(!reports[pair].isScanResponse && reports[pair + 1].isScanResponse)
            #expect(reports[pair].data == reports[pair + 1].data)
        }
        let ad = try AdvertisingData(decoding: reports[0].data)
        #expect(ad.name == "MI_SCALE")
        let payload = try #require(DeviceProfile.miScale.payload(in: ad))
        let decoded = try #require(try DeviceProfile.miScale.decode(payload).first)
        #expect(decoded.value(in: .g) == 800)
    }
}
#endif
