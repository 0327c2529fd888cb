import QuenchCore
import Testing

@Suite struct VolumeTextTests {
    @Test func volumesAsTheTablesAndChartsShowThem() {
        #expect(VolumeText.volume(1250, .ml) == "1,250 mL")
        #expect(VolumeText.volume(999.5, .ml) == "1,000 mL")
        #expect(VolumeText.volume(2000, .usFluidOunce) == "67.6 oz")
        #expect(VolumeText.amount(1_234_567, .ml) == "1,234,567")
        #expect(VolumeText.grouped(-1234) == "-1,234" && VolumeText.grouped(Int.min) == "-9,223,372,036,854,775,808")
        #expect(VolumeText.decimal(-0.04, places: 1) == "0.0" && VolumeText.decimal(-0.4, places: 1) == "-0.4" && VolumeText.decimal(1234.5, places: 2) == "1,234.50")
        #expect(VolumeText.decimal(2.5, places: 0) == "3")
    }
}
